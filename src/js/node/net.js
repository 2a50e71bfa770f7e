// node:net: address helpers (isIP, isIPv4, isIPv6, SocketAddress) and net.Socket, a Node Duplex
// over a cloudflare:sockets connection (src/js/86_sockets.js), as workerd builds it:
// connect()/createConnection()/new Socket().connect(), the 'connect' / 'ready' / 'data' / 'end' /
// 'close' / 'error' / 'timeout' events, write callbacks, end() (a half-close), destroy(),
// pause()/resume() (reads from the network only while the stream wants more), setTimeout(), and
// setNoDelay/setKeepAlive/ref/unref as no-ops (the connection always has TCP_NODELAY). A plain
// socket is opened with secureTransport "starttls" so node:tls (src/js/node/tls.js) can upgrade
// it. Servers cannot exist in a Worker: Server and createServer throw, with workerd's messages.
const { Duplex } = require("node:stream");
const { Buffer } = require("node:buffer");
const { invalidArgType } = require("node:internal/errors");

const IPV4_PART = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]\\d|\\d)";
const IPV4 = `(?:${IPV4_PART}\\.){3}${IPV4_PART}`;
const IPV4_RE = new RegExp(`^${IPV4}$`);
const H = "[0-9a-fA-F]{1,4}";
const IPV6_RE = new RegExp(
  "^(?:" +
    [`(?:${H}:){7}(?:${H}|:)`, `(?:${H}:){6}(?:${IPV4}|:${H}|:)`, `(?:${H}:){5}(?::${IPV4}|(?::${H}){1,2}|:)`,
      `(?:${H}:){4}(?:(?::${H}){0,1}:${IPV4}|(?::${H}){1,3}|:)`, `(?:${H}:){3}(?:(?::${H}){0,2}:${IPV4}|(?::${H}){1,4}|:)`,
      `(?:${H}:){2}(?:(?::${H}){0,3}:${IPV4}|(?::${H}){1,5}|:)`, `(?:${H}:){1}(?:(?::${H}){0,4}:${IPV4}|(?::${H}){1,6}|:)`,
      `(?::(?:(?::${H}){0,5}:${IPV4}|(?::${H}){1,7}|:))`].join("|") +
    ")(?:%[0-9a-zA-Z-.:]{1,})?$",
);

const isIPv4 = (input) => IPV4_RE.test(`${input}`);
const isIPv6 = (input) => IPV6_RE.test(`${input}`);
const isIP = (input) => (isIPv4(input) ? 4 : isIPv6(input) ? 6 : 0);

const { SocketAddress, BlockList } = require("node:internal/net_address");

/** An error of class `Ctor` with Node's `code`. */
function coded(Ctor, code, message) {
  const error = new Ctor(message);
  error.code = code;
  return error;
}
const optionNotImplemented = (name) => coded(Error, "ERR_OPTION_NOT_IMPLEMENTED", `The ${name} option is not implemented`);

const kTimer = Symbol("timer");
const kPeer = Symbol("peer");
const kLocal = Symbol("local");
const kBytesRead = Symbol("bytesRead");
const kBytesWritten = Symbol("bytesWritten");
// node:tls sets this on its TLSSocket before connecting: the connection starts in TLS.
const kTlsOptions = (internals.kNetTlsOptions ??= Symbol("tls options"));
const kReading = Symbol("reading");
const kUpgraded = Symbol("upgraded");
const TIMEOUT_MAX = 2 ** 31 - 1;
const WRITABLE_CLOSED = "This WritableStream has been closed.";

/** `[options, callback]` from connect()'s arguments: (options[, cb]), (port[, host][, cb]), (path[, cb]). */
function normalizeArgs(args) {
  const [first] = args;
  let options = {};
  if (first !== null && typeof first === "object") options = first;
  else if (typeof first === "string" && !(Number(first) >= 0)) options = { path: first };
  else {
    options = { port: first };
    if (typeof args[1] === "string") options.host = args[1];
  }
  const last = args[args.length - 1];
  return [options, typeof last === "function" ? last : null];
}

function validatePort(port) {
  if (typeof port !== "number" && typeof port !== "string") throw invalidArgType("options.port", "number or string", port);
  const number = typeof port === "string" && port.trim() === "" ? NaN : Number(port);
  if (!Number.isInteger(number) || number < 0 || number > 65535) {
    throw coded(RangeError, "ERR_SOCKET_BAD_PORT", `options.port should be >= 0 and < 65536. Received ${typeof port === "string" ? `type string ('${port}')` : `type number (${port})`}.`);
  }
  return number;
}

/** `{ address, port, family }` from "host:port" / "[v6]:port". */
function splitAddress(text) {
  const colon = String(text).lastIndexOf(":");
  if (colon < 0) return {};
  const address = text.slice(0, colon).replace(/^\[|\]$/g, "");
  return { address, port: Number(text.slice(colon + 1)), family: isIPv6(address) ? "IPv6" : "IPv4" };
}

class NetSocket extends Duplex {
  constructor(options = {}) {
    if (typeof options === "number") options = { fd: options };
    options = { ...options };
    if (options.objectMode) throw coded(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.objectMode' is not supported. Received ${options.objectMode}`);
    if (options.readableObjectMode || options.writableObjectMode) {
      const name = options.readableObjectMode ? "readableObjectMode" : "writableObjectMode";
      throw coded(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.${name}' is not supported. Received true`);
    }
    if (options.fd !== undefined) throw optionNotImplemented("options.fd");
    super({ ...options, allowHalfOpen: Boolean(options.allowHalfOpen), emitClose: false, autoDestroy: true, decodeStrings: false, readable: true, writable: true });
    this._handle = null;
    this.connecting = false;
    this._host = null;
    this.timeout = 0;
    this[kTimer] = null;
    this[kPeer] = null;
    this[kLocal] = null;
    this[kBytesRead] = 0;
    this[kBytesWritten] = 0;
    this[kReading] = false;
    this[kUpgraded] = false;
    this.on("end", onEnd);
    if (options.signal) {
      const abort = () => this.destroy(coded(Error, "ABORT_ERR", "The operation was aborted"));
      if (options.signal.aborted) queueMicrotask(abort);
      else options.signal.addEventListener("abort", abort, { once: true });
    }
  }

  connect(...args) {
    const [options, callback] = Array.isArray(args[0]) && args.length === 1 ? args[0] : normalizeArgs(args);
    if (this.connecting) throw coded(Error, "ERR_SOCKET_CONNECTING", "Socket is already connecting");
    if (options.path != null) throw coded(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'path' is not supported. Received '${options.path}'`);
    if (options.port === undefined) throw coded(TypeError, "ERR_MISSING_ARGS", 'The "options" or "port" or "path" argument must be specified');
    const port = validatePort(options.port);
    const host = options.host || "localhost";
    if (options.localAddress && !isIP(options.localAddress)) throw coded(TypeError, "ERR_INVALID_IP_ADDRESS", `Invalid IP address: ${options.localAddress}`);
    if (options.localPort !== undefined && typeof options.localPort !== "number") throw invalidArgType("options.localPort", "number", options.localPort);
    if (options.autoSelectFamily !== undefined && options.autoSelectFamily !== null && typeof options.autoSelectFamily !== "boolean") {
      throw invalidArgType("options.autoSelectFamily", "boolean", options.autoSelectFamily);
    }
    if (options.autoSelectFamilyAttemptTimeout !== undefined && options.autoSelectFamilyAttemptTimeout !== null) {
      validateAttemptTimeout(options.autoSelectFamilyAttemptTimeout, "options.autoSelectFamilyAttemptTimeout");
    }
    if (options.lookup != null && typeof options.lookup !== "function") throw invalidArgType("options.lookup", "function", options.lookup);
    if (callback) this.once("connect", callback);
    if (this._handle) this.#closeHandle();
    this[kBytesRead] = this[kBytesWritten] = 0;
    this.connecting = true;
    this._host = host;
    this.#refreshTimer();
    const family = isIP(host);
    if (family === 0 && typeof options.lookup === "function") {
      // A custom lookup (as drivers pass for DNS control) picks the address to dial.
      options.lookup(host, { family: options.family || 0, hints: options.hints }, (error, address, addressFamily) => {
        this.emit("lookup", error, address, addressFamily, host);
        if (error) return void this.destroy(error);
        if (Array.isArray(address)) ({ address, family: addressFamily } = address[0] ?? {});
        this.#open(address, port, Number(String(addressFamily).replace("IPv", "")) || isIP(address));
      });
    } else {
      this.#open(host, port, family);
    }
    return this;
  }

  #open(host, port, family) {
    if (this.destroyed) return;
    this[kPeer] = { address: host, port, family: family === 4 ? "IPv4" : family === 6 ? "IPv6" : undefined };
    this.emit("connectionAttempt", host, port, family);
    const tls = this[kTlsOptions];
    let socket;
    try {
      socket = internals.socketConnect({ hostname: host, port }, {
        secureTransport: tls ? "on" : "starttls",
        allowHalfOpen: this.allowHalfOpen,
        [internals.kNodeTls]: tls ?? undefined,
      });
    } catch (error) {
      this.destroy(error);
      return;
    }
    this.#adopt(socket, () => {
      this.emit("connectionAttemptFailed", host, port, family);
    });
  }

  /** Takes `socket` (a cloudflare:sockets Socket) as this stream's connection. */
  #adopt(socket, onFailure) {
    const handle = { socket, reader: socket.readable.getReader(), writer: socket.writable.getWriter() };
    this._handle = handle;
    socket.opened.then(
      (info) => {
        if (this._handle !== handle || this.destroyed) return;
        this[kLocal] = splitAddress(info?.localAddress ?? "");
        this.connecting = false;
        this.#refreshTimer();
        this.emit("connect");
        this.emit("ready");
        this.#startReading();
      },
      (error) => {
        if (this._handle !== handle) return;
        onFailure?.(error);
        this.destroy(error);
      },
    );
    socket.closed.then(
      () => {},
      (error) => {
        if (this._handle === handle && !this[kUpgraded]) this.destroy(error);
      },
    );
  }

  /** The read loop: pulls from the connection while the stream wants more (push() says so). */
  async #startReading() {
    const handle = this._handle;
    if (!handle || this.connecting || this[kReading] || this[kUpgraded]) return;
    this[kReading] = true;
    try {
      for (;;) {
        const { value, done } = await handle.reader.read();
        if (this._handle !== handle || this.destroyed || this[kUpgraded]) return;
        this.#refreshTimer();
        if (done) {
          this.push(null);
          return;
        }
        if (value.byteLength === 0) continue;
        this[kBytesRead] += value.byteLength;
        if (!this.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))) return;
      }
    } catch (error) {
      // An upgrade or close() ended this reader; a connection error also rejects `closed`.
      if (this._handle === handle && !this.destroyed && !this[kUpgraded]) this.destroy(error);
    } finally {
      if (this._handle === handle) this[kReading] = false;
    }
  }

  _read() {
    if (this.connecting || !this._handle) this.once("connect", () => this.#startReading());
    else this.#startReading();
  }

  #send(bytes, callback) {
    if (this.connecting) {
      const onClose = () => callback(coded(Error, "ERR_SOCKET_CLOSED_BEFORE_CONNECTION", "Socket closed before connection established"));
      this.once("close", onClose);
      this.once("connect", () => {
        this.off("close", onClose);
        this.#send(bytes, callback);
      });
      return;
    }
    const handle = this._handle;
    if (!handle) return void callback(coded(Error, "ERR_SOCKET_CLOSED", "Socket is closed"));
    this.#refreshTimer();
    handle.writer.write(bytes).then(
      () => {
        this[kBytesWritten] += bytes.byteLength;
        this.#refreshTimer();
        callback();
      },
      (error) => callback(error),
    );
  }

  _write(chunk, encoding, callback) {
    this.#send(typeof chunk === "string" ? Buffer.from(chunk, encoding) : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength), callback);
  }

  _writev(chunks, callback) {
    this.#send(Buffer.concat(chunks.map(({ chunk, encoding }) => (typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk))), callback);
  }

  _final(callback) {
    if (this.connecting) return void this.once("connect", () => this._final(callback));
    if (!this._handle) return void callback();
    // Without allowHalfOpen the peer's end already closed this side: nothing more to end.
    this._handle.writer.close().then(() => callback(), (error) => callback(error?.message === WRITABLE_CLOSED ? undefined : error));
  }

  _destroy(error, callback) {
    this.connecting = false;
    clearTimeout(this[kTimer]);
    this[kTimer] = null;
    const done = () => {
      // A closed socket has no addresses, as in Node and workerd.
      this[kPeer] = this[kLocal] = null;
      callback(error);
      // Node's 'close' carries whether an error ended the socket.
      process.nextTick(() => this.emit("close", error != null));
    };
    if (this._handle && !this[kUpgraded]) this.#closeHandle().then(done);
    else done();
  }

  #closeHandle() {
    const { socket } = this._handle;
    this._handle = null;
    this[kReading] = false;
    return socket.close().then(() => {}, () => {});
  }

  /** For node:tls: gives up this socket's connection to an upgrade (it reads and writes no more). */
  _releaseForUpgrade() {
    const handle = this._handle;
    this[kUpgraded] = true;
    clearTimeout(this[kTimer]);
    try { handle.reader.releaseLock(); } catch {}
    try { handle.writer.releaseLock(); } catch {}
    return handle.socket;
  }

  /** For node:tls: the upgraded connection becomes this (TLS) socket's. */
  _adoptUpgraded(socket, host, peer) {
    this._host = host;
    this[kPeer] = peer;
    this.connecting = true;
    this.#adopt(socket);
  }

  #refreshTimer() {
    if (this[kTimer] === null) return;
    clearTimeout(this[kTimer]);
    this[kTimer] = setTimeout(() => this.emit("timeout"), this.timeout);
  }

  setTimeout(msecs, callback) {
    if (this.destroyed) return this;
    if (typeof msecs !== "number") throw invalidArgType("msecs", "number", msecs);
    if (msecs < 0 || !Number.isFinite(msecs)) throw coded(RangeError, "ERR_OUT_OF_RANGE", `The value of "msecs" is out of range. It must be a non-negative finite number. Received ${msecs}`);
    if (callback !== undefined && typeof callback !== "function") throw invalidArgType("callback", "function", callback);
    this.timeout = msecs;
    clearTimeout(this[kTimer]);
    this[kTimer] = null;
    if (msecs === 0) {
      if (callback) this.removeListener("timeout", callback);
    } else {
      this[kTimer] = setTimeout(() => this.emit("timeout"), Math.min(msecs, TIMEOUT_MAX));
      if (callback) this.once("timeout", callback);
    }
    return this;
  }

  resetAndDestroy() {
    if (!this._handle) return this.destroy(coded(Error, "ERR_SOCKET_CLOSED", "Socket is closed"));
    if (this.connecting) this.once("connect", () => this.destroy());
    else this.destroy();
    return this;
  }

  destroySoon() {
    if (this.writable) this.end();
    if (this.writableFinished) this.destroy();
    else this.once("finish", () => this.destroy());
  }

  // The connection always has TCP_NODELAY; keep-alive and the event loop's refs do not apply.
  setNoDelay() { return this; }
  setKeepAlive() { return this; }
  ref() { return this; }
  unref() { return this; }

  address() {
    const local = this[kLocal];
    return local?.address ? { address: local.address, family: local.family, port: local.port } : {};
  }
  get _connecting() { return this.connecting; }
  get pending() { return !this._handle || this.connecting; }
  get readyState() {
    if (this.connecting) return "opening";
    if (this.readable && this.writable) return "open";
    if (this.readable) return "readOnly";
    if (this.writable) return "writeOnly";
    return "closed";
  }
  get bufferSize() { return this._handle ? this.writableLength : undefined; }
  get bytesRead() { return this[kBytesRead]; }
  get bytesWritten() { return this[kBytesWritten] === undefined ? undefined : this[kBytesWritten] + this.writableLength; }
  get remoteAddress() { return this[kPeer]?.address; }
  get remotePort() { return this[kPeer]?.port; }
  get remoteFamily() { return this[kPeer]?.family; }
  get localAddress() { return this[kLocal]?.address; }
  get localPort() { return this[kLocal]?.port; }
  get localFamily() { return this[kLocal]?.family; }
}

// Callable without `new` too, as Node's and workerd's function constructors are.
const Socket = new Proxy(NetSocket, { apply: (target, thisArg, args) => new target(...args) });
Object.defineProperty(NetSocket, "name", { value: "Socket" });

/** Without allowHalfOpen the peer's end ends this side: a later write fails with EPIPE, as in Node. */
function onEnd() {
  if (this.allowHalfOpen) return;
  this.write = function writeAfterEnd(chunk, encoding, callback) {
    if (!this.writableEnded) return Duplex.prototype.write.call(this, chunk, encoding, callback);
    if (typeof encoding === "function") callback = encoding;
    const error = coded(Error, "EPIPE", "This socket has been ended by the other party");
    if (typeof callback === "function") queueMicrotask(() => callback(error));
    this.destroy(error);
    return false;
  };
}

function connect(...args) {
  const [options, callback] = normalizeArgs(args);
  const socket = new Socket(options);
  if (options.timeout) socket.setTimeout(options.timeout);
  if (socket.destroyed) return socket;
  return socket.connect([options, callback]);
}

function Server() {
  throw new Error("Server is not implemented");
}
let attemptTimeout = 10; // workerd's default

/** Node's validateInt32(value, name, 1) for the happy-eyeballs attempt timeout. */
function validateAttemptTimeout(value, name) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
  if (!Number.isInteger(value) || value < 1 || value > 2147483647) {
    throw coded(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${Number.isInteger(value) ? ">= 1 && <= 2147483647" : "an integer"}. Received ${value}`);
  }
}

module.exports = {
  isIP,
  isIPv4,
  isIPv6,
  SocketAddress,
  BlockList,
  Socket,
  Stream: Socket,
  Server,
  connect,
  createConnection: connect,
  createServer() { throw new Error("createServer() is not implemented"); },
  getDefaultAutoSelectFamily: () => false,
  setDefaultAutoSelectFamily(value) {
    if (!value) return;
    throw coded(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'val' is invalid. Received ${JSON.stringify(value)}`);
  },
  getDefaultAutoSelectFamilyAttemptTimeout: () => attemptTimeout,
  setDefaultAutoSelectFamilyAttemptTimeout(value) {
    validateAttemptTimeout(value, "value");
    attemptTimeout = Math.max(10, value);
  },
};
