"use strict";
// Durable Object facets on the host (workerd's `ctx.facets`, src/js/85_durable.js facetStub):
// a facet is an object of a Durable Object class kept beside the object that made it, with an id
// derived from that object's and its own storage (in memory). Its class is one of a worker's own
// (`ctx.exports.<Class>({ props })`, also when passed to a loaded worker as a stub) or a loaded
// worker's (`getDurableObjectClass()`, lib/worker-loader.js); its calls go to the worker that has
// the class, as calls on a Durable Object stub do (lib/durable.js), with the class's props as
// the object's ctx.props.

const rpc = require("./rpc.js");

/**
 * Where a facet's class lives: `{ home, className, props }` (`props`: `{ props }` plain or
 * `{ propsValue }` an RPC value). `entry` is what the caller sent (src/js/85_durable.js
 * classEntry); `entryOf(id)` reads the host's stub table.
 */
async function classOf(entry, caller, entryOf) {
  let owner = caller;
  let target = entry;
  if (entry?.remote !== undefined) {
    target = entryOf(entry.remote);
    if (target === undefined) throw new Error("The facet's class was a stub that has been disposed.");
    owner = target.worker;
  }
  if (typeof target?.binding === "string" && target.binding.startsWith("#self-do:")) {
    return { home: owner, className: target.binding.slice("#self-do:".length), props: target.props === undefined ? {} : { props: target.props } };
  }
  if (target?.loaded !== undefined) return require("./worker-loader.js").loadedClass(owner, target);
  throw new TypeError("A facet's class must be a Durable Object class: ctx.exports.<Class>({ props }), or a loaded worker's getDurableObjectClass().");
}

/** An RPC call (or property read) on facet `args.facet` of class `args.class`, from worker `caller`. */
async function callFacet(args, bytes, caller, entryOf) {
  let resolved;
  try {
    resolved = await classOf(args.class, caller, entryOf);
  } catch (error) {
    return { json: JSON.stringify({ error: { name: error.name, message: error.message, stack: error.stack } }) };
  }
  const { home, className, props } = resolved;
  const spec = { className, id: args.facet, name: null, sql: true, ...props };
  const call = { durableObject: spec, path: args.path, kind: args.kind, stubs: rpc.hostIds(caller, args.stubs, args.dupStubs), ...(args.errorValue === true ? { errorValue: true } : {}) };
  return rpc.callWorker(home, call, bytes);
}

module.exports = { callFacet };
