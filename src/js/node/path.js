// node:path: POSIX path functions from the `path-browserify` npm package (Node's own, published
// separately), with Node's argument checks (ERR_INVALID_ARG_TYPE for a non-string path or a
// non-object to format()) in front; `path.win32` is node:path/win32's Windows rules, as in
// workerd, where node:path is path.posix.
const browserify = require("vendor:path-browserify");
const { invalidArgType } = require("node:internal/errors");

function check(value, name) {
  if (typeof value !== "string") throw invalidArgType(name, "string", value);
}

const posix = {
  sep: "/",
  delimiter: ":",
  resolve(...paths) {
    paths.forEach((p, i) => check(p, `paths[${i}]`));
    return browserify.resolve(...paths);
  },
  normalize(path) {
    check(path, "path");
    return browserify.normalize(path);
  },
  isAbsolute(path) {
    check(path, "path");
    return browserify.isAbsolute(path);
  },
  join(...paths) {
    paths.forEach((p) => check(p, "path"));
    return browserify.join(...paths);
  },
  relative(from, to) {
    check(from, "from");
    check(to, "to");
    return browserify.relative(from, to);
  },
  toNamespacedPath(path) {
    return path;
  },
  dirname(path) {
    check(path, "path");
    return browserify.dirname(path);
  },
  basename(path, suffix) {
    check(path, "path");
    if (suffix !== undefined) check(suffix, "suffix");
    return browserify.basename(path, suffix);
  },
  extname(path) {
    check(path, "path");
    return browserify.extname(path);
  },
  format(pathObject) {
    if (pathObject === null || typeof pathObject !== "object") throw invalidArgType("pathObject", "object", pathObject);
    const dir = pathObject.dir || pathObject.root;
    const ext = pathObject.ext ? (pathObject.ext.startsWith(".") ? pathObject.ext : `.${pathObject.ext}`) : "";
    const base = pathObject.base || `${pathObject.name || ""}${ext}`;
    if (!dir) return base;
    return dir === pathObject.root ? `${dir}${base}` : `${dir}/${base}`;
  },
  parse(path) {
    check(path, "path");
    return browserify.parse(path);
  },
  matchesGlob: browserify.matchesGlob,
};
if (posix.matchesGlob === undefined) delete posix.matchesGlob;
posix.posix = posix;
Object.defineProperty(posix, "win32", { enumerable: true, get: () => require("node:path/win32") });
module.exports = posix;
