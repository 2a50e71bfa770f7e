// node:path/posix: node:path's POSIX functions (the only ones Workers have).
module.exports = require("node:path").posix;
