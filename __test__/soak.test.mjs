// Soak: 8,000 create/dispose cycles (after 2,000 to warm up) leave no threads behind and grow RSS
// by under 80 MB.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { createWorker, dispatch, clearPool, poolStats } from "../index.js";

// Node's own heap grows by tens of MB between its major GCs; collect it before each reading so
// the numbers show what the addon keeps, not when Node last collected.
v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

const CYCLES = 8_000;
// Creates before the baseline; with CYCLES, 10,000 in all, which fits the runner's 60 s bound on
// the whole file (--test-timeout applies to each test file as well as to each test).
const WARMUP = 2_000;
const PARALLEL = 4;
const SCRIPT = `export default { fetch() { return new Response("x") } }`;

function workerThreads() {
  return readdirSync("/proc/self/task").filter((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").startsWith("wb-");
    } catch {
      return false;
    }
  }).length;
}

/** Runs create/dispose cycles until `cycles` have been made, PARALLEL at a time. */
async function cycle(counter, cycles) {
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (counter.next < cycles) {
        const n = counter.next++;
        const worker = await createWorker({ script: SCRIPT, onLog() {} });
        if (n % 100 === 0) assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "x");
        await worker.dispose();
      }
    }),
  );
}

const rssMb = () => {
  gc();
  return process.memoryUsage().rss / 1024 / 1024;
};

test(`${CYCLES} create/dispose cycles after a warm-up: RSS growth stays under 80 MB and every thread is joined`, { timeout: 300_000 }, async (t) => {
  // Warm up allocators and V8's process-wide state before taking the baseline. RSS climbs over
  // the first thousands of cycles, then keeps creeping up in jumps of 256 KB mappings (V8-sized
  // pages), more on Node 24 and 26 than on Node 20 and 22. Measured on this VM, RSS growth after
  // 4k / 8k / 12k / 16k / 20k / 24k cycles: Node 22 +36 / +50 / +52 / +53 MB (to 16k); Node 26
  // +33 / +49 / +75 / +83 / +84 / +86 MB; Node 24 +29 / +49 / +74 / +81 / +107 / +135 MB; the
  // commit that moved to V8 15.2 stayed near +50 MB to 24k on Node 24. Not explained yet (see
  // issue #13's note): the bound below, after the warm-up, catches a leak of 10 KB per create.
  await cycle({ next: 0 }, WARMUP);
  const baseline = rssMb();
  const started = performance.now();
  const counter = { next: 0 };
  await cycle(counter, CYCLES);
  const growthMb = rssMb() - baseline;
  t.diagnostic(`${CYCLES} cycles in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS growth ${growthMb.toFixed(1)} MB`);
  assert.ok(growthMb < 80, `RSS grew by ${growthMb.toFixed(1)} MB`);
  // The warm pool (on by default) served some of the creates; its spare goes too.
  const { hits, misses } = poolStats();
  t.diagnostic(`warm pool: ${hits} hits, ${misses} misses`);
  await clearPool();
  // dispose() resolves after the isolate thread is joined; the dispose helper threads end just after.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(workerThreads(), 0);
});
