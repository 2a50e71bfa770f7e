// node:zlib's native handle and its one-shot calls. `ZlibHandle` is to node:zlib what Node's
// `zlib` binding object is to its JS: `initialize()`, `write()` / `writeSync()` with a flush
// kind and explicit input and output slices (the output written in place), a write state
// `[availOut, availIn]`, a process callback and an error handler, `params()`, `reset()`,
// `close()`. The codecs are in src/runtime/ops/zlib.rs. As in workerd, `write()` works at once
// and then calls the process callback (zstd's from a microtask). `oneShot()` is workerd's fast
// path for `deflateSync()` & co. without `info`: plain errors, "Memory limit exceeded" past
// `maxOutputLength`.
const { Buffer } = require("node:buffer");
const constants = require("node:internal/zlib_constants");

const Z_MAX_CHUNK = constants.Z_MAX_CHUNK;

// A handle not closed before it is collected frees its codec then.
const collected = new internals.FinalizationRegistry((id) => ops.zlibClose(id));

function bytesOf(value) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)) return new Uint8Array(value);
  return undefined;
}

class ZlibHandle {
  #id;
  #mode;
  #writeState = null;
  #callback = null;
  #errorHandler = null;
  #closed = false;
  #initialized = false;

  constructor(mode) {
    this.#mode = mode;
    this.#id = ops.zlibNew(mode);
    collected.register(this, this.#id, this);
  }

  #ready(writeState, callback) {
    this.#writeState = writeState;
    this.#callback = typeof callback === "function" ? callback : null;
    this.#initialized = true;
  }

  /**
   * zlib: (windowBits, level, memLevel, strategy, writeState, processCallback, dictionary?);
   * brotli and zstd: (params, writeState, processCallback, pledgedSrcSize?) -> whether every
   * parameter was taken.
   */
  initialize(...args) {
    if (this.#mode >= constants.BROTLI_DECODE) {
      const [params, writeState, callback] = args;
      this.#ready(writeState, callback);
      const list = params ?? [];
      for (let key = 0; key < list.length; key++) {
        const value = list[key];
        if (value === -1 || value === 0xffffffff) continue;
        if (ops.zlibSetParam(this.#id, key, value) !== null) return false;
      }
      return true;
    }
    const [windowBits, level, memLevel, strategy, writeState, callback, dictionary] = args;
    const zlibMode = this.#mode;
    const inflating = zlibMode === constants.INFLATE || zlibMode === constants.GUNZIP || zlibMode === constants.UNZIP;
    if (!(windowBits === 0 && inflating)) checkInit("windowBits", windowBits, constants.Z_MIN_WINDOWBITS, constants.Z_MAX_WINDOWBITS);
    checkInit("level", level, constants.Z_MIN_LEVEL, constants.Z_MAX_LEVEL);
    checkInit("memLevel", memLevel, constants.Z_MIN_MEMLEVEL, constants.Z_MAX_MEMLEVEL);
    if (![0, 1, 2, 3, 4].includes(strategy)) throw new Error("invalid strategy");
    this.#ready(writeState, callback);
    const error = ops.zlibInit(this.#id, level, windowBits, memLevel, strategy, dictionary === undefined ? undefined : bytesOf(dictionary));
    if (error !== null) this.#emitError(error);
  }

  init(...args) {
    return this.initialize(...args);
  }

  setErrorHandler(handler) {
    this.#errorHandler = handler;
  }

  #emitError([message, code, errno]) {
    const handler = this.#errorHandler ?? this.onerror;
    if (typeof handler === "function") handler.call(this, message, errno, code);
  }

  #work(flush, input, inOff, inLen, output, outOff, outLen) {
    if (!this.#initialized) throw new Error("Writing before initializing");
    if (this.#closed) throw new Error("Already finalized");
    flush = Number(flush) | 0;
    if (flush < 0 || flush > 6) throw new Error("Invalid flush value");
    const out = bytesOf(output);
    if (out === undefined) throw new TypeError("The output must be a Buffer, TypedArray or DataView");
    const inBytes = input == null ? undefined : bytesOf(input);
    if (inBytes === undefined && input != null) throw new TypeError("The input must be a Buffer, TypedArray or DataView");
    if (inOff + inLen > (inBytes ? inBytes.byteLength : 0) || inOff < 0 || inLen < 0) throw new Error("Input access is not within bounds");
    if (outOff + outLen > out.byteLength || outOff < 0 || outLen < 0) throw new Error("Output access is not within bounds");
    const result = ops.zlibWrite(this.#id, flush, inBytes, inOff >>> 0, inLen >>> 0, out, outOff >>> 0, outLen >>> 0);
    if (typeof result[0] === "string") {
      this.#emitError(result);
      return false;
    }
    const state = this.#writeState;
    if (!state || state.length < 2) throw new Error("Invalid write result buffer");
    state[0] = result[0];
    state[1] = result[1];
    return true;
  }

  writeSync(flush, input, inOff, inLen, output, outOff, outLen) {
    this.#work(flush, input, inOff, inLen, output, outOff, outLen);
  }

  write(flush, input, inOff, inLen, output, outOff, outLen) {
    if (this.#work(flush, input, inOff, inLen, output, outOff, outLen) && this.#callback) this.#callback.call(this);
  }

  /** The whole of `input` with `flush` in one go (oneShot); closes the handle. */
  run(flush, input, max) {
    if (this.#closed) throw new Error("Already finalized");
    this.#closed = true;
    collected.unregister(this);
    return ops.zlibRun(this.#id, flush, input, max);
  }

  params(level, strategy) {
    if (this.#closed) return;
    const error = ops.zlibParams(this.#id, level, strategy);
    if (error !== null) this.#emitError(error);
  }

  reset() {
    if (this.#closed) return;
    const error = ops.zlibReset(this.#id);
    if (error !== null) this.#emitError(error);
  }

  close() {
    if (this.#closed) return;
    this.#closed = true;
    collected.unregister(this);
    ops.zlibClose(this.#id);
  }
}

function checkInit(name, value, min, max) {
  if (!(value >= min && value <= max)) {
    throw new RangeError(`The value of "options.${name}" is out of range. It must be >= ${min} and <= ${max}. Received ${value}`);
  }
}

function rangeCheck(name, value, min, max, fallback) {
  if (value === undefined || value === null) return fallback;
  if (!(value >= min && value <= max)) {
    throw new RangeError(`The value of "options.${name}" is out of range. It must be >= ${min} and <= ${max}. Received ${value}`);
  }
  return value;
}

/** The input of a one-shot call as bytes, with workerd's error for anything else. */
function oneShotInput(data, method) {
  if (typeof data === "string") return Buffer.from(data, "utf8");
  const bytes = bytesOf(data);
  if (bytes === undefined) {
    throw new TypeError(`Failed to execute '${method}' on 'ZlibUtil': parameter 1 is not of type 'string or ArrayBuffer or ArrayBufferView'.`);
  }
  return bytes;
}

const FLUSH_RANGE = { zlib: [constants.Z_NO_FLUSH, 6], brotli: [0, 3], zstd: [0, 2] };

/**
 * One-shot compression or decompression of `data` with `mode` (workerd's zlibSync, brotliSync,
 * zstdSync): options checked as workerd checks them, the output grown a chunk at a time up
 * to `maxOutputLength`.
 */
function oneShot(mode, data, options, method) {
  const input = oneShotInput(data, method);
  const opts = options ?? {};
  rangeCheck("chunkSize", opts.chunkSize, constants.Z_MIN_CHUNK, Z_MAX_CHUNK, 0);
  const max = rangeCheck("maxOutputLength", opts.maxOutputLength, 1, Z_MAX_CHUNK, Z_MAX_CHUNK);
  const kind = mode >= constants.ZSTD_ENCODE ? "zstd" : mode >= constants.BROTLI_DECODE ? "brotli" : "zlib";
  const handle = new ZlibHandle(mode);
  let failure = null;
  handle.setErrorHandler((message) => {
    failure ??= new Error(message);
  });
  const writeState = new Uint32Array(2);
  try {
    if (kind === "zlib") {
      handle.initialize(
        opts.windowBits ?? constants.Z_DEFAULT_WINDOWBITS,
        opts.level ?? constants.Z_DEFAULT_LEVEL,
        opts.memLevel ?? constants.Z_DEFAULT_MEMLEVEL,
        opts.strategy ?? constants.Z_DEFAULT_STRATEGY,
        writeState,
        null,
        opts.dictionary,
      );
    } else {
      const params = [];
      for (const [key, value] of Object.entries(opts.params ?? {})) params[Number(key)] = Number(value);
      for (let i = 0; i < params.length; i++) if (params[i] === undefined) params[i] = -1;
      if (!handle.initialize(params, writeState, null)) throw new Error(kind === "zstd" ? "Setting parameter failed" : "Setting parameter failed");
    }
    if (failure) throw failure;
    const [lo, hi] = FLUSH_RANGE[kind];
    rangeCheck("flush", opts.flush, lo, hi, lo);
    const finish = rangeCheck("finishFlush", opts.finishFlush, lo, hi, kind === "zlib" ? constants.Z_FINISH : kind === "brotli" ? constants.BROTLI_OPERATION_FINISH : constants.ZSTD_e_end);
    const result = handle.run(finish, input, max);
    if (result === null) throw new RangeError("Memory limit exceeded");
    if (typeof result[0] === "string") throw new Error(result[0]);
    return Buffer.from(result.buffer, result.byteOffset, result.byteLength);
  } finally {
    handle.close();
  }
}

module.exports = { ZlibHandle, oneShot, bytesOf };
