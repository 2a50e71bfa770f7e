// node:_http_server (enable_nodejs_http_server_modules): STATUS_CODES, the server classes and
// the helpers workerd exports from its adapter (internal/http_server.js); setupConnectionsTracking
// and _connectionListener throw ERR_METHOD_NOT_IMPLEMENTED there too.
const http = require("node:http");
const { notImplemented } = require("node:internal/errors");
const server = require("node:internal/http_server");
module.exports = {
  STATUS_CODES: http.STATUS_CODES,
  Server: http.Server,
  ServerResponse: http.ServerResponse,
  kServerResponse: server.kServerResponse,
  kConnectionsCheckingInterval: server.kConnectionsCheckingInterval,
  _connectionListener: http._connectionListener,
  setupConnectionsTracking: notImplemented("setupConnectionsTracking"),
  storeHTTPOptions: server.storeHTTPOptions,
  httpServerPreClose: server.httpServerPreClose,
};
