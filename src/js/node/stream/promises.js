// node:stream/promises: the promise forms of node:stream's pipeline and finished.
module.exports = require("node:stream").promises;
