"use strict";
// Tail workers on the host: `tailed(dispatch, { scriptName, consumers })` wraps dispatch() for a
// producer so that after each fetch invocation a trace item shaped as production's TraceItem
// (workers-types: scriptName, event.request/response, eventTimestamp, outcome, logs, exceptions,
// diagnosticsChannelEvents, …) goes to every consumer's tail(events) handler (a call of kind
// "tail" into the consumer, src/js/89_tail.js). `log(level, message)` feeds the producer's
// console lines to the invocations running when they were written. Used by the dev server for
// `tail_consumers` (lib/project/multi.js) and by createWorker's `tailConsumers` option (lib/api.js); a
// consumer may also be a function, called in Node with the events.
// A log's `message` is the list of values the worker logged and `event.request.cf` the cf the
// worker saw: the producer keeps both once asked (a "tail-logs" call, src/js/89_tail.js), and
// each finished invocation takes them and matches them to its lines (by level and text) and
// its request (by URL); a line or request that finds none keeps the host's text and cf.

const rpc = require("../rpc.js");
const { cpuTimes } = require("../http.js");

/** workerd's outcome names for what dispatch() reported. */
function outcomeOf(error) {
  if (error === undefined) return "ok";
  const text = `${error?.name ?? ""} ${error?.message ?? ""}`;
  if (/exceeded (its )?CPU|cpu time limit/i.test(text)) return "exceededCpu";
  if (/memory limit|out of memory/i.test(text)) return "exceededMemory";
  return "exception";
}

/** How long after an invocation's end its console lines are still taken. */
const LATE_LOG_MS = 20;

/** An error's stack frames without its "Name: message" head, as workerd's TraceException.stack. */
function framesOf(error) {
  const stack = typeof error?.stack === "string" ? error.stack : "";
  const at = stack.search(/^\s+at /m);
  return at === -1 ? "" : stack.slice(at);
}

const LEVELS = new Set(["debug", "info", "log", "warn", "error"]);

/** How long kept records wait for the invocation they belong to before they are dropped. */
const RECORD_TTL_MS = 10_000;

/**
 * The structured logs and request cfs a producer keeps for its traces: `start()` (once) asks it
 * to keep them; `take()` adds what it kept since to the pool that invocations match against.
 */
function producerRecords(worker) {
  let started = null;
  const pool = { logs: [], requests: [], spans: [] };
  const call = (on) => rpc.callWorker(worker, { kind: "tail-logs", ...(on ? { on: true } : {}) }, null);
  const absorb = (answer) => {
    const parsed = JSON.parse(answer.json ?? "{}");
    if (parsed.error || !answer.bytes) return false;
    const taken = rpc.deserialize(answer.bytes);
    const now = Date.now();
    for (const list of ["logs", "requests", "spans"]) {
      pool[list] = pool[list].filter((r) => now - r.taken < RECORD_TTL_MS);
      for (const record of taken?.[list] ?? []) pool[list].push({ ...record, taken: now });
    }
    return true;
  };
  // A record is used once by each kind of tail the producer has, then dropped.
  const use = (kind, level, text) => {
    const at = pool.logs.findIndex((r) => !r.usedBy?.has(kind) && r.level === level && (r.text === text || r.text === text.trimStart()));
    if (at === -1) return undefined;
    const record = pool.logs[at];
    (record.usedBy ??= new Set()).add(kind);
    if ([...records.users].every((k) => record.usedBy.has(k))) pool.logs.splice(at, 1);
    return record;
  };
  const records = {
    start: () => (started ??= call(true).then(absorb, () => false)),
    /** Resolves to whether the producer answered (else the lines keep the host's text). */
    take: () => call(false).then(absorb, () => false),
    /** The kept values of a line (level, text), or undefined; each is used once. */
    log(level, text) {
      return use("legacy", level, text);
    },
    /** The same for streaming tails (lib/tail/stream.js). */
    streamedLog(level, text) {
      return use("streaming", level, text);
    },
    /** Which kinds of tail take this producer's records ("legacy", "streaming"). */
    users: new Set(),
    /**
     * The spans made under a request to `url` (streaming tails) and opened from `from` to `to`
     * (ms; the invocation's run: later ones belong to the next request to that URL), each taken once.
     */
    spans(url, from, to) {
      const mine = (r) => r.url === url && r.opened >= from && r.opened <= to;
      const taken = pool.spans.filter(mine);
      pool.spans = pool.spans.filter((r) => !mine(r));
      return taken;
    },
    /** The cf the worker saw for a request to `url`, or undefined. */
    cf(url) {
      const at = pool.requests.findIndex((r) => r.url === url);
      return at === -1 ? undefined : pool.requests.splice(at, 1)[0].cf;
    },
  };
  return records;
}

/** Each producer's records, shared by its legacy and streaming tails (lib/tail/stream.js). */
const producers = new WeakMap();
function recordsOf(worker) {
  if (worker === null || typeof worker !== "object") return null;
  if (!producers.has(worker)) producers.set(worker, producerRecords(worker));
  return producers.get(worker);
}

/**
 * The tail consumer to call for `consumer`: a service() binding to a worker (made before that
 * worker, e.g. the producer itself) is the worker it names now; anything else is itself.
 */
const consumerTarget = (consumer) => (consumer !== null && typeof consumer === "object" && !rpc.isWorker(consumer) && "handler" in consumer ? consumer.handler : consumer);

/**
 * `consumers()` returns the consumer workers (Worker objects) to call now, or the names of those
 * not running (reported through `onError`). Returns `{ dispatch, log }`.
 */
function tailed(dispatch, { scriptName, consumers, onError = () => {} }) {
  const running = new Set();
  const log = (level, message) => {
    const entry = { message: [message], level: LEVELS.has(level) ? level : "log", timestamp: Date.now(), text: message };
    for (const invocation of running) invocation.logs.push(entry);
  };
  const deliver = (item) => {
    for (const consumer of consumers()) {
      const target = consumerTarget(consumer);
      if (typeof target === "function") {
        Promise.resolve()
          .then(() => target([item]))
          .catch(onError);
        continue;
      }
      if (typeof target === "string") {
        onError(new Error(`tail consumer "${target}" is not running; a trace item of ${scriptName} was dropped`));
        continue;
      }
      rpc.callWorker(target, { kind: "tail" }, rpc.serialize([item])).then(
        (answer) => {
          const parsed = JSON.parse(answer.json ?? "{}");
          if (parsed.error) onError(rpc.remoteError(parsed.error));
        },
        (error) => onError(error),
      );
    }
  };
  const wrapped = async (worker, input) => {
    // Only fetch events are traced (scheduled and queue go through unchanged).
    if (input !== null && typeof input === "object" && input.type !== undefined && input.type !== "fetch") return dispatch(worker, input);
    const records = rpc.isWorker(worker) ? recordsOf(worker) : null;
    records?.users.add("legacy");
    if (records) await records.start();
    const started = Date.now();
    // dispatch() takes a Request, a URL (string or URL) or { url, method, headers, body }.
    const plain = typeof input === "string" || input instanceof URL;
    const url = plain ? String(input) : String(input.url);
    const method = plain ? "GET" : (input.method ?? "GET").toUpperCase();
    const headers = {};
    // (An array first: asking `instanceof Headers` loads Node's fetch classes.)
    const given = plain ? [] : Array.isArray(input.headers) ? input.headers : input.headers instanceof Headers ? input.headers : Object.entries(input.headers ?? {});
    for (const [name, value] of given) headers[String(name).toLowerCase()] = String(value);
    const invocation = { logs: [], finishing: false };
    // Lines written from now on belong to this request, not to one that already answered.
    for (const other of running) if (other.finishing) running.delete(other);
    running.add(invocation);
    const item = (status, error, cpuMs = 0) => ({
      scriptName: scriptName ?? null,
      event: { request: { url, method, headers, cf: plain ? {} : { ...(input.cf ?? {}) } }, ...(status !== undefined ? { response: { status } } : {}) },
      eventTimestamp: started,
      logs: invocation.logs,
      exceptions: error === undefined ? [] : [{ name: error?.name ?? "Error", message: error?.message ?? String(error), timestamp: Date.now(), ...(framesOf(error) ? { stack: framesOf(error) } : {}) }],
      diagnosticsChannelEvents: [],
      outcome: outcomeOf(error),
      executionModel: "stateless",
      truncated: false,
      // Whole milliseconds, as production reports them (0 for an invocation that threw).
      cpuTime: Math.round(cpuMs),
      wallTime: Date.now() - started,
    });
    // Console lines reach Node on their own channel, possibly just after the answer: the item
    // is finished a moment later (LATE_LOG_MS), without holding the response back.
    const finish = (status, error, cpuMs) => {
      const done = item(status, error, cpuMs);
      invocation.finishing = true;
      setTimeout(async () => {
        running.delete(invocation);
        let logs = invocation.logs;
        if (records && (await records.take())) {
          // Lines of console.debug/info/log/warn/error get their values; other lines are left
          // out (workerd's trace has no line for console.group's label; count, time… go with it).
          logs = [];
          for (const entry of invocation.logs) {
            const kept = records.log(entry.level, entry.text);
            if (kept) logs.push({ ...entry, message: kept.message, timestamp: kept.timestamp });
          }
          let href = url;
          try {
            href = new URL(url).href;
          } catch {}
          const cf = records.cf(href);
          if (cf) done.event.request.cf = cf;
        }
        // As workerd's TraceLog: message, level, timestamp.
        deliver({ ...done, logs: logs.map(({ message, level, timestamp }) => ({ message, level, timestamp })) });
      }, LATE_LOG_MS).unref();
    };
    try {
      const response = await dispatch(worker, input);
      finish(response.status, undefined, cpuTimes.get(response));
      return response;
    } catch (error) {
      finish(undefined, error);
      throw error;
    }
  };
  return { dispatch: wrapped, log };
}

module.exports = { tailed, outcomeOf, recordsOf, framesOf, consumerTarget, LATE_LOG_MS };
