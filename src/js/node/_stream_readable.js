// node:_stream_readable: Node's legacy alias of node:stream's Readable.
module.exports = require("node:stream").Readable;
