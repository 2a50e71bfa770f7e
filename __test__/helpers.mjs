// Shared test helpers: start workers that are always disposed, run code inside a worker, copy
// project fixtures to temporary folders, and run attacks in child processes.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createWorker, dispatch } from "../index.js";
import { emulated, scaled, spawnNode, timeScale } from "./child-node.mjs";
import v8 from "node:v8";
import vm from "node:vm";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * Copies fixture `parts` (under __test__/fixtures) into a temporary folder removed when the test
 * ends. Dependencies its package.json names that are fixture packages (__test__/fixtures/packages)
 * are put in its node_modules, as an offline `npm install` would.
 */
export function copyFixture(t, ...parts) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-fixture-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(FIXTURES, ...parts), dir, { recursive: true });
  const manifest = path.join(dir, "package.json");
  const dependencies = fs.existsSync(manifest) ? Object.keys(JSON.parse(fs.readFileSync(manifest, "utf8")).dependencies ?? {}) : [];
  for (const name of dependencies) {
    const source = path.join(FIXTURES, "packages", name);
    if (fs.existsSync(source)) fs.cpSync(source, path.join(dir, "node_modules", name), { recursive: true });
  }
  return dir;
}

/** Starts a worker for the duration of one test; disposed when the test ends. */
export async function useWorker(t, options) {
  // Under an emulator the default 30 s CPU and wall limits are scaled like the tests' own bounds
  // (limits a test sets are kept); unchanged otherwise.
  if (emulated()) options = { ...options, limits: { cpuMs: scaled(30_000), wallMs: scaled(30_000), ...options?.limits } };
  const worker = await createWorker({ onLog: () => {}, ...options });
  t.after(() => worker.dispose());
  return worker;
}

/** Runs `body` (the inside of an async function) in a fresh worker and returns its JSON result. */
export async function evalInWorker(t, body, options = {}) {
  const script = `export default { async fetch(request, env, ctx) {
    const result = await (async () => { ${body} })();
    return Response.json(result === undefined ? null : result);
  } }`;
  const worker = await useWorker(t, { script, filename: "eval-in-worker.js", ...options });
  const response = await dispatch(worker, "http://localhost/");
  return response.json();
}

/** Waits (up to `ms`, times WORKERBOX_TEST_TIME_SCALE) until `condition()` is true; log lines arrive asynchronously. */
export async function waitFor(condition, ms = 2000) {
  ms = scaled(ms);
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms: ${condition}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Runs `source` with `node -e` in a child process (`env` added to ours), killed after
 * `timeoutMs`. Resolves to `{ status, signal, stderr (its end), lived (ms), ...JSON on stdout }`:
 * for attacks that could take the test process down.
 */
export function runChild(source, env, timeoutMs) {
  return new Promise((resolve) => {
    const started = Date.now();
    const proc = spawnNode(["-e", source], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
    proc.stderr.setEncoding("utf8").on("data", (c) => (stderr = (stderr + c).slice(-3000)));
    const timer = setTimeout(() => proc.kill("SIGKILL"), scaled(timeoutMs));
    proc.on("exit", (status, signal) => {
      clearTimeout(timer);
      let result = {};
      try {
        result = JSON.parse(stdout);
      } catch {}
      resolve({ status, signal, stderr, lived: Date.now() - started, ...result });
    });
  });
}

/** A child program's first line: createWorker and dispatch from this checkout. */
export const ATTACK_PRELUDE = `const { createWorker, dispatch } = require(${JSON.stringify(path.join(ROOT, "index.js"))});`;

/**
 * The child program's expression that starts the attacked worker under `limits`: its fetch
 * handler runs the statements in process.env.ATTACK, and answers "fine" on /ok.
 */
export const attackWorker = (limits) => `createWorker({
        script: \`export default { async fetch(request) {
          if (request.url.endsWith("/ok")) return new Response("fine");
          \${process.env.ATTACK};
          return new Response("attack finished");
        } }\`,
        limits: ${JSON.stringify(limits)}, pool: false, onLog() {},
      })`;

/**
 * Runs `attack` (statements inside a fetch handler) in a worker in a child process, then a
 * benign request to the same worker. Resolves to { status, signal, first, then, stderr,
 * peakBeforeMb, peakMb } (the child's peak RSS before the attack and at the end).
 */
export function attackInChild(attack, { memoryMb = 64, timeoutMs = 120_000 } = {}) {
  // The default 30 s CPU and wall limits, stretched under an emulator (a 100M-element fill alone
  // takes longer than 30 s there); unchanged otherwise.
  const limits = timeScale() > 1 ? { memoryMb, cpuMs: scaled(30_000), wallMs: scaled(30_000) } : { memoryMb };
  const child = `
    ${ATTACK_PRELUDE}
    (async () => {
      const worker = await ${attackWorker(limits)};
      // The process's peak RSS, before the attack and after it.
      const peakMb = () => Number(/VmHWM:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
      const peakBeforeMb = peakMb();
      const first = await dispatch(worker, "http://localhost/").then(
        async (r) => ({ status: r.status, body: await r.text() }),
        (e) => ({ code: e.code, name: e.name, message: e.message }),
      );
      const then = await dispatch(worker, "http://localhost/ok").then((r) => r.text(), (e) => "error " + e.code);
      await worker.dispose();
      process.stdout.write(JSON.stringify({ first, then, peakBeforeMb, peakMb: peakMb() }));
    })();`;
  return runChild(child, { ATTACK: attack }, timeoutMs);
}

/**
 * Runs `attack` in a child process (attackInChild) and checks that it ended as ERR_MEMORY_LIMIT:
 * the child alive, and the restarted worker serving the next request. Resolves to the result.
 */
export async function expectMemoryLimitInChild(attack, options) {
  const result = await attackInChild(attack, options);
  assert.equal(result.signal, null, `the child was killed by ${result.signal}: ${result.stderr}`);
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.first?.code, "ERR_MEMORY_LIMIT", JSON.stringify(result.first));
  assert.equal(result.then, "fine", "the restarted worker serves the next request");
  return result;
}

const VITEST = path.join(ROOT, "node_modules", "vitest", "vitest.mjs");

/** Runs `vitest run` in `cwd` with the JSON reporter: { code, report, output }. */
export function runVitest(cwd, extra = [], env = {}) {
  const outputFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-vitest-report-")), "report.json");
  return new Promise((resolve, reject) => {
    const child = spawnNode([VITEST, "run", "--reporter=json", "--reporter=default", `--outputFile.json=${outputFile}`, ...extra], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", VITE_CONFIG_NATIVE_IGNORE_WARNING: "true", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), scaled(60_000));
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      const report = fs.existsSync(outputFile) ? JSON.parse(fs.readFileSync(outputFile, "utf8")) : null;
      fs.rmSync(path.dirname(outputFile), { recursive: true, force: true });
      resolve({ code, report, output });
    });
  });
}

/**
 * A project folder in examples/ (where `workerbox/vitest` resolves to this checkout) named
 * `.tmp-vitest-<tag>-…`, holding `files` (content by relative path), removed when the test ends.
 */
export function vitestProject(t, tag, files) {
  const dir = fs.mkdtempSync(path.join(ROOT, "examples", `.tmp-vitest-${tag}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** A free loopback TCP port (for a server a test starts). */
export async function freePort() {
  const net = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

/**
 * Node 20 can deadlock exporting a key made by generateKeyPairSync() while V8 has not yet
 * collected the generation job: a collection during the export (it allocates the JWK's or PEM's
 * strings) runs the job's destructor, which waits for the key's lock that the export holds (a
 * test file then hangs at load; 5 of 80 runs of node-crypto.test.mjs did). One full collection
 * right after generating ends those jobs first. Call it before exporting freshly generated keys.
 */
export function collectKeyJobs() {
  v8.setFlagsFromString("--expose-gc");
  vm.runInNewContext("gc")();
}
