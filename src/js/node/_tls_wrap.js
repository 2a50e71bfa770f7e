// node:_tls_wrap: node:tls's TLSSocket and connect (Node's internal module name).
const tls = require("node:tls");
module.exports = { TLSSocket: tls.TLSSocket, connect: tls.connect };
