// EventSource: the event-stream parser (fields, comments, line ends split across chunks, the
// BOM), the request it sends (accept, cache-control, last-event-id), reconnection after the
// server disconnects, the answers it refuses for good (status, content type), EventSource.from()
// and close()/Symbol.dispose, and the constructor's errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch, service } from "../index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
/** Runs `body` (inside an async function with `env`) in a worker with `bindings`; returns its JSON. */
async function run(t, bindings, body) {
  const worker = await useWorker(t, {
    bindings,
    script: `export default { async fetch(request, env) { return Response.json(await (async () => { ${body} })() ?? null); } }`,
  });
  const res = await dispatch(worker, "http://localhost/");
  return res.json();
}

const STREAM = { "content-type": "text/event-stream" };

test("EventSource parses fields, comments, named events and CRLF/CR line ends split across chunks", { timeout: scaled(30_000) }, async (t) => {
  const seen = [];
  const chunks = [":comment\r", "\nid: 7\r\nevent: ping\ndata: a\r", "\ndata:  b\r\rdata: one\n", "\nid\ndata: two\n\n", "data: tail-no-end"];
  const result = await run(
    t,
    {
      SSE: service((request) => {
        seen.push(Object.fromEntries(["accept", "cache-control", "last-event-id"].map((h) => [h, request.headers.get(h)])));
        const body = new ReadableStream({
          async pull(c) {
            if (chunks.length === 0) return c.close();
            c.enqueue(new TextEncoder().encode(chunks.shift()));
          },
        });
        return new Response(body, { headers: STREAM });
      }),
    },
    `const es = new EventSource("https://sse.example/feed?x=1", { fetcher: env.SSE });
     const out = { initial: es.readyState, url: es.url, withCredentials: es.withCredentials, events: [] };
     const { promise, resolve } = Promise.withResolvers();
     es.onopen = () => out.events.push(["open", es.readyState]);
     es.ontest = () => out.events.push(["never"]);
     es.addEventListener("ping", (e) => out.events.push([e.type, e.data, e.lastEventId, e.origin]));
     es.onmessage = (e) => out.events.push([e.type, e.data, e.lastEventId, e instanceof MessageEvent]);
     es.onerror = (e) => { out.events.push(["error", es.readyState, e.error?.message]); es.close(); resolve(); };
     await promise;
     out.final = es.readyState;
     return out;`,
  );
  assert.deepEqual(result, {
    initial: 0,
    url: "https://sse.example/feed?x=1",
    withCredentials: false,
    events: [
      ["open", 1],
      ["ping", "a\n b", "7", "https://sse.example"],
      ["message", "one", "7", true],
      ["message", "two", "", true],
      ["error", 0, "The server disconnected."],
    ],
    final: 2,
  });
  assert.deepEqual(seen, [{ accept: "text/event-stream", "cache-control": "no-cache", "last-event-id": null }]);
});

test("EventSource reconnects after a disconnect (retry: clamped to 1 s) and sends the last event id", { timeout: scaled(30_000) }, async (t) => {
  let connections = 0;
  const result = await run(
    t,
    {
      SSE: service((request) => {
        connections++;
        if (connections === 1) return new Response("retry: 5\nid: abc\ndata: first\n\n", { headers: STREAM });
        return new Response(`data: again ${request.headers.get("last-event-id")}\n\n`, { headers: STREAM });
      }),
    },
    `const es = new EventSource("http://sse.example/", { fetcher: env.SSE });
     const events = [];
     const { promise, resolve } = Promise.withResolvers();
     let disconnectedAt = 0;
     es.onerror = () => { events.push(["error", es.readyState]); disconnectedAt = Date.now(); };
     es.onmessage = (e) => {
       events.push([e.data, e.lastEventId]);
       if (e.data.startsWith("again")) { events.push(["waited", Date.now() - disconnectedAt >= 900]); es.close(); resolve(); }
     };
     await promise;
     return events;`,
  );
  assert.deepEqual(result, [["first", "abc"], ["error", 0], ["again abc", "abc"], ["waited", true]]);
  assert.equal(connections, 2);
});

test("EventSource fails for good on a non-2xx status or a content type other than text/event-stream", { timeout: scaled(30_000) }, async (t) => {
  const result = await run(
    t,
    {
      SSE: service((request) => {
        const path = new URL(request.url).pathname;
        if (path === "/status") return new Response("nope", { status: 503 });
        if (path === "/type") return new Response("data: x\n\n", { headers: { "content-type": "text/plain" } });
        return new Response("data: x\n\n");
      }),
    },
    `const errors = [];
     for (const path of ["/status", "/type", "/none"]) {
       const es = new EventSource("http://sse.example" + path, { fetcher: env.SSE });
       const { promise, resolve } = Promise.withResolvers();
       es.onopen = () => errors.push("opened " + path);
       es.onerror = (e) => { errors.push([path, es.readyState, e.error.name, e.error.message]); resolve(); };
       await promise;
     }
     return errors;`,
  );
  assert.deepEqual(result, [
    ["/status", 2, "AbortError", "The response status code was 503."],
    ["/type", 2, "AbortError", "The content type 'text/plain' is invalid."],
    ["/none", 2, "AbortError", "The content type 'text/plain;charset=UTF-8' is invalid."],
  ]);
});

test("EventSource.from() reads a worker's stream (BOM skipped); close() and Symbol.dispose close it", { timeout: scaled(30_000) }, async (t) => {
  const result = await run(
    t,
    {},
    `const enc = new TextEncoder();
     const parts = ["\\uFEFFdata: x\\n", "\\ndata: y\\n\\n"];
     const es = EventSource.from(new ReadableStream({ pull(c) { parts.length ? c.enqueue(enc.encode(parts.shift())) : c.close(); } }));
     const out = { state: es.readyState, url: es.url, data: [] };
     const { promise, resolve } = Promise.withResolvers();
     es.onmessage = (e) => out.data.push([e.data, e.origin]);
     es.onerror = (e) => { out.error = [es.readyState, e.error.message]; resolve(); };
     await promise;
     const locked = new ReadableStream();
     locked.getReader();
     try { EventSource.from(locked); } catch (e) { out.locked = e.message; }
     const other = EventSource.from(new ReadableStream());
     other[Symbol.dispose]();
     out.disposed = other.readyState;
     return out;`,
  );
  assert.deepEqual(result, {
    state: 1,
    url: "",
    data: [["x", null], ["y", null]],
    error: [2, "The server disconnected."],
    locked: "This ReadableStream is locked.",
    disposed: 2,
  });
});

test("new EventSource() refuses a bad URL and withCredentials with workerd's errors", async (t) => {
  const result = await run(
    t,
    {},
    `const out = [];
     for (const args of [["not a url"], [123], ["http://x/", { withCredentials: true }]]) {
       try { new EventSource(...args); out.push("no error"); } catch (e) { out.push([e.name, e.message]); }
     }
     out.push([EventSource.CONNECTING, EventSource.OPEN, EventSource.CLOSED, EventSource.prototype.OPEN, Object.prototype.toString.call(EventSource.from(new ReadableStream()))]);
     return out;`,
  );
  assert.deepEqual(result, [
    ["SyntaxError", "Cannot open an EventSource to 'not a url'. The URL is invalid."],
    ["SyntaxError", "Cannot open an EventSource to '123'. The URL is invalid."],
    ["NotSupportedError", "The init.withCredentials option is not supported. It must be false or undefined."],
    [0, 1, 2, 1, "[object EventSource]"],
  ]);
});
