// Static assets: Cloudflare's html_handling modes (redirects and served files), not_found_handling,
// content types, ETag/304, HEAD and methods, and the routing in front of a worker
// (run_worker_first with exclusions, navigation requests, env.ASSETS.fetch).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startDevServer } from "workerbox/project";
import { createAssetHandler } from "../lib/project/assets.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "assets");
const SITE = path.join(FIXTURES, "site");

/** What one path gives: "200 <body>", "307 -> <location>" or "<status>". */
async function outcome(handler, pathname, init) {
  const response = await handler.fetch(new Request(`http://localhost${pathname}`, init));
  if (response.status === 307) return `307 -> ${response.headers.get("location")}`;
  const body = (await response.text()).trim();
  return body ? `${response.status} ${body}` : String(response.status);
}

const MODES = {
  "auto-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/index.html": "307 -> /",
    "/index": "307 -> /",
    "/about": "200 <h1>about</h1>",
    "/about.html": "307 -> /about",
    "/about/": "307 -> /about",
    "/about.html?x=1": "307 -> /about?x=1",
    "/blog": "307 -> /blog/",
    "/blog/": "200 <h1>blog index</h1>",
    "/blog/index.html": "307 -> /blog/",
    "/blog/index": "307 -> /blog/",
    "/blog/post": "200 <h1>blog post</h1>",
    "/blog/post/": "307 -> /blog/post",
    "/style.css": "200 body{}",
    "/notes.txt": "200 plain",
    "/_headers": "404 Not Found",
    "/missing": "404 Not Found",
    "/%61bout": "200 <h1>about</h1>",
  },
  "force-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/about": "307 -> /about/",
    "/about/": "200 <h1>about</h1>",
    "/about.html": "307 -> /about/",
    "/blog": "307 -> /blog/",
    "/blog/": "200 <h1>blog index</h1>",
    "/blog/post/": "200 <h1>blog post</h1>",
    "/style.css": "200 body{}",
  },
  "drop-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/about": "200 <h1>about</h1>",
    "/about/": "307 -> /about",
    "/blog": "200 <h1>blog index</h1>",
    "/blog/": "307 -> /blog",
    "/blog/index.html": "307 -> /blog",
    "/style.css": "200 body{}",
  },
  none: {
    "/": "404 Not Found",
    "/about": "404 Not Found",
    "/about.html": "200 <h1>about</h1>",
    "/blog/": "404 Not Found",
    "/blog/index.html": "200 <h1>blog index</h1>",
  },
};

for (const [mode, expected] of Object.entries(MODES)) {
  test(`html_handling: ${mode}`, async () => {
    const handler = createAssetHandler({ directory: SITE, htmlHandling: mode });
    const actual = {};
    for (const pathname of Object.keys(expected)) actual[pathname] = await outcome(handler, pathname);
    assert.deepEqual(actual, expected);
  });
}

test("not_found_handling: 404-page uses the nearest 404.html, single-page-application the root index.html", async () => {
  const page = createAssetHandler({ directory: SITE, notFoundHandling: "404-page" });
  assert.equal(await outcome(page, "/blog/missing"), "404 <h1>blog 404</h1>");
  assert.equal(await outcome(page, "/blog/deep/er/missing"), "404 <h1>blog 404</h1>");
  assert.equal(await outcome(page, "/elsewhere/missing"), "404 <h1>root 404</h1>");
  assert.equal(await outcome(page, "/about"), "200 <h1>about</h1>");
  const spa = createAssetHandler({ directory: SITE, notFoundHandling: "single-page-application" });
  assert.equal(await outcome(spa, "/some/client/route"), "200 <h1>index</h1>");
  assert.equal(await outcome(spa, "/about"), "200 <h1>about</h1>");
  const none = createAssetHandler({ directory: SITE, notFoundHandling: "none" });
  assert.equal(await outcome(none, "/some/client/route"), "404 Not Found");
});

test("content types, strong ETags with 304 (strong and weak If-None-Match), HEAD and 405", async () => {
  const handler = createAssetHandler({ directory: SITE });
  const css = await handler.fetch(new Request("http://localhost/style.css"));
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  const etag = css.headers.get("etag");
  assert.match(etag, /^"[0-9a-f]{32}"$/);
  assert.equal((await handler.fetch(new Request("http://localhost/img/logo.svg"))).headers.get("content-type"), "image/svg+xml");
  assert.equal((await handler.fetch(new Request("http://localhost/about"))).headers.get("content-type"), "text/html; charset=utf-8");
  for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
    const cached = await handler.fetch(new Request("http://localhost/style.css", { headers: { "if-none-match": tag } }));
    assert.equal(cached.status, 304, tag);
    assert.equal(cached.headers.get("etag"), etag);
  }
  const stale = await handler.fetch(new Request("http://localhost/style.css", { headers: { "if-none-match": '"nope"' } }));
  assert.equal(stale.status, 200);
  const head = await handler.fetch(new Request("http://localhost/style.css", { method: "HEAD" }));
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("etag"), etag);
  assert.equal(await head.text(), "");
  const post = await handler.fetch(new Request("http://localhost/style.css", { method: "POST", body: "x" }));
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
});

test("the ETag changes with the file and refresh() picks up new and removed files", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "a.txt"), "one");
  const handler = createAssetHandler({ directory: dir });
  const first = (await handler.fetch(new Request("http://localhost/a.txt"))).headers.get("etag");
  fs.writeFileSync(path.join(dir, "a.txt"), "two, longer");
  const second = (await handler.fetch(new Request("http://localhost/a.txt"))).headers.get("etag");
  assert.notEqual(first, second);
  fs.writeFileSync(path.join(dir, "b.txt"), "bee");
  assert.equal(await outcome(handler, "/b.txt"), "404 Not Found");
  assert.equal(handler.refresh(), 2);
  assert.equal(await outcome(handler, "/b.txt"), "200 bee");
});

test("in front of a worker: run_worker_first (with exclusions), navigation-only not-found handling, ASSETS binding", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-app-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(FIXTURES, dir, { recursive: true });
  const server = await startDevServer(path.join(dir, "app"), { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  // node:http, not fetch(): fetch sets Sec-Fetch-Mode itself.
  const get = async (pathname, headers = {}, method = "GET") => {
    const request = http.request(new URL(pathname, server.url), { headers, method });
    request.end();
    const [response] = await once(request, "response", { signal: AbortSignal.timeout(10000) });
    let body = "";
    for await (const chunk of response) body += chunk;
    return `${response.statusCode} ${body.trim()}`.trim() + (response.headers.location ? ` -> ${response.headers.location}` : "");
  };
  const navigate = { "sec-fetch-mode": "navigate" };
  assert.equal(await get("/api/users"), "200 worker: GET /api/users"); // run_worker_first
  assert.equal(await get("/api/public/asset", navigate), "200 <h1>index</h1>"); // excluded: assets, SPA fallback
  assert.equal(await get("/api/public/asset"), "200 never: excluded from run_worker_first"); // not a navigation: the worker
  assert.equal(await get("/about"), "200 worker wrapped: <h1>about</h1>"); // worker first, then env.ASSETS.fetch
  assert.equal(await get("/style.css"), "200 body{}");
  assert.equal(await get("/blog"), "307 -> /blog/");
  assert.equal(await get("/client/route", navigate), "200 <h1>index</h1>");
  assert.equal(await get("/client/route"), "200 worker: GET /client/route");
  assert.equal(await get("/", {}, "POST"), "200 worker: POST /"); // only GET and HEAD go to assets
});

test("an assets-only project (no main): every request is answered from the assets", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-static-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(FIXTURES, dir, { recursive: true });
  const server = await startDevServer(path.join(dir, "static-only"), { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  assert.equal(server.worker, null);
  const about = await fetch(`${server.url}about`, { redirect: "manual" });
  assert.equal(about.status, 307);
  assert.equal(about.headers.get("location"), "/about/");
  assert.equal(await (await fetch(`${server.url}about/`)).text(), "<h1>about</h1>\n");
  const missing = await fetch(`${server.url}blog/nope`); // not a navigation, still the 404 page
  assert.equal(missing.status, 404);
  assert.equal(await missing.text(), "<h1>blog 404</h1>\n");
  assert.equal((await fetch(server.url, { method: "POST", body: "x" })).status, 405);
});
