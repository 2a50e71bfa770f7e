// Outbound fetch() from a worker against a real HTTP server on 127.0.0.1 (started here):
// methods and bodies, headers, redirect modes, decompression, aborts, network errors, and
// interception through createWorker's `outbound` handler.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import zlib from "node:zlib";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

let server;
let origin;

before(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      switch (url.pathname) {
        case "/echo":
          res.writeHead(201, "Made It", { "content-type": "application/json", "x-echo": "yes" });
          res.end(JSON.stringify({ method: req.method, body, header: req.headers["x-test"] ?? null }));
          return;
        case "/redirect":
          res.writeHead(302, { location: "/final" });
          res.end();
          return;
        case "/final":
          res.end("arrived");
          return;
        case "/gzip":
          res.writeHead(200, { "content-encoding": "gzip", "content-type": "text/plain" });
          res.end(zlib.gzipSync("decompressed text"));
          return;
        case "/slow":
          setTimeout(() => res.end("too late"), 5000).unref();
          return;
        case "/status":
          res.writeHead(404);
          res.end("not here");
          return;
      }
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

async function run(t, body, options = {}) {
  const worker = await useWorker(t, {
    bindings: { ORIGIN: origin },
    script: `export default { async fetch(request, env) { return Response.json(await (async () => { ${body} })() ?? null); } }`,
    ...options,
  });
  return (await dispatch(worker, "http://localhost/")).json();
}

test("fetch: methods, request bodies and headers, response status, headers and body", async (t) => {
  const result = await run(t, `
    const res = await fetch(env.ORIGIN + "/echo", { method: "POST", body: "payload", headers: { "x-test": "42" } });
    const missing = await fetch(env.ORIGIN + "/status");
    return {
      status: res.status, statusText: res.statusText, ok: res.ok, type: res.headers.get("content-type"), echo: res.headers.get("x-echo"),
      json: await res.json(), url: res.url, redirected: res.redirected, immutable: (() => { try { res.headers.set("a", "b"); return false; } catch { return true; } })(),
      missing: [missing.status, missing.ok, await missing.text()],
    };`);
  assert.deepEqual(result, {
    status: 201, statusText: "Created", ok: true, type: "application/json", echo: "yes",
    json: { method: "POST", body: "payload", header: "42" }, url: `${origin}/echo`, redirected: false, immutable: true,
    missing: [404, false, "not here"],
  });
});

test("fetch: redirect modes follow, manual and error", async (t) => {
  const result = await run(t, `
    const followed = await fetch(env.ORIGIN + "/redirect");
    const manual = await fetch(env.ORIGIN + "/redirect", { redirect: "manual" });
    const error = await fetch(env.ORIGIN + "/redirect", { redirect: "error" }).then(() => "no error", (e) => e.name);
    return { followed: [followed.status, await followed.text(), followed.redirected, followed.url], manual: [manual.status, manual.headers.get("location")], error };`);
  assert.deepEqual(result, { followed: [200, "arrived", true, `${origin}/final`], manual: [302, "/final"], error: "TypeError" });
});

test("fetch: gzip responses are decompressed", async (t) => {
  assert.equal(await run(t, `return await (await fetch(env.ORIGIN + "/gzip")).text();`), "decompressed text");
});

test("fetch: AbortSignal cancels a request in flight, AbortSignal.timeout too", async (t) => {
  const result = await run(t, `
    const controller = new AbortController();
    const pending = fetch(env.ORIGIN + "/slow", { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("changed my mind")), 20);
    const aborted = await pending.then(() => "no error", (e) => e.message);
    const timedOut = await fetch(env.ORIGIN + "/slow", { signal: AbortSignal.timeout(30) }).then(() => "no error", (e) => e.name);
    const before = await fetch(env.ORIGIN + "/echo", { signal: AbortSignal.abort() }).then(() => "no error", (e) => e.name);
    return { aborted, timedOut, before };`);
  assert.deepEqual(result, { aborted: "changed my mind", timedOut: "TimeoutError", before: "AbortError" });
});

test("fetch: clear TypeErrors for network failures and bad URLs", async (t) => {
  const closed = await new Promise((resolve) => {
    const probe = http.createServer();
    probe.listen(0, "127.0.0.1", () => {
      const port = probe.address().port;
      probe.close(() => resolve(port));
    });
  });
  const result = await run(t, `
    const attempts = {
      refused: () => fetch("http://127.0.0.1:${closed}/"),
      relative: () => fetch("/relative"),
      scheme: () => fetch("ftp://127.0.0.1/file"),
    };
    const out = {};
    for (const [name, attempt] of Object.entries(attempts)) {
      out[name] = await attempt().then(() => "no error", (e) => e.name + ": " + e.message);
    }
    return out;`);
  assert.match(result.refused, /^TypeError: fetch failed for http:\/\/127\.0\.0\.1:\d+\/: .*(refused|connect)/i);
  assert.match(result.relative, /^TypeError: Invalid URL/);
  assert.match(result.scheme, /^TypeError: fetch: unsupported protocol "ftp:"/);
});

test("fetch: the outbound option intercepts every request with Node's Request/Response", async (t) => {
  const seen = [];
  const result = await run(
    t,
    `const res = await fetch("https://api.example.test/v1/items?x=1", { method: "PUT", body: "data", headers: { authorization: "t" } });
     return [res.status, await res.text(), res.headers.get("x-mock")];`,
    {
      outbound: async (request) => {
        seen.push([request.method, request.url, request.headers.get("authorization"), await request.text()]);
        return new Response("mocked", { status: 203, headers: { "x-mock": "1" } });
      },
    },
  );
  assert.deepEqual(result, [203, "mocked", "1"]);
  assert.deepEqual(seen, [["PUT", "https://api.example.test/v1/items?x=1", "t", "data"]]);
});

// Only loopback targets here: tests never send traffic elsewhere. Private and link-local ranges
// (10/8, 169.254.169.254, …) take the same code path; their classification is unit-tested in Rust.
test('fetch: network "public" refuses non-public addresses, given literally or through DNS', async (t) => {
  const result = await run(
    t,
    `const out = {};
     for (const url of [env.ORIGIN + "/echo", "http://localhost:9/", "http://[::1]:9/", "http://127.0.0.2:9/"]) {
       out[url.replace(env.ORIGIN, "ORIGIN")] = await fetch(url).then((r) => "fetched " + r.status, (e) => e.name + ": " + e.message);
     }
     return out;`,
    { network: "public" },
  );
  for (const [url, outcome] of Object.entries(result)) {
    assert.match(outcome, /^TypeError: .*(not a public address|non-public addresses)/, url);
  }
  // The default policy ("open") reaches the local server.
  assert.equal(await run(t, `return (await fetch(env.ORIGIN + "/final")).status;`), 200);
});
