// node:inspector/promises: node:inspector's stubs (its Session would be promise-based; it cannot
// be constructed here either).
module.exports = require("node:inspector");
