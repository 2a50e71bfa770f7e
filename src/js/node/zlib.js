// node:zlib: gzip, deflate, deflate-raw, their inverses, unzip (gzip or zlib, by header) and
// brotli, as one-shot sync functions, callback functions and Transform streams (node:stream).
// The codecs are the ones behind CompressionStream (ops/compression.rs: flate2, brotli), fed
// the input and drained in bounded chunks, so output is counted as it is made: a one-shot call
// stops at `maxOutputLength` (ERR_BUFFER_TOO_LARGE), and a stream stops when the output of one
// written chunk passes it. `flush()` is a sync flush.
const { Buffer } = require("node:buffer");
const stream = require("node:stream");
const constants = require("node:internal/zlib_constants");
const { describeReceived } = require("node:internal/errors");

/** Default bound on one call's output (Node's default is kMaxLength); see docs/compatibility.md. */
const DEFAULT_MAX_OUTPUT = 128 * 1024 * 1024;

function nodeError(Base, code, message, errno) {
  const error = new Base(message);
  error.code = code;
  if (errno !== undefined) error.errno = errno;
  return error;
}

function invalidArgType(name, expected, value) {
  return nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" argument must be ${expected}. Received ${describeReceived(value)}`);
}

function toBuffer(data, name = "buffer") {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  throw invalidArgType(name, "of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer", data);
}

function checkRange(options, name, min, max) {
  const value = options[name];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || Number.isNaN(value)) throw invalidArgType(`options.${name}`, "of type number", value);
  if (!Number.isInteger(value) && Number.isFinite(value)) throw nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "options.${name}" is out of range. It must be an integer. Received ${value}`);
  if (value < min || value > max) throw nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "options.${name}" is out of range. It must be >= ${min} and <= ${max}. Received ${value}`);
  return value;
}

// mode -> [codec format ("auto": gzip or zlib by header), decompress]
const MODES = {
  Deflate: ["deflate", false],
  Inflate: ["deflate", true],
  Gzip: ["gzip", false],
  Gunzip: ["gzip", true],
  DeflateRaw: ["deflate-raw", false],
  InflateRaw: ["deflate-raw", true],
  Unzip: ["auto", true],
  BrotliCompress: ["brotli", false],
  BrotliDecompress: ["brotli", true],
};

/** The settings of one codec from Node's options. */
function readOptions(mode, options) {
  if (options === undefined || options === null) options = {};
  if (typeof options !== "object") throw invalidArgType("options", "of type object", options);
  const [format, decompress] = MODES[mode];
  let level;
  if (format === "brotli") {
    const params = options.params ?? {};
    if (params === null || typeof params !== "object") throw invalidArgType("options.params", "of type object", params);
    for (const key of Object.keys(params)) {
      if (!Number.isInteger(Number(key)) || typeof params[key] !== "number") {
        throw nodeError(RangeError, "ERR_BROTLI_INVALID_PARAM", `${key} is not a valid Brotli parameter`);
      }
    }
    const quality = params[constants.BROTLI_PARAM_QUALITY];
    if (quality !== undefined) level = checkRange({ quality }, "quality", constants.BROTLI_MIN_QUALITY, constants.BROTLI_MAX_QUALITY);
  } else {
    level = checkRange(options, "level", constants.Z_MIN_LEVEL, constants.Z_MAX_LEVEL);
    // flate2's Rust backend always uses a 32 KiB window and its own memory use and strategy:
    // the options are checked as Node checks them, then have no further effect.
    checkRange(options, "windowBits", decompress ? 0 : constants.Z_MIN_WINDOWBITS, constants.Z_MAX_WINDOWBITS);
    checkRange(options, "memLevel", constants.Z_MIN_MEMLEVEL, constants.Z_MAX_MEMLEVEL);
    checkRange(options, "strategy", constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED);
    if (options.dictionary !== undefined) {
      throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "zlib dictionaries are not supported by workerbox");
    }
  }
  checkRange(options, "chunkSize", constants.Z_MIN_CHUNK, Infinity);
  const maxOutputLength = checkRange(options, "maxOutputLength", 1, 2 ** 53 - 1) ?? DEFAULT_MAX_OUTPUT;
  return { format, decompress, level: level === -1 ? undefined : level, maxOutputLength };
}

/** A Node-style error from a codec failure. */
function codecError(error, format, producedOutput) {
  const message = String(error && error.message);
  if (message === "unexpected end of file") return nodeError(Error, "Z_BUF_ERROR", "unexpected end of file", constants.Z_BUF_ERROR);
  const brotli = /brotli:(ERR_\w+)/.exec(message);
  if (brotli) return nodeError(Error, brotli[1], "Decompression failed", -1);
  if (/data after the end/.test(message)) return nodeError(Error, "Z_DATA_ERROR", "invalid data after the end of the compressed stream", constants.Z_DATA_ERROR);
  const header = (format !== "deflate-raw" && !producedOutput) || /incorrect header check/.test(message);
  return nodeError(Error, "Z_DATA_ERROR", header ? "incorrect header check" : `invalid compressed data (${message.replace(/^The compressed data is invalid: /, "")})`, constants.Z_DATA_ERROR);
}

function tooLarge(max) {
  return nodeError(RangeError, "ERR_BUFFER_TOO_LARGE", `Cannot create a Buffer larger than ${max} bytes`);
}

/**
 * One codec: `write(bytes)` and `end()` return the output chunks (Buffers) they produced.
 * `limit` bounds the output of each call (streams) or of the whole (one-shot, via `total`).
 */
class Engine {
  constructor(settings) {
    this.settings = settings;
    this.format = settings.format;
    this.id = undefined;
    this.head = Buffer.alloc(0);
    this.produced = 0;
    this.bytesWritten = 0;
    if (this.format !== "auto") this.#open(this.format);
  }

  #open(format) {
    this.format = format;
    // Lenient: input after the end of a stream follows zlib's rules (see compression.rs).
    this.id = ops.codecCreate(format, this.settings.decompress, this.settings.level, true);
  }

  #drain(out, budget) {
    for (;;) {
      let chunk;
      try {
        chunk = ops.codecRead(this.id);
      } catch (error) {
        this.id = undefined;
        throw codecError(error, this.format, this.produced > 0);
      }
      if (chunk === null) return;
      this.#take(out, chunk, budget);
    }
  }

  #take(out, chunk, budget) {
    if (chunk.length === 0) return;
    this.produced += chunk.length;
    budget.used += chunk.length;
    if (budget.used > budget.max) {
      this.close();
      throw tooLarge(budget.max);
    }
    out.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  }

  write(bytes, budget) {
    const out = [];
    this.bytesWritten += bytes.length;
    if (this.id === undefined && this.format === "auto") {
      // unzip: gzip's magic bytes, else zlib; decided once two bytes have arrived.
      this.head = Buffer.concat([this.head, bytes]);
      if (this.head.length < 2) return out;
      this.#open(this.head[0] === 0x1f && this.head[1] === 0x8b ? "gzip" : "deflate");
      bytes = this.head;
    }
    if (this.id === undefined) throw nodeError(Error, "ERR_STREAM_DESTROYED", "zlib binding closed");
    ops.codecWrite(this.id, bytes);
    this.#drain(out, budget);
    return out;
  }

  end(budget) {
    const out = [];
    if (this.id === undefined && this.format === "auto") {
      if (this.head.length === 0) return out;
      // One byte cannot be a stream of either kind.
      throw nodeError(Error, "Z_BUF_ERROR", "unexpected end of file", constants.Z_BUF_ERROR);
    }
    if (this.id === undefined) throw nodeError(Error, "ERR_STREAM_DESTROYED", "zlib binding closed");
    this.#drain(out, budget);
    const id = this.id;
    this.id = undefined;
    let rest;
    try {
      rest = ops.codecFinish(id, this.settings.decompress);
    } catch (error) {
      throw codecError(error, this.format, this.produced > 0);
    }
    this.#take(out, rest, budget);
    return out;
  }

  /** A sync flush: all input so far becomes output a decoder can read. */
  flush(budget) {
    const out = [];
    if (this.id === undefined) return out;
    this.#drain(out, budget);
    this.#take(out, ops.codecFlush(this.id), budget);
    return out;
  }

  close() {
    if (this.id !== undefined) ops.codecDrop(this.id);
    this.id = undefined;
  }
}

/** One-shot compression or decompression of `buffer`. */
function runSync(mode, buffer, options) {
  const settings = readOptions(mode, options);
  const input = toBuffer(buffer);
  const engine = new Engine(settings);
  const budget = { used: 0, max: settings.maxOutputLength };
  try {
    const chunks = engine.write(input, budget);
    chunks.push(...engine.end(budget));
    const result = Buffer.concat(chunks, budget.used);
    return result;
  } finally {
    engine.close();
  }
}

// The empty chunk flush() writes, so that the flush happens in order with the writes before it.
const kFlush = Symbol("kFlush");

class ZlibBase extends stream.Transform {
  #engine;
  #settings;
  constructor(mode, options) {
    const settings = readOptions(mode, options);
    super({ ...(options ?? {}), readableObjectMode: false, writableObjectMode: false });
    this.#settings = settings;
    this.#engine = new Engine(settings);
    this._finishFlushFlag = constants.Z_FINISH;
  }

  get bytesWritten() {
    return this.#engine.bytesWritten;
  }

  _transform(chunk, encoding, callback) {
    let out;
    try {
      if (chunk[kFlush]) out = this.#engine.flush({ used: 0, max: this.#settings.maxOutputLength });
      else out = this.#engine.write(typeof chunk === "string" ? Buffer.from(chunk, encoding) : toBuffer(chunk, "chunk"), { used: 0, max: this.#settings.maxOutputLength });
    } catch (error) {
      return callback(error);
    }
    for (const piece of out) this.push(piece);
    callback();
  }

  _flush(callback) {
    let out;
    try {
      out = this.#engine.end({ used: 0, max: this.#settings.maxOutputLength });
    } catch (error) {
      return callback(error);
    }
    for (const piece of out) this.push(piece);
    callback();
  }

  _destroy(error, callback) {
    this.#engine.close();
    callback(error);
  }

  /** Flushes what was written so far (every flush kind is a sync flush here). */
  flush(kind, callback) {
    if (typeof kind === "function") callback = kind;
    const marker = Buffer.alloc(0);
    marker[kFlush] = true;
    this.write(marker, typeof callback === "function" ? () => callback() : undefined);
  }

  params(level, strategy, callback) {
    throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "zlib params() is not supported by workerbox");
  }

  reset() {
    this.#engine.close();
    this.#engine = new Engine(this.#settings);
  }

  close(callback) {
    if (callback) stream.finished(this, callback);
    this.destroy();
  }
}

for (const mode of Object.keys(MODES)) {
  const Class = {
    [mode]: class extends ZlibBase {
      constructor(options) {
        super(mode, options);
      }
    },
  }[mode];
  exports[mode] = Class;
  exports[`create${mode}`] = (options) => new Class(options);
  const lower = mode[0].toLowerCase() + mode.slice(1);
  exports[`${lower}Sync`] = (buffer, options) => runSync(mode, buffer, options);
  exports[lower] = function (buffer, options, callback) {
    if (typeof options === "function") [callback, options] = [options, {}];
    if (typeof callback !== "function") throw invalidArgType("callback", "of type function", callback);
    let result;
    let failure = null;
    try {
      result = runSync(mode, buffer, options);
    } catch (error) {
      failure = error;
    }
    // As in Node, the callback runs later, never during the call.
    queueMicrotask(() => (failure ? callback(failure) : callback(null, result)));
  };
}

/** CRC-32 of `data`, continuing from `value` (zlib's crc32). */
exports.crc32 = function crc32(data, value = 0) {
  if (typeof data !== "string" && !ArrayBuffer.isView(data)) throw invalidArgType("data", "of type string or an instance of Buffer, TypedArray, or DataView", data);
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "value" is out of range. It must be >= 0 and <= 4294967295. Received ${value}`);
  }
  return ops.zlibCrc32(toBuffer(data, "data"), value);
};

exports.constants = constants;
// Node's legacy top-level copies of the constants (zlib.Z_OK, …).
for (const [name, value] of Object.entries(constants)) {
  if (name.startsWith("Z_")) exports[name] = value;
}
exports.codes = Object.freeze({
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3, Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  0: "Z_OK", 1: "Z_STREAM_END", 2: "Z_NEED_DICT", "-1": "Z_ERRNO", "-2": "Z_STREAM_ERROR", "-3": "Z_DATA_ERROR", "-4": "Z_MEM_ERROR", "-5": "Z_BUF_ERROR", "-6": "Z_VERSION_ERROR",
});

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
