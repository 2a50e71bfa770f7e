// node:zlib as workerd has it: gzip, deflate, deflate-raw, their inverses, unzip, brotli and
// zstd as Transform streams (node:stream), callback functions and sync functions, with Node's
// options (level, windowBits, memLevel, strategy, dictionary, chunkSize, flush, finishFlush,
// maxOutputLength, info, brotli and zstd params), `flush(kind)`, `params()`, `reset()`,
// `_processChunk()` and crc32. The streams drive a native handle (internal/zlib_handle.js,
// codecs in src/runtime/ops/zlib.rs) the way Node's zlib.js drives its binding: fixed-size
// output chunks, a write state `[availOut, availIn]`, errors through the handle's error handler.
const { Buffer } = require("node:buffer");
const { Transform, finished } = require("node:stream");
const constants = require("node:internal/zlib_constants");
const { describeReceived } = require("node:internal/errors");
const { ZlibHandle, oneShot, bytesOf } = require("node:internal/zlib_handle");

const kMaxLength = require("node:buffer").kMaxLength;
const owner = Symbol("owner");
const kFlushFlag = Symbol("kFlushFlag");
const kError = Symbol("kError");

function nodeError(Base, code, message) {
  const error = new Base(message);
  error.code = code;
  return error;
}

/** Node's ERR_INVALID_ARG_TYPE: a dotted name is a "property", strings are shown in single quotes. */
function invalidArgType(name, expected, value) {
  let received = describeReceived(value);
  if (typeof value === "string") received = `type string ('${value.length > 25 ? `${value.slice(0, 25)}...` : value}')`;
  const kind = name.includes(".") ? "property" : "argument";
  return nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" ${kind} must be ${expected}. Received ${received}`);
}

function outOfRange(name, range, value) {
  const shown = typeof value === "number" ? String(value) : describeReceived(value);
  return nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${range}. Received ${shown}`);
}

/** false when `value` is absent or NaN (use the default); throws when it is not a finite number. */
function isFiniteOption(value, name) {
  if (value === undefined) return false;
  if (Number.isFinite(value)) return true;
  if (Number.isNaN(value)) return false;
  if (typeof value !== "number") throw invalidArgType(name, "of type number", value);
  throw outOfRange(name, "a finite number", value);
}

function rangeOrDefault(value, name, lower, upper, fallback) {
  if (!isFiniteOption(value, name)) return fallback;
  if (value < lower || value > upper) throw outOfRange(name, `>= ${lower} and <= ${upper}`, value);
  return value;
}

const FLUSH_BOUNDS = {
  zlib: [constants.Z_NO_FLUSH, constants.Z_BLOCK],
  brotli: [constants.BROTLI_OPERATION_PROCESS, constants.BROTLI_OPERATION_EMIT_METADATA],
  zstd: [constants.ZSTD_e_continue, constants.ZSTD_e_end],
};

// How much each zlib flush kind flushes, to pick the stronger of two.
const flushRank = [];
[constants.Z_NO_FLUSH, constants.Z_BLOCK, constants.Z_PARTIAL_FLUSH, constants.Z_SYNC_FLUSH, constants.Z_FULL_FLUSH, constants.Z_FINISH].forEach((flag, rank) => {
  flushRank[flag] = rank;
});
function strongerFlush(a, b) {
  return flushRank[a] > flushRank[b] ? a : b;
}

// One tagged empty buffer per flush kind: writing it asks _transform for that flush, in order.
const flushMarkers = [];
for (let kind = 0; kind <= 6; kind++) {
  flushMarkers[kind] = Buffer.alloc(0);
  flushMarkers[kind][kFlushFlag] = kind;
}

/** The handle's error handler: the owning stream fails with a Node-style error. */
function onHandleError(message, errno, code) {
  const self = this[owner];
  const error = new Error(message);
  error.errno = errno;
  error.code = code;
  self.destroy(error);
  self[kError] = error;
}

/** What the handle calls after each asynchronous write: push the output, write on or finish. */
function afterWrite() {
  const handle = this;
  const self = handle[owner];
  if (self.destroyed) {
    handle.buffer = null;
    handle.cb();
    return;
  }
  const [availOutAfter, availInAfter] = self._writeState;
  const consumed = handle.availInBefore - availInAfter;
  self.bytesWritten += consumed;
  const produced = handle.availOutBefore - availOutAfter;
  let backedUp = false;
  if (produced > 0) {
    const out = self._outBuffer.slice(self._outOffset, self._outOffset + produced);
    self._outOffset += produced;
    backedUp = !self.push(out);
  }
  if (self.destroyed) {
    handle.cb();
    return;
  }
  if (availOutAfter === 0 || self._outOffset >= self._chunkSize) {
    handle.availOutBefore = self._chunkSize;
    self._outOffset = 0;
    self._outBuffer = Buffer.allocUnsafe(self._chunkSize);
  }
  if (availOutAfter === 0) {
    // The output filled up: the same input goes on into a fresh output buffer.
    handle.inOff += consumed;
    handle.availInBefore = availInAfter;
    const again = () => handle.write(handle.flushFlag, handle.buffer, handle.inOff, handle.availInBefore, self._outBuffer, self._outOffset, self._chunkSize);
    if (!backedUp) {
      again();
    } else {
      const read = self._read;
      self._read = (n) => {
        self._read = read;
        again();
        self._read(n);
      };
    }
    return;
  }
  if (availInAfter > 0) {
    // Output space left but input not taken: the compressed stream ended early.
    self.push(null);
  }
  handle.buffer = null;
  handle.cb();
}

function closeHandle(engine) {
  engine._handle?.close();
  engine._handle = null;
}

function processChunkSync(self, chunk, flushFlag) {
  let availInBefore = chunk.byteLength;
  let availOutBefore = self._chunkSize - self._outOffset;
  let inOff = 0;
  const buffers = [];
  let nread = 0;
  let inputRead = 0;
  const state = self._writeState;
  const handle = self._handle;
  let buffer = self._outBuffer;
  let offset = self._outOffset;
  const chunkSize = self._chunkSize;
  let error;
  self.on("error", (er) => {
    error = er;
  });
  for (;;) {
    handle.writeSync(flushFlag, chunk, inOff, availInBefore, buffer, offset, availOutBefore);
    if (error) throw error;
    if (self[kError]) throw self[kError];
    const [availOutAfter, availInAfter] = state;
    const consumed = availInBefore - availInAfter;
    inputRead += consumed;
    const produced = availOutBefore - availOutAfter;
    if (produced > 0) {
      buffers.push(buffer.slice(offset, offset + produced));
      offset += produced;
      nread += produced;
      if (nread > self._maxOutputLength) {
        closeHandle(self);
        throw nodeError(RangeError, "ERR_BUFFER_TOO_LARGE", `Cannot create a Buffer larger than ${self._maxOutputLength} bytes`);
      }
    }
    if (availOutAfter === 0 || offset >= chunkSize) {
      availOutBefore = chunkSize;
      offset = 0;
      buffer = Buffer.allocUnsafe(chunkSize);
    }
    if (availOutAfter !== 0) break;
    inOff += consumed;
    availInBefore = availInAfter;
  }
  self.bytesWritten = inputRead;
  closeHandle(self);
  if (nread === 0) return Buffer.alloc(0);
  return buffers.length === 1 ? buffers[0] : Buffer.concat(buffers, nread);
}

function processChunk(self, chunk, flushFlag, cb) {
  const handle = self._handle;
  if (!handle) return process.nextTick(cb);
  handle.buffer = chunk;
  handle.cb = cb;
  handle.availOutBefore = self._chunkSize - self._outOffset;
  handle.availInBefore = chunk.byteLength;
  handle.inOff = 0;
  handle.flushFlag = flushFlag;
  handle.write(flushFlag, chunk, 0, handle.availInBefore, self._outBuffer, self._outOffset, handle.availOutBefore);
}

class ZlibBase extends Transform {
  constructor(opts, mode, handle, defaults) {
    let chunkSize = constants.Z_DEFAULT_CHUNK;
    let maxOutputLength = kMaxLength;
    let { flush, finishFlush } = defaults;
    const [lo, hi] = FLUSH_BOUNDS[defaults.kind];
    if (opts) {
      if (opts.chunkSize != null) chunkSize = opts.chunkSize;
      if (!isFiniteOption(chunkSize, "options.chunkSize")) chunkSize = constants.Z_DEFAULT_CHUNK;
      else if (chunkSize < constants.Z_MIN_CHUNK) throw outOfRange("options.chunkSize", `>= ${constants.Z_MIN_CHUNK}`, chunkSize);
      flush = rangeOrDefault(opts.flush, "options.flush", lo, hi, flush);
      finishFlush = rangeOrDefault(opts.finishFlush, "options.finishFlush", lo, hi, finishFlush);
      maxOutputLength = rangeOrDefault(opts.maxOutputLength, "options.maxOutputLength", 1, kMaxLength, kMaxLength);
      if (opts.encoding || opts.objectMode || opts.writableObjectMode) {
        opts = { ...opts, encoding: undefined, objectMode: false, writableObjectMode: false };
      }
    }
    super({ autoDestroy: true, ...opts });
    handle.setErrorHandler(onHandleError.bind(handle));
    handle[owner] = this;
    this.bytesWritten = 0;
    this._handle = handle;
    this._outBuffer = Buffer.allocUnsafe(chunkSize);
    this._outOffset = 0;
    this._chunkSize = chunkSize;
    this._defaultFlushFlag = flush;
    this._finishFlushFlag = finishFlush;
    this._defaultFullFlushFlag = defaults.fullFlush;
    this._info = Boolean(opts?.info);
    this._maxOutputLength = maxOutputLength;
  }

  get _closed() {
    return this._handle == null;
  }

  get bytesRead() {
    return this.bytesWritten;
  }

  set bytesRead(value) {
    this.bytesWritten = value;
  }

  reset() {
    if (!this._handle) throw new Error("zlib binding closed");
    return this._handle.reset();
  }

  _flush(callback) {
    this._transform(Buffer.alloc(0), "", callback);
  }

  _final(callback) {
    callback();
  }

  flush(kind, callback) {
    if (typeof kind === "function" || (kind === undefined && !callback)) {
      callback = kind;
      kind = this._defaultFullFlushFlag;
    }
    if (this.writableFinished) {
      if (callback) process.nextTick(callback);
    } else if (this.writableEnded) {
      if (callback) this.once("end", callback);
    } else {
      this.write(flushMarkers[kind] ?? flushMarkers[this._defaultFullFlushFlag], "", callback);
    }
  }

  close(callback) {
    if (callback) finished(this, callback);
    this.destroy();
  }

  _destroy(error, callback) {
    closeHandle(this);
    callback(error);
  }

  _transform(chunk, encoding, callback) {
    let flushFlag = this._defaultFlushFlag;
    if (typeof chunk[kFlushFlag] === "number") flushFlag = chunk[kFlushFlag];
    // The last chunk before end() also finishes the stream.
    // (readable-stream has no writableEnding: its state says the same.)
    const ending = this.writableEnding ?? this._writableState?.ending;
    if (ending && this.writableLength === chunk.byteLength) flushFlag = strongerFlush(flushFlag, this._finishFlushFlag);
    processChunk(this, chunk, flushFlag, callback);
  }

  _processChunk(chunk, flushFlag, callback) {
    if (typeof callback === "function") return processChunk(this, chunk, flushFlag, callback);
    return processChunkSync(this, chunk, flushFlag);
  }
}

const zlibDefaults = { kind: "zlib", flush: constants.Z_NO_FLUSH, finishFlush: constants.Z_FINISH, fullFlush: constants.Z_FULL_FLUSH };

class Zlib extends ZlibBase {
  constructor(opts, mode) {
    let windowBits = constants.Z_DEFAULT_WINDOWBITS;
    let level = constants.Z_DEFAULT_COMPRESSION;
    let memLevel = constants.Z_DEFAULT_MEMLEVEL;
    let strategy = constants.Z_DEFAULT_STRATEGY;
    let dictionary;
    if (opts) {
      // 0 asks an inflater to take the window size from the stream's header; a deflater has no such value.
      const inflating = mode === constants.INFLATE || mode === constants.GUNZIP || mode === constants.UNZIP;
      if ((opts.windowBits == null || opts.windowBits === 0) && inflating) windowBits = 0;
      // (A gzip stream's smallest window is 9, as in workerd.)
      else windowBits = rangeOrDefault(opts.windowBits, "options.windowBits", constants.Z_MIN_WINDOWBITS + (mode === constants.GZIP ? 1 : 0), constants.Z_MAX_WINDOWBITS, constants.Z_DEFAULT_WINDOWBITS);
      level = rangeOrDefault(opts.level, "options.level", constants.Z_MIN_LEVEL, constants.Z_MAX_LEVEL, constants.Z_DEFAULT_COMPRESSION);
      memLevel = rangeOrDefault(opts.memLevel, "options.memLevel", constants.Z_MIN_MEMLEVEL, constants.Z_MAX_MEMLEVEL, constants.Z_DEFAULT_MEMLEVEL);
      strategy = rangeOrDefault(opts.strategy, "options.strategy", constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED, constants.Z_DEFAULT_STRATEGY);
      dictionary = opts.dictionary;
      if (dictionary !== undefined && !ArrayBuffer.isView(dictionary)) {
        if (dictionary instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && dictionary instanceof SharedArrayBuffer)) dictionary = Buffer.from(dictionary);
        else throw invalidArgType("options.dictionary", "an instance of Buffer, TypedArray, DataView, or ArrayBuffer", dictionary);
      }
    }
    const handle = new ZlibHandle(mode);
    const writeState = new Uint32Array(2);
    // As in workerd, zlib's process callback runs from a microtask (brotli's at once).
    handle.initialize(windowBits, level, memLevel, strategy, writeState, () => queueMicrotask(() => afterWrite.call(handle)), dictionary);
    super(opts, mode, handle, zlibDefaults);
    this._writeState = writeState;
    this._level = level;
    this._strategy = strategy;
  }

  params(level, strategy, callback) {
    rangeOrDefault(level, "level", constants.Z_MIN_LEVEL, constants.Z_MAX_LEVEL);
    rangeOrDefault(strategy, "strategy", constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED);
    if (this._level !== level || this._strategy !== strategy) {
      this.flush(constants.Z_SYNC_FLUSH, () => {
        if (!this._handle) throw new Error("zlib binding closed");
        this._handle.params(level, strategy);
        if (!this.destroyed) {
          this._level = level;
          this._strategy = strategy;
          if (callback) callback();
        }
      });
    } else if (callback) {
      process.nextTick(callback);
    }
  }
}

/** Brotli and zstd: `params` as `{ [key]: value }`, checked and handed to the handle's initialize(). */
function readParams(opts, max, invalidParam) {
  const list = new Array(max + 1).fill(-1);
  if (opts?.params) {
    for (const origKey of Object.keys(opts.params)) {
      const key = +origKey;
      if (Number.isNaN(key) || key < 0 || key > max || list[key] !== -1) throw invalidParam(origKey);
      const value = opts.params[origKey];
      if (typeof value !== "number" && typeof value !== "boolean") throw invalidArgType("options.params[key]", "of type number", value);
      list[key] = Number(value);
    }
  }
  return list;
}

function initializationFailed() {
  return nodeError(Error, "ERR_ZLIB_INITIALIZATION_FAILED", "Initialization failed");
}

let kMaxBrotliParam = 0;
let kMaxZstdCParam = 0;
let kMaxZstdDParam = 0;
for (const [key, value] of Object.entries(constants)) {
  if (key.startsWith("BROTLI_PARAM_")) kMaxBrotliParam = Math.max(kMaxBrotliParam, value);
  if (key.startsWith("ZSTD_c_")) kMaxZstdCParam = Math.max(kMaxZstdCParam, value);
  if (key.startsWith("ZSTD_d_")) kMaxZstdDParam = Math.max(kMaxZstdDParam, value);
}

const brotliDefaults = { kind: "brotli", flush: constants.BROTLI_OPERATION_PROCESS, finishFlush: constants.BROTLI_OPERATION_FINISH, fullFlush: constants.BROTLI_OPERATION_FLUSH };

class Brotli extends ZlibBase {
  constructor(opts, mode) {
    const params = readParams(opts, kMaxBrotliParam, (key) => nodeError(RangeError, "ERR_BROTLI_INVALID_PARAM", `${key} is not a valid Brotli parameter`));
    const handle = new ZlibHandle(mode);
    const writeState = new Uint32Array(2);
    if (!handle.initialize(params, writeState, afterWrite)) throw initializationFailed();
    super(opts, mode, handle, brotliDefaults);
    this._writeState = writeState;
  }
}

const zstdDefaults = { kind: "zstd", flush: constants.ZSTD_e_continue, finishFlush: constants.ZSTD_e_end, fullFlush: constants.ZSTD_e_flush };

class Zstd extends ZlibBase {
  constructor(opts, mode) {
    const max = mode === constants.ZSTD_ENCODE ? kMaxZstdCParam : kMaxZstdDParam;
    const params = readParams(opts, max, (key) => nodeError(RangeError, "ERR_ZSTD_INVALID_PARAM", `${key} is not a valid Zstd parameter`));
    const handle = new ZlibHandle(mode);
    const writeState = new Uint32Array(2);
    // As in workerd, zstd's process callback runs from a microtask.
    if (!handle.initialize(params, writeState, () => queueMicrotask(() => afterWrite.call(handle)))) throw initializationFailed();
    super(opts ?? {}, mode, handle, zstdDefaults);
    this._writeState = writeState;
  }
}

const MODES = {
  Deflate: [Zlib, constants.DEFLATE],
  Inflate: [Zlib, constants.INFLATE],
  Gzip: [Zlib, constants.GZIP],
  Gunzip: [Zlib, constants.GUNZIP],
  DeflateRaw: [Zlib, constants.DEFLATERAW],
  InflateRaw: [Zlib, constants.INFLATERAW],
  Unzip: [Zlib, constants.UNZIP],
  BrotliCompress: [Brotli, constants.BROTLI_ENCODE],
  BrotliDecompress: [Brotli, constants.BROTLI_DECODE],
  ZstdCompress: [Zstd, constants.ZSTD_ENCODE],
  ZstdDecompress: [Zstd, constants.ZSTD_DECODE],
};

const classes = {};
for (const [name, [Base, mode]] of Object.entries(MODES)) {
  classes[name] = {
    [name]: class extends Base {
      constructor(opts) {
        super(opts, mode);
      }
    },
  }[name];
}

/** The engine's output for `data` with the finish flush, as `{ buffer, engine }` (option `info`). */
function withInfo(engine, data) {
  const chunk = typeof data === "string" ? Buffer.from(data) : data;
  return { engine, buffer: engine._processChunk(chunk, engine._finishFlushFlag) };
}

function syncFunction(name, mode, Class) {
  return function (data, options = {}) {
    if (options?.info) return withInfo(new Class(options), data);
    return oneShot(mode, data, options, name);
  };
}

function callbackFunction(name, mode, Class) {
  return function (data, options, callback) {
    if (typeof options === "function") [callback, options] = [options, {}];
    else if (typeof callback !== "function") throw invalidArgType("callback", "of type function", callback);
    options ??= {};
    let result;
    let failure = null;
    try {
      result = options.info ? withInfo(new Class(options), data) : oneShot(mode, data, options, name);
    } catch (error) {
      failure = error;
    }
    // As in workerd, the callback runs later, never during the call.
    queueMicrotask(() => (failure ? callback(failure) : callback(null, result)));
  };
}

exports.crc32 = function crc32(data, value = 0) {
  if (typeof value !== "number") throw invalidArgType("value", "of type number", value);
  if (!Number.isInteger(value)) throw outOfRange("value", "an integer", value);
  if (value < 0 || value > 0xffffffff) throw outOfRange("value", ">= 0 and <= 4294967295", value);
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : bytesOf(data);
  if (bytes === undefined) {
    throw new TypeError("Failed to execute 'crc32' on 'ZlibUtil': parameter 1 is not of type 'string or ArrayBuffer or ArrayBufferView'.");
  }
  return ops.zlibCrc32(bytes, value);
};

exports.codes = Object.freeze({
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3, Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  0: "Z_OK", 1: "Z_STREAM_END", 2: "Z_NEED_DICT", "-1": "Z_ERRNO", "-2": "Z_STREAM_ERROR", "-3": "Z_DATA_ERROR", "-4": "Z_MEM_ERROR", "-5": "Z_BUF_ERROR", "-6": "Z_VERSION_ERROR",
});
exports.constants = constants;
// The legacy copies of the constants on the module itself (zlib.Z_OK, …), read-only.
for (const [name, value] of Object.entries(constants)) {
  Object.defineProperty(exports, name, { value, enumerable: true, writable: false, configurable: false });
}

// In workerd's order: the classes, their create functions, then each callback/sync pair.
const CLASS_ORDER = ["Gzip", "Gunzip", "Deflate", "DeflateRaw", "Inflate", "InflateRaw", "Unzip", "BrotliCompress", "BrotliDecompress", "ZstdCompress", "ZstdDecompress"];
const FUNCTION_ORDER = ["Inflate", "Deflate", "InflateRaw", "DeflateRaw", "Gzip", "Gunzip", "Unzip", "BrotliDecompress", "BrotliCompress", "ZstdCompress", "ZstdDecompress"];
for (const name of CLASS_ORDER) exports[name] = classes[name];
for (const name of CLASS_ORDER) exports[`create${name}`] = (options) => new classes[name](options);
for (const name of FUNCTION_ORDER) {
  const mode = MODES[name][1];
  const lower = name[0].toLowerCase() + name.slice(1);
  // The name workerd's errors for a bad input give the native call.
  const native = mode <= constants.UNZIP ? "zlib" : lower;
  exports[lower] = callbackFunction(native, mode, classes[name]);
  exports[`${lower}Sync`] = syncFunction(`${native}Sync`, mode, classes[name]);
}

// Without nodejs_zlib (implied by nodejs_compat from 2024-09-23) workerd's zlib has only its
// constants, codes and crc32: every codec function and class throws.
if (!internals.compat?.enabled.includes("nodejs_zlib")) {
  for (const name of Object.keys(exports)) {
    if (name === "constants" || name === "codes" || name === "crc32" || typeof exports[name] !== "function") continue;
    exports[name] = function notImplemented() {
      throw new Error('Compatibility flag "nodejs_zlib" is not enabled');
    };
  }
}
