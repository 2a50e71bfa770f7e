// node:fs's ReadStream and WriteStream, as Node's (and workerd's port of them): callable without
// `new`; options checked (a string is the encoding; start/end integers, start <= end; flush a
// boolean); the file opened on construction through `options.fs` (its open/read/write/writev/
// fsync/close, each defaulting to node:fs's callback API) or a prototype `open()` a caller put
// there; reads of highWaterMark bytes at `pos` (or the descriptor's position), writes and
// batched writev; `autoClose` closes the descriptor when the stream ends or is destroyed; an
// `fd` may be a number or a FileHandle (its methods do the I/O; its 'close' closes the stream).
const { Buffer } = require("node:buffer");
const { Readable, Writable, finished } = require("node:stream");
const { invalidArgType } = require("node:internal/errors");

const kFs = Symbol("kFs");
const kHandle = Symbol("kHandle");
const kIsPerformingIO = Symbol("kIsPerformingIO");
const kIoDone = Symbol("kIoDone");

const codeError = (Type, code, message) => Object.assign(new Type(message), { code });

/** The options as an own copy (inherited properties included, as Node's copyObject). */
function optionsOf(options) {
  if (options === undefined || options === null) return {};
  if (typeof options === "string") return { encoding: options };
  if (typeof options !== "object") throw invalidArgType("options", "string or an instance of Object", options);
  const copy = {};
  for (const key in options) copy[key] = options[key];
  return copy;
}

/** An encoding option, checked as workerd checks it (ERR_INVALID_ARG_VALUE for an unknown one). */
function checkEncoding(encoding) {
  if (encoding === undefined || encoding === null || encoding === "buffer" || (typeof encoding === "string" && Buffer.isEncoding(encoding))) return;
  throw codeError(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.encoding' is invalid. Received ${typeof encoding === "string" ? `'${encoding}'` : String(encoding)}`);
}

function checkInteger(value, name, min = 0) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
  if (!Number.isInteger(value)) throw codeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be an integer. Received ${value}`);
  if (value < min || value > Number.MAX_SAFE_INTEGER) {
    throw codeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be >= ${min} && <= ${Number.MAX_SAFE_INTEGER}. Received ${value}`);
  }
}

function checkSignal(signal) {
  if (signal !== undefined && (signal === null || typeof signal !== "object" || !("aborted" in signal))) throw invalidArgType("options.signal", "AbortSignal", signal);
}

module.exports = function makeStreams({ fs, FileHandle, toPath }) {
  const defaults = () => ({ open: fs.open, read: fs.read, write: fs.write, writev: fs.writev, fsync: fs.fsync, close: fs.close });

  /** FileHandle methods behind the fs-shaped calls a stream makes. */
  function handleOperations(handle) {
    const settle = (promise, callback, pick) => promise.then((result) => callback(null, ...pick(result)), (error) => callback(error));
    return {
      open() {
        throw codeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The open() method is not implemented");
      },
      read: (fd, buffer, offset, length, position, callback) => settle(handle.read(buffer, offset, length, position), callback, (r) => [r.bytesRead, r.buffer]),
      write: (fd, buffer, offset, length, position, callback) => settle(handle.write(buffer, offset, length, position), callback, (r) => [r.bytesWritten, r.buffer]),
      writev: (fd, buffers, position, callback) => settle(handle.writev(buffers, position), callback, (r) => [r.bytesWritten, r.buffers]),
      fsync: (fd, callback) => settle(handle.sync(), callback, () => []),
      close: (fd, callback) => settle(handle.close(), callback, () => []),
    };
  }

  /** Sets the stream's fd (null when it opens `path` itself) and its I/O functions. */
  function importFd(stream, options) {
    const { fd } = options;
    if (fd instanceof FileHandle) {
      if (options.fs) throw codeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The FileHandle with fs method is not implemented");
      stream[kHandle] = fd;
      stream[kFs] = handleOperations(fd);
      fd.on("close", () => stream.close());
      return fd.fd;
    }
    stream[kFs] = { ...defaults(), ...(options.fs ?? {}) };
    for (const name of ["open", "close"]) {
      if (typeof stream[kFs][name] !== "function") throw invalidArgType(`options.fs.${name}`, "function", stream[kFs][name]);
    }
    if (fd === undefined || fd === null) return null;
    if (typeof fd !== "number") throw invalidArgType("options.fd", "number", fd);
    checkInteger(fd, "options.fd", 0);
    return fd;
  }

  function construct(callback) {
    if (typeof this.open === "function") {
      // A caller's open() (Node's backwards compatibility): its 'open' or 'error' ends construction.
      const emit = this.emit;
      this.emit = function (name, ...args) {
        if (name === "open") {
          this.emit = emit;
          callback();
          return Reflect.apply(emit, this, [name, ...args]);
        }
        if (name === "error") {
          this.emit = emit;
          callback(args[0]);
          return false;
        }
        return Reflect.apply(emit, this, [name, ...args]);
      };
      this.open();
      return;
    }
    if (typeof this.fd === "number") {
      callback();
      return;
    }
    this[kFs].open(this.path, this.flags, this.mode, (error, fd) => {
      if (error) {
        callback(error);
        return;
      }
      this.fd = fd;
      callback();
      this.emit("open", fd);
      this.emit("ready");
    });
  }

  function closeFd(stream, error, callback) {
    if (stream.fd === null || stream.fd === undefined) {
      callback(error);
      return;
    }
    const fd = stream.fd;
    stream.fd = null;
    const close = (flushError) => stream[kFs].close(fd, (closeError) => callback(closeError || error || flushError));
    if (stream.flush) stream[kFs].fsync(fd, close);
    else close();
  }

  function destroy(error, callback) {
    if (this[kIsPerformingIO]) this.once(kIoDone, (ioError) => closeFd(this, error || ioError, callback));
    else closeFd(this, error, callback);
  }

  function path(stream, value) {
    if (stream.fd !== null) return undefined;
    toPath(value); // checks the type
    return value;
  }

  // ---- ReadStream ----

  function ReadStream(pathValue, options) {
    if (!(this instanceof ReadStream)) return new ReadStream(pathValue, options);
    options = optionsOf(options);
    checkEncoding(options.encoding);
    if (options.highWaterMark === undefined) options.highWaterMark = 64 * 1024;
    options.autoDestroy = options.autoClose === undefined ? true : options.autoClose;
    if (options.emitClose === undefined) options.emitClose = true;
    this.fd = importFd(this, options);
    if (typeof this[kFs].read !== "function") throw invalidArgType("options.fs.read", "function", this[kFs].read);
    this.path = path(this, pathValue);
    this.flags = options.flags === undefined ? "r" : options.flags;
    this.mode = options.mode === undefined ? 0o666 : options.mode;
    this.start = options.start;
    this.end = options.end === undefined ? Infinity : options.end;
    this.pos = undefined;
    this.bytesRead = 0;
    this[kIsPerformingIO] = false;
    if (this.start !== undefined) {
      checkInteger(this.start, "start");
      this.pos = this.start;
    }
    if (this.end !== Infinity) {
      checkInteger(this.end, "end");
      if (this.start !== undefined && this.start > this.end) {
        throw codeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "start" is out of range. It must be <= "end" (here: ${this.end}). Received ${this.start}`);
      }
    }
    checkSignal(options.signal);
    Reflect.apply(Readable, this, [options]);
  }
  Object.setPrototypeOf(ReadStream.prototype, Readable.prototype);
  Object.setPrototypeOf(ReadStream, Readable);
  Object.defineProperty(ReadStream.prototype, "autoClose", {
    get() {
      if (!this?._readableState) throw codeError(TypeError, "ERR_INVALID_THIS", 'Value of "this" must be of type ReadStream');
      return this._readableState.autoDestroy;
    },
    set(value) { this._readableState.autoDestroy = value; },
  });
  Object.defineProperty(ReadStream.prototype, "pending", { get() { return this.fd === null; }, configurable: true });
  ReadStream.prototype._construct = construct;
  ReadStream.prototype._read = function _read(n) {
    n = this.pos !== undefined ? Math.min(this.end - this.pos + 1, n) : Math.min(this.end - this.bytesRead + 1, n);
    if (n <= 0) {
      this.push(null);
      return;
    }
    const buffer = Buffer.allocUnsafeSlow(n);
    this[kIsPerformingIO] = true;
    this[kFs].read(this.fd, buffer, 0, n, this.pos === undefined ? null : this.pos, (error, bytesRead) => {
      this[kIsPerformingIO] = false;
      if (this.destroyed) {
        this.emit(kIoDone, error);
        return;
      }
      if (error) {
        if (this._readableState.autoDestroy) this.destroy(error);
        else this.emit("error", error);
      } else if (bytesRead > 0) {
        if (this.pos !== undefined) this.pos += bytesRead;
        this.bytesRead += bytesRead;
        this.push(bytesRead === buffer.length ? buffer : Buffer.from(buffer.subarray(0, bytesRead)));
      } else {
        this.push(null);
      }
    });
  };
  ReadStream.prototype._destroy = destroy;
  ReadStream.prototype.close = function close(callback) {
    if (typeof callback === "function") finished(this, callback);
    this.destroy();
  };

  // ---- WriteStream ----

  function WriteStream(pathValue, options) {
    if (!(this instanceof WriteStream)) return new WriteStream(pathValue, options);
    options = optionsOf(options);
    checkEncoding(options.encoding);
    options.decodeStrings = true;
    options.autoDestroy = options.autoClose === undefined ? true : options.autoClose;
    if (options.emitClose === undefined) options.emitClose = true;
    this.fd = importFd(this, options);
    for (const name of ["write", "writev"]) {
      if (typeof this[kFs][name] !== "function") throw invalidArgType(`options.fs.${name}`, "function", this[kFs][name]);
    }
    this.path = path(this, pathValue);
    this.flags = options.flags === undefined ? "w" : options.flags;
    this.mode = options.mode === undefined ? 0o666 : options.mode;
    if (options.flush === undefined || options.flush === null) this.flush = false;
    else if (typeof options.flush !== "boolean") throw invalidArgType("options.flush", "boolean", options.flush);
    else this.flush = options.flush;
    if (this.flush && typeof this[kFs].fsync !== "function") throw invalidArgType("options.fs.fsync", "function", this[kFs].fsync);
    this.start = options.start;
    this.pos = undefined;
    this.bytesWritten = 0;
    this[kIsPerformingIO] = false;
    if (this.start !== undefined) {
      checkInteger(this.start, "start");
      this.pos = this.start;
    }
    checkSignal(options.signal);
    Reflect.apply(Writable, this, [options]);
    if (options.encoding) this.setDefaultEncoding(options.encoding);
  }
  Object.setPrototypeOf(WriteStream.prototype, Writable.prototype);
  Object.setPrototypeOf(WriteStream, Writable);
  Object.defineProperty(WriteStream.prototype, "autoClose", {
    get() {
      if (!this?._writableState) throw codeError(TypeError, "ERR_INVALID_THIS", 'Value of "this" must be of type WriteStream');
      return this._writableState.autoDestroy;
    },
    set(value) { this._writableState.autoDestroy = value; },
  });
  Object.defineProperty(WriteStream.prototype, "pending", { get() { return this.fd === null; }, configurable: true });
  WriteStream.prototype._construct = construct;

  function written(stream, callback) {
    return (error, bytes) => {
      stream[kIsPerformingIO] = false;
      if (stream.destroyed) {
        callback(error);
        stream.emit(kIoDone, error);
        return;
      }
      if (error) {
        callback(error);
        return;
      }
      stream.bytesWritten += bytes;
      callback();
    };
  }
  WriteStream.prototype._write = function _write(data, encoding, callback) {
    this[kIsPerformingIO] = true;
    this[kFs].write(this.fd, data, 0, data.length, this.pos === undefined ? null : this.pos, written(this, callback));
    if (this.pos !== undefined) this.pos += data.length;
  };
  WriteStream.prototype._writev = function _writev(chunks, callback) {
    const buffers = chunks.map(({ chunk }) => chunk);
    const size = buffers.reduce((sum, buffer) => sum + buffer.length, 0);
    this[kIsPerformingIO] = true;
    this[kFs].writev(this.fd, buffers, this.pos === undefined ? null : this.pos, written(this, callback));
    if (this.pos !== undefined) this.pos += size;
  };
  WriteStream.prototype._destroy = destroy;
  WriteStream.prototype.close = function close(callback) {
    if (callback) {
      if (this.closed) {
        queueMicrotask(callback);
        return;
      }
      this.on("close", callback);
    }
    // Without autoClose, end() does not destroy: close() does it once finished.
    if (!this.autoClose) this.on("finish", this.destroy);
    this.end();
  };
  WriteStream.prototype.destroySoon = WriteStream.prototype.end;

  return { ReadStream, WriteStream };
};
