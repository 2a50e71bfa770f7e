// Inbound TCP into a worker's connect(socket) handler: worker.listenTcp() (lib/sockets/listen.js)
// with a real Node TCP client on loopback — echo, the client's half-close (the worker's writable
// closes once it has read the end, as workerd 2026-04-26 did in the same probe), a client that
// resets the connection ("Network connection lost."), a handler that throws, named entrypoints
// with props, backpressure from the worker to a client that does not read, a worker proxying
// to another one's listener, createWorker's connectOverrides, option errors, closing /
// disposing, and the limits (no wall-clock limit on a connection, the CPU limit and the hang
// check as workerd has them). Every listener, client and worker is closed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { dispatch, service } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";

const SCRIPT = `
import { WorkerEntrypoint } from "cloudflare:workers";
const log = [];
const enc = new TextEncoder();
const dec = new TextDecoder();
export default {
  fetch() { return Response.json(log); },
  async connect(socket, env, ctx) {
    const info = await socket.opened;
    const writer = socket.writable.getWriter();
    await writer.write(enc.encode(JSON.stringify({ opened: Object.keys(info) }) + "\\n"));
    const reader = socket.readable.getReader();
    let text = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = dec.decode(value);
        text += chunk;
        if (text.startsWith("throw")) throw new Error("boom from the handler");
        await writer.write(value);
      }
    } catch (error) {
      log.push({ readError: String(error) });
      throw error;
    }
    log.push({ eof: text });
    try {
      await writer.write(enc.encode("after end"));
      log.push({ wroteAfterEnd: true });
    } catch (error) {
      log.push({ writeAfterEnd: error.name + ": " + error.message });
    }
  },
};
export class Greeter extends WorkerEntrypoint {
  async connect(socket) {
    const writer = socket.writable.getWriter();
    await writer.write(enc.encode("hello " + this.ctx.props.who));
    await writer.close();
  }
}
export class Late extends WorkerEntrypoint {
  async connect(socket) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    let bytes = 0;
    for await (const chunk of socket.readable) bytes += chunk.byteLength;
    log.push({ late: bytes });
  }
}
export class Spin extends WorkerEntrypoint {
  async connect(socket) {
    for (;;) {}
  }
}
export class Never extends WorkerEntrypoint {
  async connect(socket) {
    await new Promise(() => {});
  }
}
export class DrainThenNever extends WorkerEntrypoint {
  async connect(socket) {
    for await (const chunk of socket.readable) log.push({ drained: dec.decode(chunk) });
    await new Promise(() => {});
  }
}
export class Flood extends WorkerEntrypoint {
  async connect(socket) {
    const writer = socket.writable.getWriter();
    const chunk = new Uint8Array(64 * 1024).fill(120);
    for (let i = 0; i < 512; i++) {
      await writer.write(chunk);
      log.push(i);
    }
    await writer.close();
  }
}
`;

/** A TCP client to `port`: `data` (all read so far), `ended` / `closed` promises. */
function client(t, port, { read = true } = {}) {
  const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
  t.after(() => socket.destroy());
  let data = "";
  let bytes = 0;
  if (read) socket.on("data", (d) => ((data += d), (bytes += d.length)));
  socket.on("error", () => {});
  const ended = new Promise((resolve) => socket.once("end", resolve));
  const closed = new Promise((resolve) => socket.once("close", resolve));
  const connected = new Promise((resolve) => socket.once("connect", resolve));
  return { socket, connected, ended, closed, text: () => data, bytes: () => bytes };
}

async function listening(t, options = {}, workerOptions = {}) {
  const worker = await useWorker(t, { script: SCRIPT, filename: "connect-handler.js", ...workerOptions });
  const listener = await worker.listenTcp(options);
  t.after(() => listener.close());
  return { worker, listener, log: async () => (await dispatch(worker, "http://localhost/")).json() };
}

test("echo: each chunk comes back; the client's end ends the worker's socket and the handler's return closes the connection", { timeout: 30_000 }, async (t) => {
  const { listener, log } = await listening(t);
  assert.equal(listener.host, "127.0.0.1");
  assert.equal(listener.address, `127.0.0.1:${listener.port}`);
  const c = client(t, listener.port);
  await c.connected;
  c.socket.write("ping");
  await waitFor(() => c.text().includes("ping"), 5000);
  // workerd gives the inbound socket's opened both fields, unset.
  assert.deepEqual(JSON.parse(c.text().split("\n")[0]), { opened: ["remoteAddress", "localAddress"] });
  c.socket.write("pong");
  await waitFor(() => c.text().endsWith("pingpong"), 5000);
  c.socket.end();
  await c.ended;
  await c.closed;
  // Once the worker read the end its writable was closed (no allowHalfOpen), as in workerd. The
  // write after the end is answered after the client sees the close: wait for its log entry.
  let entries = await log();
  for (let i = 0; i < 500 && entries.length < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    entries = await log();
  }
  assert.deepEqual(entries, [{ eof: "pingpong" }, { writeAfterEnd: "TypeError: This WritableStream has been closed." }]);
  assert.equal(c.text().includes("after end"), false);
  await waitFor(() => listener.connections === 0, 5000);
});

test("a client that resets the connection errors the worker's read with workerd's message", { timeout: 30_000 }, async (t) => {
  const errors = [];
  const { listener, log } = await listening(t, { onError: (e) => errors.push(e) });
  const c = client(t, listener.port);
  await c.connected;
  c.socket.write("abc");
  await waitFor(() => c.text().endsWith("abc"), 5000);
  c.socket.resetAndDestroy();
  for (let i = 0; i < 500 && (await log()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(await log(), [{ readError: "Error: Network connection lost." }]);
  await waitFor(() => errors.length === 1, 5000);
  assert.equal(errors[0].message, "Network connection lost.");
});

test("a handler that throws: the connection is closed and the error goes to onError (or the worker's log)", { timeout: 30_000 }, async (t) => {
  const errors = [];
  const { listener } = await listening(t, { onError: (e) => errors.push(e) });
  const c = client(t, listener.port);
  await c.connected;
  c.socket.write("throw");
  await c.ended;
  await waitFor(() => errors.length === 1, 5000);
  assert.equal(errors[0].name, "Error");
  assert.equal(errors[0].message, "boom from the handler");

  const lines = [];
  const worker = await useWorker(t, { script: SCRIPT, filename: "connect-handler.js", onLog: (level, message) => lines.push([level, message]) });
  const quiet = await worker.listenTcp();
  t.after(() => quiet.close());
  const d = client(t, quiet.port);
  await d.connected;
  d.socket.write("throw");
  await d.ended;
  await waitFor(() => lines.some(([level, message]) => level === "error" && message.includes("boom from the handler")), 5000);
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test("a connection outlives limits.wallMs and limits.bindingMs: it echoes past them, and waits on an idle client, as workerd's has no wall-clock limit", { timeout: 30_000 }, async (t) => {
  const errors = [];
  const { listener, log } = await listening(t, { onError: (e) => errors.push(e) }, { limits: { wallMs: 300, bindingMs: 300 } });
  const c = client(t, listener.port);
  await c.connected;
  let sent = "";
  for (const word of ["one", "two", "three"]) {
    // Each pause is longer than both limits: the worker's read waits on the idle client.
    await sleep(700);
    c.socket.write(word);
    sent += word;
    await waitFor(() => c.text().endsWith(sent), 5000);
  }
  assert.equal(listener.connections, 1);
  c.socket.end();
  await c.closed;
  await waitFor(() => listener.connections === 0, 5000);
  // The handler's log entry may come a moment after the client sees the close.
  let entries = await log();
  for (let i = 0; i < 500 && entries.length === 0; i++) {
    await sleep(10);
    entries = await log();
  }
  assert.deepEqual(entries[0], { eof: "onetwothree" });
  assert.deepEqual(errors, []);
});

test("connect() through a service binding: the handler's event outlives the callee's wallMs and bindingMs too", { timeout: 30_000 }, async (t) => {
  const callee = await useWorker(t, {
    script: `export default { async connect(socket) {
      const writer = socket.writable.getWriter();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await writer.write(new TextEncoder().encode("late hello"));
      await writer.close();
    } };`,
    limits: { wallMs: 300, bindingMs: 300 },
  });
  const caller = await useWorker(t, {
    script: `export default { async fetch(request, env) {
      const { value } = await env.B.connect("b:1").readable.getReader().read();
      return new Response(value);
    } };`,
    bindings: { B: service(callee) },
    limits: { bindingMs: 300 },
  });
  assert.equal(await (await dispatch(caller, "http://x/")).text(), "late hello");
});

test("the CPU limit still ends a connect handler", { timeout: 30_000 }, async (t) => {
  const errors = [];
  const { listener } = await listening(t, { entrypoint: "Spin", onError: (e) => errors.push(e) }, { limits: { cpuMs: 100, wallMs: 0 }, onLog() {} });
  const c = client(t, listener.port);
  await c.ended;
  await waitFor(() => errors.length === 1, 5000);
  assert.match(errors[0].message, /CPU time limit of 100 ms/);
  assert.equal(listener.connections, 0);
});

test("hang check: a handler awaiting what never settles keeps its open connection (not hung, as in workerd); once it has read the client's end it is ended as hung", { timeout: 30_000 }, async (t) => {
  const errors = [];
  const { worker, log } = await listening(t, {}, { limits: { wallMs: 300 } });
  const never = await worker.listenTcp({ entrypoint: "Never", onError: (e) => errors.push(["never", e]) });
  t.after(() => never.close());
  const drain = await worker.listenTcp({ entrypoint: "DrainThenNever", onError: (e) => errors.push(["drain", e]) });
  t.after(() => drain.close());
  const a = client(t, never.port);
  const b = client(t, drain.port);
  await Promise.all([a.connected, b.connected]);
  b.socket.write("x");
  await sleep(1000);
  // Both still open, past the wall-clock limit: each handler's socket is open.
  assert.equal(never.connections, 1);
  assert.equal(drain.connections, 1);
  assert.deepEqual(errors, []);
  // The client's end: the draining handler reads it and has nothing left that could settle its
  // promise; the other one did not read it and keeps its connection, as in workerd.
  b.socket.end();
  await b.closed;
  await waitFor(() => errors.length === 1, 5000);
  assert.equal(errors[0][0], "drain");
  assert.match(errors[0][1].message, /never respond|hung/);
  assert.deepEqual(await log(), [{ drained: "x" }]);
  // A client that goes away unnoticed (the handler does not read) does not end it either, as in
  // workerd; closing the listener does.
  a.socket.destroy();
  await sleep(500);
  assert.equal(never.connections, 1);
  assert.equal(errors.length, 1);
  await never.close();
  await waitFor(() => never.connections === 0, 5000);
});

test("a named entrypoint with props; closing the listener refuses new connections", { timeout: 30_000 }, async (t) => {
  const { listener } = await listening(t, { entrypoint: "Greeter", props: { who: "tcp" } });
  const c = client(t, listener.port);
  await c.ended;
  assert.equal(c.text(), "hello tcp");
  c.socket.end();
  await c.closed;
  await listener.close();
  const refused = net.connect({ port: listener.port, host: "127.0.0.1" });
  const error = await new Promise((resolve) => refused.once("error", resolve));
  assert.equal(error.code, "ECONNREFUSED");
});

test("backpressure: the worker's writes wait while the client does not read, and every byte arrives once it does", { timeout: 60_000 }, async (t) => {
  const { listener, log } = await listening(t, { entrypoint: "Flood" });
  const c = client(t, listener.port, { read: false });
  await c.connected;
  c.socket.pause();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // 32 MiB to write: without backpressure all 512 writes would have resolved by now.
  const written = (await log()).length;
  assert.ok(written < 256, `${written} of 512 writes resolved while the client read nothing`);
  let bytes = 0;
  c.socket.on("data", (d) => (bytes += d.length));
  c.socket.resume();
  await c.ended;
  assert.equal(bytes, 512 * 64 * 1024);
});

test("backpressure: a client sending faster than the worker reads is held back by TCP", { timeout: 60_000 }, async (t) => {
  const { listener, log } = await listening(t, { entrypoint: "Late" });
  const c = client(t, listener.port);
  await c.connected;
  const total = 32 * 1024 * 1024;
  c.socket.write(Buffer.alloc(total, 121));
  c.socket.end();
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The worker reads nothing for a second: the host takes no more than its buffer and the
  // kernel's, and most of the 32 MiB still waits on the client's side.
  assert.ok(c.socket.writableLength > total / 2, `${c.socket.writableLength} bytes still queued on the client`);
  for (let i = 0; i < 1000 && (await log()).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(await log(), [{ late: total }]);
  await c.ended;
});

test("a worker proxies to another worker's listener, reached through connectOverrides", { timeout: 30_000 }, async (t) => {
  const { listener: endpoint } = await listening(t, { entrypoint: "Greeter", props: { who: "endpoint" } });
  const proxy = await useWorker(t, {
    filename: "proxy.js",
    connectOverrides: { "endpoint.example:8083": endpoint.address },
    script: `import { connect } from "cloudflare:sockets";
export default {
  async connect(socket) {
    const upstream = connect("endpoint.example:8083");
    const { remoteAddress } = await upstream.opened;
    const writer = socket.writable.getWriter();
    await writer.write(new TextEncoder().encode(remoteAddress + " says: "));
    writer.releaseLock();
    await Promise.all([socket.readable.pipeTo(upstream.writable), upstream.readable.pipeTo(socket.writable)]);
  },
};`,
  });
  const front = await proxy.listenTcp();
  t.after(() => front.close());
  const c = client(t, front.port);
  await c.ended;
  assert.equal(c.text(), "endpoint.example:8083 says: hello endpoint");
  c.socket.end();
  await c.closed;
});

test("bad options are TypeErrors naming the option", async (t) => {
  const worker = await useWorker(t, { script: SCRIPT, filename: "connect-handler.js" });
  await assert.rejects(worker.listenTcp({ port: 70000 }), { name: "TypeError", message: /listenTcp: options\.port must be an integer from 0 to 65535/ });
  await assert.rejects(worker.listenTcp({ hostname: "127.0.0.1" }), { name: "TypeError", message: /listenTcp: unknown option "hostname"/ });
  await assert.rejects(worker.listenTcp({ host: "" }), { name: "TypeError", message: /listenTcp: options\.host must be a non-empty string/ });
  await assert.rejects(worker.listenTcp({ entrypoint: "" }), { name: "TypeError", message: /options\.entrypoint/ });
  await assert.rejects(useWorker(t, { script: SCRIPT, connectOverrides: { "nohost": "127.0.0.1:1" } }), { name: "TypeError", message: /connectOverrides key "nohost" is not an address/ });
  await assert.rejects(useWorker(t, { script: SCRIPT, connectOverrides: { "a.example:1": "127.0.0.1" } }), { name: "TypeError", message: /connectOverrides\["a\.example:1"\] must be an address/ });
  await assert.rejects(useWorker(t, { script: SCRIPT, connectOverrides: ["x"] }), { name: "TypeError", message: /connectOverrides must be an object/ });
  // A port already taken: Node's own error.
  const taken = await worker.listenTcp();
  t.after(() => taken.close());
  await assert.rejects(worker.listenTcp({ port: taken.port }), { code: "EADDRINUSE" });
});

test("disposing the worker closes its listeners and their open connections", { timeout: 30_000 }, async (t) => {
  const { worker, listener } = await listening(t);
  const c = client(t, listener.port);
  await c.connected;
  await waitFor(() => c.text().includes("opened"), 5000);
  await worker.dispose();
  await c.ended;
  const refused = net.connect({ port: listener.port, host: "127.0.0.1" });
  const error = await new Promise((resolve) => refused.once("error", resolve));
  assert.equal(error.code, "ECONNREFUSED");
  await assert.rejects(worker.listenTcp(), { code: "ERR_WORKER_DISPOSED" });
});
