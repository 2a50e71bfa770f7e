// node:_tls_common: node:tls's SecureContext helpers (Node's internal module name), and
// translatePeerCertificate: a peer certificate object with its issuer chain translated and its
// `infoAccess` text ("key:value" lines) turned into lists by key, as Node's is.
const tls = require("node:tls");

function translatePeerCertificate(cert) {
  if (!cert) return null;
  if (cert.issuerCertificate !== null && cert.issuerCertificate !== undefined && cert.issuerCertificate !== cert) {
    cert.issuerCertificate = translatePeerCertificate(cert.issuerCertificate);
  }
  if (cert.infoAccess !== null && cert.infoAccess !== undefined) {
    const text = String(cert.infoAccess);
    const lists = { __proto__: null };
    for (const line of text.split("\n")) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const key = line.slice(0, colon);
      let value = line.slice(colon + 1);
      if (value.startsWith('"')) value = JSON.parse(value);
      (lists[key] ??= []).push(value);
    }
    cert.infoAccess = lists;
  }
  return cert;
}

module.exports = {
  SecureContext: tls.SecureContext,
  createSecureContext: tls.createSecureContext,
  translatePeerCertificate,
};
