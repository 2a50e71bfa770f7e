"use strict";
// workerbox's host API: createWorker() and dispatch(), the pool settings and the binding
// factories. This file validates arguments, converts Node's Request/Response to the plain values
// the native addon takes, and rebuilds worker errors as real Error objects. The work itself
// happens in the native addon (native.js). It sits below every tool (lib/project/, lib/vitest/,
// lib/test/, bin/) and imports none of them; index.js is the package's entry, which is this API
// plus the project tooling's re-exports.

const native = require("./load-native.js"); // ../native.js, with an error naming the platform when no binary fits
// V8 starts and the saved snapshot is read on a thread of their own while the rest loads.
native.prewarm();
const { toNativeRequest, toNodeResponse, toRawAnswer, RAW_ANSWER, unrecognizedMethod } = require("./http.js");
const { resolveCompat } = require("./compat.js");
const { kv, storage, service, cacheStore, Binding, kBinding, createDispatcher, setQueueBatchRunner } = require("./bindings.js");
const { HostBodies } = require("./bodies.js");
const { validateModules, validateLoader, isPlainObject, stripTypeScript } = require("./modules.js");
const { inspectorOptions, createInspector } = require("./inspector.js");
const { stackMapper, mapError, inlineSourceMap, parseSourceMap } = require("./sourcemap.js");
const { d1, readD1Migrations, applyD1Migrations } = require("./d1.js");
// lib/queues/ and lib/workflows/ (a dozen modules) load with the first queue() or workflow()
// binding, or the first queue event: a start whose worker has neither does not pay for them.
let queues = null;
let workflows = null;
function queuesLib() {
  if (queues === null) {
    queues = require("./queues/index.js");
    queues.setWorkerAccess({ isWorker: (value) => value instanceof Worker, runBatch: runQueueBatch, log: (worker, level, message) => workerLogs.get(worker)?.(level, message) });
  }
  return queues;
}
function workflowsLib() {
  if (workflows === null) {
    workflows = require("./workflows/index.js");
    workflows.setWorkerAccess({ isWorker: (value) => value instanceof Worker, log: (worker, level, message) => workerLogs.get(worker)?.(level, message) });
  }
  return workflows;
}
const rpc = require("./rpc.js");
const durable = require("./durable.js");
const websocket = require("./websocket.js");
// Worker Loader bindings (lib/worker-loader.js) and streaming tails (lib/tail/stream.js) load with
// the first workerLoader() binding or the first worker given streamingTails: a worker of neither
// is never traced by them nor their parent.
let workerLoaders = null;
function workerLoadersLib() {
  if (workerLoaders === null) {
    workerLoaders = require("./worker-loader.js");
    workerLoaders.setWorkerAccess({ createWorker, dispatch });
  }
  return workerLoaders;
}
let tailStreams = null;
const tailStreamsLib = () => (tailStreams ??= require("./tail/stream.js"));
// Inbound TCP (lib/sockets/listen.js, with node:net) loads with the first listenTcp().
let listenSockets = null;

const OPTION_NAMES = new Set(["script", "filename", "format", "bindings", "onLog", "allowEval", "limits", "outbound", "network", "modules", "cache", "codeCache", "cacheDir", "isolation", "maxReuse", "pool", "compatibilityDate", "compatibilityFlags", "loadModule", "inspector", "sourceMap", "unsafeExperimental", "unsafeExposeGc", "trustLoadedModules", "tailConsumers", "streamingTails", "mainModule", "connectOverrides"]);
const LIMITS = {
  maxInFlight: { min: 1, integer: true, text: "an integer of at least 1" },
  maxQueued: { min: 0, integer: true, text: "an integer of at least 0" },
  wallMs: { min: 0, integer: false, text: "a number of milliseconds, 0 or more (0: no limit)" },
  cpuMs: { min: 0, integer: false, text: "a number of milliseconds, 0 or more (0: no limit)" },
  bindingMs: { min: 0, integer: false, text: "a number of milliseconds, 0 or more (0: no limit)" },
  waitUntilMs: { min: 0, integer: false, text: "a number of milliseconds, 0 or more (0: no limit)" },
  bodyIdleMs: { min: 0, integer: false, text: "a number of milliseconds, 0 or more (0: no limit)" },
  memoryMb: { min: 16, max: 16384, integer: true, text: "an integer number of megabytes from 16 to 16384" },
};
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


/** How a data binding's bytes travel in the env JSON (src/js/90_entry.js makes them an ArrayBuffer). */
const DATA_MARK = "__workerboxData";

/** Describes the first value inside `value` that JSON would silently drop or change. */
function findNonJson(value, where, depth = 0) {
  if (value === null || typeof value !== "object" || depth > 64) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${where}[${key}]` : `${where}.${key}`;
    const kind = typeof item;
    if (kind === "function" || kind === "symbol" || kind === "undefined" || kind === "bigint") return `${at} is a ${kind}`;
    if (kind === "object" && item !== null && !Array.isArray(item) && !isPlainObject(item) && typeof item.toJSON !== "function") {
      return `${at} is a ${item.constructor?.name ?? "object"}`;
    }
    const inner = findNonJson(item, at, depth + 1);
    if (inner) return inner;
  }
  return null;
}

/**
 * Splits `bindings` into plain JSON values (env vars) and binding definitions (kv(), service(),
 * or a workerbox Worker, which becomes a service binding), naming any binding that is neither.
 */
function splitBindings(bindings) {
  if (bindings === undefined) return { envJson: "{}", bindingsJson: "{}", definitions: {} };
  if (!isPlainObject(bindings)) {
    throw new TypeError("createWorker: options.bindings must be a plain object of NAME: value pairs");
  }
  const vars = {};
  const kinds = {};
  const definitions = {};
  for (const [name, value] of Object.entries(bindings)) {
    if (value instanceof Binding || value instanceof Worker) {
      const definition = value instanceof Worker ? service(value) : value;
      kinds[name] = definition[kBinding];
      definitions[name] = definition;
      continue;
    }
    // Bytes (an ArrayBuffer or a view of one): workerd's data binding, an ArrayBuffer in `env`.
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
      vars[name] = { [DATA_MARK]: Buffer.from(bytes).toString("base64") };
      continue;
    }
    const kind = value === null ? "null" : typeof value;
    if (kind === "function" || kind === "symbol" || kind === "bigint" || kind === "undefined") {
      const hint = kind === "function" ? " (wrap a request handler in service(fn))" : "";
      throw new TypeError(`createWorker: options.bindings.${name} is a ${kind}; bindings must be JSON values (strings, numbers, booleans, null, arrays or plain objects), kv(), storage(), d1(), service() or a worker${hint}`);
    }
    if (kind === "object" && !Array.isArray(value) && !isPlainObject(value)) {
      throw new TypeError(`createWorker: options.bindings.${name} is a ${value.constructor?.name ?? "object"}; bindings must be JSON values, kv(), storage(), d1(), service() or a worker`);
    }
    try {
      JSON.stringify(value);
    } catch (cause) {
      throw new TypeError(`createWorker: options.bindings.${name} cannot be encoded as JSON: ${cause.message}`, { cause });
    }
    const hidden = findNonJson(value, `options.bindings.${name}`);
    if (hidden) {
      throw new TypeError(`createWorker: ${hidden}; a var binding must be plain JSON (for handlers use kv({ get, put, delete, list }), storage({ … }) or service(fn))`);
    }
    vars[name] = value;
  }
  return { envJson: JSON.stringify(vars), bindingsJson: JSON.stringify(kinds), definitions };
}

/** A value as an error message shows it: NaN and Infinity as such, not as JSON's null. */
function shown(value) {
  if (typeof value === "number" || typeof value === "bigint" || value === undefined) return String(value);
  if (typeof value === "function") return "a function";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return typeof value;
  }
}

/** Checks `options.limits`, naming the field that is wrong. */
function validateLimits(limits) {
  if (limits === undefined) return undefined;
  if (!isPlainObject(limits)) throw new TypeError("createWorker: options.limits must be an object such as { maxInFlight: 100 }");
  const checked = {};
  for (const [key, value] of Object.entries(limits)) {
    const rule = LIMITS[key];
    if (rule === undefined) {
      throw new TypeError(`createWorker: unknown limit "options.limits.${key}" (known limits: ${Object.keys(LIMITS).join(", ")})`);
    }
    if (value === undefined) continue;
    const ok = typeof value === "number" && Number.isFinite(value) && value >= rule.min && value <= (rule.max ?? 2 ** 31 - 1) && (!rule.integer || Number.isInteger(value));
    if (!ok) throw new TypeError(`createWorker: options.limits.${key} must be ${rule.text}, got ${shown(value)}`);
    checked[key] = value;
  }
  return checked;
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
  const split = splitBindings(options.bindings);
  if (options.outbound !== undefined) {
    const isService = options.outbound instanceof Binding && options.outbound[kBinding] === "service";
    if (typeof options.outbound !== "function" && !isService) {
      throw new TypeError("createWorker: options.outbound must be a function (request) => Response | Promise<Response>, or a service() binding");
    }
    // The worker's fetch() then goes to this handler (or service), as a service binding's requests do.
    const definition = isService ? options.outbound : service(options.outbound);
    split.definitions["#outbound"] = definition;
    split.bindingsJson = JSON.stringify({ ...JSON.parse(split.bindingsJson), "#outbound": "outbound" });
  }
  // The Cache API's store (caches.default, caches.open()): your handlers, answering under a
  // reserved name, or (null) the worker's own in-memory store, which the native side makes.
  const cache = cacheStore(options.cache);
  if (cache !== null) split.definitions["#cache"] = cache;
  const { network = "open" } = options;
  if (network !== "open" && network !== "public") {
    throw new TypeError(`createWorker: options.network must be "open" (any address) or "public" (no loopback, private or link-local addresses), got ${JSON.stringify(network)}`);
  }
  // connectOverrides: addresses connect() dials in place of the ones asked for (lib/sockets/overrides.js).
  const connectOverrides = require("./sockets/overrides.js").connectOverrides(options.connectOverrides);
  const { codeCache = true, cacheDir } = options;
  if (typeof codeCache !== "boolean") throw new TypeError("createWorker: options.codeCache must be a boolean");
  if (cacheDir !== undefined && (typeof cacheDir !== "string" || cacheDir.length === 0)) {
    throw new TypeError("createWorker: options.cacheDir must be a directory path (a non-empty string)");
  }
  const { isolation = "shared", maxReuse } = options;
  if (isolation !== "shared" && isolation !== "per-request") {
    throw new TypeError(`createWorker: options.isolation must be "shared" (requests share the script's globals, as in production) or "per-request" (a fresh global scope for every request), got ${JSON.stringify(isolation)}`);
  }
  if (maxReuse !== undefined) {
    if (!Number.isInteger(maxReuse) || maxReuse < 1 || maxReuse > 0xffffffff) {
      throw new TypeError(`createWorker: options.maxReuse must be a positive integer (request contexts one isolate serves before it is replaced), got ${shown(maxReuse)}`);
    }
    if (isolation !== "per-request") throw new TypeError('createWorker: options.maxReuse applies only with isolation: "per-request"');
  }
  // unsafeExperimental: workerd's experimental compatibility flags are accepted (as under
  // workerd --experimental). trustLoadedModules: the modules loadModule gives are the host's own
  // code and import every node: module whatever the flags (the worker's own code sees its flags).
  // unsafeExposeGc: globalThis.gc() runs a full garbage collection, as V8's --expose-gc gives it
  // (workerd's tests pass that flag; for leak tests, never for production code).
  const { unsafeExperimental = false, unsafeExposeGc = false, trustLoadedModules = false } = options;
  if (typeof unsafeExperimental !== "boolean") throw new TypeError(`createWorker: options.unsafeExperimental must be a boolean, got ${shown(unsafeExperimental)}`);
  if (typeof unsafeExposeGc !== "boolean") throw new TypeError(`createWorker: options.unsafeExposeGc must be a boolean, got ${shown(unsafeExposeGc)}`);
  if (typeof trustLoadedModules !== "boolean") throw new TypeError(`createWorker: options.trustLoadedModules must be a boolean, got ${shown(trustLoadedModules)}`);
  if (trustLoadedModules && options.loadModule === undefined) throw new TypeError("createWorker: options.trustLoadedModules applies only with loadModule");
  // mainModule: the module of `modules` that import.meta.main is true in too (the script wraps it).
  const { mainModule } = options;
  if (mainModule !== undefined && (typeof mainModule !== "string" || !Object.hasOwn(options.modules ?? {}, mainModule))) {
    throw new TypeError(`createWorker: options.mainModule must name one of options.modules, got ${shown(mainModule)}`);
  }
  const { pool: poolOption = true } = options;
  if (typeof poolOption !== "boolean") throw new TypeError(`createWorker: options.pool must be a boolean, got ${shown(poolOption)}`);
  // Imports the worker's modules cannot answer go to the host's loader. A warm spare from the
  // pool would have loaded its modules through another worker's loader, so none is used.
  const loadModule = validateLoader(options.loadModule);
  if (loadModule !== undefined) split.definitions["#module"] = { store: null, loadModule };
  const inspector = inspectorOptions(options.inspector, filename);
  // An inspected worker is its own (a spare would have started without the debugger).
  const pool = poolOption && loadModule === undefined && inspector === null;
  // Bindings backed by an embedded store are answered by the native side, from the store.
  const stores = {};
  for (const [name, definition] of Object.entries(split.definitions)) {
    if (definition.store !== null) stores[name] = definition.store;
  }
  const validated = { script, filename, format, onLog, allowEval, network, codeCache, isolation, maxReuse, pool, cacheDir: cacheDir === undefined ? undefined : require("node:path").resolve(cacheDir), modules: validateModules(options.modules), limits: validateLimits(options.limits), privateCache: cache === null, moduleLoader: loadModule !== undefined, inspector, sourceMap: parseSourceMap(options.sourceMap), stores, compat: { ...resolveCompat(options.compatibilityDate, options.compatibilityFlags, "createWorker", { experimental: unsafeExperimental }), ...(trustLoadedModules ? { trustLoadedModules } : {}), ...(mainModule === undefined ? {} : { mainModule }), ...(unsafeExposeGc ? { exposeGc: true } : {}), ...(connectOverrides === undefined ? {} : { connectOverrides }) }, ...split };
  // typescript_strip_types (experimental): the ES modules lose their TypeScript types (lib/modules.js).
  if (validated.compat.enabled.includes("typescript_strip_types")) stripTypeScript(validated);
  return validated;
}

/**
 * Requests in flight, for every worker. The native side reports each outcome as
 * `settle(id, outcome)` through one thread-safe function (the channel), which holds Node's event
 * loop open only while some request is pending, as a pending promise of Node's own I/O would.
 */
const inFlight = new Map();
let lastRequestId = 0;
// Outcomes come in batches: [id, outcome, id, outcome, …].
const channel = new native.NativeChannel((batch) => {
  for (let i = 0; i + 1 < batch.length; i += 2) {
    const resolve = inFlight.get(batch[i]);
    if (resolve === undefined) continue;
    inFlight.delete(batch[i]);
    resolve(batch[i + 1]);
  }
  if (inFlight.size === 0 && openSockets === 0) channel.keepAlive(false);
});

/**
 * Host WebSocket ends that are open (lib/websocket.js): like a real socket, each holds Node's
 * event loop open until it is closed (or its worker disposed).
 */
let openSockets = 0;
function holdForSocket(delta) {
  const before = inFlight.size > 0 || openSockets > 0;
  openSockets += delta;
  const after = inFlight.size > 0 || openSockets > 0;
  if (before !== after) channel.keepAlive(after);
}

/**
 * Fetch dispatches between their start and their outcome, across every worker. The native side
 * may wait a few hundred microseconds for a quick answer (src/runtime/handoff.rs), which only
 * pays when nothing else could use Node's thread meanwhile: a caller with other dispatches on
 * the way (requests served concurrently) is better off going on with them.
 */
let dispatching = 0;

function sendRequest(handle, request, requestStream) {
  let id = (lastRequestId = (lastRequestId + 1) >>> 0);
  while (id === 0 || inFlight.has(id)) id = lastRequestId = (lastRequestId + 1) >>> 0;
  // The worker's embedded stores go by this process's clock (KV and cache expirations). A quick
  // answer may come back at once; otherwise it arrives later through the channel (which cannot
  // call back before this function returns, so registering the request afterwards is safe).
  const answer = handle.dispatch(id, request.method, request.url, request.headers, request.body, requestStream, Date.now(), request.cf, dispatching === 1);
  if (answer != null) return answer;
  let resolve;
  const promise = new Promise((settle) => (resolve = settle));
  if (inFlight.size === 0 && openSockets === 0) channel.keepAlive(true);
  inFlight.set(id, resolve);
  return promise;
}

/**
 * Native workers whose dispose() has been called: dispatch() checks here rather than asking the
 * native side, whose getters cost more than a request's own conversions (napi-rs tracks every
 * borrow of a class instance).
 */
const disposedHandles = new WeakSet();

/** A running worker. Create one with createWorker(); dispose() it when done. */
class Worker {
  #native;
  #filename;
  #bodies;

  constructor(token, nativeWorker, filename, bodies) {
    if (token !== Worker.#token) throw new TypeError("Illegal constructor: use createWorker()");
    this.#native = nativeWorker;
    this.#filename = filename;
    this.#bodies = bodies;
  }

  static #token = Symbol("Worker");
  static _create(nativeWorker, filename, bodies) {
    return new Worker(Worker.#token, nativeWorker, filename, bodies);
  }

  static _native(worker) {
    return #native in worker ? worker.#native : undefined;
  }

  static _bodies(worker) {
    return worker.#bodies;
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

  /**
   * Listens for TCP connections (Node's `net`, loopback by default) and hands each to the
   * `entrypoint`'s `connect(socket)` handler, as a workerd `tcp` socket does (lib/sockets/listen.js).
   */
  listenTcp(options = {}) {
    if (this.disposed) return Promise.reject(Object.assign(new Error("listenTcp: the worker has been disposed"), { code: "ERR_WORKER_DISPOSED" }));
    return (listenSockets ??= require("./sockets/listen.js")).listenTcp(this, options, workerLogs.get(this));
  }

  /** Resolves once every ctx.waitUntil() promise registered so far has settled. */
  waitUntilSettled() {
    return this.#native.waitUntilSettled();
  }

  /**
   * Stops the worker: requests in flight reject, response bodies still streaming error, its
   * threads are joined. Safe to call twice.
   */
  async dispose() {
    disposedHandles.add(this.#native);
    const listening = listenSockets?.workerDisposed(this);
    await this.#native.dispose();
    await listening;
    this.#bodies.close("the worker was disposed");
    queues?.workerDisposed(this);
    workflows?.workerDisposed(this);
    durable.workerDisposed(this);
    websocket.workerDisposed(this);
    rpc.workerDisposed(this);
    workerLoaders?.workerDisposed(this);
    inspectors.get(this)?.close();
    inspectors.delete(this);
  }

  /** The DevTools WebSocket URL of this worker, when created with `inspector`. */
  get inspectorUrl() {
    return inspectors.get(this)?.url ?? null;
  }

  [Symbol.asyncDispose]() {
    return this.dispose();
  }

  get [Symbol.toStringTag]() {
    return "Worker";
  }
}
const nativeOf = Worker._native;
const bodiesOf = Worker._bodies;
const createHandle = Worker._create;
delete Worker._native;
delete Worker._bodies;
delete Worker._create;

/** Starts a worker from a script and resolves once the script has loaded. */
async function createWorker(options) {
  const { script: source, filename, format, onLog, allowEval, network, codeCache, cacheDir, isolation, maxReuse, pool, privateCache, moduleLoader, inspector: inspectorSettings, sourceMap, modules, limits, envJson, bindingsJson, definitions, stores, compat } = validateOptions(options);
  // Errors from the worker name the original files; DevTools gets the map inline.
  const mapper = sourceMap ? stackMapper(filename, sourceMap) : null;
  const script = sourceMap && inspectorSettings ? inlineSourceMap(source, sourceMap) : source;
  // The DevTools endpoint is listening before the script starts (waitForDebugger waits for it).
  const inspector = inspectorSettings === null ? null : await createInspector(inspectorSettings, filename, native.NativeInspector);
  // tailConsumers: workers (or functions in Node) given a trace item after each fetch (lib/tail/).
  const tailConsumers = options.tailConsumers;
  // A service() binding names its worker when the trace item goes (it may be filled in later).
  const tailConsumer = (c) => c instanceof Worker || typeof c === "function" || (c instanceof Binding && c[kBinding] === "service");
  if (tailConsumers !== undefined && (!Array.isArray(tailConsumers) || !tailConsumers.every(tailConsumer))) {
    throw new TypeError("createWorker: options.tailConsumers must be an array of workers, service() bindings of workers (or functions (events) => void called in Node)");
  }
  const streamingTails = options.streamingTails;
  if (streamingTails !== undefined && (!Array.isArray(streamingTails) || !streamingTails.every(tailConsumer))) {
    throw new TypeError("createWorker: options.streamingTails must be an array of workers, service() bindings of workers (or functions (onsetEvent) => handler called in Node)");
  }
  const log = (level, message) => {
    tails.get(worker)?.log(level, message);
    if (worker !== undefined) tailStreams?.log(worker, level, message);
    try {
      onLog(level, message);
    } catch (error) {
      console.error("workerbox: options.onLog threw while handling a worker log line:", error);
    }
  };
  // The response-body stall bound is kept on this side (lib/bodies.js), not in the engine.
  const { bodyIdleMs, ...engineLimits } = limits ?? {};
  const bodies = new HostBodies(bodyIdleMs, (stream, reason) => {
    const handle = worker === undefined ? undefined : nativeOf(worker);
    if (handle === undefined || handle.disposed) return Promise.resolve(false);
    // Resolves to whether a pump waiting on its stream was stopped (then it will not call again).
    return handle.rpc(JSON.stringify({ kind: "body", stream, reason }), Buffer.alloc(0)).then(
      (outcome) => outcome.result != null && rpc.deserialize(outcome.result) === true,
      () => false,
    );
  });
  let worker;
  const dispatcher = createDispatcher(definitions, dispatch, bodies, () => worker);
  const creating = native.createWorker({ script, filename, format, envJson, bindingsJson, compatJson: JSON.stringify(compat), allowEval, publicNetworkOnly: network === "public", modules, limits: limits && engineLimits, codeCache, cacheDir, isolation, maxReuse, pool, privateCache, moduleLoader }, log, dispatcher, channel, stores, inspector?.native);
  // Node's own fetch classes (Response, Headers) are not touched here: Node loads them on first
  // use (about 12-25 ms, once per process), which the first dispatch pays. Work that never
  // dispatches from Node (a Vitest run, RPC, queues, scheduled events) never loads them.
  const outcome = await creating;
  if (!(outcome instanceof native.NativeWorker)) {
    inspector?.close();
    const error = toError(outcome);
    throw mapper ? mapError(error, mapper) : error;
  }
  worker = createHandle(outcome, filename, bodies);
  if (mapper) mappers.set(worker, mapper);
  if (inspector) inspectors.set(worker, inspector);
  rpc.setDispatcher(worker, dispatcher);
  workerLogs.set(worker, log);
  // Worker Loader bindings: what the workers they load inherit from this one.
  // Their console lines go to this worker's onLog (not to its tail consumers: they are not its own).
  const loadedLog = (level, message) => {
    try {
      onLog(level, message);
    } catch (error) {
      console.error("workerbox: options.onLog threw while handling a loaded worker's log line:", error);
    }
  };
  workerLoaders?.bindParent(worker, definitions, { onLog: loadedLog, limits, network, outbound: definitions["#outbound"] });
  if (tailConsumers?.length) {
    const onError = (error) => log("error", `workerbox: a tail consumer failed: ${error?.stack ?? error}`);
    tails.set(worker, require("./tail/index.js").tailed(dispatchUntailed, { scriptName: null, consumers: () => tailConsumers, onError }));
  }
  if (streamingTails?.length) {
    const onError = (error) => log("error", `workerbox: a streaming tail worker failed: ${error?.stack ?? error}`);
    tailStreamsLib().attach(worker, { scriptName: null, consumers: () => streamingTails, onError });
  }
  for (const [name, definition] of Object.entries(definitions)) {
    // (A Queue or Workflow exists only once its module has loaded.)
    if (queues !== null && definition instanceof queues.Queue) definition._bound(worker, name);
    else if (workflows !== null && definition instanceof workflows.Workflow) definition._bound(worker, name, limits?.bindingMs ?? 30_000);
  }
  // Alarms stored on disk by an earlier run are scheduled again.
  await durable.workerCreated(worker, definitions).catch((error) => log("error", `workerbox: the Durable Object alarms stored on disk could not be scheduled again: ${error?.stack ?? error}`));
  return worker;
}

/** The tail of each worker created with `tailConsumers`: { dispatch, log } (lib/tail/). */
const tails = new WeakMap();

/** The stack mapper of each worker created with `sourceMap`. */
const mappers = new WeakMap();
/** An error from `worker`, with its stack mapped when the worker has a source map. */
const workerError = (worker, info) => {
  const error = toError(info);
  const mapper = worker === undefined ? undefined : mappers.get(worker);
  return mapper ? mapError(error, mapper) : error;
};

/** The inspector of each worker created with `inspector`: { url, close }. */
const inspectors = new WeakMap();

/** Each worker's onLog (wrapped), for lines the host writes on its behalf (queue deliveries). */
const workerLogs = new WeakMap();

/** Runs one queue batch in `worker`: `{ outcome, decisions, error? }`; rejects if it could not run. */
async function runQueueBatch(worker, name, metas, bodies) {
  const handle = nativeOf(worker);
  if (handle.disposed) throw Object.assign(new Error("the worker has been disposed"), { code: "ERR_WORKER_DISPOSED" });
  const outcome = await handle.queue(name, JSON.stringify(metas), bodies, Date.now());
  if (outcome.outcome === undefined) throw workerError(worker, outcome);
  const result = { outcome: outcome.outcome, decisions: JSON.parse(outcome.resultJson) };
  if (outcome.error) result.error = workerError(worker, outcome.error);
  return result;
}
rpc.setWorkerAccess(nativeOf, toError);
websocket.setWorkerAccess(nativeOf, holdForSocket);
durable.setLogger((worker, level, message) => workerLogs.get(worker)?.(level, message));
require("./store-client.js").setWorkerAccess({ createWorker, dispatch });
setQueueBatchRunner(runQueueBatch);

/**
 * Runs a worker's queue() handler on one batch: `{ type: "queue", queue, messages }`. Resolves
 * to what the handler decided, in the shape of workerd's queue event result (and
 * @cloudflare/vitest-pool-workers' getQueueResult()).
 */
async function dispatchQueue(worker, input) {
  const { name, metas, bodies } = queuesLib().batchFromInput(input);
  const { outcome, decisions, error } = await runQueueBatch(worker, name, metas, bodies);
  const result = { outcome, ...decisions };
  if (error) result.error = error;
  return result;
}

/** Runs a worker's scheduled() handler: `{ type: "scheduled", cron, scheduledTime }`. */
async function dispatchScheduled(handle, input, worker) {
  const { cron = "", scheduledTime = Date.now() } = input;
  if (typeof cron !== "string") throw new TypeError("dispatch: event.cron must be a string such as \"*/5 * * * *\"");
  const time = scheduledTime instanceof Date ? scheduledTime.getTime() : scheduledTime;
  if (typeof time !== "number" || !Number.isFinite(time)) {
    throw new TypeError("dispatch: event.scheduledTime must be a Date or a number of milliseconds since the epoch");
  }
  const outcome = await handle.scheduled(cron, time, Date.now());
  if (outcome.outcome === undefined) throw workerError(worker, outcome);
  const result = { outcome: outcome.outcome, noRetry: outcome.noRetry };
  if (outcome.error) result.error = workerError(worker, outcome.error);
  return result;
}

/**
 * Sends a request to a worker and resolves to Node's Response.
 * `input` is a Request, a URL (string or URL object), or `{ url, method, headers, body }`;
 * `{ type: "scheduled", cron, scheduledTime }` runs the scheduled() handler instead and
 * resolves to `{ outcome: "ok" | "exception", noRetry, error? }`.
 */
function dispatch(worker, input) {
  if (worker instanceof Worker && tailStreams !== null && tailStreams.isTraced(worker)) return tailStreams.dispatch(worker, input, dispatchTailed);
  return dispatchTailed(worker, input);
}

/** dispatch() past streaming tails: with the legacy tail consumers' trace, if any. */
function dispatchTailed(worker, input) {
  const tail = worker instanceof Worker ? tails.get(worker) : undefined;
  return tail ? tail.dispatch(worker, input) : dispatchUntailed(worker, input);
}

async function dispatchUntailed(worker, input) {
  const handle = worker instanceof Worker ? nativeOf(worker) : undefined;
  if (handle === undefined) {
    throw new TypeError("dispatch: the first argument must be a worker returned by createWorker()");
  }
  if (disposedHandles.has(handle)) {
    throw new TypeError("dispatch: the worker has been disposed");
  }
  // (`type` first: asking `instanceof Request` loads Node's fetch classes; a Request has no `type`.)
  if (input !== null && typeof input === "object" && input.type !== undefined && !(input instanceof Request) && !(input instanceof URL)) {
    if (input.type === "scheduled") return dispatchScheduled(handle, input, worker);
    if (input.type === "queue") return dispatchQueue(worker, input);
    if (input.type !== "fetch") {
      throw new TypeError(`dispatch: unknown event type ${JSON.stringify(input.type)} (expected "fetch", "scheduled" or "queue")`);
    }
  }
  const request = toNativeRequest(input);
  // As workerd's HTTP server: a method it does not know is a 501, and the worker does not run.
  const refused = unrecognizedMethod(request.method);
  if (refused !== null) return refused;
  const bodies = bodiesOf(worker);
  const requestStream = request.stream === null ? null : bodies.addRequestBody(request.stream);
  const releaseRequest = () => requestStream !== null && bodies.releaseRequestBody(requestStream);
  dispatching++;
  let outcome;
  try {
    outcome = await sendRequest(handle, request, requestStream);
  } finally {
    dispatching--;
  }
  if (outcome.status === undefined) {
    releaseRequest();
    throw workerError(worker, outcome);
  }
  if (outcome.status === 101) {
    releaseRequest();
    return webSocketResponse(worker, outcome);
  }
  // The dev server's bridge takes the answer as a plain object (lib/http.js RAW_ANSWER).
  const answer = isPlainObject(input) && input[RAW_ANSWER] === true ? toRawAnswer : toNodeResponse;
  if (outcome.bodyStream == null) {
    releaseRequest();
    return answer(outcome, request.method);
  }
  // The request body stays readable while the worker streams its response (it may be echoing it).
  return answer(outcome, request.method, bodies.responseStream(outcome.bodyStream, releaseRequest));
}

/** A 101 answer: the worker's WebSocket end, for Node (see lib/websocket.js). */
function webSocketResponse(worker, outcome) {
  const headers = new Headers();
  let id = null;
  for (let i = 0; i + 1 < outcome.headers.length; i += 2) {
    if (outcome.headers[i].toLowerCase() === websocket.HEADER) id = outcome.headers[i + 1];
    else headers.append(outcome.headers[i], outcome.headers[i + 1]);
  }
  if (id === null) throw new TypeError("dispatch: the worker answered with status 101 but no WebSocket");
  return new websocket.WebSocketResponse(outcome.statusText, headers, websocket.forNode(worker, id));
}

/** How V8's code cache has fared in this process: `{ hits, misses, rejected, stored }`. */
function codeCacheStats() {
  return native.codeCacheStats();
}

const POOL_SETTINGS = {
  spares: "spares must be an integer of at least 0 (0 turns pooling off)",
  idleMs: "idleMs must be an integer number of milliseconds, 0 or more (0: spares are never reclaimed)",
  maxTotal: "maxTotal must be an integer of at least 0",
};

/**
 * Tunes the process-wide pool of warm spares: `{ spares, idleMs, maxTotal }`, each optional.
 * Returns the settings now in force.
 */
function configurePool(settings) {
  if (!isPlainObject(settings)) throw new TypeError("configurePool: settings must be an object such as { spares: 1, idleMs: 10000, maxTotal: 16 }");
  for (const [key, value] of Object.entries(settings)) {
    const text = POOL_SETTINGS[key];
    if (text === undefined) throw new TypeError(`configurePool: unknown setting "${key}" (known settings: ${Object.keys(POOL_SETTINGS).join(", ")})`);
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 2 ** 31 - 1) {
      throw new TypeError(`configurePool: ${text}, got ${shown(value)}`);
    }
  }
  return native.configurePool(settings.spares, settings.idleMs, settings.maxTotal);
}

/** What the warm pool holds and has done: `{ ready, booting, hits, misses, reclaimed, evicted, failed }`. */
function poolStats() {
  return native.poolStats();
}

/** Disposes every spare in the warm pool; resolves once their threads are joined. */
function clearPool() {
  return native.clearPool();
}

module.exports.createWorker = createWorker;
module.exports.configurePool = configurePool;
module.exports.poolStats = poolStats;
module.exports.clearPool = clearPool;
module.exports.codeCacheStats = codeCacheStats;
module.exports.dispatch = dispatch;
module.exports.Worker = Worker;
module.exports.kv = kv;
module.exports.storage = storage;
module.exports.service = service;
module.exports.durableObject = durable.durableObject;
module.exports.d1 = d1;
module.exports.checkpointStorage = (...args) => require("./storage-checkpoint.js").checkpointStorage(...args);
module.exports.readD1Migrations = readD1Migrations;
module.exports.applyD1Migrations = applyD1Migrations;

module.exports.queue = (...args) => queuesLib().queue(...args);
module.exports.workflow = (...args) => workflowsLib().workflow(...args);
module.exports.hyperdrive = require("./hyperdrive.js").hyperdrive;
module.exports.workerLoader = (...args) => workerLoadersLib().workerLoader(...args);
// The smaller bindings wrangler simulates (lib/simulated/: six modules, loaded on first use;
// the names are lib/simulated/index.js's exports, which a test compares).
const SIMULATED = ["rateLimit", "analyticsEngine", "sendEmail", "secretsStoreSecret", "versionMetadata", "memoryCache", "unsafeEval"];
for (const name of SIMULATED) module.exports[name] = (...args) => require("./simulated/index.js")[name](...args);
