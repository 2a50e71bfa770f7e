// The web file system workerd has under enable_web_file_system (experimental): StorageManager
// (`navigator.storage`), whose getDirectory() is the root of the same virtual filesystem node:fs
// sees (internal/vfs.js: /bundle, /tmp, /dev), FileSystemHandle, FileSystemDirectoryHandle,
// FileSystemFileHandle and FileSystemWritableFileStream, with workerd's DOMExceptions. A handle
// names a path and looks it up on each use, as workerd's locator-based handles do.
// src/js/88_web_fs.js installs these as globals for a worker with the flag.

const vfs = require("node:internal/vfs");
const { Buffer } = require("node:buffer");

const kToken = Symbol("webfs");
const { WritableStream } = internals.streams;

/** A DOMException with workerd's name and message. */
const domError = (name, message) => new DOMException(message, name);

/** A node:fs error from the virtual filesystem as workerd's web file system reports it. */
function fromFsError(error) {
  switch (error?.code) {
    case "ENOTDIR": return domError("TypeMismatchError", "Not a directory");
    case "ENOTEMPTY": return domError("InvalidModificationError", "Directory not empty");
    case "EROFS": return domError("InvalidStateError", "Read-only file system");
    case "EPERM": return domError("NotAllowedError", "Operation not permitted");
    case "EISDIR": return domError("NotAllowedError", "Operation not permitted on a directory");
    case "EEXIST": return domError("InvalidStateError", "File already exists");
    case "ENOSPC": return domError("QuotaExceededError", "File system quota exceeded");
    case "ENOENT": return domError("NotFoundError", "Not found");
    default: return error instanceof Error ? error : domError("UnknownError", "File system operation failed");
  }
}

/** Runs `fn` as an async operation: its result resolves, what it throws rejects (filesystem errors as workerd's DOMExceptions). */
async function run(fn) {
  try {
    return fn();
  } catch (error) {
    throw fromFsError(error);
  }
}

/** A file name as the File System standard takes it: not empty, not "." or "..", no "/" or "\". */
function checkName(name) {
  name = String(name).toWellFormed();
  if (name === "" || name === "." || name === ".." || /[/\\]/.test(name)) throw new TypeError("Invalid file name");
  return name;
}

/** A change inside a read-only directory (/, /bundle, /dev) is workerd's InvalidStateError. */
function readOnly(dir) {
  if (dir.readOnly) throw domError("InvalidStateError", "Read-only file system");
}

/** Each entry's id (getUniqueId()): a random UUID, the same for every handle of that path. */
const uniqueIds = new Map();

const join = (dir, name) => (dir === "/" ? `/${name}` : `${dir}/${name}`);

/** The node at `path` (a directory handle's own path must be a directory). */
function directoryAt(path) {
  let found;
  try {
    found = vfs.lookup(path, "opendir");
  } catch (error) {
    if (error?.code === "ENOENT") throw domError("NotFoundError", "Directory not found");
    throw error;
  }
  if (found.node === undefined) throw domError("NotFoundError", "Directory not found");
  if (found.node.kind !== "dir") throw domError("TypeMismatchError", "Not a directory");
  return found.node;
}

/** The handle for what is at `path` named `name`: a directory's or a file's. */
function handleFor(node, path, name) {
  return node.kind === "dir" ? new FileSystemDirectoryHandle(kToken, path, name) : new FileSystemFileHandle(kToken, path, name);
}

class FileSystemHandle {
  #path;
  #name;
  constructor(token, path, name) {
    if (token !== kToken) throw new TypeError("Illegal constructor");
    this.#path = path;
    this.#name = name;
  }
  static {
    internals.webFsPath = (handle) => handle.#path;
  }
  get kind() {
    return this instanceof FileSystemDirectoryHandle ? "directory" : "file";
  }
  get name() {
    return this.#name;
  }
  /** Whether `other` is a handle of the same kind for the same entry. */
  isSameEntry(other) {
    return run(() => other instanceof FileSystemHandle && other.kind === this.kind && internals.webFsPath(other) === this.#path);
  }
  /** An id for the entry (a UUID), the same for every handle of it. */
  getUniqueId() {
    return run(() => {
      const key = `${this.kind}:${this.#path}`;
      if (!uniqueIds.has(key)) uniqueIds.set(key, crypto.randomUUID());
      return uniqueIds.get(key);
    });
  }
  /** Removes the entry (a directory with entries only with `{ recursive: true }`). */
  remove(options = undefined) {
    return run(() => removePath(this.#path, Boolean(options?.recursive)));
  }
  get [Symbol.toStringTag]() {
    return this.constructor.name;
  }
}

/** Removes what is at `path`: a file, or a directory (empty unless `recursive`). */
function removePath(path, recursive) {
  const found = vfs.lookup(path, "rm", { follow: false });
  if (found.node === undefined) throw domError("NotFoundError", "Not found");
  if (found.parent === null) throw domError("NoModificationAllowedError", "Cannot remove the root directory");
  readOnly(found.parent);
  if (found.node.kind === "dir" && found.node.entries.size > 0 && !recursive) throw domError("InvalidModificationError", "Directory not empty");
  found.parent.entries.delete(found.name);
}

/**
 * Entry `name` (checked) of the directory `handle` names, looked up for `op`: its name, path and
 * node, the node made by `make()` when it is missing and `options.create` is set (else
 * NotFoundError `notFound`).
 */
function childEntry(handle, name, op, options, notFound, make) {
  name = checkName(name);
  const path = internals.webFsPath(handle);
  const dir = directoryAt(path);
  const child = join(path, name);
  let node = vfs.lookup(child, op).node;
  if (node === undefined) {
    if (!options?.create) throw domError("NotFoundError", notFound);
    readOnly(dir);
    node = make();
    dir.entries.set(name, node);
  }
  return { name, child, node };
}

class FileSystemDirectoryHandle extends FileSystemHandle {
  /** The file `name` in this directory (made empty with `{ create: true }` when missing). */
  getFileHandle(name, options = undefined) {
    return run(() => {
      const entry = childEntry(this, name, "open", options, "Not found", () => new vfs.Node("file", vfs.S_IFREG | 0o666));
      if (entry.node.kind === "dir") throw domError("TypeMismatchError", "File name is a directory");
      if (entry.node.kind === "link") throw domError("TypeMismatchError", "Not a file");
      return new FileSystemFileHandle(kToken, entry.child, entry.name);
    });
  }
  /** The directory `name` in this one (made with `{ create: true }` when missing). */
  getDirectoryHandle(name, options = undefined) {
    return run(() => {
      const entry = childEntry(this, name, "opendir", options, "Directory not opened or created", () => new vfs.Node("dir", vfs.S_IFDIR | 0o777));
      if (entry.node.kind !== "dir") throw domError("TypeMismatchError", "File name is a file");
      return new FileSystemDirectoryHandle(kToken, entry.child, entry.name);
    });
  }
  /** Removes `name` from this directory (a directory with entries only with `{ recursive: true }`). */
  removeEntry(name, options = undefined) {
    return run(() => {
      name = checkName(name);
      const path = internals.webFsPath(this);
      directoryAt(path);
      const child = join(path, name);
      if (vfs.lookup(child, "rm", { follow: false }).node === undefined) throw domError("NotFoundError", "File not found");
      removePath(child, Boolean(options?.recursive));
    });
  }
  /** Declared but not implemented in workerd: rejects with its error. */
  resolve(descendant) {
    return Promise.reject(new Error("Not implemented"));
  }
  /** [name, handle] for each entry, in the filesystem's order (/ lists bundle, tmp and dev). */
  async *entries() {
    const path = internals.webFsPath(this);
    let dir;
    try {
      dir = directoryAt(path);
    } catch (error) {
      throw fromFsError(error);
    }
    for (const name of vfs.names(dir)) {
      const child = join(path, name);
      const node = vfs.lookup(child, "readdir").node;
      if (node !== undefined) yield [name, handleFor(node, child, name)];
    }
  }
  async *keys() {
    for await (const [name] of this.entries()) yield name;
  }
  async *values() {
    for await (const [, handle] of this.entries()) yield handle;
  }
  async forEach(callback, thisArg = undefined) {
    for await (const [name, handle] of this.entries()) callback.call(thisArg, handle, name, this);
  }
  [Symbol.asyncIterator]() {
    return this.entries();
  }
}

class FileSystemFileHandle extends FileSystemHandle {
  /** The file's contents now, as a File named after it. */
  getFile() {
    return run(() => {
      const node = fileAt(internals.webFsPath(this));
      const bytes = node.kind === "dev" ? vfs.readDevice(node, 0) : node.data;
      return new File([new Uint8Array(bytes)], this.name, { lastModified: Number(node.mtimeNs / 1_000_000n) });
    });
  }
  /** A writable stream whose writes reach the file when it is closed (`keepExistingData` starts from its contents). */
  createWritable(options = undefined) {
    return run(() => {
      const path = internals.webFsPath(this);
      const node = fileAt(path);
      if (node.readOnly || (node.kind === "file" && node.mode !== undefined && (node.mode & 0o222) === 0)) throw domError("NoModificationAllowedError", "Cannot write to a read-only file");
      return new FileSystemWritableFileStream(kToken, path, options?.keepExistingData ? Buffer.from(node.data ?? []) : Buffer.alloc(0));
    });
  }
}

/** The file at `path` (not a directory). */
function fileAt(path) {
  const found = vfs.lookup(path, "open");
  if (found.node === undefined) throw domError("NotFoundError", "File not found");
  if (found.node.kind === "dir") throw domError("TypeMismatchError", "Not a file");
  return found.node;
}

/** Bytes of a write's `data`: a string (UTF-8), a buffer source or a Blob. */
async function bytesOf(data) {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (data instanceof Blob) return Buffer.from(await data.arrayBuffer());
  if (data instanceof ArrayBuffer) return Buffer.from(new Uint8Array(data));
  if (ArrayBuffer.isView(data)) return Buffer.from(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  throw new TypeError("FileSystemWritableFileStream: the data must be a string, a BufferSource or a Blob.");
}

class FileSystemWritableFileStream extends WritableStream {
  constructor(token, path, initial) {
    if (token !== kToken) throw new TypeError("Illegal constructor");
    let data = initial;
    let position = 0;
    const place = (bytes, at) => {
      if (at > data.length) data = Buffer.concat([data, Buffer.alloc(at - data.length)]);
      const end = at + bytes.length;
      if (end > data.length) data = Buffer.concat([data, Buffer.alloc(end - data.length)]);
      bytes.copy(data, at);
      return end;
    };
    super({
      async write(chunk) {
        if (chunk !== null && typeof chunk === "object" && !ArrayBuffer.isView(chunk) && !(chunk instanceof ArrayBuffer) && !(chunk instanceof Blob) && "type" in chunk) {
          if (chunk.type === "seek") position = Number(chunk.position);
          else if (chunk.type === "truncate") {
            const size = Number(chunk.size);
            data = size <= data.length ? data.subarray(0, size) : Buffer.concat([data, Buffer.alloc(size - data.length)]);
            if (position > size) position = size;
          } else if (chunk.type === "write") {
            position = place(await bytesOf(chunk.data), chunk.position === undefined || chunk.position === null ? position : Number(chunk.position));
          } else throw new TypeError(`FileSystemWritableFileStream: unknown write type "${chunk.type}".`);
          return;
        }
        position = place(await bytesOf(chunk), position);
      },
      close() {
        // The file takes the new contents only now, as the standard says.
        const node = fileAt(path);
        if (node.kind === "dev") return vfs.writeDevice(node, "write", path);
        node.data = Buffer.from(data);
      },
    });
  }
  /** Writes `data` (or a { type: "write" | "seek" | "truncate" } command) through a writer of its own. */
  async write(data) {
    const writer = this.getWriter();
    try {
      await writer.write(data);
    } finally {
      writer.releaseLock();
    }
  }
  seek(position) {
    return this.write({ type: "seek", position });
  }
  truncate(size) {
    return this.write({ type: "truncate", size });
  }
  get [Symbol.toStringTag]() {
    return "FileSystemWritableFileStream";
  }
}

class StorageManager {
  constructor(token) {
    if (token !== kToken) throw new TypeError("Illegal constructor");
  }
  /** The root of the worker's filesystem (/), named "". */
  getDirectory() {
    return Promise.resolve(new FileSystemDirectoryHandle(kToken, "/", ""));
  }
  get [Symbol.toStringTag]() {
    return "StorageManager";
  }
}

const storage = new StorageManager(kToken);

module.exports = { StorageManager, FileSystemHandle, FileSystemDirectoryHandle, FileSystemFileHandle, FileSystemWritableFileStream, storage };
