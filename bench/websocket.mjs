// Benchmark: WebSockets between the host and a worker, workerbox beside Miniflare (workerd) on
// the same machine in the same run, with the same worker script. The worker's fetch() answers
// an upgrade with one end of a WebSocketPair (server.accept(), Response status 101); the host
// accepts the other end (workerbox: dispatch() in-process; Miniflare: dispatchFetch(), a real
// WebSocket over loopback to workerd) and times everything from the host with performance.now().
//   connect          dispatch of the upgrade request until the 101 answer with its socket
//                    (then the socket is closed), ms per connection
//   echoText         one small text message ("e<k>") to the worker and its echo back, one at a
//                    time, ms per round trip; every echo is checked
//   echoBinary       the same with a 64 KiB ArrayBuffer (echoed as binary; length and a few
//                    bytes checked), ms per round trip
//   workerToHost     the host sends "burst N", the worker sends N text messages ("m<i>") in one
//                    synchronous loop, then "done"; messages per second from the host's send
//                    until "done" arrives; every message is counted and checked in order
//   hostToWorker     the host sends N text messages ("h<i>") in one synchronous loop, then
//                    "count"; the worker (checking their order) answers "count <n>" when it sees
//                    "count"; messages per second from the first send until that answer
// Throughput runs are repeated (RUNS); the median run is reported, with every run's rate.
// Prints one JSON object on stdout; progress on stderr.
//   node bench/websocket.mjs [--quick] [--only=workerbox|miniflare]
import os from "node:os";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const only = process.argv.find((a) => a.startsWith("--only="))?.split("=")[1];
const WARMUP = quick ? 100 : 500; // echo round trips (and a few connects and a small burst each way) before measuring
const CONNECTS = quick ? 50 : 200;
const ECHOES = quick ? 1000 : 5000;
const BINARY_ECHOES = quick ? 200 : 1000;
const BINARY_BYTES = 64 * 1024;
const BURST = quick ? 5000 : 20000; // messages per throughput run, each way
const RUNS = quick ? 3 : 5;
const WAIT_MS = 30_000; // longest wait for any one answer before the series fails
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

const SCRIPT = `export default { async fetch(request) {
  if (request.headers.get("upgrade") !== "websocket") return new Response("expected a WebSocket upgrade", { status: 426 });
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  // Binary messages as ArrayBuffers, which send() takes back (the default is Blob from
  // websocket_standard_binary_type's date on, in workerd too).
  server.binaryType = "arraybuffer";
  let received = 0;
  let outOfOrder = 0;
  server.addEventListener("message", (event) => {
    const data = event.data;
    if (typeof data !== "string") return server.send(data);
    if (data.startsWith("h")) {
      if (data !== "h" + received) outOfOrder++;
      received++;
      return;
    }
    if (data === "count") {
      server.send(outOfOrder ? "count " + received + " out of order " + outOfOrder : "count " + received);
      received = 0;
      outOfOrder = 0;
      return;
    }
    if (data.startsWith("burst ")) {
      const n = Number(data.slice(6));
      for (let i = 0; i < n; i++) server.send("m" + i);
      return server.send("done");
    }
    server.send(data);
  });
  return new Response(null, { status: 101, webSocket: client });
} }`;

const round = (ms) => Math.round(ms * 1000) / 1000;

function summary(unit, samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  return { unit, n: s.length, mean: round(s.reduce((a, b) => a + b, 0) / s.length), p50: round(at(0.5)), p99: round(at(0.99)) };
}

/**
 * One accepted socket with a single message handler that the series swap in and out, and
 * `wait(what)`: a promise that the handler settles (socket.pending), failing when the socket
 * closes or nothing comes within WAIT_MS.
 * Note: the WAIT_MS timer also keeps Node's event loop alive while we wait. workerbox's host end
 * of a WebSocket does not (a message the worker sends after the host's send() was handled does
 * not hold Node open, so an await on it alone can end the process with exit code 13,
 * "unsettled top-level await"); the timer is here for the timeout, not to hide that.
 */
function wrap(ws, label) {
  const state = { onMessage: null, closed: null, pending: null };
  ws.addEventListener("message", (event) => {
    if (state.onMessage) state.onMessage(event.data);
    else state.pending?.reject(new Error(`${label}: unexpected message ${describe(event.data)}`));
  });
  ws.addEventListener("close", (event) => {
    state.closed = `the socket closed (code ${event.code}${event.reason ? `, reason ${JSON.stringify(event.reason)}` : ""})`;
    state.pending?.reject(new Error(`${label}: ${state.closed}`));
  });
  ws.accept();
  state.wait = (what) => {
    const waiting = new Promise((resolve, reject) => {
      if (state.closed) return reject(new Error(`${label}: ${state.closed}`));
      const timer = setTimeout(() => reject(new Error(`${label}: no ${what} within ${WAIT_MS / 1000} s`)), WAIT_MS);
      state.pending = {
        resolve: (value) => (clearTimeout(timer), (state.pending = null), resolve(value)),
        reject: (error) => (clearTimeout(timer), (state.pending = null), reject(error)),
      };
    });
    waiting.catch(() => {}); // a series that fails before awaiting it (send() threw) must not crash the run
    return waiting;
  };
  return state;
}

const describe = (data) => (typeof data === "string" ? JSON.stringify(data.length > 60 ? data.slice(0, 60) + "…" : data) : `${data?.constructor?.name ?? typeof data} of ${data?.byteLength} bytes`);

/** Sequential round trips of `make(k)`; `check(k, data)` returns an error text or null. */
async function roundTrips(socket, label, count, make, check) {
  const samples = [];
  for (let k = 0; k < count; k++) {
    const answer = socket.wait("echo");
    socket.onMessage = (data) => {
      const problem = check(k, data);
      if (problem) socket.pending?.reject(new Error(`${label}: round trip ${k}: ${problem}`));
      else socket.pending?.resolve();
    };
    const start = performance.now();
    socket.ws.send(make(k));
    await answer;
    samples.push(performance.now() - start);
  }
  socket.onMessage = null;
  return samples;
}

const textEcho = (k) => "e" + k;
const checkText = (k, data) => (data === textEcho(k) ? null : `expected ${JSON.stringify(textEcho(k))}, got ${describe(data)}`);
const binaryMessage = (k) => {
  const bytes = new Uint8Array(BINARY_BYTES);
  bytes[0] = k & 255;
  bytes[BINARY_BYTES - 1] = (k >> 8) & 255;
  bytes[BINARY_BYTES >> 1] = 0xa5;
  return bytes.buffer;
};
const checkBinary = (k, data) => {
  if (!(data instanceof ArrayBuffer)) return `expected an ArrayBuffer, got ${describe(data)}`;
  if (data.byteLength !== BINARY_BYTES) return `expected ${BINARY_BYTES} bytes, got ${data.byteLength}`;
  const bytes = new Uint8Array(data);
  return bytes[0] === (k & 255) && bytes[BINARY_BYTES - 1] === ((k >> 8) & 255) && bytes[BINARY_BYTES >> 1] === 0xa5 ? null : "the bytes differ from those sent";
};

/** "burst n": ms from the send until "done", after checking every "m<i>" came in order. */
async function burst(socket, label, n) {
  let next = 0;
  const finished = socket.wait(`"done" after a burst of ${n}`);
  socket.onMessage = (data) => {
    if (data === "done") {
      if (next === n) socket.pending?.resolve();
      else socket.pending?.reject(new Error(`${label}: "done" after ${next} of ${n} messages`));
    } else if (data === "m" + next) next++;
    else socket.pending?.reject(new Error(`${label}: burst message ${next}: expected "m${next}", got ${describe(data)}`));
  };
  const start = performance.now();
  socket.ws.send("burst " + n);
  await finished;
  const ms = performance.now() - start;
  socket.onMessage = null;
  return ms;
}

/** n messages "h<i>" then "count": ms from the first send until the worker's "count n". */
async function flood(socket, label, n) {
  const answer = socket.wait(`the answer to "count" after ${n} messages`);
  socket.onMessage = (data) => {
    if (data === "count " + n) socket.pending?.resolve();
    else socket.pending?.reject(new Error(`${label}: after ${n} messages the worker answered ${describe(data)} to "count"`));
  };
  const start = performance.now();
  for (let i = 0; i < n; i++) socket.ws.send("h" + i);
  socket.ws.send("count");
  await answer;
  const ms = performance.now() - start;
  socket.onMessage = null;
  return ms;
}

async function throughput(unit, runs, n) {
  const rates = [];
  for (let r = 0; r < RUNS; r++) rates.push(Math.round(n / ((await runs(n)) / 1000)));
  const sorted = [...rates].sort((a, b) => a - b);
  return { unit, messages: n, runs: rates, perSecond: sorted[Math.floor(sorted.length / 2)] };
}

/** Runs one series into engine[name]; a failure becomes { error } there and the others go on. */
async function series(engine, label, name, body, socket) {
  try {
    engine[name] = await body();
    progress(label, name, "done");
  } catch (error) {
    socket?.pending?.reject(error); // stops its timer
    if (socket) socket.onMessage = null;
    progress(label, name, "FAILED:", error?.stack ?? error);
    engine[name] = { error: String(error?.message ?? error) };
  }
}

/**
 * All series for one engine. `upgrade()` dispatches the upgrade request and resolves to the
 * answer (status 101, `webSocket` not yet accepted).
 */
async function measure(engine, label, upgrade) {
  const connect = async () => {
    const res = await upgrade();
    if (res.status !== 101 || !res.webSocket) throw new Error(`${label}: the upgrade was answered with status ${res.status}${res.webSocket ? "" : " and no webSocket"}`);
    return res.webSocket;
  };

  await series(engine, label, "connect", async () => {
    const samples = [];
    for (let i = 0; i < 5 + CONNECTS; i++) {
      const start = performance.now();
      const ws = await connect();
      if (i >= 5) samples.push(performance.now() - start);
      ws.accept();
      ws.close(1000, "bye");
    }
    return summary("ms per connection (upgrade dispatch until the 101 answer)", samples);
  });

  let ws;
  try {
    ws = await connect();
  } catch (error) {
    progress(label, "FAILED to connect:", error?.stack ?? error);
    for (const name of ["echoText", "echoBinary", "workerToHost", "hostToWorker"]) engine[name] = { error: String(error?.message ?? error) };
    return;
  }
  const socket = wrap(ws, label);
  socket.ws = ws;
  try {
    await series(engine, label, "echoText", async () => {
      await roundTrips(socket, `${label} echoText warm-up`, WARMUP, textEcho, checkText);
      return summary("ms per round trip (short text message and its echo)", await roundTrips(socket, `${label} echoText`, ECHOES, textEcho, checkText));
    }, socket);
    await series(engine, label, "echoBinary", async () => {
      await roundTrips(socket, `${label} echoBinary warm-up`, 20, binaryMessage, checkBinary);
      return summary(`ms per round trip (${BINARY_BYTES / 1024} KiB ArrayBuffer and its echo)`, await roundTrips(socket, `${label} echoBinary`, BINARY_ECHOES, binaryMessage, checkBinary));
    }, socket);
    await series(engine, label, "workerToHost", async () => {
      await burst(socket, `${label} workerToHost warm-up`, 1000);
      return throughput("messages per second, worker to host (burst, until its last message arrives)", (n) => burst(socket, `${label} workerToHost`, n), BURST);
    }, socket);
    await series(engine, label, "hostToWorker", async () => {
      await flood(socket, `${label} hostToWorker warm-up`, 1000);
      return throughput("messages per second, host to worker (until the worker confirms the count)", (n) => flood(socket, `${label} hostToWorker`, n), BURST);
    }, socket);
  } finally {
    if (!socket.closed) ws.close(1000, "bench done");
  }
}

const cpus = os.cpus();
const result = { machine: { node: process.version, cpus: cpus.length, cpuModel: cpus[0]?.model, platform: `${process.platform}-${process.arch}` }, quick };

if (only !== "miniflare") {
  const workerbox = (result.workerbox = {});
  try {
    const { createWorker, dispatch } = require("..");
    const worker = await createWorker({ script: SCRIPT, onLog() {} });
    try {
      await measure(workerbox, "workerbox", () => dispatch(worker, { url: "http://localhost/", headers: { upgrade: "websocket" } }));
    } finally {
      await worker.dispose();
    }
  } catch (error) {
    progress("workerbox FAILED:", error?.stack ?? error);
    result.workerbox = { error: String(error?.message ?? error) };
  }
  if (result.workerbox.error || Object.values(result.workerbox).some((s) => s.error)) process.exitCode = 1;
}

if (only !== "workerbox") {
  let mf;
  try {
    const { Miniflare } = require("miniflare");
    mf = new Miniflare({
      // workerd's own stdout/stderr would otherwise reach our stdout.
      handleRuntimeStdio: (out, err) => {
        for (const stream of [out, err]) stream.on("data", (chunk) => process.stderr.write(chunk));
      },
      modules: true,
      script: SCRIPT,
      compatibilityDate: "2025-01-01",
    });
    await mf.ready;
    const miniflare = (result.miniflare = {});
    await measure(miniflare, "miniflare", () => mf.dispatchFetch("http://localhost/", { headers: { upgrade: "websocket" } }));
    // Nothing ran at all: one error for the engine, as the other benches report it.
    const errors = Object.values(miniflare).map((s) => s.error);
    if (errors.length && errors.every(Boolean) && new Set(errors).size === 1) result.miniflare = { error: errors[0] };
  } catch (error) {
    progress("miniflare FAILED:", error?.stack ?? error);
    result.miniflare = { error: `Miniflare could not run on Node ${process.version}: ${String(error?.message ?? error)}` };
  } finally {
    await mf?.dispose();
  }
}

if (result.workerbox && !result.workerbox.error && result.miniflare && !result.miniflare.error) {
  const ratio = { note: "how many times better workerbox is: miniflare / workerbox for times, workerbox / miniflare for messages per second (> 1: workerbox wins)" };
  for (const name of ["connect", "echoText", "echoBinary"]) {
    const wb = result.workerbox[name];
    const mf = result.miniflare[name];
    if (wb?.p50 && mf?.p50) ratio[name] = { p50: Math.round((mf.p50 / wb.p50) * 10) / 10, mean: Math.round((mf.mean / wb.mean) * 10) / 10 };
  }
  for (const name of ["workerToHost", "hostToWorker"]) {
    const wb = result.workerbox[name];
    const mf = result.miniflare[name];
    if (wb?.perSecond && mf?.perSecond) ratio[name] = { perSecond: Math.round((wb.perSecond / mf.perSecond) * 10) / 10 };
  }
  result.ratio = ratio;
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
