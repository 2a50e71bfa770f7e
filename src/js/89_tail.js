// Tail workers: the host (lib/tail/index.js) delivers a producer's trace items to this worker
// as an RPC call of kind "tail" carrying the list of TraceItems; it runs the module's
// `tail(events, env, ctx)` handler (default export object, or a WorkerEntrypoint class's
// tail(events)), as workerd runs a tail_consumers worker after each invocation of its producer.

// Structured log values for the host's trace items (lib/tail/index.js): once the host asks (a
// call of kind "tail-logs" with `on: true`, made for a worker that has tail consumers), each
// console.debug/info/log/warn/error call keeps its arguments (as workerd's trace does: JSON
// where a value is plain data, else its string; jsonForTail()), with its level, time and
// formatted line; a later "tail-logs" call takes what was kept, and the host matches the lines
// to the invocations it traces. Each incoming request's `cf` is kept the same way (by URL), for the trace's
// event.request.cf. Workers without tail consumers are never asked, and their console is left
// as it is.
const TAIL_LEVELS = ["debug", "info", "log", "warn", "error"];
/** How many records are kept between two takes (a worker logging without being traced). */
const TAIL_KEEP = 1000;
let tailRecords = null;
let tailRequests = [];
// User spans (internals.userSpan(), as workerd's makeUserTraceSpan: KV operations…), kept like
// the logs once the host asks, each with the URL of the request whose event made it (the host
// gives a fetch invocation the spans made under its URL).
let tailSpans = [];
const eventUrls = new Map();

/**
 * A log's values as workerd's trace carries them: JSON of each value that is null, a number, a
 * boolean, a string, an array, undefined (null), a plain object or one with a toJSON() method;
 * any other value as its string (a function's source, "[object Map]", "RangeError: bad"); a
 * value that throws as {}.
 */
function jsonForTail(value) {
  let json = true;
  if (value !== null && (typeof value === "object" || typeof value === "function")) {
    const proto = Object.getPrototypeOf(value);
    json = typeof value === "object" && (proto === Object.prototype || proto === null || Array.isArray(value) || typeof value.toJSON === "function");
  }
  try {
    if (!json) return JSON.stringify(String(value));
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  } catch {
    return "{}";
  }
}

function recordTailLogs() {
  if (tailRecords !== null) return;
  tailRecords = [];
  const newIncomingRequest = internals.newIncomingRequest;
  internals.newIncomingRequest = function (...args) {
    const request = Reflect.apply(newIncomingRequest, this, args);
    const event = ops.currentEvent();
    if (event !== undefined) {
      eventUrls.set(event, request.url);
      if (eventUrls.size > TAIL_KEEP) eventUrls.delete(eventUrls.keys().next().value);
    }
    if (tailRequests.length < TAIL_KEEP) {
      try {
        tailRequests.push({ url: request.url, cf: ops.structuredClone(request.cf ?? {}) });
      } catch {
        // a cf that does not clone: the trace keeps the one the host knows
      }
    }
    return request;
  };
  const console = globalThis.console;
  if (console === null || typeof console !== "object") return;
  for (const level of TAIL_LEVELS) {
    const original = console[level];
    if (typeof original !== "function") continue;
    const recorded = function (...args) {
      if (tailRecords.length < TAIL_KEEP) {
        tailRecords.push({ level, timestamp: Date.now(), text: internals.format(args), message: JSON.parse(`[${args.map(jsonForTail).join(", ")}]`) });
      }
      return Reflect.apply(original, this, args);
    };
    Object.defineProperty(recorded, "name", { value: level });
    console[level] = recorded;
  }
}

const NO_SPAN = Object.freeze({ setTag() {}, end() {} });

/**
 * A span of the running event (workerd's makeUserTraceSpan): `setTag(name, value)` (a string,
 * boolean, number or BigInt), `end()`. Kept only while tails listen; streaming tails get it as
 * spanOpen, attributes and spanClose events (lib/tail/stream.js).
 */
internals.userSpan = function userSpan(name) {
  if (tailRecords === null) return NO_SPAN;
  const event = internals.flowEvent();
  const span = { name, opened: Date.now(), closed: undefined, url: eventUrls.get(event), tags: [] };
  return {
    setTag(tag, value) {
      if (span.closed !== undefined) return;
      const at = span.tags.findIndex((t) => t.name === tag);
      if (at === -1) span.tags.push({ name: tag, value });
      else span.tags[at].value = value;
    },
    end() {
      if (span.closed !== undefined) return;
      span.closed = Date.now();
      if (tailSpans.length < TAIL_KEEP) tailSpans.push(span);
    },
  };
};

/** Runs `work()` (its synchronous part included) inside `span`, which ends when it settles. */
internals.inSpan = function inSpan(span, work) {
  let result;
  try {
    result = work();
  } catch (error) {
    span.end();
    return Promise.reject(error);
  }
  return Promise.resolve(result).finally(() => span.end());
};

/**
 * workerd's IoContext::logWarning(): a warn-level line for the worker's log, written only when
 * something listens for warnings (here: tail workers, once the host has asked for structured
 * logs), as workerd writes them only when a tracer or inspector is there.
 */
internals.logWarning = function logWarning(text) {
  if (tailRecords === null) return;
  globalThis.console?.warn?.(text);
};

function answerTailLogs(id, call) {
  const { work } = internals.eventContext(id);
  try {
    if (call.on) recordTailLogs();
    const taken = { logs: tailRecords ?? [], requests: tailRequests, spans: tailSpans };
    if (tailRecords !== null) tailRecords = [];
    tailRequests = [];
    tailSpans = [];
    ops.respondRpc(id, ops.serialize(taken), '{"stubs":[]}');
  } catch (error) {
    const [name, message, stack] = internals.errorParts(error);
    ops.respondRpc(id, undefined, undefined, name, message, stack);
  } finally {
    work.responded(false);
  }
}

const dispatchBeforeTail = internals.dispatchRpc;
internals.dispatchRpc = function dispatchRpc(id, callJson, argsBytes) {
  if (callJson.startsWith('{"kind":"tail-logs"')) return answerTailLogs(id, JSON.parse(callJson));
  if (!callJson.startsWith('{"kind":"tail"')) return dispatchBeforeTail(id, callJson, argsBytes);
  const { ctx, work } = internals.eventContext(id);
  (async () => {
    const events = ops.deserialize(argsBytes);
    const exported = internals.namespace?.default;
    if (internals.isEntrypointClass(exported)) {
      const instance = new exported(ctx, internals.workerEnv);
      if (typeof instance.tail !== "function") throw new TypeError("The tail worker's default export has no tail() method.");
      await instance.tail(events);
    } else {
      if (exported === null || typeof exported?.tail !== "function") throw new TypeError("The tail worker's default export has no tail(events, env, ctx) handler.");
      await exported.tail(events, internals.workerEnv, ctx);
    }
    return undefined;
  })()
    .then((more) => ops.respondRpc(id, ops.serialize(more), '{"stubs":[]}'))
    .catch((error) => {
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => work.responded(false));
};

// Streaming tail workers (lib/tail/stream.js): the host delivers a traced invocation's events as
// calls of kind "tail-stream", each carrying a list of TailEvents of one invocation, in order.
// The onset event goes to the module's tailStream(event, env, ctx) (a WorkerEntrypoint class's
// tailStream(event, env)); what it returns (or resolves to) receives the later events: a
// function gets each event, an object its method named for the event's type (outcome, spanOpen,
// spanClose, diagnosticChannel, exception, log, return, attributes). Anything else stops the
// stream, as in workerd. The handler is forgotten after the outcome event.
const tailStreamHandlers = new Map();
const TAIL_STREAM_METHODS = { streamDiagnostic: "streamDiagEvent" };
let tailStreamWarned = false;
// An invocation's stream is open from its onset to its outcome: the onset's call is held open
// (its timers alive) and a timer of its own keeps the worker from looking idle meanwhile, so
// that code awaiting events still to come is not taken for hung (workerd keeps the tail
// worker's invocation open the same way). Closed at the outcome, when this worker stops
// taking the invocation's events, or after TAIL_STREAM_OPEN_MS at most.
const TAIL_STREAM_OPEN_MS = 60_000;
const tailStreamOpen = new Map();
const setTailTimer = globalThis.setTimeout;
const clearTailTimer = globalThis.clearTimeout;

function openTailStream(id, key) {
  const release = internals.holdEvent(id);
  const timer = setTailTimer(() => closeTailStream(key), TAIL_STREAM_OPEN_MS);
  tailStreamOpen.set(key, () => {
    clearTailTimer(timer);
    release();
  });
}

function closeTailStream(key) {
  const close = tailStreamOpen.get(key);
  tailStreamOpen.delete(key);
  tailStreamHandlers.delete(key);
  close?.();
}

/** Runs a batch of events; resolves to whether this worker still wants the invocation's events. */
async function runTailStream(ctx, events) {
  let key;
  for (const event of events) {
    key = event?.invocationId;
    const type = event?.event?.type;
    if (type === "onset") {
      const exported = internals.namespace?.default;
      let target = exported;
      let args = [event, internals.workerEnv, ctx];
      if (internals.isEntrypointClass(exported)) {
        target = new exported(ctx, internals.workerEnv);
        args = [event, internals.workerEnv];
      }
      tailStreamHandlers.set(key, null);
      if (target === null || typeof target?.tailStream !== "function") {
        if (!tailStreamWarned) console.warn("A worker configured to act as a streaming tail worker does not export a tailStream() handler.");
        tailStreamWarned = true;
        continue;
      }
      const handler = await Reflect.apply(target.tailStream, target, args);
      if (typeof handler === "function" || (handler !== null && typeof handler === "object")) tailStreamHandlers.set(key, handler);
      continue;
    }
    const handler = tailStreamHandlers.get(key);
    if (type === "outcome") tailStreamHandlers.delete(key);
    if (typeof handler === "function") {
      await Reflect.apply(handler, handler, [event]);
    } else if (handler !== null && typeof handler === "object") {
      const method = handler[TAIL_STREAM_METHODS[type] ?? type];
      if (typeof method === "function") await Reflect.apply(method, handler, [event]);
    }
  }
  const more = tailStreamHandlers.get(key) != null;
  if (!more) closeTailStream(key);
  return more;
}

const dispatchBeforeTailStream = internals.dispatchRpc;
internals.dispatchRpc = function dispatchRpc(id, callJson, argsBytes) {
  if (!callJson.startsWith('{"kind":"tail-stream"')) return dispatchBeforeTailStream(id, callJson, argsBytes);
  const { ctx, work } = internals.eventContext(id);
  let key;
  (async () => {
    const events = ops.deserialize(argsBytes);
    key = events[0]?.invocationId;
    if (events[0]?.event?.type === "onset" && !tailStreamOpen.has(key)) openTailStream(id, key);
    return runTailStream(ctx, events);
  })()
    .then((more) => ops.respondRpc(id, ops.serialize(more), '{"stubs":[]}'))
    .catch((error) => {
      closeTailStream(key);
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => work.responded(false));
};
