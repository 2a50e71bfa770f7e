// node:http (enable_nodejs_http_modules; implied by nodejs_compat from 2025-08-15): the client
// (request, get, ClientRequest, IncomingMessage, Agent) runs over fetch(), as in workerd (see
// internal/http_client.js); OutgoingMessage is workerd-shaped (internal/http_outgoing.js); METHODS, STATUS_CODES, maxHeaderSize and the header validators are
// Node's. The server half (createServer, Server, ServerResponse) is workerd's adapter, with
// enable_nodejs_http_server_modules (internal/http_server.js: servers answer fetch events through
// httpServerHandler from cloudflare:node); without that flag they throw
// ERR_METHOD_NOT_IMPLEMENTED.
const { OutgoingMessage, validateHeaderName, validateHeaderValue } = require("node:internal/http_outgoing");
const { Agent, ClientRequest, IncomingMessage, request, get } = require("node:internal/http_client");
const { notImplementedError, notImplementedClass } = require("node:internal/errors");

const METHODS = ["ACL", "BIND", "CHECKOUT", "CONNECT", "COPY", "DELETE", "GET", "HEAD", "LINK", "LOCK", "M-SEARCH", "MERGE", "MKACTIVITY",
  "MKCALENDAR", "MKCOL", "MOVE", "NOTIFY", "OPTIONS", "PATCH", "POST", "PROPFIND", "PROPPATCH", "PURGE", "PUT", "QUERY", "REBIND", "REPORT",
  "SEARCH", "SOURCE", "SUBSCRIBE", "TRACE", "UNBIND", "UNLINK", "UNLOCK", "UNSUBSCRIBE"];

const STATUS_CODES = {
  100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints", 200: "OK", 201: "Created", 202: "Accepted",
  203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
  208: "Already Reported", 226: "IM Used", 300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other",
  304: "Not Modified", 305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
  402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
  407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required",
  412: "Precondition Failed", 413: "Payload Too Large", 414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
  417: "Expectation Failed", 418: "I'm a Teapot", 421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked",
  424: "Failed Dependency", 425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
  431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons", 500: "Internal Server Error", 501: "Not Implemented",
  502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates", 507: "Insufficient Storage", 508: "Loop Detected", 509: "Bandwidth Limit Exceeded",
  510: "Not Extended", 511: "Network Authentication Required",
};


/** Server, ServerResponse and createServer: the adapter when its flag is on, stubs otherwise. */
function serverHalf() {
  if (internals.compat?.enabled.includes("enable_nodejs_http_server_modules")) {
    const { Server, ServerResponse, createServer } = require("node:internal/http_server");
    return { Server, ServerResponse, createServer };
  }
  return {
    Server: notImplementedClass("Server"),
    ServerResponse: notImplementedClass("ServerResponse", OutgoingMessage),
    createServer() { throw notImplementedError("http.createServer"); },
  };
}
const globalAgent = new Agent();

module.exports = {
  METHODS,
  STATUS_CODES,
  maxHeaderSize: 16384,
  validateHeaderName,
  validateHeaderValue,
  Agent,
  globalAgent,
  ClientRequest,
  IncomingMessage,
  OutgoingMessage,
  request: (input, options, callback) => request(input, options, callback, "http:"),
  get: (input, options, callback) => get(input, options, callback, "http:"),
  setMaxIdleHTTPParsers() {},
  ...serverHalf(),
  _connectionListener() { throw notImplementedError("http._connectionListener"); },
  WebSocket: globalThis.WebSocket,
  CloseEvent: globalThis.CloseEvent,
  MessageEvent: globalThis.MessageEvent,
};
