"use strict";
// Durable Object namespaces in the host: `durableObject(className, { worker, dir })` builds the
// binding. A stub's calls (fetch() and RPC methods) come here and go on to the worker that
// exports the class — `worker` when given, else the worker the binding is bound to — where the
// live objects and their storage are (src/js/85_durable.js, src/runtime/store/durable.rs).

const path = require("node:path");
const { Binding } = require("./bindings.js");
const rpc = require("./rpc.js");

const CLASS_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * A Durable Object namespace binding for class `className`, exported by the worker it is bound
 * to or by `options.worker`. Storage is in memory, or one SQLite file per object under
 * `options.dir` (`<dir>/<className>/<id>.sqlite3`).
 */
function durableObject(className, options = {}) {
  if (typeof className !== "string" || !CLASS_NAME.test(className)) {
    throw new TypeError(`durableObject(): the class name must be the name of an exported class, got ${JSON.stringify(className)}`);
  }
  if (options === null || typeof options !== "object") throw new TypeError("durableObject(): options must be an object such as { worker, dir }");
  const { worker, dir, ...rest } = options;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new TypeError(`durableObject(): unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (known: worker, dir)`);
  if (worker !== undefined && !rpc.isWorker(worker)) throw new TypeError("durableObject(): options.worker must be a workerbox worker that exports the class");
  if (dir !== undefined && (typeof dir !== "string" || dir === "")) throw new TypeError("durableObject(): options.dir must be a folder path");
  const binding = new Binding(`durable_object:${className}`, null);
  binding.className = className;
  binding.worker = worker;
  binding.dir = dir === undefined ? undefined : path.resolve(dir);
  binding.answer = (method, args, bytes, caller) => answer(binding, method, args, bytes, caller);
  return binding;
}

async function answer(binding, method, args, bytes, caller) {
  const home = binding.worker ?? caller;
  if (home === undefined) throw new Error(`The Durable Object namespace for ${binding.className} has no worker to run in.`);
  const durableObject = { className: binding.className, id: args.object, name: args.name ?? null, dir: binding.dir };
  if (method === "fetch") return rpc.fetchInto(home, { durableObject }, args, bytes);
  if (method !== "rpc") throw new TypeError(`unknown Durable Object operation "${method}"`);
  return rpc.callWorker(home, { durableObject, path: args.path, kind: args.kind, stubs: rpc.hostIds(caller, args.stubs) }, bytes);
}

module.exports = { durableObject };
