// The DevTools endpoint (createWorker's `inspector`): discovery on /json/list and /json/version,
// a CDP session over a WebSocket that sets a breakpoint, pauses on it and on `debugger`,
// evaluates on the paused frame and resumes; console messages reach the session; the CPU
// profiler works; a pause does not trip the wall-clock limit; waitForDebugger holds the script's
// start until a client says so; nothing listens once the worker is disposed. Loopback only.
import { test } from "node:test";
import assert from "node:assert/strict";
import WebSocket from "ws";
import { createWorker, dispatch } from "../index.js";
import { freePort } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

/** A minimal CDP client: send(method, params) → result; events by name. */
async function connect(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  let next = 1;
  const pending = new Map();
  const waiting = [];
  const events = [];
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call.reject(new Error(`${message.error.message} (${message.error.code})`));
      else call.resolve(message.result);
      return;
    }
    events.push(message);
    for (const waiter of [...waiting]) {
      if (waiter.method === message.method && waiter.test(message.params)) {
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve(message.params);
      }
    }
  });
  return {
    events,
    send(method, params = {}) {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    /** The first event `method` (passing `test`), already seen or next. */
    once(method, test = () => true) {
      const seen = events.find((e) => e.method === method && test(e.params));
      if (seen) return Promise.resolve(seen.params);
      return this.next(method, test);
    },
    /** The next event `method` from now on. */
    next(method, test = () => true) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${method} within 10 s`)), 10_000);
        waiting.push({ method, test, resolve: (p) => (clearTimeout(timer), resolve(p)) });
      });
    },
    close: () => new Promise((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve() : ws.once("close", resolve).close())),
  };
}

const SCRIPT = `
export default {
  async fetch(request) {
    const url = new URL(request.url);
    let total = 0;
    for (let i = 1; i <= 4; i++) total += i;
    console.log("total is", total);
    if (url.pathname === "/debugger") debugger;
    return new Response(String(total));
  },
};`;

test("discovery, a breakpoint, evaluation on the paused frame, console messages and resume", async (t) => {
  const worker = await createWorker({ script: SCRIPT, filename: "/app/worker.js", inspector: { port: 0, name: "my-worker" }, limits: { wallMs: 500 }, onLog() {} });
  t.after(() => worker.dispose());
  const base = worker.inspectorUrl.replace(/^ws:/, "http:").replace(/\/[^/]+$/, "");
  assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
  const list = await (await fetch(`${base}/json/list`)).json();
  assert.equal(list.length, 1);
  assert.equal(list[0].title, "my-worker");
  assert.equal(list[0].webSocketDebuggerUrl, worker.inspectorUrl);
  assert.equal(list[0].type, "node");
  assert.equal((await (await fetch(`${base}/json/version`)).json())["Protocol-Version"], "1.3");

  const cdp = await connect(worker.inspectorUrl);
  t.after(() => cdp.close());
  await cdp.send("Runtime.enable");
  await cdp.send("Debugger.enable");
  const script = await cdp.once("Debugger.scriptParsed", (p) => p.url.endsWith("/app/worker.js"));
  // Line 6 (0-based 5): `console.log("total is", total);`
  const { breakpointId } = await cdp.send("Debugger.setBreakpointByUrl", { lineNumber: 6, url: script.url });
  const pausedNow = cdp.next("Debugger.paused");
  const answered = dispatch(worker, "http://w/").then((r) => r.text());
  const paused = await pausedNow;
  assert.deepEqual(paused.hitBreakpoints, [breakpointId]);
  const frame = paused.callFrames[0];
  const { result } = await cdp.send("Debugger.evaluateOnCallFrame", { callFrameId: frame.callFrameId, expression: "total * 10" });
  assert.equal(result.value, 100);
  // Paused longer than limits.wallMs: the request still completes.
  await new Promise((resolve) => setTimeout(resolve, 700));
  await cdp.send("Debugger.removeBreakpoint", { breakpointId });
  await cdp.send("Debugger.resume");
  assert.equal(await answered, "10");
  const consoleCall = await cdp.once("Runtime.consoleAPICalled");
  assert.equal(consoleCall.type, "log");
  assert.deepEqual(consoleCall.args.map((a) => a.value), ["total is", 10]);

  // A `debugger` statement pauses too; Runtime.evaluate works while the worker is idle.
  const stoppedNow = cdp.next("Debugger.paused");
  const second = dispatch(worker, "http://w/debugger").then((r) => r.text());
  const stopped = await stoppedNow;
  assert.equal(stopped.callFrames[0].functionName, "fetch");
  await cdp.send("Debugger.resume");
  assert.equal(await second, "10");
  const evaluated = await cdp.send("Runtime.evaluate", { expression: "typeof WebSocketPair + ' ' + navigator.userAgent" });
  assert.equal(evaluated.result.value, "function Cloudflare-Workers");
});

test("the CPU profiler records a profile", async (t) => {
  const worker = await createWorker({ script: SCRIPT, inspector: { port: 0 }, onLog() {} });
  t.after(() => worker.dispose());
  const cdp = await connect(worker.inspectorUrl);
  t.after(() => cdp.close());
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.start");
  for (let i = 0; i < 20; i++) await dispatch(worker, "http://w/");
  const { profile } = await cdp.send("Profiler.stop");
  assert.ok(Array.isArray(profile.nodes) && profile.nodes.length > 0);
  assert.ok(profile.endTime > profile.startTime);
  // A heap snapshot arrives in chunks that make one JSON document.
  await cdp.send("HeapProfiler.enable");
  await cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  const snapshot = JSON.parse(cdp.events.filter((e) => e.method === "HeapProfiler.addHeapSnapshotChunk").map((e) => e.params.chunk).join(""));
  assert.ok(snapshot.snapshot.node_count > 1000, `${snapshot.snapshot.node_count} nodes`);
});

test("a pause longer than the CPU limit does not stop the request", async (t) => {
  const worker = await createWorker({ script: SCRIPT, inspector: { port: 0 }, limits: { cpuMs: scaled(50) }, onLog() {} });
  t.after(() => worker.dispose());
  const cdp = await connect(worker.inspectorUrl);
  t.after(() => cdp.close());
  await cdp.send("Debugger.enable");
  const pausedNow = cdp.next("Debugger.paused");
  const answered = dispatch(worker, "http://w/debugger").then((r) => r.text());
  await pausedNow;
  await new Promise((resolve) => setTimeout(resolve, scaled(300)));
  await cdp.send("Debugger.resume");
  assert.equal(await answered, "10");
});

/** A free loopback port (for an endpoint found by discovery before createWorker resolves). */

test("waitForDebugger holds the script's start until a client runs it", async (t) => {
  const port = await freePort();
  const started = createWorker({ script: `globalThis.began = true; export default { fetch() { return new Response(String(globalThis.began)); } };`, inspector: { port, waitForDebugger: true, name: "waiting" }, onLog() {} });
  let settled = false;
  started.then(() => (settled = true), () => (settled = true));
  let target;
  for (let i = 0; i < 100 && !target; i++) {
    target = await fetch(`http://127.0.0.1:${port}/json/list`).then((r) => r.json()).then((list) => list.find((e) => e.title === "waiting"), () => undefined);
    if (!target) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(target, "the waiting worker is listed");
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(settled, false, "createWorker waits for the debugger");
  const cdp = await connect(target.webSocketDebuggerUrl);
  t.after(() => cdp.close());
  await cdp.send("Runtime.enable");
  await cdp.send("Runtime.runIfWaitingForDebugger");
  const worker = await started;
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://w/")).text(), "true");
});

test("disposing a worker paused at a breakpoint ends the pause and the dispatch", async () => {
  const worker = await createWorker({ script: SCRIPT, inspector: { port: 0 }, onLog() {} });
  const cdp = await connect(worker.inspectorUrl);
  await cdp.send("Debugger.enable");
  const outcome = dispatch(worker, "http://w/debugger").then(() => "answered", (error) => error.code);
  await cdp.once("Debugger.paused");
  const began = Date.now();
  await worker.dispose();
  assert.equal(await outcome, "ERR_WORKER_DISPOSED");
  assert.ok(Date.now() - began < 5000, `dispose took ${Date.now() - began} ms`);
  await cdp.close();
});

test("nothing listens once the last inspected worker is disposed", async () => {
  const worker = await createWorker({ script: SCRIPT, inspector: { port: 0 }, onLog() {} });
  const url = worker.inspectorUrl.replace(/^ws:/, "http:").replace(/\/[^/]+$/, "/json/list");
  assert.equal((await fetch(url)).status, 200);
  await worker.dispose();
  await assert.rejects(fetch(url));
  await assert.rejects(createWorker({ script: SCRIPT, inspector: { port: 99999 }, onLog() {} }), /inspector\.port must be a port number/);
});

test("sourceMap: the worker's errors name the original file and line; DevTools gets the map inline", async (t) => {
  // A "bundle" whose line 2 comes from line 10 of src/app.ts (a hand-made, one-segment-per-line map).
  const script = `export default {\n  fetch() { throw new TypeError("from the original"); },\n};\n`;
  const sourceMap = { version: 3, sources: ["../src/app.ts"], names: [], mappings: "AAAA;AASA;AAAA" };
  const worker = await createWorker({ script, filename: "/proj/dist/index.js", sourceMap, inspector: { port: 0 }, onLog() {} });
  t.after(() => worker.dispose());
  await assert.rejects(dispatch(worker, "http://w/"), (error) => {
    assert.equal(error.name, "TypeError");
    assert.match(error.stack, /\/proj\/src\/app\.ts:10:\d+/);
    assert.doesNotMatch(error.stack, /dist\/index\.js:2:/);
    return true;
  });
  const cdp = await connect(worker.inspectorUrl);
  t.after(() => cdp.close());
  await cdp.send("Debugger.enable");
  const parsed = await cdp.once("Debugger.scriptParsed", (p) => p.url === "/proj/dist/index.js");
  assert.match(parsed.sourceMapURL, /^data:application\/json;charset=utf-8;base64,/);
  const decoded = JSON.parse(Buffer.from(parsed.sourceMapURL.split(",")[1], "base64").toString());
  assert.deepEqual(decoded.sources, ["../src/app.ts"]);
  await assert.rejects(createWorker({ script, sourceMap: "{nope", onLog() {} }), /options\.sourceMap is not valid JSON/);
});

test("workerbox dev --inspect: the project's worker is listed by its name, with its bundle's source map", async (t) => {
  const { startDevServer } = await import("../lib/project/index.js");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-inspect-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "inspected-app", main: "src/index.ts", compatibility_date: "2026-08-01" }));
  fs.writeFileSync(path.join(dir, "src", "index.ts"), `const twice = (n: number): number => n * 2;\nexport default { fetch(): Response { return new Response(String(twice(21))); } };\n`);
  const port = await freePort();
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, inspect: port, persistTo: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.ok(lines.some((l) => l.includes(`ws://127.0.0.1:${port}/`)), lines.join("\n"));
  const list = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  assert.equal(list[0].title, "inspected-app");
  const cdp = await connect(list[0].webSocketDebuggerUrl);
  t.after(() => cdp.close());
  await cdp.send("Debugger.enable");
  const parsed = await cdp.once("Debugger.scriptParsed", (p) => p.url.endsWith("index.js") && p.sourceMapURL.length > 0);
  const map = JSON.parse(Buffer.from(parsed.sourceMapURL.split(",")[1], "base64").toString());
  assert.ok(map.sources.some((s) => s.endsWith("src/index.ts")), map.sources.join(", "));
  assert.equal(await (await fetch(server.url)).text(), "42");
});

test("a session carries on with the isolate that replaces one stopped by a limit", async (t) => {
  const worker = await createWorker({ script: `export default { fetch(request) { if (new URL(request.url).pathname === "/spin") for (;;); return new Response("ok"); } };`, inspector: { port: 0 }, limits: { cpuMs: scaled(50) }, onLog() {} });
  t.after(() => worker.dispose());
  const cdp = await connect(worker.inspectorUrl);
  t.after(() => cdp.close());
  assert.equal((await cdp.send("Runtime.evaluate", { expression: "6 * 7" })).result.value, 42);
  await assert.rejects(dispatch(worker, "http://w/spin"), (error) => error.code === "ERR_CPU_LIMIT");
  assert.equal(await (await dispatch(worker, "http://w/")).text(), "ok");
  assert.equal((await cdp.send("Runtime.evaluate", { expression: "typeof WebSocketPair" })).result.value, "function");
});
