// node:net: address helpers (isIP, isIPv4, isIPv6, SocketAddress) and the Socket class. workerd
// connects net.Socket over its TCP sockets; workerbox has no raw sockets, so connect() and
// createConnection() throw ERR_METHOD_NOT_IMPLEMENTED (see docs/compatibility.md). Servers cannot exist in a
// Worker: Server and createServer throw, with workerd's messages.
const { Duplex } = require("node:stream");
const { notImplementedError, notImplementedClass } = require("node:internal/errors");

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

class SocketAddress {
  #address;
  #port;
  #family;
  #flowlabel;
  constructor(options = {}) {
    const { family = "ipv4", address = family === "ipv6" ? "::" : "127.0.0.1", port = 0, flowlabel = 0 } = options;
    if (family !== "ipv4" && family !== "ipv6") {
      const error = new TypeError(`The property 'options.family' must be one of: 'ipv4', 'ipv6'. Received ${JSON.stringify(family)}`);
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    this.#address = address;
    this.#port = port;
    this.#family = family;
    this.#flowlabel = flowlabel;
  }
  get address() { return this.#address; }
  get port() { return this.#port; }
  get family() { return this.#family; }
  get flowlabel() { return this.#flowlabel; }
  toJSON() { return { address: this.address, port: this.port, family: this.family, flowlabel: this.flowlabel }; }
  static isSocketAddress(value) { return value instanceof SocketAddress; }
}

class Socket extends Duplex {
  constructor(options = {}) {
    super({ ...options, allowHalfOpen: options.allowHalfOpen ?? false });
    this.connecting = false;
    this.pending = true;
    this.bytesRead = 0;
    this.bytesWritten = 0;
  }
  connect() {
    throw notImplementedError("net.Socket.connect");
  }
  _read() {}
  _write(chunk, encoding, callback) {
    callback(notImplementedError("net.Socket.write"));
  }
  setNoDelay() { return this; }
  setKeepAlive() { return this; }
  setTimeout() { return this; }
  ref() { return this; }
  unref() { return this; }
  address() { return {}; }
  get readyState() { return "closed"; }
}

function Server() {
  throw new Error("Server is not implemented");
}
let attemptTimeout = 10;

module.exports = {
  isIP,
  isIPv4,
  isIPv6,
  SocketAddress,
  BlockList: notImplementedClass("BlockList"),
  Socket,
  Stream: Socket,
  Server,
  connect() { throw notImplementedError("net.connect"); },
  createConnection() { throw notImplementedError("net.createConnection"); },
  createServer() { throw new Error("createServer() is not implemented"); },
  getDefaultAutoSelectFamily: () => false,
  setDefaultAutoSelectFamily(value) {
    if (!value) return;
    const error = new TypeError(`The argument 'val' is invalid. Received ${JSON.stringify(value)}`);
    error.code = "ERR_INVALID_ARG_VALUE";
    throw error;
  },
  getDefaultAutoSelectFamilyAttemptTimeout: () => attemptTimeout,
  setDefaultAutoSelectFamilyAttemptTimeout(value) { attemptTimeout = Math.max(10, Number(value)); },
};
