// node:fs (enable_nodejs_fs_module; implied by nodejs_compat from 2025-09-01) over workerd's
// virtual filesystem (node:internal/vfs): the worker's modules read-only under /bundle, a /tmp
// of each request's own, and /dev/null, zero, random and full. The synchronous API does the work;
// the callback API calls back on a later microtask and fs.promises (node:fs/promises) settles
// with the same results. Streams read and write through the same files. glob is
// node:internal/fs_glob's; as in workerd, watch, watchFile and unwatchFile are not implemented.
const { Buffer } = require("node:buffer");
const { notImplementedError, invalidArgType } = require("node:internal/errors");
const vfs = require("node:internal/vfs");
const { Dir } = require("node:internal/fs_dir");
const { fsError, Node, lookup, existing, writable, toPath, readDevice, writeDevice, S_IFREG, S_IFDIR, S_IFLNK } = vfs;

const constants = Object.freeze(Object.assign(Object.create(null), {"UV_FS_SYMLINK_DIR":1, "UV_FS_SYMLINK_JUNCTION":2, "O_RDONLY":0, "O_WRONLY":1, "O_RDWR":2, "UV_DIRENT_UNKNOWN":0,
  "UV_DIRENT_FILE":1, "UV_DIRENT_DIR":2, "UV_DIRENT_LINK":3, "UV_DIRENT_FIFO":4, "UV_DIRENT_SOCKET":5,
  "UV_DIRENT_CHAR":6, "UV_DIRENT_BLOCK":7, "EXTENSIONLESS_FORMAT_JAVASCRIPT":0, "EXTENSIONLESS_FORMAT_WASM":1,
  "S_IFMT":61440, "S_IFREG":32768, "S_IFDIR":16384, "S_IFCHR":8192, "S_IFBLK":24576, "S_IFIFO":4096, "S_IFLNK":40960,
  "S_IFSOCK":49152, "O_CREAT":64, "O_EXCL":128, "UV_FS_O_FILEMAP":0, "O_NOCTTY":256, "O_TRUNC":512, "O_APPEND":1024,
  "O_DIRECTORY":65536, "O_NOATIME":262144, "O_NOFOLLOW":131072, "O_SYNC":1052672, "O_DSYNC":4096, "O_DIRECT":16384,
  "O_NONBLOCK":2048, "S_IRWXU":448, "S_IRUSR":256, "S_IWUSR":128, "S_IXUSR":64, "S_IRWXG":56, "S_IRGRP":32, "S_IWGRP":16,
  "S_IXGRP":8, "S_IRWXO":7, "S_IROTH":4, "S_IWOTH":2, "S_IXOTH":1, "F_OK":0, "R_OK":4, "W_OK":2, "X_OK":1,
  "UV_FS_COPYFILE_EXCL":1, "COPYFILE_EXCL":1, "UV_FS_COPYFILE_FICLONE":2, "COPYFILE_FICLONE":2,
  "UV_FS_COPYFILE_FICLONE_FORCE":4, "COPYFILE_FICLONE_FORCE":4})); // a null prototype, as Node's

// ---- Stats, Dirent ------------------------------------------------------------------------------

// workerd's stat: a type, a size, whether the node is writable, and one time. So ino, blksize
// and blocks are 0 (dev too, but 1 for a device), the mode is the type with 0o666 (writable) or 0o444, mtime and ctime are
// the node's time and atime and birthtime the epoch.
const ZERO_STATS = ["dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size", "blksize", "blocks"];
class Stats {
  constructor(node, bigint = false) {
    for (const key of ZERO_STATS) this[key] = 0;
    if (node.kind === "dev") this.dev = 1; // workerd's devices are on device 1
    const writable = node.kind === "dev" || (node.kind !== "link" && !node.readOnly);
    this.mode = (node.mode & constants.S_IFMT) | (writable ? 0o666 : 0o444);
    this.nlink = node.nlink;
    this.size = node.kind === "file" ? node.data.length : 0;
    const ns = node.mtimeNs ?? 0n;
    const ms = Number(ns) / 1e6;
    this.atimeMs = 0;
    this.mtimeMs = ms;
    this.ctimeMs = ms;
    this.birthtimeMs = 0;
    if (bigint) {
      for (const key of ZERO_STATS) this[key] = BigInt(this[key]);
      this.atimeMs = this.birthtimeMs = 0n;
      this.mtimeMs = this.ctimeMs = ns / 1000000n;
      this.atimeNs = this.birthtimeNs = 0n;
      this.mtimeNs = this.ctimeNs = ns;
    }
    this.atime = new Date(0);
    this.mtime = new Date(ms);
    this.ctime = new Date(ms);
    this.birthtime = new Date(0);
  }
  isFile() { return (Number(this.mode) & constants.S_IFMT) === S_IFREG; }
  isDirectory() { return (Number(this.mode) & constants.S_IFMT) === S_IFDIR; }
  isSymbolicLink() { return (Number(this.mode) & constants.S_IFMT) === S_IFLNK; }
  isCharacterDevice() { return (Number(this.mode) & constants.S_IFMT) === constants.S_IFCHR; }
  isBlockDevice() { return false; }
  isFIFO() { return false; }
  isSocket() { return false; }
}

class Dirent {
  constructor(name, node, parentPath) {
    this.name = name;
    this.parentPath = parentPath;
    this.path = parentPath;
    Object.defineProperty(this, "kind", { value: node.kind, enumerable: false });
  }
  isFile() { return this.kind === "file"; }
  isDirectory() { return this.kind === "dir"; }
  isSymbolicLink() { return this.kind === "link"; }
  isCharacterDevice() { return this.kind === "dev"; }
  isBlockDevice() { return false; }
  isFIFO() { return false; }
  isSocket() { return false; }
}

// ---- Options -----------------------------------------------------------------------------------

const FLAGS = { r: 0, "r+": 2, rs: 0, "rs+": 2, w: 577, wx: 705, "w+": 578, "wx+": 706, a: 1089, ax: 1217, "a+": 1090, "ax+": 1218, as: 1089, "as+": 1090 };
function flagsOf(flags, fallback) {
  if (flags === undefined || flags === null) return FLAGS[fallback];
  if (typeof flags === "number") return flags;
  if (!(flags in FLAGS)) throw Object.assign(new TypeError(`The value "${flags}" is invalid for option "flags"`), { code: "ERR_INVALID_ARG_VALUE" });
  return FLAGS[flags];
}
const optionsOf = (options, defaults = {}) => (typeof options === "string" ? { ...defaults, encoding: options } : { ...defaults, ...(options ?? {}) });
/** `options` (an object, or a string naming the encoding when `encodingString`), checked as workerd checks it. */
function checkedOptions(options, { encodingString = true } = {}) {
  if (options === undefined || options === null) return {};
  if (typeof options === "string" && encodingString) return { encoding: options };
  if (typeof options !== "object") throw invalidArgType("options", encodingString ? "string or an instance of Object" : "object", options);
  return options;
}
function checkBoolean(value, name) {
  if (value !== undefined && typeof value !== "boolean") throw invalidArgType(name, "boolean", value);
  return value ?? false;
}
function checkEncoding(encoding) {
  if (encoding === undefined || encoding === null || encoding === "buffer" || (typeof encoding === "string" && Buffer.isEncoding(encoding))) return encoding ?? "utf8";
  throw Object.assign(new TypeError(`The property 'options.encoding' is invalid. Received ${typeof encoding === "string" ? `'${encoding}'` : encoding}`), { code: "ERR_INVALID_ARG_VALUE" });
}
function encode(buffer, encoding) {
  return encoding && encoding !== "buffer" ? buffer.toString(encoding) : buffer;
}
function bytesOf(data, encoding = "utf8") {
  if (typeof data === "string") return Buffer.from(data, encoding);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  throw invalidArgType("data", ["string", "Buffer", "TypedArray", "DataView"], data);
}

// ---- Files and descriptors -----------------------------------------------------------------------

// Descriptors, per request as workerd's (each request, and the global scope, counts from 3).
// 0, 1 and 2 are stdio: always open (closing them does nothing), empty files whose writes go to
// the worker's log, up to 16 KiB a write (workerd's cut).
const fdTables = new Map();
function fdTable() {
  const key = internals.flowEvent() ?? "global";
  let table = fdTables.get(key);
  if (table === undefined) {
    table = { open: new Map(), next: 3 };
    fdTables.set(key, table);
  }
  return table;
}
const releaseTmp = internals.releaseEventTmp;
internals.releaseEventTmp = (id) => {
  fdTables.delete(id);
  releaseTmp?.(id);
};
const descriptors = { has: (fd) => fd <= 2 || fdTable().open.has(fd) };
const STDIO_MAX_WRITE = 16384;
const stdio = [0, 1, 2].map((fd) => Object.assign(new Node("file", S_IFREG | 0o666), { stdio: fd }));
const stdioEntry = (fd) => ({ node: stdio[fd], path: undefined, position: 0, append: true, flags: 2 });

/** Opens `path`: the node (made with O_CREAT), checked against the flags. */
function openNode(path, flags, syscall = "open", { create = false } = {}) {
  const found = lookup(path, syscall, { follow: (flags & constants.O_NOFOLLOW) === 0 });
  let node = found.node;
  if (node === undefined) {
    // openSync makes a missing file whatever its flags (workerd's open has no O_CREAT).
    if ((flags & constants.O_CREAT) === 0 && !create) throw fsError("ENOENT", syscall, path);
    if (found.parent === null || found.parent.kind !== "dir") throw fsError("ENOENT", syscall, path);
    if (found.parent.readOnly) throw fsError("EPERM", syscall, path); // creating in a read-only directory: workerd's code
    node = new Node("file", S_IFREG | 0o666);
    found.parent.entries.set(found.name, node);
    found.parent.touch();
  } else {
    if ((flags & constants.O_CREAT) && (flags & constants.O_EXCL)) throw fsError("EEXIST", syscall, path);
    const writing = (flags & 3) !== 0;
    if (node.kind === "dir" && writing) throw fsError("EISDIR", syscall, path);
    if (writing && node.readOnly) throw fsError("EROFS", syscall, path);
    if (node.kind === "file" && writing && (flags & constants.O_TRUNC)) {
      node.data = Buffer.alloc(0);
      node.touch();
    }
  }
  return node;
}

function checkFd(fd) {
  if (typeof fd !== "number") throw invalidArgType("fd", "number", fd);
  if (!Number.isInteger(fd) || fd < 0 || fd > 2147483647) {
    const range = Number.isInteger(fd) ? ">= 0 && <= 2147483647" : "an integer";
    throw Object.assign(new RangeError(`The value of "fd" is out of range. It must be ${range}. Received ${fd}`), { code: "ERR_OUT_OF_RANGE" });
  }
}

/** The open descriptor `fd`, or workerd's EBADF (whose message is only "bad file descriptor"). */
function entry(fd, syscall) {
  checkFd(fd);
  if (fd <= 2) return stdioEntry(fd);
  const found = fdTable().open.get(fd);
  if (found === undefined) throw Object.assign(fsError("EBADF", syscall), { message: "bad file descriptor" });
  return found;
}

function readAt(node, buffer, offset, length, position, syscall, path) {
  if (node.kind === "dir") throw fsError("EISDIR", syscall, path);
  if (node.kind === "dev") {
    const bytes = readDevice(node, length);
    bytes.copy(buffer, offset);
    return bytes.length;
  }
  if (position >= node.data.length) return 0;
  return node.data.copy(buffer, offset, position, Math.min(node.data.length, position + length));
}

// The largest file workerd keeps (a write past it is EPERM "File size limit exceeded").
const MAX_FILE_SIZE = 128 * 1024 * 1024;

function writeAt(node, bytes, position, syscall, path) {
  if (node.stdio !== undefined) {
    const shown = bytes.subarray(0, STDIO_MAX_WRITE);
    const text = new TextDecoder().decode(shown);
    const line = text.endsWith("\n") ? text.slice(0, -1) : text;
    if (node.stdio === 2) console.error(line);
    else console.log(line);
    return shown.length;
  }
  if (node.kind === "dev") {
    writeDevice(node, syscall, path);
    return bytes.length;
  }
  if (node.readOnly) throw fsError("EROFS", syscall, path);
  const end = position + bytes.length;
  if (end > MAX_FILE_SIZE) throw Object.assign(fsError("EPERM", syscall, path), { message: "File size limit exceeded" });
  if (end > node.data.length) {
    const grown = Buffer.alloc(end);
    node.data.copy(grown);
    node.data = grown;
  }
  bytes.copy(node.data, position);
  node.touch();
  return bytes.length;
}

function readFileSync(path, options) {
  const { encoding = null, flag } = optionsOf(options);
  if (encoding !== null) checkEncoding(encoding);
  if (typeof path === "number") {
    // As in workerd, the whole file, whatever the descriptor's position.
    const open = entry(path, "read");
    const whole = Buffer.alloc(open.node.kind === "file" ? open.node.data.length : 0);
    readAt(open.node, whole, 0, whole.length, 0, "read");
    return encode(whole, encoding);
  }
  const target = toPath(path);
  const node = openNode(target, flagsOf(flag, "r"));
  if (node.kind === "dir") throw fsError("EISDIR", "read", target);
  return encode(node.kind === "dev" ? readDevice(node, node.device === "null" ? 0 : 65536) : Buffer.from(node.data), encoding);
}

function writeFileSync(path, data, options) {
  const { encoding = "utf8", flag, flush } = optionsOf(options);
  checkEncoding(encoding);
  checkBoolean(flush, "options.flush");
  const bytes = bytesOf(data, encoding);
  if (typeof path === "number") {
    const open = entry(path, "write");
    open.position += writeAt(open.node, bytes, open.append ? open.node.data.length : open.position, "write");
    return bytes.length;
  }
  const target = toPath(path);
  const flags = flagsOf(flag, "w");
  const node = openNode(target, flags);
  // workerd returns the number of bytes written (Node returns undefined).
  return writeAt(node, bytes, flags & constants.O_APPEND ? (node.data?.length ?? 0) : 0, "write", target);
}

function appendFileSync(path, data, options) {
  return writeFileSync(path, data, { ...optionsOf(options, { encoding: "utf8" }), flag: optionsOf(options).flag ?? "a" });
}

function openSync(path, flags, mode) {
  const target = toPath(path);
  const numeric = flagsOf(flags, "r");
  const node = openNode(target, numeric, "open", { create: true });
  const table = fdTable();
  const fd = table.next++;
  table.open.set(fd, { node, path: target, position: 0, append: (numeric & constants.O_APPEND) !== 0, flags: numeric });
  return fd;
}

function closeSync(fd) {
  checkFd(fd);
  fdTable().open.delete(fd); // an unknown descriptor (or stdio) is no error, as in workerd
}

function readSync(fd, buffer, offsetOrOptions, length, position) {
  const open = entry(fd, "read");
  let offset = offsetOrOptions;
  if (offsetOrOptions !== null && typeof offsetOrOptions === "object") ({ offset = 0, length = buffer.byteLength - offset, position = null } = offsetOrOptions);
  offset ??= 0;
  length ??= buffer.byteLength - offset;
  const view = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const at = typeof position === "number" || typeof position === "bigint" ? Number(position) : open.position;
  const count = readAt(open.node, view, offset, length, at, "read", open.path);
  if (!(typeof position === "number" || typeof position === "bigint")) open.position += count;
  return count;
}

const outOfBounds = (name) => Object.assign(new RangeError(`"${name}" is outside of buffer bounds`), { code: "ERR_BUFFER_OUT_OF_BOUNDS" });

/** A write position: null, or a non-negative integer (a bigint past 2^32 - 1 is EINVAL, as workerd). */
function checkPosition(position) {
  if (position === undefined || position === null) return null;
  if (typeof position === "bigint") {
    if (position < 0n || position > 4294967295n) throw fsError("EINVAL", "write");
    return Number(position);
  }
  checkIntegerIn(position, "position", 0, 4294967295);
  return position;
}

/** writeSync's arguments, checked as Node checks them: { bytes, at } (at null: the descriptor's position). */
function writeArgs(fd, data, offsetOrPosition, lengthOrEncoding, position) {
  checkFd(fd);
  if (typeof data === "string") {
    let at = offsetOrPosition;
    if (at !== null && typeof at === "object") at = at.position;
    at = checkPosition(at);
    const encoding = typeof lengthOrEncoding === "string" ? lengthOrEncoding : "utf8";
    return { bytes: Buffer.from(data, encoding), at };
  }
  if (!ArrayBuffer.isView(data)) throw invalidArgType("buffer", "string or an instance of Buffer, TypedArray, or DataView", data);
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let offset = offsetOrPosition;
  let length = lengthOrEncoding;
  if (offset !== null && typeof offset === "object") ({ offset, length, position } = offset);
  offset ??= 0;
  if (typeof offset !== "number") throw invalidArgType("offset", "number", offset);
  checkIntegerIn(offset, "offset", 0, Number.MAX_SAFE_INTEGER);
  if (offset > view.length) throw outOfBounds("offset");
  length ??= view.length - offset;
  if (typeof length !== "number") throw invalidArgType("length", "number", length);
  if (offset + length > view.length) throw outOfBounds("length");
  checkIntegerIn(length, "length", 0, 2147483647);
  return { bytes: view.subarray(offset, offset + length), at: checkPosition(position) };
}

function writeSync(fd, data, offsetOrPosition, lengthOrEncoding, position) {
  const { bytes, at } = writeArgs(fd, data, offsetOrPosition, lengthOrEncoding, position);
  const open = entry(fd, "write"); // a descriptor opened for reading writes too, as in workerd
  const where = open.append ? (open.node.data?.length ?? 0) : (at ?? open.position);
  const count = writeAt(open.node, bytes, where, "write", open.path);
  if (at === null) open.position = where + count;
  return count;
}

// ---- Paths and directories -------------------------------------------------------------------------

/** stat's options: an object whose bigint and throwIfNoEntry are booleans. */
function statOptions(options) {
  const checked = checkedOptions(options, { encodingString: false });
  checkBoolean(checked.bigint, "options.bigint");
  checkBoolean(checked.throwIfNoEntry, "options.throwIfNoEntry");
  return checked;
}

function statSync(path, options) {
  options = statOptions(options);
  try {
    return new Stats(typeof path === "number" ? entry(path, "fstat").node : existing(toPath(path), "stat").node, options?.bigint === true);
  } catch (error) {
    if (options?.throwIfNoEntry === false && error.code === "ENOENT") return undefined;
    throw error;
  }
}

function lstatSync(path, options) {
  options = statOptions(options);
  try {
    return new Stats(existing(toPath(path), "lstat", { follow: false }).node, options?.bigint === true);
  } catch (error) {
    if (options?.throwIfNoEntry === false && error.code === "ENOENT") return undefined;
    throw error;
  }
}

function existsSync(path) {
  try {
    return lookup(toPath(path), "access").node !== undefined;
  } catch {
    return false;
  }
}

function accessSync(path, mode) {
  const target = toPath(path);
  if (mode !== undefined) checkIntegerIn(mode, "mode", 0, 7);
  const { node } = existing(target, "access");
  // workerd answers ENOENT for a write check on a read-only file and for any execute check.
  if (((mode & constants.W_OK) && node.readOnly) || (mode & constants.X_OK)) throw fsError("ENOENT", "access", target);
}

function readdirSync(path, options) {
  const checked = checkedOptions(options);
  const withFileTypes = checkBoolean(checked.withFileTypes, "options.withFileTypes");
  const recursive = checkBoolean(checked.recursive, "options.recursive");
  const encoding = checkEncoding(checked.encoding);
  const target = toPath(path);
  const { node } = existing(target, "scandir");
  if (node.kind !== "dir") throw fsError("ENOTDIR", "scandir", target);
  const out = [];
  const walk = (dir, dirPath, prefix) => {
    for (const name of vfs.names(dir)) {
      const child = lookup(`${dirPath === "/" ? "" : dirPath}/${name}`, "scandir", { follow: false }).node;
      const shown = encode(Buffer.from(`${prefix}${name}`), encoding);
      out.push(withFileTypes ? new Dirent(shown, child, dirPath) : shown);
      if (recursive && child.kind === "dir") {
        const childPath = `${dirPath === "/" ? "" : dirPath}/${name}`;
        walk(lookup(childPath, "scandir").node, childPath, `${prefix}${name}/`);
      }
    }
  };
  walk(node, target, "");
  return out;
}

function mkdirSync(path, options) {
  const checked = typeof options === "number" ? {} : checkedOptions(options, { encodingString: false });
  const recursive = checkBoolean(checked.recursive, "options.recursive");
  const target = toPath(path);
  const parts = target.split("/").filter(Boolean);
  let first;
  for (let i = recursive ? 1 : parts.length; i <= parts.length; i++) {
    const partial = `/${parts.slice(0, i).join("/")}`;
    const found = lookup(partial, "mkdir");
    if (found.node !== undefined) {
      // As in workerd, making a directory that exists is a no-op; a file there is EEXIST.
      if (found.node.kind !== "dir") throw fsError(i === parts.length ? "EEXIST" : "ENOTDIR", "mkdir", target);
      continue;
    }
    if (found.parent === null) throw fsError("ENOENT", "mkdir", target);
    if (found.parent.readOnly) throw fsError("EPERM", "mkdir", target); // workerd's code here
    found.parent.entries.set(found.name, new Node("dir", S_IFDIR | 0o777));
    found.parent.touch();
    first ??= partial;
  }
  return recursive ? first : undefined;
}

let tempCounter = 0;
function mkdtempSync(prefix, options) {
  checkEncoding(optionsOf(options).encoding);
  // workerd's names: the prefix and a counter (not Node's six random characters).
  for (;;) {
    const path = `${toPath(prefix)}${tempCounter++}`;
    if (lookup(path, "mkdtemp").node !== undefined) continue;
    mkdirSync(path);
    return encode(Buffer.from(path), optionsOf(options).encoding ?? "utf8");
  }
}

/** rm/rmdir's options: an object whose recursive/force are booleans and maxRetries/retryDelay integers. */
function removeOptions(options, withForce) {
  const checked = checkedOptions(options, { encodingString: false });
  const recursive = checkBoolean(checked.recursive, "options.recursive");
  const force = withForce ? checkBoolean(checked.force, "options.force") : false;
  for (const name of ["maxRetries", "retryDelay"]) {
    const value = checked[name];
    if (value !== undefined && typeof value !== "number") throw invalidArgType(`options.${name}`, "number", value);
  }
  return { recursive, force };
}

function rmdirSync(path, options) {
  const { recursive } = removeOptions(options, false);
  const target = toPath(path);
  const found = existing(target, "rmdir", { follow: false });
  if (found.node.kind !== "dir") throw fsError("ENOTDIR", "rmdir", target);
  if (found.node.entries.size > 0 && !recursive) throw fsError("ENOTEMPTY", "rmdir", target);
  if (found.parent === null) throw fsError("EPERM", "rmdir", target);
  writable(found.parent, "rmdir", target);
  found.parent.entries.delete(found.name);
}

function unlinkSync(path) {
  const target = toPath(path);
  const found = existing(target, "unlink", { follow: false });
  if (found.node.kind === "dir") throw fsError("EISDIR", "unlink", target);
  if (found.parent.readOnly) throw fsError("EPERM", "unlink", target); // workerd's code
  found.parent.entries.delete(found.name);
  found.node.nlink--;
}

function rmSync(path, options) {
  const { recursive, force } = removeOptions(options, true);
  const target = toPath(path);
  const found = lookup(target, "rm", { follow: false });
  if (found.node === undefined) {
    if (force) return;
    throw fsError("ENOENT", "rm", target);
  }
  if (found.node.kind === "dir" && !recursive && found.node.entries.size > 0) throw fsError("ENOTEMPTY", "rm", target);
  if (found.node.kind === "dir" && !recursive) throw Object.assign(fsError("EISDIR", "rm", target), { code: "ERR_FS_EISDIR", message: `Path is a directory: rm returned EISDIR (is a directory) ${target}` });
  if (found.parent === null) throw fsError("EPERM", "rm", target);
  writable(found.parent, "rm", target);
  found.parent.entries.delete(found.name);
}

function renameSync(from, to) {
  const source = toPath(from, "oldPath");
  const dest = toPath(to, "newPath");
  const a = existing(source, "rename", { follow: false });
  const b = lookup(dest, "rename", { follow: false });
  if (b.parent === null || b.parent.kind !== "dir") throw fsError("ENOENT", "rename", source, dest);
  writable(a.parent, "rename", source);
  writable(b.parent, "rename", source);
  if (b.node?.kind === "dir" && a.node.kind !== "dir") throw fsError("EISDIR", "rename", source, dest);
  if (b.node?.kind === "dir" && b.node.entries.size > 0) throw fsError("ENOTEMPTY", "rename", source, dest);
  a.parent.entries.delete(a.name);
  b.parent.entries.set(b.name, a.node);
}

/** copyFile's mode: one of workerd's four values (anything else is ERR_INVALID_ARG_VALUE). */
function checkCopyMode(mode = 0) {
  if (![0, 1, 4, 2].includes(mode)) {
    const shown = typeof mode === "string" ? `'${mode}'` : Array.isArray(mode) ? "[]" : String(mode);
    throw Object.assign(new TypeError(`The argument 'mode' must be one of: 0, 1, 4, 2. Received ${shown}`), { code: "ERR_INVALID_ARG_VALUE" });
  }
  return mode;
}

function copyFileSync(from, to, mode = 0) {
  const source = toPath(from, "src");
  const dest = toPath(to, "dest");
  checkCopyMode(mode);
  // COPYFILE_FICLONE_FORCE: a copy-on-write clone, which the virtual filesystem cannot make.
  if (mode & constants.COPYFILE_FICLONE_FORCE) throw Object.assign(new Error("The requested operation is unsupported"), { code: "ERR_UNSUPPORTED_OPERATION" });
  const { node } = existing(source, "copyfile");
  if (node.kind === "dir") throw fsError("EISDIR", "copyfile", source, dest);
  if ((mode & constants.COPYFILE_EXCL) && existsSync(dest)) throw fsError("EEXIST", "copyfile", source, dest);
  writeFileSync(dest, node.kind === "file" ? node.data : Buffer.alloc(0));
}

const cpSync = (from, to, options) => require("node:internal/fs_cp").cpSync(from, to, options);

/** Where a new link goes: EINVAL (as workerd) for an empty last name or a parent that is not a directory. */
function linkPlace(raw, where, syscall, source) {
  if (typeof raw === "string" && raw.endsWith("/")) throw fsError("EINVAL", syscall, source, where);
  let found;
  try {
    found = lookup(where, syscall, { follow: false });
  } catch (error) {
    if (error.code === "ENOTDIR") throw fsError("EINVAL", syscall, source, where);
    throw error;
  }
  if (found.parent?.readOnly && found.node === undefined) throw fsError("EPERM", syscall, source, where);
  return found;
}

function symlinkSync(target, path) {
  const where = toPath(path);
  const found = linkPlace(path, where, "symlink", String(target));
  if (found.parent?.kind !== "dir") throw fsError("EINVAL", "symlink", String(target), where);
  if (found.node !== undefined) throw fsError("EEXIST", "symlink", String(target), where);
  writable(found.parent, "symlink", where);
  const link = new Node("link", S_IFLNK | 0o777);
  link.target = typeof target === "string" ? target : toPath(target);
  found.parent.entries.set(found.name, link);
}

function readlinkSync(path, options) {
  checkEncoding(optionsOf(options).encoding);
  const target = toPath(path);
  const { node } = existing(target, "readlink", { follow: false });
  if (node.kind !== "link") throw fsError("EINVAL", "readlink", target);
  return encode(Buffer.from(node.target), optionsOf(options).encoding ?? "utf8");
}

function realpathSync(path, options) {
  checkEncoding(optionsOf(options).encoding);
  const target = toPath(path);
  let resolved;
  try {
    const found = lookup(target, "realpath");
    if (found.node !== undefined) resolved = found.path;
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  if (resolved === undefined) {
    // A symlink whose target is missing resolves to that target (workerd's answer).
    const own = lookup(target, "realpath", { follow: false }).node;
    if (own?.kind !== "link") throw fsError("ENOENT", "realpath", target);
    resolved = vfs.normalize(own.target.startsWith("/") ? own.target : `${target.slice(0, target.lastIndexOf("/"))}/${own.target}`);
  }
  return encode(Buffer.from(resolved), optionsOf(options).encoding ?? "utf8");
}
realpathSync.native = realpathSync;

function linkSync(existingPath, newPath) {
  const source = toPath(existingPath, "existingPath");
  const dest = toPath(newPath, "newPath");
  let node;
  try {
    ({ node } = existing(source, "link"));
  } catch (error) {
    throw error.code === "ENOTDIR" ? fsError("ENOENT", "link", source, dest) : error;
  }
  if (node.kind === "dir") throw fsError("EPERM", "link", source, dest);
  const found = linkPlace(newPath, dest, "link", source);
  if (found.parent?.kind !== "dir") throw fsError("EINVAL", "link", source, dest);
  if (found.node !== undefined) throw fsError("EEXIST", "link", source, dest);
  writable(found.parent, "link", source);
  found.parent.entries.set(found.name, node);
  node.nlink++;
}

/** A truncate length, as workerd checks it: an integer >= 0 and < 2^32. */
function checkLength(length) {
  if (typeof length !== "number") throw invalidArgType("len", "number", length);
  if (!Number.isInteger(length) || length < 0 || length >= 4294967296) {
    const range = Number.isInteger(length) ? ">= 0 && < 4294967296" : "an integer";
    throw Object.assign(new RangeError(`The value of "len" is out of range. It must be ${range}. Received ${length}`), { code: "ERR_OUT_OF_RANGE" });
  }
}

function truncateSync(path, length = 0) {
  const target = toPath(path);
  checkLength(length);
  resize(openNode(target, constants.O_RDWR, "open"), length);
}

function ftruncateSync(fd, length = 0) {
  checkFd(fd);
  checkLength(length);
  resize(entry(fd, "ftruncate").node, length);
}

function resize(node, length) {
  if (node.kind !== "file") throw fsError("EISDIR", "ftruncate");
  if (node.readOnly) throw fsError("EROFS", "ftruncate");
  if (length > MAX_FILE_SIZE) throw Object.assign(fsError("EPERM", "ftruncate"), { message: "File size limit exceeded" });
  const next = Buffer.alloc(length);
  node.data.copy(next, 0, 0, Math.min(length, node.data.length));
  node.data = next;
  node.touch();
}

/**
 * A time for utimes, as workerd reads it: a number or bigint is milliseconds, a string is
 * parsed as a date, a Date is itself; an invalid date is a TypeError.
 */
function timeOf(time, { checkDate = true } = {}) {
  let date;
  if (typeof time === "number" || typeof time === "string") date = new Date(time);
  else if (typeof time === "bigint") date = new Date(Number(time));
  else if (time instanceof Date) date = time;
  else throw invalidArgType("time", "string, number, or bigint or an instance of Date", time);
  if (checkDate && Number.isNaN(date.getTime())) throw new TypeError("The value cannot be converted because it is not a valid Date.");
  return Number.isNaN(date.getTime()) ? 0n : BigInt(date.getTime()) * 1000000n;
}

/**
 * utimes' arguments checked (before the path or descriptor is looked up): the new mtime in ns.
 * An invalid Date is found only later (the callback forms pass it to the callback).
 */
function utimesArgs(path, atime, mtime, checkDate = true) {
  if (typeof path === "number") checkFd(path);
  else toPath(path);
  timeOf(atime, { checkDate });
  return timeOf(mtime, { checkDate });
}

// workerd keeps one time per node: utimes sets mtime (and so ctime); atime stays the epoch. A
// read-only node keeps its time.
function utimesSync(path, atime, mtime) {
  const ns = utimesArgs(path, atime, mtime);
  const { node } = typeof path === "number" ? entry(path, "futime") : existing(toPath(path), "utime");
  if (!node.readOnly && node.stdio === undefined) node.mtimeNs = ns;
}
function futimesSync(fd, atime, mtime) {
  checkFd(fd);
  return utimesSync(fd, atime, mtime);
}

// chmod and chown check their arguments as Node does and then, as in workerd, change nothing
// (modes are not kept per call, and every file is owned by uid 0, gid 0).
function parseMode(mode, name = "mode") {
  if (typeof mode === "string") {
    if (!/^[0-7]+$/.test(mode)) throw Object.assign(new TypeError(`The argument '${name}' must be a 32-bit unsigned integer or an octal string. Received '${mode}'`), { code: "ERR_INVALID_ARG_VALUE" });
    mode = parseInt(mode, 8);
  }
  checkIntegerIn(mode, name, 0, 4294967295);
  return mode;
}
function checkIntegerIn(value, name, min, max) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = Number.isInteger(value) ? `>= ${min} && <= ${max}` : "an integer";
    throw Object.assign(new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${value}`), { code: "ERR_OUT_OF_RANGE" });
  }
}
const checkIds = (uid, gid) => {
  checkIntegerIn(uid, "uid", -1, 4294967295);
  checkIntegerIn(gid, "gid", -1, 4294967295);
};
/** Argument checks for the callback forms, run before the callback is looked at. */
const callbackChecks = {
  write: writeArgs,
  writev: (fd, buffers) => {
    checkFd(fd);
    if (!Array.isArray(buffers) || !buffers.every((b) => ArrayBuffer.isView(b))) throw invalidArgType("buffers", "an instance of ArrayBufferView[]", buffers);
  },
  cp: (from, to, options) => (toPath(from, "src"), toPath(to, "dest"), require("node:internal/fs_cp").validate(options)),
  access: (path, mode) => (toPath(path), mode === undefined || checkIntegerIn(mode, "mode", 0, 7)),
  chmod: (path, mode) => (toPath(path), parseMode(mode)),
  lchmod: (path, mode) => (toPath(path), parseMode(mode)),
  fchmod: (fd, mode) => (checkFd(fd), parseMode(mode)),
  chown: (path, uid, gid) => (toPath(path), checkIds(uid, gid)),
  lchown: (path, uid, gid) => (toPath(path), checkIds(uid, gid)),
  fchown: (fd, uid, gid) => (checkFd(fd), checkIds(uid, gid)),
  // An unknown encoding throws at the call, before the callback is looked at.
  readFile: (path, options) => checkEncoding(optionsOf(options).encoding),
  readdir: (path, options) => checkEncoding(optionsOf(options).encoding),
  readlink: (path, options) => checkEncoding(optionsOf(options).encoding),
  realpath: (path, options) => checkEncoding(optionsOf(options).encoding),
  mkdtemp: (path, options) => checkEncoding(optionsOf(options).encoding),
  writeFile: (path, data, options) => checkEncoding(optionsOf(options).encoding),
  appendFile: (path, data, options) => checkEncoding(optionsOf(options).encoding),
  utimes: (path, atime, mtime) => (toPath(path), utimesArgs(path, atime, mtime, false)),
  lutimes: (path, atime, mtime) => (toPath(path), utimesArgs(path, atime, mtime, false)),
  futimes: (fd, atime, mtime) => (checkFd(fd), utimesArgs(fd, atime, mtime, false)),
  truncate: (path, length = 0) => (typeof path === "number" ? checkFd(path) : toPath(path), checkLength(length)),
  ftruncate: (fd, length = 0) => (checkFd(fd), checkLength(length)),
  copyFile: (from, to, mode) => (toPath(from, "src"), toPath(to, "dest"), checkCopyMode(mode)),
  fstat: (fd, options) => (checkFd(fd), statOptions(options)),
  statfs: (path, options) => (toPath(path), statOptions(options)),
};
function chmodSync(path, mode) {
  const target = toPath(path);
  parseMode(mode);
  existing(target, "chmod");
}
function lchmodSync(path, mode) {
  const target = toPath(path);
  parseMode(mode);
  existing(target, "lchmod", { follow: false });
}
function fchmodSync(fd, mode) {
  checkFd(fd);
  parseMode(mode);
  entry(fd, "fstat");
}
function chownSync(path, uid, gid) {
  const target = toPath(path);
  checkIds(uid, gid);
  existing(target, "chown");
}
function lchownSync(path, uid, gid) {
  const target = toPath(path);
  checkIds(uid, gid);
  existing(target, "lchown", { follow: false });
}
function fchownSync(fd, uid, gid) {
  checkFd(fd);
  checkIds(uid, gid);
  entry(fd, "fstat");
}

function opendirSync(path, options) {
  const checked = checkedOptions(options, { encodingString: false });
  checkEncoding(checked.encoding);
  const where = toPath(path);
  return new Dir(where, readdirSync(where, { encoding: checked.encoding, recursive: checked.recursive, withFileTypes: true }));
}


const sync = {
  accessSync, appendFileSync, chmodSync, fchmodSync, lchmodSync, chownSync, fchownSync, lchownSync,
  closeSync, copyFileSync, cpSync, existsSync, fdatasyncSync: (fd) => void entry(fd, "fdatasync"), fsyncSync: (fd) => void entry(fd, "fsync"),
  fstatSync: (fd, options) => {
    checkFd(fd);
    const bigint = statOptions(options).bigint === true; // the options are checked before the descriptor
    return new Stats(entry(fd, "fstat").node, bigint);
  }, ftruncateSync, futimesSync, lstatSync, linkSync, lutimesSync: utimesSync,
  mkdirSync, mkdtempSync, openSync, opendirSync, readFileSync, readSync, readdirSync, readlinkSync, realpathSync, renameSync, rmSync, rmdirSync,
  statSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync, writeSync,
  readvSync: (fd, buffers, position) => buffers.reduce((n, b) => n + readSync(fd, b, 0, b.byteLength, position === undefined || position === null ? null : position + n), 0),
  writevSync: (fd, buffers, position) => buffers.reduce((n, b) => n + writeSync(fd, b, 0, b.byteLength, position === undefined || position === null ? null : position + n), 0),
  statfsSync: (path, options) => {
    toPath(path);
    const zero = statOptions(options).bigint ? 0n : 0;
    return { type: zero, bsize: zero, blocks: zero, bfree: zero, bavail: zero, files: zero, ffree: zero }; // workerd's zeros
  },
  globSync: (pattern, options) => require("node:internal/fs_glob").globSync(pattern, options, Dirent),
};

module.exports = require("node:internal/fs_api")({ constants, sync, callbackChecks, Stats, Dirent, Dir, descriptors, entry, toPath, existing, readAt, writeAt, openNode });
