// node:_stream_passthrough: Node's legacy alias of node:stream's PassThrough.
module.exports = require("node:stream").PassThrough;
