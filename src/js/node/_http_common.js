// node:_http_common: Node's internal HTTP helpers that workerd exports: the token and header
// character checks, CRLF, the method list and the expressions Node's HTTP code shares.
const http = require("node:http");

const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
module.exports = {
  _checkIsHttpToken: (value) => TOKEN.test(value),
  _checkInvalidHeaderChar: (value) => /[^\t\x20-\x7e\x80-\xff]/.test(value),
  chunkExpression: /(?:^|\W)chunked(?:$|\W)/i,
  continueExpression: /(?:^|\W)100-continue(?:$|\W)/i,
  CRLF: "\r\n",
  methods: http.METHODS,
  parsers: { name: "parsers", max: 1000 },
  kIncomingMessage: Symbol("IncomingMessage"),
};
