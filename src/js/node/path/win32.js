// node:path/win32: Windows path rules. Workers run on POSIX paths and workerbox's path module
// (path-browserify) has no Windows implementation, so only sep (\) and delimiter (;) are real;
// every function throws ERR_METHOD_NOT_IMPLEMENTED (workerd implements them; see README).
const { notImplemented } = require("node:internal/errors");

const win32 = { sep: "\\", delimiter: ";" };
for (const name of ["basename", "dirname", "extname", "format", "isAbsolute", "join", "matchesGlob", "normalize", "parse", "relative",
  "resolve", "toNamespacedPath"]) {
  win32[name] = notImplemented(`path.win32.${name}`);
}
win32.win32 = win32;
win32.posix = require("node:path").posix;
module.exports = win32;
