// node:net and node:tls under nodejs_compat, on cloudflare:sockets: net.connect() / net.Socket
// against loopback Node servers made here (echo, one that says "bye" and ends, a silent one, a
// bulk sender), their events in order, write callbacks, end(), destroy(), pause()/resume(),
// setTimeout(); tls.connect() to a TLS server with the self-signed certificate in
// fixtures/sockets/ (ca, servername / SNI, rejectUnauthorized: false, a wrong name) and an upgrade
// of a plain socket after a STARTTLS exchange. The event orders, EPIPE and the refused connection's
// error are what workerd 2026-04-26 gave for the same probes (its differences are in
// docs/sockets.md). Every server and worker is closed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import tls from "node:tls";
import { dispatch } from "../index.js";
import { CERT, KEY, listen, starttlsEchoServer, trustTestCertificate } from "./socket-servers.mjs";
import { useWorker, waitFor, freePort } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const CANNOT_CONNECT = "proxy request failed, cannot connect to the specified address";

const echoServer = (t) => listen(t, net.createServer((socket) => socket.pipe(socket)));

/** Runs `body` (an async function's inside, with net, tls, record, once and describe in scope)
 * in a fresh nodejs_compat worker and returns its JSON result. */
async function inWorker(t, body) {
  const script = `import net from "node:net";
import tls from "node:tls";
const describe = (e) => (e?.code ? e.code + ": " : e?.constructor?.name + ": ") + e?.message;
/** The socket's events, in order, as short strings. */
function record(socket) {
  const log = [];
  for (const name of ["secureConnect", "connect", "ready", "data", "end", "finish", "close", "error", "timeout"]) {
    socket.on(name, (arg) => log.push(name === "data" ? "data:" + arg : name === "close" ? "close:" + arg : name === "error" ? "error:" + describe(arg) : name));
  }
  return log;
}
const once = (emitter, name, ms = 5000) => new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error("no '" + name + "' in " + ms + " ms")), ms);
  emitter.once(name, (...args) => { clearTimeout(timer); resolve(args); });
});
export default { async fetch() {
  const result = await (async () => { ${body} })();
  return Response.json(result === undefined ? null : result);
} }`;
  const worker = await useWorker(t, { script, filename: "node-net-test.js", compatibilityDate: "2025-01-01", compatibilityFlags: ["nodejs_compat"] });
  const response = await dispatch(worker, "http://localhost/");
  const text = await response.text();
  assert.equal(response.status, 200, text);
  return JSON.parse(text);
}

test("net.connect() echoes over TCP: events in Node's order, write callbacks, addresses, end() half-closes and the socket closes", { timeout: scaled(30_000) }, async (t) => {
  const port = await echoServer(t);
  const result = await inWorker(t, `
    const socket = net.connect(${port}, "127.0.0.1");
    const log = record(socket);
    const before = { readyState: socket.readyState, pending: socket.pending, connecting: socket.connecting };
    socket.setNoDelay(true).setKeepAlive(true, 1000);
    // Written while connecting: the callback runs once the connection took the bytes.
    const written = await new Promise((resolve) => socket.write("hello", (error) => resolve(error ? describe(error) : "written")));
    const open = { readyState: socket.readyState, pending: socket.pending, remote: [socket.remoteAddress, socket.remotePort, socket.remoteFamily], local: [socket.localAddress, typeof socket.localPort, socket.localFamily], address: Object.keys(socket.address()) };
    await once(socket, "data");
    socket.end();
    await once(socket, "close");
    return { before, written, open, log, after: { readyState: socket.readyState, destroyed: socket.destroyed, bytesRead: socket.bytesRead, bytesWritten: socket.bytesWritten } };
  `);
  assert.deepEqual(result.before, { readyState: "opening", pending: true, connecting: true });
  assert.equal(result.written, "written");
  assert.deepEqual(result.open, { readyState: "open", pending: false, remote: ["127.0.0.1", port, "IPv4"], local: ["127.0.0.1", "number", "IPv4"], address: ["address", "family", "port"] });
  assert.deepEqual(result.log, ["connect", "ready", "data:hello", "finish", "end", "close:false"]);
  assert.deepEqual(result.after, { readyState: "closed", destroyed: true, bytesRead: 5, bytesWritten: 5 });
});

test("net.createConnection({ host, port }, cb): a server that ends makes 'end', this side's end and 'close'; a write afterwards fails", { timeout: scaled(30_000) }, async (t) => {
  const port = await listen(t, net.createServer((socket) => socket.end("bye")));
  const result = await inWorker(t, `
    let connected = false;
    const socket = net.createConnection({ host: "localhost", port: ${port} }, () => (connected = true));
    const log = record(socket);
    await once(socket, "close");
    const late = await new Promise((resolve) => socket.write("late", (error) => resolve(error ? describe(error) : "written")));
    return { connected, log, late, remote: socket.remoteAddress };
  `);
  assert.equal(result.connected, true);
  assert.deepEqual(result.log, ["connect", "ready", "data:bye", "end", "finish", "close:false"]);
  assert.match(result.late, /^(EPIPE|ERR_STREAM_DESTROYED)/);
  assert.equal(result.remote, undefined, "a closed socket has no peer");
});

test("net.connect() to a closed port emits 'error' with workerd's message, then 'close' with hadError; a write made meanwhile fails", { timeout: scaled(30_000) }, async (t) => {
  const port = await freePort();
  const result = await inWorker(t, `
    const socket = net.connect({ port: ${port}, host: "127.0.0.1" });
    const log = record(socket);
    socket.write("early", (error) => log.push("write callback: " + describe(error)));
    await once(socket, "close");
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { log, callable: net.Socket() instanceof net.Socket };
  `);
  assert.equal(result.log.length, 3, JSON.stringify(result.log));
  assert.ok(result.log[0].startsWith(`error:Error: ${CANNOT_CONNECT}`), result.log[0]);
  assert.deepEqual(result.log.slice(1), ["close:true", "write callback: ERR_SOCKET_CLOSED_BEFORE_CONNECTION: Socket closed before connection established"]);
  assert.equal(result.callable, true, "net.Socket() without new makes a socket, as in Node and workerd");
});

test("pause() stops reading from the network (the peer is held back) and resume() takes the rest", { timeout: scaled(30_000) }, async (t) => {
  const total = 4 * 1024 * 1024;
  const port = await listen(t, net.createServer((socket) => socket.end(Buffer.alloc(total, 7))));
  const result = await inWorker(t, `
    const socket = net.connect(${port}, "127.0.0.1");
    socket.pause();
    let received = 0;
    socket.on("data", (chunk) => (received += chunk.length));
    await once(socket, "connect");
    await new Promise((resolve) => setTimeout(resolve, 300));
    const whilePaused = { received, bytesRead: socket.bytesRead, isPaused: socket.isPaused() };
    socket.resume();
    await once(socket, "end", 20000);
    return { whilePaused, received, bytesRead: socket.bytesRead };
  `);
  assert.equal(result.whilePaused.received, 0);
  assert.equal(result.whilePaused.isPaused, true);
  assert.ok(result.whilePaused.bytesRead < 512 * 1024, `read ${result.whilePaused.bytesRead} bytes while paused`);
  assert.equal(result.received, total);
  assert.equal(result.bytesRead, total);
});

test("setTimeout() emits 'timeout' after idle time (the socket stays open); setTimeout(0) turns it off; destroy() closes without error, destroy(error) with it", { timeout: scaled(30_000) }, async (t) => {
  const peers = [];
  const port = await listen(t, net.createServer((socket) => {
    peers.push(socket);
    socket.on("end", () => socket.end());
  }));
  const result = await inWorker(t, `
    const idle = net.connect(${port}, "127.0.0.1");
    const idleLog = record(idle);
    await once(idle, "connect");
    const started = Date.now();
    idle.setTimeout(150);
    await once(idle, "timeout");
    const waited = Date.now() - started;
    const stillOpen = idle.readyState;
    idle.destroy();
    await once(idle, "close");

    const quiet = net.connect(${port}, "127.0.0.1");
    quiet.setTimeout(100);
    quiet.setTimeout(0);
    const quietLog = record(quiet);
    await once(quiet, "connect");
    await new Promise((resolve) => setTimeout(resolve, 300));
    quiet.destroy(new Error("enough"));
    await once(quiet, "close");
    return { waited, stillOpen, idleLog, quietLog, timeout: quiet.timeout };
  `);
  assert.ok(result.waited >= 140 && result.waited < 2000, `timeout after ${result.waited} ms`);
  assert.equal(result.stillOpen, "open");
  assert.deepEqual(result.idleLog, ["connect", "ready", "timeout", "close:false"]);
  assert.deepEqual(result.quietLog, ["connect", "ready", "error:Error: enough", "close:true"]);
  assert.equal(result.timeout, 0);
  // The server saw both connections go.
  await waitFor(() => peers.length === 2 && peers.every((socket) => socket.destroyed || socket.readableEnded), 5000);
});

test("tls.connect(): ca trusts the test certificate, servername is sent as SNI and checked, rejectUnauthorized: false skips the check; errors name the reason", { timeout: scaled(30_000) }, async (t) => {
  const port = await listen(t, tls.createServer({ key: KEY, cert: CERT }, (socket) => {
    socket.on("error", () => {});
    socket.write(`sni=${socket.servername}`);
    socket.pipe(socket);
  }));
  const result = await inWorker(t, `
    const CA = ${JSON.stringify(String(CERT))};
    async function attempt(...args) {
      let called = false;
      const socket = tls.connect(...args, () => (called = true));
      const log = record(socket);
      await new Promise((resolve) => { socket.once("data", resolve); socket.once("close", resolve); });
      const state = { encrypted: socket.encrypted, authorized: socket.authorized, called };
      if (!socket.destroyed) {
        socket.write("!");
        await once(socket, "data");
        socket.end();
        await once(socket, "close");
      }
      return { log, state };
    }
    return {
      sni: await attempt({ host: "127.0.0.1", port: ${port}, servername: "localhost", ca: CA }),
      byIp: await attempt(${port}, "127.0.0.1", { ca: [Buffer.from(CA)] }),
      untrusted: await attempt({ host: "localhost", port: ${port} }),
      unchecked: await attempt({ host: "localhost", port: ${port}, rejectUnauthorized: false }),
      wrongName: await attempt({ host: "127.0.0.1", port: ${port}, servername: "example.com", ca: CA }),
      badCa: await attempt({ host: "localhost", port: ${port}, ca: "not a certificate" }),
    };
  `);
  // As in workerd, 'secureConnect' comes from a 'connect' listener of the socket's own, so a
  // listener added after tls.connect() sees it first.
  assert.deepEqual(result.sni, { log: ["secureConnect", "connect", "ready", "data:sni=localhost", "data:!", "finish", "end", "close:false"], state: { encrypted: true, authorized: true, called: true } });
  // No SNI for an IP address (as Node's client does), and the certificate's IP SAN matches.
  assert.deepEqual(result.byIp.log.slice(0, 4), ["secureConnect", "connect", "ready", "data:sni=false"]);
  assert.equal(result.byIp.state.authorized, true);
  assert.deepEqual(result.unchecked.log.slice(0, 4), ["secureConnect", "connect", "ready", "data:sni=localhost"]);
  assert.equal(result.unchecked.state.authorized, false, "not checked, so not authorized");
  for (const [name, reason] of [["untrusted", "invalid peer certificate: UnknownIssuer"], ["wrongName", "invalid peer certificate: certificate not valid for name \"example.com\""], ["badCa", "options.ca holds no PEM certificate"]]) {
    const { log, state } = result[name];
    assert.equal(log.length, 2, `${name}: ${JSON.stringify(log)}`);
    assert.ok(log[0].includes(reason), `${name}: ${log[0]}`);
    assert.equal(log[1], "close:true");
    assert.equal(state.called, false);
  }
});

test("tls.connect({ socket }) upgrades a connected net.Socket after a STARTTLS exchange (trusting NODE_EXTRA_CA_CERTS); a per-socket ca is ignored there, as workerd ignores it, and rejectUnauthorized: false is refused", { timeout: scaled(30_000) }, async (t) => {
  const port = await starttlsEchoServer(t);
  trustTestCertificate(t);
  const result = await inWorker(t, `
    const plain = net.connect(${port}, "localhost");
    plain.write("STARTTLS\\r\\n");
    const [reply] = await once(plain, "data");
    let refused;
    try { tls.connect({ socket: plain, rejectUnauthorized: false }); } catch (error) { refused = describe(error); }
    const secure = tls.connect({ socket: plain, servername: "localhost", ca: "not a certificate the upgrade reads" });
    const log = record(secure);
    await once(secure, "secureConnect");
    secure.write("secret");
    await once(secure, "data");
    secure.end();
    await once(secure, "close");
    return { reply: String(reply), refused, log, authorized: secure.authorized, plainDestroyed: plain.destroyed };
  `);
  assert.equal(result.reply, "OK\r\n");
  assert.match(result.refused, /^ERR_OPTION_NOT_IMPLEMENTED: The options.rejectUnauthorized option is not implemented for an upgrade/);
  assert.deepEqual(result.log, ["secureConnect", "connect", "ready", "data:secret", "finish", "end", "close:false"]);
  assert.equal(result.authorized, true);
  assert.equal(result.plainDestroyed, true);
});
