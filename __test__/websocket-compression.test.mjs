// web_socket_compression (2023-08-15): WebSockets negotiate permessage-deflate (RFC 7692) as
// workerd does. Outbound, `new WebSocket(url)` offers it and `fetch()` with `Upgrade:
// websocket` passes on the worker's own offer; before the date neither offers anything.
// Inbound (workerbox dev / serve), a worker's 101 answer agrees to what the client offered, or
// to the `Sec-WebSocket-Extensions` the worker set ("" for none); before the date, never.
// The servers and clients are the `ws` package on loopback; the bytes on the wire show whether
// messages really went compressed.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import crypto from "node:crypto";
import WebSocketClient, { WebSocketServer } from "ws";
import { startDevServer } from "../lib/project/index.js";
import { evalInWorker } from "./helpers.mjs";

const OLD = "2023-08-14";
const NEW = "2023-08-15";
/** A message that deflates to a few dozen bytes. */
const BIG = "workerbox ".repeat(5000);

/**
 * A loopback echo server that accepts permessage-deflate (`deflate`: ws's options) and records,
 * per connection, the offer it saw, what was agreed and the bytes that came in after the handshake.
 */
async function deflateServer(t, deflate = {}) {
  const server = http.createServer((req, res) => res.writeHead(400).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: { threshold: 0, ...deflate } });
  const seen = [];
  wss.on("connection", (ws, req) => {
    const record = { offer: req.headers["sec-websocket-extensions"] ?? null, agreed: ws.extensions, start: req.socket.bytesRead };
    seen.push(record);
    ws.on("message", (data, binary) => {
      record.inBytes = req.socket.bytesRead - record.start;
      ws.send(binary ? data : String(data));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const client of wss.clients) client.terminate();
    server.close();
  });
  return { address: `127.0.0.1:${server.address().port}`, seen };
}

/** Worker code: opens `socket`, sends BIG, waits for the echo; gives extensions before and after open. */
const roundTrip = (open) => `
  const ws = ${open};
  const out = { connecting: ws.extensions ?? "(null)" };
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", () => { out.open = ws.extensions; ws.send(${JSON.stringify(BIG)}); });
    ws.addEventListener("message", (e) => { out.echoed = e.data === ${JSON.stringify(BIG)}; ws.close(1000); resolve(); });
    ws.addEventListener("close", (e) => resolve());
    ws.addEventListener("error", (e) => reject(e.error));
  });
  return out;`;

test("new WebSocket(url) offers permessage-deflate from 2023-08-15, and messages go compressed both ways", async (t) => {
  const { address, seen } = await deflateServer(t);
  const result = await evalInWorker(t, roundTrip(`new WebSocket("ws://${address}/")`), { compatibilityDate: NEW });
  assert.deepEqual(result, { connecting: "", open: "permessage-deflate", echoed: true });
  assert.equal(seen[0].offer, "permessage-deflate");
  assert.equal(seen[0].agreed, "permessage-deflate");
  assert.ok(seen[0].inBytes < 1000, `the 50,000-byte message took ${seen[0].inBytes} bytes on the wire`);
});

test("before 2023-08-15, or with no_web_socket_compression, nothing is offered and messages go as they are", async (t) => {
  const { address, seen } = await deflateServer(t);
  const old = await evalInWorker(t, roundTrip(`new WebSocket("ws://${address}/")`), { compatibilityDate: OLD });
  const off = await evalInWorker(t, roundTrip(`new WebSocket("ws://${address}/")`), { compatibilityDate: NEW, compatibilityFlags: ["no_web_socket_compression"] });
  assert.deepEqual(old, { connecting: "", open: null, echoed: true });
  assert.deepEqual(off, old);
  for (const record of seen) {
    assert.equal(record.offer, null);
    assert.equal(record.agreed, "");
    assert.ok(record.inBytes > BIG.length, `only ${record.inBytes} bytes came in`);
  }
  const on = await evalInWorker(t, roundTrip(`new WebSocket("ws://${address}/")`), { compatibilityDate: OLD, compatibilityFlags: ["web_socket_compression"] });
  assert.equal(on.open, "permessage-deflate");
});

test("fetch() with Upgrade: websocket passes on the worker's own offer from 2023-08-15, and drops it before", async (t) => {
  // The server holds this side to a 1 KiB window: the worker must then send uncompressed.
  const { address, seen } = await deflateServer(t, { clientMaxWindowBits: 10 });
  const code = `
    const response = await fetch("http://${address}/", { headers: { upgrade: "websocket", "sec-websocket-extensions": "permessage-deflate; client_max_window_bits" } });
    const socket = response.webSocket;
    socket.accept();
    const echoed = await new Promise((resolve) => {
      socket.addEventListener("message", (e) => resolve(e.data === ${JSON.stringify(BIG)}));
      socket.send(${JSON.stringify(BIG)});
    });
    socket.close(1000);
    return { echoed, answered: response.headers.get("sec-websocket-extensions") };`;
  const fresh = await evalInWorker(t, code, { compatibilityDate: NEW });
  assert.equal(fresh.echoed, true);
  assert.equal(fresh.answered, "permessage-deflate; client_max_window_bits=10");
  assert.equal(seen[0].offer, "permessage-deflate; client_max_window_bits");
  assert.ok(seen[0].inBytes > BIG.length, "with a window smaller than its own, the worker sends uncompressed");
  const old = await evalInWorker(t, code, { compatibilityDate: OLD });
  assert.deepEqual([old.echoed, old.answered, seen[1].offer], [true, null, null]);
});

test("a server answering with an extension that was not offered is refused", async (t) => {
  const server = http.createServer();
  server.on("upgrade", (req, socket) => {
    const accept = (key) => crypto.createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    socket.end(`HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${accept(req.headers["sec-websocket-key"])}\r\nsec-websocket-extensions: permessage-deflate\r\n\r\n`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const result = await evalInWorker(t, `
    const ws = new WebSocket("ws://127.0.0.1:${server.address().port}/");
    return await new Promise((resolve) => {
      const seen = [];
      ws.addEventListener("error", (e) => seen.push(e.error.message));
      ws.addEventListener("close", (e) => resolve([...seen, e.code]));
    });`, { compatibilityDate: OLD });
  assert.equal(result.length, 2);
  assert.match(result[0], /the server chose the extension "permessage-deflate", which was not offered/);
  assert.equal(result[1], 1006);
});

/** workerbox dev on a project with `date`; `answer` is the extensions header the worker sets, if any. */
async function devServer(t, date, answer) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-wsz-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "wsz", main: "index.js", compatibility_date: date }));
  fs.writeFileSync(path.join(dir, "index.js"), `export default { fetch(request) {
    const [client, server] = Object.values(new WebSocketPair());
    server.accept();
    server.addEventListener("message", (e) => server.send(e.data));
    return new Response(null, { status: 101, webSocket: client${answer === undefined ? "" : `, headers: { "sec-websocket-extensions": ${JSON.stringify(answer)} }`} });
  } }`);
  const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log() {} });
  t.after(() => server.close());
  return server;
}

/** A browser-like client (ws offers permessage-deflate by default): what was agreed, and the bytes the echo took. */
async function clientRoundTrip(server) {
  const client = new WebSocketClient(server.url.replace("http", "ws"), { perMessageDeflate: { threshold: 0 } });
  await new Promise((resolve, reject) => client.once("open", resolve).once("error", reject));
  const start = client._socket.bytesRead;
  const echoed = await new Promise((resolve) => {
    client.once("message", (data) => resolve(String(data) === BIG));
    client.send(BIG);
  });
  const result = { agreed: client.extensions, echoed, inBytes: client._socket.bytesRead - start };
  client.close(1000);
  return result;
}

test("workerbox dev agrees to the client's permessage-deflate from 2023-08-15, as the worker's answer says", async (t) => {
  const fresh = await clientRoundTrip(await devServer(t, NEW));
  assert.deepEqual([fresh.agreed, fresh.echoed], ["permessage-deflate", true]);
  assert.ok(fresh.inBytes < 1000, `the echo took ${fresh.inBytes} bytes`);
  const old = await clientRoundTrip(await devServer(t, OLD));
  assert.deepEqual([old.agreed, old.echoed], ["", true]);
  assert.ok(old.inBytes > BIG.length);
  // The worker's own "" asks for no compression; before the date, its header is dropped.
  assert.equal((await clientRoundTrip(await devServer(t, NEW, ""))).agreed, "");
  assert.equal((await clientRoundTrip(await devServer(t, OLD, "permessage-deflate"))).agreed, "");
});
