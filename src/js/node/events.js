// node:events: the `events` npm package's EventEmitter, with the newer statics Node added since
// (`on`, `getEventListeners`, `getMaxListeners`, `setMaxListeners`, `addAbortListener`,
// `errorMonitor`, `usingDomains`), Node's emit (errorMonitor, and captureRejections: a listener's
// rejected promise becomes the emitter's 'error' or its [Symbol.for('nodejs.rejection')] call)
// and EventEmitterAsyncResource. The constructor is Node's (it takes { captureRejections }) over
// the package's prototype, so `instanceof` holds for either.
const Package = require("vendor:events");
const { invalidArgType } = require("node:internal/errors");

const kCapture = Symbol("kCapture");
function EventEmitter(options) {
  EventEmitter.init.call(this, options);
}
EventEmitter.prototype = Package.prototype;
Object.defineProperty(Package.prototype, "constructor", { value: EventEmitter, writable: true, configurable: true });
for (const key of Reflect.ownKeys(Package)) {
  if (!["prototype", "length", "name", "arguments", "caller"].includes(key)) Object.defineProperty(EventEmitter, key, Object.getOwnPropertyDescriptor(Package, key));
}
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.init = function init(options) {
  Package.init.call(this);
  if (options?.captureRejections) {
    if (typeof options.captureRejections !== "boolean") throw invalidArgType("options.captureRejections", "boolean", options.captureRejections);
    this[kCapture] = true;
  } else {
    this[kCapture] = EventEmitter.prototype[kCapture];
  }
};

module.exports = EventEmitter;
EventEmitter.errorMonitor ??= Symbol("events.errorMonitor");
EventEmitter.captureRejectionSymbol ??= Symbol.for("nodejs.rejection");
EventEmitter.prototype[kCapture] = false;
Object.defineProperty(EventEmitter, "captureRejections", {
  get: () => EventEmitter.prototype[kCapture],
  set(value) {
    if (typeof value !== "boolean") throw invalidArgType("EventEmitter.captureRejections", "boolean", value);
    EventEmitter.prototype[kCapture] = value;
  },
  enumerable: true,
  configurable: true,
});

EventEmitter.usingDomains = false;
EventEmitter.kMaxEventTargetListeners ??= Symbol("events.maxEventTargetListeners");
EventEmitter.kMaxEventTargetListenersWarned ??= Symbol("events.maxEventTargetListenersWarned");

/** The listeners of `name` on an EventEmitter; an EventTarget's are not listed (an empty array, as in workerd). */
EventEmitter.getEventListeners = function getEventListeners(emitter, name) {
  if (typeof emitter?.listeners === "function") return emitter.listeners(name);
  if (typeof emitter?.addEventListener === "function") return [];
  const { invalidArgType } = require("node:internal/errors");
  throw invalidArgType("emitter", "EventEmitter or EventTarget", emitter);
};

/** The listener limit of an EventEmitter or EventTarget. */
EventEmitter.getMaxListeners = function getMaxListeners(emitterOrTarget) {
  if (typeof emitterOrTarget?.getMaxListeners === "function") return emitterOrTarget.getMaxListeners();
  if (typeof emitterOrTarget?.addEventListener === "function") return emitterOrTarget[EventEmitter.kMaxEventTargetListeners] ?? EventEmitter.defaultMaxListeners;
  const { invalidArgType } = require("node:internal/errors");
  throw invalidArgType("emitter", "EventEmitter or EventTarget", emitterOrTarget);
};

EventEmitter.setMaxListeners = function setMaxListeners(n = EventEmitter.defaultMaxListeners, ...targets) {
  if (targets.length === 0) EventEmitter.defaultMaxListeners = n;
  for (const target of targets) {
    if (typeof target.setMaxListeners === "function") target.setMaxListeners(n);
    else if (typeof target?.addEventListener === "function") target[EventEmitter.kMaxEventTargetListeners] = n;
  }
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

// Node's emit. An 'error' event nobody listens for throws (an Error itself; any other value
// named in ERR_UNHANDLED_ERROR's message, after errorMonitor's listeners have seen it).
EventEmitter.prototype.emit = function emit(type, ...args) {
  const events = this._events;
  let unhandled = type === "error";
  if (events !== undefined) {
    if (unhandled && events[EventEmitter.errorMonitor] !== undefined) this.emit(EventEmitter.errorMonitor, ...args);
    unhandled = unhandled && events.error === undefined;
  } else if (!unhandled) {
    return false;
  }
  if (unhandled) {
    const value = args[0];
    if (value instanceof Error) throw value;
    const shown = typeof value === "string" ? `'${value}'` : internals.inspect(value);
    const error = new Error(`Unhandled error. (${shown})`);
    error.code = "ERR_UNHANDLED_ERROR";
    error.context = value;
    throw error;
  }
  const handler = events[type];
  if (handler === undefined) return false;
  if (typeof handler === "function") {
    const result = Reflect.apply(handler, this, args);
    if (result !== undefined && result !== null) captureRejection(this, result, type, args);
  } else {
    for (const listener of [...handler]) {
      const result = Reflect.apply(listener, this, args);
      if (result !== undefined && result !== null) captureRejection(this, result, type, args);
    }
  }
  return true;
};

/** With captureRejections, a listener's rejected promise goes to the emitter (a tick later). */
function captureRejection(emitter, promise, type, args) {
  if (!emitter[kCapture]) return;
  try {
    const { then } = promise;
    if (typeof then === "function") {
      Reflect.apply(then, promise, [undefined, (error) => queueMicrotask(() => rejected(emitter, error, type, args))]);
    }
  } catch (error) {
    emitter.emit("error", error);
  }
}

function rejected(emitter, error, type, args) {
  if (typeof emitter[EventEmitter.captureRejectionSymbol] === "function") {
    emitter[EventEmitter.captureRejectionSymbol](error, type, ...args);
    return;
  }
  // Its own 'error' is not captured again (a rejection there would loop).
  const previous = emitter[kCapture];
  try {
    emitter[kCapture] = false;
    emitter.emit("error", error);
  } finally {
    emitter[kCapture] = previous;
  }
}

/** An EventEmitter whose listeners run in the async context it was made in (node:async_hooks' AsyncResource). */
class EventEmitterAsyncResource extends EventEmitter {
  #resource;
  constructor(options = undefined) {
    const name = typeof options === "string" ? options : options?.name;
    super(typeof options === "object" ? options : undefined);
    const { AsyncResource } = require("node:async_hooks");
    this.#resource = new AsyncResource(name ?? new.target.name, options);
  }
  emit(...args) {
    return this.#resource.runInAsyncScope(super.emit, this, ...args);
  }
  emitDestroy() {
    this.#resource.emitDestroy?.();
  }
  get asyncResource() {
    return this.#resource;
  }
  get asyncId() {
    return this.#resource.asyncId?.();
  }
  get triggerAsyncId() {
    return this.#resource.triggerAsyncId?.();
  }
}
EventEmitter.EventEmitterAsyncResource = EventEmitterAsyncResource;
