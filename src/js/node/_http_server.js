// node:_http_server (enable_nodejs_http_server_modules): STATUS_CODES and the server classes,
// which cannot be constructed here (workerbox has no Node-style HTTP server; see node:http).
const http = require("node:http");
const { notImplemented } = require("node:internal/errors");
module.exports = {
  STATUS_CODES: http.STATUS_CODES,
  Server: http.Server,
  ServerResponse: http.ServerResponse,
  kServerResponse: Symbol("ServerResponse"),
  _connectionListener: http._connectionListener,
  setupConnectionsTracking: notImplemented("setupConnectionsTracking"),
  storeHTTPOptions: notImplemented("storeHTTPOptions"),
  httpServerPreClose: notImplemented("httpServerPreClose"),
  kConnectionsCheckingInterval: Symbol("http.server.connectionsCheckingInterval"),
};
