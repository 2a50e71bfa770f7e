// Soak: 8,000 create/dispose cycles (after 2,000 to warm up) leave no threads behind, and the
// RSS they add outside Node's own heap stays under 40 MB.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { createWorker, dispatch, clearPool, poolStats } from "../index.js";
import { emulated, scaled } from "./child-node.mjs";
// Node's own heap grows by tens of MB between its major GCs; collect it before each reading so
// the numbers show what the addon keeps, not when Node last collected.
v8.setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");

// Under an emulator (scripts/arm64.mjs: qemu-user, 10 to 20 times slower) a tenth of the cycles:
// the whole count outran the runner's 30 minutes for one file there.
const CYCLES = emulated() ? 800 : 8_000;
// Creates before the baseline; with CYCLES, 10,000 in all, which fits the runner's 60 s bound on
// the whole file (--test-timeout applies to each test file as well as to each test).
const WARMUP = emulated() ? 200 : 2_000;
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
/** Memory Node's own V8 heap holds (its pages are in RSS too). */
const nodeHeapMb = () => v8.getHeapStatistics().total_physical_size / 1024 / 1024;

test(`${CYCLES} create/dispose cycles after a warm-up: RSS growth outside Node's heap stays under 40 MB and every thread is joined`, { timeout: scaled(300_000) }, async (t) => {
  // Warm up allocators and V8's process-wide state before taking the baseline. RSS goes on
  // climbing slowly over tens of thousands of cycles, but not because of the addon: it is Node's
  // own young generation, which V8 grows towards its maximum while createWorker's JS allocates
  // (on Node 24, new space went from 13 to 52 MB over 12,000 cycles, and a full GC does not shrink
  // it). So Node's heap growth is measured too, and what is left is what the addon keeps: 15 MB
  // over those 12,000 cycles (allocator arenas), no 256 KB V8 page of a worker left behind. The
  // bound below catches a leak of 5 KB per create.
  await cycle({ next: 0 }, WARMUP);
  const baseline = rssMb();
  const nodeHeapBaseline = nodeHeapMb();
  const started = performance.now();
  const counter = { next: 0 };
  await cycle(counter, CYCLES);
  const growthMb = rssMb() - baseline;
  const nodeHeapGrowthMb = nodeHeapMb() - nodeHeapBaseline;
  const addonMb = growthMb - nodeHeapGrowthMb;
  t.diagnostic(`${CYCLES} cycles in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS growth ${growthMb.toFixed(1)} MB, of which Node's own heap ${nodeHeapGrowthMb.toFixed(1)} MB`);
  assert.ok(addonMb < 40, `RSS grew by ${growthMb.toFixed(1)} MB, ${addonMb.toFixed(1)} MB of it outside Node's heap`);
  // The warm pool (on by default) served some of the creates; its spare goes too.
  const { hits, misses } = poolStats();
  t.diagnostic(`warm pool: ${hits} hits, ${misses} misses`);
  await clearPool();
  // dispose() resolves after the isolate thread is joined; the dispose helper threads end just after.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(workerThreads(), 0);
});
