// node:assert/strict: node:assert in strict mode.
module.exports = require("node:assert").strict;
