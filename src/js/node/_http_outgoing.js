// node:_http_outgoing: node:http's OutgoingMessage and header validators (Node's internal module).
const outgoing = require("node:internal/http_outgoing");
module.exports = {
  OutgoingMessage: outgoing.OutgoingMessage,
  validateHeaderName: outgoing.validateHeaderName,
  validateHeaderValue: outgoing.validateHeaderValue,
  kUniqueHeaders: outgoing.kUniqueHeaders,
  kHighWaterMark: outgoing.kHighWaterMark,
  parseUniqueHeadersOption: outgoing.parseUniqueHeadersOption,
};
