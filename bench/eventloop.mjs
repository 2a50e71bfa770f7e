// Benchmark: the event loop, workerbox beside Miniflare in the same run.
//   idle CPU:       CPU time burnt by N idle workers over a quiet period (workerbox: its worker
//                   threads, read from /proc/self/task; Miniflare: its workerd child processes).
//   timer latency:  how late a 1 ms setTimeout fires inside the worker, p50/p99, measured by the
//                   worker itself (workerbox: performance.now(); workerd coarsens its clocks, so
//                   Miniflare's figure is from Date.now() at 1 ms resolution).
// Prints one JSON object on stdout; progress on stderr.
//   node bench/eventloop.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const IDLE_WORKERS = quick ? 5 : 20;
const IDLE_MS = quick ? 1000 : 3000;
const TIMERS = quick ? 100 : 500;
const TICK_MS = 1000 / 100; // Linux clock ticks (USER_HZ) are 10 ms.
const progress = (...parts) => console.error("[bench]", ...parts);

const SCRIPT = `export default { async fetch(request) {
  const now = new URL(request.url).searchParams.get("clock") === "perf" ? () => performance.now() : () => Date.now();
  const late = [];
  for (let i = 0; i < ${TIMERS}; i++) {
    const start = now();
    await new Promise((resolve) => setTimeout(resolve, 1));
    late.push(now() - start - 1);
  }
  return Response.json(late);
} }`;

function percentiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  const ms = (n) => Math.round(Math.max(0, n) * 1000) / 1000;
  return { unit: "ms late", n: s.length, p50: ms(at(0.5)), p99: ms(at(0.99)), max: ms(s.at(-1)) };
}

/** Per-thread and per-process CPU ticks come from /proc: Linux only (NaN elsewhere, said once). */
let procMissing = false;
function noProc() {
  if (existsSync("/proc/self/task")) return false;
  if (!procMissing) console.error(`eventloop: idle CPU is unavailable on ${process.platform} (read from /proc, Linux only)`);
  procMissing = true;
  return true;
}

/** CPU ticks of this process's threads whose name starts with `prefix`. */
function threadTicks(prefix) {
  if (noProc()) return NaN;
  let ticks = 0;
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      if (!readFileSync(`/proc/self/task/${tid}/comm`, "utf8").startsWith(prefix)) continue;
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1].split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks;
}

/** CPU ticks of this process's child processes named `name` (with all their threads). */
function childTicks(name) {
  if (noProc()) return NaN;
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const [comm, rest] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ");
      const fields = rest.split(" ");
      if (Number(fields[1]) !== process.pid || !comm.endsWith(`(${name}`)) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks;
}

async function measure(engine) {
  const instances = [];
  for (let i = 0; i < IDLE_WORKERS; i++) instances.push(await engine.create());
  try {
    for (const instance of instances) await engine.fetchJson(instance, "http://localhost/?warm");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = engine.cpuTicks();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const used = (engine.cpuTicks() - before) * TICK_MS;
    progress(engine.name, "idle done");
    const late = await engine.fetchJson(instances[0], `http://localhost/?clock=${engine.clock}`);
    progress(engine.name, "timers done");
    return {
      idleCpu: {
        workers: IDLE_WORKERS,
        seconds: IDLE_MS / 1000,
        cpuMs: used,
        cpuMsPerWorkerPerSecond: Math.round((used / IDLE_WORKERS / (IDLE_MS / 1000)) * 1000) / 1000,
        resolution: `${TICK_MS} ms ticks`,
      },
      timerLatency1ms: { clock: engine.clock === "perf" ? "performance.now()" : "Date.now()", ...percentiles(late) },
    };
  } finally {
    for (const instance of instances) await engine.dispose(instance);
  }
}

const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const { createWorker, dispatch } = require("..");
  result.workerbox = await measure({
    name: "workerbox",
    clock: "perf",
    create: () => createWorker({ script: SCRIPT, filename: "bench.js", onLog() {} }),
    fetchJson: async (worker, url) => (await dispatch(worker, url)).json(),
    dispose: (worker) => worker.dispose(),
    cpuTicks: () => threadTicks("wb-"),
  });
}
if (only !== "workerbox") {
  try {
    const { Miniflare } = require("miniflare");
    result.miniflare = await measure({
      name: "miniflare",
      clock: "date",
      create: async () => {
        const mf = new Miniflare({ modules: true, script: SCRIPT, compatibilityDate: "2024-09-23" });
        await mf.ready;
        return mf;
      },
      fetchJson: async (mf, url) => (await mf.dispatchFetch(url)).json(),
      dispose: (mf) => mf.dispose(),
      cpuTicks: () => childTicks("workerd"),
    });
  } catch (error) {
    result.miniflare = { error: String(error?.message ?? error) };
  }
}

process.stdout.write(JSON.stringify(result, null, 2) + "\n");
