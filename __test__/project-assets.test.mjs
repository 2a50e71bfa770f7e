// Static assets against Cloudflare's asset and router workers: the html_handling modes (redirects
// and served files, canonical encodings), not_found_handling, .assetsignore, content types,
// ETag/304, HEAD and methods, and the routing in front of a worker (run_worker_first as a
// boolean and as routes with exclusions, navigation requests by date and flag, env.ASSETS.fetch).
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

// Each expectation is what Cloudflare's asset worker answers for the same files (checked against
// its code in workers-sdk, packages/workers-shared/asset-worker/src/handler.ts).
const MODES = {
  "auto-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/index.html": "307 -> /",
    "/index": "307 -> /",
    "/about": "200 <h1>about</h1>",
    "/about.html": "307 -> /about",
    "/about/": "307 -> /about",
    "/about/index.html": "307 -> /about",
    "/about.html?x=1": "307 -> /about?x=1",
    "/blog": "307 -> /blog/",
    "/blog/": "200 <h1>blog index</h1>",
    "/blog/index.html": "307 -> /blog/",
    "/blog/index": "307 -> /blog/",
    "/blog.html": "307 -> /blog/",
    "/blog/post": "200 <h1>blog post</h1>",
    "/blog/post/": "307 -> /blog/post",
    "/both": "200 <h1>both file</h1>", // both.html and both/index.html
    "/both/": "200 <h1>both folder</h1>",
    "/both.html": "307 -> /both",
    "/both/index.html": "307 -> /both/",
    "/style.css": "200 body{}",
    "/notes.txt": "200 plain",
    "/missing": "404",
    // Paths are decoded, and redirected to their canonical encoding.
    "/%61bout": "307 -> /about",
    "//about": "307 -> /about",
    "/[boop]": "307 -> /%5Bboop%5D",
    "/%5Bboop%5D": "200 <h1>boop</h1>",
    // Configuration files and what .assetsignore names are not assets.
    "/_headers": "404",
    "/.assetsignore": "404",
    "/key.secret": "404",
    "/private/x.txt": "404",
  },
  "force-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/index.html": "307 -> /",
    "/about": "307 -> /about/",
    "/about/": "200 <h1>about</h1>",
    "/about.html": "307 -> /about/",
    "/blog": "307 -> /blog/",
    "/blog/": "200 <h1>blog index</h1>",
    "/blog/index.html": "307 -> /blog/",
    "/blog/post": "307 -> /blog/post/",
    "/blog/post/": "200 <h1>blog post</h1>",
    "/both": "307 -> /both/",
    "/both/": "200 <h1>both folder</h1>",
    "/both.html": "200 <h1>both file</h1>", // both/ is taken: both.html keeps its own name
    "/both/index.html": "307 -> /both/",
    "/style.css": "200 body{}",
    "/style.css/": "404",
  },
  "drop-trailing-slash": {
    "/": "200 <h1>index</h1>",
    "/index.html": "307 -> /",
    "/about": "200 <h1>about</h1>",
    "/about/": "307 -> /about",
    "/about.html": "307 -> /about",
    "/blog": "200 <h1>blog index</h1>",
    "/blog/": "307 -> /blog",
    "/blog/index.html": "307 -> /blog",
    "/blog/post": "200 <h1>blog post</h1>",
    "/blog/post/": "307 -> /blog/post",
    "/both": "200 <h1>both file</h1>",
    "/both/": "307 -> /both",
    "/both.html": "307 -> /both",
    "/both/index.html": "200 <h1>both folder</h1>", // /both is taken: the folder's index keeps its name
    "/style.css": "200 body{}",
  },
  none: {
    "/": "404",
    "/index.html": "200 <h1>index</h1>",
    "/about": "404",
    "/about.html": "200 <h1>about</h1>",
    "/blog/": "404",
    "/blog/index.html": "200 <h1>blog index</h1>",
    "/both.html": "200 <h1>both file</h1>",
    "/both/index.html": "200 <h1>both folder</h1>",
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

test("not_found_handling: 404-page uses the nearest 404.html, single-page-application the root index.html, none an empty 404", async () => {
  const page = createAssetHandler({ directory: SITE, notFoundHandling: "404-page" });
  assert.equal(await outcome(page, "/blog/missing"), "404 <h1>blog 404</h1>");
  assert.equal(await outcome(page, "/blog/deep/er/missing"), "404 <h1>blog 404</h1>");
  assert.equal(await outcome(page, "/elsewhere/missing"), "404 <h1>root 404</h1>");
  assert.equal(await outcome(page, "/about"), "200 <h1>about</h1>");
  assert.equal(await outcome(page, "/about.html"), "307 -> /about", "html_handling still comes first");
  const spa = createAssetHandler({ directory: SITE, notFoundHandling: "single-page-application" });
  assert.equal(await outcome(spa, "/some/client/route"), "200 <h1>index</h1>");
  assert.equal(await outcome(spa, "/about"), "200 <h1>about</h1>");
  assert.equal(await outcome(spa, "/key.secret"), "200 <h1>index</h1>", "an ignored file is not there");
  const none = createAssetHandler({ directory: SITE, notFoundHandling: "none" });
  const missing = await none.fetch(new Request("http://localhost/some/client/route"));
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("content-type"), null);
  assert.equal(await missing.text(), "");
});

test("content types as wrangler gives them, strong ETags, 304 only for the very ETag, HEAD, 405, cache-control", async () => {
  const handler = createAssetHandler({ directory: SITE });
  const get = (p, init) => handler.fetch(new Request(`http://localhost${p}`, init));
  const css = await get("/style.css");
  assert.equal(css.headers.get("content-type"), "text/css; charset=utf-8");
  assert.equal(css.headers.get("cache-control"), "public, max-age=0, must-revalidate");
  const etag = css.headers.get("etag");
  assert.match(etag, /^"[0-9a-f]{32}"$/);
  const types = {};
  for (const p of ["/about", "/app.js", "/data.json", "/img/logo.svg", "/notes.txt", "/file.greg"]) types[p] = (await get(p)).headers.get("content-type");
  assert.deepEqual(types, {
    "/about": "text/html; charset=utf-8",
    "/app.js": "text/javascript; charset=utf-8",
    "/data.json": "application/json", // not text/*: no charset
    "/img/logo.svg": "image/svg+xml",
    "/notes.txt": "text/plain; charset=utf-8",
    "/file.greg": null, // an unknown extension gets no type
  });
  for (const tag of [etag, `W/${etag}`]) {
    const cached = await get("/style.css", { headers: { "if-none-match": tag } });
    assert.equal(cached.status, 304, tag);
    assert.equal(cached.headers.get("etag"), etag);
    assert.equal(cached.headers.get("content-type"), "text/css; charset=utf-8");
  }
  // Cloudflare compares the whole header with the ETag: a list, even holding it, is a miss.
  for (const tag of ['"nope"', `"other", ${etag}`, "*"]) assert.equal((await get("/style.css", { headers: { "if-none-match": tag } })).status, 200, tag);
  const head = await get("/style.css", { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("etag"), etag);
  assert.equal(await head.text(), "");
  for (const [p, method] of [["/style.css", "POST"], ["/about.html", "PUT"], ["/", "DELETE"]]) {
    const refused = await get(p, { method, ...(method === "DELETE" ? {} : { body: "x" }) });
    assert.equal(refused.status, 405, `${method} ${p}: before any redirect`);
    assert.equal(refused.statusText, "Method Not Allowed");
    assert.equal(await refused.text(), "");
  }
  assert.equal((await get("/nothing", { method: "POST", body: "x" })).status, 404);
  // Private requests are not marked cacheable.
  assert.equal((await get("/style.css", { headers: { authorization: "Bearer x" } })).headers.get("cache-control"), null);
  assert.equal((await get("/style.css", { headers: { range: "bytes=0-1" } })).headers.get("cache-control"), null);
});

test(".assetsignore: gitignore patterns, negation, anchored and folder patterns", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assetsignore-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = ["a.log", "keep.log", "sub/b.log", "top.txt", "sub/top.txt", "build/x.js", "sub/build/y.js", "ok.html", ".dev.vars", "_redirects", "_worker.js"];
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), file);
  }
  fs.writeFileSync(path.join(dir, ".assetsignore"), "# comment\n*.log\n!keep.log\n/top.txt\nbuild/\n.dev.vars\n");
  const handler = createAssetHandler({ directory: dir, htmlHandling: "none" });
  const served = [];
  for (const file of files) if ((await handler.fetch(new Request(`http://localhost/${file}`))).status === 200) served.push(file);
  assert.deepEqual(served, ["keep.log", "sub/top.txt", "ok.html", "_worker.js"]);
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
  assert.equal(await outcome(handler, "/b.txt"), "404");
  assert.equal(handler.refresh(), 2);
  assert.equal(await outcome(handler, "/b.txt"), "200 bee");
});

/** A node:http GET (fetch() would set Sec-Fetch-Mode itself): "<status> <body>[ -> <location>]". */
async function request(server, pathname, headers = {}, method = "GET") {
  const req = http.request(new URL(pathname, server.url), { headers, method });
  req.end(method === "GET" || method === "HEAD" ? undefined : "x");
  const [response] = await once(req, "response", { signal: AbortSignal.timeout(10000) });
  let body = "";
  for await (const chunk of response) body += chunk;
  return `${response.statusCode} ${body.trim()}`.trim() + (response.headers.location ? ` -> ${response.headers.location}` : "");
}
const navigate = { "sec-fetch-mode": "navigate" };

test("in front of a worker with run_worker_first routes: listed routes reach the worker, ! routes and the rest the assets", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-app-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(FIXTURES, dir, { recursive: true });
  const server = await startDevServer(path.join(dir, "app"), { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  const get = (...args) => request(server, ...args);
  assert.equal(await get("/api/users"), "200 worker: GET /api/users"); // run_worker_first
  assert.equal(await get("/api/users", {}, "POST"), "200 worker: POST /api/users");
  assert.equal(await get("/about"), "200 worker wrapped: <h1>about</h1>"); // worker first, then env.ASSETS.fetch
  // With routes, Cloudflare's router keeps not_found_handling for every request it sends to the
  // assets, navigation or not: "!" routes go there directly, the rest when an asset is meant.
  assert.equal(await get("/api/public/asset"), "200 <h1>index</h1>");
  assert.equal(await get("/api/public/asset", navigate), "200 <h1>index</h1>");
  assert.equal(await get("/client/route"), "200 <h1>index</h1>");
  assert.equal(await get("/style.css"), "200 body{}");
  assert.equal(await get("/blog"), "307 -> /blog/");
  assert.equal(await get("/", {}, "POST"), "405", "an asset is meant: the assets refuse the method");
  assert.equal(await get("/client/route", {}, "POST"), "405", "the single-page fallback is meant too");
});

/** A worker answering `worker: <method> <path>`, and `/binding/<path>` through env.ASSETS. */
function navigationApp(t, assets, extra = "") {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-nav-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(SITE, path.join(dir, "public"), { recursive: true });
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/binding/")) {
      const asset = await env.ASSETS.fetch(new URL(url.pathname.slice("/binding".length), url));
      return new Response("binding: " + asset.status + " " + (await asset.text()).trim());
    }
    return new Response("worker: " + request.method + " " + url.pathname);
  },
};\n`);
  fs.writeFileSync(path.join(dir, "wrangler.toml"), `name = "nav"\nmain = "src/index.js"\n${extra}\n[assets]\ndirectory = "public"\nbinding = "ASSETS"\n${assets}\n`);
  return dir;
}

test("in front of a worker: not_found_handling only for navigation requests (Sec-Fetch-Mode, from 2025-04-01), run_worker_first: true, the ASSETS binding", async (t) => {
  const serve = async (dir) => {
    const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log() {} });
    t.after(() => server.close());
    return (...args) => request(server, ...args);
  };
  const spa = 'not_found_handling = "single-page-application"';
  const get = await serve(navigationApp(t, spa, 'compatibility_date = "2025-06-01"'));
  assert.equal(await get("/client/route", navigate), "200 <h1>index</h1>");
  assert.equal(await get("/client/route"), "200 worker: GET /client/route");
  assert.equal(await get("/client/route", { "sec-fetch-mode": "cors" }), "200 worker: GET /client/route");
  // Cloudflare decides by Sec-Fetch-Mode alone, not by Accept.
  assert.equal(await get("/client/route", { accept: "text/html,application/xhtml+xml" }), "200 worker: GET /client/route");
  assert.equal(await get("/client/route", { "sec-fetch-mode": "navigate" }, "POST"), "405", "a form posted by navigation meets the fallback");
  assert.equal(await get("/about"), "200 <h1>about</h1>");
  assert.equal(await get("/about/"), "307 -> /about");
  assert.equal(await get("/about", {}, "POST"), "405");
  assert.equal(await get("/api/thing", {}, "POST"), "200 worker: POST /api/thing");
  // The binding applies not_found_handling to whatever it is asked.
  assert.equal(await get("/binding/no/such/page"), "200 binding: 200 <h1>index</h1>");
  // Its 307 (about.html -> /about) is followed, as workerd's Fetcher.fetch() follows a service
  // binding's redirects (redirect: "follow" by default; workerd's fetch-redirect-test).
  assert.equal(await get("/binding/about.html"), "200 binding: 200 <h1>about</h1>");

  const before = await serve(navigationApp(t, spa, 'compatibility_date = "2025-03-01"'));
  assert.equal(await before("/client/route", navigate), "200 worker: GET /client/route", "before 2025-04-01");
  const flagOn = await serve(navigationApp(t, spa, 'compatibility_date = "2025-03-01"\ncompatibility_flags = ["assets_navigation_prefers_asset_serving"]'));
  assert.equal(await flagOn("/client/route", navigate), "200 <h1>index</h1>");
  const flagOff = await serve(navigationApp(t, spa, 'compatibility_date = "2025-06-01"\ncompatibility_flags = ["assets_navigation_has_no_effect"]'));
  assert.equal(await flagOff("/client/route", navigate), "200 worker: GET /client/route");

  const first = await serve(navigationApp(t, `${spa}\nrun_worker_first = true`, 'compatibility_date = "2025-06-01"'));
  assert.equal(await first("/style.css"), "200 worker: GET /style.css");
  assert.equal(await first("/client/route", navigate), "200 worker: GET /client/route");
  assert.equal(await first("/binding/style.css"), "200 binding: 200 body{}");
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
