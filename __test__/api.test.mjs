// createWorker/dispatch end to end: formats, env bindings, every request input shape, and the
// Node Response that comes back (status, statusText, headers in order with duplicates, bytes).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, Worker } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";

const ECHO = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const headers = [];
    for (const [k, v] of request.headers) headers.push([k, v]);
    const body = request.method === "GET" || request.method === "HEAD" ? null : [...new Uint8Array(await request.arrayBuffer())];
    return Response.json({ method: request.method, url: request.url, path: url.pathname, headers, body, env });
  },
};`;

test("the README example works", async (t) => {
  const worker = await createWorker({
    script: `export default { async fetch(request, env, ctx) { return new Response("hi " + new URL(request.url).pathname) } }`,
    bindings: { GREETING: "hello" },
    onLog: () => {},
  });
  t.after(() => worker.dispose());
  const res = await dispatch(worker, new Request("http://localhost/x"));
  assert.ok(res instanceof Response);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), "hi /x");
  assert.equal(worker.format, "module");
  assert.ok(worker instanceof Worker);
});

test("env bindings are plain JSON values", async (t) => {
  const worker = await useWorker(t, { script: ECHO, bindings: { S: "x", N: 2, B: true, O: { a: [1, null] } } });
  const res = await dispatch(worker, "http://localhost/");
  assert.deepEqual((await res.json()).env, { S: "x", N: 2, B: true, O: { a: [1, null] } });
});

test("dispatch accepts a Request, a URL string, a URL object and a plain object", async (t) => {
  const worker = await useWorker(t, { script: ECHO });
  const fromRequest = await (await dispatch(worker, new Request("http://example.test/a?q=1", {
    method: "POST", headers: { "x-one": "1" }, body: "hey",
  }))).json();
  assert.equal(fromRequest.method, "POST");
  assert.equal(fromRequest.url, "http://example.test/a?q=1");
  assert.deepEqual(fromRequest.body, [...Buffer.from("hey")]);
  assert.ok(fromRequest.headers.some(([k, v]) => k === "x-one" && v === "1"));

  assert.equal((await (await dispatch(worker, "http://localhost/s")).json()).path, "/s");
  assert.equal((await (await dispatch(worker, new URL("http://localhost/u"))).json()).path, "/u");

  const fromObject = await (await dispatch(worker, {
    url: "http://localhost/o", method: "put", headers: [["X-A", "1"], ["x-a", "2"]], body: new Uint8Array([0, 255, 7]),
  })).json();
  assert.equal(fromObject.method, "PUT");
  assert.deepEqual(fromObject.body, [0, 255, 7]);
  assert.deepEqual(fromObject.headers.filter(([k]) => k === "x-a"), [["x-a", "1, 2"]]);
});

test("a method workerd's HTTP server does not know is its 501, and the worker does not run", async (t) => {
  // What workerd answered (through Miniflare 4.20260426.0) for the same methods.
  const worker = await useWorker(t, { script: ECHO });
  const seen = [];
  for (const method of ["PROPFIND", "PURGE", "TRACE", "CUSTOM", "purge"]) {
    const response = await dispatch(worker, { url: "http://localhost/m", method });
    const text = await response.text();
    seen.push([method, response.status, response.status === 200 ? JSON.parse(text).method : text]);
  }
  assert.deepEqual(seen, [
    ["PROPFIND", 200, "PROPFIND"],
    ["PURGE", 200, "PURGE"],
    ["TRACE", 200, "TRACE"],
    ["CUSTOM", 501, "ERROR: Unrecognized request method."],
    ["purge", 501, "ERROR: Unrecognized request method."],
  ]);
});

test("request bodies of other kinds arrive whole, with their content-type", async (t) => {
  const worker = await useWorker(t, { script: ECHO });
  const form = await (await dispatch(worker, { url: "http://localhost/", method: "POST", body: new URLSearchParams({ a: "1 2" }) })).json();
  assert.equal(Buffer.from(form.body).toString(), "a=1+2");
  assert.ok(form.headers.some(([k, v]) => k === "content-type" && v.startsWith("application/x-www-form-urlencoded")));
  const blob = await (await dispatch(worker, { url: "http://localhost/", method: "POST", body: new Blob(["abc"]) })).json();
  assert.equal(Buffer.from(blob.body).toString(), "abc");
});

test("the response keeps status, statusText, repeated headers and binary bytes", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() {
      const headers = new Headers([["x-b", "2"], ["set-cookie", "a=1"], ["x-a", "1"], ["set-cookie", "b=2"]]);
      return new Response(new Uint8Array([0, 1, 2, 250, 255]), { status: 418, statusText: "I'm a teapot", headers });
    } }`,
  });
  const res = await dispatch(worker, "http://localhost/");
  assert.equal(res.status, 418);
  assert.equal(res.statusText, "I'm a teapot");
  assert.deepEqual(res.headers.getSetCookie(), ["a=1", "b=2"]);
  assert.equal(res.headers.get("x-a"), "1");
  assert.deepEqual([...new Uint8Array(await res.arrayBuffer())], [0, 1, 2, 250, 255]);
});

test("Response.json, Response.redirect and null-body statuses reach the host", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/json") return Response.json({ ok: true }, { status: 202 });
      if (path === "/redirect") return Response.redirect("https://example.test/next", 301);
      return new Response(null, { status: 204 });
    } }`,
  });
  const json = await dispatch(worker, "http://localhost/json");
  assert.equal(json.status, 202);
  assert.equal(json.headers.get("content-type"), "application/json");
  assert.deepEqual(await json.json(), { ok: true });
  const redirect = await dispatch(worker, "http://localhost/redirect");
  assert.equal(redirect.status, 301);
  assert.equal(redirect.headers.get("location"), "https://example.test/next");
  const empty = await dispatch(worker, "http://localhost/none");
  assert.equal(empty.status, 204);
  assert.equal(empty.body, null);
});

test("service-worker scripts are detected and see bindings as globals", async (t) => {
  const worker = await useWorker(t, {
    script: `addEventListener("fetch", (event) => {
      event.respondWith(new Response(event.request.method + " " + new URL(event.request.url).pathname + " " + GREETING));
    });`,
    bindings: { GREETING: "hello" },
  });
  assert.equal(worker.format, "service-worker");
  const res = await dispatch(worker, { url: "http://localhost/sw", method: "DELETE" });
  assert.equal(await res.text(), "DELETE /sw hello");
});

test("format can be given explicitly", async (t) => {
  const worker = await useWorker(t, {
    format: "service-worker",
    script: `addEventListener("fetch", (e) => e.respondWith(new Response("explicit")));`,
  });
  assert.equal(worker.format, "service-worker");
  assert.equal(await (await worker.dispatch("http://localhost/")).text(), "explicit");
  const module = await useWorker(t, { format: "module", script: `export default { fetch() { return new Response("m") } }` });
  assert.equal(module.format, "module");
});

test("async handlers, awaited timers and module globals shared between requests", async (t) => {
  const worker = await useWorker(t, {
    script: `let count = 0;
      export default { async fetch() {
        await new Promise((resolve) => setTimeout(resolve, 5));
        count += 1;
        return new Response(String(count));
      } }`,
  });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "1");
  const results = await Promise.all(Array.from({ length: 20 }, () => dispatch(worker, "http://localhost/").then((r) => r.text())));
  assert.deepEqual(results.map(Number).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 2));
});

test("console output reaches onLog with its level", async (t) => {
  const lines = [];
  const worker = await createWorker({
    script: `console.info("starting"); export default { fetch() {
      console.log("obj", { a: 1, b: [1, 2] }, 3);
      console.error(new TypeError("bad"));
      console.warn("%s=%d", "x", 42);
      return new Response("ok");
    } }`,
    onLog: (level, message) => lines.push([level, message]),
  });
  t.after(() => worker.dispose());
  await dispatch(worker, "http://localhost/");
  // No waiting: the answer reaches the host only after the lines written before it.
  assert.equal(lines.length, 4);
  assert.deepEqual(lines[0], ["info", "starting"]);
  assert.deepEqual(lines[1], ["log", "obj { a: 1, b: [ 1, 2 ] } 3"]);
  assert.equal(lines[2][0], "error");
  assert.match(lines[2][1], /^TypeError: bad\n\s+at /);
  assert.deepEqual(lines[3], ["warn", "x=42"]);
});

test("lines a request or its waitUntil work wrote are delivered before dispatch or waitUntilSettled resolves", async (t) => {
  const lines = [];
  const worker = await useWorker(t, {
    script: `export default { fetch(request, env, ctx) {
      const n = new URL(request.url).searchParams.get("n");
      for (let i = 0; i < 20; i++) console.log(n + ":" + i);
      ctx.waitUntil(new Promise((resolve) => setTimeout(() => { console.log(n + ":after"); resolve(); }, 1)));
      return new Response(n);
    } }`,
    onLog: (level, message) => lines.push(message),
  });
  for (let n = 0; n < 50; n++) {
    assert.equal(await (await dispatch(worker, "http://localhost/?n=" + n)).text(), String(n));
    assert.ok(lines.includes(n + ":19"), "request " + n + ": its last line was there when dispatch resolved");
    await worker.waitUntilSettled();
    assert.equal(lines.at(-1), n + ":after", "request " + n + ": the waitUntil line was there when waitUntilSettled resolved");
  }
});

test("the default onLog prints [worker] lines on the host console", async (t) => {
  const printed = [];
  const original = console.log;
  console.log = (...args) => printed.push(args.join(" "));
  try {
    const worker = await createWorker({ script: `export default { fetch() { console.log("from the worker"); return new Response("") } }` });
    await dispatch(worker, "http://localhost/");
    await waitFor(() => printed.length > 0);
    await worker.dispose();
  } finally {
    console.log = original;
  }
  assert.ok(printed.includes("[worker] from the worker"), JSON.stringify(printed));
});

test("quick answers (which dispatch may take straight from the isolate thread) and slow or concurrent ones come back alike", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request) {
      const url = new URL(request.url);
      const n = url.searchParams.get("n");
      if (url.searchParams.has("throw")) throw new TypeError("boom " + n);
      if (url.searchParams.has("slow")) await new Promise((resolve) => setTimeout(resolve, 3));
      return new Response((url.searchParams.has("slow") ? "slow " : "quick ") + n, { headers: { "x-n": n } });
    } }`,
  });
  for (let n = 0; n < 300; n++) {
    const kind = n % 10 === 3 ? "throw" : n % 10 === 7 ? "slow" : "quick";
    const url = `http://localhost/?n=${n}${kind === "quick" ? "" : "&" + kind}`;
    if (kind === "throw") {
      await assert.rejects(dispatch(worker, url), (error) => error.name === "TypeError" && error.message === "boom " + n);
      continue;
    }
    const response = await dispatch(worker, url);
    assert.equal(response.headers.get("x-n"), String(n));
    assert.equal(await response.text(), `${kind} ${n}`);
    if (n % 50 === 0) {
      // A burst in flight at once goes the usual way.
      const texts = await Promise.all(Array.from({ length: 20 }, (_, i) => dispatch(worker, `http://localhost/?n=${n}.${i}`).then((r) => r.text())));
      assert.deepEqual(texts, Array.from({ length: 20 }, (_, i) => `quick ${n}.${i}`));
    }
  }
});
