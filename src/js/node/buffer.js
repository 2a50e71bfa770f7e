// node:buffer: the `buffer` npm package's Buffer (a Uint8Array subclass with Node's API), plus
// the module's other exports as workerd has them.
const vendored = require("vendor:buffer");
const { Buffer } = vendored;
// Reads and writes checked as workerd checks them (Node's errors).
require("node:internal/buffer_checks").install(Buffer);

exports.Buffer = Buffer;
// Node's SlowBuffer(size): allocUnsafeSlow's checks (NaN and negative sizes are RangeErrors).
exports.SlowBuffer = function SlowBuffer(size) {
  return Buffer.allocUnsafeSlow(size);
};
exports.INSPECT_MAX_BYTES = vendored.INSPECT_MAX_BYTES;
exports.kMaxLength = vendored.kMaxLength;
exports.kStringMaxLength = 2 ** 29 - 24;
exports.constants = Object.freeze({ MAX_LENGTH: vendored.kMaxLength, MAX_STRING_LENGTH: exports.kStringMaxLength });
exports.atob = globalThis.atob;
exports.btoa = globalThis.btoa;
exports.Blob = globalThis.Blob;
exports.File = globalThis.File;

const toBytes = (input, what) => {
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer)) return new Uint8Array(input);
  const error = new TypeError(`The "${what}" argument must be an instance of Buffer, TypedArray, DataView or ArrayBuffer.`);
  error.code = "ERR_INVALID_ARG_TYPE";
  throw error;
};

/** Whether the bytes are valid UTF-8. */
exports.isUtf8 = function isUtf8(input) {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(toBytes(input, "input"));
    return true;
  } catch (error) {
    if (error instanceof TypeError && error.code === "ERR_INVALID_ARG_TYPE") throw error;
    return false;
  }
};

/** Whether every byte is below 0x80. */
exports.isAscii = function isAscii(input) {
  const bytes = toBytes(input, "input");
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return false;
  return true;
};

const TRANSCODE = { ascii: "ascii", latin1: "latin1", binary: "latin1", ucs2: "utf16le", "ucs-2": "utf16le", utf16le: "utf16le", "utf-16le": "utf16le", utf8: "utf8", "utf-8": "utf8" };
const transcodeError = (message) => new Error(message);
const TRANSCODE_LIMIT = 134217728;

/** The output size of UTF-8 → UTF-16 (code units × 2) or UTF-16 → UTF-8 (bytes), counted without decoding. */
function exactSize(source, from) {
  let size = 0;
  if (from === "utf8") {
    // A code unit per lead byte, two for a 4-byte sequence's.
    for (let i = 0; i < source.length; i++) {
      const byte = source[i];
      if ((byte & 0xc0) !== 0x80) size += byte >= 0xf0 ? 4 : 2;
    }
    return size;
  }
  for (let i = 0; i + 1 < source.length; i += 2) {
    const unit = source[i] | (source[i + 1] << 8);
    size += unit < 0x80 ? 1 : unit < 0x800 ? 2 : unit >= 0xd800 && unit <= 0xdbff ? 4 : unit >= 0xdc00 && unit <= 0xdfff ? 0 : 3;
  }
  return size;
}

/**
 * `text`'s UTF-16LE bytes, a code unit at a time into a Uint16Array (every platform workerbox
 * builds for is little-endian): the buffer package's utf16le write takes seconds on 64M characters.
 */
function utf16le(text) {
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return Buffer.from(units.buffer, 0, units.byteLength);
}

/**
 * Re-encodes `source` from one encoding to another as workerd's (ICU's) transcode does: ascii and
 * latin1 input read as windows-1252, characters an ascii or latin1 output cannot hold become "?",
 * malformed UTF-8 becomes U+FFFD (an error when the output is UTF-16), and odd-length UTF-16 input
 * or a lone surrogate in it going to UTF-8 is an error.
 */
exports.transcode = function transcode(source, fromEncoding, toEncoding) {
  if (!(source instanceof Uint8Array)) {
    const { describeReceived } = require("node:internal/errors");
    throw Object.assign(new TypeError(`The "source" argument must be an instance of ArrayBufferView. Received ${describeReceived(source)}`), { code: "ERR_INVALID_ARG_TYPE" });
  }
  const from = TRANSCODE[String(fromEncoding).toLowerCase()];
  const to = TRANSCODE[String(toEncoding).toLowerCase()];
  for (const [name, known] of [[fromEncoding, from], [toEncoding, to]]) {
    if (known === undefined) throw Object.assign(new TypeError(`Unknown encoding: ${name}`), { code: "ERR_UNKNOWN_ENCODING" });
  }
  if (source.length === 0) return Buffer.alloc(0);
  // workerd's bound on the output (its isolates' 128 MiB), checked before anything is copied:
  // the exact size where workerd knows it (UTF-16 from UTF-8, UTF-8 from UTF-16, UTF-16 from
  // latin1/ascii), else the input times the output's widest character (3 for UTF-8, 2 for UTF-16).
  const n = source.length;
  const bound = to === "utf16le" ? n * 2 : from === "utf16le" && to === "utf8" ? (n / 2) * 3 : n * ({ utf8: 3, utf16le: 2 }[to] ?? 1);
  const exact = (from === "utf8" && to === "utf16le") || (from === "utf16le" && to === "utf8");
  if (bound > TRANSCODE_LIMIT && (!exact || exactSize(source, from) > TRANSCODE_LIMIT)) throw transcodeError(exact ? "Buffer is too large to transcode" : "Source buffer is too large to transcode");
  let text;
  if (from === "utf8") {
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(source);
    } catch {
      if (to === "utf16le") throw transcodeError("Unable to transcode buffer");
      text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(source);
    }
  } else if (from === "utf16le") {
    if (source.length % 2 !== 0) throw transcodeError("UTF-16le input size should be multiple of 2");
    text = Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString("utf16le");
    if (to === "utf8" && !text.isWellFormed()) throw transcodeError("Expected UTF8 length mismatch");
  } else {
    text = new TextDecoder("windows-1252").decode(source);
  }
  if (to === "utf16le") return utf16le(text);
  if (to === "utf8") return Buffer.from(text, to);
  const limit = to === "ascii" ? 0x7f : 0xff;
  const bytes = [];
  for (const char of text) {
    const code = char.codePointAt(0);
    bytes.push(code <= limit && code !== 0xfffd ? code : 0x3f);
  }
  return Buffer.from(bytes);
};

exports.resolveObjectURL = function resolveObjectURL() {
  return undefined;
};

// The `buffer` package predates Node's "base64url" encoding; it is added here (encoding with
// V8's own Uint8Array.prototype.toBase64, decoding through the package's lenient base64).
const isBase64url = (encoding) => typeof encoding === "string" && encoding.toLowerCase() === "base64url";
const toBase64 = (text) => String(text).replace(/-/g, "+").replace(/_/g, "/");
const { toString, write } = Buffer.prototype;
const { from, byteLength, isEncoding } = Buffer;
Buffer.prototype.toString = function (encoding, start, end) {
  if (!isBase64url(encoding)) return Reflect.apply(toString, this, arguments);
  start = start === undefined ? 0 : Math.max(0, start | 0);
  end = end === undefined ? this.length : Math.min(this.length, end | 0);
  return end <= start ? "" : this.subarray(start, end).toBase64({ alphabet: "base64url", omitPadding: true });
};
Buffer.prototype.write = function (string, offset, length, encoding) {
  if (isBase64url(encoding)) return Reflect.apply(write, this, [toBase64(string), offset, length, "base64"]);
  if (typeof offset === "string" && isBase64url(offset)) return Reflect.apply(write, this, [toBase64(string), "base64"]);
  if (typeof length === "string" && isBase64url(length)) return Reflect.apply(write, this, [toBase64(string), offset, "base64"]);
  return Reflect.apply(write, this, arguments);
};
Buffer.from = function (value, encodingOrOffset, length) {
  if (typeof value === "string" && isBase64url(encodingOrOffset)) return from.call(this, toBase64(value), "base64");
  return Reflect.apply(from, this, arguments);
};
Buffer.byteLength = function (string, encoding) {
  return Reflect.apply(byteLength, this, isBase64url(encoding) ? [toBase64(string), "base64"] : arguments);
};
Buffer.isEncoding = function (encoding) {
  return isBase64url(encoding) || Reflect.apply(isEncoding, this, arguments);
};

// UTF-8 decoding as Node's (the WHATWG decoder's U+FFFD for each maximal invalid subpart, the
// BOM kept), so that node:string_decoder's pieces decode as the whole Buffer does.
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const isUtf8Name = (encoding) => encoding === undefined || encoding === "utf8" || (typeof encoding === "string" && /^utf-?8$/i.test(encoding));
const { toString: packageToString } = Buffer.prototype;
Buffer.prototype.toString = function toString(encoding, start, end) {
  if (!isUtf8Name(encoding)) return Reflect.apply(packageToString, this, arguments);
  const length = this.length;
  start = start === undefined || start <= 0 ? 0 : Math.trunc(start) || 0;
  end = end === undefined || end > length ? length : Math.trunc(end) || 0;
  if (start >= length || end <= start) return "";
  return utf8Decoder.decode(this.subarray(start, end));
};

// equals() takes any Uint8Array, as Node's does.
Buffer.prototype.equals = function equals(otherBuffer) {
  if (!(otherBuffer instanceof Uint8Array)) {
    const { describeReceived } = require("node:internal/errors");
    throw Object.assign(new TypeError(`The "otherBuffer" argument must be an instance of Buffer or Uint8Array. Received ${describeReceived(otherBuffer)}`), { code: "ERR_INVALID_ARG_TYPE" });
  }
  if (this === otherBuffer) return true;
  if (this.byteLength !== otherBuffer.byteLength) return false;
  for (let i = 0; i < this.byteLength; i++) if (this[i] !== otherBuffer[i]) return false;
  return true;
};

// The package's "Unknown encoding: x" TypeErrors carry Node's code, ERR_UNKNOWN_ENCODING.
function withEncodingCode(method) {
  return {
    [method.name](...args) {
      try {
        return Reflect.apply(method, this, args);
      } catch (error) {
        if (error instanceof TypeError && error.code === undefined && /^Unknown encoding: /.test(error.message)) error.code = "ERR_UNKNOWN_ENCODING";
        throw error;
      }
    },
  }[method.name];
}
for (const name of ["toString", "write", "fill"]) Buffer.prototype[name] = withEncodingCode(Buffer.prototype[name]);
for (const name of ["from", "byteLength", "alloc"]) Buffer[name] = withEncodingCode(Buffer[name]);

// Node's argument handling over all of the above (node/internal/buffer_node.js).
require("node:internal/buffer_node").install(Buffer, exports);

// The module's Buffer is a function of its own with the package's prototype and statics, so that
// its call form is Node's (Buffer(size) is Buffer.alloc(size), anything else Buffer.from(...));
// the package's buffers, made on the same prototype, are its instances.
const PackageBuffer = Buffer;
function NodeBuffer(arg, encodingOrOffset, length) {
  if (typeof arg === "number") {
    if (typeof encodingOrOffset === "string") {
      const { invalidArgType } = require("node:internal/errors");
      throw invalidArgType("string", "string", arg);
    }
    return PackageBuffer.alloc(arg);
  }
  return PackageBuffer.from(arg, encodingOrOffset, length);
}
for (const key of Reflect.ownKeys(PackageBuffer)) {
  if (key === "length" || key === "name" || key === "prototype") continue;
  Object.defineProperty(NodeBuffer, key, Object.getOwnPropertyDescriptor(PackageBuffer, key));
}
Object.setPrototypeOf(NodeBuffer, Object.getPrototypeOf(PackageBuffer));
NodeBuffer.prototype = PackageBuffer.prototype;
Object.defineProperty(NodeBuffer, "name", { value: "Buffer" });
Object.defineProperty(PackageBuffer.prototype, "constructor", { value: NodeBuffer, writable: true, configurable: true, enumerable: false });
exports.Buffer = NodeBuffer;
