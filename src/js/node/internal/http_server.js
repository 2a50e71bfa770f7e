// node:http's server half, as workerd has it (enable_nodejs_http_server_modules): a Worker cannot
// listen on a socket, so `server.listen(port)` only registers the server under that port, and
// `httpServerHandler({ port })` (or `httpServerHandler(server)`) from `cloudflare:node` turns the
// worker's fetch events into Node `request` events: an IncomingMessage (the request body as a
// Readable) and a ServerResponse (a Writable whose head and chunks become the Response, its
// body streamed as it is written).

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one
const EventEmitter = require("node:events");
const { Writable } = require("node:stream");
const { Buffer } = require("node:buffer");
const { IncomingMessage } = require("node:internal/http_client");
const { headersSentError } = require("node:internal/errors");

/** Servers by the port they "listen" on. */
const listening = new Map();
let nextPort = 10_000;

class Server extends EventEmitter {
  #port = null;
  constructor(options = undefined, requestListener = undefined) {
    super();
    if (typeof options === "function") [requestListener, options] = [options, undefined];
    if (typeof requestListener === "function") this.on("request", requestListener);
    this.timeout = 0;
    this.keepAliveTimeout = 5000;
    this.headersTimeout = 60000;
    this.requestTimeout = 300000;
    this.maxHeadersCount = null;
  }
  /** Registers the server under `port` (0 picks one); nothing opens a socket. */
  listen(...args) {
    const callback = typeof args.at(-1) === "function" ? args.pop() : undefined;
    const first = args[0];
    let port = typeof first === "object" && first !== null ? first.port : first;
    port = port === undefined || port === null || port === 0 || port === "0" ? nextPort++ : Number(port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      const error = new RangeError(`options.port should be >= 0 and < 65536. Received ${String(first)}.`);
      error.code = "ERR_SOCKET_BAD_PORT";
      throw error;
    }
    if (listening.has(port) && listening.get(port) !== this) {
      const error = new Error(`listen EADDRINUSE: address already in use :::${port}`);
      error.code = "EADDRINUSE";
      throw error;
    }
    this.#port = port;
    listening.set(port, this);
    if (callback) this.once("listening", callback);
    queueMicrotask(() => this.emit("listening"));
    return this;
  }
  get listening() {
    return this.#port !== null;
  }
  address() {
    return this.#port === null ? null : { address: "::", family: "IPv6", port: this.#port };
  }
  close(callback = undefined) {
    if (this.#port !== null && listening.get(this.#port) === this) listening.delete(this.#port);
    this.#port = null;
    queueMicrotask(() => {
      this.emit("close");
      callback?.();
    });
    return this;
  }
  closeAllConnections() {}
  closeIdleConnections() {}
  setTimeout(ms, callback) {
    this.timeout = ms;
    if (callback) this.on("timeout", callback);
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  [Symbol.asyncDispose]() {
    return new Promise((resolve) => this.close(resolve));
  }
}

/** A header value as the Response takes it. */
const headerText = (value) => (Array.isArray(value) ? value.map(String) : [String(value)]);

class ServerResponse extends Writable {
  #headers = new Map(); // lower-case name -> [name, value]
  #head = null;
  #controller = null;
  #respond;
  constructor(req, respond) {
    super();
    this.req = req;
    this.#respond = respond;
    this.statusCode = 200;
    this.statusMessage = undefined;
    this.sendDate = true;
    this.finished = false;
  }
  get headersSent() {
    return this.#head !== null;
  }
  setHeader(name, value) {
    if (this.headersSent) throw headersSentError();
    this.#headers.set(String(name).toLowerCase(), [String(name), value]);
    return this;
  }
  appendHeader(name, value) {
    const key = String(name).toLowerCase();
    const existing = this.#headers.get(key);
    this.#headers.set(key, [existing?.[0] ?? String(name), existing ? [...headerText(existing[1]), ...headerText(value)] : value]);
    return this;
  }
  getHeader(name) {
    return this.#headers.get(String(name).toLowerCase())?.[1];
  }
  getHeaders() {
    const out = { __proto__: null };
    for (const [key, [, value]] of this.#headers) out[key] = value;
    return out;
  }
  getHeaderNames() {
    return [...this.#headers.keys()];
  }
  hasHeader(name) {
    return this.#headers.has(String(name).toLowerCase());
  }
  removeHeader(name) {
    this.#headers.delete(String(name).toLowerCase());
  }
  writeHead(statusCode, statusMessage = undefined, headers = undefined) {
    if (typeof statusMessage === "object" && statusMessage !== null) [headers, statusMessage] = [statusMessage, undefined];
    this.statusCode = statusCode;
    if (statusMessage !== undefined) this.statusMessage = statusMessage;
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) this.appendHeader(headers[i], headers[i + 1]);
    } else if (headers) {
      for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    }
    this.#sendHead();
    return this;
  }
  flushHeaders() {
    this.#sendHead();
  }
  /** The head goes out: the Response, with a body that streams what is written next. */
  #sendHead() {
    if (this.#head !== null) return;
    const headers = new Headers();
    for (const [, [name, value]] of this.#headers) for (const item of headerText(value)) headers.append(name, item);
    const nullBody = [204, 205, 304].includes(this.statusCode) || this.req.method === "HEAD";
    const body = nullBody
      ? null
      : new internals.streams.ReadableStream({
          start: (controller) => {
            this.#controller = controller;
          },
        });
    this.#head = { status: this.statusCode, statusText: this.statusMessage ?? "" };
    this.#respond(new Response(body, { status: this.statusCode, statusText: this.statusMessage ?? "", headers }));
  }
  _write(chunk, encoding, callback) {
    this.#sendHead();
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk;
    this.#controller?.enqueue(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    callback();
  }
  _final(callback) {
    this.#sendHead();
    this.finished = true;
    this.#controller?.close();
    this.#controller = null;
    callback();
  }
  _destroy(error, callback) {
    // Destroyed before end() (an error, or the handler gave up): the body errors.
    if (this.#controller) {
      try {
        this.#controller.error(error ?? new Error("The response was destroyed"));
      } catch {}
    }
    callback(error);
  }
  writeContinue() {}
  writeProcessing() {}
  writeEarlyHints() {}
  setTimeout() {
    return this;
  }
  assignSocket() {}
  detachSocket() {}
}

/** Runs `server`'s request listeners for `request`; resolves to the Response they write. */
function handleWithServer(server, request) {
  const url = new URL(request.url);
  const req = new IncomingMessage({ status: undefined, statusText: "", headers: request.headers, body: request.body, url: "" });
  req.method = request.method;
  req.url = url.pathname + url.search;
  req.socket = req.connection = { remoteAddress: request.headers.get("cf-connecting-ip") ?? "127.0.0.1", remotePort: 0, encrypted: url.protocol === "https:" };
  return new Promise((resolve, reject) => {
    const res = new ServerResponse(req, resolve);
    res.on("error", reject);
    try {
      if (server.listenerCount("request") === 0) throw new Error("The HTTP server has no request listener.");
      server.emit("request", req, res);
    } catch (error) {
      reject(error);
    }
  });
}

function serverFor(target) {
  if (target instanceof Server) return target;
  const port = typeof target === "object" && target !== null ? target.port : target;
  const server = listening.get(Number(port));
  if (server === undefined) {
    const error = new Error(`No server is listening on port ${port}: call server.listen(${port}) first.`);
    error.code = "ERR_INVALID_ARG_VALUE";
    throw error;
  }
  return server;
}

/** `cloudflare:node`'s `httpServerHandler(server | { port })`: a fetch handler for the worker. */
function httpServerHandler(target) {
  if (!(target instanceof Server) && (target === null || typeof target !== "object" || target.port === undefined)) {
    throw new TypeError("httpServerHandler: pass a node:http Server, or { port } of a server that listens on it.");
  }
  return { fetch: (request) => handleWithServer(serverFor(target), request) };
}

/** `cloudflare:node`'s `handleAsNodeRequest(port, request)`. */
function handleAsNodeRequest(port, request) {
  return handleWithServer(serverFor(port), request);
}

module.exports = { Server, ServerResponse, createServer: (options, listener) => new Server(options, listener), httpServerHandler, handleAsNodeRequest };
