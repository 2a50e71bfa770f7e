// node:_http_outgoing: node:http's OutgoingMessage and header validators (Node's internal module).
const http = require("node:http");
module.exports = {
  OutgoingMessage: http.OutgoingMessage,
  validateHeaderName: http.validateHeaderName,
  validateHeaderValue: http.validateHeaderValue,
  kUniqueHeaders: Symbol("kUniqueHeaders"),
  kHighWaterMark: Symbol("kHighWaterMark"),
  parseUniqueHeadersOption: (headers) => (Array.isArray(headers) ? new Set(headers.map((h) => String(h).toLowerCase())) : null),
};
