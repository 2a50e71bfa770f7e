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
    return `${options.host || "localhost"}:${options.port || ""}:${options.localAddress || ""}${options.family === 4 || options.family === 6 ? `:${options.family}` : ""}`;
  }
}

class IncomingMessage extends Readable {
  constructor(response) {
    super();
    this.statusCode = response?.status;
    this.statusMessage = response?.statusText ?? "";
    this.httpVersion = "1.1";
    this.httpVersionMajor = 1;
    this.httpVersionMinor = 1;
    this.headers = {};
    this.rawHeaders = [];
    this.trailers = {};
    this.rawTrailers = [];
    this.complete = false;
    this.url = response?.url ?? "";
    if (response) {
      for (const [name, value] of response.headers) {
        this.rawHeaders.push(name, value);
        this.headers[name] = name in this.headers ? (name === "set-cookie" ? [].concat(this.headers[name], value) : `${this.headers[name]}, ${value}`) : name === "set-cookie" ? [value] : value;
      }
      this.#reader = response.body?.getReader();
    }
  }
  #reader;
  _read() {
    if (!this.#reader) {
      this.complete = true;
      this.push(null);
      return;
    }
    this.#reader.read().then(
      ({ done, value }) => {
        if (done) {
          this.complete = true;
          this.push(null);
        } else this.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      },
      (error) => this.destroy(error),
    );
  }
  _destroy(error, callback) {
    this.#reader?.cancel(error ?? undefined).catch(() => {});
    callback(error);
  }
  setTimeout(msecs, callback) {
    if (callback) this.once("timeout", callback);
    return this;
  }
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
  const path = options.path ?? (url ? url.pathname + url.search : "/");
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return { ...options, url: `${protocol}//${bracketed}${port ? `:${port}` : ""}${path}`, method: (options.method ?? "GET").toUpperCase() };
}

class ClientRequest extends Writable {
  #chunks = [];
  #headers = new Map();
  #options;
  #controller = new AbortController();
  constructor(input, options, callback, defaultProtocol = "http:") {
    // Not destroyed on finish: that would abort the fetch() that end() starts.
    super({ autoDestroy: false });
    if (typeof options === "function") {
      callback = options;
      options = undefined;
    }
    this.#options = toOptions(input, options, defaultProtocol);
    this.method = this.#options.method;
    this.path = this.#options.path ?? new URL(this.#options.url).pathname;
    this.host = new URL(this.#options.url).hostname;
    this.protocol = new URL(this.#options.url).protocol;
    this.aborted = false;
    this.reusedSocket = false;
    this.headersSent = false;
    for (const [name, value] of Object.entries(this.#options.headers ?? {})) this.setHeader(name, value);
    if (this.#options.auth && !this.hasHeader("authorization")) this.setHeader("authorization", `Basic ${Buffer.from(this.#options.auth).toString("base64")}`);
    if (callback) this.once("response", callback);
    this.#options.signal?.addEventListener("abort", () => this.destroy(this.#options.signal.reason));
  }
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
  setTimeout(msecs, callback) {
    if (callback) this.once("timeout", callback);
    return this;
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
    fetch(this.#options.url, { method: this.method, headers, body: hasBody ? Buffer.concat(this.#chunks) : undefined, redirect: "manual", signal: this.#controller.signal }).then(
      (response) => {
        const message = new IncomingMessage(response);
        message.req = this;
        this.res = message;
        if (!this.emit("response", message)) message.resume();
      },
      (error) => this.destroy(error),
    );
    callback();
  }
  _destroy(error, callback) {
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

module.exports = { Agent, ClientRequest, IncomingMessage, request, get };
