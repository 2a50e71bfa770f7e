// node:dns/promises: node:dns's promise API (every lookup rejects with ERR_METHOD_NOT_IMPLEMENTED).
module.exports = require("node:dns").promises;
