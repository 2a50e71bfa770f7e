// Soak: 10,000 create/dispose cycles (after a warm-up) leave no threads behind, grow RSS by well
// under 50 MB, and their second half adds next to nothing (no per-create leak).
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

const CYCLES = 10_000;
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

test(`${CYCLES} create/dispose cycles: RSS growth stays under 50 MB, the second half adds next to nothing, and every thread is joined`, { timeout: 300_000 }, async (t) => {
  // Warm up allocators and V8's process-wide state before taking the baseline. Every worker
  // starts two threads, and glibc gives threads their own malloc arenas: RSS climbs for the
  // first few thousand cycles while those arenas reach their high-water marks (measured: +35 MB
  // after 4,000 cycles, +50 after 8,000, +52 after 16,000), then stays flat. A leak does not.
  await cycle({ next: 0 }, 4000);
  const baseline = rssMb();
  const started = performance.now();
  const counter = { next: 0 };
  await cycle(counter, CYCLES / 2);
  const half = rssMb();
  await cycle(counter, CYCLES);
  const end = rssMb();
  const growthMb = end - baseline;
  t.diagnostic(`${CYCLES} cycles in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS growth ${growthMb.toFixed(1)} MB (second half ${(end - half).toFixed(1)} MB)`);
  assert.ok(growthMb < 50, `RSS grew by ${growthMb.toFixed(1)} MB`);
  // A leak of 2 KB per create would add 10 MB over the second half.
  assert.ok(end - half < 10, `the second ${CYCLES / 2} cycles grew RSS by ${(end - half).toFixed(1)} MB`);
  // The warm pool (on by default) served some of the creates; its spare goes too.
  const { hits, misses } = poolStats();
  t.diagnostic(`warm pool: ${hits} hits, ${misses} misses`);
  await clearPool();
  // dispose() resolves after the isolate thread is joined; the dispose helper threads end just after.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(workerThreads(), 0);
});
