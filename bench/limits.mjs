// bench/limits.mjs: how workerbox's limits behave on heavy but legitimate work and on hostile
// work (issue 40), printed as one JSON object on stdout, beside workerd where it applies.
//
//   node bench/limits.mjs [--quick] [--only=payloads,recovery,oneStep] [--hog=N]
//
// payloads  Request bodies read with arrayBuffer() and hashed, fetch() responses and KV values
//           (an in-memory kv() up to 25 MiB, production's limit; a handler-backed one beyond),
//           10/25/50/95 MB at the default limits (memoryMb 128), each in its own child process:
//           outcome, time, the child's peak RSS. The same script on `workerd serve` (its KV
//           binding backed by a local HTTP service, as workerd's KV is) for comparison.
// recovery  60 limit hits in a row (50 CPU, 10 memory) and `new Array(1e9).fill(0)`, with
//           --hog=N children spinning (`node -e "for(;;){}"`, default one per core) and without:
//           how long each stop and the next dispatch take.
// oneStep   JSON.parse('['.repeat(1e7)) under memoryMb 128, new Array(1e9).fill(0) and
//           Array.from({ length: 1e9 }) under memoryMb 64, with and without the hogs: outcome,
//           time, peak RSS growth.
//
// Timings are reported, never asserted: the tests assert outcomes only.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const only = args.find((a) => a.startsWith("--only="))?.slice(7).split(",") ?? ["payloads", "recovery", "oneStep"];
const hogs = Number(args.find((a) => a.startsWith("--hog="))?.slice(6) ?? os.availableParallelism());
const MB = 1048576;

/** Runs `source` (an ES module) in a child; resolves to its JSON line (or { error }). */
function child(source, env = {}, timeoutMs = 180_000) {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--input-type=module", "-e", source], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    proc.stdout.on("data", (c) => (out += c));
    proc.stderr.on("data", (c) => (err = (err + c).slice(-2000)));
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    proc.on("exit", (status, signal) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.trim().split("\n").pop()));
      } catch {
        resolve({ error: `child exited ${status ?? signal}`, stderr: err.slice(-500) });
      }
    });
  });
}

const PEAK = `import { readFileSync as readStatus } from "node:fs";
    const peakMb = () => Number(/VmHWM:\\s+(\\d+)/.exec(readStatus("/proc/self/status", "utf8"))[1]) / 1024;`;

/** The worker script both runtimes run: reads a payload whole and hashes it. */
const PAYLOAD_SCRIPT = `export default { async fetch(req, env) {
  const u = new URL(req.url);
  const kind = u.pathname.slice(1);
  let buf;
  if (kind === "body") buf = await req.arrayBuffer();
  else if (kind === "fetch") buf = await (await fetch(u.searchParams.get("from"))).arrayBuffer();
  else buf = await env.KV.get(u.searchParams.get("key"), "arrayBuffer");
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", buf));
  return new Response(buf.byteLength + " " + [...d.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join(""));
} };`;

/** A local HTTP server answering every GET with `mb` MB of 7s (the path's last number). */
async function payloadServer(port = 0) {
  const server = http.createServer((req, res) => {
    const mb = Number(/(\d+(?:\.\d+)?)(?:\?|$)/.exec(req.url)?.[1] ?? 0);
    const size = Math.round(mb * MB);
    res.writeHead(200, { "content-length": size });
    res.end(Buffer.alloc(size, 7));
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return server;
}

async function workerboxPayload(kind, mb) {
  return child(`
    import http from "node:http";
    import { createWorker, kv } from ${JSON.stringify(path.join(root, "index.js"))};
    ${PEAK}
    const size = Math.round(${mb} * ${MB});
    const payload = Buffer.alloc(size, 7);
    const server = http.createServer((q, r) => { r.writeHead(200, { "content-length": size }); r.end(payload); });
    await new Promise((res) => server.listen(0, "127.0.0.1", res));
    const kind = ${JSON.stringify(kind)};
    // kv: the in-memory namespace (production refuses values over 25 MiB); kvHandler: a handler-backed one.
    const KV = kind === "kvHandler" ? kv({ get: async () => payload, put() {}, delete() {}, list() { return { keys: [], list_complete: true }; } }) : kv();
    if (kind === "kv") await KV.namespace().put("k", payload);
    const worker = await createWorker({ script: ${JSON.stringify(PAYLOAD_SCRIPT)}, bindings: { KV }, onLog() {} });
    const before = peakMb();
    const url = "http://x/" + (kind === "kvHandler" ? "kv" : kind) + "?key=k&from=" + encodeURIComponent("http://127.0.0.1:" + server.address().port + "/");
    const started = performance.now();
    const result = await worker.dispatch(new Request(url, kind === "body" ? { method: "POST", body: payload } : {})).then(
      async (r) => ({ ok: r.status === 200, answer: await r.text() }),
      (e) => ({ ok: false, code: e.code, error: e.message }),
    );
    result.ms = Math.round(performance.now() - started);
    result.peakGrowthMb = Math.round(peakMb() - before);
    await worker.dispose();
    server.close();
    console.log(JSON.stringify(result));
  `);
}

/** Runs the payload script on `workerd serve`; resolves to a function per case, and a stop. */
async function workerdPayloads() {
  const bin = path.join(root, "node_modules", "workerd", "bin", "workerd");
  if (!fs.existsSync(bin)) return null;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-limits-"));
  const server = await payloadServer();
  const backend = server.address().port;
  const port = 20000 + Math.floor(Math.random() * 20000);
  fs.writeFileSync(path.join(dir, "w.js"), PAYLOAD_SCRIPT);
  fs.writeFileSync(path.join(dir, "c.capnp"), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .w), (name = "kv", external = (address = "127.0.0.1:${backend}", http = ())),
               (name = "net", network = (allow = ["private", "local", "public"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const w :Workerd.Worker = (
  modules = [ (name = "w.js", esModule = embed "w.js") ],
  compatibilityDate = "2025-01-01",
  bindings = [ (name = "KV", kvNamespace = "kv") ],
  globalOutbound = "net",
);
`);
  const proc = spawn(bin, ["serve", "c.capnp"], { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (c) => (stderr = (stderr + c).slice(-2000)));
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/kv?key=k0`).then(() => true, () => false);
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const run = async (kind, mb) => {
    const started = performance.now();
    const from = `http://127.0.0.1:${backend}/${mb}`;
    const init = kind === "body" ? { method: "POST", body: Buffer.alloc(Math.round(mb * MB), 7) } : {};
    const result = await fetch(`http://127.0.0.1:${port}/${kind === "kvHandler" ? "kv" : kind}?key=k${mb}&from=${encodeURIComponent(from)}`, init).then(
      async (r) => ({ ok: r.status === 200, answer: (await r.text()).slice(0, 200) }),
      (e) => ({ ok: false, error: String(e), stderr: stderr.slice(-300) }),
    );
    result.ms = Math.round(performance.now() - started);
    return result;
  };
  const stop = () => {
    proc.kill();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { run, stop };
}

async function payloads() {
  const sizes = quick ? [10, 50] : [10, 25, 50, 95];
  const kinds = ["body", "fetch", "kv", "kvHandler"];
  const workerd = await workerdPayloads();
  const rows = [];
  for (const kind of kinds) {
    for (const mb of sizes) {
      if (kind === "kv" && mb > 25) continue; // production's value limit: kv() refuses the put
      process.stderr.write(`payloads: ${kind} ${mb} MB\n`);
      rows.push({ kind, mb, workerbox: await workerboxPayload(kind, mb), workerd: workerd && kind !== "kv" ? await workerd.run(kind, mb) : workerd && (await workerd.run("kvHandler", mb)) });
    }
  }
  workerd?.stop();
  return { note: "default limits (memoryMb 128); workerd serve has no memory limit of its own; kv: in-memory kv() (values up to 25 MiB, production's limit), kvHandler: a handler-backed namespace (workerd: its KV binding to a local HTTP service)", rows };
}

/** Children spinning on a core each, for the length of `work`. */
async function withHogs(count, work) {
  const procs = Array.from({ length: count }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
  try {
    return await work();
  } finally {
    for (const p of procs) p.kill("SIGKILL");
  }
}

async function recoveryRun() {
  const cpuHits = quick ? 10 : 50;
  const memHits = quick ? 3 : 10;
  return child(`
    import { createWorker } from ${JSON.stringify(path.join(root, "index.js"))};
    const worker = await createWorker({
      script: \`export default { async fetch(req) {
        const p = new URL(req.url).pathname;
        if (p === "/cpu") for (;;) {}
        if (p === "/mem") { const k = []; for (;;) k.push(new Array(1e5).fill(1.5)); }
        if (p === "/fill") { new Array(1e9).fill(0); }
        return new Response("fine");
      } }\`,
      limits: { cpuMs: 50, memoryMb: 64 }, pool: false, onLog() {},
    });
    const time = async (path) => {
      const started = performance.now();
      const outcome = await worker.dispatch(new Request("http://x" + path)).then((r) => r.text(), (e) => e.code);
      return { outcome, ms: Math.round(performance.now() - started) };
    };
    const stops = [];
    const next = [];
    for (let i = 0; i < ${cpuHits + memHits}; i++) {
      stops.push(await time(i % 6 === 5 && ${memHits} > 0 ? "/mem" : "/cpu"));
      next.push(await time("/ok"));
    }
    const fill = await time("/fill");
    const afterFill = await time("/ok");
    await worker.dispose();
    const summary = (list) => {
      const ms = list.map((x) => x.ms).sort((a, b) => a - b);
      const outcomes = {};
      for (const x of list) outcomes[x.outcome] = (outcomes[x.outcome] ?? 0) + 1;
      return { outcomes, medianMs: ms[Math.floor(ms.length / 2)], maxMs: ms.at(-1) };
    };
    console.log(JSON.stringify({ stops: summary(stops), nextDispatch: summary(next), fill, afterFill }));
  `, {}, 600_000);
}

async function recovery() {
  const idle = await recoveryRun();
  const loaded = await withHogs(hogs, recoveryRun);
  return { hogs, idle, loaded };
}

/** Single built-in calls that allocate without looking for a stop (issue 40). */
const ONE_STEP = [
  ["JSON.parse('['.repeat(1e7))", 128],
  ["new Array(1e9).fill(0)", 64],
  ["Array.from({ length: 1e9 })", 64],
];

async function oneStepRun(attack, memoryMb) {
  return child(`
    import { createWorker } from ${JSON.stringify(path.join(root, "index.js"))};
    ${PEAK}
    const worker = await createWorker({ script: \`export default { fetch(request) { if (request.url.endsWith("/ok")) return new Response("fine"); ${attack}; return new Response("finished"); } }\`, limits: { memoryMb: ${memoryMb} }, pool: false, onLog() {} });
    const before = peakMb();
    const started = performance.now();
    const outcome = await worker.dispatch(new Request("http://x/")).then((r) => r.text(), (e) => (e.code ?? e.name) + ": " + e.message);
    const ms = Math.round(performance.now() - started);
    const next = await worker.dispatch(new Request("http://x/ok")).then((r) => r.text(), (e) => e.code ?? e.name);
    await worker.dispose();
    console.log(JSON.stringify({ outcome: outcome.slice(0, 120), ms, peakGrowthMb: Math.round(peakMb() - before), next }));
  `);
}

async function oneStep() {
  const rows = [];
  for (const [attack, memoryMb] of ONE_STEP) {
    process.stderr.write(`oneStep: ${attack}\n`);
    rows.push({ attack, memoryMb, idle: await oneStepRun(attack, memoryMb), loaded: await withHogs(hogs, () => oneStepRun(attack, memoryMb)) });
  }
  return { hogs, rows };
}

const result = { bench: "limits", node: process.version, cores: os.availableParallelism() };
if (only.includes("payloads")) result.payloads = await payloads();
if (only.includes("recovery")) result.recovery = await recovery();
if (only.includes("oneStep")) result.oneStep = await oneStep();
console.log(JSON.stringify(result, null, 2));
