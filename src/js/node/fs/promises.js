// node:fs/promises: node:fs's promise API (every operation rejects with
// ERR_METHOD_NOT_IMPLEMENTED: workerbox has no virtual filesystem; see node:fs).
module.exports = require("node:fs").promises;
