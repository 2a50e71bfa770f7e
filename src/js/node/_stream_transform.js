// node:_stream_transform: Node's legacy alias of node:stream's Transform.
module.exports = require("node:stream").Transform;
