// node:path/win32: Windows path rules (drive letters, UNC roots, both separators), written here
// as path-browserify has no Windows half; `__test__/node-stubs.test.mjs` compares it with Node's
// path.win32. resolve() starts from process.cwd() when it has one (workerd's /bundle), else "\";
// matchesGlob throws ERR_METHOD_NOT_IMPLEMENTED.
const { notImplemented, invalidArgType } = require("node:internal/errors");

const isSep = (c) => c === "/" || c === "\\";
const isDrive = (path) => path.length >= 2 && path[1] === ":" && /[a-zA-Z]/.test(path[0]);

function check(path, name = "path") {
  if (typeof path !== "string") throw invalidArgType(name, "string", path);
}

/**
 * The root of `path`: `device` ("C:" or "\\server\share", separators as backslashes), whether it
 * is absolute, and `rootEnd`, the index where the rest starts (after the root's separator).
 */
function splitRoot(path) {
  const len = path.length;
  if (len === 0) return { device: "", absolute: false, rootEnd: 0 };
  if (isSep(path[0])) {
    if (len > 1 && isSep(path[1])) {
      let j = 2;
      while (j < len && !isSep(path[j])) j++;
      const server = path.slice(2, j);
      if (j < len && server.length > 0) {
        while (j < len && isSep(path[j])) j++;
        const shareStart = j;
        while (j < len && !isSep(path[j])) j++;
        if (j > shareStart) {
          const device = `\\\\${server}\\${path.slice(shareStart, j)}`;
          return { device, absolute: true, rootEnd: j < len ? j + 1 : j };
        }
      }
    }
    return { device: "", absolute: true, rootEnd: 1 };
  }
  if (isDrive(path)) {
    if (len > 2 && isSep(path[2])) return { device: path.slice(0, 2), absolute: true, rootEnd: 3 };
    return { device: path.slice(0, 2), absolute: false, rootEnd: 2 };
  }
  return { device: "", absolute: false, rootEnd: 0 };
}

/** "." and ".." applied to the segments of `tail`; ".." kept at the start when `aboveRoot`. */
function normalizeTail(tail, aboveRoot) {
  const out = [];
  for (const part of tail.split(/[\\/]+/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (aboveRoot) out.push("..");
    } else out.push(part);
  }
  return out.join("\\");
}

function normalize(path) {
  check(path);
  if (path.length === 0) return ".";
  const { device, absolute, rootEnd } = splitRoot(path);
  let tail = normalizeTail(path.slice(rootEnd), !absolute);
  if (tail === "" && !absolute) tail = ".";
  if (tail !== "" && isSep(path[path.length - 1])) tail += "\\";
  if (device === "") return absolute ? `\\${tail}` : tail;
  return absolute ? `${device}\\${tail}` : `${device}${tail}`;
}

function isAbsolute(path) {
  check(path);
  return splitRoot(path).absolute;
}

function join(...parts) {
  if (parts.length === 0) return ".";
  parts.forEach((part) => check(part));
  const kept = parts.filter((part) => part.length > 0);
  if (kept.length === 0) return ".";
  let joined = kept.join("\\");
  // Joining must not make a UNC root the first part did not have ("\\" + "server" …).
  const first = kept[0];
  let leading = 0;
  let collapse = true;
  if (isSep(first[0])) {
    leading = 1;
    if (first.length > 1 && isSep(first[1])) {
      leading = 2;
      if (first.length > 2) {
        if (isSep(first[2])) leading = 3;
        else collapse = false;
      }
    }
  }
  if (collapse) {
    while (leading < joined.length && isSep(joined[leading])) leading++;
    if (leading >= 2) joined = `\\${joined.slice(leading)}`;
  }
  return normalize(joined);
}

function cwd() {
  const dir = globalThis.process?.cwd?.();
  return typeof dir === "string" ? dir : "\\";
}

function resolve(...paths) {
  let device = "";
  let tail = "";
  let absolute = false;
  for (let i = paths.length - 1; i >= -1; i--) {
    let path;
    if (i >= 0) {
      path = paths[i];
      check(path, `paths[${i}]`);
      if (path.length === 0) continue;
    } else if (device === "") {
      path = cwd();
    } else {
      const current = cwd();
      path = current.slice(0, 2).toLowerCase() === device.toLowerCase() && current[2] === "\\" ? current : `${device}\\`;
    }
    const root = splitRoot(path);
    if (root.device.length > 0) {
      if (device.length > 0 && root.device.toLowerCase() !== device.toLowerCase()) continue;
      device = root.device;
    }
    if (absolute) {
      if (device.length > 0) break;
    } else {
      tail = `${path.slice(root.rootEnd)}\\${tail}`;
      absolute = root.absolute;
      if (absolute && device.length > 0) break;
    }
  }
  tail = normalizeTail(tail, !absolute);
  return absolute ? `${device}\\${tail}` : `${device}${tail}` || ".";
}

function relative(from, to) {
  check(from, "from");
  check(to, "to");
  if (from === to) return "";
  const fromPath = resolve(from);
  const toPath = resolve(to);
  if (fromPath === toPath || fromPath.toLowerCase() === toPath.toLowerCase()) return "";
  const trim = (p) => p.replace(/\\+$/, "");
  const fromParts = trim(fromPath).split("\\");
  const toParts = trim(toPath).split("\\");
  if (fromParts[0].toLowerCase() !== toParts[0].toLowerCase()) return toPath;
  let common = 0;
  while (common < fromParts.length && common < toParts.length && fromParts[common].toLowerCase() === toParts[common].toLowerCase()) common++;
  const up = fromParts.slice(common).map(() => "..");
  return [...up, ...toParts.slice(common)].join("\\");
}

function toNamespacedPath(path) {
  if (typeof path !== "string" || path.length === 0) return path;
  const resolved = resolve(path);
  if (resolved.length <= 2) return path;
  if (resolved.startsWith("\\\\")) {
    if (resolved[2] !== "?" && resolved[2] !== ".") return `\\\\?\\UNC\\${resolved.slice(2)}`;
  } else if (isDrive(resolved) && resolved[2] === "\\") {
    return `\\\\?\\${resolved}`;
  }
  return resolved;
}

/** The index where the last part of `path` starts and where it ends (trailing separators off). */
function lastPart(path) {
  const { rootEnd } = splitRoot(path);
  const from = isDrive(path) ? 2 : 0;
  let end = path.length;
  while (end > from && end > rootEnd && isSep(path[end - 1])) end--;
  let start = end;
  while (start > Math.max(from, rootEnd) && !isSep(path[start - 1])) start--;
  if (end <= rootEnd && rootEnd > from) return { start: end, end, rootEnd };
  return { start, end, rootEnd };
}

function dirname(path) {
  check(path);
  if (path.length === 0) return ".";
  const { rootEnd } = splitRoot(path);
  let end = -1;
  let sawName = false;
  for (let i = path.length - 1; i >= rootEnd; i--) {
    if (isSep(path[i])) {
      if (sawName) {
        end = i;
        break;
      }
    } else sawName = true;
  }
  if (end === -1) return rootEnd === 0 ? "." : path.slice(0, rootEnd);
  return path.slice(0, end);
}

function basename(path, suffix) {
  check(path);
  if (suffix !== undefined) check(suffix, "suffix");
  // Only a drive letter is skipped (a UNC share name is a base name here, as in Node).
  const from = isDrive(path) ? 2 : 0;
  let end = path.length;
  while (end > from && isSep(path[end - 1])) end--;
  let start = end;
  while (start > from && !isSep(path[start - 1])) start--;
  const base = path.slice(start, end);
  if (suffix === undefined || suffix.length === 0 || suffix.length > path.length) return base;
  if (suffix === path) return "";
  // Node's quirk: with a suffix, a path with no name gives back what follows the drive.
  if (base === "") return path.slice(from);
  return base !== suffix && base.endsWith(suffix) ? base.slice(0, -suffix.length) : base;
}

function extname(path) {
  check(path);
  const base = basename(path);
  const dot = base.lastIndexOf(".");
  if (dot <= 0 || base === "..") return "";
  return base.slice(dot);
}

function format(object) {
  if (object === null || typeof object !== "object") throw invalidArgType("pathObject", "object", object);
  const dir = object.dir || object.root;
  const ext = object.ext ? (object.ext.startsWith(".") ? object.ext : `.${object.ext}`) : "";
  const base = object.base || `${object.name || ""}${ext}`;
  if (!dir) return base;
  return dir === object.root ? `${dir}${base}` : `${dir}\\${base}`;
}

function parse(path) {
  check(path);
  const result = { root: "", dir: "", base: "", ext: "", name: "" };
  if (path.length === 0) return result;
  const { rootEnd } = splitRoot(path);
  result.root = path.slice(0, rootEnd);
  if (rootEnd === path.length) {
    result.dir = result.root;
    return result;
  }
  const { start, end } = lastPart(path);
  result.base = path.slice(start, end);
  result.ext = extname(path);
  result.name = result.ext ? result.base.slice(0, -result.ext.length) : result.base;
  result.dir = start > rootEnd ? path.slice(0, start - 1) : result.root;
  return result;
}

const win32 = {
  sep: "\\",
  delimiter: ";",
  normalize,
  isAbsolute,
  join,
  resolve,
  relative,
  toNamespacedPath,
  dirname,
  basename,
  extname,
  format,
  parse,
  matchesGlob: notImplemented("path.win32.matchesGlob"),
};
win32.win32 = win32;
Object.defineProperty(win32, "posix", { enumerable: true, get: () => require("node:path").posix });
module.exports = win32;
