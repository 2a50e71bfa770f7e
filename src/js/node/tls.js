// node:tls: tls.connect() and TLSSocket over node:net's Socket (src/js/node/net.js), as workerd
// builds them on cloudflare:sockets: a new connection starts in TLS (secureTransport "on", with
// node:tls's `servername`, `ca` and `rejectUnauthorized` handed to the connection as its own TLS
// options), and `{ socket }` upgrades a connected net.Socket with startTls(). Also workerd's
// constants and the helpers that need no connection (checkServerIdentity, convertALPNProtocols,
// createSecureContext). Servers and getCiphers throw "Not implemented", as in workerd.
const { Socket, isIP } = require("node:net");
const { Buffer } = require("node:buffer");

const kTlsOptions = (internals.kNetTlsOptions ??= Symbol("tls options"));

function coded(Ctor, code, message) {
  const error = new Ctor(message);
  error.code = code;
  return error;
}
const optionNotImplemented = (name, why = "") => coded(Error, "ERR_OPTION_NOT_IMPLEMENTED", `The ${name} option is not implemented${why}`);

class TlsSecureContext {
  constructor(options = {}) { this.context = options; }
}
// Callable without `new`, as Node's function constructor is (`tls.SecureContext()`).
const SecureContext = new Proxy(TlsSecureContext, { apply: (target, thisArg, args) => new target(...args) });
Object.defineProperty(TlsSecureContext, "name", { value: "SecureContext" });

/** The PEM text of `ca` (a string, Buffer, or an array of them), or undefined. */
function pemOf(ca) {
  if (ca === undefined || ca === null) return undefined;
  const parts = (Array.isArray(ca) ? ca : [ca]).map((part) => (typeof part === "string" ? part : ArrayBuffer.isView(part) ? Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("latin1") : null));
  if (parts.includes(null)) throw coded(TypeError, "ERR_INVALID_ARG_TYPE", 'The "options.ca" property must be a string, a Buffer, or an array of them');
  return parts.join("\n");
}

/** A checkServerIdentity function is ignored (rustls checks the name), or refused from
 * throw_on_not_implemented_tls_options on, as in workerd. */
function checkIdentityOption(fn) {
  if (fn === undefined) return;
  if (typeof fn !== "function") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", 'The "options.checkServerIdentity" property must be of type function');
  if (internals.compat?.enabled.includes("throw_on_not_implemented_tls_options")) throw optionNotImplemented("options.checkServerIdentity");
}

class TLSSocket extends Socket {
  constructor(socket, options = {}) {
    const opts = { ...options };
    for (const name of ["enableTrace", "isServer", "server", "requestOCSP"]) if (opts[name]) throw optionNotImplemented(`options.${name}`);
    for (const name of ["ALPNProtocols", "SNICallback", "pskCallback"]) if (opts[name] !== undefined) throw optionNotImplemented(`options.${name}`);
    checkIdentityOption(opts.checkServerIdentity);
    if (opts.secureContext !== undefined && !(opts.secureContext instanceof SecureContext)) throw coded(TypeError, "ERR_TLS_INVALID_CONTEXT", "context must be a SecureContext");
    super({ allowHalfOpen: socket ? socket.allowHalfOpen : opts.allowHalfOpen, highWaterMark: opts.highWaterMark, signal: opts.signal });
    this._tlsOptions = opts;
    this._parentWrap = socket ?? null;
    this.encrypted = true;
    this.authorized = false;
    this.authorizationError = null;
    this.alpnProtocol = false;
    this.secureConnecting = true;
    this._secureEstablished = false;
    this.servername = opts.servername ?? null;
    this.on("connect", () => {
      this._secureEstablished = true;
      this.emit("secure");
    });
  }
  setServername(name) {
    if (typeof name !== "string") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", 'The "name" argument must be of type string');
    this.servername = name;
  }
  setSession() {}
  disableRenegotiation() {}
  renegotiate() { return false; }
  setMaxSendFragment() { return false; }
  exportKeyingMaterial() { throw new Error("exportKeyingMaterial is not implemented"); }
  getPeerCertificate() { throw new Error("getPeerCertificate is not implemented"); }
  getCertificate() { throw new Error("TLSSocket.getCertificate is not implemented"); }
  getPeerX509Certificate() { throw new Error("TLSSocket.getPeerX509Certificate is not implemented"); }
  getX509Certificate() { throw new Error("TLSSocket.getX509Certificate is not implemented"); }
  setKeyCert() { throw new Error("TLSSocket.setKeyCert is not implemented"); }
}
for (const method of ["getCipher", "getSharedSigalgs", "getEphemeralKeyInfo", "getFinished", "getPeerFinished", "getProtocol", "getSession", "getTLSTicket", "isSessionReused", "enableTrace"]) {
  TLSSocket.prototype[method] = function () { return null; };
}

/** `[options, callback]` from (options[, cb]) or (port[, host][, options][, cb]). */
function connectArgs(args) {
  const callback = typeof args[args.length - 1] === "function" ? args[args.length - 1] : null;
  if (args[0] !== null && typeof args[0] === "object") return [{ ...args[0] }, callback];
  const options = { port: args[0] };
  let rest = 1;
  if (typeof args[1] === "string") options.host = args[rest++];
  if (args[rest] !== null && typeof args[rest] === "object") Object.assign(options, args[rest]);
  return [options, callback];
}

function connect(...args) {
  const [options, callback] = connectArgs(args);
  if (options.minDHSize !== undefined) throw optionNotImplemented("options.minDHSize");
  if (options.pskCallback !== undefined) throw optionNotImplemented("options.pskCallback");
  checkIdentityOption(options.checkServerIdentity);
  const verify = options.rejectUnauthorized !== false;
  const ca = pemOf(options.ca ?? options.secureContext?.context?.ca);
  const socket = new TLSSocket(options.socket, {
    allowHalfOpen: options.allowHalfOpen,
    ALPNProtocols: options.ALPNProtocols,
    enableTrace: options.enableTrace,
    highWaterMark: options.highWaterMark,
    secureContext: options.secureContext,
    signal: options.signal,
    servername: options.servername,
    rejectUnauthorized: verify,
  });
  if (callback) socket.once("secureConnect", callback);
  socket.once("secure", () => {
    socket.authorized = verify;
    socket.secureConnecting = false;
    socket.removeListener("end", onEndBeforeSecure);
    socket.emit("secureConnect");
  });
  socket.prependListener("end", onEndBeforeSecure);
  if (!options.socket) {
    socket[kTlsOptions] = { servername: options.servername || undefined, ca, rejectUnauthorized: verify };
    if (options.timeout) socket.setTimeout(options.timeout);
    socket.connect(options);
    return socket;
  }
  // An upgrade: the connection's trust was fixed when it opened as a plain socket. `ca` is
  // ignored there, as workerd ignores it on every connection (the default roots and
  // NODE_EXTRA_CA_CERTS decide); turning verification off cannot be honoured, so it throws.
  const why = " for an upgrade of an existing socket (tls.connect({ socket })) in workerbox; trust a certificate with NODE_EXTRA_CA_CERTS instead";
  if (!verify) throw optionNotImplemented("options.rejectUnauthorized", why);
  const plain = options.socket;
  // Writes and reads wait for the upgraded connection.
  socket.connecting = true;
  if (!(plain instanceof Socket)) {
    // Any other Duplex is the transport as it is, as workerd's JSStreamSocket makes it: the
    // bytes pass through it unencrypted (there is no TLS engine in the isolate).
    queueMicrotask(() => {
      if (!socket.destroyed) socket._adoptUpgraded(duplexTransport(plain), undefined, {});
    });
    plain.once("close", () => socket.destroy());
    socket.once("close", () => plain.destroy());
    return socket;
  }
  const upgrade = () => {
    if (socket.destroyed) return;
    if (!plain._handle || plain.destroyed) return void socket.destroy(coded(Error, "ERR_SOCKET_CLOSED", "Socket is closed"));
    try {
      const name = options.servername || undefined;
      const upgraded = plain._releaseForUpgrade().startTls(name && name !== plain._host ? { expectedServerHostname: name } : undefined);
      socket._adoptUpgraded(upgraded, plain._host, { address: plain.remoteAddress, port: plain.remotePort, family: plain.remoteFamily });
    } catch (error) {
      socket.destroy(error);
    }
  };
  if (plain.connecting) plain.once("connect", upgrade);
  else queueMicrotask(upgrade);
  plain.once("close", () => socket.destroy());
  socket.once("close", () => plain.destroy());
  return socket;
}

/** A Node Duplex as the connection object net.Socket adopts (readable, writable, opened, closed). */
function duplexTransport(duplex) {
  let closedResolve;
  const closed = new Promise((resolve) => (closedResolve = resolve));
  duplex.once("close", () => closedResolve());
  const readable = new ReadableStream({
    start(controller) {
      duplex.on("data", (chunk) => controller.enqueue(new Uint8Array(Buffer.from(chunk))));
      duplex.once("end", () => controller.close());
      duplex.once("error", (error) => controller.error(error));
    },
    cancel() {
      duplex.destroy();
    },
  });
  const writable = new WritableStream({
    write: (chunk) => new Promise((resolve, reject) => duplex.write(chunk, (error) => (error ? reject(error) : resolve()))),
    close: () => new Promise((resolve) => duplex.end(resolve)),
    abort: () => void duplex.destroy(),
  });
  return {
    readable,
    writable,
    opened: Promise.resolve({}),
    closed,
    close() {
      duplex.destroy();
      return closed;
    },
    startTls() {
      throw new Error("startTls() should not be called for a duplex stream");
    },
  };
}

function onEndBeforeSecure() {
  const error = coded(Error, "ECONNRESET", "Client network socket disconnected before secure TLS connection was established");
  this.destroy(error);
}

function convertALPNProtocols(protocols, out) {
  if (Array.isArray(protocols)) {
    const parts = [];
    for (const protocol of protocols) {
      const bytes = Buffer.from(protocol);
      if (bytes.length > 255) {
        const error = new RangeError(`The byte length of the protocol at index ${parts.length} exceeds the maximum length. It must be <= 255. Received ${bytes.length}`);
        error.code = "ERR_OUT_OF_RANGE";
        throw error;
      }
      parts.push(Buffer.from([bytes.length]), bytes);
    }
    out.ALPNProtocols = Buffer.concat(parts);
  } else if (ArrayBuffer.isView(protocols)) {
    // A copy: writing to the result leaves the caller's bytes alone.
    out.ALPNProtocols = Buffer.from(new Uint8Array(protocols.buffer, protocols.byteOffset, protocols.byteLength));
  }
}

// Host name check of a peer certificate's subject / subjectaltname, as Node's tls does it.
function checkServerIdentity(hostname, cert) {
  const subject = cert?.subject ?? {};
  const alt = cert?.subjectaltname ?? "";
  const host = String(hostname).replace(/\.$/, "").toLowerCase();
  const dnsNames = [];
  const ips = [];
  for (const entry of alt.split(", ")) {
    if (entry.startsWith("DNS:")) dnsNames.push(entry.slice(4).toLowerCase());
    else if (entry.startsWith("IP Address:")) ips.push(isIP(entry.slice(11)) ? entry.slice(11) : undefined); // a range is no address (listed as "")
  }
  const hostParts = host.split(".");
  // Node's rules: same number of labels, all but the first equal, and a "*" only in a first
  // label of a name with three labels or more (not in an IDNA "xn--" label).
  const matches = (pattern) => {
    if (!pattern) return false;
    const parts = String(pattern).replace(/\.$/, "").toLowerCase().split(".");
    if (parts.length !== hostParts.length || parts.includes("") || parts.some((part) => /[^\u0021-\u007f]/u.test(part))) return false;
    for (let i = parts.length - 1; i > 0; i--) if (parts[i] !== hostParts[i]) return false;
    const [first] = parts;
    const pieces = first.split("*", 3);
    if (pieces.length === 1 || first.includes("xn--")) return first === hostParts[0];
    if (pieces.length > 2 || parts.length <= 2) return false;
    const [prefix, suffix] = pieces;
    return prefix.length + suffix.length <= hostParts[0].length && hostParts[0].startsWith(prefix) && hostParts[0].endsWith(suffix);
  };
  let ok;
  let reason;
  if (isIP(host)) {
    ok = ips.includes(host);
    reason = `IP: ${host} is not in the cert's list: ${ips.join(", ")}`;
  } else if (dnsNames.length > 0) {
    ok = dnsNames.some(matches);
    reason = `Host: ${host}. is not in the cert's altnames: ${alt}`;
  } else {
    const cn = [].concat(subject.CN ?? []).map((n) => String(n).toLowerCase());
    ok = cn.some(matches);
    reason = cn.length ? `Host: ${host}. is not cert's CN: ${cn.join(", ")}` : "Cert does not contain a DNS name";
  }
  if (ok) return undefined;
  const error = new Error(`Hostname/IP does not match certificate's altnames: ${reason}`);
  error.code = "ERR_TLS_CERT_ALTNAME_INVALID";
  Object.assign(error, { reason, host, cert });
  return error;
}

const notImplemented = () => { throw new Error("Not implemented"); };

module.exports = {
  CLIENT_RENEG_LIMIT: 3,
  CLIENT_RENEG_WINDOW: 600,
  DEFAULT_CIPHERS: "",
  DEFAULT_ECDH_CURVE: "auto",
  DEFAULT_MIN_VERSION: "TLSv1.2",
  DEFAULT_MAX_VERSION: "TLSv1.3",
  rootCertificates: [],
  SecureContext,
  TLSSocket,
  checkServerIdentity,
  convertALPNProtocols,
  createSecureContext: (options) => new SecureContext(options),
  connect,
  createServer: notImplemented,
  Server: notImplemented,
  getCiphers: notImplemented,
};
// Removed from Node 24; workerd keeps a stub until remove_nodejs_compat_eol_v24.
if (!internals.compat?.enabled.includes("remove_nodejs_compat_eol_v24")) {
  module.exports.createSecurePair = require("node:internal/errors").notImplemented("createSecurePair");
}
