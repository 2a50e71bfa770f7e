// node:tls: workerd's constants and helpers that need no connection (checkServerIdentity,
// convertALPNProtocols, createSecureContext); workerbox has no raw sockets, so connect() and
// TLSSocket connections throw ERR_METHOD_NOT_IMPLEMENTED (workerd upgrades its TCP sockets).
// Servers and getCiphers throw "Not implemented", as in workerd.
const { Socket } = require("node:net");
const { Buffer } = require("node:buffer");
const { notImplementedError } = require("node:internal/errors");

class SecureContext {
  constructor(options = {}) { this.context = options; }
}
class TLSSocket extends Socket {
  constructor(socket, options = {}) {
    super(options);
    this.encrypted = true;
    this.authorized = false;
    this.alpnProtocol = false;
  }
  connect() { throw notImplementedError("tls.TLSSocket.connect"); }
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
    out.ALPNProtocols = Buffer.from(protocols.buffer, protocols.byteOffset, protocols.byteLength);
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
    else if (entry.startsWith("IP Address:")) ips.push(entry.slice(11));
  }
  const matches = (pattern) => {
    if (pattern === host) return true;
    if (!pattern.startsWith("*.")) return false;
    const rest = pattern.slice(1);
    return host.endsWith(rest) && !host.slice(0, -rest.length).includes(".") && host.length > rest.length;
  };
  let ok;
  let reason;
  if (require("node:net").isIP(host)) {
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
  connect() { throw notImplementedError("tls.connect"); },
  createServer: notImplemented,
  Server: notImplemented,
  getCiphers: notImplemented,
};
// Removed from Node 24; workerd keeps a stub until remove_nodejs_compat_eol_v24.
if (!internals.compat?.enabled.includes("remove_nodejs_compat_eol_v24")) {
  module.exports.createSecurePair = require("node:internal/errors").notImplemented("createSecurePair");
}
