// Queues: producer send()/sendBatch() with every content type and production's limits, batching
// by size and by timeout, ack/retry/ackAll/retryAll, attempts, maxRetries and the dead-letter
// queue, throwing consumers, delays, consumers in the same or another worker,
// dispatch(worker, { type: "queue" }) and the on-disk backlog across dispose/recreate.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { dispatch, queue } from "../index.js";
import { useWorker } from "./helpers.mjs";

/** A worker whose fetch() runs `body` with `env`, and whose queue() handler is `consumer`. */
function script(body, consumer = "batch.ackAll();") {
  return `export default {
    async fetch(request, env, ctx) {
      try { return Response.json(await (async () => { ${body} })() ?? null); }
      catch (e) { return Response.json({ error: e.name + ": " + e.message }); }
    },
    async queue(batch, env, ctx) { ${consumer} },
  }`;
}

/** Log lines of kind "batch" a consumer wrote with record(batch). */
const RECORD = `console.log(JSON.stringify({ queue: batch.queue, messages: batch.messages.map((m) => ({ id: m.id, body: m.body, attempts: m.attempts, time: m.timestamp.getTime() })) }));`;

function recorder() {
  const batches = [];
  const waiting = [];
  const onLog = (level, message) => {
    if (level !== "log" || !message.startsWith("{")) return;
    batches.push({ at: Date.now(), ...JSON.parse(message) });
    for (const w of waiting.filter((w) => batches.length >= w.count)) waiting.splice(waiting.indexOf(w), 1), w.resolve();
  };
  /** Resolves once `count` batches were recorded. */
  const until = (count) => (batches.length >= count ? Promise.resolve() : new Promise((resolve) => waiting.push({ count, resolve })));
  return { batches, onLog, until };
}

async function call(worker) {
  return (await dispatch(worker, "http://localhost/")).json();
}

test("send() and sendBatch() deliver every content type to the same worker's queue()", async (t) => {
  const q = queue({ maxBatchTimeout: 60 });
  const { batches, onLog } = recorder();
  const worker = await useWorker(t, {
    onLog,
    bindings: { JOBS: q },
    script: script(
      `await env.JOBS.send("plain", { contentType: "text" });
       await env.JOBS.send(new Uint8Array([1, 2, 3]), { contentType: "bytes" });
       await env.JOBS.send({ a: [1, 2] }, { contentType: "json" });
       await env.JOBS.send(new Map([["k", new Date(5)]]), { contentType: "v8" });
       const sent = await env.JOBS.sendBatch([{ body: "default is json" }, { body: 7n, contentType: "v8" }]);
       return { backlog: sent.metadata.metrics.backlogCount, oldest: sent.metadata.metrics.oldestMessageTimestamp instanceof Date };`,
      `console.log(JSON.stringify({ queue: batch.queue, messages: batch.messages.map((m) => ({
         type: m.body instanceof Map ? "Map" : m.body instanceof Uint8Array ? "Uint8Array" : typeof m.body,
         value: m.body instanceof Map ? [...m.body].map(([k, v]) => [k, v.getTime()]) : m.body instanceof Uint8Array ? [...m.body] : typeof m.body === "bigint" ? String(m.body) : m.body,
         idLength: m.id.length, attempts: m.attempts })) }));`,
    ),
  });
  assert.deepEqual(await call(worker), { backlog: 6, oldest: true });
  await q.flush();
  assert.equal(batches.length, 1);
  assert.equal(batches[0].queue, "JOBS");
  assert.deepEqual(
    batches[0].messages.map((m) => [m.type, m.value, m.idLength, m.attempts]),
    [
      ["string", "plain", 32, 1],
      ["Uint8Array", [1, 2, 3], 32, 1],
      ["object", { a: [1, 2] }, 32, 1],
      ["Map", [["k", 5]], 32, 1],
      ["string", "default is json", 32, 1],
      ["bigint", "7", 32, 1],
    ],
  );
});

test("without a content type, bodies are JSON from queues_json_messages (2024-03-18) on, V8 clones before", async (t) => {
  const q = queue({ maxBatchTimeout: 60 });
  const { batches, onLog } = recorder();
  const consumer = `console.log(JSON.stringify({ messages: batch.messages.map((m) => ({ body: m.body instanceof Map ? "Map" : m.body })) }));`;
  const old = await useWorker(t, { onLog, bindings: { Q: q }, compatibilityDate: "2024-01-01", script: script(`await env.Q.send(new Map([[1, 2]]));`, consumer) });
  await call(old);
  await q.flush();
  const current = await useWorker(t, { onLog: () => {}, bindings: { Q: q }, script: script(`await env.Q.send(new Map([[1, 2]]));`) });
  await call(current);
  await q.flush();
  // Both deliveries ran in `old` (the queue's first worker, its consumer).
  assert.deepEqual(batches.map((b) => b.messages[0].body), ["Map", {}]);
});

test("send() resolves to the backlog's metrics: count, bytes and the oldest message's time", async (t) => {
  const q = queue({ maxBatchTimeout: 60 });
  const worker = await useWorker(t, {
    bindings: { Q: q },
    script: script(`
      const body = await request.text();
      const { metadata } = await env.Q.send(body, { contentType: "text" });
      const m = metadata.metrics;
      const again = await env.Q.metrics();
      if (again.backlogCount !== m.backlogCount || again.backlogBytes !== m.backlogBytes || again.oldestMessageTimestamp.getTime() !== m.oldestMessageTimestamp.getTime()) throw new Error("metrics() disagrees");
      return { count: m.backlogCount, bytes: m.backlogBytes, oldest: m.oldestMessageTimestamp?.getTime() ?? null };`),
  });
  const send = async (body) => (await dispatch(worker, { url: "http://localhost/", method: "POST", body })).json();
  const before = Date.now();
  const first = await send("abc");
  assert.deepEqual([first.count, first.bytes], [1, 3]);
  assert.ok(first.oldest >= before && first.oldest <= Date.now());
  assert.deepEqual(await send("de"), { count: 2, bytes: 5, oldest: first.oldest });
  await q.flush();
  const after = await send("f");
  assert.deepEqual([after.count, after.bytes], [1, 1]);
  assert.ok(after.oldest >= first.oldest);

  // batch.metadata in the consumer: the backlog beside the batch.
  const { batches, onLog } = recorder();
  const q2 = queue({ maxBatchSize: 2, maxBatchTimeout: 60 });
  const other = await useWorker(t, {
    onLog,
    bindings: { Q: q2 },
    script: script(
      `await env.Q.sendBatch([{ body: "aa", contentType: "text" }, { body: "b", contentType: "text" }, { body: "c", contentType: "text" }]);`,
      `console.log(JSON.stringify({ messages: [], metrics: batch.metadata.metrics, oldestIsDate: batch.metadata.metrics.oldestMessageTimestamp instanceof Date }));`,
    ),
  });
  await call(other);
  await q2.flush();
  assert.deepEqual(batches.map((b) => [b.metrics.backlogCount, b.metrics.backlogBytes, b.oldestIsDate]), [[1, 1, true], [0, 0, true]]);
});

test("producer errors: undefined bodies, content types, sizes, batch limits and delays", async (t) => {
  const worker = await useWorker(t, {
    bindings: { Q: queue({ maxBatchTimeout: 60 }) },
    script: script(`
      const errors = [];
      const attempt = async (f) => { try { await f(); errors.push("ok"); } catch (e) { errors.push(e.name + ": " + e.message); } };
      await attempt(() => env.Q.send(undefined));
      await attempt(() => env.Q.send("x", { contentType: "xml" }));
      await attempt(() => env.Q.send(5, { contentType: "text" }));
      await attempt(() => env.Q.send("x", { contentType: "bytes" }));
      await attempt(() => env.Q.send(() => 1, { contentType: "v8" }));
      await attempt(() => env.Q.send("a".repeat(128001), { contentType: "text" }));
      await attempt(() => env.Q.send("a".repeat(128000), { contentType: "text" }));
      await attempt(() => env.Q.sendBatch([]));
      await attempt(() => env.Q.sendBatch(Array.from({ length: 101 }, () => ({ body: 1 }))));
      await attempt(() => env.Q.sendBatch([{ body: "a".repeat(100000), contentType: "text" }, { body: "b".repeat(100000), contentType: "text" }, { body: "c".repeat(100000), contentType: "text" }]));
      await attempt(() => env.Q.send(1, { delaySeconds: -1 }));
      await attempt(() => env.Q.send(1, { delaySeconds: 1.5 }));
      await attempt(() => env.Q.sendBatch([{ body: 1 }], { delaySeconds: 86401 }));
      await attempt(() => env.Q.sendBatch([{ body: 1, contentType: "TEXT" }]));
      return errors;`),
  });
  assert.deepEqual(await call(worker), [
    "TypeError: Message body cannot be undefined",
    "TypeError: Unsupported queue message content type: xml",
    'TypeError: Content Type "text" requires a value of type string, but received: number',
    'TypeError: Content Type "bytes" requires a value of type ArrayBufferView, but received: string',
    "DataCloneError: () => 1 could not be cloned.",
    "Error: Queue send failed: message length of 128001 bytes exceeds limit of 128000",
    "ok",
    "TypeError: sendBatch() requires at least one message",
    "Error: Queue sendBatch failed: batch message count of 101 exceeds limit of 100",
    "Error: Queue sendBatch failed: batch size of 300000 bytes exceeds limit of 256000",
    "RangeError: Queue send: delaySeconds must be an integer from 0 to 86400 (24 hours), got -1.",
    "RangeError: Queue send: delaySeconds must be an integer from 0 to 86400 (24 hours), got 1.5.",
    "RangeError: Queue sendBatch: delaySeconds must be an integer from 0 to 86400 (24 hours), got 86401.",
    'TypeError: Content Type "text" requires a value of type string, but received: number',
  ]);
});

test("queue() options are validated with TypeErrors naming the option", () => {
  assert.throws(() => queue({ maxBatchSize: 0 }), { name: "TypeError", message: "queue(): options.maxBatchSize must be an integer from 1 to 100, got 0" });
  assert.throws(() => queue({ maxBatchSize: 101 }), /options\.maxBatchSize must be an integer from 1 to 100, got 101/);
  assert.throws(() => queue({ maxBatchTimeout: 61 }), /options\.maxBatchTimeout must be a number of seconds from 0 to 60, got 61/);
  assert.throws(() => queue({ maxRetries: -1 }), /options\.maxRetries must be an integer from 0 to 100/);
  assert.throws(() => queue({ retryDelay: "5" }), /options\.retryDelay must be an integer number of seconds/);
  assert.throws(() => queue({ deadLetterQueue: {} }), /options\.deadLetterQueue must be another queue\(\) binding/);
  assert.throws(() => queue({ consumer: {} }), /options\.consumer must be a worker returned by createWorker\(\)/);
  assert.throws(() => queue({ batchSize: 3 }), /unknown option "batchSize"/);
  assert.throws(() => queue({ dir: "" }), /options\.dir must be a folder path/);
  assert.throws(() => queue({ send: () => {}, maxRetries: 1 }), /options\.maxRetries has no effect with options\.send/);
  assert.throws(() => queue("x"), /options must be an object/);
});

test("batches follow maxBatchSize, and a partial batch goes out after maxBatchTimeout", async (t) => {
  const bySize = queue({ maxBatchSize: 3, maxBatchTimeout: 60 });
  const { batches, onLog, until } = recorder();
  const worker = await useWorker(t, { onLog, bindings: { Q: bySize }, script: script(`await env.Q.sendBatch([1, 2, 3, 4, 5, 6, 7].map((body) => ({ body })));`, RECORD) });
  await call(worker);
  // Two full batches go at once; the seventh message waits for the timeout, or for flush().
  await until(2);
  assert.equal(bySize.stats.delivered, 6);
  await bySize.flush();
  assert.deepEqual(batches.map((b) => b.messages.map((m) => m.body)), [[1, 2, 3], [4, 5, 6], [7]]);

  const byTime = queue({ maxBatchSize: 100, maxBatchTimeout: 0.3 });
  const timed = recorder();
  const other = await useWorker(t, { onLog: timed.onLog, bindings: { Q: byTime }, script: script(`await env.Q.send("a"); await env.Q.send("b");`, RECORD) });
  const sentAt = Date.now();
  await call(other);
  await byTime.idle();
  assert.equal(timed.batches.length, 1);
  assert.deepEqual(timed.batches[0].messages.map((m) => m.body), ["a", "b"]);
  assert.ok(timed.batches[0].at - sentAt >= 280, `delivered after ${timed.batches[0].at - sentAt} ms`);
});

/** CPU clock ticks (10 ms) used so far by this process's worker threads (named wb-…). */
function workerThreadTicks() {
  let ticks = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (!readFileSync(`/proc/self/task/${tid}/comm`, "utf8").startsWith("wb-")) continue;
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return ticks;
}

test("an idle queue costs no CPU: neither its consumer's threads nor Node's side poll once the backlog is drained", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-queue-idle-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const queues = [queue({ maxBatchTimeout: 0.05 }), queue({ maxBatchTimeout: 0.05, dir })];
  for (const q of queues) {
    const worker = await useWorker(t, { bindings: { Q: q }, script: script(`await env.Q.sendBatch([1, 2, 3].map((body) => ({ body }))); await env.Q.send("x", { delaySeconds: 0 });`) });
    await call(worker);
    await q.idle();
    assert.equal(q.stats.acked, 4);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  const threadsBefore = workerThreadTicks();
  const nodeBefore = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const threads = workerThreadTicks() - threadsBefore;
  const node = process.cpuUsage(nodeBefore);
  // One 10 ms tick of slack for the threads; a polling loop, in Node or in the workers, would
  // burn far more over a second. Node's own figure includes this test's timer and /proc reads.
  assert.ok(threads <= 1, `consumer threads used ${threads} ticks while the queues were idle`);
  assert.ok(node.user + node.system < 50_000, `Node used ${(node.user + node.system) / 1000} ms of CPU while the queues were idle`);
});

test("ack(), retry(), ackAll() and retryAll(): attempts count up and unacked messages come back", async (t) => {
  const q = queue({ maxBatchTimeout: 0, maxRetries: 5 });
  const { batches, onLog } = recorder();
  const worker = await useWorker(t, {
    onLog,
    bindings: { Q: q },
    script: script(
      `await env.Q.sendBatch([{ body: "ack" }, { body: "retry-twice" }, { body: "implicit" }]);`,
      `${RECORD}
       for (const m of batch.messages) {
         if (m.body === "ack") m.ack();
         if (m.body === "retry-twice" && m.attempts < 3) m.retry();
       }`,
    ),
  });
  await call(worker);
  await q.idle();
  assert.deepEqual(
    batches.map((b) => b.messages.map((m) => `${m.body}#${m.attempts}`)),
    [["ack#1", "retry-twice#1", "implicit#1"], ["retry-twice#2"], ["retry-twice#3"]],
  );
  assert.equal(new Set(batches.map((b) => b.messages.find((m) => m.body === "retry-twice").id)).size, 1);

  const all = queue({ maxBatchTimeout: 0, maxRetries: 5 });
  const seen = recorder();
  const second = await useWorker(t, {
    onLog: seen.onLog,
    bindings: { Q: all },
    script: script(`await env.Q.sendBatch([{ body: 1 }, { body: 2 }]);`, `${RECORD}
      if (batch.messages[0].attempts === 1) { batch.messages[0].ack(); batch.retryAll(); } else batch.ackAll();`),
  });
  await call(second);
  await all.idle();
  // The message acked before retryAll() stays acked: a message's own call beats the batch's.
  assert.deepEqual(seen.batches.map((b) => b.messages.map((m) => `${m.body}#${m.attempts}`)), [["1#1", "2#1"], ["2#2"]]);
  assert.deepEqual(all.stats.acked, 2);
});

test("maxRetries: a message that keeps failing moves to the dead-letter queue, consumed by another worker", async (t) => {
  const dlq = queue({ maxBatchTimeout: 0 });
  const main = queue({ maxBatchTimeout: 0, maxRetries: 2, deadLetterQueue: dlq });
  const dead = recorder();
  await useWorker(t, { onLog: dead.onLog, bindings: { DLQ: dlq }, script: script("", RECORD) });
  const tries = recorder();
  const lines = [];
  const worker = await useWorker(t, {
    onLog: (level, message) => (tries.onLog(level, message), lines.push(`${level}: ${message}`)),
    bindings: { MAIN: main },
    script: script(`await env.MAIN.send({ job: 1 });`, `${RECORD} batch.retryAll();`),
  });
  await call(worker);
  await main.idle();
  await dlq.idle();
  assert.deepEqual(tries.batches.map((b) => b.messages[0].attempts), [1, 2, 3]);
  assert.equal(dead.batches.length, 1);
  assert.equal(dead.batches[0].queue, "DLQ");
  assert.deepEqual(dead.batches[0].messages[0].body, { job: 1 });
  assert.equal(dead.batches[0].messages[0].id, tries.batches[0].messages[0].id);
  assert.equal(dead.batches[0].messages[0].time, tries.batches[0].messages[0].time);
  assert.deepEqual(main.stats.deadLettered, 1);
  assert.ok(lines.some((l) => /warn: queue "MAIN" moved 1 message\(s\) to the dead-letter queue "DLQ" after 3 failed attempts/.test(l)), lines.join("\n"));
});

test("a consumer that throws is retried, except for messages it acked first; without a DLQ they are dropped", async (t) => {
  const q = queue({ maxBatchTimeout: 0, maxRetries: 1 });
  const { batches, onLog } = recorder();
  const lines = [];
  const worker = await useWorker(t, {
    onLog: (level, message) => (onLog(level, message), lines.push(`${level}: ${message}`)),
    bindings: { Q: q },
    script: script(`await env.Q.sendBatch([{ body: "safe" }, { body: "doomed" }]);`, `${RECORD}
      for (const m of batch.messages) if (m.body === "safe") m.ack();
      throw new Error("consumer broke");`),
  });
  await call(worker);
  await q.idle();
  assert.deepEqual(batches.map((b) => b.messages.map((m) => `${m.body}#${m.attempts}`)), [["safe#1", "doomed#1"], ["doomed#2"]]);
  assert.ok(lines.some((l) => l.startsWith('error: queue "Q": a batch of 2 failed: Error: consumer broke')), lines.join("\n"));
  assert.ok(lines.some((l) => /warn: queue "Q" dropped 1 message\(s\) after 2 failed attempts/.test(l)), lines.join("\n"));
  assert.deepEqual({ acked: q.stats.acked, dropped: q.stats.dropped, failedBatches: q.stats.failedBatches }, { acked: 1, dropped: 1, failedBatches: 2 });
});

test("delaySeconds on send() and on retry() hold a message back", async (t) => {
  const q = queue({ maxBatchTimeout: 0 });
  const { batches, onLog } = recorder();
  const worker = await useWorker(t, {
    onLog,
    bindings: { Q: q },
    script: script(`await env.Q.send("later", { delaySeconds: 1 }); await env.Q.send("now");`, `${RECORD}
      for (const m of batch.messages) if (m.body === "now" && m.attempts === 1) m.retry({ delaySeconds: 1 });`),
  });
  const sentAt = Date.now();
  await call(worker);
  await q.idle();
  const when = (body, attempts) => batches.find((b) => b.messages.some((m) => m.body === body && m.attempts === attempts)).at - sentAt;
  assert.ok(when("now", 1) < 900, `first delivery after ${when("now", 1)} ms`);
  assert.ok(when("later", 1) >= 950, `delayed delivery after ${when("later", 1)} ms`);
  assert.ok(when("now", 2) >= 950, `retry delivered after ${when("now", 2)} ms`);
});

test("a consumer in another worker: queue({ consumer })", async (t) => {
  const { batches, onLog } = recorder();
  const consumer = await useWorker(t, { onLog, script: `export default { async queue(batch) { ${RECORD} } }` });
  const q = queue({ consumer, name: "emails", maxBatchTimeout: 0 });
  const producer = await useWorker(t, { bindings: { OUT: q }, script: `export default { async fetch(request, env) { await env.OUT.send({ to: "a@b.c" }); return new Response("sent"); } }` });
  assert.equal(await (await dispatch(producer, "http://localhost/")).text(), "sent");
  await q.idle();
  assert.equal(batches.length, 1);
  assert.equal(batches[0].queue, "emails");
  assert.deepEqual(batches[0].messages[0].body, { to: "a@b.c" });

  // With the consumer gone, idle() says so instead of waiting forever.
  await consumer.dispose();
  await dispatch(producer, "http://localhost/");
  await assert.rejects(q.idle(), /queue "emails" has 1 message\(s\) waiting but no live consumer worker/);
});

test("a consumer disposed mid-batch loses nothing: the next worker with the binding gets the batch again", async (t) => {
  const q = queue({ maxBatchTimeout: 0 });
  let started;
  const began = new Promise((resolve) => (started = resolve));
  const first = await useWorker(t, {
    onLog: (level, message) => message === "started" && started(),
    bindings: { Q: q },
    script: script(`await env.Q.send("x");`, `console.log("started"); await new Promise((resolve) => setTimeout(resolve, 30000));`),
  });
  await call(first);
  await began;
  await first.dispose();
  const { batches, onLog } = recorder();
  await useWorker(t, { onLog, bindings: { Q: q }, script: script("", RECORD) });
  await q.idle();
  // The interrupted delivery does not count as an attempt.
  assert.deepEqual(batches.map((b) => b.messages.map((m) => `${m.body}#${m.attempts}`)), [["x#1"]]);
  assert.equal(q.stats.acked, 1);
});

test("queue events run in per-request isolation too", async (t) => {
  const worker = await useWorker(t, { isolation: "per-request", script: `let n = 0; export default { queue(batch) { n++; if (n === 1) batch.messages[0].retry(); } }` });
  const input = { type: "queue", queue: "q", messages: [{ id: "a", body: 1 }] };
  // A fresh global scope per event: the counter starts at 0 each time.
  assert.deepEqual((await dispatch(worker, input)).retryMessages, [{ msgId: "a" }]);
  assert.deepEqual((await dispatch(worker, input)).retryMessages, [{ msgId: "a" }]);
});

test("dispatch(worker, { type: 'queue' }) runs the handler and resolves to what it acked and retried", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async queue(batch, env, ctx) {
      const [a, b, c] = batch.messages;
      if (batch.queue !== "q" || !(a.timestamp instanceof Date) || !(a.body instanceof Map) || b.attempts !== 3) throw new Error("bad batch");
      a.ack();
      b.retry({ delaySeconds: 7 });
      b.ack(); // ignored: the first decision wins
      if (c.body === "boom") throw new TypeError("boom");
    } }`,
  });
  const messages = [{ id: "m1", body: new Map([["x", 1]]) }, { id: "m2", body: "two", attempts: 3 }, { id: "m3", body: "fine", contentType: "text" }];
  assert.deepEqual(await dispatch(worker, { type: "queue", queue: "q", messages }), {
    outcome: "ok",
    ackAll: false,
    retryBatch: { retry: false },
    explicitAcks: ["m1"],
    retryMessages: [{ msgId: "m2", delaySeconds: 7 }],
  });
  const failed = await dispatch(worker, { type: "queue", queue: "q", messages: [messages[0], messages[1], { id: "m3", body: "boom" }] });
  assert.equal(failed.outcome, "exception");
  assert.equal(failed.error.name, "TypeError");
  assert.equal(failed.error.message, "boom");
  assert.deepEqual(failed.explicitAcks, ["m1"]);

  const sw = await useWorker(t, { script: `addEventListener("queue", (event) => { event.waitUntil(Promise.resolve()); if (event.queue === "q") event.retryAll({ delaySeconds: 2 }); });` });
  assert.deepEqual(await dispatch(sw, { type: "queue", queue: "q", messages: [{ body: 1 }] }), {
    outcome: "ok", ackAll: false, retryBatch: { retry: true, delaySeconds: 2 }, explicitAcks: [], retryMessages: [],
  });

  const noHandler = await useWorker(t, { script: `export default { fetch() { return new Response("x"); } }` });
  await assert.rejects(dispatch(noHandler, { type: "queue", queue: "q", messages: [{ body: 1 }] }), { name: "TypeError", message: /The worker has no queue\(\) handler/ });
  await assert.rejects(dispatch(worker, { type: "queue", queue: "q", messages: [] }), /event\.messages must be a non-empty array/);
  await assert.rejects(dispatch(worker, { type: "queue", queue: "q", messages: [{ body: () => 1 }] }), /event\.messages\[0\]: the body cannot be structured-cloned/);
});

test("queue({ dir }) keeps unacknowledged messages on disk across dispose and recreate", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-queue-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const producerScript = script(`await env.Q.sendBatch([{ body: "one" }, { body: "two" }, { body: { three: 3 } }]); return "sent";`, `${RECORD}
    for (const m of batch.messages) if (m.body === "two" && m.attempts === 1) m.retry(); else m.ack();`);

  // First life: messages are sent but the (60 s) batch timeout has not passed when it ends.
  const first = queue({ dir, name: "jobs", maxBatchTimeout: 60 });
  const worker = await useWorker(t, { bindings: { Q: first }, script: producerScript });
  assert.equal(await call(worker), "sent");
  assert.equal(first.backlog, 3);
  await worker.dispose();

  // Second life: the backlog is delivered; "two" is retried once, then acked.
  const second = queue({ dir, name: "jobs", maxBatchTimeout: 60 });
  assert.equal(second.backlog, 3);
  const { batches, onLog } = recorder();
  await useWorker(t, { onLog, bindings: { Q: second }, script: producerScript });
  await second.flush();
  assert.deepEqual(batches.map((b) => b.messages.map((m) => `${JSON.stringify(m.body)}#${m.attempts}`)), [['"one"#1', '"two"#1', '{"three":3}#1'], ['"two"#2']]);

  // Third life: nothing acknowledged comes back.
  const third = queue({ dir, name: "jobs" });
  assert.equal(third.backlog, 0);
  // Another name in the same folder is another queue.
  assert.equal(queue({ dir, name: "other" }).backlog, 0);
});

test("a retried message keeps its attempt count on disk", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "wb-queue-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const first = queue({ dir, name: "r", maxBatchTimeout: 0, retryDelay: 1 });
  const worker = await useWorker(t, { bindings: { Q: first }, script: script(`await env.Q.send("x");`, "batch.retryAll();") });
  const sentAt = Date.now();
  await call(worker);
  // flush() resolves once the first delivery is settled; the retry waits out its delay.
  await first.flush();
  assert.deepEqual([first.stats.delivered, first.stats.retried, first.backlog], [1, 1, 1]);
  await worker.dispose();
  const second = queue({ dir, name: "r", maxBatchTimeout: 0 });
  assert.equal(second.backlog, 1);
  const { batches, onLog } = recorder();
  await useWorker(t, { onLog, bindings: { Q: second }, script: script("", RECORD) });
  await second.idle();
  assert.deepEqual(batches.map((b) => [b.messages[0].body, b.messages[0].attempts]), [["x", 2]]);
  assert.ok(batches[0].at - sentAt >= 950, `the retry delay held across the restart (${batches[0].at - sentAt} ms)`);
});

test("queue({ send }) hands every sent message to your function", async (t) => {
  const received = [];
  const q = queue({ send: (messages) => received.push(...messages) });
  const worker = await useWorker(t, { bindings: { Q: q }, script: script(`await env.Q.send("t", { contentType: "text" }); await env.Q.sendBatch([{ body: { j: 1 } }, { body: { set: new Set([1]), bytes: new Uint8Array([9]) }, contentType: "v8", delaySeconds: 4 }]);`) });
  await call(worker);
  assert.deepEqual(received.map((m) => [m.contentType, m.body, m.delaySeconds]), [["text", "t", 0], ["json", { j: 1 }, 0], ["v8", { set: new Set([1]), bytes: new Uint8Array([9]) }, 4]]);
  assert.ok(received.every((m) => /^[0-9a-f]{32}$/.test(m.id) && m.timestamp instanceof Date));
});
