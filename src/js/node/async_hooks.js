// node:async_hooks for nodejs_compat: AsyncLocalStorage and AsyncResource, as workerd has them.
//
// The store follows the logical async flow through V8's continuation-preserved embedder data:
// V8 saves the current value with every promise reaction and restores it when the reaction runs
// (await, then, queueMicrotask), and the runtime does the same for timers and resets it at the
// start of every event. The value is a frame: an immutable Map from AsyncLocalStorage to store,
// copied on every run(), so concurrent requests never see each other's stores.
// Runs as `function (exports, require, module, ops, internals)` (see src/js/95_node.js).

const currentFrame = () => {
  const frame = ops.continuationGet();
  return frame instanceof Map ? frame : null;
};

/** Runs `fn` with `frame` as the current frame, restoring the previous one afterwards. */
function runInFrame(frame, fn, thisArg, args) {
  const previous = ops.continuationGet();
  ops.continuationSet(frame);
  try {
    return Reflect.apply(fn, thisArg, args);
  } finally {
    ops.continuationSet(previous);
  }
}

function checkFunction(fn, what) {
  if (typeof fn !== "function") {
    const error = new TypeError(`The "${what}" argument must be of type function. Received ${fn === null ? "null" : typeof fn}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
}

class AsyncLocalStorage {
  #defaultValue = undefined;
  #name = "";
  /** `{ defaultValue, name }`: what getStore() gives outside any run(), and a name, as in workerd. */
  constructor(options = undefined) {
    if (options !== null && typeof options === "object") {
      this.#defaultValue = options.defaultValue;
      if (options.name !== undefined) this.#name = String(options.name);
    }
  }
  get name() {
    return this.#name;
  }
  run(store, fn, ...args) {
    checkFunction(fn, "fn");
    const frame = new Map(currentFrame() ?? undefined);
    frame.set(this, store);
    return runInFrame(frame, fn, undefined, args);
  }
  exit(fn, ...args) {
    checkFunction(fn, "fn");
    const frame = new Map(currentFrame() ?? undefined);
    frame.delete(this);
    return runInFrame(frame, fn, undefined, args);
  }
  getStore() {
    const frame = currentFrame();
    return frame !== null && frame.has(this) ? frame.get(this) : this.#defaultValue;
  }
  enterWith(store) {
    const frame = new Map(currentFrame() ?? undefined);
    frame.set(this, store);
    ops.continuationSet(frame);
  }
  disable() {
    const frame = currentFrame();
    if (frame?.has(this)) {
      const next = new Map(frame);
      next.delete(this);
      ops.continuationSet(next);
    }
  }
  /** A function that runs `fn` in the frame current now. */
  static bind(fn) {
    checkFunction(fn, "fn");
    const frame = currentFrame();
    // Bound during a request: callable in that request only (even with no store set), as workerd.
    const check = requestGuard();
    return function bound(...args) {
      check();
      return runInFrame(frame, fn, this, args);
    };
  }
  /** A function that runs any function in the frame current now. */
  static snapshot() {
    const frame = currentFrame();
    const check = requestGuard();
    return (fn, ...args) => {
      check();
      return runInFrame(frame, fn, undefined, args);
    };
  }
  get [Symbol.toStringTag]() {
    return "AsyncLocalStorage";
  }
}

/**
 * From bind_asynclocalstorage_snapshot_to_request (2025-06-16), a bound function or snapshot made
 * during a request throws when called outside that request, as in workerd. Returns the check.
 */
function requestGuard() {
  const origin = internals.feature("bind_asynclocalstorage_snapshot_to_request") ? ops.currentEvent() : undefined;
  return () => {
    if (origin !== undefined && ops.currentEvent() !== origin) {
      throw new Error("Cannot call this AsyncLocalStorage bound function outside of the request in which it was created.");
    }
  };
}

class AsyncResource {
  #frame = currentFrame();
  #type;
  constructor(type, options) {
    if (typeof type !== "string") throw new TypeError('The "type" argument must be of type string');
    this.#type = type;
    void options;
  }
  get type() {
    return this.#type;
  }
  runInAsyncScope(fn, thisArg, ...args) {
    checkFunction(fn, "fn");
    return runInFrame(this.#frame, fn, thisArg, args);
  }
  bind(fn, thisArg) {
    checkFunction(fn, "fn");
    const resource = this;
    const check = requestGuard();
    const bound = function (...args) {
      check();
      return resource.runInAsyncScope(fn, thisArg === undefined ? this : thisArg, ...args);
    };
    Object.defineProperty(bound, "length", { value: fn.length });
    return bound;
  }
  static bind(fn, type, thisArg) {
    return new AsyncResource(type ?? (fn.name || "bound-anonymous-fn")).bind(fn, thisArg);
  }
  emitDestroy() {
    return this;
  }
  asyncId() {
    return 0;
  }
  triggerAsyncId() {
    return 0;
  }
}

// What workerd exports besides the two classes: hooks that never fire and ids that are always
// 0 (kept so that code written for Node, and unenv's polyfills, still load), and Node's async
// resource provider names, all 0.
class AsyncHook {
  enable() {
    return this;
  }
  disable() {
    return this;
  }
}

const PROVIDERS = "NONE DIRHANDLE DNSCHANNEL ELDHISTOGRAM FILEHANDLE FILEHANDLECLOSEREQ BLOBREADER FSEVENTWRAP FSREQCALLBACK FSREQPROMISE GETADDRINFOREQWRAP GETNAMEINFOREQWRAP HEAPSNAPSHOT HTTP2SESSION HTTP2STREAM HTTP2PING HTTP2SETTINGS HTTPINCOMINGMESSAGE HTTPCLIENTREQUEST LOCKS JSSTREAM JSUDPWRAP MESSAGEPORT PIPECONNECTWRAP PIPESERVERWRAP PIPEWRAP PROCESSWRAP PROMISE QUERYWRAP QUIC_ENDPOINT QUIC_LOGSTREAM QUIC_SESSION QUIC_STREAM QUIC_UDP SHUTDOWNWRAP SIGNALWRAP STATWATCHER STREAMPIPE TCPCONNECTWRAP TCPSERVERWRAP TCPWRAP TTYWRAP UDPSENDWRAP UDPWRAP SIGINTWATCHDOG WORKER WORKERCPUPROFILE WORKERCPUUSAGE WORKERHEAPPROFILE WORKERHEAPSNAPSHOT WORKERHEAPSTATISTICS WRITEWRAP ZLIB CHECKPRIMEREQUEST PBKDF2REQUEST KEYPAIRGENREQUEST KEYGENREQUEST KEYEXPORTREQUEST ARGON2REQUEST CIPHERREQUEST DERIVEBITSREQUEST HASHREQUEST RANDOMBYTESREQUEST RANDOMPRIMEREQUEST SCRYPTREQUEST SIGNREQUEST TLSWRAP VERIFYREQUEST QUIC_PACKET";

exports.AsyncLocalStorage = AsyncLocalStorage;
exports.AsyncResource = AsyncResource;
exports.asyncWrapProviders = Object.fromEntries(PROVIDERS.split(" ").map((name) => [name, 0]));
exports.createHook = () => new AsyncHook();
exports.executionAsyncId = () => 0;
exports.executionAsyncResource = () => Object.create(null);
exports.triggerAsyncId = () => 0;
