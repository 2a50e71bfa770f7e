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

function answerTailLogs(id, call) {
  const { work } = internals.eventContext(id);
  try {
    if (call.on) recordTailLogs();
    const taken = { logs: tailRecords ?? [], requests: tailRequests };
    if (tailRecords !== null) tailRecords = [];
    tailRequests = [];
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
    .then(() => ops.respondRpc(id, ops.serialize(undefined), '{"stubs":[]}'))
    .catch((error) => {
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => work.responded(false));
};
