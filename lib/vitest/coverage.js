// workerbox/vitest's `--coverage` with @vitest/coverage-v8: V8's precise coverage of each test
// isolate, taken through the worker inspector (src/runtime/inspector.rs, lib/inspector.js). A
// runner isolate measured this way is created with the inspector on (loopback, a port of its own)
// and imports lib/vitest/coverage-v8-runtime.mjs where Vitest's runtime imports
// "@vitest/coverage-v8"; that module asks the pool here to start and take the coverage, which a
// DevTools session to the isolate does (Profiler.startPreciseCoverage / takePreciseCoverage), as
// @vitest/coverage-v8 does in Node with node:inspector. The scripts' results go back to Vitest's
// v8 provider in Node, which maps them through Vite's transforms and source maps. With
// @vitest/coverage-istanbul nothing is needed here: the instrumented code's counters are the
// isolate's own globals, which Vitest's runtime hands back as in Node.
"use strict";

const path = require("node:path");

const V8_RUNTIME = path.join(__dirname, "coverage-v8-runtime.mjs");
/** workerbox's own lib/ (the runner, cloudflare:test's module) is never the project's coverage. */
const PACKAGE_ROOT = path.resolve(__dirname, "..", "..");

/** Whether the project measures coverage with V8's provider. */
function wantsV8Coverage(project) {
  const coverage = project.config.coverage;
  return Boolean(coverage?.enabled) && coverage.provider === "v8";
}

/** What the runner worker needs for V8 coverage: createWorker options and loader aliases. */
function coverageWorkerOptions(project) {
  if (!wantsV8Coverage(project)) return { options: {}, aliases: {} };
  return {
    options: { inspector: { port: 0, host: "127.0.0.1", name: `workerbox-vitest-coverage-${process.pid}` } },
    aliases: { "@vitest/coverage-v8": V8_RUNTIME },
  };
}

/** A DevTools session to `url` (the worker's inspector): `post(method, params)` resolves to the result. */
async function openSession(url) {
  const WebSocket = require("ws");
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  let next = 1;
  const waiting = new Map();
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    const pending = message.id !== undefined && waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(`workerbox/vitest: the inspector refused ${pending.method}: ${message.error.message}`));
    else pending.resolve(message.result);
  });
  ws.on("close", () => {
    for (const pending of waiting.values()) pending.reject(new Error(`workerbox/vitest: the inspector session closed during ${pending.method}`));
    waiting.clear();
  });
  return {
    post(method, params = {}) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject, method });
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => ws.close(),
  };
}

/** A script's URL as Node's inspector gives it (file:// for a path), or null for one that is not a file. */
function fileUrl(url) {
  if (url.startsWith("file://")) return url;
  if (path.isAbsolute(url)) return require("node:url").pathToFileURL(url).href;
  return null;
}

/** Whether V8's result for a script (its file URL) is one the provider would keep. */
function keep(url) {
  if (url.includes("/node_modules/") || url.includes("/@id/@vitest/") || url.includes("/@vite/client")) return false;
  const file = require("node:url").fileURLToPath(url);
  return !file.startsWith(path.join(PACKAGE_ROOT, "lib") + path.sep);
}

/**
 * The pool's answer to the runner's `/coverage/<action>` requests: "start" (a session, the
 * profiler and precise coverage with call counts and block detail, as @vitest/coverage-v8 asks),
 * "take" (`{ result }`: the project's scripts' coverage, URLs as file:// URLs) and "stop".
 * `worker()` gives the runner's worker.
 */
function coverageHost(worker) {
  let session = null;
  return async (action) => {
    if (action === "start") {
      if (session === null) {
        const url = worker()?.inspectorUrl;
        if (!url) return new Response("V8 coverage needs the runner's inspector, which is off", { status: 409 });
        session = await openSession(url);
        await session.post("Profiler.enable");
        await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: true });
      }
      return Response.json(true);
    }
    if (session === null) return new Response(`coverage ${action} before start`, { status: 409 });
    if (action === "take") {
      const { result } = await session.post("Profiler.takePreciseCoverage");
      const kept = [];
      for (const entry of result) {
        const url = fileUrl(entry.url);
        if (url !== null && keep(url)) kept.push({ ...entry, url });
      }
      return Response.json({ result: kept });
    }
    if (action === "stop") {
      await session.post("Profiler.stopPreciseCoverage").catch(() => {});
      await session.post("Profiler.disable").catch(() => {});
      session.close();
      session = null;
      return Response.json(true);
    }
    return new Response(`unknown coverage action ${action}`, { status: 404 });
  };
}

module.exports = { coverageWorkerOptions, coverageHost, wantsV8Coverage, openSession };
