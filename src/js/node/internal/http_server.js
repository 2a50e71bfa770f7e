// node:http's server half, as workerd has it (enable_nodejs_http_server_modules): a Worker cannot
// listen on a socket, so `server.listen(port)` only registers the server under that port (in
// this isolate), and `httpServerHandler(...)` / `handleAsNodeRequest(port, request)` from
// `cloudflare:node` turn the worker's fetch events into Node `request` events: an
// IncomingMessage (the request body as a Readable) and a ServerResponse (an OutgoingMessage
// whose head becomes the Response as soon as it is sent, its body streamed as it is written).

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one
const EventEmitter = require("node:events");
const { Buffer } = require("node:buffer");
const { IncomingMessage, kBody } = require("node:internal/http_client");
const { OutgoingMessage, parseUniqueHeadersOption, kOutHeaders, kUniqueHeaders, kDeliver, codedError } = require("node:internal/http_outgoing");
const { invalidArgType } = require("node:internal/errors");

const kIncomingMessage = Symbol("IncomingMessage");
const kServerResponse = Symbol("ServerResponse");
const kConnectionsCheckingInterval = Symbol("http.server.connectionsCheckingInterval");
const DEFAULT_HIGH_WATER_MARK = 65536;


// Headers Node keeps only the first of; fetch() has joined their values with ", " already.
const FIRST_ONLY = new Set(["host", "content-type", "user-agent", "referer", "authorization", "proxy-authorization", "if-modified-since", "if-unmodified-since", "from", "location", "max-forwards"]);

/** The first value of a joined header: up to the first comma outside a quoted string. */
function firstValue(value) {
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '"') quoted = !quoted;
    else if (c === "\\" && quoted) i++;
    else if (c === "," && !quoted) return value.slice(0, i);
  }
  return value;
}

/** Server handlers by the port they "listen" on (one isolate's registry, as workerd's). */
const listening = new Map();

function validateInteger(value, name, min = Number.MIN_SAFE_INTEGER) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
  if (!Number.isInteger(value) || value < min || value > Number.MAX_SAFE_INTEGER) {
    throw codedError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${Number.isInteger(value) ? `>= ${min} && <= ${Number.MAX_SAFE_INTEGER}` : "an integer"}. Received ${value}`);
  }
}
function validateBoolean(value, name) {
  if (typeof value !== "boolean") throw invalidArgType(name, "boolean", value);
}
function optionNotImplemented(name) {
  return codedError(TypeError, "ERR_OPTION_NOT_IMPLEMENTED", `The ${name} option is not implemented`);
}

/** Node's storeHTTPOptions, for the options this adapter can honour (the others are refused). */
function storeHTTPOptions(options) {
  this[kIncomingMessage] = options.IncomingMessage || IncomingMessage;
  this[kServerResponse] = options.ServerResponse || ServerResponse;
  if (options.maxHeaderSize !== undefined) {
    validateInteger(options.maxHeaderSize, "maxHeaderSize", 0);
    throw optionNotImplemented("maxHeaderSize");
  }
  if (options.insecureHTTPParser !== undefined) validateBoolean(options.insecureHTTPParser, "options.insecureHTTPParser");
  if (options.requestTimeout !== undefined) validateInteger(options.requestTimeout, "requestTimeout", 0);
  this.requestTimeout = options.requestTimeout ?? 300_000;
  if (options.headersTimeout !== undefined) validateInteger(options.headersTimeout, "headersTimeout", 0);
  this.headersTimeout = options.headersTimeout ?? Math.min(60_000, this.requestTimeout);
  if (this.requestTimeout > 0 && this.headersTimeout > 0 && this.headersTimeout > this.requestTimeout) {
    throw codedError(RangeError, "ERR_OUT_OF_RANGE", `The value of "headersTimeout" is out of range. It must be <= requestTimeout. Received ${options.headersTimeout}`);
  }
  for (const name of ["keepAliveTimeout", "keepAliveTimeoutBuffer", "connectionsCheckingInterval"]) {
    if (options[name] !== undefined) {
      validateInteger(options[name], name, name === "keepAliveTimeoutBuffer" ? undefined : 0);
      throw optionNotImplemented(name);
    }
  }
  if (options.requireHostHeader !== undefined) validateBoolean(options.requireHostHeader, "options.requireHostHeader");
  this.requireHostHeader = options.requireHostHeader ?? true;
  if (options.joinDuplicateHeaders !== undefined) validateBoolean(options.joinDuplicateHeaders, "options.joinDuplicateHeaders");
  this.joinDuplicateHeaders = options.joinDuplicateHeaders ?? false;
  if (options.rejectNonStandardBodyWrites !== undefined) validateBoolean(options.rejectNonStandardBodyWrites, "options.rejectNonStandardBodyWrites");
  this.rejectNonStandardBodyWrites = options.rejectNonStandardBodyWrites ?? false;
}

/** listen()'s arguments as Node reads them: (port?, host?, backlog?, callback?) or (options, callback?). */
function listenArgs(args) {
  const callback = typeof args.at(-1) === "function" ? args.at(-1) : null;
  const first = args[0];
  if (first !== null && typeof first === "object") return { port: first.port, callback };
  return { port: typeof first === "function" ? undefined : first, callback };
}

function validatePort(port) {
  const number = typeof port === "string" && port.trim() !== "" ? Number(port) : port;
  if ((typeof port !== "number" && typeof port !== "string") || typeof number !== "number" || !Number.isInteger(number) || number < 0 || number > 0xffff) {
    throw codedError(RangeError, "ERR_SOCKET_BAD_PORT", `options.port should be >= 0 and < 65536. Received ${typeof port === "string" ? `type string ('${port}')` : `type number (${port})`}.`);
  }
  return number;
}

class Server extends EventEmitter {
  #port = null;
  constructor(options = undefined, requestListener = undefined) {
    super();
    this[kIncomingMessage] = IncomingMessage;
    this[kServerResponse] = ServerResponse;
    this[kUniqueHeaders] = null;
    this.httpAllowHalfOpen = false;
    this.timeout = 0;
    this.maxHeadersCount = null;
    this.maxRequestsPerSocket = 0;
    this.connectionsCheckingInterval = 30_000;
    this.requestTimeout = 300_000;
    this.headersTimeout = 60_000;
    this.requireHostHeader = false;
    this.joinDuplicateHeaders = false;
    this.rejectNonStandardBodyWrites = false;
    this.keepAliveTimeout = 5_000;
    this.keepAliveTimeoutBuffer = 1_000;
    this.highWaterMark = DEFAULT_HIGH_WATER_MARK;
    if (typeof options === "function") [requestListener, options] = [options, {}];
    else if (options === null || options === undefined) options = {};
    else if (typeof options !== "object" || Array.isArray(options)) throw invalidArgType("options", "object", options);
    storeHTTPOptions.call(this, options);
    if (options.highWaterMark !== undefined) {
      if (typeof options.highWaterMark !== "number") throw invalidArgType("options.highWaterMark", "number", options.highWaterMark);
      if (options.highWaterMark > 0) this.highWaterMark = options.highWaterMark;
    }
    if (requestListener) this.on("request", requestListener);
    this[kUniqueHeaders] = parseUniqueHeadersOption(options.uniqueHeaders);
  }
  /** Registers the server under `port` (0 or none picks a free one); nothing opens a socket. */
  listen(...args) {
    const { port: given, callback } = listenArgs(args);
    let port = given === undefined || given === null ? 0 : validatePort(given);
    if (this.#port !== null || listening.has(port)) {
      throw codedError(Error, "ERR_SERVER_ALREADY_LISTEN", "Listen method has been called more than once without closing.");
    }
    if (callback) this.once("listening", callback);
    if (port === 0) {
      do port = 1 + Math.floor(Math.random() * 0xffff);
      while (listening.has(port));
    }
    this.#port = port;
    listening.set(port, (request, env, ctx) => this.#onRequest(request, env, ctx));
    queueMicrotask(() => this.emit("listening"));
    return this;
  }
  async #onRequest(request, env, ctx) {
    const req = new this[kIncomingMessage]();
    req.socket = socketFor(req, request.headers, this.#port);
    const url = new URL(request.url);
    req.url = url.pathname + url.search;
    const raw = [];
    for (const [name, value] of request.headers) raw.push(name, FIRST_ONLY.has(name) ? firstValue(value) : value);
    req.joinDuplicateHeaders = this.joinDuplicateHeaders;
    req._addHeaderLines(raw, raw.length);
    req.method = request.method;
    req[kBody] = request.body;
    req.cloudflare = { env, ctx };
    if ("cf" in request) req.cloudflare.cf = request.cf;
    const res = new this[kServerResponse](req, { highWaterMark: this.highWaterMark });
    try {
      this.emit("connection", this, req);
      this.emit("request", req, res);
      return await responseOf(res);
    } catch (error) {
      res.destroy(error);
      throw error;
    }
  }
  close(callback = undefined) {
    httpServerPreClose(this);
    if (this.#port !== null) {
      listening.delete(this.#port);
      this.#port = null;
    }
    if (typeof callback === "function") this.once("close", callback);
    queueMicrotask(() => this.emit("close"));
    return this;
  }
  closeAllConnections() {}
  closeIdleConnections() {}
  setTimeout(msecs = undefined, callback = undefined) {
    if (typeof msecs === "function") [callback, msecs] = [msecs, undefined];
    else if (typeof msecs === "number") this.timeout = msecs;
    if (typeof callback === "function") this.once("timeout", callback);
    return this;
  }
  getConnections(callback = undefined) {
    if (typeof callback === "function") queueMicrotask(() => callback(null, 0));
    return this;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  get listening() {
    return this.#port !== null;
  }
  address() {
    return this.#port === null ? null : { port: this.#port, family: "IPv4", address: "127.0.0.1" };
  }
  get maxConnections() {
    return Infinity;
  }
  get connections() {
    return 0;
  }
  [Symbol.asyncDispose]() {
    return new Promise((resolve) => this.close(resolve));
  }
}

/** The request's socket: what Node code reads of one (addresses from the request's headers). */
function socketFor(req, headers, localPort) {
  const connectingIp = headers.get("cf-connecting-ip");
  const remotePort = Math.floor(Math.random() * 0x8000) | 0x8000;
  const socket = new EventEmitter();
  const live = (value) => () => (req.destroyed ? undefined : value);
  Object.defineProperties(socket, {
    encrypted: { value: headers.get("x-forwarded-proto") === "https", configurable: true },
    readable: { get: () => req.readable, configurable: true },
    remoteFamily: { get: live(connectingIp && connectingIp.includes(":") ? "IPv6" : "IPv4"), configurable: true },
    remoteAddress: { get: live(connectingIp ?? "127.0.0.1"), configurable: true },
    remotePort: { get: live(remotePort), configurable: true },
    localAddress: { value: headers.get("host") ?? "127.0.0.1", configurable: true },
    localPort: { value: localPort, configurable: true },
    destroy: { value: (error) => req.destroy(error), configurable: true },
  });
  return socket;
}

const responses = new WeakMap(); // ServerResponse -> Promise<Response>
const responseOf = (res) => responses.get(res);

class ServerResponse extends OutgoingMessage {
  constructor(req, options = {}) {
    super(req, options);
    this[kOutHeaders] = null;
    this.statusCode = 200;
    this.statusMessage = "unknown";
    this.sendDate = false;
    if (req?.method === "HEAD") this._hasBody = false;
    this.writeHeader = this.writeHead.bind(this);
    const { promise, resolve, reject } = Promise.withResolvers();
    promise.catch(() => {});
    responses.set(this, promise);
    let controller = null;
    const early = []; // chunks delivered before the body stream started
    let written = 0;
    let limit = null; // the Content-Length the head announced: the body is cut there
    this[kDeliver] = (entries) => {
      for (const { data, encoding, skip } of entries) {
        let chunk = typeof data === "string" ? Buffer.from(skip ? data.slice(skip) : data, encoding ?? undefined) : (data ?? Buffer.alloc(0));
        if (limit !== null && written + chunk.length > limit) {
          if (written >= limit) continue;
          chunk = chunk.subarray(0, limit - written);
        }
        written += chunk.length;
        if (chunk.length === 0) continue;
        const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength).slice();
        if (controller) controller.enqueue(bytes);
        else early.push(bytes);
      }
    };
    this.once("error", reject);
    this.once("_headersSent", ({ statusCode, statusMessage, headers }) => {
      const length = headers.get("content-length");
      if (length !== null) limit = parseInt(length, 10);
      let body = null;
      if (this._hasBody) {
        // The runtime's own constructor: the global one may be closed to scripts (streams_enable_constructors).
        body = new internals.streams.ReadableStream({
          start: (c) => {
            controller = c;
            for (const bytes of early.splice(0)) c.enqueue(bytes);
            let open = true; // an error after the end changes nothing
            this.once("finish", () => {
              if (!open) return;
              open = false;
              try {
                c.close();
              } catch {}
            });
            this.on("error", (error) => {
              if (!open) return;
              open = false;
              try {
                c.error(error);
              } catch {}
            });
          },
          cancel: (reason) => this.destroy(reason),
        });
      }
      resolve(new Response(body, { status: statusCode, statusText: statusMessage, headers }));
      this._closed = true;
      this.emit("close");
    });
  }
  assignSocket() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The assignSocket method is not implemented");
  }
  detachSocket() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The detachSocket method is not implemented");
  }
  writeContinue() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The writeContinue method is not implemented");
  }
  writeProcessing() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The writeProcessing method is not implemented");
  }
  writeEarlyHints() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The writeEarlyHints method is not implemented");
  }
  _implicitHeader() {
    this.writeHead(this.statusCode);
  }
  writeHead(statusCode, reason = undefined, headers = undefined) {
    if (this._header) throw codedError(Error, "ERR_HTTP_HEADERS_SENT", "Cannot write headers after they are sent to the client");
    const given = statusCode;
    statusCode |= 0;
    if (statusCode < 200 || statusCode > 999) throw codedError(RangeError, "ERR_HTTP_INVALID_STATUS_CODE", `Invalid status code: ${given}`);
    if (typeof reason === "string") this.statusMessage = reason;
    else {
      this.statusMessage ||= require("node:http").STATUS_CODES[statusCode] || "unknown";
      headers ??= reason;
    }
    this.statusCode = statusCode;
    let toStore = headers;
    if (this[kOutHeaders]) {
      if (Array.isArray(headers)) {
        if (headers.length % 2 !== 0) throw codedError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'headers' is invalid. Received ${internals.inspect(headers)}`);
        for (let i = 0; i < headers.length; i += 2) this.removeHeader(`${headers[i]}`);
        for (let i = 0; i < headers.length; i += 2) this.appendHeader(`${headers[i]}`, headers[i + 1]);
      } else if (headers) {
        for (const key of Object.keys(headers)) if (headers[key]) this.setHeader(key, headers[key]);
      }
      toStore = this[kOutHeaders];
    }
    if (/[^\t\x20-\x7e\x80-\xff]/.test(this.statusMessage)) throw codedError(TypeError, "ERR_INVALID_CHAR", "Invalid character in statusMessage");
    if (statusCode === 204 || statusCode === 304) this._hasBody = false;
    this._storeHeader(`HTTP/1.1 ${statusCode} ${this.statusMessage}\r\n`, toStore ?? null);
    return this;
  }
}

function httpServerPreClose(server) {
  server.closeIdleConnections();
  clearInterval(server[kConnectionsCheckingInterval]);
}

function portOf(value) {
  if (!Number.isFinite(value) || value < 0 || value > 65535) throw new Error("Failed to determine port for server");
  return value;
}

/** `cloudflare:node`'s `handleAsNodeRequest(port | { port }, request, env?, ctx?)`. */
async function handleAsNodeRequest(target, request, env = undefined, ctx = undefined) {
  const port = portOf(typeof target === "number" ? target : target?.port);
  const handler = listening.get(port);
  if (!handler) {
    throw codedError(Error, "ERR_INVALID_ARG_VALUE", `Http server with port ${port} not found. This is likely a bug with your code. You should check if server.listen() was called with the same port (${port})`);
  }
  return await handler(request, env, ctx);
}

/** `cloudflare:node`'s `httpServerHandler(port | { port } | server)`: a fetch handler for the worker. */
function httpServerHandler(target) {
  if (typeof target === "number") target = { port: target };
  if (target === null || target === undefined) throw new Error("Server descriptor cannot be null or undefined");
  let port = null;
  if ((target.port === null || target.port === undefined) && typeof target.listen === "function") {
    port = target.address()?.port;
    if (typeof port !== "number") {
      target.listen();
      port = target.address()?.port;
    }
  } else if (typeof target.port === "number") {
    port = target.port;
  }
  port = portOf(port);
  return { fetch: (request, env, ctx) => handleAsNodeRequest({ port }, request, env, ctx) };
}

module.exports = {
  Server,
  ServerResponse,
  createServer: (options, listener) => new Server(options, listener),
  httpServerHandler,
  handleAsNodeRequest,
  storeHTTPOptions,
  httpServerPreClose,
  kIncomingMessage,
  kServerResponse,
  kConnectionsCheckingInterval,
};
