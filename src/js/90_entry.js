// The worker entry: receives requests from the host, runs the script's fetch handler (module
// `export default { fetch }` or service-worker `addEventListener("fetch", …)`), and hands the
// outcome back through `ops.respond` / `ops.respondError`; runs `scheduled` (cron) and `queue`
// events the same way. Also defines `FetchEvent`, `ScheduledEvent`, `ScheduledController` and the `ctx`
// (ExecutionContext) object handlers receive, and tracks `waitUntil` work for the host.

const { Event, Response, ReadableStream, URL } = globalThis;

let format = "module";
let env = Object.freeze({});
let handler = null;
const listened = new Set();

// Wrap the global addEventListener to learn which events a service-worker script listens for,
// so start-up can fail clearly when it registered no fetch handler.
const addGlobalListener = globalThis.addEventListener;
internals.defineGlobal("addEventListener", function addEventListener(type, listener, options) {
  if (listener != null) listened.add(String(type));
  return addGlobalListener(type, listener, options);
});

/** How long `waitUntil` work may run after its event's response (the lower of limits.waitUntilMs and limits.wallMs; 0: no bound). */
let waitUntilMs = 30000;
/** The limit that sets `waitUntilMs`, named in the warning. */
let waitUntilLimit = "limits.waitUntilMs";

/**
 * What one event still has under way after its handler returned: its response body being
 * written to the host and its `waitUntil` promises. Like production, `waitUntil` work gets
 * `waitUntilMs` after the response, then is given up on with a logged warning; and when nothing
 * is left the event is over: `ops.eventDone` drops the timers it left behind (a forgotten
 * `setInterval` does not run on forever, charged to nothing).
 */
/** Events still running, by id, so a WebSocket can keep the one that made it open. */
const runningWork = new Map();

class EventWork {
  #id;
  get id() {
    return this.#id;
  }
  #waits = new Set();
  /** WebSockets made in this event and still open: the event lasts until they close. */
  #holds = 0;
  #responded = false;
  #bodyPending = false;
  #over = false;
  #deadline = null;
  constructor(id) {
    this.#id = id;
    runningWork.set(id, this);
    // Made in the event's first turn: what it goes on to await stays its own (src/js/52_io_owner.js).
    internals.enterEventFrame(id);
  }
  /** Keeps the event open (its timers alive) until the returned function is called. */
  hold() {
    if (this.#over) return () => {};
    this.#holds++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds--;
      this.#check();
    };
  }
  /** Registers a waitUntil promise; `release` marks it finished (once). */
  track(release) {
    if (this.#over) return release;
    const entry = () => {
      if (!this.#waits.delete(entry)) return;
      release();
      this.#check();
    };
    this.#waits.add(entry);
    if (this.#responded) this.#arm();
    return entry;
  }
  /** The response head went out; `streaming`: its body follows (see bodyDone). */
  responded(streaming) {
    if (this.#responded) return;
    this.#responded = true;
    this.#bodyPending = streaming;
    this.#arm();
    this.#check();
  }
  bodyDone() {
    this.#bodyPending = false;
    this.#check();
  }
  #arm() {
    if (this.#deadline !== null || waitUntilMs <= 0 || this.#waits.size === 0) return;
    this.#deadline = ops.timerStart(() => {
      this.#deadline = null;
      const count = this.#waits.size;
      if (count === 0) return;
      console.warn(
        `workerbox: ${count} ctx.waitUntil() promise(s) did not settle within ${waitUntilMs} ms of the response (${waitUntilLimit}) and were cancelled.`,
      );
      for (const entry of [...this.#waits]) entry();
    }, waitUntilMs, false, true);
  }
  #check() {
    if (this.#over || !this.#responded || this.#bodyPending || this.#waits.size > 0 || this.#holds > 0) return;
    this.#over = true;
    runningWork.delete(this.#id);
    if (this.#deadline !== null) ops.timerCancel(this.#deadline);
    endEvent(this.#id);
    internals.releaseEventTmp?.(this.#id);
  }
}

/**
 * Registers background work: the host can wait for it (worker.waitUntilSettled()), its
 * failure is reported as an uncaught error, `list` (an event's own) collects it too, and
 * `work` (the event's EventWork) bounds it in time.
 */
/** Ends event `id`: the runtime drops the timers it left, then each API family its own state. */
function endEvent(id) {
  ops.eventDone(id);
  for (const hook of internals.eventEndHooks) hook(id);
}

/** A value with a then() method that is not a promise. */
function isCustomThenable(value) {
  return value !== null && (typeof value === "object" || typeof value === "function") && !(value instanceof Promise) && typeof value.then === "function";
}

/** The background work registered while internals.collectBackground runs its function (else null). */
let collecting = null;

/** Runs `fn`; returns the settlements of the waitUntil work registered meanwhile. */
internals.collectBackground = (fn) => {
  const previous = collecting;
  collecting = [];
  try {
    fn();
    return collecting;
  } finally {
    collecting = previous;
  }
};

function trackBackground(promise, list, work) {
  ops.backgroundStart();
  let finished = false;
  const release = () => {
    if (finished) return;
    finished = true;
    ops.backgroundDone();
  };
  const done = work ? work.track(release) : release;
  // Before unwrap_custom_thenables (2024-04-01) a thenable that is not a promise counted as done.
  if (isCustomThenable(promise) && !internals.feature("unwrap_custom_thenables")) promise = undefined;
  const settled = Promise.resolve(promise)
    .catch((error) => internals.reportError(error))
    .finally(done);
  if (list) list.push(settled);
  collecting?.push(settled);
}

class ExecutionContext {
  #waits;
  #work;
  constructor(waits = null, work = null) {
    this.#waits = waits;
    this.#work = work;
  }
  waitUntil(promise) {
    if (arguments.length === 0) throw new TypeError("waitUntil: 1 argument required, but only 0 present.");
    trackBackground(promise, this.#waits, this.#work);
  }
  passThroughOnException() {
    // There is no origin to fall back to locally; errors are reported to the host instead.
  }
  /**
   * Aborts the request's context, as workerd's ctx.abort(): the stubs it holds are let go (their
   * objects disposed) and the call running now fails with `reason` (workerd's own error without one).
   */
  abort(reason = undefined) {
    const id = this.#work?.id;
    if (id !== undefined) internals.releaseEventStubs?.(id);
    throw arguments.length === 0 || reason === undefined ? new Error("Worker execution was aborted due to call to ctx.abort().") : reason;
  }
  /** The worker's own entrypoints and Durable Object classes, as bindings. */
  get exports() {
    return internals.ctxExports();
  }
  /** The props the caller bound: `{}` without any, as in workerd. */
  get props() {
    this.#props ??= {};
    return this.#props;
  }
  #props = undefined;
  static {
    // The props a caller bound (ctx.exports.<Entrypoint>({ props })), set for its call.
    internals.setContextProps = (ctx, props) => {
      ctx.#props = props;
    };
  }
  get [Symbol.toStringTag]() {
    return "ExecutionContext";
  }
}

class FetchEvent extends Event {
  #request;
  #response = null;
  #dispatching = true;
  #work = null;
  constructor(type, init = {}) {
    super(type, init);
    if (!init || !(init.request instanceof globalThis.Request)) {
      throw new TypeError("FetchEvent: init.request must be a Request");
    }
    this.#request = init.request;
  }
  get request() {
    return this.#request;
  }
  respondWith(response) {
    if (!this.#dispatching) {
      throw new internals.DOMException("respondWith() must be called synchronously from the event listener", "InvalidStateError");
    }
    if (this.#response !== null) {
      throw new internals.DOMException("respondWith() has already been called for this event", "InvalidStateError");
    }
    if (isCustomThenable(response) && !internals.feature("unwrap_custom_thenables")) {
      throw new TypeError("Failed to execute 'respondWith' on 'FetchEvent': parameter 1 is not of type 'Response' or 'Promise' (a thenable is taken only from the unwrap_custom_thenables compatibility date, 2024-04-01).");
    }
    this.#response = Promise.resolve(response);
    this.stopImmediatePropagation();
  }
  waitUntil(promise) {
    trackBackground(promise, null, this.#work);
  }
  passThroughOnException() {}
  static _finish(event) {
    event.#dispatching = false;
    return event.#response;
  }
  static _attach(event, work) {
    event.#work = work;
  }
  get [Symbol.toStringTag]() {
    return "FetchEvent";
  }
}
const finishEvent = FetchEvent._finish;
const attachWork = FetchEvent._attach;
delete FetchEvent._finish;
delete FetchEvent._attach;
internals.defineGlobal("FetchEvent", FetchEvent);

class ScheduledController {
  #cron;
  #scheduledTime;
  #noRetry;
  constructor(cron, scheduledTime, noRetry) {
    this.#cron = cron;
    this.#scheduledTime = scheduledTime;
    this.#noRetry = noRetry;
  }
  get cron() {
    return this.#cron;
  }
  get scheduledTime() {
    return this.#scheduledTime;
  }
  noRetry() {
    this.#noRetry();
  }
  get [Symbol.toStringTag]() {
    return "ScheduledController";
  }
}

class ScheduledEvent extends Event {
  #controller;
  #waits;
  constructor(type, controller, waits) {
    super(type);
    this.#controller = controller;
    this.#waits = waits;
  }
  get cron() {
    return this.#controller.cron;
  }
  get scheduledTime() {
    return this.#controller.scheduledTime;
  }
  noRetry() {
    this.#controller.noRetry();
  }
  waitUntil(promise) {
    trackBackground(promise, this.#waits);
  }
  get [Symbol.toStringTag]() {
    return "ScheduledEvent";
  }
}
internals.defineGlobal("ScheduledController", ScheduledController);
internals.defineGlobal("ScheduledEvent", ScheduledEvent);

function describeValue(value) {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "object") {
    const name = value.constructor && value.constructor.name;
    return name ? `an object of type ${name}` : "an object";
  }
  return `a ${typeof value} (${String(value).slice(0, 40)})`;
}

/** Event handlers over a WorkerEntrypoint class: each event constructs it with (ctx, env). */
function classHandler(Entrypoint) {
  const out = {};
  for (const name of ["fetch", "scheduled", "queue"]) {
    if (typeof Entrypoint.prototype[name] !== "function") continue;
    out[name] = (event, bindings, ctx) => {
      const instance = new Entrypoint(ctx, bindings);
      return instance[name](event);
    };
  }
  return out;
}

/** What an RPC call runs with (src/js/84_rpc.js): its ExecutionContext and EventWork. */
internals.eventContext = (id) => {
  const work = new EventWork(id);
  return { work, ctx: new ExecutionContext(null, work) };
};

/** Holds the running event open until the returned function is called (a WebSocket's life). */
internals.holdCurrentEvent = () => {
  const id = ops.currentEvent();
  const work = id === undefined ? undefined : runningWork.get(id);
  return { id, release: work === undefined ? () => {} : work.hold() };
};

/** Whether event `id` is still running (not over: see EventWork). */
internals.eventRunning = (id) => runningWork.has(id);

/** Holds event `id` open (its timers alive) until the returned function is called; a no-op once it is over. */
internals.holdEvent = (id) => {
  const work = id === undefined ? undefined : runningWork.get(id);
  return work === undefined ? () => {} : work.hold();
};

/**
 * `waitUntil` from `cloudflare:workers`: the running event's background work (its timers live
 * on until it settles, as ctx.waitUntil's do), or the worker's outside any event.
 */
internals.trackBackground = (promise) => {
  const id = internals.flowEvent();
  trackBackground(promise, null, (id === undefined ? undefined : runningWork.get(id)) ?? null);
};

/** Called by the native side once the user's script has loaded. Throws if there is no handler. */
/**
 * The env, set before the script's top level runs (src/runtime/isolate/boot.rs): its plain values
 * and, given `bindingsJson`, its bindings too, as workerd's env is whole while the top level runs.
 */
let bindingsMade = false;
internals.preloadEnv = function preloadEnv(envJson, bindingsJson) {
  Object.assign(internals.envObject, JSON.parse(envJson));
  if (bindingsJson !== undefined) makeBindings(bindingsJson);
  internals.makeHyperdriveBindings(internals.envObject);
  // Data bindings come as marked base64 (lib/api.js): an ArrayBuffer each, as workerd's.
  for (const [name, value] of Object.entries(internals.envObject)) {
    if (value !== null && typeof value === "object" && typeof value.__workerboxData === "string") internals.envObject[name] = Uint8Array.fromBase64(value.__workerboxData).buffer;
  }
  internals.workerEnv = internals.envObject;
  internals.onWorkerEnv?.(internals.envObject);
};

function makeBindings(bindingsJson) {
  bindingsMade = true;
  for (const [name, kind] of Object.entries(JSON.parse(bindingsJson))) {
    const binding = internals.makeBinding(name, kind);
    if (binding !== undefined) internals.envObject[name] = binding;
  }
}

internals.start = function start(envJson, scriptFormat, namespace, bindingsJson, waitUntilLimitMs, compatJson, waitUntilLimitName) {
  format = scriptFormat;
  waitUntilMs = waitUntilLimitMs;
  waitUntilLimit = waitUntilLimitName;
  internals.compat = JSON.parse(compatJson);
  // Features the compatibility date and flags turn off (see lib/compat.js and docs/compatibility.md).
  if (!internals.compat.enabled.includes("global_navigator")) {
    delete globalThis.navigator;
    delete globalThis.Navigator;
  }
  // createWorker's unsafeExposeGc: V8's --expose-gc for this worker only.
  if (internals.compat.exposeGc === true) {
    Object.defineProperty(globalThis, "gc", { value: function gc() { ops.gc(); }, writable: true, configurable: true, enumerable: false });
  }
  if (!internals.feature("enable_ctx_exports")) {
    delete ExecutionContext.prototype.exports;
    delete internals.durableStatePrototype.exports;
  }
  // The same object `import { env } from "cloudflare:workers"` gives (src/js/84_rpc.js), its
  // plain values already there (preloadEnv, above) unless the host skipped that step.
  const bindings = internals.envObject;
  if (internals.workerEnv === undefined) internals.preloadEnv(envJson);
  if (!bindingsMade) makeBindings(bindingsJson);
  if (format === "module") {
    env = bindings;
    internals.namespace = namespace;
    const exported = namespace.default;
    if (internals.isEntrypointClass(exported)) {
      // `export default class extends WorkerEntrypoint`: an instance per event, with ctx and env.
      handler = classHandler(exported);
      return;
    }
    // Only named entrypoints or Durable Object classes: served over service bindings and namespaces.
    const servesCalls = (value) => internals.isEntrypointClass(value) || (typeof value === "function" && value.prototype instanceof internals.rpc.DurableObject);
    if (exported === undefined && Object.values(namespace).some(servesCalls)) {
      handler = {}; // only named entrypoints: served over service bindings
      return;
    }
    if (exported === undefined) {
      throw new TypeError("The worker module has no default export; expected `export default { fetch(request, env, ctx) { … } }`.");
    }
    // A tail worker's (tail(), trace()) and an email worker's handlers count too, as in workerd;
    // so does any function, which takes RPC calls (workerd starts such a worker too).
    const handles = exported !== null && (["fetch", "scheduled", "queue", "tail", "trace", "email"].some((name) => typeof exported[name] === "function") || (typeof exported === "object" && Object.values(exported).some((value) => typeof value === "function")));
    if (!handles) {
      throw new TypeError(`The worker module's default export has no fetch(), scheduled() or queue() handler (it is ${describeValue(exported)}); expected \`export default { fetch(request, env, ctx) { … } }\`.`);
    }
    handler = exported;
  } else {
    // Service-worker scripts see their bindings as globals.
    for (const name of Object.keys(bindings)) internals.defineGlobal(name, bindings[name]);
    if (!listened.has("fetch") && !listened.has("scheduled") && !listened.has("queue")) {
      throw new TypeError('The worker script registered no fetch (or scheduled, or queue) event listener; expected `addEventListener("fetch", (event) => event.respondWith(…))` or an ES module with `export default { fetch }`.');
    }
  }
};

// Reads what the host is told of a thrown value. Each part is read on its own: a getter, a
// Proxy trap or an `Error.prepareStackTrace` that throws must not hide the handler's error
// behind an error of ours (or leave the request unanswered).
function errorParts(error) {
  const attempt = (read) => {
    try {
      return { value: read() };
    } catch (problem) {
      return { problem };
    }
  };
  const looksLikeError = attempt(() => error !== null && typeof error === "object" && "message" in error);
  if (looksLikeError.value === true) {
    const name = attempt(() => String(error.name ?? "Error")).value ?? "Error";
    const message = attempt(() => String(error.message)).value ?? "(the error's message could not be read)";
    const stack = attempt(() => error.stack);
    if (typeof stack.value === "string") return [name, message, stack.value];
    const why = "problem" in stack ? `\n    (its stack could not be read: ${attempt(() => String(stack.problem)).value ?? "unknown reason"})` : "";
    return [name, message, `${name}: ${message}${why}`];
  }
  const text = attempt(() => (internals.inspect ? internals.inspect(error) : String(error))).value ?? "(a value that could not be read)";
  return ["Error", `Uncaught ${text}`, `Error: Uncaught ${text}`];
}

internals.errorParts = errorParts;

function fail(id, error, work) {
  const [name, message, stack] = errorParts(error);
  ops.respondError(id, name, message, stack);
  work?.responded(false);
}

const WEBSOCKET_HEADER = "x-workerbox-websocket";

async function respond(id, response, work, requestHeaders) {
  if (!(response instanceof Response)) {
    fail(id, new TypeError(`The fetch handler must return a Response (or a Promise of one), but it returned ${describeValue(response)}.`), work);
    return;
  }
  if (response.type === "error") {
    fail(id, new TypeError("Return value from serve handler must not be an error response (like Response.error())"), work);
    return;
  }
  const parts = internals.responseParts(response);
  // A WebSocket leaving to the host goes by its socket id, in a header only the host reads.
  for (let i = parts.headers.length - 2; i >= 0; i -= 2) if (parts.headers[i].toLowerCase() === WEBSOCKET_HEADER) parts.headers.splice(i, 2);
  if (parts.webSocket !== null) {
    internals.webSocketAnswerExtensions(parts.headers, requestHeaders);
    parts.headers.push(WEBSOCKET_HEADER, internals.webSocketForHost(parts.webSocket));
  }
  if (parts.body instanceof ReadableStream) {
    // Headers go now; the body follows chunk by chunk, as fast as the host reads it.
    const stream = ops.bodyStreamId();
    ops.respond(id, parts.status, parts.statusText, parts.headers, stream);
    // The context stays alive (per-request mode) until the body is written out.
    ops.contextPump(true);
    work?.responded(true);
    internals.pumpToHost(stream, parts.body).finally(() => {
      ops.contextPump(false);
      work?.bodyDone();
    });
    return;
  }
  ops.respond(id, parts.status, parts.statusText, parts.headers, parts.body);
  work?.responded(false);
}

function runServiceWorker(request, work) {
  const event = new FetchEvent("fetch", { request });
  attachWork(event, work);
  internals.globalEventTarget.dispatchEvent(event);
  const response = finishEvent(event);
  if (response === null) {
    throw new Error("No fetch event listener called event.respondWith(); there is no origin to pass the request on to.");
  }
  return response;
}

/**
 * Called by the native side for every request (`cfJson`: the host's `request.cf` as JSON, or
 * undefined for the default). Never throws: outcomes go through ops.
 */
internals.dispatchFetch = function dispatchFetch(id, method, url, flatHeaders, body, cfJson) {
  const work = new EventWork(id);
  let result;
  try {
    const request = internals.newIncomingRequest(method, url, flatHeaders, body, cfJson);
    if (format === "module") {
      if (typeof handler.fetch !== "function") {
        throw new TypeError("Handler does not export a fetch() function.");
      }
      result = handler.fetch(request, env, new ExecutionContext(null, work));
    } else {
      if (!listened.has("fetch")) throw new TypeError("The worker script registered no fetch event listener.");
      result = runServiceWorker(request, work);
    }
  } catch (error) {
    fail(id, error, work);
    return;
  }
  // The response is taken in the microtask turn workerd takes it in (probed against workerd): a
  // Response returned as such, in the next turn; a promise (or thenable), one turn after it
  // settles, as workerd converts the promise before its continuation runs. The body's first
  // read follows at once, so what a streaming render finished by then is in the first chunk.
  const settled = result instanceof Promise || isCustomThenable(result) ? Promise.resolve(result).then((value) => value) : Promise.resolve(result);
  settled.then(
    (response) => respond(id, response, work, flatHeaders).catch((error) => fail(id, error, work)),
    (error) => fail(id, error, work),
  );
};

/** Waits for an event's handler result, then for every waitUntil promise it registered. */
async function settleAll(result, waits) {
  await result;
  for (let done = 0; done < waits.length; done = waits.length) {
    await Promise.all(waits.slice(done));
  }
}

/**
 * Called by the native side for a cron event. A missing handler rejects the dispatch; a
 * handler that throws gives the outcome "exception". Never throws.
 */
internals.dispatchScheduled = function dispatchScheduled(id, cron, scheduledTime) {
  let noRetry = false;
  const controller = new ScheduledController(cron, scheduledTime, () => {
    noRetry = true;
  });
  const waits = [];
  if (format === "module" ? typeof handler.scheduled !== "function" : !listened.has("scheduled")) {
    const expected = format === "module" ? "`export default { scheduled(controller, env, ctx) { … } }`" : '`addEventListener("scheduled", (event) => …)`';
    fail(id, new TypeError(`The worker has no scheduled() handler; expected ${expected}.`));
    return;
  }
  let result;
  try {
    if (format === "module") {
      result = handler.scheduled(controller, env, new ExecutionContext(waits));
    } else {
      internals.globalEventTarget.dispatchEvent(new ScheduledEvent("scheduled", controller, waits));
    }
  } catch (error) {
    result = Promise.reject(error);
  }
  settleAll(result, waits)
    .then(
      () => ops.respondScheduled(id, noRetry),
      (error) => ops.respondScheduled(id, noRetry, ...errorParts(error)),
    )
    .finally(() => endEvent(id));
};

/**
 * Called by the native side for a queue batch (see 89_queue.js). The outcome is "exception" when
 * the handler throws or a body cannot be decoded; either way the host learns what was acked and
 * retried before that. Waits for the event's waitUntil work too, unless the compatibility flag
 * queue_consumer_no_wait_for_wait_until is on. Never throws.
 */
internals.dispatchQueue = function dispatchQueue(id, queueName, batchJson, bodies) {
  const waits = [];
  if (format === "module" ? typeof handler.queue !== "function" : !listened.has("queue")) {
    const expected = format === "module" ? "`export default { queue(batch, env, ctx) { … } }`" : '`addEventListener("queue", (event) => …)`';
    fail(id, new TypeError(`The worker has no queue() handler; expected ${expected}.`));
    return;
  }
  let result;
  let decided = null;
  try {
    const { batch, result: decisions, event } = internals.queueBatch(queueName, batchJson, bodies);
    decided = decisions;
    if (format === "module") {
      result = handler.queue(batch, env, new ExecutionContext(waits));
    } else {
      internals.globalEventTarget.dispatchEvent(event((promise) => trackBackground(promise, waits)));
    }
  } catch (error) {
    result = Promise.reject(error);
  }
  const onlyHandler = format === "module" && internals.compat.enabled.includes("queue_consumer_no_wait_for_wait_until");
  const done = onlyHandler ? Promise.resolve(result) : settleAll(result, waits);
  const answer = () => JSON.stringify(decided ?? { ackAll: false, retryBatch: { retry: false }, explicitAcks: [], retryMessages: [] });
  done
    .then(
      () => ops.respondQueue(id, answer()),
      (error) => ops.respondQueue(id, answer(), ...errorParts(error)),
    )
    .finally(() => endEvent(id));
};

/**
 * Runs the common request path once while the startup snapshot is made (never in a worker), so
 * that its functions are compiled into the snapshot and a worker's first request does not
 * compile them. Uses no op that needs a running worker; leaves no state behind.
 */
internals.warmUp = async function warmUp() {
  const request = internals.newIncomingRequest("POST", "http://localhost/warm?x=1", ["content-type", "text/plain"], new Uint8Array([104, 105]));
  const url = new URL(request.url);
  void url.pathname, url.searchParams.get("x"), request.headers.get("content-type"), request.method;
  await request.text();
  const response = new Response("ok", { status: 200, headers: { "x-warm": "1" } });
  void response.headers.get("x-warm"), response.status, response.ok;
  internals.responseParts(response);
  await Response.json({ warm: true }).json();
  const streamed = new Response(new ReadableStream({ start(controller) { controller.enqueue(new Uint8Array(1)); controller.close(); } }));
  await streamed.arrayBuffer();
  new TextDecoder().decode(new TextEncoder().encode("warm"));
};
