// node:fs's asynchronous faces over its synchronous core (node:fs): the callback API (results on
// a later microtask, errors as the first argument), fs.promises with FileHandle, and the
// ReadStream/WriteStream classes. Kept apart from node:fs so that each file stays readable.
const { Buffer } = require("node:buffer");
const { notImplementedError, invalidArgType } = require("node:internal/errors");

module.exports = function makeFs({ constants, sync, callbackChecks = {}, Stats, Dirent, Dir, descriptors, entry, toPath, existing, readAt, writeAt, openNode }) {
  const later = (fn) => queueMicrotask(fn);

  /** `fs.<name>(...args, callback)` over `fs.<name>Sync(...args)`. */
  function callbackOf(name, results = (value) => [value]) {
    const run = sync[`${name}Sync`];
    return {
      [name](...args) {
        const callback = args.pop();
        if (typeof callback !== "function") {
          // The arguments are checked first (the missing callback may have been taken for one).
          callbackChecks[name]?.(...args, callback);
          throw invalidArgType("cb", "function", callback);
        }
        callbackChecks[name]?.(...args);
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
  // opendir checks its path and options before its callback (as Node does).
  fs.opendir = function opendir(path, options, callback) {
    if (typeof options === "function") {
      callback = options;
      options = undefined;
    }
    toPath(path);
    const encoding = options?.encoding;
    if (encoding !== undefined && encoding !== null && !(encoding === "buffer" || (typeof encoding === "string" && Buffer.isEncoding(encoding)))) {
      throw Object.assign(new TypeError(`The argument 'options.encoding' is invalid encoding. Received ${encoding}`), { code: "ERR_INVALID_ARG_VALUE" });
    }
    if (typeof callback !== "function") throw invalidArgType("cb", "function", callback);
    let outcome;
    try {
      outcome = [null, sync.opendirSync(path, options)];
    } catch (error) {
      outcome = [error];
    }
    later(() => callback(...outcome));
  };
  for (const name of ["watch", "watchFile", "unwatchFile"]) {
    fs[name] = () => {
      throw notImplementedError(`fs.${name}`);
    };
  }

  // ---- fs.promises ----

  const EventEmitter = require("node:events");
  class FileHandle extends EventEmitter {
    #fd;
    constructor(fd) {
      super();
      this.#fd = fd;
    }
    /** The open descriptor, or EBADF once closed. */
    #live() {
      if (this.#fd === undefined) throw Object.assign(new Error("EBADF: bad file descriptor"), { code: "EBADF", errno: -9 });
      return this.#fd;
    }
    async chown(uid, gid) {
      return sync.fchownSync(this.#live(), uid, gid);
    }
    /** The descriptor; undefined once closed (as Node's, whose fd is then -1 internally). */
    get fd() {
      return this.#fd;
    }
    async readv(buffers, position) {
      const bytesRead = sync.readvSync(this.#live(), buffers, position);
      return { bytesRead, buffers };
    }
    async writev(buffers, position) {
      const bytesWritten = sync.writevSync(this.#live(), buffers, position);
      return { bytesWritten, buffers };
    }
    async read(buffer = Buffer.alloc(16384), offset = 0, length = buffer.byteLength - offset, position = null) {
      if (buffer !== null && typeof buffer === "object" && !ArrayBuffer.isView(buffer)) ({ buffer = Buffer.alloc(16384), offset = 0, length = buffer.byteLength - offset, position = null } = buffer);
      const bytesRead = sync.readSync(this.#live(), buffer, offset, length, position);
      return { bytesRead, buffer };
    }
    async write(data, ...rest) {
      const bytesWritten = sync.writeSync(this.#live(), data, ...rest);
      return { bytesWritten, buffer: data };
    }
    async readFile(options) {
      return sync.readFileSync(this.#live(), options);
    }
    async writeFile(data, options) {
      return sync.writeFileSync(this.#live(), data, options);
    }
    async appendFile(data, options) {
      return sync.writeFileSync(this.#live(), data, options);
    }
    async stat() {
      return sync.fstatSync(this.#live());
    }
    async truncate(length) {
      return sync.ftruncateSync(this.#live(), length);
    }
    async sync() {}
    async datasync() {}
    async chmod(mode) {
      return sync.fchmodSync(this.#live(), mode);
    }
    async utimes(atime, mtime) {
      return sync.futimesSync(this.#live(), atime, mtime);
    }
    async close() {
      if (this.#fd === undefined) return;
      if (descriptors.has(this.#fd)) sync.closeSync(this.#fd);
      this.#fd = undefined;
      await undefined; // 'close' comes after the call returns, as in Node
      this.emit("close");
    }
    async [Symbol.asyncDispose]() {
      return this.close();
    }
    createReadStream(options) {
      return fs.createReadStream(undefined, { ...options, fd: this });
    }
    createWriteStream(options) {
      return fs.createWriteStream(undefined, { ...options, fd: this });
    }
    /** A byte ReadableStream of the file from its current position; closes the handle at its end unless autoClose is false. */
    readableWebStream(options = {}) {
      if (this.#fd === undefined) throw Object.assign(new Error("EBADF: bad file descriptor, read"), { code: "EBADF", errno: -9, syscall: "read" });
      const autoClose = options?.autoClose !== false;
      return new ReadableStream({
        pull: async (controller) => {
          if (this.#fd === undefined) {
            controller.close();
            return;
          }
          const chunk = Buffer.alloc(16384);
          let bytesRead;
          try {
            ({ bytesRead } = await this.read(chunk, 0, chunk.length, null));
          } catch (error) {
            controller.error(error);
            return;
          }
          if (bytesRead === 0) {
            controller.close();
            if (autoClose) await this.close();
            return;
          }
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, bytesRead));
        },
        cancel: async () => {
          if (autoClose) await this.close();
        },
      }, { highWaterMark: 0 }); // read only when asked: a handle closed before then gives an ended stream
    }
  }

  const promises = { constants, FileHandle };
  for (const name of Object.keys(sync)) {
    if (!name.endsWith("Sync") || ["existsSync", "closeSync", "readSync", "writeSync", "readvSync", "writevSync", "openSync", "opendirSync"].includes(name) || name.startsWith("f")) continue;
    promises[name.slice(0, -"Sync".length)] = promiseOf(name.slice(0, -"Sync".length));
  }
  promises.open = async (path, flags, mode) => new FileHandle(sync.openSync(path, flags, mode));
  promises.opendir = async (path, options) => sync.opendirSync(path, options);
  promises.glob = async function* glob(pattern, options) {
    yield* sync.globSync(pattern, options);
  };
  promises.watch = () => {
    throw notImplementedError("fs.promises.watch");
  };
  fs.promises = promises;

  // ---- Streams ----

  const { ReadStream, WriteStream } = require("node:internal/fs_streams")({ fs, FileHandle, toPath });

  fs.ReadStream = ReadStream;
  fs.WriteStream = WriteStream;
  fs.FileReadStream = ReadStream;
  fs.FileWriteStream = WriteStream;
  fs.createReadStream = function createReadStream(path, options) {
    return new ReadStream(path, options);
  };
  fs.createWriteStream = function createWriteStream(path, options) {
    return new WriteStream(path, options);
  };
  // workerd's openAsBlob returns the Blob itself (Node's a promise of it).
  fs.openAsBlob = function openAsBlob(path, options = {}) {
    toPath(path);
    if (options === null || typeof options !== "object") throw invalidArgType("options", "object", options);
    if (options.type !== undefined && typeof options.type !== "string") throw invalidArgType("options.type", "string", options.type);
    return new Blob([sync.readFileSync(path)], { type: options.type ?? "" });
  };
  return fs;
};
