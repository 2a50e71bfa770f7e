// node:_stream_writable: Node's legacy alias of node:stream's Writable.
module.exports = require("node:stream").Writable;
