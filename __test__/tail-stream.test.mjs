// Streaming tail workers (createWorker's streamingTails, lib/tail/stream.js, src/js/89_tail.js):
// each fetch and JS RPC invocation of the traced worker reaches the tail's tailStream() with its
// onset event, and the handler it returned gets the invocation's later events in order. The
// expected events are those workerd printed for the same two workers (a `workerd test` probe with
// `streamingTails = ["tail"]`): per invocation onset → log… → return → outcome, or onset → log…
// → exception → outcome for a fetch that threw; a JS RPC call's onset names its entrypoint, then
// an attributes event carries jsrpc.method (a method that threw: the outcome follows alone).
// Spans: those of KV and Cache API operations (service-backed), with workerd's tags. Also: a failing tail never reaches the traced worker, and
// workerd's warnings (a FormData body with a custom Content-Type, a null-body status given "")
// are warn-level log events.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { createWorker, dispatch, kv, service } from "workerbox";

import { until as poll, tempRoot, writeWorker } from "./dev-processes.mjs";
import { scaled } from "./child-node.mjs";

const until = (what, check) => poll(what, check, 10_000, 20);

const PRODUCER = `import { WorkerEntrypoint } from "cloudflare:workers";
export class Svc extends WorkerEntrypoint {
  async ping(x) { console.log("in ping", x); return "pong"; }
  async boom() { throw new TypeError("rpc broke"); }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/run") {
      const r = await env.SELF.fetch("http://example.com/path?q=1", { headers: { "x-a": "b" } });
      await r.text();
      try { await env.SELF.fetch("http://example.com/throw"); } catch {}
      try { await env.RPC.boom(); } catch {}
      return new Response(await env.RPC.ping(5));
    }
    console.log("hello", { a: 1 }, [2]);
    console.warn("careful");
    if (url.pathname === "/throw") throw new RangeError("bad thing");
    return new Response("ok", { status: 201 });
  },
};`;

const TAIL = `const events = [];
export default {
  tailStream(event, env, ctx) {
    events.push(event);
    return (ev) => { events.push(ev); };
  },
  fetch() {
    return new Response(JSON.stringify(events, (k, v) => (typeof v === "bigint" ? v + "n" : v)));
  },
};`;

/** A producer tailed by a tail worker, with SELF and RPC (entrypoint Svc) bound to itself. */
async function traced(t, extra = {}) {
  const tail = await createWorker({ script: TAIL, filename: "tail.js", compatibilityFlags: ["nodejs_compat"] });
  t.after(() => tail.dispose());
  const self = service({ fetch: () => new Response("not yet") });
  const rpc = service({ fetch: () => new Response("not yet") });
  const producer = await createWorker({ script: PRODUCER, filename: "main.js", compatibilityFlags: ["nodejs_compat"], bindings: { SELF: self, RPC: rpc }, streamingTails: [tail], onLog: () => {}, ...extra });
  t.after(() => producer.dispose());
  self.handler = producer;
  rpc.handler = producer;
  rpc.entrypoint = "Svc";
  return { tail, producer };
}

const eventsOf = async (tail) => JSON.parse(await (await dispatch(tail, "http://tail/")).text());


/**
 * The spans in a streaming tail's events, as the instrumentation tail of workerd's tests builds
 * them: spanOpen's name, the attributes set on the span's own id, and whether it closed.
 */
function spansOf(events) {
  const spans = new Map();
  for (const e of events) {
    if (e.event.type === "spanOpen") spans.set(e.event.spanId, { name: e.event.name });
    else if (e.event.type === "attributes") for (const { name, value } of e.event.info) spans.get(e.spanContext.spanId)[name] = value;
    else if (e.event.type === "spanClose") spans.get(e.spanContext.spanId).closed = true;
  }
  return spans;
}
test("streaming tails: fetch and JS RPC invocations' events as workerd gives them", { timeout: scaled(60_000) }, async (t) => {
  const { tail, producer } = await traced(t);
  assert.equal(await (await dispatch(producer, "http://example.com/run")).text(), "pong");
  let events = [];
  await until("the three invocations' outcomes", async () => {
    events = await eventsOf(tail);
    return events.filter((e) => e.event.type === "outcome").length >= 5;
  });
  const byInvocation = new Map();
  for (const e of events) {
    if (!byInvocation.has(e.invocationId)) byInvocation.set(e.invocationId, []);
    byInvocation.get(e.invocationId).push(e);
  }
  const find = (check) => [...byInvocation.values()].find((list) => check(list[0].event));
  const path = find((onset) => onset.info?.url === "http://example.com/path?q=1");
  const threw = find((onset) => onset.info?.url === "http://example.com/throw");
  const rpcCalls = [...byInvocation.values()].filter((list) => list[0].event.info?.type === "jsrpc");
  const ping = rpcCalls.find((list) => list[1]?.event.info?.[0]?.value === "ping");
  const boom = rpcCalls.find((list) => list[1]?.event.info?.[0]?.value === "boom");
  assert.ok(path && threw && ping && boom, JSON.stringify(events, null, 1));
  for (const list of [path, threw, ping, boom]) {
    // One trace and invocation per stream; sequence 0, 1, 2…; the onset's spanContext has the
    // trace alone, the others name the onset's span; timestamps are Dates (ISO text here).
    assert.deepEqual(list.map((e) => e.sequence), list.map((_, i) => i));
    const [onset, ...rest] = list;
    assert.match(onset.spanContext.traceId, /^[0-9a-f]{32}$/);
    assert.match(onset.invocationId, /^[0-9a-f]{32}$/);
    assert.match(onset.event.spanId, /^[0-9a-f]{16}$/);
    assert.deepEqual(Object.keys(onset.spanContext), ["traceId"]);
    for (const e of rest) assert.deepEqual(e.spanContext, { traceId: onset.spanContext.traceId, spanId: onset.event.spanId });
    for (const e of list) assert.ok(!Number.isNaN(Date.parse(e.timestamp)));
    assert.deepEqual(Object.keys(list.at(-1).event), ["type", "outcome", "cpuTime", "wallTime"]);
  }
  // workerd: {"type":"onset","executionModel":"stateless","spanId":…,"scriptTags":[],"info":{"type":"fetch","method":"GET","url":…,"headers":[{"name":"x-a","value":"b"}]}}
  assert.deepEqual({ ...path[0].event, spanId: "s" }, { type: "onset", executionModel: "stateless", spanId: "s", scriptTags: [], info: { type: "fetch", method: "GET", url: "http://example.com/path?q=1", headers: [{ name: "x-a", value: "b" }] } });
  assert.deepEqual(
    path.slice(1).map((e) => e.event),
    [
      { type: "log", level: "log", message: ["hello", { a: 1 }, [2]] },
      { type: "log", level: "warn", message: ["careful"] },
      { type: "return", info: { type: "fetch", statusCode: 201 } },
      { ...path.at(-1).event, type: "outcome", outcome: "ok" },
    ],
  );
  assert.deepEqual(
    threw.slice(1).map((e) => e.event),
    [
      { type: "log", level: "log", message: ["hello", { a: 1 }, [2]] },
      { type: "log", level: "warn", message: ["careful"] },
      { type: "exception", name: "RangeError", message: "bad thing", stack: threw[3].event.stack },
      { ...threw.at(-1).event, type: "outcome", outcome: "exception" },
    ],
  );
  // The stack is the frames alone, as workerd's ("    at Object.fetch (worker:9:59)").
  assert.match(threw[3].event.stack, /^\s+at /);
  // workerd: onset {…,"entrypoint":"Svc","scriptTags":[],"info":{"type":"jsrpc"}}, attributes [jsrpc.method], log, return, outcome.
  assert.deepEqual({ ...ping[0].event, spanId: "s" }, { type: "onset", executionModel: "stateless", spanId: "s", entrypoint: "Svc", scriptTags: [], info: { type: "jsrpc" } });
  assert.deepEqual(
    ping.slice(1).map((e) => e.event),
    [
      { type: "attributes", info: [{ name: "jsrpc.method", value: "ping" }] },
      { type: "log", level: "log", message: ["in ping", 5] },
      { type: "return" },
      { ...ping.at(-1).event, type: "outcome", outcome: "ok" },
    ],
  );
  // A method that threw: workerd gives no exception or return event, only the outcome.
  assert.deepEqual(
    boom.slice(1).map((e) => e.event),
    [
      { type: "attributes", info: [{ name: "jsrpc.method", value: "boom" }] },
      { ...boom.at(-1).event, type: "outcome", outcome: "exception" },
    ],
  );
});

test("streaming tails: a handler object gets its event type's method; a failing tail leaves the worker alone", { timeout: scaled(60_000) }, async (t) => {
  const tail = await createWorker({
    script: `let seen = [];
export default {
  tailStream(event) {
    seen.push("onset");
    return {
      log(ev) { seen.push("log:" + ev.event.message[0]); throw new Error("tail handler broke"); },
      outcome(ev) { seen.push("outcome:" + ev.event.outcome); },
    };
  },
  fetch() { return Response.json(seen); },
};`,
  });
  t.after(() => tail.dispose());
  const lines = [];
  const received = [];
  const producer = await createWorker({
    script: `export default { fetch() { console.log("one"); return new Response("fine"); } };`,
    streamingTails: [tail, (onset) => (received.push(onset.event.type), (ev) => received.push(ev.event.type))],
    onLog: (level, message) => lines.push([level, message]),
  });
  t.after(() => producer.dispose());
  const response = await dispatch(producer, "http://x/");
  assert.equal(response.status, 200);
  assert.equal(await response.text(), "fine");
  // The Node function consumer gets every event; the failing worker's error goes to onLog.
  await until("the Node consumer's outcome", () => received.includes("outcome"));
  assert.deepEqual(received, ["onset", "log", "return", "outcome"]);
  await until("the tail's failure reported", () => lines.some(([level, text]) => level === "error" && text.includes("tail handler broke")));
  assert.ok(lines.some(([, text]) => text.startsWith("workerbox: a streaming tail worker failed")));
  // After its handler threw, that tail gets no more of the invocation's events.
  assert.deepEqual(await (await dispatch(tail, "http://tail/")).json(), ["onset", "log:one"]);
});

test("streaming tails: workerd's warnings are warn-level log events (only when tailed)", { timeout: scaled(60_000) }, async (t) => {
  const SCRIPT = `export default {
  fetch() {
    const form = new FormData();
    form.append("key", "value");
    new Request("http://example.com", { method: "POST", body: form, headers: { "Content-Type": "multipart/form-data" } });
    new Response("", { status: 204 });
    return new Response("ok");
  },
};`;
  const events = [];
  const lines = [];
  const producer = await createWorker({ script: SCRIPT, streamingTails: [() => (ev) => events.push(ev.event)] });
  t.after(() => producer.dispose());
  const plain = await createWorker({ script: SCRIPT, onLog: (level, message) => lines.push([level, message]) });
  t.after(() => plain.dispose());
  assert.equal(await (await dispatch(producer, "http://x/")).text(), "ok");
  await until("the outcome", () => events.some((e) => e.type === "outcome"));
  const warnings = events.filter((e) => e.type === "log" && e.level === "warn").map((e) => e.message[0]);
  assert.equal(warnings.length, 2, JSON.stringify(events));
  assert.ok(warnings[0].startsWith("A FormData body was provided with a custom Content-Type header"));
  assert.ok(warnings[1].startsWith("Constructing a Response with a null body status (204) and a non-null, zero-length body."));
  // Nobody listening: no warning lines, as workerd writes them only for a tracer or inspector.
  assert.equal(await (await dispatch(plain, "http://x/")).text(), "ok");
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(lines, []);
});

test("streaming tails: a JS RPC call returning a stream ends (outcome) when the caller has read it, after its return", { timeout: scaled(60_000) }, async (t) => {
  const events = [];
  const rpc = service({ fetch: () => new Response("not yet") });
  const producer = await createWorker({
    script: `import { WorkerEntrypoint } from "cloudflare:workers";
export class Streamer extends WorkerEntrypoint {
  async slow() {
    let sent = 0;
    return new ReadableStream({
      async pull(controller) {
        if (sent === 3) return controller.close();
        await scheduler.wait(100);
        controller.enqueue(new TextEncoder().encode("chunk" + sent++));
      },
    });
  }
}
export default {
  async fetch(request, env) {
    return new Response(await new Response(await env.RPC.slow()).text());
  },
};`,
    bindings: { RPC: rpc },
    streamingTails: [(onset) => onset.event.info.type === "jsrpc" && ((ev) => events.push(ev))],
    onLog: () => {},
  });
  t.after(() => producer.dispose());
  rpc.handler = producer;
  rpc.entrypoint = "Streamer";
  assert.equal(await (await dispatch(producer, "http://x/")).text(), "chunk0chunk1chunk2");
  await until("the JS RPC call's outcome", () => events.some((e) => e.event.type === "outcome"));
  const returned = events.find((e) => e.event.type === "return");
  const outcome = events.find((e) => e.event.type === "outcome");
  assert.deepEqual(events.map((e) => e.event.type), ["attributes", "return", "outcome"]);
  // The stream took ~300 ms to read after the method returned (workerd's jsrpc-timing-test).
  assert.ok(outcome.timestamp - returned.timestamp >= 200, `return ${returned.timestamp.toISOString()}, outcome ${outcome.timestamp.toISOString()}`);
  assert.ok(outcome.event.wallTime >= 200);
});

test("streaming tails: a scheduled event, as workerd gives it (a handler that threw: its exception, outcome ok)", { timeout: scaled(60_000) }, async (t) => {
  const events = [];
  const producer = await createWorker({
    script: `export default {
  async scheduled(event) {
    console.log("cron", event.cron);
    if (event.cron === "throw") throw new RangeError("sched broke");
  },
};`,
    streamingTails: [(onset) => (events.push(onset), (ev) => events.push(ev))],
    onLog: () => {},
  });
  t.after(() => producer.dispose());
  assert.equal((await dispatch(producer, { type: "scheduled", cron: "* * * * *", scheduledTime: 5000 })).outcome, "ok");
  await until("the outcome", () => events.some((e) => e.event.type === "outcome"));
  // workerd: onset info {"type":"scheduled","scheduledTime":"1970-01-01T00:00:05.000Z","cron":"* * * * *"}, log, return, outcome ok.
  assert.deepEqual({ ...events[0].event, spanId: "s" }, { type: "onset", executionModel: "stateless", spanId: "s", scriptTags: [], info: { type: "scheduled", scheduledTime: new Date(5000), cron: "* * * * *" } });
  assert.deepEqual(
    events.slice(1).map((e) => e.event),
    [{ type: "log", level: "log", message: ["cron", "* * * * *"] }, { type: "return" }, { ...events.at(-1).event, type: "outcome", outcome: "ok" }],
  );
  events.length = 0;
  assert.equal((await dispatch(producer, { type: "scheduled", cron: "throw" })).outcome, "exception");
  await until("the outcome", () => events.some((e) => e.event.type === "outcome"));
  assert.deepEqual(
    events.slice(1).map((e) => e.event),
    [
      { type: "log", level: "log", message: ["cron", "throw"] },
      { type: "exception", name: "RangeError", message: "sched broke", stack: events[2].event.stack },
      { ...events.at(-1).event, type: "outcome", outcome: "ok" },
    ],
  );
  assert.match(events[2].event.stack, /^\s+at /);
});

test("streaming tails: a service-backed KV namespace's operations are spans with workerd's tags", { timeout: scaled(60_000) }, async (t) => {
  // The KV service: workerd's wire protocol (GET/PUT/DELETE /<key>, POST /bulk/get, GET /?prefix=).
  const KV = kv({
    service: async (request) => {
      const url = new URL(request.url);
      const head = (extra = {}) => ({ headers: { "cf-cache-status": "HIT", ...extra } });
      if (request.method === "GET" && url.pathname === "/k1") return new Response("value", head({ "content-length": "5", "cf-kv-metadata": '{"m":1}' }));
      if (request.method === "GET" && url.pathname === "/missing") return new Response(null, { status: 404 });
      if (request.method === "POST" && url.pathname === "/bulk/get") return new Response('{"a":1,"b":2}');
      if (request.method === "GET" && url.pathname === "/") return new Response('{"keys":[{"name":"x1"}],"list_complete":true}', head({ "content-length": "45" }));
      return new Response(null, { status: 200 });
    },
  });
  const events = [];
  const producer = await createWorker({
    script: `export default {
  async fetch(request, env) {
    await env.KV.get("k1");
    await env.KV.get("missing", { type: "json", cacheTtl: 60 });
    await env.KV.get(["a", "b"], "json");
    await env.KV.put("p", "four", { expirationTtl: 60 });
    await env.KV.put("q", new Uint8Array(3), { metadata: { a: 1 } });
    await env.KV.list({ prefix: "x" });
    await env.KV.delete("d");
    return new Response("done");
  },
};`,
    bindings: { KV },
    streamingTails: [() => (ev) => events.push(ev)],
    onLog: () => {},
  });
  t.after(() => producer.dispose());
  assert.equal(await (await dispatch(producer, "http://x/")).text(), "done");
  await until("the outcome", () => events.some((e) => e.event.type === "outcome"));
  // Spans as the instrumentation tail of workerd's kv-test builds them: spanOpen's name, the
  // attributes on the span's own id, and its close.
  const spans = spansOf(events);
  const base = (name, op) => ({ name, "db.system.name": "cloudflare-kv", "db.operation.name": op, "cloudflare.binding.name": "KV", "cloudflare.binding.type": "KV" });
  assert.deepEqual(
    [...spans.values()],
    [
      { ...base("kv_get", "get"), "cloudflare.kv.query.keys": "k1", "cloudflare.kv.query.keys.count": 1n, "cloudflare.kv.response.cache_status": "HIT", "cloudflare.kv.response.metadata": true, "cloudflare.kv.response.size": 5n, "cloudflare.kv.response.returned_rows": 1n, closed: true },
      { ...base("kv_get", "get"), "cloudflare.kv.query.keys": "missing", "cloudflare.kv.query.keys.count": 1n, "cloudflare.kv.query.type": "json", "cloudflare.kv.query.cache_ttl": 60n, closed: true },
      { ...base("kv_get", "get"), "cloudflare.kv.query.keys": "a, b", "cloudflare.kv.query.keys.count": 2n, "cloudflare.kv.query.type": "json", "cloudflare.kv.response.size": 13n, "cloudflare.kv.response.returned_rows": 2n, closed: true },
      { ...base("kv_put", "put"), "cloudflare.kv.query.keys": "p", "cloudflare.kv.query.keys.count": 1n, "cloudflare.kv.query.expiration_ttl": 60n, "cloudflare.kv.query.value_type": "text", "cloudflare.kv.query.payload.size": 4n, closed: true },
      { ...base("kv_put", "put"), "cloudflare.kv.query.keys": "q", "cloudflare.kv.query.keys.count": 1n, "cloudflare.kv.query.metadata": true, "cloudflare.kv.query.value_type": "ArrayBuffer", "cloudflare.kv.query.payload.size": 3n, closed: true },
      { ...base("kv_list", "list"), "cloudflare.kv.query.prefix": "x", "cloudflare.kv.response.cache_status": "HIT", "cloudflare.kv.response.size": 45n, "cloudflare.kv.response.list_complete": true, "cloudflare.kv.response.returned_rows": 1n, closed: true },
      { ...base("kv_delete", "delete"), "cloudflare.kv.query.keys": "d", "cloudflare.kv.query.keys.count": 1n, closed: true },
    ],
  );
  // The spans' events come before the outcome, each spanOpen under the invocation's span.
  const onsetSpan = events[0].spanContext.spanId;
  for (const e of events.filter((e) => e.event.type === "spanOpen")) assert.equal(e.spanContext.spanId, onsetSpan);
  assert.equal(events.at(-1).event.type, "outcome");
});

test("streaming tails: Cache API operations over a cache service are spans with workerd's tags", { timeout: scaled(60_000) }, async (t) => {
  // A cache service as workerd's cache-test mocks one: GET only-if-cached (HIT or a 504 MISS),
  // PUT (204), PURGE (200 or 404).
  const cacheService = service(async (request) => {
    const { pathname } = new URL(request.url);
    if (request.method === "GET") return pathname === "/hit" ? new Response("Cached content", { headers: { "cf-cache-status": "HIT" } }) : new Response(null, { status: 504, headers: { "cf-cache-status": "MISS" } });
    if (request.method === "PURGE") return new Response(null, { status: pathname === "/there" ? 200 : 404 });
    await request.arrayBuffer();
    return new Response(null, { status: 204 });
  });
  const events = [];
  const producer = await createWorker({
    script: `export default {
  async fetch(request, env) {
    const c = caches.default;
    await c.match("https://e.com/hit");
    await c.match(new Request("https://e.com/miss", { headers: { "if-none-match": "abc" } }), { ignoreMethod: false });
    await c.put("https://e.com/p", new Response("Test content", { headers: { "content-type": "text/plain", "cache-control": "public, max-age=3600", etag: '"e"' } }));
    await c.put("https://e.com/ns", new Response("x", { headers: { "cache-control": "no-store" } }));
    await c.delete("https://e.com/there");
    await c.delete(new Request("https://e.com/post", { method: "POST" }), { ignoreMethod: true });
    await c.delete(new Request("https://e.com/post", { method: "POST" }));
    return new Response("done");
  },
};`,
    cache: { service: cacheService },
    streamingTails: [() => (ev) => events.push(ev)],
    onLog: () => {},
  });
  t.after(() => producer.dispose());
  assert.equal(await (await dispatch(producer, "http://x/")).text(), "done");
  await until("the outcome", () => events.some((e) => e.event.type === "outcome"));
  const spans = spansOf(events);
  const req = (name, url, method = "GET") => ({ name, "cache.request.url": url, "cache.request.method": method });
  // Sizes as workerd's: a HIT's body length; a put's payload is the response as HTTP/1.1 with its
  // Content-Length (a status line, 4 header lines, an empty line and 12 bytes: 125).
  assert.deepEqual(
    [...spans.values()],
    [
      { ...req("cache_match", "https://e.com/hit"), "cache.response.status_code": 200n, "cache.response.body.size": 14n, "cache.response.cache_status": "HIT", "cache.response.success": true, closed: true },
      { ...req("cache_match", "https://e.com/miss"), "cache.request.ignore_method": false, "cache.request.header.if_none_match": "abc", "cache.response.status_code": 504n, "cache.response.body.size": 0n, "cache.response.cache_status": "MISS", "cache.response.success": false, closed: true },
      { ...req("cache_put", "https://e.com/p"), "cache.request.payload.status_code": 200n, "cache.request.payload.header.cache_control": "public, max-age=3600", "cache.request.payload.header.etag": '"e"', "cache.request.payload.size": 125n, "cache.response.success": true, closed: true },
      { ...req("cache_put", "https://e.com/ns"), "cache.request.payload.status_code": 200n, "cache.request.payload.header.cache_control": "no-store", "cache.request.payload.size": 104n, "cache.response.success": true, closed: true },
      { ...req("cache_delete", "https://e.com/there"), "cache.response.status_code": 200n, "cache.response.success": true, closed: true },
      { ...req("cache_delete", "https://e.com/post", "POST"), "cache.request.ignore_method": true, "cache.response.status_code": 404n, "cache.response.success": false, closed: true },
      { ...req("cache_delete", "https://e.com/post", "POST"), closed: true },
    ],
  );
  const onsetSpan = events[0].spanContext.spanId;
  for (const e of events.filter((e) => e.event.type === "spanOpen")) assert.equal(e.spanContext.spanId, onsetSpan);
});

test("streaming tails beside legacy tail consumers: both get the logged values", { timeout: scaled(60_000) }, async (t) => {
  const items = [];
  const events = [];
  const producer = await createWorker({
    script: `export default { fetch() { console.log("both", { n: 1 }); return new Response("ok"); } };`,
    tailConsumers: [(list) => items.push(...list)],
    streamingTails: [() => (ev) => events.push(ev.event)],
    onLog: () => {},
  });
  t.after(() => producer.dispose());
  assert.equal(await (await dispatch(producer, "http://x/")).text(), "ok");
  await until("the trace item and the outcome", () => items.length === 1 && events.some((e) => e.type === "outcome"));
  assert.deepEqual(items[0].logs.map((l) => l.message), [["both", { n: 1 }]]);
  assert.deepEqual(events.filter((e) => e.type === "log").map((e) => e.message), [["both", { n: 1 }]]);
});

test("streaming tails: bad option values are refused by name", async () => {
  await assert.rejects(createWorker({ script: "export default {}", streamingTails: "tail" }), /options\.streamingTails must be an array/);
  await assert.rejects(createWorker({ script: "export default {}", streamingTails: [42] }), /options\.streamingTails must be an array/);
});

test("workerbox dev: streaming_tail_consumers names the tail worker served beside the producer", { timeout: scaled(120_000) }, async (t) => {
  const { startDevServers } = await import("workerbox/project");
  const root = tempRoot(t, "workerbox-tail-stream-");
  const producer = writeWorker(root, "producer", `export default { fetch(request) { console.log("served", new URL(request.url).pathname); return new Response("hi"); } };`, {
    streaming_tail_consumers: [{ service: "tailer" }],
  });
  const tailer = writeWorker(root, "tailer", TAIL);
  const { readConfig } = await import("workerbox/project");
  assert.deepEqual(readConfig(producer).streamingTailConsumers, [{ service: "tailer" }]);
  const bad = writeWorker(root, "bad", "export default {}", { streaming_tail_consumers: [{ name: "tailer" }] });
  assert.throws(() => readConfig(bad), /streaming_tail_consumers\[0\]/);
  const servers = await startDevServers([producer, tailer], { port: 0, host: "127.0.0.1", persistTo: false, registryDir: path.join(root, "registry"), log: () => {}, watch: false });
  t.after(() => servers.close());
  assert.equal(await (await fetch(new URL("/page", servers.url))).text(), "hi");
  const tailUrl = servers.servers[1].url;
  const events = await until("the producer's outcome", async () => {
    const list = JSON.parse(await (await fetch(tailUrl)).text());
    return list.some((e) => e.event.type === "outcome") && list;
  });
  assert.deepEqual(
    events.map((e) => e.event.type),
    ["onset", "log", "return", "outcome"],
  );
  assert.equal(events[0].event.info.url, new URL("/page", servers.url).href);
  assert.deepEqual(events[1].event.message, ["served", "/page"]);
});
