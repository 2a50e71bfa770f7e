// node:events: the `events` npm package's EventEmitter, with the newer statics Node added since
// (`on`, `getEventListeners`, `setMaxListeners`, `addAbortListener`, `errorMonitor`).
const EventEmitter = require("vendor:events");

module.exports = EventEmitter;
EventEmitter.errorMonitor ??= Symbol("events.errorMonitor");
EventEmitter.captureRejectionSymbol ??= Symbol.for("nodejs.rejection");
EventEmitter.captureRejections ??= false;

/** The listeners of `name` on an EventEmitter or EventTarget. */
EventEmitter.getEventListeners = function getEventListeners(emitter, name) {
  if (typeof emitter.listeners === "function") return emitter.listeners(name);
  const error = new TypeError("getEventListeners: EventTarget listeners cannot be listed in this runtime");
  error.code = "ERR_METHOD_NOT_IMPLEMENTED";
  throw error;
};

EventEmitter.setMaxListeners = function setMaxListeners(n = EventEmitter.defaultMaxListeners, ...targets) {
  if (targets.length === 0) EventEmitter.defaultMaxListeners = n;
  for (const target of targets) if (typeof target.setMaxListeners === "function") target.setMaxListeners(n);
};

/** Calls `listener` once when `signal` aborts; returns a disposable that removes it. */
EventEmitter.addAbortListener = function addAbortListener(signal, listener) {
  if (signal === undefined || signal === null || typeof signal.addEventListener !== "function") {
    const error = new TypeError('The "signal" argument must be an instance of AbortSignal.');
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  let removed = false;
  const remove = () => {
    if (!removed) signal.removeEventListener("abort", listener);
    removed = true;
  };
  if (signal.aborted) queueMicrotask(() => listener());
  else signal.addEventListener("abort", listener, { once: true });
  return { [Symbol.dispose]: remove };
};

/** An async iterator over the `name` events of `emitter` (their argument arrays). */
EventEmitter.on = function on(emitter, name, options = {}) {
  const { signal } = options;
  const queue = [];
  const waiting = [];
  let failure = null;
  let done = false;
  const push = (...args) => {
    const next = waiting.shift();
    if (next) next.resolve({ value: args, done: false });
    else queue.push(args);
  };
  const fail = (error) => {
    done = true;
    const next = waiting.shift();
    if (next) next.reject(error);
    else failure = error;
    cleanup();
  };
  const abort = () => fail(Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR", cause: signal?.reason }));
  const cleanup = () => {
    emitter.removeListener(name, push);
    if (name !== "error") emitter.removeListener("error", fail);
    signal?.removeEventListener("abort", abort);
  };
  emitter.on(name, push);
  if (name !== "error") emitter.on("error", fail);
  if (signal?.aborted) abort();
  else signal?.addEventListener("abort", abort, { once: true });
  return {
    next() {
      if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
      if (failure) {
        const error = failure;
        failure = null;
        return Promise.reject(error);
      }
      if (done) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      done = true;
      cleanup();
      for (const next of waiting.splice(0)) next.resolve({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(error) {
      fail(error);
      return Promise.reject(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
};

// An 'error' event nobody listens for throws; Node names a non-Error value in the message
// (the package reads `.message` of it, which is undefined for strings and the like).
const { emit } = EventEmitter.prototype;
EventEmitter.prototype.emit = function (type, ...args) {
  if (type === "error" && this.listenerCount("error") === 0 && !(args[0] instanceof Error)) {
    const value = args[0];
    const shown = typeof value === "string" ? `'${value}'` : internals.inspect(value);
    const error = new Error(`Unhandled error. (${shown})`);
    error.code = "ERR_UNHANDLED_ERROR";
    error.context = value;
    throw error;
  }
  return Reflect.apply(emit, this, [type, ...args]);
};
