"use strict";
// workerbox's public API: createWorker() and dispatch(). This file validates arguments,
// converts Node's Request/Response to the plain values the native addon takes, and rebuilds
// worker errors as real Error objects. The work itself happens in the native addon (native.js).

const native = require("./native.js");
const { toNativeRequest, toNodeResponse } = require("./lib/http.js");

const OPTION_NAMES = new Set(["script", "filename", "format", "bindings", "onLog", "allowEval"]);
const FORMATS = new Set(["module", "service-worker"]);
const ERROR_CLASSES = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };

/** Rebuilds an error that came from the worker (or the runtime) as a Node Error. */
function toError(info) {
  const Class = ERROR_CLASSES[info.name] ?? Error;
  const error = new Class(info.message);
  if (error.name !== info.name) {
    Object.defineProperty(error, "name", { value: info.name, writable: true, configurable: true, enumerable: false });
  }
  error.stack = info.stack;
  if (info.code != null) error.code = info.code;
  if (info.file != null) {
    error.fileName = info.file;
    error.lineNumber = info.line;
    error.columnNumber = info.column;
  }
  return error;
}

function defaultLog(level, message) {
  const method = level === "log" || level === "info" || level === "warn" || level === "error" || level === "debug" ? level : "log";
  console[method](`[worker] ${message}`);
}

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** JSON-encodes plain-value bindings, naming the binding that cannot be encoded. */
function encodeBindings(bindings) {
  if (bindings === undefined) return "{}";
  if (!isPlainObject(bindings)) {
    throw new TypeError("createWorker: options.bindings must be a plain object of NAME: value pairs");
  }
  for (const [name, value] of Object.entries(bindings)) {
    const kind = value === null ? "null" : typeof value;
    if (kind === "function" || kind === "symbol" || kind === "bigint" || kind === "undefined") {
      throw new TypeError(`createWorker: options.bindings.${name} is a ${kind}; bindings must be JSON values (strings, numbers, booleans, null, arrays or plain objects)`);
    }
    try {
      JSON.stringify(value);
    } catch (cause) {
      throw new TypeError(`createWorker: options.bindings.${name} cannot be encoded as JSON: ${cause.message}`, { cause });
    }
  }
  return JSON.stringify(bindings);
}

function validateOptions(options) {
  if (!isPlainObject(options)) {
    throw new TypeError("createWorker: options must be an object such as { script: \"export default { fetch() { … } }\" }");
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key)) {
      throw new TypeError(`createWorker: unknown option "${key}" (known options: ${[...OPTION_NAMES].join(", ")})`);
    }
  }
  const { script, filename = "worker.js", format, onLog = defaultLog, allowEval = false } = options;
  if (typeof script !== "string") {
    throw new TypeError(`createWorker: options.script must be a string of JavaScript, got ${script === null ? "null" : typeof script}`);
  }
  if (typeof filename !== "string" || filename.length === 0) {
    throw new TypeError("createWorker: options.filename must be a non-empty string");
  }
  if (format !== undefined && !FORMATS.has(format)) {
    throw new TypeError(`createWorker: options.format must be "module" or "service-worker", got ${JSON.stringify(format)}`);
  }
  if (typeof onLog !== "function") {
    throw new TypeError("createWorker: options.onLog must be a function (level, message) => void");
  }
  if (typeof allowEval !== "boolean") {
    throw new TypeError("createWorker: options.allowEval must be a boolean");
  }
  return { script, filename, format, onLog, allowEval, envJson: encodeBindings(options.bindings) };
}

/** A running worker. Create one with createWorker(); dispose() it when done. */
class Worker {
  #native;
  #filename;

  constructor(token, nativeWorker, filename) {
    if (token !== Worker.#token) throw new TypeError("Illegal constructor: use createWorker()");
    this.#native = nativeWorker;
    this.#filename = filename;
  }

  static #token = Symbol("Worker");
  static _create(nativeWorker, filename) {
    return new Worker(Worker.#token, nativeWorker, filename);
  }

  static _native(worker) {
    return #native in worker ? worker.#native : undefined;
  }

  /** "module" or "service-worker", as detected or given. */
  get format() {
    return this.#native.format;
  }

  get filename() {
    return this.#filename;
  }

  get disposed() {
    return this.#native.disposed;
  }

  /** Same as dispatch(worker, input). */
  dispatch(input) {
    return dispatch(this, input);
  }

  /** Stops the worker: requests in flight reject, its threads are joined. Safe to call twice. */
  dispose() {
    return this.#native.dispose();
  }

  [Symbol.asyncDispose]() {
    return this.dispose();
  }

  get [Symbol.toStringTag]() {
    return "Worker";
  }
}
const nativeOf = Worker._native;
const createHandle = Worker._create;
delete Worker._native;
delete Worker._create;

/** Starts a worker from a script and resolves once the script has loaded. */
async function createWorker(options) {
  const { script, filename, format, onLog, allowEval, envJson } = validateOptions(options);
  const log = (level, message) => {
    try {
      onLog(level, message);
    } catch (error) {
      console.error("workerbox: options.onLog threw while handling a worker log line:", error);
    }
  };
  const outcome = await native.createWorker({ script, filename, format, envJson, allowEval }, log);
  if (outcome instanceof native.NativeWorker) return createHandle(outcome, filename);
  throw toError(outcome);
}

/**
 * Sends a request to a worker and resolves to Node's Response.
 * `input` is a Request, a URL (string or URL object), or `{ url, method, headers, body }`.
 */
async function dispatch(worker, input) {
  const handle = worker instanceof Worker ? nativeOf(worker) : undefined;
  if (handle === undefined) {
    throw new TypeError("dispatch: the first argument must be a worker returned by createWorker()");
  }
  if (handle.disposed) {
    throw new TypeError("dispatch: the worker has been disposed");
  }
  const request = await toNativeRequest(input);
  const outcome = await handle.dispatch(request.method, request.url, request.headers, request.body);
  if (outcome.status === undefined) throw toError(outcome);
  return toNodeResponse(outcome, request.method);
}

module.exports.createWorker = createWorker;
module.exports.dispatch = dispatch;
module.exports.Worker = Worker;
