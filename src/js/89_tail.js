// Tail workers: the host (lib/tail/index.js) delivers a producer's trace items to this worker
// as an RPC call of kind "tail" carrying the list of TraceItems; it runs the module's
// `tail(events, env, ctx)` handler (default export object, or a WorkerEntrypoint class's
// tail(events)), as workerd runs a tail_consumers worker after each invocation of its producer.

// Structured log values for the host's trace items (lib/tail/index.js): once the host asks (a
// call of kind "tail-logs" with `on: true`, made for a worker that has tail consumers), each
// console.debug/info/log/warn/error call keeps its arguments (each structured-cloned, or its
// inspected text where it cannot be), with its level, time and formatted line; a later
// "tail-logs" call takes what was kept, and the host matches the lines to the invocations it
// traces. Each incoming request's `cf` is kept the same way (by URL), for the trace's
// event.request.cf. Workers without tail consumers are never asked, and their console is left
// as it is.
const TAIL_LEVELS = ["debug", "info", "log", "warn", "error"];
/** How many records are kept between two takes (a worker logging without being traced). */
const TAIL_KEEP = 1000;
let tailRecords = null;
let tailRequests = [];

function cloneForTail(value) {
  try {
    return ops.structuredClone(value);
  } catch {
    return internals.inspect(value);
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
        tailRecords.push({ level, timestamp: Date.now(), text: internals.format(args), message: args.map(cloneForTail) });
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
