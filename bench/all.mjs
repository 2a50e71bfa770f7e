// bench/all.mjs: runs every benchmark in bench/, workerbox beside its peers on this machine
// (Miniflare, and where a target names them edge-runtime, wrangler dev or Cloudflare's Vitest
// integration), and sums them up against the project's targets.
//
// Each bench runs as its own child process (`node bench/<name>.mjs [--quick]`), one after
// another, and prints one JSON object on stdout; its progress goes straight to our stderr.
//
//   node bench/all.mjs [--quick] [--markdown] [--bench=dispatch,kv,...]
//     --quick     passes --quick to every bench (short runs, a few minutes in all)
//     --markdown  stdout gets only the Markdown table (the JSON is still written to the file)
//     --bench=…   run only these benches (names from BENCHES below)
//
// Output:
//   stdout                     the combined JSON, a blank line, then the Markdown table
//                              (metric | workerbox | peer | ratio | target | met?)
//   bench/results/latest.json  the combined JSON: every bench's own JSON plus the table rows
//   bench/results/latest.md    the Markdown table
//
// ratio = how many times better workerbox is (peer / workerbox for times and memory,
// workerbox / peer for throughput; > 1 means workerbox wins). "met?" is computed from the
// measured numbers against the targets in TARGETS. A bench that exits non-zero or prints no
// JSON becomes an error row, an engine that reports { error } shows the error in its cell; the
// other benches still run, and all.mjs then exits 1.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const markdownOnly = process.argv.includes("--markdown");
const known = new Set(["--quick", "--markdown"]);
for (const arg of process.argv.slice(2)) {
  if (!known.has(arg) && !arg.startsWith("--bench=")) throw new Error(`bench/all.mjs: unknown argument ${arg}`);
}

// Every bench takes --quick; none needs more flags here (streaming's --quick is 20 MB, not 100).
const BENCHES = ["dispatch", "first-create", "kv", "d1", "durable", "websocket", "workers", "htmlrewriter", "streaming", "eventloop", "queues", "starters", "vitest", "sockets"];
const selected = process.argv.find((a) => a.startsWith("--bench="))?.slice("--bench=".length).split(",") ?? BENCHES;
for (const name of selected) if (!BENCHES.includes(name)) throw new Error(`bench/all.mjs: no bench named ${name} (have ${BENCHES.join(", ")})`);
const TIMEOUT_MS = (quick ? 10 : 60) * 60_000; // per bench

/** Runs one bench; resolves to { ok, exitCode, seconds, result } or { ok: false, error }. */
function runBench(name) {
  const args = [path.join(here, `${name}.mjs`), ...(quick ? ["--quick"] : [])];
  console.error(`[all] node bench/${name}.mjs ${args.slice(1).join(" ")}`.trimEnd());
  const start = performance.now();
  return new Promise((resolve) => {
    // Own process group, so a timeout can end the bench together with its workerd children.
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderrTail = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      process.stderr.write(chunk);
      stderrTail = (stderrTail + chunk).slice(-4000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
    }, TIMEOUT_MS);
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, error: `could not start: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const seconds = Math.round((performance.now() - start) / 100) / 10;
      let result;
      try {
        result = JSON.parse(stdout);
      } catch {}
      const lastLine = stderrTail.trim().split("\n").filter(Boolean).at(-1) ?? "";
      if (timedOut) return resolve({ ok: false, seconds, error: `timed out after ${TIMEOUT_MS / 60_000} min` });
      if (code !== 0) return resolve({ ok: false, exitCode: code, seconds, error: `exit ${code ?? signal}: ${lastLine}`, ...(result && { result }) });
      if (result === undefined || result === null || typeof result !== "object") {
        return resolve({ ok: false, exitCode: code, seconds, error: `no JSON on stdout${lastLine && `; last stderr line: ${lastLine}`}` });
      }
      resolve({ ok: true, exitCode: code, seconds, result });
    });
  });
}

// ---- the table ----

// Targets from the project's issue (for a 2-core machine). check(value, ratio) → true / false.
const TARGETS = {
  create: { text: "< 3 ms and ≥ 50×", check: (v, r) => v < 3 && r >= 50 },
  p50: { text: "< 45 µs and ≥ 40×", check: (v, r) => v < 45 && r >= 40 },
  throughput: { text: "≥ 20×", check: (v, r) => r >= 20 },
  idleMemory: { text: "≤ 3 MB", check: (v) => v <= 3 },
  live: { text: "1,000 live in one process", check: (v, r, workers) => (workers >= 1000 ? true : null) },
  suiteWall: { text: "≤ 1/3 of Cloudflare's (≥ 3×)", check: (v, r) => r >= 3 },
  suiteRss: { text: "≤ 1/2 of Cloudflare's (≥ 2×)", check: (v, r) => r >= 2 },
  fileStart: { text: "< 50 ms", check: (v) => v < 50 },
  // Performance II: beside edge-runtime (node:vm on Node's own thread) and workerd.
  firstCreate: { text: "≤ 10 ms", check: (v) => v <= 10 },
  edgeP50: { text: "≤ edge-runtime's (≥ 1×)", check: (v, r) => r >= 1 },
  edgeThroughput: { text: "≥ 1.5× edge-runtime's", check: (v, r) => r >= 1.5 },
  liveCreates: { text: "1,000 in < 3 s", check: (v, r, workers) => (workers >= 1000 ? v < 3000 : null) },
  // The 10th and the last create are each the median of ten creates; ±10% is this VM's noise.
  flatCreate: { text: "1,000th ≤ 10th (quotient ≤ 1.1)", check: (v, r, workers) => (workers >= 1000 ? v <= 1.1 : null) },
  rewriter: { text: "≥ workerd's speed (≥ 1×)", check: (v, r) => r >= 1 },
  kv: { text: "≥ 20×", check: (v, r) => r >= 20 },
};

/**
 * The rows, in order. wb / mf pick a number out of a bench's JSON (engine part), better says
 * which way wins ("lower" or "higher"; omitted: no ratio), target names a TARGETS entry.
 * label may be a function of the bench's JSON, for sizes that --quick changes. other names the
 * part of the JSON the peer column reads (default "miniflare"; "wrangler" for wrangler dev,
 * which runs Miniflare; "edge-runtime"; "cloudflare" for Cloudflare's Vitest integration).
 * engine picks the workerbox part of a bench whose JSON has none (default: r.workerbox).
 */
const ROWS = [
  { bench: "dispatch", label: "create, tiny script (ms, p50)", wb: (e) => e.createWorkerMs.p50, mf: (e) => e.createWorkerMs.p50, better: "lower", target: "create" },
  { bench: "dispatch", label: (r) => `create cold, ${kb(r)} KB script, no code cache (ms, p50)`, wb: (e) => e.createColdMs.p50, mf: (e) => e.createBigMs.p50, better: "lower", target: "create" },
  { bench: "dispatch", label: (r) => `create cached, ${kb(r)} KB script, code cache (ms, p50)`, wb: (e) => e.createCachedMs.p50, mf: (e) => e.createBigMs.p50, better: "lower", target: "create" },
  { bench: "dispatch", label: (r) => `create pooled, ${kb(r)} KB script, warm pool (ms, p50)`, wb: (e) => e.createPooledMs.p50, mf: (e) => e.createBigMs.p50, better: "lower", target: "create", optional: (r) => r.workerbox?.createPooledMs === undefined },
  { bench: "dispatch", label: "sequential dispatch p50 (µs)", wb: (e) => e.sequentialUs.p50, mf: (e) => e.sequentialUs.p50, better: "lower", target: "p50" },
  { bench: "dispatch", label: "sequential dispatch p99 (µs)", wb: (e) => e.sequentialUs.p99, mf: (e) => e.sequentialUs.p99, better: "lower" },
  { bench: "dispatch", label: "64-way concurrent throughput (req/s)", wb: (e) => e.concurrent64.rps, mf: (e) => e.concurrent64.rps, better: "higher", target: "throughput" },
  { bench: "dispatch", label: "sequential dispatch p50 (µs; peer: edge-runtime)", wb: (e) => e.sequentialUs.p50, mf: (e) => e.sequentialUs.p50, better: "lower", other: "edge-runtime", target: "edgeP50" },
  { bench: "dispatch", label: "64-way concurrent throughput (req/s; peer: edge-runtime)", wb: (e) => e.concurrent64.rps, mf: (e) => e.concurrent64.rps, better: "higher", other: "edge-runtime", target: "edgeThroughput" },
  { bench: "first-create", label: "first createWorker in a fresh process, snapshot in the user cache (ms)", wb: (e) => e.warmUserCache.createMs, target: "firstCreate", engine: (r) => r },
  { bench: "first-create", label: "first createWorker in a fresh process, Node's fetch classes loaded before (ms)", wb: (e) => e.warmUserCacheFetchLoaded.createMs, target: "firstCreate", engine: (r) => r },
  { bench: "first-create", label: "first createWorker + first request in a fresh process (ms; the request loads Node's Response)", wb: (e) => e.warmUserCache.createMs + e.warmUserCache.firstRequestMs, engine: (r) => r },
  { bench: "kv", label: "KV put + get per request, p50 (µs)", wb: (e) => e.p50 * 1000, mf: (e) => e.p50 * 1000, better: "lower", target: "kv" },
  { bench: "d1", label: "D1 insert + select per request, p50 (µs)", wb: (e) => e.p50 * 1000, mf: (e) => e.p50 * 1000, better: "lower" },
  { bench: "durable", label: "RPC call between two workers, cost over a plain dispatch, p50 (µs)", wb: (e) => e.rpcCost.p50 * 1000, mf: (e) => e.rpcCost.p50 * 1000, better: "lower" },
  { bench: "durable", label: "Durable Object increment (RPC, storage get + put) per request, p50 (µs)", wb: (e) => e.durableObjectRpc.p50 * 1000, mf: (e) => e.durableObjectRpc.p50 * 1000, better: "lower" },
  { bench: "durable", label: "Durable Object increment through fetch() per request, p50 (µs)", wb: (e) => e.durableObjectFetch.p50 * 1000, mf: (e) => e.durableObjectFetch.p50 * 1000, better: "lower" },
  { bench: "websocket", label: "WebSocket connect, upgrade dispatch to 101 answer, p50 (µs)", wb: (e) => e.connect.p50 * 1000, mf: (e) => e.connect.p50 * 1000, better: "lower" },
  { bench: "websocket", label: "WebSocket echo round trip, short text, p50 (µs)", wb: (e) => e.echoText.p50 * 1000, mf: (e) => e.echoText.p50 * 1000, better: "lower" },
  { bench: "websocket", label: "WebSocket echo round trip, 64 KiB binary, p50 (µs)", wb: (e) => e.echoBinary.p50 * 1000, mf: (e) => e.echoBinary.p50 * 1000, better: "lower" },
  { bench: "websocket", label: "WebSocket messages per second, worker to host", wb: (e) => e.workerToHost.perSecond, mf: (e) => e.workerToHost.perSecond, better: "higher" },
  { bench: "websocket", label: "WebSocket messages per second, host to worker", wb: (e) => e.hostToWorker.perSecond, mf: (e) => e.hostToWorker.perSecond, better: "higher" },
  { bench: "queues", label: "queue throughput, sendBatch of 100, send to ack (messages/s)", wb: (e) => e.batch.perSecond, mf: (e) => e.batch.perSecond, better: "higher" },
  { bench: "queues", label: "queue throughput, one send() per request, send to ack (messages/s)", wb: (e) => e.single.perSecond, mf: (e) => e.single.perSecond, better: "higher" },
  { bench: "workers", label: (r) => `RSS per idle worker, over ${r.workerbox?.idle?.workers ?? "?"} workers (MB)`, wb: (e) => e.idle.perWorkerMb, mf: (e) => e.idle.perWorkerMb, better: "lower", target: "idleMemory" },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers, one request each: RSS per worker (MB)`, wb: (e) => e.live.perWorkerMb, mf: (e) => e.live.perWorkerMb, better: "lower", target: "live", workers: (r) => r.workerbox?.live?.workers },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers: one request each, all (ms)`, wb: (e) => e.live.oneRequestEachMs, mf: (e) => e.live.oneRequestEachMs, better: "lower" },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers: all creates, one after another (ms)`, wb: (e) => e.live.creates.allMs, workers: (r) => r.workerbox?.live?.workers },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers: all creates, ${r.workerbox?.live?.creates?.parallel?.at ?? "?"} at a time (ms)`, wb: (e) => e.live.creates.parallel.allMs, target: "liveCreates", workers: (r) => r.workerbox?.live?.workers },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers: last create / 10th create (medians of ten)`, wb: (e) => Math.round((e.live.creates.lastMs / e.live.creates.tenthMs) * 100) / 100, target: "flatCreate", workers: (r) => r.workerbox?.live?.workers },
  { bench: "workers", label: (r) => `${r.workerbox?.live?.workers ?? "?"} live workers: last create / 10th create, the host's memory backed first (diagnostic; see bench/workers.mjs)`, wb: (e) => e.live.createsAfterBackedMemory.quotient, workers: (r) => r.workerbox?.live?.workers },
  { bench: "htmlrewriter", label: "HTMLRewriter, 12,000 synchronous handler calls per request, p50 (ms; peer: Miniflare's workerd)", wb: (e) => e.p50, mf: (e) => e.p50, better: "lower", target: "rewriter" },
  { bench: "streaming", label: (r) => `streaming ${r.workerbox?.megabytes ?? "?"} MB echo: time (ms)`, wb: (e) => e.ms, mf: (e) => e.ms, better: "lower" },
  { bench: "streaming", label: (r) => `streaming ${r.workerbox?.megabytes ?? "?"} MB echo: throughput (MB/s)`, wb: (e) => e.mbPerSecond, mf: (e) => e.mbPerSecond, better: "higher" },
  { bench: "streaming", label: (r) => `streaming ${r.workerbox?.megabytes ?? "?"} MB echo: peak RSS growth (MB)`, wb: (e) => e.peakRssGrowthMb, mf: (e) => e.peakRssGrowthMb, better: "lower" },
  { bench: "eventloop", label: (r) => `idle CPU, ${r.workerbox?.idleCpu?.workers ?? "?"} idle workers (CPU ms per worker per s)`, wb: (e) => e.idleCpu.cpuMsPerWorkerPerSecond, mf: (e) => e.idleCpu.cpuMsPerWorkerPerSecond, better: "lower" },
  // No ratio: Miniflare's timers are read with Date.now() at 1 ms resolution, workerbox's with performance.now().
  { bench: "eventloop", label: "1 ms setTimeout lateness p50 (ms; Miniflare in 1 ms steps)", wb: (e) => e.timerLatency1ms.p50, mf: (e) => e.timerLatency1ms.p50 },
  { bench: "eventloop", label: "1 ms setTimeout lateness p99 (ms; Miniflare in 1 ms steps)", wb: (e) => e.timerLatency1ms.p99, mf: (e) => e.timerLatency1ms.p99 },
  { bench: "starters", label: "dev server, React Router starter (built): command to first page (ms; Miniflare: wrangler dev)", wb: (e) => e["react-router"].firstResponseMs, mf: (e) => e["react-router"].firstResponseMs, better: "lower", other: "wrangler" },
  { bench: "starters", label: "dev server, React Router starter (built): RSS of the process tree (MB; Miniflare: wrangler dev)", wb: (e) => e["react-router"].rssMb, mf: (e) => e["react-router"].rssMb, better: "lower", other: "wrangler" },
  { bench: "starters", label: "dev server, D1 starter: command to first rows, migrations included (ms; Miniflare: wrangler d1 migrations apply + wrangler dev)", wb: (e) => e.d1.firstResponseMs, mf: (e) => e.d1.firstResponseWithMigrationsMs, better: "lower", other: "wrangler" },
  { bench: "starters", label: "dev server, D1 starter: RSS of the process tree (MB; Miniflare: wrangler dev)", wb: (e) => e.d1.rssMb, mf: (e) => e.d1.rssMb, better: "lower", other: "wrangler" },
  { bench: "vitest", label: "Vitest, examples/vitest (8 files): whole run (ms, median; Miniflare: @cloudflare/vitest-pool-workers)", wb: (e) => e.vitest.wallMs, mf: (e) => e.vitest.wallMs, better: "lower", other: "cloudflare", target: "suiteWall" },
  { bench: "vitest", label: "Vitest, examples/vitest: peak RSS of the process tree (MB; Miniflare: @cloudflare/vitest-pool-workers)", wb: (e) => e.vitest.peakRssMb, mf: (e) => e.vitest.peakRssMb, better: "lower", other: "cloudflare", target: "suiteRss" },
  { bench: "vitest", label: "Vitest, examples/vitest: start-up per test file, p50 (ms)", wb: (e) => e.vitest.perFileStartMs.p50, target: "fileStart" },
  { bench: "vitest", label: "Vitest, examples/vitest-hono (1 file): whole run (ms, median; Miniflare: @cloudflare/vitest-pool-workers)", wb: (e) => e["vitest-hono"].wallMs, mf: (e) => e["vitest-hono"].wallMs, better: "lower", other: "cloudflare", target: "suiteWall" },
  { bench: "vitest", label: "Vitest, examples/vitest-hono: peak RSS of the process tree (MB; Miniflare: @cloudflare/vitest-pool-workers)", wb: (e) => e["vitest-hono"].peakRssMb, mf: (e) => e["vitest-hono"].peakRssMb, better: "lower", other: "cloudflare", target: "suiteRss" },
  { bench: "sockets", label: "pg SELECT 1 round trip, p50 (µs; peer: the same pg in Node, same server)", wb: (e) => e.selectOne.p50, mf: (e) => e.selectOne.p50, better: "lower", other: "node" },
  { bench: "sockets", label: "pg SELECT 1 round trip, p99 (µs; peer: the same pg in Node, same server)", wb: (e) => e.selectOne.p99, mf: (e) => e.selectOne.p99, better: "lower", other: "node" },
];
const kb = (r) => Math.round(r.workerbox?.createColdMs?.scriptKb ?? r.miniflare?.createBigMs?.scriptKb ?? NaN);

/** A number from an engine's JSON, or { error } if the engine failed or the field is missing. */
function pick(engine, get) {
  if (engine === undefined) return { error: "not run" };
  if (engine.error) return { error: engine.error };
  try {
    const value = get(engine);
    return typeof value === "number" && Number.isFinite(value) ? { value } : { error: "missing" };
  } catch {
    return { error: "missing" };
  }
}

function buildRows(runs) {
  const rows = [];
  for (const name of selected) {
    const run = runs[name];
    if (!run.ok) {
      rows.push({ metric: `bench/${name}.mjs`, error: run.error });
      continue;
    }
    const r = run.result;
    for (const spec of ROWS.filter((s) => s.bench === name)) {
      if (spec.optional?.(r)) continue;
      const wb = pick(spec.engine ? spec.engine(r) : r.workerbox, spec.wb);
      const mf = spec.mf ? pick(r[spec.other ?? "miniflare"], spec.mf) : {};
      let ratio = null;
      if (spec.better && wb.value !== undefined && mf.value !== undefined) {
        const [num, den] = spec.better === "lower" ? [mf.value, wb.value] : [wb.value, mf.value];
        ratio = den > 0 ? Math.round((num / den) * 100) / 100 : null;
      }
      const target = spec.target ? TARGETS[spec.target] : undefined;
      let met = null; // null: no target, or nothing to judge it by
      if (target && wb.value !== undefined && (ratio !== null || !/×/.test(target.text))) {
        met = target.check(wb.value, ratio, spec.workers?.(r));
      }
      rows.push({
        metric: typeof spec.label === "function" ? spec.label(r) : spec.label,
        workerbox: wb.value ?? null,
        miniflare: mf.value ?? null,
        ratio,
        target: target?.text ?? null,
        met,
        ...((wb.error || mf.error) && { errors: { ...(wb.error && { workerbox: wb.error }), ...(mf.error && { miniflare: mf.error }) } }),
      });
    }
  }
  return rows;
}

function num(n) {
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : Math.abs(n) >= 1 ? 2 : 3;
  return n.toLocaleString("en-US", { maximumFractionDigits: digits });
}

function markdown(rows, header) {
  const cell = (text) => String(text).replace(/\|/g, "\\|").replace(/\s+/g, " ");
  const short = (text) => (text.length > 120 ? text.slice(0, 117) + "…" : text);
  const lines = [header, "", "| metric | workerbox | peer | ratio | target | met? |", "| --- | ---: | ---: | ---: | --- | :---: |"];
  for (const row of rows) {
    if (row.error !== undefined && row.workerbox === undefined) {
      lines.push(`| ${cell(row.metric)} | **error**: ${cell(short(row.error))} | — | — | — | error |`);
      continue;
    }
    const value = (v, engine) => (v !== null ? num(v) : row.errors?.[engine] ? `error: ${cell(short(row.errors[engine]))}` : "—");
    const met = row.met === true ? "yes" : row.met === false ? "**no**" : row.target ? "n/a" : "—";
    lines.push(`| ${cell(row.metric)} | ${value(row.workerbox, "workerbox")} | ${value(row.miniflare, "miniflare")} | ${row.ratio !== null ? `${num(row.ratio)}×` : "—"} | ${row.target ?? "—"} | ${met} |`);
  }
  lines.push("", "peer: Miniflare, unless the metric names another (edge-runtime, wrangler dev, Cloudflare's Vitest integration). ratio: how many times better workerbox is (> 1: workerbox wins). n/a: the target needs a number this run lacks (a --quick run has 200 live workers, not 1,000).");
  return lines.join("\n") + "\n";
}

// ---- run ----

const startedAt = new Date();
const runs = {};
for (const name of selected) {
  runs[name] = await runBench(name);
  console.error(`[all] ${name}: ${runs[name].ok ? "ok" : `FAILED (${runs[name].error})`} in ${runs[name].seconds ?? "?"} s`);
}
const rows = buildRows(runs);
const cpus = os.cpus();
const machine = { node: process.version, cpus: cpus.length, cpuModel: cpus[0]?.model, platform: `${process.platform}-${process.arch}`, totalMemGb: Math.round(os.totalmem() / 2 ** 30) };
const combined = { startedAt: startedAt.toISOString(), finishedAt: new Date().toISOString(), quick, machine, benches: runs, table: rows };
const header = `workerbox beside its peers ${quick ? "(quick run) " : ""}— ${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, Node ${machine.node}, ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.platform}`;
const table = markdown(rows, header);

const resultsDir = path.join(here, "results");
fs.mkdirSync(resultsDir, { recursive: true });
fs.writeFileSync(path.join(resultsDir, "latest.json"), JSON.stringify(combined, null, 2) + "\n");
fs.writeFileSync(path.join(resultsDir, "latest.md"), table);
if (!markdownOnly) process.stdout.write(JSON.stringify(combined, null, 2) + "\n\n");
process.stdout.write(table);

const failed = selected.filter((name) => !runs[name].ok);
const engineErrors = rows.filter((row) => row.errors).map((row) => `${row.metric}: ${JSON.stringify(row.errors)}`);
if (failed.length) console.error(`[all] failed: ${failed.join(", ")}`);
if (engineErrors.length) console.error(`[all] engine errors:\n  ${engineErrors.join("\n  ")}`);
console.error(`[all] wrote ${path.relative(process.cwd(), path.join(resultsDir, "latest.json"))} and latest.md`);
process.exitCode = failed.length || engineErrors.length ? 1 : 0;
