// The inspector's host side: a Chrome DevTools Protocol endpoint per host and port, shared by
// every worker created with `inspector` on it. It answers the discovery endpoints
// (`/json`, `/json/list`, `/json/version`) and takes WebSocket connections at `/<worker id>`,
// each a session of that worker's V8 inspector (src/runtime/inspector.rs). It listens only while
// some worker is inspected, on loopback unless a host is given.
"use strict";

const DEFAULT_PORT = 9229;
const DEFAULT_HOST = "127.0.0.1";

/** Checks `createWorker`'s `inspector` option: `{ port, host, name, waitForDebugger }` or null. */
function inspectorOptions(value, filename) {
  if (value === undefined || value === false) return null;
  const options = value === true ? {} : value;
  if (options === null || typeof options !== "object") throw new TypeError("createWorker: options.inspector must be true or { port, host, name, waitForDebugger }");
  const { port = DEFAULT_PORT, host = DEFAULT_HOST, name = filename, waitForDebugger = false } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`createWorker: options.inspector.port must be a port number (0 picks a free one), got ${JSON.stringify(port)}`);
  if (typeof host !== "string" || host === "") throw new TypeError("createWorker: options.inspector.host must be a host name or address");
  if (typeof name !== "string" || name === "") throw new TypeError("createWorker: options.inspector.name must be a non-empty string");
  if (typeof waitForDebugger !== "boolean") throw new TypeError("createWorker: options.inspector.waitForDebugger must be a boolean");
  return { port, host, name, waitForDebugger };
}

/** Servers by "host:port": { server, targets: Map<id, target>, ready: Promise, address }. */
const servers = new Map();

function describe(entry, target) {
  const address = `${entry.address.host}:${entry.address.port}`;
  return {
    description: "workerbox worker",
    devtoolsFrontendUrl: `devtools://devtools/bundled/js_app.html?experiments=true&v8only=true&ws=${address}/${target.id}`,
    devtoolsFrontendUrlCompat: `devtools://devtools/bundled/inspector.html?experiments=true&v8only=true&ws=${address}/${target.id}`,
    faviconUrl: "https://workers.cloudflare.com/favicon.ico",
    id: target.id,
    title: target.name,
    type: "node",
    url: `file://${target.filename.startsWith("/") ? "" : "/"}${target.filename}`,
    webSocketDebuggerUrl: `ws://${address}/${target.id}`,
  };
}

function answer(entry, request, response) {
  const path = new URL(request.url, "http://localhost").pathname.replace(/\/$/, "");
  let body;
  if (path === "/json" || path === "/json/list") body = [...entry.targets.values()].map((target) => describe(entry, target));
  else if (path === "/json/version") body = { Browser: `workerbox/${require("../package.json").version}`, "Protocol-Version": "1.3" };
  else {
    response.writeHead(404, { "content-type": "text/plain" }).end(`no such inspector endpoint: ${path}`);
    return;
  }
  response.writeHead(200, { "content-type": "application/json; charset=UTF-8" }).end(JSON.stringify(body, null, 2));
}

async function serverFor(host, port) {
  const key = `${host}:${port}`;
  let entry = servers.get(key);
  if (entry === undefined || port === 0) {
    const { WebSocketServer } = require("ws");
    const server = require("node:http").createServer();
    const wss = new WebSocketServer({ noServer: true });
    entry = { server, targets: new Map(), address: null };
    const current = entry;
    server.on("request", (request, response) => answer(current, request, response));
    server.on("upgrade", (request, socket, head) => {
      const id = new URL(request.url, "http://localhost").pathname.slice(1);
      const target = current.targets.get(id);
      if (!target) {
        socket.end("HTTP/1.1 404 Not Found\r\n\r\n");
        return;
      }
      wss.handleUpgrade(request, socket, head, (ws) => target.attach(ws));
    });
    entry.ready = new Promise((resolve, reject) => {
      server.once("error", (error) => {
        servers.delete(key);
        reject(new Error(`createWorker: the inspector could not listen on ${host}:${port}: ${error.message}`, { cause: error }));
      });
      server.listen(port, host, () => {
        current.address = { host: host.includes(":") ? `[${host}]` : host, port: server.address().port };
        resolve();
      });
    });
    if (port !== 0) servers.set(key, entry);
  }
  await entry.ready;
  return entry;
}

let nextSession = 1;

/**
 * Makes the inspector of a worker about to be created: `{ native, register(worker), url }`.
 * `native` goes to the native createWorker; `register` lists the worker once it exists (with
 * waitForDebugger, before: the worker's start waits for a client).
 */
async function createInspector(options, filename, NativeInspector) {
  const entry = await serverFor(options.host, options.port);
  const sockets = new Map();
  const native = new NativeInspector(options.name, options.waitForDebugger, (session, message) => {
    const ws = sockets.get(session);
    if (ws && ws.readyState === 1) ws.send(message);
  });
  const target = {
    id: require("node:crypto").randomUUID(),
    name: options.name,
    filename,
    attach(ws) {
      const session = nextSession++;
      sockets.set(session, ws);
      native.connect(session);
      ws.on("message", (data) => native.send(session, data.toString()));
      ws.on("close", () => {
        sockets.delete(session);
        native.disconnect(session);
      });
      ws.on("error", () => {});
    },
  };
  entry.targets.set(target.id, target);
  const close = () => {
    entry.targets.delete(target.id);
    for (const ws of sockets.values()) ws.close(1001, "the worker was disposed");
    sockets.clear();
    if (entry.targets.size === 0) {
      for (const [key, value] of servers) if (value === entry) servers.delete(key);
      entry.server.close();
      entry.server.closeAllConnections?.();
    }
  };
  return { native, close, url: `ws://${entry.address.host}:${entry.address.port}/${target.id}`, listUrl: `http://${entry.address.host}:${entry.address.port}/json/list` };
}

module.exports = { inspectorOptions, createInspector };
