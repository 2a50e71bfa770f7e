// node:https (enable_nodejs_http_modules, like node:http): node:http's fetch()-based client with
// https: as the default protocol, and an Agent whose defaults say so. With
// enable_nodejs_http_server_modules, createServer/Server are node:http's server adapter (as in
// workerd: TLS is the edge's business, the server gets fetch events); otherwise they throw
// ERR_METHOD_NOT_IMPLEMENTED.
const http = require("node:http");
const { request, get } = require("node:internal/http_client");
const { notImplementedError, notImplementedClass } = require("node:internal/errors");

class Agent extends http.Agent {
  constructor(options = {}) {
    super({ defaultPort: 443, protocol: "https:", ...options });
  }
}
module.exports = {
  Agent,
  globalAgent: new Agent(),
  request: (input, options, callback) => request(input, options, callback, "https:"),
  get: (input, options, callback) => get(input, options, callback, "https:"),
  ...(internals.compat?.enabled.includes("enable_nodejs_http_server_modules")
    ? { Server: http.Server, createServer: (options, listener) => new http.Server(options, listener) }
    : { Server: notImplementedClass("Server"), createServer() { throw notImplementedError("https.createServer"); } }),
};
