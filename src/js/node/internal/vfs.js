// The virtual filesystem behind node:fs, laid out as workerd's: `/bundle` holds the worker's
// modules as read-only files, `/tmp` is writable and belongs to the request that uses it (each
// request, and the global scope, sees its own, gone when the request ends), and `/dev` has
// `null`, `zero`, `random` and `full`. Nodes are directories, files, symlinks and devices; paths
// resolve through symlinks; errors carry Node's code, errno, syscall and path.

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one
const { Buffer } = require("node:buffer");

const ERRNO = { EPERM: -1, ENOENT: -2, EBADF: -9, EACCES: -13, EEXIST: -17, ENOTDIR: -20, EISDIR: -21, EINVAL: -22, ENOSPC: -28, EROFS: -30, ENOTEMPTY: -39, ELOOP: -40 };
const TEXT = {
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  EBADF: "bad file descriptor",
  EACCES: "permission denied",
  EEXIST: "file already exists",
  ENOTDIR: "not a directory",
  EISDIR: "illegal operation on a directory",
  EINVAL: "invalid argument",
  ENOSPC: "no space left on device",
  EROFS: "read-only file system",
  ENOTEMPTY: "directory not empty",
  ELOOP: "too many symbolic links encountered",
};

/** A Node-style system error: `ENOENT: no such file or directory, open '/x'`. */
function fsError(code, syscall, path, dest) {
  const where = path === undefined ? "" : ` '${path}'${dest === undefined ? "" : ` -> '${dest}'`}`;
  const error = new Error(`${code}: ${TEXT[code]}, ${syscall}${where}`);
  error.errno = ERRNO[code];
  error.code = code;
  error.syscall = syscall;
  if (path !== undefined) error.path = path;
  if (dest !== undefined) error.dest = dest;
  return error;
}

class Node {
  constructor(kind, mode, readOnly = false) {
    this.kind = kind; // "dir" | "file" | "link" | "dev"
    this.mode = mode;
    this.readOnly = readOnly;
    this.nlink = 1;
    // As in workerd, a node keeps one time, its last modification (ns since the epoch): the
    // epoch until utimes sets it; writes do not change it.
    this.mtimeNs = 0n;
    if (kind === "dir") this.entries = new Map();
    if (kind === "file") this.data = Buffer.alloc(0);
  }
  /** Writes keep no time in workerd's filesystem: nothing to do (kept for the callers' sake). */
  touch() {}
}

const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const S_IFCHR = 0o020000;

function makeDevice(name) {
  const device = new Node("dev", S_IFCHR | 0o666);
  device.device = name;
  return device;
}

const root = new Node("dir", S_IFDIR | 0o555, true);
const bundle = new Node("dir", S_IFDIR | 0o555, true);
const dev = new Node("dir", S_IFDIR | 0o555, true);
root.entries.set("bundle", bundle);
root.entries.set("dev", dev);
for (const name of ["null", "zero", "full", "random"]) dev.entries.set(name, makeDevice(name));

/** /bundle's files, made from the worker's modules on first use. */
let bundleFilled = false;
function fillBundle() {
  if (bundleFilled) return;
  bundleFilled = true;
  for (const name of ops.userModuleNames()) {
    const found = ops.userModuleBytes(name);
    if (found === undefined) continue;
    // As workerd: the name read as a URL against file:///, skipped unless it is a file: URL.
    let url;
    try {
      url = new URL(name, "file:///");
    } catch {
      continue;
    }
    if (url.protocol !== "file:") continue;
    const parts = canonical(url.pathname).split("/").filter(Boolean);
    let dir = bundle;
    for (const part of parts.slice(0, -1)) {
      let next = dir.entries.get(part);
      if (next === undefined) {
        next = new Node("dir", S_IFDIR | 0o555, true);
        dir.entries.set(part, next);
      }
      dir = next;
    }
    const file = new Node("file", S_IFREG | 0o444, true);
    file.data = Buffer.from(found);
    dir.entries.set(parts.at(-1), file);
  }
}

/** Each request's /tmp, by event id ("global" outside any). */
const tmps = new Map();
function tmp() {
  const key = internals.flowEvent() ?? "global";
  let dir = tmps.get(key);
  if (dir === undefined) {
    dir = new Node("dir", S_IFDIR | 0o777);
    tmps.set(key, dir);
  }
  return dir;
}
/** Called when an event ends: its /tmp goes. */
internals.releaseEventTmp = (id) => tmps.delete(id);

function childOf(dir, name) {
  if (dir === root) {
    if (name === "tmp") return tmp();
  } else if (dir === bundle) fillBundle();
  return dir.entries.get(name);
}

function cwd() {
  try {
    return typeof process?.cwd === "function" ? process.cwd() : "/";
  } catch {
    return "/";
  }
}

/** The names in directory node `dir` (/bundle filled first; / lists bundle, tmp and dev, as workerd). */
function names(dir) {
  if (dir === root) return ["bundle", "tmp", "dev"]; // workerd's order
  if (dir === dev) return [...dev.entries.keys()]; // null, zero, full, random, as workerd lists them
  if (dir === bundle) fillBundle();
  return [...dir.entries.keys()].sort();
}

/** Whether `value` is a URL: the WHATWG one, or the global one (the legacy URL before url_standard, src/js/47_url_legacy.js). */
const isURL = (value) => value instanceof URL || (typeof globalThis.URL === "function" && value instanceof globalThis.URL);

// The bytes a URL path keeps percent-encoded (WHATWG's path percent-encode set, plus % and /).
const KEEP_ENCODED = new Set([..." \"#<>?`{}%/"].map((c) => c.charCodeAt(0)));
const keepsEncoded = (byte) => byte < 0x21 || byte > 0x7e || KEEP_ENCODED.has(byte);
const hex = (byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;

/**
 * A path's percent-encoding made canonical, as workerd's file URLs make it: a byte that needs
 * it is encoded (`?`, `#`, space, non-ASCII as UTF-8; uppercase hex), one that does not is
 * decoded (`%41` is `A`), so every spelling of a name finds the same file.
 */
function canonical(path) {
  if (!/[^\x21-\x7e]|["#<>?`{}%]/.test(path)) return path; // the common case: nothing to do
  let out = "";
  for (const byte of Buffer.from(path, "utf8")) out += keepsEncoded(byte) && byte !== 0x2f ? hex(byte) : String.fromCharCode(byte);
  // Escapes already there: decoded when the byte needs none, else kept in uppercase.
  return out.replace(/%25([0-9A-Fa-f]{2})/g, (_, h) => {
    const byte = parseInt(h, 16);
    return keepsEncoded(byte) ? hex(byte) : String.fromCharCode(byte);
  });
}

/** workerd's limits on a path: 4096 characters and 48 segments (plain Errors, no code). */
function checkLimits(path) {
  if (path.length > 4096) throw new Error("File path is too long");
  let segments = 0;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) segments++;
  if (segments > 48) throw new Error("File path has too many segments");
}

/** `path` (string, Buffer or file: URL) as an absolute, normalized string. */
function toPath(path, name = "path") {
  if (isURL(path)) {
    if (path.protocol !== "file:") throw new TypeError("File path must be a file: URL"); // workerd's words, no code
    path = path.pathname;
  } else if (Buffer.isBuffer(path) || path instanceof Uint8Array) path = Buffer.from(path).toString("utf8");
  if (typeof path !== "string") {
    const { describeReceived } = require("node:internal/errors");
    throw Object.assign(new TypeError(`The "${name}" argument must be of type string or an instance of Buffer or URL. Received ${describeReceived(path)}`), { code: "ERR_INVALID_ARG_TYPE" });
  }
  if (path.includes("\u0000")) throw Object.assign(new TypeError(`The argument '${name}' must be a string, Uint8Array, or URL without null bytes. Received ${JSON.stringify(path)}`), { code: "ERR_INVALID_ARG_VALUE" });
  const normalized = normalize(canonical(path.startsWith("/") ? path : `${cwd()}/${path}`));
  checkLimits(normalized);
  return normalized;
}

function normalize(path) {
  const parts = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

const split = (path) => path.split("/").filter(Boolean);

/**
 * The node at `path` and its parent directory: `{ node, parent, name, path }` (node undefined
 * when the last component does not exist). Symlinks on the way are followed, the last one only
 * with `follow`.
 */
function lookup(path, syscall, { follow = true, depth = 0 } = {}) {
  if (depth > 40) throw fsError("ELOOP", syscall, path);
  const parts = split(path);
  let dir = root;
  let walked = "";
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i];
    const last = i === parts.length - 1;
    if (dir.kind !== "dir") throw fsError("ENOTDIR", syscall, path);
    let node = childOf(dir, name);
    if (node !== undefined && node.kind === "link" && (!last || follow)) {
      const target = node.target.startsWith("/") ? node.target : `${walked || "/"}/${node.target}`;
      const rest = parts.slice(i + 1).join("/");
      return lookup(normalize(rest ? `${target}/${rest}` : target), syscall, { follow, depth: depth + 1 });
    }
    if (last) return { node, parent: dir, name, path };
    if (node === undefined) throw fsError("ENOENT", syscall, path);
    dir = node;
    walked += `/${name}`;
  }
  return { node: root, parent: null, name: "", path: "/" };
}

/** The existing node at `path`, or ENOENT. */
function existing(path, syscall, options) {
  const found = lookup(path, syscall, options);
  if (found.node === undefined) throw fsError("ENOENT", syscall, path);
  return found;
}

/** Refuses changes inside the read-only parts (/, /bundle, /dev). */
function writable(dir, syscall, path) {
  if (dir.readOnly) throw fsError(dir === root ? "EPERM" : "EROFS", syscall, path);
}

/** Reads a device: null is empty, zero and full give zeros, random gives random bytes. */
function readDevice(node, length) {
  if (node.device === "null") return Buffer.alloc(0);
  const out = Buffer.alloc(length);
  if (node.device === "random") crypto.getRandomValues(out.subarray(0, Math.min(length, 65536)));
  return out;
}

/** Writes to a device: full refuses (ENOSPC), the others swallow it. */
function writeDevice(node, syscall, path) {
  if (node.device === "full") throw fsError("ENOSPC", syscall, path);
}

module.exports = { canonical, fsError, Node, names, lookup, existing, writable, toPath, normalize, readDevice, writeDevice, S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, root };
