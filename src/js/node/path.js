// node:path: the `path-browserify` npm package (Node's POSIX path functions). Workers have no
// Windows paths: `path.win32` is not available, as in workerd's posix-only build of it.
const path = require("vendor:path-browserify");
module.exports = path;
