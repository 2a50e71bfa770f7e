// Framework and storage starters served by workerbox dev, as `npm create cloudflare` users get
// them: a React Router 7 app (framework mode, server-rendered, built by Cloudflare's Vite plugin),
// a Remix v2 app on Vite (its Worker bundled from server.ts and the server build, as wrangler
// does), a Vite + React single-page app with a Worker API (assets from the same build), and
// Workers over D1 (schema in migrations/) and KV, whose state outlives a restart of the dev server.
//
// The three built starters come from scripts/starters.mjs: our own sources in
// fixtures/starters/<name>/, their pinned packages installed from the npm registry and built
// once into .cache/starters/ (npm's pretest:node step does it before the suites run; run alone,
// this file does it, bounded in time, and fails saying why when the registry cannot be reached).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startDevServer } from "../lib/project/index.js";
import { copyStarter } from "../scripts/starters.mjs";
import { scaled } from "./child-node.mjs";

const STARTERS = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "starters");
// Installing and building on a cold cache takes a while; a warm one, a second.
const PREPARE = { timeout: scaled(300_000) };

/** Each test's dev servers (their close()), which the removal of its folders waits for. */
const servers = new WeakMap();

/**
 * Removes a test's folder once the test is over, after its dev servers are closed: `t.after`
 * hooks run in the order they were added, and a server still open when its folder goes would
 * write its bundle's source map and cache into a new folder of that name (the first bundle's map
 * is made late).
 */
function removeAfterServers(t, remove) {
  t.after(async () => {
    for (const close of servers.get(t) ?? []) await close();
    remove();
  });
}

/** A starter of fixtures/starters/ (no packages needed) in a temporary folder. */
function plainStarter(t, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `workerbox-starter-${name}-`));
  removeAfterServers(t, () => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(STARTERS, name), dir, { recursive: true });
  return dir;
}

/**
 * A built Vite starter, copied from the cache into a temporary folder. A cold cache is filled
 * here within 40 s of npm (node --test ends a whole file after --test-timeout on Node 20 and
 * 22); `npm run test:node` fills it beforehand with more time.
 */
async function builtStarter(t, name) {
  let copy;
  try {
    copy = await copyStarter(name, { log: (line) => t.diagnostic(line), installTimeoutMs: 40_000 });
  } catch (error) {
    throw new Error(`the ${name} starter could not be prepared (node scripts/starters.mjs ${name} says the same): ${error.message}`, { cause: error });
  }
  const { dir, remove } = copy;
  removeAfterServers(t, remove);
  return dir;
}

async function serve(t, dir, options = {}) {
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line), ...options });
  let closing = null;
  const close = () => (closing ??= server.close());
  servers.set(t, [...(servers.get(t) ?? []), close]);
  t.after(close);
  return { server, lines, close, request: (p, init) => request(server, p, init) };
}

/**
 * One request with node:http (fetch() would add Sec-Fetch-Mode itself): `{ status, headers, text }`.
 * `init`: `{ method, headers, body }`.
 */
async function request(server, pathname, { method = "GET", headers = {}, body } = {}) {
  const req = http.request(new URL(pathname, server.url), { method, headers: { ...headers, ...(body !== undefined ? { "content-length": Buffer.byteLength(body) } : {}) } });
  req.end(body);
  const [response] = await once(req, "response", { signal: AbortSignal.timeout(15_000) });
  let text = "";
  for await (const chunk of response.setEncoding("utf8")) text += chunk;
  return { status: response.statusCode, headers: response.headers, text };
}

const navigation = { "sec-fetch-mode": "navigate", accept: "text/html" };
const form = (fields) => ({ method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

test("D1 starter: migrations applied once, rows kept across requests and across a restart", async (t) => {
  const dir = plainStarter(t, "d1");
  let dev = await serve(t, dir);
  assert.ok(dev.lines.some((line) => /^D1 DB: applied 2 migration\(s\) from .*migrations: 0001_create_comments_table\.sql, 0002_add_created_at\.sql$/.test(line)), dev.lines.join("\n"));
  const seeded = JSON.parse((await dev.request("/api/comments")).text);
  assert.deepEqual(seeded.map((c) => c.author), ["Grace", "Linus", "Barbara"]);
  assert.ok(seeded.every((c) => c.created_at === "1970-01-01T00:00:00Z"), "the second migration's column");
  const created = await dev.request("/api/comments", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ author: "Ada", content: "Hello <world>" }) });
  assert.equal(created.status, 201);
  const row = JSON.parse(created.text);
  assert.equal(row.id, 4);
  assert.match(row.created_at, /^\d{4}-\d\d-\d\dT/);
  assert.equal((await dev.request("/api/comments", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status, 400);
  const page = await dev.request("/");
  assert.equal(page.headers["content-type"], "text/html; charset=utf-8");
  assert.match(page.text, /<li><b>Ada<\/b>: Hello &#60;world&#62;<\/li><\/ul>/);
  await dev.close();

  // A new dev server on the same project (state under .wrangler/state/v3): nothing to migrate,
  // the row is there, the seed is not doubled.
  dev = await serve(t, dir);
  assert.ok(!dev.lines.some((line) => line.startsWith("D1 DB: applied")), dev.lines.join("\n"));
  const after = JSON.parse((await dev.request("/api/comments")).text);
  assert.deepEqual(after.map((c) => `${c.id} ${c.author}`), ["1 Grace", "2 Linus", "3 Barbara", "4 Ada"]);
  assert.ok(fs.existsSync(path.join(dir, ".wrangler", "state", "v3", "d1", "miniflare-D1DatabaseObject")));
});

test("KV starter: values kept across requests and, with a persistence folder, across a restart; not in memory mode", async (t) => {
  const dir = plainStarter(t, "kv");
  const state = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-kv-state-"));
  t.after(() => fs.rmSync(state, { recursive: true, force: true }));
  let dev = await serve(t, dir, { persistTo: state });
  const visits = async () => JSON.parse((await dev.request("/visits")).text).visits;
  assert.deepEqual([await visits(), await visits(), await visits()], [1, 2, 3]);
  assert.equal((await dev.request("/notes/todo", { method: "PUT", body: "buy milk" })).status, 204);
  assert.equal((await dev.request("/notes/todo")).text, "buy milk");
  const listed = JSON.parse((await dev.request("/notes")).text);
  assert.equal(listed.length, 1);
  assert.equal(listed[0].name, "todo");
  assert.match(listed[0].saved, /^\d{4}-\d\d-\d\dT/, "metadata");
  await dev.close();

  dev = await serve(t, dir, { persistTo: state });
  assert.equal(await visits(), 4);
  assert.equal((await dev.request("/notes/todo")).text, "buy milk");
  assert.equal((await dev.request("/notes/todo", { method: "DELETE" })).status, 204);
  assert.equal((await dev.request("/notes/todo")).status, 404);
  assert.ok(fs.readdirSync(state).length > 0, "the state is in the folder given");
  await dev.close();

  // In memory (--no-persist), a new server starts empty: the folder is what kept the state.
  dev = await serve(t, dir, { persistTo: false });
  assert.equal(await visits(), 1);
  assert.ok(!fs.existsSync(path.join(dir, ".wrangler", "state")), "nothing written under the project");
});

test("React Router 7 starter: server-rendered pages, .data requests, form actions, client assets", PREPARE, async (t) => {
  const dir = await builtStarter(t, "react-router");
  const { server, lines, request: get } = await serve(t, dir, { persistTo: false });
  assert.equal(server.project.configFile, path.join(dir, "build", "server", "wrangler.json"), "the configuration the Vite plugin wrote");
  assert.equal(server.project.redirectedFrom, path.join(dir, "wrangler.jsonc"));

  // The document: rendered on the server with the loader's data (a var from wrangler.jsonc,
  // reached through the Worker's env), and the scripts that hydrate it.
  const page = await get("/", { headers: navigation });
  assert.equal(page.status, 200);
  assert.equal(page.headers["content-type"], "text/html; charset=utf-8");
  assert.match(page.text, /^<!DOCTYPE html><html lang="en">/);
  assert.match(page.text, /<title>React Router on Workers<\/title>/);
  assert.match(page.text, /<h1>Hello from the Worker<\/h1>/);
  assert.match(page.text, /window\.__reactRouterContext/);
  const scripts = [...page.text.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(scripts.some((s) => /\/assets\/entry\.client-[\w-]+\.js$/.test(s)), scripts.join(", "));

  // The client's scripts are assets of the same build, as JavaScript, cacheable by ETag.
  for (const script of scripts) {
    const asset = await get(script);
    assert.equal(asset.status, 200, script);
    assert.equal(asset.headers["content-type"], "text/javascript; charset=utf-8", script);
    assert.ok(asset.text.length > 0);
    const again = await get(script, { headers: { "if-none-match": asset.headers.etag } });
    assert.equal(again.status, 304, script);
  }
  const manifest = page.text.match(/"\/assets\/manifest-[\w-]+\.js"/)?.[0];
  assert.ok(manifest, "the route manifest is named in the page");
  assert.match((await get(JSON.parse(manifest))).text, /window\.__reactRouterManifest/);

  // What client-side navigation asks for: the loaders' data, turbo-stream encoded.
  const data = await get("/_root.data");
  assert.equal(data.status, 200);
  assert.equal(data.headers["content-type"], "text/x-script");
  assert.match(data.text, /"routes\/home"/);
  assert.match(data.text, /"Hello from the Worker"/);

  // A plain form post (no JavaScript): the action stores the entry in KV and redirects.
  const posted = await get("/guestbook", form({ name: "Ada" }));
  assert.equal(posted.status, 302);
  assert.equal(posted.headers.location, "/guestbook");
  assert.match((await get("/guestbook", { headers: navigation })).text, /<li>Ada<\/li>/);
  // The same action as the client calls it (single fetch): the redirect comes back as data.
  const fetched = await get("/guestbook.data", form({ name: "Lin" }));
  assert.equal(fetched.status, 202);
  assert.match(fetched.text, /"redirect","\/guestbook"/);
  const entries = await get("/guestbook.data");
  assert.match(entries.text, /"entries",\[\d+,\d+\],"Ada","Lin"/);
  // An invalid submission: the action's 400 with its message rendered in the page.
  const invalid = await get("/guestbook", form({ name: " " }));
  assert.equal(invalid.status, 400);
  assert.match(invalid.text, /<p role="alert">Please write your name<\/p>/);
  // A path no route matches: React Router's 404, rendered by the root error boundary.
  const missing = await get("/no/such/page", { headers: navigation });
  assert.equal(missing.status, 404);
  assert.match(missing.text, /<h1>404 Not Found<\/h1>/);
  assert.ok(lines.some((line) => line.includes("using the configuration the build wrote")), lines.join("\n"));
  assert.ok(lines.some((line) => /POST \/guestbook\.data 202/.test(line)), lines.join("\n"));
});

test("Remix on Vite starter: server-rendered pages, single-fetch .data requests, form actions, client assets", PREPARE, async (t) => {
  const dir = await builtStarter(t, "remix");
  // The greeting comes from the Worker's env at request time, not from the build: change the var.
  const config = path.join(dir, "wrangler.jsonc");
  const greeting = "Hello from a var set after the build";
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace(/"GREETING": "[^"]*"/, JSON.stringify({ GREETING: greeting }).slice(1, -1)));
  const { server, lines, request: get } = await serve(t, dir, { persistTo: false });
  // No redirected configuration: as with wrangler, the Worker is server.ts, bundled here with the
  // server build it imports.
  assert.equal(server.project.configFile, config);
  assert.equal(server.project.redirectedFrom, undefined);

  const page = await get("/", { headers: navigation });
  assert.equal(page.status, 200);
  assert.equal(page.headers["content-type"], "text/html; charset=utf-8");
  assert.match(page.text, /^<!DOCTYPE html><html lang="en">/);
  assert.match(page.text, /<title>Remix on Workers<\/title>/);
  assert.ok(page.text.includes(`<h1>${greeting}</h1>`), page.text.slice(0, 2000));
  const context = page.text.match(/window\.__remixContext = (\{.*?\});/)?.[1];
  assert.ok(context, "the context the client hydrates with");
  assert.equal(JSON.parse(context).future.v3_singleFetch, true);
  const scripts = [...page.text.matchAll(/<link rel="modulepreload" href="([^"]+)"\/>/g)].map((m) => m[1]);
  assert.ok(scripts.some((s) => /^\/assets\/entry\.client-[\w-]+\.js$/.test(s)), scripts.join(", "));
  assert.ok(scripts.some((s) => /^\/assets\/_index-[\w-]+\.js$/.test(s)), scripts.join(", "));

  // The client build's scripts, served as assets of build/client/ (the Worker is not asked).
  for (const script of scripts) {
    const asset = await get(script);
    assert.equal(asset.status, 200, script);
    assert.equal(asset.headers["content-type"], "text/javascript; charset=utf-8", script);
    assert.equal(asset.text, fs.readFileSync(path.join(dir, "build", "client", script), "utf8"), script);
    assert.equal((await get(script, { headers: { "if-none-match": asset.headers.etag } })).status, 304, script);
  }
  const manifest = JSON.parse(page.text.match(/"url": ("\/assets\/manifest-[\w-]+\.js")/)?.[1] ?? "null");
  assert.ok(manifest, "the route manifest is named in the page");
  assert.match((await get(manifest)).text, /^window\.__remixManifest=/);

  // Lazy route discovery: the client asks the Worker for the routes of a link before following it.
  const version = JSON.parse(page.text.match(/"version": ("[\w-]+")/)?.[1] ?? "null");
  const discovered = await get(`/__manifest?p=${encodeURIComponent("/guestbook")}&version=${version}`);
  assert.equal(discovered.status, 200);
  assert.match(discovered.headers["content-type"], /^application\/json/);
  const patches = JSON.parse(discovered.text);
  assert.equal(patches["routes/guestbook"].path, "guestbook");
  assert.equal(patches["routes/guestbook"].hasAction, true);
  assert.ok(scripts.includes(patches["routes/guestbook"].imports[0]), "the route's chunks are assets of the same build");

  // Client-side navigation's data: one single-fetch request, turbo-stream encoded.
  const data = await get("/_root.data");
  assert.equal(data.status, 200);
  assert.equal(data.headers["content-type"], "text/x-script");
  assert.equal(data.headers["x-remix-response"], "yes");
  assert.match(data.text, /"routes\/_index"/);
  assert.ok(data.text.includes(JSON.stringify(greeting)), data.text);

  // A plain form post (no JavaScript): the action stores the entry in KV and redirects.
  const posted = await get("/guestbook", form({ name: "Ada" }));
  assert.equal(posted.status, 302);
  assert.equal(posted.headers.location, "/guestbook");
  assert.match((await get("/guestbook", { headers: navigation })).text, /<ul><li>Ada<\/li><\/ul>/);
  // The same action as the client submits it (single fetch): the redirect comes back as data.
  const fetched = await get("/guestbook.data", form({ name: "Lin" }));
  assert.equal(fetched.status, 202);
  assert.equal(fetched.headers["content-type"], "text/x-script");
  assert.match(fetched.text, /"redirect","\/guestbook","status",302/);
  const entries = await get("/guestbook.data");
  assert.equal(entries.status, 200);
  assert.match(entries.text, /"entries",\[\d+,\d+\],"Ada","Lin"/);
  // An invalid submission: the action's 400, its message rendered in the page.
  const invalid = await get("/guestbook", form({ name: " " }));
  assert.equal(invalid.status, 400);
  assert.match(invalid.text, /<p role="alert">Please write your name<\/p>/);
  // A path no route (and no asset) matches: Remix's 404, rendered by the root error boundary.
  const missing = await get("/no/such/page", { headers: navigation });
  assert.equal(missing.status, 404);
  assert.equal(missing.headers["content-type"], "text/html; charset=utf-8");
  assert.match(missing.text, /<body><h1>404 Not Found<\/h1>/);
  assert.equal((await get("/no/such/page.data")).status, 404);
  assert.ok(lines.some((line) => /POST \/guestbook\.data 202/.test(line)), lines.join("\n"));
});

test("Vite + React starter: the SPA from assets, its fallback only for navigations, the Worker's API", PREPARE, async (t) => {
  const dir = await builtStarter(t, "vite-react");
  const { server, request: get } = await serve(t, dir, { persistTo: false });
  assert.equal(server.project.configFile, path.join(dir, "dist", "vite_react_starter", "wrangler.json"));

  const index = await get("/", { headers: navigation });
  assert.equal(index.status, 200);
  assert.equal(index.headers["content-type"], "text/html; charset=utf-8");
  assert.match(index.text, /<div id="root"><\/div>/);
  assert.equal(index.text, fs.readFileSync(path.join(dir, "dist", "client", "index.html"), "utf8"));
  const script = index.text.match(/<script type="module" crossorigin src="([^"]+)">/)?.[1];
  const style = index.text.match(/<link rel="stylesheet" crossorigin href="([^"]+)">/)?.[1];
  assert.ok(script && style, index.text);
  const js = await get(script);
  assert.equal(js.status, 200);
  assert.equal(js.headers["content-type"], "text/javascript; charset=utf-8");
  assert.match(js.text, /\/api\/name/, "the app's code, which calls the API");
  assert.equal((await get(style)).headers["content-type"], "text/css; charset=utf-8");
  assert.equal((await get("/logo.svg")).headers["content-type"], "image/svg+xml");
  assert.equal((await get("/.assetsignore")).status, 404, "the plugin's ignore file is no asset");

  // A client-side route: navigations get the app (not_found_handling: single-page-application);
  // other requests for it go on to the Worker, which has no such route.
  const route = await get("/settings/profile", { headers: navigation });
  assert.equal(route.status, 200);
  assert.equal(route.text, index.text);
  for (const headers of [{}, { "sec-fetch-mode": "cors" }, { accept: "text/html" }]) {
    const other = await get("/settings/profile", { headers });
    assert.equal(other.status, 404, JSON.stringify(headers));
    assert.equal(other.text, "");
  }
  const missingScript = await get("/assets/missing.js", { headers: { "sec-fetch-mode": "no-cors" } });
  assert.equal(missingScript.status, 404);

  // The API.
  const name = await get("/api/name");
  assert.equal(name.status, 200);
  assert.equal(name.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(name.text), { name: "Cloudflare" });
  const echo = await get("/api/echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ hello: [1, 2] }) });
  assert.deepEqual(JSON.parse(echo.text), { method: "POST", body: { hello: [1, 2] } });
  assert.equal((await get("/", { method: "POST", body: "x" })).status, 405, "a path that is an asset refuses POST, as on Cloudflare");
});
