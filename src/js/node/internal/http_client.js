// node:http's client over the worker's fetch(), as workerd builds it: ClientRequest is a
// Writable that gathers the body and sends one fetch() at end(); the answer is an
// IncomingMessage (a Readable of the response body) with statusCode, statusMessage, headers
// (lower-case names) and rawHeaders. Agent only carries Node's settings (fetch() pools
// connections itself). Upgrades, CONNECT, trailers and informational responses are not supported.

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one
const { Writable, Readable } = require("node:stream");
const EventEmitter = require("node:events");
const { Buffer } = require("node:buffer");
const { invalidArgType, headersSentError } = require("node:internal/errors");

class Agent extends EventEmitter {
  static defaultMaxSockets = Infinity;
  constructor(options = {}) {
    super();
    this.options = { __proto__: null, ...options };
    this.defaultPort = this.options.defaultPort || 80;
    this.protocol = this.options.protocol || "http:";
    this.keepAliveMsecs = this.options.keepAliveMsecs || 1000;
    this.keepAlive = this.options.keepAlive || false;
    this.maxSockets = this.options.maxSockets || Agent.defaultMaxSockets;
    this.maxFreeSockets = this.options.maxFreeSockets || 256;
    this.maxTotalSockets = this.options.maxTotalSockets ?? Infinity;
    this.scheduling = this.options.scheduling || "lifo";
    this.totalSocketCount = 0;
    this.requests = { __proto__: null };
    this.sockets = { __proto__: null };
    this.freeSockets = { __proto__: null };
  }
  destroy() {}
  getName(options = {}) {
    const socketPath = options.socketPath ? `:${options.socketPath}` : "";
    return `${options.host || "localhost"}:${options.port || ""}:${options.localAddress || ""}${socketPath}${options.family === 4 || options.family === 6 ? `:${options.family}` : ""}`;
  }
}

/** How a repeated header folds (Node's rules): kept first, joined with ", " or "; ", or listed. */
const FIRST_WINS = new Set(["age", "host", "from", "etag", "server", "referer", "expires", "location", "user-agent", "retry-after", "content-type", "max-forwards",
  "authorization", "last-modified", "content-length", "if-modified-since", "proxy-authorization", "if-unmodified-since"]);
const kBody = Symbol("kBody");
const READ_PIECE = 16384; // a long body chunk is handed out in pieces, as a socket would

class IncomingMessage extends Readable {
  #socket;
  #reader = null;
  #reading = false;
  /** `socket`, as Node takes it; a fetch Response (the client's answer) fills the message from it. */
  constructor(socket = undefined) {
    super();
    this.aborted = false;
    this.url = "";
    this.method = null;
    this.statusCode = null;
    this.statusMessage = null;
    this.httpVersion = "1.1";
    this.httpVersionMajor = 1;
    this.httpVersionMinor = 1;
    this.headers = {};
    this.rawHeaders = [];
    this.trailers = {};
    this.rawTrailers = [];
    this.complete = false;
    this.joinDuplicateHeaders = false;
    this.cloudflare = { cf: undefined, env: undefined, ctx: undefined };
    this._consuming = false;
    this._dumped = false;
    this._paused = false;
    this[kBody] = null;
    if (typeof Response === "function" && socket instanceof Response) {
      this.statusCode = socket.status;
      this.statusMessage = socket.statusText;
      this.url = socket.url;
      const raw = [];
      for (const [name, value] of socket.headers) raw.push(name, value);
      this._addHeaderLines(raw, raw.length);
      this[kBody] = socket.body;
    } else {
      this.#socket = socket;
    }
  }
  get connection() {
    return this.#socket;
  }
  set connection(value) {
    this.#socket = value;
  }
  get socket() {
    return this.#socket;
  }
  set socket(value) {
    this.#socket = value;
  }
  /** Adds one header line to `dest` as Node does (`Set-Cookie` listed, `Cookie` joined with "; "). */
  _addHeaderLine(field, value, dest) {
    field = String(field).toLowerCase();
    if (field === "set-cookie") {
      if (dest[field] !== undefined) dest[field].push(value);
      else dest[field] = [value];
    } else if (FIRST_WINS.has(field)) {
      if (this.joinDuplicateHeaders && dest[field] !== undefined) dest[field] += `, ${value}`;
      else if (dest[field] === undefined) dest[field] = value;
    } else if (typeof dest[field] === "string") {
      dest[field] += (field === "cookie" ? "; " : ", ") + value;
    } else {
      dest[field] = value;
    }
  }
  _addHeaderLines(headers, n) {
    if (!Array.isArray(headers) || this.complete) return;
    this.rawHeaders = headers;
    for (let i = 0; i < n; i += 2) this._addHeaderLine(headers[i], headers[i + 1], this.headers);
  }
  _read() {
    this._consuming = true;
    const body = this[kBody];
    if (!body) {
      this.complete = true;
      this.push(null);
      return;
    }
    if (this.#reading) return;
    this.#reading = true;
    this.#reader ??= body.getReader();
    const pump = () =>
      this.#reader.read().then(
        ({ done, value }) => {
          if (this.destroyed) return;
          if (done) {
            this.#reading = false;
            this.complete = true;
            this.push(null);
            return;
          }
          let more = true;
          for (let at = 0; at < value.byteLength; at += READ_PIECE) {
            more = this.push(Buffer.from(value.buffer, value.byteOffset + at, Math.min(READ_PIECE, value.byteLength - at)));
          }
          if (more) pump();
          else this.#reading = false;
        },
        (error) => {
          this.#reading = false;
          this.destroy(error);
        },
      );
    pump();
  }
  _destroy(error, callback) {
    if (!this.readableEnded || !this.complete) {
      this.aborted = true;
      this.emit("aborted");
    }
    this.#reader?.cancel(error ?? undefined).catch(() => {});
    // As in workerd: the error is only emitted when something listens for it.
    queueMicrotask(() => callback(this.listenerCount("error") === 0 ? undefined : error));
  }
  _dump() {
    if (this._dumped) return;
    this._dumped = true;
    this.removeAllListeners("data");
    this.resume();
  }
  /** Every destination gets every chunk (workerd's pipe: no backpressure, several destinations). */
  pipe(destination, options = undefined) {
    const end = options?.end !== false;
    this.on("data", (chunk) => destination.write(chunk));
    this.once("end", () => {
      if (end) destination.end();
    });
    this.once("error", (error) => destination.emit("error", error));
    this.resume();
    return destination;
  }
  setTimeout(msecs, callback) {
    if (callback) this.once("timeout", callback);
    return this;
  }
}

/** A timeout in milliseconds, as Node's getTimerDuration checks it. */
function timerDuration(msecs, name) {
  if (typeof msecs !== "number") throw invalidArgType(name, "number", msecs);
  if (!(msecs >= 0) || msecs > 2 ** 31 - 1) {
    throw codedError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be >= 0 && <= ${2 ** 31 - 1}. Received ${msecs}`);
  }
  return msecs;
}

function codedError(Type, code, message) {
  const error = new Type(message);
  error.code = code;
  return error;
}

function toOptions(input, options, defaultProtocol) {
  let url;
  if (typeof input === "string" || input instanceof URL) {
    url = new URL(String(input));
  } else {
    options = input;
  }
  options = { ...(options ?? {}) };
  const protocol = options.protocol ?? url?.protocol ?? options.agent?.protocol ?? defaultProtocol;
  if (protocol !== "http:" && protocol !== "https:") {
    const error = new TypeError(`Protocol "${protocol}" not supported. Expected "${defaultProtocol}"`);
    error.code = "ERR_INVALID_PROTOCOL";
    throw error;
  }
  const host = options.hostname ?? options.host?.replace(/:\d+$/, "") ?? url?.hostname ?? "localhost";
  const port = options.port ?? (url?.port || undefined);
  const path = options.path || (url ? url.pathname + url.search : "/");
  if (/[^\u0021-\u00ff]/.test(path)) throw codedError(TypeError, "ERR_UNESCAPED_CHARACTERS", "Request path contains unescaped characters");
  let method = options.method;
  if (method !== undefined && method !== null && typeof method !== "string") throw invalidArgType("options.method", "string", method);
  if (method && !/^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/.test(method)) throw codedError(TypeError, "ERR_INVALID_HTTP_TOKEN", `Method must be a valid HTTP token ["${method}"]`);
  if (options.headers && !Array.isArray(options.headers) && "host" in options.headers && typeof options.headers.host !== "string") {
    throw invalidArgType("host", "string", options.headers.host);
  }
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return { ...options, url: `${protocol}//${bracketed}${port ? `:${port}` : ""}${path}`, path, method: (method || "GET").toUpperCase() };
}

class ClientRequest extends Writable {
  #chunks = [];
  #headers = new Map();
  #options;
  #controller = new AbortController();
  #timer = null;
  /** Headers given as an array (or setHost: false): no Host header is added, as in Node. */
  #noHost = false;
  constructor(input, options, callback, defaultProtocol = "http:") {
    // Not destroyed on finish: that would abort the fetch() that end() starts.
    super({ autoDestroy: false });
    if (typeof options === "function") {
      callback = options;
      options = undefined;
    }
    this.#options = toOptions(input, options, defaultProtocol);
    this.method = this.#options.method;
    this.path = this.#options.path;
    this.host = new URL(this.#options.url).hostname;
    this.protocol = new URL(this.#options.url).protocol;
    this.aborted = false;
    this.reusedSocket = false;
    this.headersSent = false;
    const headers = this.#options.headers;
    this.#noHost = Array.isArray(headers) || (this.#options.setHost !== undefined && !this.#options.setHost);
    if (this.#options.timeout !== undefined) this.timeout = timerDuration(this.#options.timeout, "timeout");
    if (Array.isArray(headers)) {
      if (headers.length % 2 !== 0) throw codedError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'headers' is invalid. Received ${internals.inspect(headers)}`);
      for (let i = 0; i < headers.length; i += 2) this.setHeader(headers[i], headers[i + 1]);
    } else {
      for (const [name, value] of Object.entries(headers ?? {})) this.setHeader(name, value);
    }
    if (this.#options.auth && !this.hasHeader("authorization")) this.setHeader("authorization", `Basic ${Buffer.from(this.#options.auth).toString("base64")}`);
    if (callback) this.once("response", callback);
    this.#options.signal?.addEventListener("abort", () => this.destroy(this.#options.signal.reason));
  }
  // Node's legacy: a request stays `writable` after end() (its error detection relies on it).
  get writable() {
    return true;
  }
  set writable(_value) {}
  setHeader(name, value) {
    if (this.headersSent) throw headersSentError();
    this.#headers.set(String(name).toLowerCase(), [String(name), value]);
    return this;
  }
  getHeader(name) { return this.#headers.get(String(name).toLowerCase())?.[1]; }
  getHeaders() { return Object.fromEntries([...this.#headers].map(([key, [, value]]) => [key, value])); }
  getHeaderNames() { return [...this.#headers.keys()]; }
  getRawHeaderNames() { return [...this.#headers.values()].map(([name]) => name); }
  hasHeader(name) { return this.#headers.has(String(name).toLowerCase()); }
  removeHeader(name) { this.#headers.delete(String(name).toLowerCase()); }
  flushHeaders() {}
  setNoDelay() {}
  setSocketKeepAlive() {}
  /**
   * As workerd's: after `msecs` (from now) "timeout" is emitted (on the response too) and the
   * fetch() is aborted; 0 clears it.
   */
  setTimeout(msecs, callback) {
    this.timeout = timerDuration(msecs, "msecs");
    this.#startTimer();
    if (callback) this.once("timeout", callback);
    return this;
  }
  clearTimeout(callback) {
    return this.setTimeout(0, callback);
  }
  #startTimer() {
    clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.timeout) return;
    this.#timer = setTimeout(() => {
      this.emit("timeout");
      this.res?.emit("timeout");
      this.#controller.abort();
    }, this.timeout);
  }
  abort() {
    this.aborted = true;
    this.destroy();
  }
  _write(chunk, encoding, callback) {
    this.#chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
    callback();
  }
  _final(callback) {
    this.headersSent = true;
    const headers = new Headers();
    for (const [, [name, value]] of this.#headers) {
      for (const item of [].concat(value)) headers.append(name, String(item));
    }
    const hasBody = this.#chunks.length > 0 && this.method !== "GET" && this.method !== "HEAD";
    if (this.timeout && this.#timer === null) this.#startTimer();
    const answer = (response) => {
      const message = new IncomingMessage(response);
      message.req = this;
      this.res = message;
      if (!this.emit("response", message)) message.resume();
    };
    callback();
    if (this.#noHost && this.#headers.size === 0) {
      // No header at all, so no Host: workerd answers as a server must (RFC 7230 5.4), itself.
      queueMicrotask(() => answer(new Response(null, { status: 400, statusText: "Bad Request", headers: { connection: "close" } })));
      return;
    }
    fetch(this.#options.url, { method: this.method, headers, body: hasBody ? Buffer.concat(this.#chunks) : undefined, redirect: "manual", signal: this.#controller.signal }).then(answer, (error) => {
      // As workerd's: the request has ended by the time fetch() fails, so the failure is logged,
      // not emitted ("error" comes only for what goes wrong before).
      this.destroyed = true;
      console.log(error);
    });
  }
  _destroy(error, callback) {
    clearTimeout(this.#timer);
    this.#controller.abort(error ?? undefined);
    if (!error && !this.res) this.emit("abort");
    callback(error);
  }
}

function request(input, options, callback, protocol = "http:") {
  if (input !== undefined && input !== null && typeof input !== "string" && !(input instanceof URL) && typeof input !== "object") throw invalidArgType("url", "string or an instance of URL", input);
  return new ClientRequest(input, options, callback, protocol);
}

function get(input, options, callback, protocol = "http:") {
  const req = request(input, options, callback, protocol);
  req.end();
  return req;
}

module.exports = { Agent, ClientRequest, IncomingMessage, kBody, request, get };
