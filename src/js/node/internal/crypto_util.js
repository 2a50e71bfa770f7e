// Helpers shared by node:crypto's files: Node-style errors, argument checks, turning inputs
// (strings with encodings, TypedArrays, ArrayBuffers) into bytes, digest names, and the bridge
// to the native operations (ops.subtleCall / ops.nodeCryptoCall) with their errors made Node's.
const { Buffer } = require("node:buffer");

function nodeError(Base, code, message) {
  const error = new Base(message);
  error.code = code;
  return error;
}
exports.nodeError = nodeError;

const { describeReceived: describe } = require("node:internal/errors");

exports.invalidArgType = function invalidArgType(name, expected, value) {
  return nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" argument must be ${expected}. Received ${describe(value)}`);
};

exports.invalidArgValue = function invalidArgValue(name, value, reason = "is invalid") {
  return nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument '${name}' ${reason}. Received ${typeof value === "string" ? `'${value}'` : describe(value)}`);
};

exports.outOfRange = function outOfRange(name, range, value) {
  return nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${range}. Received ${value}`);
};

/** A Buffer viewing the bytes of `data` (a string is encoded with `encoding`, UTF-8 by default). */
exports.toBuffer = function toBuffer(data, encoding, name = "data") {
  if (typeof data === "string") return Buffer.from(data, encoding === undefined || encoding === "buffer" ? "utf8" : encoding);
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (data instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && data instanceof SharedArrayBuffer)) return Buffer.from(data);
  throw exports.invalidArgType(name, "of type string or an instance of Buffer, TypedArray, DataView or ArrayBuffer", data);
};

/** `bytes` as a Buffer, or a string when `encoding` names one. */
exports.encodeOutput = function encodeOutput(bytes, encoding) {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (encoding === undefined || encoding === "buffer") return buffer;
  // An object's toString() names it (and may throw), as Buffer#toString reads it in workerd.
  return buffer.toString(typeof encoding === "string" ? encoding : String(encoding));
};

// Node (OpenSSL) digest names, lower-cased, with the aliases Node accepts.
const DIGESTS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256"];
const DIGEST_ALIASES = {
  "rsa-md5": "md5",
  "rsa-sha1": "sha1",
  "sha-1": "sha1",
  "rsa-sha224": "sha224",
  "sha-224": "sha224",
  "rsa-sha256": "sha256",
  "sha-256": "sha256",
  "sha2-256": "sha256",
  "rsa-sha384": "sha384",
  "sha-384": "sha384",
  "sha2-384": "sha384",
  "rsa-sha512": "sha512",
  "sha-512": "sha512",
  "sha2-512": "sha512",
  "sha512/224": "sha512-224",
  "sha512/256": "sha512-256",
  "ecdsa-with-sha256": "sha256",
  "ecdsa-with-sha384": "sha384",
  "ecdsa-with-sha512": "sha512",
};
exports.DIGESTS = DIGESTS;

/** The canonical Node name of digest `name`, or undefined when it is not supported. */
exports.digestName = function digestName(name) {
  if (typeof name !== "string") return undefined;
  const lower = name.toLowerCase();
  const canonical = DIGEST_ALIASES[lower] ?? lower;
  return DIGESTS.includes(canonical) ? canonical : undefined;
};

const WEB_DIGESTS = { sha1: "SHA-1", sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };
const DIGEST_SIZES = { md5: 16, sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64, "sha512-224": 28, "sha512-256": 32 };
exports.DIGEST_SIZES = DIGEST_SIZES;

/** The WebCrypto name of digest `name` for the operations that take one (SHA-1 and SHA-2). */
exports.webDigest = function webDigest(name, argument = "digest") {
  const canonical = exports.digestName(name);
  const web = canonical && WEB_DIGESTS[canonical];
  if (web === undefined) {
    if (typeof name !== "string") throw exports.invalidArgType(argument, "of type string", name);
    throw nodeError(TypeError, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${name}`);
  }
  return web;
};

/** Runs a native operation; a failure becomes an Error with a Node-style code. */
exports.native = function native(kind, op, params, code = "ERR_CRYPTO_OPERATION_FAILED") {
  try {
    return kind === "subtle" ? ops.subtleCall(op, params) : ops.nodeCryptoCall(op, params);
  } catch (error) {
    if (error && error.name === "NotSupportedError") throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", error.message);
    throw nodeError(Error, code, error && error.message ? error.message : String(error));
  }
};

exports.checkInteger = function checkInteger(value, name, min = 0, max = 2 ** 31 - 1) {
  if (typeof value !== "number") throw exports.invalidArgType(name, "of type number", value);
  if (!Number.isInteger(value) || value < min || value > max) throw exports.outOfRange(name, `>= ${min} && <= ${max}`, value);
  return value;
};

/** Node's validateInteger / validateInt32: a number, an integer, within [min, max]. */
exports.validateInteger = function validateInteger(value, name, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== "number") throw exports.invalidArgType(name, "of type number", value);
  if (!Number.isInteger(value)) throw exports.outOfRange(name, "an integer", value);
  if (value < min || value > max) throw exports.outOfRange(name, `>= ${min} && <= ${max}`, value);
  return value;
};
exports.validateInt32 = (value, name, min = -2147483648, max = 2147483647) => exports.validateInteger(value, name, min, max);
exports.validateUint32 = (value, name, positive = false) => exports.validateInteger(value, name, positive ? 1 : 0, 4294967295);

exports.validateString = function validateString(value, name) {
  if (typeof value !== "string") throw exports.invalidArgType(name, "of type string", value);
  return value;
};

/** ERR_MISSING_ARGS for the first of `names` whose value (in `values`) is undefined. */
exports.checkMissing = function checkMissing(values, names) {
  for (let i = 0; i < names.length; i++) {
    if (values[i] === undefined) throw nodeError(TypeError, "ERR_MISSING_ARGS", `The "${names[i]}" argument must be specified`);
  }
};

exports.checkFunction = function checkFunction(value, name) {
  if (typeof value !== "function") throw exports.invalidArgType(name, "of type function", value);
  return value;
};

/** Calls `callback(error, result)` on a later microtask with `work()`'s outcome. */
exports.later = function later(callback, work) {
  queueMicrotask(() => {
    let result;
    try {
      result = work();
    } catch (error) {
      callback(error);
      return;
    }
    callback(null, result);
  });
};

/**
 * A base class for objects that are also Node streams (Hash, Hmac and ciphers are Transforms,
 * Sign and Verify Writables) without paying for the stream until it is used: as Node's
 * LazyTransform, the stream constructor runs on first access to the stream state.
 */
exports.lazyStream = function lazyStream(Base) {
  function LazyStream(options) {
    this._streamOptions = options;
  }
  Object.setPrototypeOf(LazyStream.prototype, Base.prototype);
  Object.setPrototypeOf(LazyStream, Base);
  for (const name of ["_readableState", "_writableState"]) {
    Object.defineProperty(LazyStream.prototype, name, {
      configurable: true,
      enumerable: true,
      get() {
        // Both states become own properties first: a Writable has no _readableState, and the
        // stream code reads it (while constructing too), which through this getter would
        // construct the stream again and again (Sign and Verify overflowed the stack on end(),
        // milliseconds each).
        for (const state of ["_readableState", "_writableState"]) {
          Object.defineProperty(this, state, { value: undefined, enumerable: true, configurable: true, writable: true });
        }
        Base.call(this, this._streamOptions);
        if (this._writableState) this._writableState.decodeStrings = false;
        return this[name];
      },
      set(value) {
        Object.defineProperty(this, name, { value, enumerable: true, configurable: true, writable: true });
      },
    });
  }
  return LazyStream;
};
