// WebSockets: WebSocketPair in the worker, a 101 Response's socket end for the host through
// dispatch(), text and binary messages and close codes both ways, workerbox dev and serve
// joining real clients (the `ws` package as the client), Durable Objects answering with
// WebSockets through stubs and the hibernation API (acceptWebSocket, tags, handlers,
// auto-response), and what happens when the worker goes away.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import http from "node:http";
import WebSocketClient, { WebSocketServer } from "ws";
import { dispatch, durableObject } from "../index.js";
import { startDevServer } from "../lib/project/index.js";
import { useWorker, evalInWorker, runChild } from "./helpers.mjs";
import { CLI, scaled, spawnNode } from "./child-node.mjs";

const ECHO = `export default { async fetch(request) {
  if (request.headers.get("upgrade") !== "websocket") return new Response("plain " + new URL(request.url).pathname);
  const [client, server] = Object.values(new WebSocketPair());
  server.accept();
  server.binaryType = "arraybuffer"; // binary messages are Blobs by default (websocket_standard_binary_type)
  server.send("welcome");
  server.addEventListener("message", (event) => {
    if (event.data === "bye") return server.close(4000, "asked to");
    server.send(typeof event.data === "string" ? "echo " + event.data : event.data);
  });
  server.addEventListener("close", (event) => console.log("server closed " + event.code + " " + event.reason));
  return new Response(null, { status: 101, webSocket: client, headers: { "x-extra": "yes" } });
} }`;

/** Collects a socket's messages (strings, or byte arrays for binary ones) and its close. */
function watch(ws) {
  const messages = [];
  ws.addEventListener("message", (event) => messages.push(typeof event.data === "string" ? event.data : [...new Uint8Array(event.data)]));
  const closed = new Promise((resolve) => ws.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason, wasClean: event.wasClean })));
  return { messages, closed };
}

async function until(check, ms = 5000) {
  ms = scaled(ms);
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${check}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test("dispatch() of an upgrade gives the host the socket's end: text, binary, close codes both ways", async (t) => {
  const logs = [];
  const worker = await useWorker(t, { script: ECHO, onLog: (level, line) => logs.push(line) });
  const response = await dispatch(worker, { url: "http://localhost/chat", headers: { upgrade: "websocket" } });
  assert.equal(response.status, 101);
  assert.equal(response.headers.get("x-extra"), "yes");
  assert.equal(response.headers.get("x-workerbox-websocket"), null, "the internal header stays inside");
  const ws = response.webSocket;
  const { messages, closed } = watch(ws);
  ws.accept();
  ws.send("hi");
  ws.send(new Uint8Array([1, 2, 255]));
  ws.send("bye");
  assert.deepEqual(await closed, { code: 4000, reason: "asked to", wasClean: true });
  assert.deepEqual(messages, ["welcome", "echo hi", [1, 2, 255]]);
  await until(() => logs.includes("server closed 4000 asked to"));
  assert.throws(() => ws.send("late"), /after close/);

  // The host closes: the worker's end sees the code and reason.
  const second = (await dispatch(worker, { url: "http://localhost/", headers: { upgrade: "websocket" } })).webSocket;
  second.accept();
  second.close(3001, "host leaves");
  await until(() => logs.includes("server closed 3001 host leaves"));
  // A request without the upgrade header is an ordinary response.
  assert.equal(await (await dispatch(worker, "http://localhost/x")).text(), "plain /x");
});

test("WebSocketPair in one worker; Response and send() enforce workerd's rules", async (t) => {
  const result = await evalInWorker(t, `
    const [a, b] = Object.values(new WebSocketPair());
    const got = [];
    a.accept(); b.accept();
    const closed = new Promise((resolve) => a.addEventListener("close", (e) => resolve([e.code, e.reason])));
    b.addEventListener("message", (e) => { got.push(e.data); if (e.data === "2") b.close(1000, "done"); });
    a.send("1"); a.send("2");
    const errors = [];
    for (const attempt of [
      () => new Response(null, { status: 101 }),
      () => new Response(null, { status: 200, webSocket: Object.values(new WebSocketPair())[0] }),
      () => Object.values(new WebSocketPair())[0].send("x"),
      () => a.close(1006),
      () => new WebSocket("ftp://example.com/"),
    ]) { try { attempt(); errors.push(null); } catch (e) { errors.push(e.name + ": " + e.message); } }
    return { got, closed: await closed, readyState: a.readyState, errors };`);
  assert.deepEqual(result.got, ["1", "2"]);
  assert.deepEqual(result.closed, [1000, "done"]);
  assert.equal(result.readyState, 3);
  assert.match(result.errors[0], /^RangeError: .*status 101 needs a webSocket/);
  assert.match(result.errors[1], /^RangeError: .*only be returned with status 101/);
  assert.match(result.errors[2], /^TypeError: You must call accept\(\)/);
  assert.match(result.errors[3], /^InvalidAccessError: .*1000 or between 3000 and 4999/);
  assert.match(result.errors[4], /^SyntaxError: Failed to construct 'WebSocket': the URL ftp:\/\/example\.com\/ is invalid/);
});

test("workerbox dev joins a real client to the worker's WebSocket", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-ws-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "ws-app", main: "index.js", compatibility_date: "2025-06-01" }));
  fs.writeFileSync(path.join(dir, "index.js"), ECHO);
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  const client = new WebSocketClient(new URL("/socket", server.url.replace("http", "ws")).href);
  const messages = [];
  client.on("message", (data, binary) => messages.push(binary ? [...data] : data.toString()));
  const closed = new Promise((resolve) => client.on("close", (code, reason) => resolve([code, reason.toString()])));
  await new Promise((resolve, reject) => client.once("open", resolve).once("error", reject));
  client.send("from a real client");
  client.send(Buffer.from([9, 8]));
  await until(() => messages.length === 3);
  client.send("bye");
  assert.deepEqual(await closed, [4000, "asked to"]);
  assert.deepEqual(messages, ["welcome", "echo from a real client", [9, 8]]);
  assert.ok(lines.some((line) => /GET \/socket 101/.test(line)), lines.join("\n"));
});

test("workerbox serve joins real clients too, and plain answers to an upgrade pass through", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-ws-serve-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "worker.js");
  fs.writeFileSync(file, ECHO.replace('if (request.headers.get("upgrade") !== "websocket")', 'if (new URL(request.url).pathname === "/no")'));
  const child = spawnNode([CLI, "serve", file, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  t.after(() => child.kill("SIGKILL"));
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk) => (out += chunk));
  await until(() => /on http:\/\/127\.0\.0\.1:\d+/.test(out), 20_000);
  const origin = out.match(/http:\/\/127\.0\.0\.1:\d+/)[0];
  const client = new WebSocketClient(origin.replace("http", "ws") + "/");
  const messages = [];
  client.on("message", (data) => messages.push(data.toString()));
  await new Promise((resolve, reject) => client.once("open", resolve).once("error", reject));
  client.send("served");
  await until(() => messages.length === 2);
  assert.deepEqual(messages, ["welcome", "echo served"]);
  client.close(1000);
  const refused = new WebSocketClient(origin.replace("http", "ws") + "/no");
  const status = await new Promise((resolve) => refused.on("unexpected-response", (req, res) => resolve(res.statusCode)).on("error", () => resolve("error")));
  assert.equal(status, 200);
});

const ROOMS = `
import { DurableObject } from "cloudflare:workers";
export class Room extends DurableObject {
  async fetch(request) {
    const [client, server] = Object.values(new WebSocketPair());
    const name = new URL(request.url).searchParams.get("name");
    this.ctx.acceptWebSocket(server, ["room", name]);
    server.serializeAttachment({ name });
    this.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
    return new Response(null, { status: 101, webSocket: client });
  }
  async webSocketMessage(ws, message) {
    const { name } = ws.deserializeAttachment();
    for (const other of this.ctx.getWebSockets("room")) other.send(name + ": " + message + " (" + this.ctx.getTags(other)[1] + " hears it)");
  }
  async webSocketClose(ws, code, reason) {
    await this.ctx.storage.put("closed", [...((await this.ctx.storage.get("closed")) ?? []), ws.deserializeAttachment().name + " " + code]);
  }
  async closes() { return (await this.ctx.storage.get("closed")) ?? []; }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/closes") return Response.json(await env.ROOMS.getByName("lobby").closes());
    return env.ROOMS.getByName("lobby").fetch(request);
  },
};`;

test("a Durable Object answers with WebSockets through its stub; the hibernation API routes their events", async (t) => {
  const worker = await useWorker(t, { script: ROOMS, bindings: { ROOMS: durableObject("Room") } });
  const join = async (name) => {
    const response = await dispatch(worker, { url: `http://localhost/join?name=${name}`, headers: { upgrade: "websocket" } });
    assert.equal(response.status, 101);
    const seen = watch(response.webSocket);
    response.webSocket.accept();
    return { ws: response.webSocket, ...seen };
  };
  const ada = await join("ada");
  const lin = await join("lin");
  ada.ws.send("hello");
  await until(() => ada.messages.length === 1 && lin.messages.length === 1);
  assert.deepEqual(ada.messages, ["ada: hello (ada hears it)"]);
  assert.deepEqual(lin.messages, ["ada: hello (lin hears it)"]);
  lin.ws.send("ping");
  await until(() => lin.messages.length === 2);
  assert.equal(lin.messages[1], "pong", "auto-response, without waking the object's handler");
  assert.equal(ada.messages.length, 1);
  lin.ws.close(3000, "leaving");
  let closes = [];
  const deadline = Date.now() + 5000;
  while (closes.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    closes = await (await dispatch(worker, "http://localhost/closes")).json();
  }
  assert.deepEqual(closes, ["lin 3000"]);
});

test("a disposed worker closes the host's end abnormally (1006)", async (t) => {
  const worker = await useWorker(t, { script: ECHO });
  const ws = (await dispatch(worker, { url: "http://localhost/", headers: { upgrade: "websocket" } })).webSocket;
  const { closed } = watch(ws);
  ws.accept();
  await worker.dispose();
  const event = await closed;
  assert.equal(event.code, 1006);
  assert.equal(event.wasClean, false);
});

test("a worker can talk to a WebSocket another worker's Durable Object answered with", async (t) => {
  const worker = await useWorker(t, {
    script: `import { DurableObject } from "cloudflare:workers";
      export class Echo extends DurableObject {
        fetch() {
          const [client, server] = Object.values(new WebSocketPair());
          server.accept();
          server.send("ready");
          server.addEventListener("message", (event) => server.send("echo " + event.data));
          return new Response(null, { status: 101, webSocket: client });
        }
      }
      export default { async fetch(request, env) {
        const response = await env.ECHO.getByName("e").fetch("http://do/", { headers: { upgrade: "websocket" } });
        const ws = response.webSocket;
        const got = [];
        const done = new Promise((resolve) => ws.addEventListener("message", (event) => { got.push(event.data); if (got.length === 2) resolve(); }));
        ws.accept();
        ws.send("hello");
        await done;
        ws.close(1000, "thanks");
        return Response.json({ status: response.status, got });
      } }`,
    bindings: { ECHO: durableObject("Echo") },
  });
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { status: 101, got: ["ready", "echo hello"] });
});

/** A loopback WebSocket server: greets with the protocol asked for, echoes; plain GETs get 400. */
async function echoServer(t) {
  const server = http.createServer((req, res) => res.writeHead(400).end("not a websocket"));
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws, req) => {
    ws.send("hello " + (req.headers["sec-websocket-protocol"] ?? "") + " " + (req.headers["x-token"] ?? ""));
    ws.on("message", (data, binary) => (String(data) === "close please" ? ws.close(4001, "server closes") : ws.send(binary ? data : "echo " + data)));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const client of wss.clients) client.terminate();
    server.close();
  });
  return `127.0.0.1:${server.address().port}`;
}

test("outbound WebSockets: new WebSocket(url) and fetch() with Upgrade: websocket", async (t) => {
  const address = await echoServer(t);
  const result = await evalInWorker(t, `
    const out = {};
    const ws = new WebSocket("ws://${address}/", ["chat"]);
    ws.binaryType = "arraybuffer";
    out.connecting = ws.readyState;
    const got = [];
    await new Promise((resolve) => {
      ws.addEventListener("open", () => { out.protocol = ws.protocol; ws.send("hi"); ws.send(new Uint8Array([5, 6])); });
      ws.addEventListener("message", (e) => { got.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data)]); if (got.length === 3) ws.close(1000, "done"); });
      ws.addEventListener("close", (e) => { out.close = [e.code, e.reason, e.wasClean]; resolve(); });
    });
    out.got = got;
    const response = await fetch("http://${address}/", { headers: { Upgrade: "websocket", "x-token": "t1" } });
    out.fetchStatus = response.status;
    const socket = response.webSocket;
    socket.accept();
    out.viaFetch = await new Promise((resolve) => {
      const seen = [];
      socket.addEventListener("message", (e) => { seen.push(e.data); if (seen.length === 1) socket.send("close please"); });
      socket.addEventListener("close", (e) => resolve([...seen, e.code, e.reason]));
    });
    const plain = await fetch("http://${address}/", { headers: { Upgrade: "websocket" }, signal: AbortSignal.timeout(5000) }).then((r) => r.status);
    out.plain = plain;
    return out;`);
  assert.deepEqual(result, {
    connecting: 0,
    protocol: "chat",
    close: [1000, "done", true],
    got: ["hello chat ", "echo hi", [5, 6]],
    fetchStatus: 101,
    viaFetch: ["hello  t1", 4001, "server closes"],
    plain: 101,
  });
});

test("outbound WebSockets follow the network policy and report refusals", async (t) => {
  const address = await echoServer(t);
  const refused = await evalInWorker(t, `
    const ws = new WebSocket("ws://${address}/");
    return await new Promise((resolve) => {
      const seen = [];
      ws.addEventListener("error", (e) => seen.push("error: " + e.error.message));
      ws.addEventListener("close", (e) => resolve([...seen, e.code, e.wasClean]));
    });`, { network: "public" });
  assert.equal(refused.length, 3);
  assert.match(refused[0], /non-public addresses and the worker's network policy is "public"/);
  assert.deepEqual(refused.slice(1), [1006, false]);
});

test("an open socket keeps Node's event loop alive, and timers set in its handlers fire (they belong to the request that made it)", async () => {
  const index = fileURLToPath(new URL("../index.js", import.meta.url));
  const result = await runChild(
    `const { createWorker, dispatch } = require(${JSON.stringify(index)});
     (async () => {
       const worker = await createWorker({ onLog() {}, script: \`export default { async fetch() {
         const [client, server] = Object.values(new WebSocketPair());
         server.accept();
         server.addEventListener("message", (e) => setTimeout(() => server.send("late " + e.data), 20));
         return new Response(null, { status: 101, webSocket: client });
       } }\` });
       const ws = (await dispatch(worker, { url: "http://localhost/", headers: { upgrade: "websocket" } })).webSocket;
       const replies = [];
       let next;
       ws.addEventListener("message", (e) => next(e.data));
       ws.accept();
       for (let i = 0; i < 5; i++) {
         const reply = new Promise((resolve) => (next = resolve));
         ws.send(String(i));
         replies.push(await reply);
       }
       ws.close();
       await worker.dispose();
       process.stdout.write(JSON.stringify({ replies }));
     })();`,
    {},
    20_000,
  );
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(result.replies, ["late 0", "late 1", "late 2", "late 3", "late 4"]);
});

test("a worker's WebSocket through a service binding still receives what the other end sends before it takes the close", { timeout: scaled(60_000) }, async (t) => {
  const { createWorker, service } = await import("../index.js");
  const server = await createWorker({
    script: `export default { fetch() {
      const pair = new WebSocketPair();
      pair[0].addEventListener("message", (event) => pair[0].send("echo " + event.data));
      pair[0].accept();
      return new Response(null, { status: 101, webSocket: pair[1] });
    } };`,
    compatibilityFlags: ["web_socket_auto_reply_to_close"],
  });
  t.after(() => server.dispose());
  const client = await createWorker({
    script: `export default { async fetch(request, env) {
      const ws = (await env.S.fetch("http://s/", { headers: { Upgrade: "websocket" } })).webSocket;
      const got = [];
      const closed = new Promise((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
      ws.addEventListener("message", (e) => got.push(e.data));
      ws.accept();
      ws.send("data");
      ws.close(1000, "bye");
      const code = await closed;
      return Response.json([got, code]);
    } };`,
    bindings: { S: service(server) },
  });
  t.after(() => client.dispose());
  // (workerd: the message sent in answer to "data" arrives after close(), before the close event.)
  assert.deepEqual(await (await dispatch(client, "http://c/")).json(), [["echo data"], 1000]);
});
