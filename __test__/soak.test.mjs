// Soak: 10,000 create/dispose cycles leave no threads behind and grow RSS by well under 50 MB.
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

test(`${CYCLES} create/dispose cycles: RSS growth stays under 50 MB and every thread is joined`, { timeout: 300_000 }, async (t) => {
  // Warm up allocators and V8's process-wide state before taking the baseline.
  for (let i = 0; i < 100; i++) await (await createWorker({ script: SCRIPT, onLog() {} })).dispose();
  gc();
  const baseline = process.memoryUsage().rss;
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < CYCLES) {
        const n = next++;
        const worker = await createWorker({ script: SCRIPT, onLog() {} });
        if (n % 100 === 0) assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "x");
        await worker.dispose();
      }
    }),
  );
  gc();
  const growthMb = (process.memoryUsage().rss - baseline) / 1024 / 1024;
  t.diagnostic(`${CYCLES} cycles in ${((performance.now() - started) / 1000).toFixed(1)} s; RSS growth ${growthMb.toFixed(1)} MB`);
  assert.ok(growthMb < 50, `RSS grew by ${growthMb.toFixed(1)} MB`);
  // The warm pool (on by default) served some of the creates; its spare goes too.
  const { hits, misses } = poolStats();
  t.diagnostic(`warm pool: ${hits} hits, ${misses} misses`);
  await clearPool();
  // dispose() resolves after the isolate thread is joined; the dispose helper threads end just after.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(workerThreads(), 0);
});
