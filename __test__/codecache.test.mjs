// V8's code cache: a script loaded before (and CommonJS and node: modules, and node:vm's scripts
// in a worker with allowEval) is compiled from the cache, in memory and through options.cacheDir
// across processes; a corrupt entry is refused by V8 and replaced.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { codeCacheStats, createWorker, dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { execNode } from "./child-node.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const uniqueScript = (tag) => `const tag = ${JSON.stringify(tag)};\nexport default { fetch() { return new Response(tag); } }`;
// These tests count compiles, so they opt out of the warm pool (whose spares compile too).
const delta = (before, after) => Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));

test("a script loaded again in the process is compiled from the code cache", async (t) => {
  const script = uniqueScript(`memory ${process.hrtime.bigint()}`);
  const start = codeCacheStats();
  const first = await useWorker(t, { script, pool: false });
  assert.deepEqual(delta(start, codeCacheStats()), { hits: 0, misses: 1, rejected: 0, stored: 1 });
  const middle = codeCacheStats();
  const second = await useWorker(t, { script, pool: false });
  assert.deepEqual(delta(middle, codeCacheStats()), { hits: 1, misses: 0, rejected: 0, stored: 0 });
  assert.equal(await (await dispatch(second, "http://x/")).text(), await (await dispatch(first, "http://x/")).text());
  const off = codeCacheStats();
  await useWorker(t, { script, codeCache: false, pool: false });
  assert.deepEqual(delta(off, codeCacheStats()), { hits: 0, misses: 0, rejected: 0, stored: 0 });
});

test("CommonJS modules and node: modules are compiled from the code cache the second time", async (t) => {
  const tag = `commonjs ${process.hrtime.bigint()}`;
  const options = {
    script: `import lib from "./lib.cjs";\nexport default { fetch() { return new Response(lib.tag); } }`,
    modules: { "lib.cjs": `module.exports = { tag: ${JSON.stringify(tag)} };` },
    pool: false,
  };
  const start = codeCacheStats();
  const first = await useWorker(t, options);
  assert.deepEqual(delta(start, codeCacheStats()), { hits: 0, misses: 2, rejected: 0, stored: 2 });
  const middle = codeCacheStats();
  const second = await useWorker(t, options);
  assert.deepEqual(delta(middle, codeCacheStats()), { hits: 2, misses: 0, rejected: 0, stored: 0 });
  assert.equal(await (await dispatch(second, "http://x/")).text(), tag);
  assert.equal(await (await dispatch(first, "http://x/")).text(), tag);
  // A node: module (compiled in the first worker of the process that imports it) is found again.
  const node = { script: `import path from "node:path";\nexport default { fetch() { return new Response(path.join("a", ${JSON.stringify(tag)})); } }`, compatibilityFlags: ["nodejs_compat"], pool: false };
  await useWorker(t, node);
  const again = codeCacheStats();
  const third = await useWorker(t, node);
  const counts = delta(again, codeCacheStats());
  assert.equal(counts.misses, 0);
  assert.ok(counts.hits >= 2, `hits: ${counts.hits}`);
  assert.equal(await (await dispatch(third, "http://x/")).text(), `a/${tag}`);
});

test("node:vm's runInThisContext compiles through the code cache in a worker that allows eval, keeping its positions", async (t) => {
  const tag = `vm ${process.hrtime.bigint()}`;
  // A module evaluator's shape (Vitest's): the same code and file name in a new worker each time.
  const code = (name) => `(function () { return function probe() { return [${JSON.stringify(tag)}, ${JSON.stringify(name)}, new Error("here").stack.split("\\n")[1]]; }; })()`;
  const options = {
    script: `import vm from "node:vm";\nexport default { async fetch(request) { const probe = vm.runInThisContext(await request.text(), { filename: "/virtual/mod.js", lineOffset: 4, columnOffset: 2 }); return Response.json(probe()); } }`,
    compatibilityFlags: ["nodejs_compat"],
    allowEval: true,
    pool: false,
  };
  const run = async (name) => {
    const before = codeCacheStats();
    const worker = await useWorker(t, options);
    const answer = await (await dispatch(worker, { url: "http://x/", method: "POST", body: code(name) })).json();
    return { answer, counts: delta(before, codeCacheStats()) };
  };
  const first = await run("a");
  assert.equal(first.answer[0], tag);
  assert.match(first.answer[2], /\/virtual\/mod\.js:5:\d+/);
  // The same code again: nothing compiled from source, and the same answer and position.
  const again = await run("a");
  assert.deepEqual(again.answer, first.answer);
  assert.equal(again.counts.misses, 0);
  // Other code in the same worker: its vm script alone is a miss, so `again` had it from the cache.
  const other = await run("b");
  assert.equal(other.counts.misses, 1);
  assert.equal(other.counts.hits, again.counts.hits - 1);
  // A syntax error is still node:vm's own SyntaxError, thrown to the caller.
  const broken = await useWorker(t, { ...options, script: `import vm from "node:vm";\nexport default { fetch() { try { vm.runInThisContext("let = ;", { filename: "/virtual/bad.js" }); return new Response("no error"); } catch (e) { return new Response(e.name); } } }` });
  assert.equal(await (await dispatch(broken, "http://x/")).text(), "SyntaxError");
});

test("a worker that runs new code through node:vm all the time stops adding cache entries after 4,096", async (t) => {
  const tag = `many ${process.hrtime.bigint()}`;
  const worker = await useWorker(t, {
    script: `import vm from "node:vm";\nexport default { fetch() { let sum = 0; for (let i = 0; i < 4200; i++) sum += vm.runInThisContext(${JSON.stringify(`/* ${tag} */ `)} + i); return new Response(String(sum)); } }`,
    compatibilityFlags: ["nodejs_compat"],
    allowEval: true,
    pool: false,
  });
  const before = codeCacheStats();
  assert.equal(await (await dispatch(worker, "http://x/")).text(), String((4199 * 4200) / 2));
  const counts = delta(before, codeCacheStats());
  // Each new script is a miss and an entry until the worker holds 4,096 to refresh (its own
  // module among them); the rest compile without the cache.
  assert.ok(counts.misses >= 4000 && counts.misses <= 4096, `misses: ${counts.misses}`);
  assert.equal(counts.stored, counts.misses);
});

test("cacheDir keeps the cache for later processes; a corrupt entry is refused and replaced", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-cache-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = uniqueScript(`disk ${process.hrtime.bigint()}`);
  const child = `const { createWorker, dispatch, codeCacheStats } = require(${JSON.stringify(root)});
    (async () => {
      const w = await createWorker({ script: ${JSON.stringify(script)}, cacheDir: ${JSON.stringify(dir)}, pool: false, onLog() {} });
      const text = await (await dispatch(w, "http://x/")).text();
      await w.dispose();
      process.stdout.write(JSON.stringify({ text, ...codeCacheStats() }));
    })();`;
  // The first process also keeps its startup snapshot in cacheDir; later processes load it, so
  // the V8 code cache (tied to the snapshot it was made with) is valid for them too. (No per-user
  // cache here: with one, a process whose cacheDir lacks a snapshot takes the user's.)
  const run = () => JSON.parse(execNode(["-e", child], { encoding: "utf8", timeout: 30_000, env: { ...process.env, WORKERBOX_CACHE_DIR: "" } }));
  const first = run();
  assert.equal(first.misses, 1);
  // Stored once loaded, and again when disposed (with what the request compiled).
  assert.equal(first.stored, 2);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".v8cache"));
  assert.equal(files.length, 1);
  const snapshots = fs.readdirSync(dir).filter((f) => /^snapshot-[0-9a-f]+\.bin$/.test(f));
  assert.equal(snapshots.length, 1, `files: ${fs.readdirSync(dir)}`);
  const second = run();
  assert.deepEqual([second.hits, second.misses, second.rejected, second.text], [1, 0, 0, first.text]);
  fs.writeFileSync(path.join(dir, files[0]), Buffer.alloc(256, 0x5a));
  const third = run();
  assert.deepEqual([third.rejected, third.stored, third.text], [1, 2, first.text]);
  assert.ok(fs.statSync(path.join(dir, files[0])).size > 256, "the corrupt entry was replaced");
  // A damaged snapshot file is not used: the process makes its own and writes it back.
  const snapshot = path.join(dir, snapshots[0]);
  fs.truncateSync(snapshot, 1000);
  const fourth = run();
  assert.equal(fourth.text, first.text);
  assert.ok(fs.statSync(snapshot).size > 100_000, "the damaged snapshot was replaced");
  // Its fresh snapshot differs from the one the entry was made with: V8 refuses, we re-store.
  assert.deepEqual([fourth.rejected, fourth.stored], [1, 2]);
  const fifth = run();
  assert.deepEqual([fifth.hits, fifth.rejected, fifth.text], [1, 0, first.text]);
});

test("the main script's entry is made again when the worker is disposed, with the functions its requests compiled", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-cache-refresh-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // A function the top level does not call: V8 compiles it lazily, on the first request.
  const body = Array.from({ length: 200 }, (_, i) => `  total += (n * ${i + 1}) % ${i + 7};`).join("\n");
  const script = `const tag = ${JSON.stringify(`refresh ${process.hrtime.bigint()}`)};\nfunction work(n) {\n  let total = 0;\n${body}\n  return total;\n}\nexport default { fetch() { return new Response(tag + " " + work(3)); } }`;
  const entrySize = (request) => {
    for (const file of fs.readdirSync(dir)) if (file.endsWith(".v8cache")) fs.rmSync(path.join(dir, file));
    const child = `const { createWorker, dispatch } = require(${JSON.stringify(root)});
      (async () => {
        const w = await createWorker({ script: ${JSON.stringify(script)}, cacheDir: ${JSON.stringify(dir)}, pool: false, onLog() {} });
        if (${request}) await (await dispatch(w, "http://x/")).text();
        await w.dispose();
      })();`;
    execNode(["-e", child], { encoding: "utf8", timeout: 30_000, env: { ...process.env, WORKERBOX_CACHE_DIR: "" } });
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".v8cache"));
    assert.equal(files.length, 1, `files: ${files}`);
    return fs.statSync(path.join(dir, files[0])).size;
  };
  const idle = entrySize(false);
  const served = entrySize(true);
  assert.ok(served > idle + 500, `the entry after a request (${served} bytes) holds more code than one without (${idle} bytes)`);
});

test("without cacheDir the startup snapshot is kept in the per-user cache (WORKERBOX_CACHE_DIR), and an empty value keeps nothing", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-user-cache-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const child = `const { createWorker, dispatch } = require(${JSON.stringify(root)});
    (async () => {
      const w = await createWorker({ script: "export default { fetch() { return new Response('ok') } }", pool: false, onLog() {} });
      process.stdout.write(await (await dispatch(w, "http://x/")).text());
      await w.dispose();
    })();`;
  // Each run gets a home and XDG cache of its own under `dir`, so nothing reaches the real ones.
  const run = (env) => {
    const base = { ...process.env, HOME: path.join(dir, "home"), XDG_CACHE_HOME: path.join(dir, "xdg") };
    delete base.WORKERBOX_CACHE_DIR;
    return execNode(["-e", child], { encoding: "utf8", timeout: 30_000, env: { ...base, ...env } });
  };
  const snapshotsIn = (folder) => (fs.existsSync(folder) ? fs.readdirSync(folder).filter((f) => /^snapshot-[0-9a-f]+\.bin$/.test(f)) : []);
  const userCache = path.join(dir, "user");
  assert.equal(run({ WORKERBOX_CACHE_DIR: userCache }), "ok");
  const snapshots = snapshotsIn(userCache);
  assert.equal(snapshots.length, 1, `files: ${fs.readdirSync(userCache)}`);
  const made = fs.statSync(path.join(userCache, snapshots[0])).mtimeMs;
  // The next process loads it (the file is not rewritten) and answers the same.
  assert.equal(run({ WORKERBOX_CACHE_DIR: userCache }), "ok");
  assert.equal(fs.statSync(path.join(userCache, snapshots[0])).mtimeMs, made);
  // A damaged one is not used, and is replaced.
  fs.truncateSync(path.join(userCache, snapshots[0]), 1000);
  assert.equal(run({ WORKERBOX_CACHE_DIR: userCache }), "ok");
  assert.ok(fs.statSync(path.join(userCache, snapshots[0])).size > 100_000, "the damaged snapshot was replaced");
  // Without WORKERBOX_CACHE_DIR: $XDG_CACHE_HOME/workerbox, else ~/.cache/workerbox.
  assert.equal(run({}), "ok");
  assert.equal(snapshotsIn(path.join(dir, "xdg", "workerbox")).length, 1);
  assert.equal(run({ XDG_CACHE_HOME: "" }), "ok");
  assert.equal(snapshotsIn(path.join(dir, "home", ".cache", "workerbox")).length, 1);
  // An empty WORKERBOX_CACHE_DIR keeps nothing on disk (the process makes its own in memory).
  fs.rmSync(path.join(dir, "xdg"), { recursive: true, force: true });
  fs.rmSync(path.join(dir, "home"), { recursive: true, force: true });
  assert.equal(run({ WORKERBOX_CACHE_DIR: "" }), "ok");
  assert.deepEqual([fs.existsSync(path.join(dir, "xdg")), fs.existsSync(path.join(dir, "home"))], [false, false]);
});

test("options.codeCache and options.cacheDir are validated", async () => {
  const { createWorker } = await import("../index.js");
  await assert.rejects(createWorker({ script: uniqueScript("x"), codeCache: "yes" }), /options\.codeCache must be a boolean/);
  await assert.rejects(createWorker({ script: uniqueScript("x"), cacheDir: 5 }), /options\.cacheDir must be a directory path/);
});

test("a new snapshot file leaves only the three newest snapshots of other builds beside it, and a flipped byte makes a file unusable", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-snapshot-prune-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // Five snapshots of "other builds", a day apart (their contents are never read), and a file
  // that is not a snapshot.
  const others = [1, 2, 3, 4, 5].map((age) => {
    const name = `snapshot-${"0".repeat(31)}${age}.bin`;
    fs.writeFileSync(path.join(dir, name), "old");
    const when = new Date(Date.now() - age * 86_400_000);
    fs.utimesSync(path.join(dir, name), when, when);
    return name;
  });
  fs.writeFileSync(path.join(dir, "notes.txt"), "keep");
  const child = `require(${JSON.stringify(root)}).createWorker({ script: "export default { fetch() { return new Response('ok') } }", pool: false, onLog() {} }).then((w) => w.dispose());`;
  const run = () => execNode(["-e", child], { encoding: "utf8", timeout: 30_000, env: { ...process.env, WORKERBOX_CACHE_DIR: dir } });
  run();
  const left = fs.readdirSync(dir).sort();
  const own = left.filter((f) => f.startsWith("snapshot-") && !others.includes(f));
  assert.equal(own.length, 1, `files: ${left}`);
  assert.deepEqual(left.filter((f) => others.includes(f)), others.slice(0, 3).sort(), "the three newest others stay");
  assert.ok(left.includes("notes.txt"));
  // One flipped byte in the middle fails the checksum: the next process makes its own again.
  const file = path.join(dir, own[0]);
  const bytes = fs.readFileSync(file);
  bytes[bytes.length >> 1] ^= 0xff;
  fs.writeFileSync(file, bytes);
  const before = fs.statSync(file).mtimeMs;
  run();
  assert.ok(fs.statSync(file).mtimeMs > before, "the damaged snapshot was written again");
  assert.notDeepEqual(fs.readFileSync(file), bytes);
});

test("a large main script's entry is made once the worker has been up a moment, not on its start; or when it is disposed before then", async (t) => {
  // 300 KB of functions the top level does not call (over the 256 KiB from which the entry waits).
  const padding = Array.from({ length: 6000 }, (_, i) => `function unused${i}(n) { return n * ${i} + ${i % 7}; }`).join("\n");
  const script = (tag) => `const tag = ${JSON.stringify(tag)};\n${padding}\nexport default { fetch() { return new Response(tag); } }`;
  const big = script(`deferred ${process.hrtime.bigint()}`);
  assert.ok(big.length > 256 * 1024);
  const start = codeCacheStats();
  const first = await useWorker(t, { script: big, pool: false });
  // Compiled without an entry, and none made yet: the start did not pay for it.
  assert.deepEqual(delta(start, codeCacheStats()), { hits: 0, misses: 1, rejected: 0, stored: 0 });
  assert.match(await (await dispatch(first, "http://x/")).text(), /^deferred /);
  // Made while the worker idles, without disposing it (bounded wait: it is due 250 ms after the start).
  const until = Date.now() + 10_000;
  while (delta(start, codeCacheStats()).stored === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.equal(delta(start, codeCacheStats()).stored, 1);
  const middle = codeCacheStats();
  const second = await useWorker(t, { script: big, pool: false });
  assert.deepEqual(delta(middle, codeCacheStats()), { hits: 1, misses: 0, rejected: 0, stored: 0 });
  assert.equal(await (await dispatch(second, "http://x/")).text(), await (await dispatch(first, "http://x/")).text());

  // Disposed before it was due: the entry is made then, once.
  const other = script(`disposed ${process.hrtime.bigint()}`);
  const before = codeCacheStats();
  const third = await createWorker({ script: other, pool: false, onLog() {} });
  await third.dispose();
  assert.deepEqual(delta(before, codeCacheStats()), { hits: 0, misses: 1, rejected: 0, stored: 1 });
  const fourth = await useWorker(t, { script: other, pool: false });
  assert.match(await (await dispatch(fourth, "http://x/")).text(), /^disposed /);
  assert.equal(delta(before, codeCacheStats()).hits, 1);
});
