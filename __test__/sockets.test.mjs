// cloudflare:sockets: connect() against loopback Node servers made here (plain TCP echo, a server
// that says "bye" and ends, a paused one, TLS with the self-signed certificate in
// fixtures/sockets/, and a STARTTLS one), with workerd's messages where something fails (as
// workerd 2026-04-26 printed them for the same probes), half-open connections, backpressure both
// ways, close(), startTls(), the network policy and disposal, a socket tied to its request, a
// connection that never completes (a stopped child process's full accept queue), 256 sockets per
// worker, and a peer that stalls. Every server, child and worker is closed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { dispatch, durableObject } from "../index.js";
import { CERT, CERT_FILE, KEY, listen, starttlsEchoServer, trustTestCertificate } from "./socket-servers.mjs";
import { useWorker, waitFor } from "./helpers.mjs";
import { spawnNode } from "./child-node.mjs";

const CANNOT_CONNECT = "proxy request failed, cannot connect to the specified address";
const OTHER_REQUEST =
  "Error: Cannot perform I/O on behalf of a different request. I/O objects (such as streams, request/response bodies, and others) created in the context of one request handler cannot be accessed from a different request's handler. This is a limitation of Cloudflare Workers which allows us to improve overall performance.";

function echoServer(t) {
  return listen(t, net.createServer((socket) => {
    socket.on("error", () => {});
    socket.pipe(socket);
  }));
}

/** Runs `body` (the inside of an async function with `connect`, `enc`, `dec` and `settle` in
 * scope) in a fresh worker and returns its JSON result. */
async function inWorker(t, body, options = {}) {
  const worker = await useWorker(t, { script: workerScript(body), filename: "sockets-test.js", compatibilityDate: "2025-01-01", ...options });
  const response = await dispatch(worker, "http://localhost/");
  return response.json();
}

function workerScript(body) {
  return `${PRELUDE}
export default { async fetch(request, env, ctx) {
  const result = await (async () => { ${body} })();
  return Response.json(result === undefined ? null : result);
} }`;
}

/** The module's imports and helpers, for a worker written out in full. */
const PRELUDE = `import { connect } from "cloudflare:sockets";
const enc = new TextEncoder(), dec = new TextDecoder();
const describe = (e) => e?.constructor?.name + ": " + e?.message;
const settle = (p, ms = 3000) => {
  let timer;
  const pending = new Promise((r) => (timer = setTimeout(() => r("pending"), ms)));
  return Promise.race([p.then((v) => ({ ok: v === undefined ? null : v }), (e) => ({ err: describe(e) })), pending]).finally(() => clearTimeout(timer));
};
async function readAll(readable) {
  const reader = readable.getReader(); let text = "";
  for (;;) { const { done, value } = await reader.read(); if (done) return text; text += dec.decode(value, { stream: true }); }
}`;

test("connect() echoes bytes over TCP; opened names the address asked for and the local one", async (t) => {
  const port = await echoServer(t);
  const result = await inWorker(t, `
    const socket = connect("127.0.0.1:${port}");
    const info = await socket.opened;
    const writer = socket.writable.getWriter();
    await writer.write(enc.encode("hello"));
    const { value } = await socket.readable.getReader().read();
    const other = connect({ hostname: "127.0.0.1", port: ${port} });
    const otherInfo = await other.opened;
    await other.close();
    const shape = { proto: Object.getOwnPropertyNames(Object.getPrototypeOf(socket)), ctor: socket.constructor.name, readable: socket.readable.constructor.name, writable: socket.writable.constructor.name, upgraded: socket.upgraded, secureTransport: socket.secureTransport };
    await socket.close();
    return { remote: info.remoteAddress, local: info.localAddress, got: dec.decode(value), other: otherInfo.remoteAddress, shape, closed: await settle(socket.closed) };`);
  assert.equal(result.remote, `127.0.0.1:${port}`);
  assert.match(result.local, /^127\.0\.0\.1:\d+$/);
  assert.equal(result.got, "hello");
  assert.equal(result.other, `127.0.0.1:${port}`);
  assert.deepEqual(result.shape, { proto: ["readable", "writable", "closed", "opened", "upgraded", "secureTransport", "close", "startTls", "constructor"], ctor: "Socket", readable: "ReadableStream", writable: "WritableStream", upgraded: false, secureTransport: "off" });
  assert.deepEqual(result.closed, { ok: null });
});

test("connect() fails as workerd does: bad addresses and options throw, a refused port and port 25 reject opened and closed", async (t) => {
  const spare = net.createServer();
  const closedPort = await new Promise((resolve) => spare.listen(0, "127.0.0.1", () => resolve(spare.address().port)));
  await new Promise((resolve) => spare.close(resolve));
  const result = await inWorker(t, `
    const thrown = {};
    for (const address of ["nocolon", "127.0.0.1:abc", { hostname: "127.0.0.1" }, "127.0.0.1:70000"]) {
      try { connect(address); thrown[JSON.stringify(address)] = "no throw"; } catch (e) { thrown[JSON.stringify(address)] = describe(e); }
    }
    try { connect("127.0.0.1:1", { secureTransport: "bogus" }); } catch (e) { thrown.bogus = describe(e); }
    const refused = connect("127.0.0.1:${closedPort}");
    const smtp = connect("127.0.0.1:25");
    const plain = connect("127.0.0.1:${closedPort}");
    let startTls; try { plain.startTls(); } catch (e) { startTls = describe(e); }
    const writeString = await settle(connect("127.0.0.1:${closedPort}").writable.getWriter().write("text"));
    return { thrown, refused: [await settle(refused.opened), await settle(refused.closed)], smtp: await settle(smtp.opened), startTls, writeString };`);
  assert.deepEqual(result.thrown, {
    '"nocolon"': "TypeError: Specified address is missing port.",
    '"127.0.0.1:abc"': "TypeError: Specified address could not be parsed.",
    '{"hostname":"127.0.0.1"}': "TypeError: The value cannot be converted because it is not an integer.",
    '"127.0.0.1:70000"': "TypeError: Specified address could not be parsed.",
    bogus: "TypeError: Unsupported value in secureTransport socket option: bogus",
  });
  assert.deepEqual(result.refused, [{ err: `Error: ${CANNOT_CONNECT}` }, { err: `Error: ${CANNOT_CONNECT}` }]);
  assert.deepEqual(result.smtp, { err: `Error: ${CANNOT_CONNECT} (port 25 is blocked, as on Cloudflare)` });
  assert.equal(result.startTls, "TypeError: The `secureTransport` socket option must be set to 'starttls' for startTls to be used.");
  assert.match(result.writeString.err, /^TypeError: This TransformStream is being used as a byte stream, but received a string/);
});

test("after close() reads and writes fail with workerd's messages; close() twice resolves; writes after writable.close() fail", async (t) => {
  const port = await echoServer(t);
  const result = await inWorker(t, `
    const socket = connect("127.0.0.1:${port}");
    await socket.opened;
    const reader = socket.readable.getReader(), writer = socket.writable.getWriter();
    const first = await settle(socket.close()), second = await settle(socket.close());
    const read = await settle(reader.read()), write = await settle(writer.write(enc.encode("x")));
    const other = connect("127.0.0.1:${port}");
    await other.opened;
    const otherWriter = other.writable.getWriter();
    await otherWriter.close();
    const late = await settle(otherWriter.write(enc.encode("x")));
    other.close();
    return { first, second, read, write, late };`);
  assert.deepEqual(result, {
    first: { ok: null },
    second: { ok: null },
    read: { err: "TypeError: This ReadableStream belongs to an object that is closing." },
    write: { err: "TypeError: This WritableStream has been closed." },
    late: { err: "TypeError: This WritableStream has been closed." },
  });
});

test("the peer's end closes the socket without allowHalfOpen; with it the worker still writes and ends its side", async (t) => {
  const received = [];
  const port = await listen(t, net.createServer((socket) => {
    socket.on("error", () => {});
    let text = "";
    socket.on("data", (data) => (text += data));
    socket.on("end", () => received.push(text));
    socket.end("bye");
  }));
  const closedWithout = await inWorker(t, `
    const socket = connect("127.0.0.1:${port}");
    const text = await readAll(socket.readable);
    return { text, write: await settle(socket.writable.getWriter().write(enc.encode("late"))), closed: await settle(socket.closed) };`);
  assert.deepEqual(closedWithout, { text: "bye", write: { err: "TypeError: This WritableStream has been closed." }, closed: { ok: null } });
  const halfOpen = await inWorker(t, `
    const socket = connect("127.0.0.1:${port}", { allowHalfOpen: true });
    const text = await readAll(socket.readable);
    const writer = socket.writable.getWriter();
    const write = await settle(writer.write(enc.encode("late")));
    const close = await settle(writer.close());
    return { text, write, close, closed: await settle(socket.closed) };`);
  assert.deepEqual(halfOpen, { text: "bye", write: { ok: null }, close: { ok: null }, closed: { ok: null } });
  await waitFor(() => received.includes("late"), 5000);
});

test("backpressure: a large write to a paused reader waits, and a worker that does not read stops the peer's writes", async (t) => {
  let serverSocket;
  let total = 0;
  const port = await listen(t, net.createServer((socket) => {
    serverSocket = socket;
    socket.on("error", () => {});
    socket.pause();
    socket.on("data", (data) => (total += data.length));
  }));
  // 64 MiB in 1 MiB writes against a reader that does not read: the writes stall after what
  // the kernel's buffers hold, then all of it arrives once the reader reads.
  const worker = await useWorker(t, { script: workerScript(`
    const socket = connect("127.0.0.1:${port}");
    const writer = socket.writable.getWriter();
    const chunk = new Uint8Array(1 << 20);
    let written = 0;
    for (; written < 64; written++) {
      const outcome = await Promise.race([writer.write(chunk).then(() => "ok"), new Promise((r) => setTimeout(() => r("stalled"), 500))]);
      if (outcome === "stalled") break;
    }
    // The rest is written after the response, within the request (a socket closes with it).
    ctx.waitUntil((async () => { for (let i = written + 1; i < 64; i++) await writer.write(chunk); await writer.close(); })());
    return { written };`), filename: "backpressure.js", compatibilityDate: "2025-01-01" });
  const { written } = await (await dispatch(worker, "http://localhost/")).json();
  assert.ok(written < 40, `the writes should stall while nothing reads (${written} MiB were taken)`);
  serverSocket.resume();
  await waitFor(() => total === 64 << 20, 20_000);

  // The other way: the server writes 64 MiB as fast as the socket takes it; a worker that has
  // not read yet leaves most of it unsent.
  let flushed = 0;
  const sender = await listen(t, net.createServer((socket) => {
    socket.on("error", () => {});
    const chunk = Buffer.alloc(1 << 20);
    const pump = () => {
      while (flushed < 64 && socket.writable) {
        const ok = socket.write(chunk, () => flushed++);
        if (!ok) return socket.once("drain", pump);
      }
    };
    pump();
  }));
  const result = await inWorker(t, `
    const socket = connect("127.0.0.1:${sender}");
    await socket.opened;
    await new Promise((r) => setTimeout(r, 700));
    const reader = socket.readable.getReader();
    let got = 0;
    while (got < 4 << 20) got += (await reader.read()).value.byteLength;
    await socket.close();
    return { got };`);
  assert.ok(result.got >= 4 << 20);
  assert.ok(flushed < 48, `the peer's writes should stall while the worker does not read (${flushed} MiB went out)`);
});

test("TLS: a certificate the worker cannot verify fails opened; trusted through NODE_EXTRA_CA_CERTS (as Miniflare does) it echoes", async (t) => {
  const port = await listen(t, tls.createServer({ key: KEY, cert: CERT }, (socket) => socket.pipe(socket)));
  const body = `
    const socket = connect("localhost:${port}", { secureTransport: "on" });
    const opened = await settle(socket.opened);
    if (opened.err) return { opened, closed: await settle(socket.closed), read: await settle(socket.readable.getReader().read()), write: await settle(socket.writable.getWriter().write(enc.encode("x"))) };
    await socket.writable.getWriter().write(enc.encode("secret"));
    const { value } = await socket.readable.getReader().read();
    await socket.close();
    return { opened, got: dec.decode(value), secureTransport: socket.secureTransport };`;
  trustTestCertificate(t, false);
  const untrusted = await inWorker(t, body);
  assert.match(untrusted.opened.err, new RegExp(`^Error: ${CANNOT_CONNECT} \\(the TLS handshake with localhost failed: .*(UnknownIssuer|certificate)`));
  assert.equal(untrusted.closed.err, untrusted.opened.err);
  // As workerd: the readable ends, the writable is closed.
  assert.deepEqual([untrusted.read, untrusted.write], [{ ok: { done: true } }, { err: "TypeError: This WritableStream has been closed." }]);
  process.env.NODE_EXTRA_CA_CERTS = CERT_FILE;
  const trusted = await inWorker(t, body);
  assert.deepEqual(trusted, { opened: { ok: { remoteAddress: `localhost:${port}`, localAddress: trusted.opened.ok.localAddress } }, got: "secret", secureTransport: "on" });
});

test("startTls() upgrades a plain connection after a STARTTLS exchange; the old socket is done and startTls() works once", async (t) => {
  const port = await starttlsEchoServer(t);
  trustTestCertificate(t);
  const result = await inWorker(t, `
    const socket = connect("localhost:${port}", { secureTransport: "starttls" });
    const writer = socket.writable.getWriter();
    await writer.write(enc.encode("STARTTLS\\r\\n"));
    const reader = socket.readable.getReader();
    const { value } = await reader.read();
    reader.releaseLock(); writer.releaseLock();
    const secure = socket.startTls();
    let again; try { socket.startTls(); } catch (e) { again = describe(e); }
    await secure.writable.getWriter().write(enc.encode("over tls"));
    const { value: echoed } = await secure.readable.getReader().read();
    const oldWrite = await settle(socket.writable.getWriter().write(enc.encode("x")));
    const out = { plain: dec.decode(value), tls: dec.decode(echoed), again, oldWrite, oldUpgraded: socket.upgraded, oldClosed: await settle(socket.closed), secure: [secure.secureTransport, secure.upgraded], opened: await settle(secure.opened) };
    await secure.close();
    return out;`);
  assert.deepEqual(result, {
    plain: "OK\r\n",
    tls: "over tls",
    again: "TypeError: startTls can only be called once.",
    oldWrite: { err: "TypeError: This WritableStream has been closed." },
    oldUpgraded: true,
    oldClosed: { ok: null },
    secure: ["on", false],
    opened: { ok: { remoteAddress: `localhost:${port}`, localAddress: result.opened.ok.localAddress } },
  });
});

test('network: "public" refuses loopback sockets before any packet is sent', async (t) => {
  let connections = 0;
  const port = await listen(t, net.createServer((socket) => {
    connections++;
    socket.destroy();
  }));
  const result = await inWorker(t, `return [await settle(connect("127.0.0.1:${port}").opened), await settle(connect("127.0.0.1:443").opened)];`, { network: "public" });
  assert.deepEqual(result, [
    { err: `Error: ${CANNOT_CONNECT} (127.0.0.1:${port} is not a public address and the worker's network policy is "public")` },
    // Ports 80 and 443 get workerd's hint (as workerd 2026-04-26 printed it for a refused 127.0.0.1:443).
    { err: `Error: ${CANNOT_CONNECT}. It looks like you might be trying to connect to a HTTP-based service — consider using fetch instead (127.0.0.1:443 is not a public address and the worker's network policy is "public")` },
  ]);
  assert.equal(connections, 0);
});

test("connect() at global scope is refused; disposing the worker closes its open sockets", async (t) => {
  const port = await echoServer(t);
  let closed = 0;
  const watched = await listen(t, net.createServer((socket) => {
    socket.on("error", () => {});
    socket.on("close", () => closed++);
  }));
  const worker = await useWorker(t, { script: `import { connect } from "cloudflare:sockets";
    let atTop; try { connect("127.0.0.1:${port}"); } catch (e) { atTop = e.message; }
    export default { async fetch(request, env, ctx) {
      for (let i = 0; i < 3; i++) await connect("127.0.0.1:${watched}").opened;
      // The request stays open (its sockets close with it) until the worker is disposed.
      ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 20000)));
      return new Response(atTop);
    } }`, filename: "dispose.js", compatibilityDate: "2025-01-01" });
  const atTop = await (await dispatch(worker, "http://localhost/")).text();
  assert.match(atTop, /^Disallowed operation called within global scope/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(closed, 0);
  await worker.dispose();
  await waitFor(() => closed === 3, 5000);
});

/**
 * A loopback port whose handshakes never complete: a child process listens with a backlog of 1
 * and is stopped (SIGSTOP) so it never accepts, and connections fill its accept queue; Linux then
 * drops further SYNs, so a connect() there waits as for an unreachable host. Killed after the test.
 */
async function blackhole(t) {
  const child = spawnNode(["-e", `const s = require("net").createServer(); s.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => console.log(s.address().port));`], { stdio: ["ignore", "pipe", "ignore"] });
  const fillers = [];
  t.after(() => {
    for (const socket of fillers) socket.destroy();
    child.kill("SIGKILL");
  });
  const port = await new Promise((resolve) => child.stdout.once("data", (data) => resolve(Number(String(data).trim()))));
  child.kill("SIGSTOP");
  for (let i = 0; i < 4; i++) fillers.push(net.connect(port, "127.0.0.1").on("error", () => {}));
  await new Promise((resolve) => setTimeout(resolve, 300));
  return port;
}

test("a socket belongs to the request that opened it: from another request reads and writes reject with workerd's error and close() does nothing; the socket closes when its request is over", async (t) => {
  const events = [];
  const port = await listen(t, net.createServer((socket) => {
    events.push("open");
    socket.on("error", () => {});
    socket.on("close", () => events.push("close"));
    socket.pipe(socket);
  }));
  const worker = await useWorker(t, { script: `${PRELUDE}
    let socket, other;
    export default { async fetch(request, env, ctx) {
      const url = new URL(request.url);
      if (url.pathname === "/open") {
        socket = connect("127.0.0.1:${port}");
        other = connect("127.0.0.1:${port}", { secureTransport: "starttls" });
        await Promise.all([socket.opened, other.opened]);
        // Its own waitUntil work keeps the request (and so the socket) going a while.
        if (url.searchParams.has("hold")) ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 1500)));
        return Response.json("open");
      }
      if (url.pathname === "/use") {
        const write = await settle(socket.writable.getWriter().write(enc.encode("x")));
        const read = await settle(socket.readable.getReader().read());
        const close = await settle(socket.close(), 300);
        return Response.json({ write, read, close });
      }
      if (url.pathname === "/end") {
        const endWrites = await settle(other.writable.getWriter().close());
        const cancel = await settle(other.readable.cancel());
        const upgraded = await settle(other.startTls().opened, 300);
        return Response.json({ endWrites, cancel, upgraded });
      }
      return Response.json({ closed: await settle(socket.closed, 300) });
    } }`, filename: "per-request.js", compatibilityDate: "2025-01-01" });
  const call = async (url) => (await dispatch(worker, `http://localhost${url}`)).json();
  assert.equal(await call("/open?hold"), "open");
  // As workerd 2026-04-26 answered the same requests: each rejects, close() stays pending.
  assert.deepEqual(await call("/use"), {
    write: { err: `${OTHER_REQUEST} (I/O type: Writable)` },
    read: { err: `${OTHER_REQUEST} (I/O type: ReadableStreamSource)` },
    close: "pending",
  });
  assert.deepEqual(await call("/end"), {
    endWrites: { err: `${OTHER_REQUEST} (I/O type: Writable)` },
    cancel: { err: `${OTHER_REQUEST} (I/O type: ReadableStreamSource)` },
    upgraded: "pending",
  });
  assert.deepEqual(events, ["open", "open"], "nothing from another request closes the connections");
  await waitFor(() => events.length === 4, 5000);
  assert.deepEqual(await call("/closed"), { closed: "pending" }, "closed stays pending, as in workerd");
  // Without waitUntil the request is over with its response.
  assert.equal(await call("/open"), "open");
  await waitFor(() => events.length === 8, 5000);
});

test("when its request is over a socket first sends what the worker wrote: the peer gets every byte, then the end", async (t) => {
  let received = 0;
  let ended = false;
  const port = await listen(t, net.createServer((socket) => {
    socket.on("error", () => {});
    socket.on("data", (data) => (received += data.length));
    socket.on("end", () => ((ended = true), socket.end()));
  }));
  // The response goes out as soon as the last write was taken, before it reached the kernel.
  const result = await inWorker(t, `
    const socket = connect("127.0.0.1:${port}");
    const writer = socket.writable.getWriter();
    const chunk = new Uint8Array(1 << 20).fill(7);
    for (let i = 0; i < 16; i++) await writer.write(chunk);
    return "written";`);
  assert.equal(result, "written");
  await waitFor(() => ended, 10_000);
  assert.equal(received, 16 << 20);
});

test("a socket opened in a Durable Object is the object's: a later call to the object uses it", async (t) => {
  const port = await echoServer(t);
  const worker = await useWorker(t, { script: `${PRELUDE}
    import { DurableObject } from "cloudflare:workers";
    export class Holder extends DurableObject {
      async open() { this.socket = connect("127.0.0.1:${port}"); await this.socket.opened; return "open"; }
      async echo(text) {
        const writer = this.socket.writable.getWriter(), reader = this.socket.readable.getReader();
        await writer.write(enc.encode(text));
        const { value } = await reader.read();
        writer.releaseLock(); reader.releaseLock();
        return dec.decode(value);
      }
    }
    export default { async fetch(request, env) {
      const stub = env.HOLDER.getByName("one");
      return Response.json(new URL(request.url).pathname === "/open" ? await stub.open() : await stub.echo("again"));
    } }`, bindings: { HOLDER: durableObject("Holder") }, filename: "durable-socket.js", compatibilityDate: "2025-01-01" });
  assert.equal(await (await dispatch(worker, "http://localhost/open")).json(), "open");
  assert.equal(await (await dispatch(worker, "http://localhost/echo")).json(), "again");
});

test("a connection that never completes waits, as in workerd (no timeout of its own: the OS's, about 130 s); the request's wall-clock limit and dispose end it at once", async (t) => {
  const hole = await blackhole(t);
  const pending = await inWorker(t, `const socket = connect("127.0.0.1:${hole}"); return await settle(socket.opened, 1500);`);
  assert.equal(pending, "pending");
  // limits.wallMs ends the request that waits on it.
  const limited = await useWorker(t, { script: workerScript(`await connect("127.0.0.1:${hole}").opened;`), limits: { wallMs: 1000 }, compatibilityDate: "2025-01-01" });
  await assert.rejects(dispatch(limited, "http://localhost/"), /wall-clock limit of 1000 ms/);
  // Disposing a worker whose request waits on a connect is not held up by it.
  const waiting = await useWorker(t, { script: workerScript(`await connect("127.0.0.1:${hole}").opened;`), limits: { wallMs: 0 }, compatibilityDate: "2025-01-01" });
  const request = dispatch(waiting, "http://localhost/").then(() => "answered", (error) => error.message);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = performance.now();
  await waiting.dispose();
  assert.ok(performance.now() - started < 2000, `dispose took ${Math.round(performance.now() - started)} ms`);
  assert.notEqual(await request, "answered");
});

test("a worker has at most 256 sockets open; the next connect() rejects opened until one is closed", async (t) => {
  const port = await echoServer(t);
  const result = await inWorker(t, `
    const sockets = [];
    for (let i = 0; i < 256; i++) sockets.push(connect("127.0.0.1:${port}"));
    const opened = (await Promise.allSettled(sockets.map((s) => s.opened))).filter((o) => o.status === "fulfilled").length;
    const over = await settle(connect("127.0.0.1:${port}").opened.then(() => "opened"));
    await sockets.pop().close();
    const next = connect("127.0.0.1:${port}");
    const again = await settle(next.opened.then(() => "opened"));
    await Promise.all([...sockets, next].map((s) => s.close()));
    return { opened, over, again };`);
  assert.deepEqual(result, { opened: 256, over: { err: "Error: The worker has 256 sockets open, the most it may have at once; close one first." }, again: { ok: "opened" } });
});

test("a peer that stops reading holds only its socket: the worker answers other requests meanwhile, and dispose closes the connection at once", async (t) => {
  let peer;
  let peerClosed = false;
  let received = 0;
  const port = await listen(t, net.createServer((socket) => {
    peer = socket;
    socket.on("error", () => {});
    socket.on("close", () => (peerClosed = true));
    socket.once("data", (data) => ((received += data.length), socket.pause()));
  }));
  const worker = await useWorker(t, { script: `${PRELUDE}
    export default { async fetch(request, env, ctx) {
      if (new URL(request.url).pathname === "/ping") return new Response("pong");
      const socket = connect("127.0.0.1:${port}");
      const writer = socket.writable.getWriter();
      // 256 MiB to a peer that reads nothing: this waits once the kernel's buffers are full.
      ctx.waitUntil((async () => { const chunk = new Uint8Array(1 << 20); for (let i = 0; i < 256; i++) await writer.write(chunk); })());
      return new Response("writing");
    } }`, filename: "stalled.js", compatibilityDate: "2025-01-01", limits: { waitUntilMs: 60000 } });
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "writing");
  await waitFor(() => received > 0, 5000);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const started = performance.now();
  assert.equal(await (await dispatch(worker, "http://localhost/ping")).text(), "pong");
  assert.ok(performance.now() - started < 1000, "the stalled socket does not hold up other requests");
  const disposing = performance.now();
  await worker.dispose();
  assert.ok(performance.now() - disposing < 2000, `dispose took ${Math.round(performance.now() - disposing)} ms`);
  // The peer reads what the kernel held, then finds the connection closed.
  peer.on("data", () => {}).resume();
  await waitFor(() => peerClosed, 5000);
});
