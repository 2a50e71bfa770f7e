// Assets' `_redirects` and `_headers` files with Cloudflare's rules (workers-shared's parsing and
// asset worker): an assets site in front of a worker, served by `workerbox dev` and driven by real
// requests — status codes, splats and placeholders, query strings, 200 rewrites, static rules
// before dynamic ones, custom headers (with removal and placeholders) on every answer of the
// assets and on none of the worker's, and the skipped lines the dev log reports — every answer
// compared with Miniflare's (Cloudflare's asset worker running in workerd) — plus the
// parsers' limits and refusals.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import { once } from "node:events";
import { startDevServer } from "workerbox/project";
import { createAssetHandler } from "../lib/project/assets.js";
import { parseRedirects, parseHeaders } from "../lib/project/assets-rules.js";

import { scaled } from "./child-node.mjs";
const REDIRECTS = `# moved pages
/old-about /about 301
/home /
/promo /static-winner
/blog/* /posts/:splat 308
/users/:id /users/profile 200
/docs/:section/:page /manual/:page?section=:section
/external https://example.com/landing
/query /about?from=query 307
/pro* /dynamic-loser
/gone/* /nowhere/:splat 200
/lat* /dynamic-winner
/later /static-loser
/bad-line
/x /y 404
/* /index.html
/home /duplicate
`;

const HEADERS = `/*
  X-Frame-Options: DENY
  X-Robots-Tag: noindex
/about
  Cache-Control: max-age=3600
  ! X-Robots-Tag
/users/*
  X-User: :splat
  X-Robots-Tag: nofollow
/api/*
  X-Api: assets-only
https://:tenant.example.com/*
  X-Tenant: :tenant
not-a-header
`;

function site(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-rules-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const files = {
    "public/index.html": "<h1>home</h1>",
    "public/about.html": "<h1>about</h1>",
    "public/users/profile.html": "<h1>profile</h1>",
    "public/404.html": "<h1>not found</h1>",
    "public/_redirects": REDIRECTS,
    "public/_headers": HEADERS,
    "worker.js": "export default { fetch(request) { return new Response('worker: ' + new URL(request.url).pathname); } };",
    "wrangler.jsonc": JSON.stringify({ name: "site", main: "worker.js", compatibility_date: "2025-06-01", assets: { directory: "public", not_found_handling: "404-page" } }),
  };
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** A real GET (`target` a path, or an absolute URL sent as a proxy would): `{ status, location, body, headers }`. */
async function get(server, target) {
  const { hostname, port } = new URL(server.url);
  const req = http.request({ hostname, port, path: target });
  req.end();
  const [response] = await once(req, "response", { signal: AbortSignal.timeout(10000) });
  let body = "";
  for await (const chunk of response) body += chunk;
  return { status: response.statusCode, location: response.headers.location, body, headers: response.headers };
}

test("workerbox dev applies _redirects and _headers as Cloudflare does", { timeout: scaled(120_000) }, async (t) => {
  const dir = site(t);
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  const redirect = async (pathname) => {
    const r = await get(server, pathname);
    return `${r.status} ${r.location}`;
  };
  assert.equal(await redirect("/old-about"), "301 /about");
  assert.equal(await redirect("/old-about?x=1"), "301 /about?x=1", "the request's query is kept");
  assert.equal(await redirect("/home"), "302 /", "302 by default; the first of two rules for a path wins");
  assert.equal(await redirect("/blog/2024/hello"), "308 /posts/2024/hello");
  assert.equal(await redirect("/docs/api/intro?x=1"), "302 /manual/intro?section=api", "placeholders; the destination's own query wins");
  assert.equal(await redirect("/external?q=1"), "302 https://example.com/landing?q=1");
  assert.equal(await redirect("/query?z=1"), "307 /about?from=query");
  // A static rule before the first dynamic one beats any dynamic rule; one after it does not.
  assert.equal(await redirect("/promo"), "302 /static-winner");
  assert.equal(await redirect("/later"), "302 /dynamic-winner");

  // 200: the asset of another path, the URL unchanged; a rewrite finding nothing is the assets' 404.
  const profile = await get(server, "/users/42");
  assert.equal(profile.status, 200);
  assert.equal(profile.body, "<h1>profile</h1>");
  assert.equal(profile.headers["x-user"], "42");
  assert.equal(profile.headers["x-robots-tag"], "noindex, nofollow", "a header set by an earlier rule is appended to");
  const gone = await get(server, "/gone/thing");
  assert.equal(gone.status, 404);
  assert.equal(gone.body, "<h1>not found</h1>", "not the worker: the rewritten request belongs to the assets");

  // Headers: every matching rule, in order; `!` removes; redirects get them too.
  const about = await get(server, "/about");
  assert.equal(about.body, "<h1>about</h1>");
  assert.equal(about.headers["cache-control"], "max-age=3600", "replaces the asset's own Cache-Control");
  assert.equal(about.headers["x-frame-options"], "DENY");
  assert.equal(about.headers["x-robots-tag"], undefined);
  assert.equal((await get(server, "/old-about")).headers["x-frame-options"], "DENY");
  // The worker's answers get none of them.
  const api = await get(server, "/api/hello");
  assert.equal(api.body, "worker: /api/hello");
  assert.equal(api.headers["x-api"], undefined);
  assert.equal(api.headers["x-frame-options"], undefined);

  // The lines that were skipped, as wrangler warns of them.
  const warnings = lines.filter((line) => line.includes("_redirects:") || line.includes("_headers:")).join("\n");
  for (const expected of [
    "_redirects: Expected exactly 2 or 3 whitespace-separated tokens. Got 1.",
    "_redirects:14 | /bad-line",
    "_redirects: Valid status codes are 200, 301, 302 (default), 303, 307, or 308. Got 404.",
    "_redirects: Infinite loop detected in this rule and has been ignored.",
    "_redirects: Ignoring duplicate rule for path /home.",
    "_headers: Expected a colon-separated header pair (e.g. name: value)",
  ]) assert.ok(warnings.includes(expected), `${expected}\nnot in:\n${warnings}`);
});

test("env.ASSETS.fetch and an assets-only site: rules apply, host placeholders in _headers, refresh() re-reads the files", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-assets-rules-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "index.html"), "home");
  fs.writeFileSync(path.join(dir, "_redirects"), "/a /b 303\n");
  fs.writeFileSync(path.join(dir, "_headers"), "https://:tenant.example.com/*\n  X-Tenant: :tenant\n/missing\n  X-Missing: yes\n");
  const assets = createAssetHandler({ directory: dir });
  assert.deepEqual(assets.rules, { redirects: 1, headers: 2 });
  const a = await assets.fetch("http://localhost/a");
  assert.equal(a.status, 303);
  assert.equal(a.headers.get("location"), "/b");
  assert.equal((await assets.fetch("http://acme.example.com/")).headers.get("x-tenant"), "acme");
  assert.equal((await assets.fetch("http://localhost/")).headers.get("x-tenant"), null);
  const missing = await assets.fetch("http://localhost/missing");
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get("x-missing"), "yes", "the assets' own 404 gets the rules too");
  fs.writeFileSync(path.join(dir, "_redirects"), "/a /c 301\n");
  assets.refresh();
  assert.equal((await assets.fetch("http://localhost/a")).headers.get("location"), "/c");
});

test("the parsers keep Cloudflare's limits and refusals", () => {
  const dynamic = Array.from({ length: 101 }, (_, i) => `/d${i}/* /to`).join("\n");
  const many = parseRedirects(dynamic);
  assert.equal(many.count, 100);
  assert.equal(many.problems.at(-1).message, "Maximum number of dynamic rules supported is 100. Skipping remaining 1 lines of file.");
  const statics = parseRedirects(Array.from({ length: 2001 }, (_, i) => `/s${i} /to`).join("\n"));
  assert.equal(statics.count, 2000);
  assert.equal(statics.problems[0].message, "Maximum number of static rules supported is 2000. Skipping line.");
  const refused = parseRedirects(`/${"x".repeat(2000)} /y\n/p https://example.com/p 200\n/ /index\nhttps://a.example/x /y\n/q /r # a comment\n/s /t#frag`, { htmlHandling: "auto-trailing-slash" });
  assert.deepEqual(refused.problems.map((p) => p.message), [
    "Ignoring line 1 as it exceeds the maximum allowed length of 2000.",
    "Proxy (200) redirects can only point to relative paths. Got https://example.com/p",
    "Infinite loop detected in this rule and has been ignored. This will cause a redirect to strip `.html` or `/index` and end up triggering this rule again. Please fix or remove this rule to silence this warning.",
    "Only relative URLs are allowed. Skipping absolute URL https://a.example/x.",
  ]);
  assert.deepEqual([...refused.staticRules.values()].map((r) => [r.from, r.to]), [["/q", "/r"], ["/s", "/t#frag"]]);
  // html_handling "none": `/ /index` is no loop.
  assert.equal(parseRedirects("/ /index", { htmlHandling: "none" }).count, 1);

  // The count is checked at each path line before the rule above it is added, as Cloudflare's
  // parser does: 101 rules pass, a 102nd path line stops the file there (rule 101 included).
  const headerRules = (n) => Array.from({ length: n }, (_, i) => `/h${i}\n  X-N: ${i}`).join("\n");
  assert.equal(parseHeaders(headerRules(101)).rules.length, 101);
  const headers = parseHeaders(headerRules(102));
  assert.equal(headers.rules.length, 100);
  assert.equal(headers.problems.at(-1).message, "Maximum number of rules supported is 100. Skipping remaining 2 lines of file.");
  const bad = parseHeaders("X-Early: 1\n/a/*/b/*\n  X: y\n/c/*/:splat\n  X: y\n/d\n  Bad Name: v\n  X-Empty:\n  : novalue\n/e\n/f\n  ! X-Gone\nhttps://example.com:8443/x\n  X: y\n");
  assert.deepEqual(bad.problems.map((p) => p.message), [
    "Path should come before header (x-early: 1)",
    "Only one wildcard is allowed per rule. Use a named placeholder (e.g. :project) instead. Skipping /a/*/b/*.",
    "Cannot combine a wildcard * with a :splat placeholder because wildcards are converted to :splat at runtime. Skipping /c/*/:splat.",
    "Header name cannot include spaces",
    "No header value specified",
    "No header name specified",
    "No headers specified",
    "No headers specified",
    "Specifying ports is not supported. Skipping absolute URL https://example.com:8443/x.",
  ]);
  assert.deepEqual(bad.rules.map((r) => [r.path, r.set, r.unset]), [["/f", {}, ["X-Gone"]]]);
});

// The same site under Miniflare, which runs Cloudflare's own asset and router workers in workerd
// (reading _redirects and _headers as wrangler does): every answer compared.
const COMPARED = ["/old-about", "/old-about?x=1", "/home", "/blog/2024/hello", "/docs/api/intro?x=1", "/external?q=1", "/query?z=1", "/promo", "/later",
  "/users/42", "/gone/thing", "/about", "/", "/api/hello", "/missing", "/about.html", "/x", "http://acme.example.com/about", "http://acme.example.com/nope"];
const SHOWN = ["location", "x-user", "x-robots-tag", "x-frame-options", "cache-control", "x-api", "x-tenant", "content-type"];
const summary = (status, body, header) => `${status} ${status >= 300 && status < 400 ? "" : body} ${SHOWN.filter((h) => header(h) != null).map((h) => `${h}=${header(h)}`).join(" ")}`;

test("every answer matches Miniflare's (Cloudflare's asset worker in workerd) for the same site", { timeout: scaled(120_000) }, async (t) => {
  const dir = site(t);
  const { Miniflare } = await import("miniflare");
  const script = fs.readFileSync(path.join(dir, "worker.js"), "utf8");
  const mf = new Miniflare({ modules: true, script, compatibilityDate: "2025-06-01", assets: { directory: path.join(dir, "public"), assetConfig: { not_found_handling: "404-page" }, routerConfig: { has_user_worker: true } } });
  t.after(() => mf.dispose());
  const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  for (const target of COMPARED) {
    const theirs = await mf.dispatchFetch(target.startsWith("/") ? `http://localhost${target}` : target, { redirect: "manual" });
    const expected = summary(theirs.status, await theirs.text(), (h) => theirs.headers.get(h));
    const ours = await get(server, target);
    assert.equal(summary(ours.status, ours.body, (h) => ours.headers[h]), expected, target);
  }
});
