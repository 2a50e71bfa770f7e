// node:worker_threads (enable_nodejs_worker_threads_module; implied by nodejs_compat from
// 2026-03-17): a Worker is its own main thread. MessageChannel and MessagePort are the runtime's
// (src/js/75_messaging.js), global or not; environment data is a per-isolate map; Worker,
// BroadcastChannel and postMessageToThread throw ERR_METHOD_NOT_IMPLEMENTED, as in workerd.
const EventEmitter = require("node:events");
const { notImplemented, notImplementedClass } = require("node:internal/errors");

const environmentData = new Map();
/** Worker: `new` throws ERR_METHOD_NOT_IMPLEMENTED; its prototype has Node's methods, which throw
 * (or, for the promise ones, reject) the same way, as in workerd. */
function workerClass() {
  const Worker = notImplementedClass("Worker", EventEmitter);
  const fail = (name) => require("node:internal/errors").notImplementedError(`Worker.${name}`);
  for (const name of ["postMessage", "postMessageToThread", "ref", "unref"]) {
    Worker.prototype[name] = { [name]() { throw fail(name); } }[name];
  }
  for (const name of ["terminate", "getHeapSnapshot", "getHeapStatistics"]) {
    Worker.prototype[name] = { [name]() { return Promise.reject(fail(name)); } }[name];
  }
  Worker.prototype[Symbol.asyncDispose] = function () {
    return Promise.reject(fail("Symbol.asyncDispose"));
  };
  return Worker;
}

/** The global `name` when it is the runtime's class (or the stand-in the compat flags put there), else the class. */
function runtimeClass(name) {
  const global = globalThis[name];
  return typeof global === "function" && global.prototype === internals[name].prototype ? global : internals[name];
}

module.exports = {
  MessageChannel: runtimeClass("MessageChannel"),
  MessagePort: runtimeClass("MessagePort"),
  BroadcastChannel: notImplementedClass("BroadcastChannel"),
  Worker: workerClass(),
  getEnvironmentData: (key) => environmentData.get(key),
  setEnvironmentData(key, value) {
    if (value === undefined) environmentData.delete(key);
    else environmentData.set(key, value);
  },
  isMainThread: true,
  isInternalThread: false,
  isMarkedAsUntransferable: () => false,
  markAsUntransferable() {},
  markAsUncloneable() {},
  moveMessagePortToContext: (port) => port,
  receiveMessageOnPort: () => undefined,
  parentPort: null,
  SHARE_ENV: Symbol.for("nodejs.worker_threads.SHARE_ENV"),
  resourceLimits: {},
  threadId: 0,
  workerData: null,
  postMessageToThread: notImplemented("postMessageToThread"),
};
