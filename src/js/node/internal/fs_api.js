// node:fs's asynchronous faces over its synchronous core (node:fs): the callback API (results on
// a later microtask, errors as the first argument), fs.promises with FileHandle, and the
// ReadStream/WriteStream classes. Kept apart from node:fs so that each file stays readable.
const { Buffer } = require("node:buffer");
const { notImplementedError, invalidArgType } = require("node:internal/errors");

module.exports = function makeFs({ constants, sync, Stats, Dirent, Dir, descriptors, entry, toPath, existing, readAt, writeAt, openNode }) {
  const later = (fn) => queueMicrotask(fn);

  /** `fs.<name>(...args, callback)` over `fs.<name>Sync(...args)`. */
  function callbackOf(name, results = (value) => [value]) {
    const run = sync[`${name}Sync`];
    return {
      [name](...args) {
        const callback = args.pop();
        if (typeof callback !== "function") throw invalidArgType("cb", "function", callback);
        let outcome;
        try {
          outcome = [null, ...results(run(...args), args)];
        } catch (error) {
          outcome = [error];
        }
        later(() => callback(...outcome));
      },
    }[name];
  }

  /** `fs.promises.<name>(...args)` over `fs.<name>Sync(...args)`. */
  function promiseOf(name) {
    const run = sync[`${name}Sync`];
    return { async [name](...args) { return run(...args); } }[name];
  }

  const fs = { constants, F_OK: constants.F_OK, R_OK: constants.R_OK, W_OK: constants.W_OK, X_OK: constants.X_OK, Stats, Dirent, Dir };
  Object.assign(fs, sync);
  for (const name of Object.keys(sync)) {
    if (!name.endsWith("Sync") || name === "existsSync") continue;
    const base = name.slice(0, -"Sync".length);
    fs[base] = callbackOf(base);
  }
  // Callbacks with more than one result, and exists()'s lone boolean.
  fs.read = callbackOf("read", (count, args) => [count, args[1]]);
  fs.write = callbackOf("write", (count, args) => [count, args[1]]);
  fs.readv = callbackOf("readv", (count, args) => [count, args[1]]);
  fs.writev = callbackOf("writev", (count, args) => [count, args[1]]);
  fs.exists = (path, callback) => {
    const found = sync.existsSync(path);
    later(() => callback(found));
  };
  fs.glob = (...args) => {
    const callback = args.pop();
    later(() => callback(notImplementedError("fs.glob")));
  };
  for (const name of ["watch", "watchFile", "unwatchFile"]) {
    fs[name] = () => {
      throw notImplementedError(`fs.${name}`);
    };
  }

  // ---- fs.promises ----

  class FileHandle {
    #fd;
    constructor(fd) {
      this.#fd = fd;
    }
    get fd() {
      return this.#fd;
    }
    async read(buffer = Buffer.alloc(16384), offset = 0, length = buffer.byteLength - offset, position = null) {
      if (buffer !== null && typeof buffer === "object" && !ArrayBuffer.isView(buffer)) ({ buffer = Buffer.alloc(16384), offset = 0, length = buffer.byteLength - offset, position = null } = buffer);
      const bytesRead = sync.readSync(this.#fd, buffer, offset, length, position);
      return { bytesRead, buffer };
    }
    async write(data, ...rest) {
      const bytesWritten = sync.writeSync(this.#fd, data, ...rest);
      return { bytesWritten, buffer: data };
    }
    async readFile(options) {
      return sync.readFileSync(this.#fd, options);
    }
    async writeFile(data, options) {
      return sync.writeFileSync(this.#fd, data, options);
    }
    async appendFile(data, options) {
      return sync.writeFileSync(this.#fd, data, options);
    }
    async stat() {
      return sync.fstatSync(this.#fd);
    }
    async truncate(length) {
      return sync.ftruncateSync(this.#fd, length);
    }
    async sync() {}
    async datasync() {}
    async chmod(mode) {
      return sync.fchmodSync(this.#fd, mode);
    }
    async utimes(atime, mtime) {
      return sync.futimesSync(this.#fd, atime, mtime);
    }
    async close() {
      if (descriptors.has(this.#fd)) sync.closeSync(this.#fd);
    }
    async [Symbol.asyncDispose]() {
      return this.close();
    }
    createReadStream(options) {
      return fs.createReadStream(null, { ...options, fd: this.#fd });
    }
    createWriteStream(options) {
      return fs.createWriteStream(null, { ...options, fd: this.#fd });
    }
  }

  const promises = { constants, FileHandle };
  for (const name of Object.keys(sync)) {
    if (!name.endsWith("Sync") || ["existsSync", "closeSync", "readSync", "writeSync", "readvSync", "writevSync", "openSync", "opendirSync"].includes(name) || name.startsWith("f")) continue;
    promises[name.slice(0, -"Sync".length)] = promiseOf(name.slice(0, -"Sync".length));
  }
  promises.open = async (path, flags, mode) => new FileHandle(sync.openSync(path, flags, mode));
  promises.opendir = async (path) => sync.opendirSync(path);
  promises.glob = async () => {
    throw notImplementedError("fs.promises.glob");
  };
  promises.watch = () => {
    throw notImplementedError("fs.promises.watch");
  };
  fs.promises = promises;

  // ---- Streams ----

  const { Readable, Writable } = require("node:stream");

  class ReadStream extends Readable {
    #fd;
    #position;
    #end;
    constructor(path, options = {}) {
      options = typeof options === "string" ? { encoding: options } : options;
      super({ highWaterMark: options.highWaterMark ?? 64 * 1024, encoding: options.encoding });
      this.path = path === null ? undefined : toPath(path);
      this.#fd = options.fd ?? sync.openSync(this.path, options.flags ?? "r");
      this.fd = this.#fd;
      this.#position = options.start ?? 0;
      this.#end = options.end ?? Infinity;
      this.bytesRead = 0;
      this.autoClose = options.autoClose !== false;
      later(() => this.emit("open", this.#fd));
    }
    _read() {
      try {
        // Chunks of highWaterMark bytes, as Node's ReadStream reads them.
        const want = Math.min(this.readableHighWaterMark, this.#end - this.#position + 1);
        const chunk = Buffer.alloc(Math.max(0, want));
        const count = want > 0 ? sync.readSync(this.#fd, chunk, 0, want, this.#position) : 0;
        this.#position += count;
        this.bytesRead += count;
        this.push(count > 0 ? chunk.subarray(0, count) : null);
      } catch (error) {
        this.destroy(error);
      }
    }
    _destroy(error, callback) {
      if (this.autoClose && descriptors.has(this.#fd)) sync.closeSync(this.#fd);
      callback(error);
    }
  }

  class WriteStream extends Writable {
    #fd;
    constructor(path, options = {}) {
      options = typeof options === "string" ? { encoding: options } : options;
      super({ highWaterMark: options.highWaterMark, decodeStrings: true, defaultEncoding: options.encoding ?? "utf8" });
      this.path = path === null ? undefined : toPath(path);
      this.#fd = options.fd ?? sync.openSync(this.path, options.flags ?? "w");
      this.fd = this.#fd;
      this.bytesWritten = 0;
      this.autoClose = options.autoClose !== false;
      later(() => this.emit("open", this.#fd));
    }
    _write(chunk, encoding, callback) {
      try {
        this.bytesWritten += sync.writeSync(this.#fd, chunk);
        callback();
      } catch (error) {
        callback(error);
      }
    }
    _destroy(error, callback) {
      if (this.autoClose && descriptors.has(this.#fd)) sync.closeSync(this.#fd);
      callback(error);
    }
    close(callback) {
      this.end(callback);
    }
  }

  fs.ReadStream = ReadStream;
  fs.WriteStream = WriteStream;
  fs.FileReadStream = ReadStream;
  fs.FileWriteStream = WriteStream;
  fs.createReadStream = (path, options) => new ReadStream(path, options);
  fs.createWriteStream = (path, options) => new WriteStream(path, options);
  fs.openAsBlob = async (path, options = {}) => new Blob([sync.readFileSync(path)], { type: options.type ?? "" });
  return fs;
};
