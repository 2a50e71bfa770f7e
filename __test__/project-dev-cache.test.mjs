// The caches of `workerbox dev` (lib/project/bundle-cache.js, lib/project/code-cache.js): a start
// whose inputs did not change is served from the cached bundle (same code, esbuild not run); an
// edited input, a new file that would now resolve first, a nearer node_modules package, an edited
// package.json or tsconfig base file and a config change all miss; a damaged cache slot is
// ignored with a log line; `cache: false` keeps nothing; a project folder removed before the
// late writes is not made again; the code cache folder is pruned oldest-used first.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { loadProject, startDevServer } from "workerbox/project";
import { createWorker, dispatch } from "../index.js";

import { scaled } from "./child-node.mjs";
const require = (await import("node:module")).createRequire(import.meta.url);
const { pruneCodeCache } = require("../lib/project/code-cache.js");
const { cacheRoot, bundleCache } = require("../lib/project/bundle-cache.js");
const { bundle } = require("../lib/project/bundle.js");
const { readProjectConfig } = require("../lib/project/config-cloudflare.js");

/** Writes `files` under a new temp project, everything dated 10 s back (older than any build). */
function project(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-dev-cache-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  write(dir, files);
  backdate(dir);
  return dir;
}

function write(dir, files) {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** Dates every file and folder under `dir` 10 s back. */
function backdate(dir) {
  const past = new Date(Date.now() - 10_000);
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) walk(p);
      fs.utimesSync(p, past, past);
    }
    fs.utimesSync(d, past, past);
  };
  walk(dir);
}

const BASE = {
  "wrangler.jsonc": JSON.stringify({ name: "cache-app", main: "src/index.ts", compatibility_date: "2025-06-01", define: { LABEL: '"one"' } }),
  "src/index.ts": `import { greeting } from "./greeting";\nimport { lib } from "lib";\ndeclare const LABEL: string;\nexport default { fetch(): Response { return new Response(\`\${greeting} \${lib} \${LABEL}\`); } };\n`,
  "src/greeting.ts": `export const greeting: string = "v1";\n`,
  "node_modules/lib/package.json": JSON.stringify({ name: "lib", main: "index.js" }),
  "node_modules/lib/index.js": `export const lib = "root-lib";\n`,
};

/** Loads the project with the cache (no esbuild context kept), waits for its save, and answers one request. */
async function load(t, dir, options = {}) {
  const loaded = await loadProject(dir, { persistTo: false, cache: true, ...options });
  const saved = await loaded.settled();
  await loaded.dispose();
  const worker = await createWorker({ ...loaded.options, pool: false });
  t.after(() => worker.dispose());
  const text = await (await dispatch(worker, "http://x/")).text();
  return { project: loaded, saved, text };
}

test("a start whose inputs did not change is served from the cached bundle, the same code", async (t) => {
  const dir = project(t, BASE);
  const first = await load(t, dir);
  assert.equal(first.project.cache.status, "miss");
  assert.deepEqual(first.saved, { saved: true });
  assert.equal(first.text, "v1 root-lib one");
  const second = await load(t, dir);
  assert.deepEqual(second.project.cache, { status: "hit" });
  assert.equal(second.project.options.script, first.project.options.script);
  assert.deepEqual(second.project.inputs, first.project.inputs);
  assert.equal(second.text, first.text);
  // The cached source map still maps the bundle back to the TypeScript file.
  assert.ok(second.project.options.sourceMap.sources.some((s) => s.endsWith("greeting.ts")), JSON.stringify(second.project.options.sourceMap.sources));
});

test("an edited input misses, even at the same size", async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting: string = "v2";\n`);
  const after = await load(t, dir);
  assert.equal(after.project.cache.status, "miss");
  assert.match(after.project.cache.message, /greeting\.ts changed/);
  assert.equal(after.text, "v2 root-lib one");
});

test("a new file that would now resolve first misses (greeting.tsx before greeting.ts)", async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  assert.equal((await load(t, dir)).project.cache.status, "hit");
  write(dir, { "src/greeting.tsx": `export const greeting: string = "shadow";\n` });
  const after = await load(t, dir);
  assert.equal(after.project.cache.status, "miss");
  assert.equal(after.text, "shadow root-lib one");
});

test("a nearer node_modules package misses", async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  write(dir, { "src/node_modules/lib/package.json": JSON.stringify({ name: "lib", main: "index.js" }), "src/node_modules/lib/index.js": `export const lib = "near-lib";\n` });
  const after = await load(t, dir);
  assert.equal(after.project.cache.status, "miss");
  assert.equal(after.text, "v1 near-lib one");
});

test("a package.json edited in place (a new main) misses", async (t) => {
  const dir = project(t, { ...BASE, "node_modules/lib/other.js": `export const lib = "other-lib";\n` });
  await load(t, dir);
  fs.writeFileSync(path.join(dir, "node_modules/lib/package.json"), JSON.stringify({ name: "lib", main: "other.js" }));
  const after = await load(t, dir);
  assert.equal(after.project.cache.status, "miss");
  assert.equal(after.text, "v1 other-lib one");
});

test("an edited tsconfig base file (through extends) misses", async (t) => {
  const dir = project(t, {
    "wrangler.jsonc": JSON.stringify({ name: "cache-paths", main: "src/index.ts", compatibility_date: "2025-06-01" }),
    "tsconfig.json": `{\n  // the shared settings\n  "extends": "./tsconfig.base.json"\n}\n`,
    "tsconfig.base.json": JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@pick": ["./src/a.ts"] } } }),
    "src/a.ts": `export const pick = "a";\n`,
    "src/b.ts": `export const pick = "b";\n`,
    "src/index.ts": `import { pick } from "@pick";\nexport default { fetch(): Response { return new Response(pick); } };\n`,
  });
  assert.equal((await load(t, dir)).text, "a");
  assert.equal((await load(t, dir)).project.cache.status, "hit");
  fs.writeFileSync(path.join(dir, "tsconfig.base.json"), JSON.stringify({ compilerOptions: { baseUrl: ".", paths: { "@pick": ["./src/b.ts"] } } }));
  const after = await load(t, dir);
  assert.equal(after.project.cache.status, "miss");
  assert.match(after.project.cache.message, /tsconfig\.base\.json changed/);
  assert.equal(after.text, "b");
});

test("a config change that changes the build misses", async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "cache-app", main: "src/index.ts", compatibility_date: "2025-06-01", define: { LABEL: '"two"' } }));
  const after = await load(t, dir);
  assert.deepEqual(after.project.cache, { status: "miss", message: "the build settings changed" });
  assert.equal(after.text, "v1 root-lib two");
});

test("a damaged cache slot is ignored with a log line, removed, and the worker bundled again", async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  const [slot] = fs.readdirSync(cacheRoot({ root: dir }));
  const slotDir = path.join(cacheRoot({ root: dir }), slot);
  const start = async () => {
    const lines = [];
    const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, watch: false, log: (line) => lines.push(line) });
    const text = await (await fetch(server.url)).text();
    await server.close();
    return { lines, text, cache: server.project.cache };
  };
  // A torn manifest.
  fs.writeFileSync(path.join(slotDir, "manifest.json"), '{"format":1,"key":');
  const torn = await start();
  assert.equal(torn.text, "v1 root-lib one");
  assert.equal(torn.cache.status, "corrupt");
  assert.ok(torn.lines.some((line) => /^▲ ignoring the bundle cache .*manifest\.json is not valid JSON/.test(line)), torn.lines.join("\n"));
  // An edited bundle (its hash no longer matches the manifest's).
  const script = path.join(slotDir, "index.js");
  fs.writeFileSync(script, fs.readFileSync(script, "utf8").replace("v1", "XX"));
  const edited = await start();
  assert.equal(edited.text, "v1 root-lib one");
  assert.ok(edited.lines.some((line) => /^▲ ignoring the bundle cache .*does not match its manifest/.test(line)), edited.lines.join("\n"));
  // Saved again, the next start hits.
  const again = await start();
  assert.deepEqual(again.cache, { status: "hit" });
  assert.equal(again.text, "v1 root-lib one");
});

test("after a start from the cache, a saved edit reloads (esbuild's context is made then or in the background)", { timeout: scaled(60_000) }, async (t) => {
  const dir = project(t, BASE);
  await load(t, dir);
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.deepEqual(server.project.cache, { status: "hit" });
  assert.equal(await (await fetch(server.url)).text(), "v1 root-lib one");
  const reloaded = once(server, "reload", { signal: AbortSignal.timeout(20_000) });
  fs.writeFileSync(path.join(dir, "src", "greeting.ts"), `export const greeting: string = "v9";\n`);
  const [event] = await reloaded;
  assert.equal(event.ok, true, String(event.error));
  assert.equal(await (await fetch(server.url)).text(), "v9 root-lib one");
  assert.ok(!lines.some((line) => line.includes("differs")), lines.join("\n"));
});

test("cache: false (--no-cache) keeps no bundle cache", async (t) => {
  const dir = project(t, BASE);
  const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, watch: false, cache: false, log: () => {} });
  assert.equal(await (await fetch(server.url)).text(), "v1 root-lib one");
  await server.close();
  assert.equal(fs.existsSync(cacheRoot({ root: dir })), false);
});

test("a project folder removed while its bundle's files are still to be written is not made again by them", async (t) => {
  const dir = project(t, BASE);
  const config = await readProjectConfig(dir);
  const cache = bundleCache(config);
  // bundle() returns before its copy in .workerbox/bundle/ and the cache slot are written (a dev
  // server writes them while the worker is created); the folder goes meanwhile, as a test's
  // temporary copy may before its dev server is closed.
  await bundle(config, { cache });
  fs.rmSync(dir, { recursive: true, force: true });
  await cache.pending;
  assert.equal(fs.existsSync(dir), false);
  assert.deepEqual(cache.lastSave, { skipped: `the project folder ${dir} is gone` });
});

test("the code cache folder is pruned to its budget, the entries used longest ago first", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-code-cache-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const now = Date.now() / 1000;
  for (let i = 0; i < 8; i++) {
    const file = path.join(dir, `${i}.v8cache`);
    fs.writeFileSync(file, Buffer.alloc(1000));
    // Entry i was last used i hours ago (by access time, later than its modification time).
    fs.utimesSync(file, now - i * 3600, now - 100 * 3600);
  }
  fs.writeFileSync(path.join(dir, "snapshot-x.bin"), Buffer.alloc(5000));
  assert.deepEqual(pruneCodeCache(dir, { maxBytes: 10_000 }), { files: 8, bytes: 8000, removed: 0, removedBytes: 0 });
  const outcome = pruneCodeCache(dir, { maxBytes: 4000 });
  assert.deepEqual(outcome, { files: 8, bytes: 8000, removed: 5, removedBytes: 5000 });
  assert.deepEqual(fs.readdirSync(dir).sort(), ["0.v8cache", "1.v8cache", "2.v8cache", "snapshot-x.bin"]);
});
