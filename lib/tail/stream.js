"use strict";
// Streaming tail workers on the host (workerd's `streamingTails`, wrangler's
// `streaming_tail_consumers`): `attach(worker, { consumers, scriptName, onError })` makes each
// invocation of `worker` traced: a fetch (dispatch() from Node, or a service binding's fetch into
// the default entrypoint), a scheduled event, or a JS RPC call into one of its entrypoints. Each
// traced invocation is a stream of TailEvents shaped as workerd's (spanContext, invocationId,
// timestamp, sequence, event): onset (info: fetch, scheduled or jsrpc), the invocation's console
// lines (log), attributes (jsrpc.method), exception, return and outcome. Every consumer gets the onset event by
// a call into its tailStream(event, env, ctx) export and the others, in order, through the
// handler it returned (a call of kind "tail-stream", src/js/89_tail.js); a consumer may also be a
// function in Node, called as tailStream(event). Delivery is asynchronous: the traced worker
// never waits for its tails, and a failing tail only reaches `onError`. A JS RPC call's outcome
// waits for the caller to let go of its result's stubs (a returned stream read to its end).
// Spans: a fetch invocation's KV operations (kv_get, kv_put… of a service-backed KV namespace,
// src/js/89_kv_http.js), R2 operations (r2_get, r2_put… of a service-backed bucket,
// src/js/89_r2_http.js) and Cache API operations (cache_match, cache_put, cache_delete,
// src/js/88_cache.js) as spanOpen, attributes and spanClose. Not produced (workerd makes them):
// spans of other bindings (local KV and R2), subrequests and outgoing RPC, a JS RPC or
// scheduled invocation's spans, diagnosticChannel events, and traces of queue, alarm and
// WebSocket events.

const rpc = require("../rpc.js");
const { cpuTimes } = require("../http.js");
const { outcomeOf, recordsOf, framesOf, consumerTarget, LATE_LOG_MS } = require("./index.js");

const LEVELS = new Set(["debug", "info", "log", "warn", "error"]);

/** Each traced worker's streaming tails: { consumers, scriptName, onError, running }. */
const streams = new WeakMap();

function attach(worker, { consumers, scriptName = null, onError = () => {} }) {
  streams.set(worker, { consumers, scriptName, onError, running: new Set() });
}

const isTraced = (worker) => streams.has(worker);

/** A console line of a traced worker: it belongs to the invocations running now. */
function log(worker, level, message) {
  const stream = streams.get(worker);
  if (stream === undefined) return;
  const line = { level: LEVELS.has(level) ? level : "log", text: message, timestamp: new Date() };
  for (const invocation of stream.running) invocation.lines.push(line);
}

// (node:crypto loads on first use, not with the runtime: ~3-5 ms of a start.)
const hex = (bytes) => require("node:crypto").randomBytes(bytes).toString("hex");

/**
 * Where one invocation's events go, for one consumer: in order, in batches (the events emitted
 * while a call is on its way go together in the next one, as workerd batches them; the onset
 * alone, first).
 */
function consumerChain(stream, consumer) {
  // A service() binding to a worker: the worker it names when the invocation starts.
  const target = consumerTarget(consumer);
  let more = true;
  let sending = false;
  let pending = [];
  let handler = null;
  const fail = (error) => {
    stream.onError(error);
    more = false;
  };
  const deliver = async (batch) => {
    if (typeof target === "function") {
      // A function in Node: tailStream(event) for the onset, then its handler.
      for (const event of batch) {
        if (event.event.type === "onset") {
          handler = await target(event);
          if (!(typeof handler === "function" || (handler !== null && typeof handler === "object"))) return false;
          continue;
        }
        if (typeof handler === "function") await handler(event);
        else if (typeof handler?.[event.event.type] === "function") await handler[event.event.type](event);
      }
      return batch.at(-1).event.type !== "outcome";
    }
    if (!rpc.isWorker(target)) {
      fail(new Error(`streaming tail consumer ${typeof target === "string" ? `"${target}" ` : ""}is not a running worker; events of ${stream.scriptName ?? "a worker"} were dropped`));
      return false;
    }
    const answer = await rpc.callWorker(target, { kind: "tail-stream" }, rpc.serialize(batch));
    const parsed = JSON.parse(answer.json ?? "{}");
    if (parsed.error) {
      fail(rpc.remoteError(parsed.error));
      return false;
    }
    return answer.bytes ? rpc.deserialize(answer.bytes) === true : false;
  };
  const flush = async () => {
    sending = true;
    while (more && pending.length > 0) {
      const onset = pending[0].event.type === "onset";
      const batch = onset ? pending.splice(0, 1) : pending.splice(0);
      try {
        if (!(await deliver(batch))) more = false;
      } catch (error) {
        fail(error);
      }
    }
    pending = [];
    sending = false;
  };
  return (event) => {
    if (!more) return;
    pending.push(event);
    if (!sending) queueMicrotask(() => sending || flush());
  };
}

/**
 * Runs one invocation of `worker` traced: `onset` is the onset's info ({ type: "fetch", … } or
 * { type: "jsrpc" }), `entrypoint` its entrypoint name (none for the default one), `method` a JS
 * RPC call's method name. `run()` performs it and resolves to `{ status?, error?, cpuMs? }` (an
 * error of the invocation itself, which is reported, not thrown). Resolves to what run() did.
 */
async function traced(worker, { info, entrypoint, method }, run) {
  const stream = streams.get(worker);
  const consumers = stream.consumers();
  if (consumers.length === 0) return run();
  const records = rpc.isWorker(worker) ? recordsOf(worker) : null;
  records?.users.add("streaming");
  if (records) await records.start();
  const traceId = hex(16);
  const spanId = hex(8);
  const invocationId = hex(16);
  let sequence = 0;
  const sends = consumers.map((consumer) => consumerChain(stream, consumer));
  // `within`: the span an event belongs to (a span's attributes and close), else the invocation's.
  const emit = (event, timestamp = new Date(), within = spanId) => {
    const tailEvent = { spanContext: sequence === 0 ? { traceId } : { traceId, spanId: within }, invocationId, timestamp, sequence: sequence++, event };
    for (const send of sends) send(tailEvent);
  };
  const started = new Date();
  const onset = { type: "onset", executionModel: "stateless", spanId };
  if (entrypoint !== undefined && entrypoint !== "default") onset.entrypoint = entrypoint;
  if (stream.scriptName) onset.scriptName = stream.scriptName;
  onset.scriptTags = [];
  onset.info = info;
  emit(onset, started);
  if (method !== undefined) emit({ type: "attributes", info: [{ name: "jsrpc.method", value: method }] }, started);
  const invocation = { lines: [] };
  // Lines written from now on belong to this invocation, not to one that already answered.
  for (const other of stream.running) if (other.finished) stream.running.delete(other);
  stream.running.add(invocation);
  const result = await run();
  const ended = new Date();
  invocation.finished = true;
  // Console lines reach Node on their own channel, possibly just after the answer: the rest of
  // the events go a moment later (LATE_LOG_MS), the invocation's answer not held back.
  setTimeout(async () => {
    stream.running.delete(invocation);
    const took = records ? await records.take().catch(() => false) : false;
    // The invocation's console lines and the spans it made (a fetch's: made under its URL), in time order.
    const timeline = [];
    for (const line of invocation.lines) {
      const kept = took ? records.streamedLog(line.level, line.text) : undefined;
      const at = kept ? new Date(kept.timestamp) : line.timestamp;
      timeline.push({ at, emit: () => emit({ type: "log", level: line.level, message: kept ? kept.message : [line.text] }, at) });
    }
    if (took && info.type === "fetch") {
      let href = info.url;
      try {
        href = new URL(info.url).href;
      } catch {}
      for (const span of records.spans(href, started.getTime(), ended.getTime())) {
        const id = hex(8);
        timeline.push({
          at: new Date(span.opened),
          emit: () => {
            emit({ type: "spanOpen", name: span.name, spanId: id }, new Date(span.opened));
            if (span.tags.length > 0) emit({ type: "attributes", info: span.tags.map(({ name, value }) => ({ name, value })) }, new Date(span.closed), id);
            emit({ type: "spanClose", outcome: "ok" }, new Date(span.closed), id);
          },
        });
      }
    }
    timeline.sort((a, b) => a.at - b.at);
    for (const entry of timeline) entry.emit();
    const { error, status, cpuMs } = result;
    // A JS RPC call that threw: no exception event, only the outcome (as workerd, whose caller gets the error).
    if (error !== undefined && info.type === "jsrpc") {
      // nothing before the outcome
    } else if (error !== undefined) {
      const frames = framesOf(error);
      emit({ type: "exception", name: error?.name ?? "Error", message: error?.message ?? String(error), ...(frames ? { stack: frames } : {}) }, ended);
    } else if (info.type === "jsrpc" || info.type === "scheduled") {
      emit({ type: "return" }, ended);
    } else if (status !== undefined) {
      emit({ type: "return", info: { type: "fetch", statusCode: status } }, ended);
    }
    // A JS RPC result holding objects of the call (a ReadableStream, an RpcTarget, a function):
    // the invocation ends when the caller has let them all go, as workerd ends its context then.
    let over = ended;
    if (result.held !== undefined) {
      await result.held;
      over = new Date();
    }
    emit({ type: "outcome", outcome: result.outcome ?? outcomeOf(error), cpuTime: Math.round(cpuMs ?? 0), wallTime: over - started }, over);
  }, LATE_LOG_MS).unref();
  return result;
}

/** The onset info of a fetch: method, URL and headers ({ name, value } each), cf when given. */
function fetchInfo(method, url, headers, cf) {
  const info = { type: "fetch", method: String(method ?? "GET").toUpperCase(), url: String(url) };
  if (cf !== null && typeof cf === "object" && Object.keys(cf).length > 0) info.cfJson = cf;
  info.headers = [];
  for (const [name, value] of headers) info.headers.push({ name: String(name).toLowerCase(), value: String(value) });
  return info;
}

/** dispatch() of a fetch into a traced worker (`next` does it untraced). */
async function dispatch(worker, input, next) {
  if (input !== null && typeof input === "object" && input.type === "scheduled") return dispatchScheduled(worker, input, next);
  if (input !== null && typeof input === "object" && input.type !== undefined && input.type !== "fetch") return next(worker, input);
  const plain = typeof input === "string" || input instanceof URL;
  // (An array first: asking `instanceof Headers` loads Node's fetch classes.)
  const headers = plain ? [] : Array.isArray(input.headers) ? input.headers : input.headers instanceof Headers ? [...input.headers] : Object.entries(input.headers ?? {});
  const info = fetchInfo(plain ? "GET" : input.method, plain ? input : input.url, headers, plain ? null : input.cf);
  let response;
  const result = await traced(worker, { info }, async () => {
    try {
      response = await next(worker, input);
      return { status: response.status, cpuMs: cpuTimes.get(response) };
    } catch (error) {
      return { error };
    }
  });
  if (result.error !== undefined) throw result.error;
  return response;
}

/**
 * dispatch() of a scheduled event: onset info { type: "scheduled", scheduledTime, cron }, then
 * return, or the exception the handler threw, and the outcome: "ok" either way, as workerd
 * gives it (the thrown error is in the dispatch result).
 */
async function dispatchScheduled(worker, input, next) {
  const time = input.scheduledTime instanceof Date ? input.scheduledTime.getTime() : (input.scheduledTime ?? Date.now());
  const info = { type: "scheduled", scheduledTime: new Date(typeof time === "number" ? time : NaN), cron: typeof input.cron === "string" ? input.cron : "" };
  let value;
  const result = await traced(worker, { info }, async () => {
    try {
      value = await next(worker, input);
      return value.error !== undefined ? { error: value.error, outcome: "ok" } : {};
    } catch (error) {
      return { thrown: error, error };
    }
  });
  if (result.thrown !== undefined) throw result.thrown;
  return value;
}

/**
 * rpc.callWorker() of a call into an entrypoint of a traced worker: a JS RPC method call
 * (`call.kind` "call"/"get") or a fetch into a named entrypoint (`call.kind` "fetch", whose
 * request is the serialized [method, url, headers, body]).
 */
async function callWorker(worker, call, bytes, next) {
  let info;
  let method;
  if (call.kind === "fetch") {
    let parts = [];
    try {
      parts = rpc.deserialize(bytes);
    } catch {}
    info = fetchInfo(parts?.[0], parts?.[1], Array.isArray(parts?.[2]) ? parts[2] : Object.entries(parts?.[2] ?? {}), null);
  } else {
    info = { type: "jsrpc" };
    method = Array.isArray(call.path) ? call.path.join(".") : undefined;
  }
  const result = await traced(worker, { info, entrypoint: call.entrypoint, method }, async () => {
    const answer = await next(worker, call, bytes);
    const parsed = JSON.parse(answer.json ?? "{}");
    if (parsed.error) return { answer, error: rpc.remoteError(parsed.error) };
    // thrown: the method threw, its error sent as the result (asked for by errorValue).
    if (parsed.thrown === true) return { answer, error: new Error("the JS RPC method threw") };
    if (call.kind === "fetch" && answer.bytes) {
      try {
        return { answer, status: rpc.deserialize(answer.bytes)?.status };
      } catch {}
    }
    // The result's stubs (host ids): the outcome waits for them to be let go.
    const ids = Array.isArray(parsed.stubs) ? parsed.stubs.map((id) => (typeof id === "object" && id !== null ? id.stub : id)).filter((id) => typeof id === "number") : [];
    return ids.length > 0 ? { answer, held: rpc.whenReleased(ids) } : { answer };
  });
  return result.answer;
}

rpc.traceEntrypointsWith({ isTraced, callWorker });

module.exports = { attach, isTraced, log, dispatch, callWorker };
