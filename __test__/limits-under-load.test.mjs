// Limits on a busy machine (issue 40): with a process spinning on every core, each limit hit
// still settles with its own error code within a generous bound, the worker restarts and
// serves the next request, and a built-in that writes a billion elements still ends as a
// memory or CPU stop (never ERR_WORKER_FAILED). Bounded outcomes only; bench/limits.mjs
// reports the timings. Each worker runs in a child process, so a regression fails the test
// rather than hanging or killing the runner.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import { emulated, scaled, spawnNode } from "./child-node.mjs";
import { ATTACK_PRELUDE, runChild } from "./helpers.mjs";

/** How long any one dispatch may take to settle on a loaded machine before the test fails. */
// (The bounds and cpuMs values below are ten times larger under an emulator: scaled().)
const SETTLE_MS = scaled(20_000);

/**
 * The child program: a worker under `limits` whose fetch handler runs the attack named by the
 * path (`/cpu`, `/mem`, or `/bomb` for process.env.BOMB), and answers "fine" on /ok. It runs
 * process.env.PLAN (a JSON list of paths) in order, each followed by /ok, and prints
 * { stops: [{ path, outcome, ms }], next: [...] }. A dispatch that does not settle within
 * SETTLE_MS is recorded as "unsettled".
 */
const program = (limits) => `${ATTACK_PRELUDE}
  (async () => {
    const worker = await createWorker({
      script: \`export default { async fetch(request) {
        const path = new URL(request.url).pathname;
        if (path === "/ok") return new Response("fine");
        if (path === "/cpu") for (;;) {}
        if (path === "/mem") { const keep = []; for (;;) keep.push(new Array(1e5).fill(1.5)); }
        try { \${process.env.BOMB}; } catch (e) { return new Response(e.name + ": " + e.message); }
        return new Response("finished");
      } }\`,
      limits: ${JSON.stringify(limits)}, pool: false, onLog() {},
    });
    const timed = async (path) => {
      const started = Date.now();
      let timer;
      const unsettled = new Promise((resolve) => (timer = setTimeout(() => resolve("unsettled"), ${SETTLE_MS})));
      const outcome = await Promise.race([
        dispatch(worker, "http://localhost" + path).then((r) => r.text(), (e) => e.code ?? e.name + ": " + e.message),
        unsettled,
      ]);
      clearTimeout(timer);
      return { path, outcome, ms: Date.now() - started };
    };
    const stops = [];
    const next = [];
    for (const path of JSON.parse(process.env.PLAN)) {
      stops.push(await timed(path));
      next.push(await timed("/ok"));
    }
    if (![...stops, ...next].some((s) => s.outcome === "unsettled")) await worker.dispose();
    process.stdout.write(JSON.stringify({ stops, next }));
    process.exit(0);
  })();`;

function runPlan(limits, plan, bomb = "") {
  // Under an emulator the default 30 s CPU and wall limits scale too (limits given here are kept).
  if (emulated()) limits = { cpuMs: scaled(30_000), wallMs: scaled(30_000), ...limits };
  return runChild(program(limits), { PLAN: JSON.stringify(plan), BOMB: bomb }, 280_000);
}

/** Fails with the whole record when a child did not finish cleanly. */
function finished(result) {
  assert.equal(result.signal, null, `the child was killed by ${result.signal}: ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  assert.ok(Array.isArray(result.stops), JSON.stringify(result));
  return result;
}

describe("limits with a CPU hog on every core", { concurrency: 1, timeout: scaled(600_000) }, () => {
  let hogs = [];
  before(() => {
    hogs = Array.from({ length: os.availableParallelism() }, () => spawnNode(["-e", "for(;;){}"], { stdio: "ignore" }));
  });
  after(() => {
    for (const hog of hogs) hog.kill("SIGKILL");
  });

  // Before the fix, a turn of the isolate restarted after a memory stop could start before the
  // scheduler thread (starved of CPU) took the restart's Reset: that turn found the watchdog
  // armed, asked for nothing, and a 50 ms cpuMs loop ran on unwatched.
  test("60 limit hits in a row (50 CPU, 10 memory) each settle with their code, and the next request is served", { timeout: scaled(300_000) }, async () => {
    const plan = Array.from({ length: 60 }, (_, i) => (i % 6 === 5 ? "/mem" : "/cpu"));
    // cpuMs 100: the memory loop reaches 64 MB in about 40 ms of CPU, so most /mem hits are memory stops.
    const { stops, next } = finished(await runPlan({ cpuMs: scaled(100), memoryMb: 64 }, plan));
    assert.equal(stops.length, 60);
    for (const stop of stops) {
      // On a loaded machine the memory loop may still use its 100 ms of CPU first: either stop is right.
      const expected = stop.path === "/cpu" ? ["ERR_CPU_LIMIT"] : ["ERR_MEMORY_LIMIT", "ERR_CPU_LIMIT"];
      assert.ok(expected.includes(stop.outcome), `${stop.path}: ${JSON.stringify(stop)} (all: ${JSON.stringify(stops)})`);
    }
    assert.ok(stops.filter((s) => s.outcome === "ERR_MEMORY_LIMIT").length > 0, JSON.stringify(stops));
    assert.deepEqual(next.map((n) => n.outcome), Array(60).fill("fine"), JSON.stringify(next));
  });

  // Built-ins that write element after element without checking for termination: they ran on
  // for 5-15 s of CPU after the stop, so under cpuMs the 2 s grace ran out first (ERR_WORKER_FAILED).
  const bombs = [
    ["new Array(1e9).fill(0)", { cpuMs: scaled(50), memoryMb: 64 }, ["ERR_CPU_LIMIT", "ERR_MEMORY_LIMIT"]],
    ["new Array(1e9).fill(0)", { memoryMb: 64 }, ["ERR_MEMORY_LIMIT"]],
    ["Array.from({ length: 1e9 })", { cpuMs: scaled(50), memoryMb: 64 }, ["ERR_CPU_LIMIT", "ERR_MEMORY_LIMIT"]],
    ["Array.from({ length: 1e9 })", { memoryMb: 64 }, ["ERR_MEMORY_LIMIT"]],
  ];
  for (const [bomb, limits, expected] of bombs) {
    test(`${bomb} under ${JSON.stringify(limits)} ends as ${expected.join(" or ")}, and the worker recovers`, { timeout: scaled(300_000) }, async () => {
      const { stops, next } = finished(await runPlan(limits, ["/bomb"], bomb));
      assert.ok(expected.includes(stops[0].outcome), JSON.stringify(stops[0]));
      assert.equal(next[0].outcome, "fine");
    });
  }

  test("JSON.parse of a text nested ten million levels deep is a RangeError before V8 parses it", { timeout: scaled(300_000) }, async () => {
    const { stops, next } = finished(await runPlan({ memoryMb: 128 }, ["/bomb"], "JSON.parse('['.repeat(1e7))"));
    assert.match(stops[0].outcome, /^RangeError: JSON\.parse\(\): the text nests arrays and objects more than 1048576 levels deep/);
    assert.equal(next[0].outcome, "fine");
  });
});
