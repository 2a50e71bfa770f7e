// node:sys: Node's old alias of node:util.
module.exports = require("node:util");
