// The warm pool: a second create of a known script is a hand-off of a booted spare, which
// gets the new caller's log sink and bindings, shares nothing with other workers, and is
// reclaimed when it idles; options that differ get their own spares; `pool: false` opts out.
import { test, after, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, kv, configurePool, poolStats, clearPool } from "../index.js";
import { waitFor } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

// idleMs outlasts a test's creates (ten times longer under an emulator).
const DEFAULTS = { spares: 1, idleMs: scaled(10_000), maxTotal: 16 };
let serial = 0;

/** A script no other test uses (its own pool key), with a module-level request counter. */
function uniqueScript(extra = "") {
  return `// script ${++serial} ${Math.random()}
    ${extra}
    let count = 0;
    export default { fetch(request, env) { count++; return Response.json({ count, env: env.X ?? null }); } };`;
}

/** Polls the pool's stats (short awaits, bounded) until `condition(stats)` holds. */
async function statsUntil(condition, ms = 10_000) {
  const deadline = Date.now() + scaled(ms);
  let stats = poolStats();
  while (!condition(stats)) {
    if (Date.now() > deadline) throw new Error(`pool stats never satisfied ${condition}: ${JSON.stringify(stats)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
    stats = poolStats();
  }
  return stats;
}

async function create(t, options) {
  const worker = await createWorker({ onLog() {}, ...options });
  t.after(() => worker.dispose());
  return worker;
}

async function json(worker) {
  return (await dispatch(worker, "http://localhost/")).json();
}

beforeEach(async () => {
  configurePool(DEFAULTS);
  await clearPool();
});

after(async () => {
  configurePool(DEFAULTS);
  await clearPool();
  const stats = poolStats();
  assert.equal(stats.ready + stats.booting, 0, JSON.stringify(stats));
});

test("the second create of a script is a pool hit, and the handed-off worker answers", async (t) => {
  const script = uniqueScript();
  const first = await create(t, { script });
  const before = await statsUntil((s) => s.ready === 1);
  const second = await create(t, { script });
  const stats = poolStats();
  assert.equal(stats.hits, before.hits + 1);
  assert.equal(stats.misses, before.misses);
  assert.equal(second.format, "module");
  assert.deepEqual(await json(second), { count: 1, env: null });
  assert.deepEqual(await json(first), { count: 1, env: null });
  // The hand-off queued a replacement.
  await statsUntil((s) => s.ready === 1);
});

test("a spare's top-level console output reaches the onLog of the worker it is handed to", async (t) => {
  const script = uniqueScript(`console.log("booted"); console.warn("careful");`);
  const firstLines = [];
  await create(t, { script, onLog: (level, message) => firstLines.push([level, message]) });
  await statsUntil((s) => s.ready === 1);
  const lines = [];
  const hits = poolStats().hits;
  await create(t, { script, onLog: (level, message) => lines.push([level, message]) });
  assert.equal(poolStats().hits, hits + 1);
  await waitFor(() => lines.length >= 2);
  assert.deepEqual(lines, [["log", "booted"], ["warn", "careful"]]);
  // The first worker saw only its own start-up, never the spare's.
  assert.deepEqual(firstLines, [["log", "booted"], ["warn", "careful"]]);
});

test("workers handed off from the pool do not share globals", async (t) => {
  const script = uniqueScript(`globalThis.seen = (globalThis.seen ?? 0) + 1;`);
  const cold = await create(t, { script });
  await statsUntil((s) => s.ready === 1);
  const a = await create(t, { script });
  await statsUntil((s) => s.ready === 1);
  const b = await create(t, { script });
  assert.equal(poolStats().hits >= 2, true);
  assert.deepEqual(await json(a), { count: 1, env: null });
  assert.deepEqual(await json(a), { count: 2, env: null });
  assert.deepEqual(await json(b), { count: 1, env: null });
  assert.deepEqual(await json(cold), { count: 1, env: null });
});

test("different env, bindings or options get their own spares (a miss, not the wrong worker)", async (t) => {
  const script = uniqueScript();
  await create(t, { script, bindings: { X: 1 } });
  await statsUntil((s) => s.ready === 1);
  const variants = [
    { bindings: { X: 2 } },
    { bindings: { X: 1, Y: kv() } },
    { bindings: { X: 1 }, allowEval: true },
    { bindings: { X: 1 }, limits: { memoryMb: 64 } },
    { bindings: { X: 1 }, filename: "other.js" },
    { bindings: { X: 1 }, modules: { "unused.txt": "x" } },
  ];
  for (const variant of variants) {
    const { hits, misses } = poolStats();
    const worker = await create(t, { script, ...variant });
    const stats = poolStats();
    assert.equal(stats.hits, hits, `hit for ${JSON.stringify(variant)}`);
    assert.equal(stats.misses, misses + 1);
    assert.deepEqual(await json(worker), { count: 1, env: variant.bindings.X });
  }
  // The original options still find their spare.
  const { hits } = poolStats();
  const same = await create(t, { script, bindings: { X: 1 } });
  assert.equal(poolStats().hits, hits + 1);
  assert.deepEqual(await json(same), { count: 1, env: 1 });
});

test("a pooled worker's bindings call the handlers of the create that took it", async (t) => {
  const script = `// kv ${Math.random()}
    export default { async fetch(request, env) { return new Response(await env.STORE.get("k")); } };`;
  const store = (value) => kv({ get: () => value, put() {}, delete() {}, list: () => ({ keys: [], list_complete: true }) });
  const first = await create(t, { script, bindings: { STORE: store("first") } });
  await statsUntil((s) => s.ready === 1);
  const hits = poolStats().hits;
  const second = await create(t, { script, bindings: { STORE: store("second") } });
  assert.equal(poolStats().hits, hits + 1);
  assert.equal(await (await dispatch(second, "http://localhost/")).text(), "second");
  assert.equal(await (await dispatch(first, "http://localhost/")).text(), "first");
});

test("spares idle past idleMs are reclaimed", async (t) => {
  configurePool({ idleMs: 200 });
  const script = uniqueScript();
  await create(t, { script });
  await statsUntil((s) => s.ready === 1);
  const { reclaimed } = poolStats();
  const stats = await statsUntil((s) => s.ready === 0 && s.booting === 0);
  assert.equal(stats.reclaimed, reclaimed + 1);
  // Reclaimed means gone: the next create is a miss again.
  const { misses } = poolStats();
  await create(t, { script });
  assert.equal(poolStats().misses, misses + 1);
});

test("pool: false never makes spares, and spares: 0 turns pooling off", async (t) => {
  const script = uniqueScript();
  const before = poolStats();
  for (let i = 0; i < 3; i++) await create(t, { script, pool: false });
  await new Promise((resolve) => setTimeout(resolve, 100));
  let stats = poolStats();
  assert.deepEqual([stats.ready, stats.booting, stats.hits, stats.misses], [0, 0, before.hits, before.misses]);

  configurePool({ spares: 0 });
  for (let i = 0; i < 3; i++) await create(t, { script });
  await new Promise((resolve) => setTimeout(resolve, 100));
  stats = poolStats();
  assert.deepEqual([stats.ready, stats.booting, stats.hits], [0, 0, before.hits]);
});

test("turning spares down disposes the ones waiting", async (t) => {
  await create(t, { script: uniqueScript() });
  await statsUntil((s) => s.ready === 1);
  const { evicted } = poolStats();
  configurePool({ spares: 0 });
  const stats = await statsUntil((s) => s.ready === 0);
  assert.equal(stats.evicted, evicted + 1);
});

test("maxTotal bounds the spares across scripts", async (t) => {
  configurePool({ maxTotal: 2 });
  for (let i = 0; i < 4; i++) {
    await create(t, { script: uniqueScript() });
    await statsUntil((s) => s.booting === 0);
  }
  const stats = poolStats();
  assert.ok(stats.ready <= 2, JSON.stringify(stats));
  assert.ok(stats.evicted >= 2, JSON.stringify(stats));
});

test("a script that fails to load rejects as before and gets no spare", async (t) => {
  const { failed } = poolStats();
  await assert.rejects(createWorker({ script: "export default { fetch( }", onLog() {} }), SyntaxError);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const stats = poolStats();
  assert.deepEqual([stats.ready, stats.booting, stats.failed], [0, 0, failed]);
});

test("clearPool disposes ready and booting spares", async (t) => {
  await Promise.all([1, 2, 3].map(() => create(t, { script: uniqueScript() })));
  await clearPool();
  const stats = poolStats();
  assert.equal(stats.ready + stats.booting, 0, JSON.stringify(stats));
});

test("configurePool and createWorker name bad pool settings", async () => {
  assert.throws(() => configurePool(), /configurePool: settings must be an object/);
  assert.throws(() => configurePool({ spares: -1 }), /configurePool: spares must be an integer of at least 0.*got -1/);
  assert.throws(() => configurePool({ idleMs: 1.5 }), /configurePool: idleMs must be an integer.*got 1\.5/);
  assert.throws(() => configurePool({ maxTotal: "4" }), /configurePool: maxTotal must be an integer.*got "4"/);
  assert.throws(() => configurePool({ size: 4 }), /configurePool: unknown setting "size"/);
  await assert.rejects(createWorker({ script: uniqueScript(), pool: "yes" }), /createWorker: options\.pool must be a boolean, got "yes"/);
  assert.deepEqual(configurePool({}), DEFAULTS);
  assert.deepEqual(configurePool({ spares: 2 }), { ...DEFAULTS, spares: 2 });
});
