// node:_tls_common: node:tls's SecureContext helpers (Node's internal module name).
const tls = require("node:tls");
module.exports = {
  SecureContext: tls.SecureContext,
  createSecureContext: tls.createSecureContext,
  translatePeerCertificate: (cert) => cert ?? null,
};
