// node:_stream_duplex: Node's legacy alias of node:stream's Duplex.
module.exports = require("node:stream").Duplex;
