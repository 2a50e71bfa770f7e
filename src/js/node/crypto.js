// node:crypto: hashes and HMACs (incremental, copyable: native state by id, see
// ops/node_crypto.rs; Transform streams too, as in Node), randomness, timingSafeEqual, PBKDF2 / scrypt / HKDF, and the exports
// gathered from internal/crypto_keys.js (KeyObject, key generation), crypto_sign.js and
// crypto_cipher.js. `webcrypto` / `subtle` are the runtime's own `crypto`.
const { Buffer } = require("node:buffer");
const util = require("node:internal/crypto_util");
const keys = require("node:internal/crypto_keys");
const signing = require("node:internal/crypto_sign");
const ciphers = require("node:internal/crypto_cipher");
const { nodeError, invalidArgType, toBuffer, encodeOutput, native, webDigest, digestName, checkInteger, checkFunction, later, DIGEST_SIZES } = util;
const stream = require("node:stream");
const LazyTransform = util.lazyStream(stream.Transform);

// A Hash or Hmac collected before digest() frees its native state.
const unfinished = new internals.FinalizationRegistry((id) => ops.nodeHashDrop(id));

function invalidDigest(algorithm, hmac) {
  if (typeof algorithm !== "string") return invalidArgType(hmac ? "hmac" : "algorithm", "of type string", algorithm);
  // Node's createHash answers OpenSSL's message without a code; workerbox adds the code.
  return hmac ? nodeError(TypeError, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${algorithm}`) : nodeError(Error, "ERR_CRYPTO_INVALID_DIGEST", "Digest method not supported");
}

function track(object, id) {
  unfinished.register(object, id, object);
  return id;
}

class Hash extends LazyTransform {
  #id;
  #algorithm;
  constructor(algorithm, options) {
    super(options);
    const canonical = algorithm instanceof Hash ? algorithm.#algorithm : digestName(algorithm);
    if (canonical === undefined) throw invalidDigest(algorithm);
    if (options?.outputLength !== undefined && options.outputLength !== DIGEST_SIZES[canonical]) {
      throw nodeError(Error, "ERR_OSSL_EVP_NOT_XOF_OR_INVALID_LENGTH", "Output length is not supported for this digest (it is not an XOF)");
    }
    this.#algorithm = canonical;
    // `new Hash(hash)` is how copy() makes its object; the id is replaced below.
    this.#id = algorithm instanceof Hash ? undefined : track(this, ops.nodeHashCreate(canonical));
  }

  static #copyOf(source, id) {
    const copy = new Hash(source);
    copy.#id = track(copy, id);
    return copy;
  }

  update(data, inputEncoding) {
    if (this.#id === undefined) throw nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
    ops.nodeHashUpdate(this.#id, toBuffer(data, inputEncoding));
    return this;
  }

  digest(outputEncoding) {
    if (this.#id === undefined) throw nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
    const id = this.#id;
    this.#id = undefined;
    unfinished.unregister(this);
    return encodeOutput(ops.nodeHashDigest(id), outputEncoding);
  }

  copy(_options) {
    if (this.#id === undefined) throw nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
    return Hash.#copyOf(this, ops.nodeHashCopy(this.#id));
  }

  _transform(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }

  _flush(callback) {
    this.push(this.digest());
    callback();
  }
}

class Hmac extends LazyTransform {
  #id;
  #done = false;
  constructor(algorithm, key, options) {
    super(options);
    const canonical = digestName(algorithm);
    if (canonical === undefined || canonical.startsWith("sha512-")) throw invalidDigest(algorithm, true);
    const bytes = keys.secretBytes(key, "key", options?.encoding);
    this.#id = track(this, ops.nodeHashCreate(canonical, bytes));
  }

  update(data, inputEncoding) {
    if (this.#done) throw nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
    ops.nodeHashUpdate(this.#id, toBuffer(data, inputEncoding));
    return this;
  }

  digest(outputEncoding) {
    // As in Node, a second digest() answers an empty result.
    if (this.#done) return encodeOutput(Buffer.alloc(0), outputEncoding);
    this.#done = true;
    unfinished.unregister(this);
    return encodeOutput(ops.nodeHashDigest(this.#id), outputEncoding);
  }

  _transform(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }

  _flush(callback) {
    this.push(this.digest());
    callback();
  }
}

exports.Hash = Hash;
exports.Hmac = Hmac;
exports.createHash = (algorithm, options) => new Hash(algorithm, options);
exports.createHmac = (algorithm, key, options) => new Hmac(algorithm, key, options);

/** One-shot hash: hex by default, as Node's crypto.hash(). */
exports.hash = function hash(algorithm, data, outputEncoding = "hex") {
  if (typeof data !== "string" && !ArrayBuffer.isView(data)) throw invalidArgType("data", "of type string or an instance of Buffer, TypedArray, or DataView", data);
  return new Hash(algorithm).update(data).digest(outputEncoding === "buffer" ? undefined : outputEncoding);
};

exports.getHashes = () => [...util.DIGESTS, "RSA-MD5", "RSA-SHA1", "RSA-SHA224", "RSA-SHA256", "RSA-SHA384", "RSA-SHA512"];
exports.getCiphers = () => [...ciphers.CIPHERS];
exports.getCurves = () => ["prime256v1", "secp384r1"];

// --- Randomness -------------------------------------------------------------------------------

const MAX_RANDOM = 2 ** 31 - 1;

function fillRandom(view, offset, size) {
  const bytes = new Uint8Array(view.buffer, view.byteOffset + offset, size);
  ops.fillRandom(bytes);
}

exports.randomBytes = function randomBytes(size, callback) {
  checkInteger(size, "size", 0, MAX_RANDOM);
  if (callback !== undefined) checkFunction(callback, "callback");
  const buffer = Buffer.alloc(size);
  if (size > 0) ops.fillRandom(buffer);
  if (callback === undefined) return buffer;
  queueMicrotask(() => callback(null, buffer));
};
exports.pseudoRandomBytes = exports.randomBytes;
exports.prng = exports.randomBytes;
exports.rng = exports.randomBytes;

function fillArgs(buffer, offset, size) {
  if (!ArrayBuffer.isView(buffer) && !(buffer instanceof ArrayBuffer)) throw invalidArgType("buf", "an instance of ArrayBuffer or ArrayBufferView", buffer);
  const view = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const element = ArrayBuffer.isView(buffer) && buffer.BYTES_PER_ELEMENT ? buffer.BYTES_PER_ELEMENT : 1;
  const start = checkInteger(offset ?? 0, "offset", 0, view.length) * element;
  const length = size === undefined ? view.length - start : checkInteger(size, "size", 0, view.length - start) * element;
  if (start + length > view.length) throw util.outOfRange("size + offset", `<= ${view.length}`, start + length);
  return [view, start, length];
}

exports.randomFillSync = function randomFillSync(buffer, offset, size) {
  const [view, start, length] = fillArgs(buffer, offset, size);
  if (length > 0) fillRandom(view, start, length);
  return buffer;
};

exports.randomFill = function randomFill(buffer, offset, size, callback) {
  if (typeof offset === "function") [callback, offset, size] = [offset, undefined, undefined];
  else if (typeof size === "function") [callback, size] = [size, undefined];
  checkFunction(callback, "callback");
  const [view, start, length] = fillArgs(buffer, offset, size);
  later(callback, () => {
    if (length > 0) fillRandom(view, start, length);
    return buffer;
  });
};

/** A uniform integer in [min, max), by rejection sampling over 48 random bits (as Node). */
exports.randomInt = function randomInt(min, max, callback) {
  if (typeof max === "function" || max === undefined) [callback, max, min] = [max, min, 0];
  if (!Number.isSafeInteger(min)) throw invalidArgType("min", "a safe integer", min);
  if (!Number.isSafeInteger(max)) throw invalidArgType("max", "a safe integer", max);
  if (max <= min) throw util.outOfRange("max", `greater than the value of "min" (${min})`, max);
  const range = max - min;
  if (range > 2 ** 48 - 1) throw util.outOfRange("max - min", "<= 281474976710655", range);
  if (callback !== undefined) checkFunction(callback, "callback");
  const limit = 2 ** 48 - (2 ** 48 % range);
  const bytes = new Uint8Array(6);
  let value;
  do {
    ops.fillRandom(bytes);
    value = bytes.reduce((n, b) => n * 256 + b, 0);
  } while (value >= limit);
  const result = min + (value % range);
  if (callback === undefined) return result;
  queueMicrotask(() => callback(null, result));
};

exports.randomUUID = function randomUUID(options) {
  if (options !== undefined && (options === null || typeof options !== "object")) throw invalidArgType("options", "of type object", options);
  return globalThis.crypto.randomUUID();
};

exports.getRandomValues = (array) => globalThis.crypto.getRandomValues(array);

/** Compares two equal-length byte sequences in time independent of their contents. */
exports.timingSafeEqual = function timingSafeEqual(a, b) {
  if (!ArrayBuffer.isView(a) && !(a instanceof ArrayBuffer)) throw invalidArgType("buf1", "an instance of ArrayBuffer, Buffer, TypedArray, or DataView", a);
  if (!ArrayBuffer.isView(b) && !(b instanceof ArrayBuffer)) throw invalidArgType("buf2", "an instance of ArrayBuffer, Buffer, TypedArray, or DataView", b);
  const x = toBuffer(a);
  const y = toBuffer(b);
  // workerd's error here is a plain TypeError (Node's: a RangeError with ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH).
  if (x.length !== y.length) throw new TypeError("Input buffers must have the same byte length.");
  let difference = 0;
  for (let i = 0; i < x.length; i++) difference |= x[i] ^ y[i];
  return difference === 0;
};

// --- Key derivation ---------------------------------------------------------------------------

function pbkdf2Bytes(password, salt, iterations, keylen, digest) {
  const hash = webDigest(digest);
  const params = { hash, key: keys.secretBytes(password, "password"), salt: toBuffer(salt, undefined, "salt"), iterations, length: keylen * 8 };
  return Buffer.from(native("subtle", "pbkdf2", params));
}

function pbkdf2Args(iterations, keylen, digest) {
  checkInteger(iterations, "iterations", 1);
  checkInteger(keylen, "keylen", 0);
  if (typeof digest !== "string") throw invalidArgType("digest", "of type string", digest);
}

exports.pbkdf2Sync = function pbkdf2Sync(password, salt, iterations, keylen, digest) {
  pbkdf2Args(iterations, keylen, digest);
  return pbkdf2Bytes(password, salt, iterations, keylen, digest);
};

exports.pbkdf2 = function pbkdf2(password, salt, iterations, keylen, digest, callback) {
  checkFunction(callback, "callback");
  pbkdf2Args(iterations, keylen, digest);
  webDigest(digest);
  later(callback, () => pbkdf2Bytes(password, salt, iterations, keylen, digest));
};

/** Largest scrypt working memory accepted, whatever maxmem says (it lives outside the V8 heap). */
const SCRYPT_MEMORY_CAP = 256 * 1024 * 1024;

function scryptBytes(password, salt, keylen, options = {}) {
  checkInteger(keylen, "keylen", 0);
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  const N = options.N ?? options.cost ?? 16384;
  const r = options.r ?? options.blockSize ?? 8;
  const p = options.p ?? options.parallelization ?? 1;
  const maxmem = options.maxmem ?? 32 * 1024 * 1024;
  for (const [name, value] of [["N", N], ["r", r], ["p", p]]) checkInteger(value, name, 1);
  // OpenSSL's rule, which Node applies: the table (N + 2 blocks of 128·r bytes) and the p
  // lanes must fit in maxmem, and p·r stays under 2^30.
  const memory = 128 * r * (N + 2 + p);
  if (N < 2 || (N & (N - 1)) !== 0 || memory > maxmem || memory > SCRYPT_MEMORY_CAP || p * r > 2 ** 30 - 1) {
    const reason = memory > SCRYPT_MEMORY_CAP ? "workerbox's 256 MiB memory limit exceeded" : memory > maxmem ? "memory limit exceeded" : "N must be a power of 2 greater than 1";
    throw nodeError(RangeError, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS", `Invalid scrypt params: ${reason}`);
  }
  const params = { password: keys.secretBytes(password, "password"), salt: toBuffer(salt, undefined, "salt"), N, r, p, length: keylen };
  return Buffer.from(native("node", "scrypt", params, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS"));
}

exports.scryptSync = (password, salt, keylen, options) => scryptBytes(password, salt, keylen, options ?? {});

exports.scrypt = function scrypt(password, salt, keylen, options, callback) {
  if (typeof options === "function") [callback, options] = [options, {}];
  checkFunction(callback, "callback");
  later(callback, () => scryptBytes(password, salt, keylen, options ?? {}));
};

function hkdfBytes(digest, ikm, salt, info, keylen) {
  const hash = webDigest(digest);
  checkInteger(keylen, "keylen", 0);
  const infoBytes = toBuffer(info, undefined, "info");
  if (infoBytes.length > 1024) throw util.outOfRange("info", "must not contain more than 1024 bytes", infoBytes.length);
  if (keylen > 255 * DIGEST_SIZES[digestName(digest)]) throw nodeError(RangeError, "ERR_CRYPTO_INVALID_KEYLEN", "Invalid key length");
  const out = native("subtle", "hkdf", { hash, key: keys.secretBytes(ikm, "ikm"), salt: toBuffer(salt, undefined, "salt"), info: infoBytes, length: keylen * 8 });
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

exports.hkdfSync = hkdfBytes;

exports.hkdf = function hkdf(digest, ikm, salt, info, keylen, callback) {
  checkFunction(callback, "callback");
  webDigest(digest);
  later(callback, () => hkdfBytes(digest, ikm, salt, info, keylen));
};

// --- The rest ---------------------------------------------------------------------------------

Object.assign(exports, {
  KeyObject: keys.KeyObject,
  SecretKeyObject: keys.SecretKeyObject,
  PublicKeyObject: keys.PublicKeyObject,
  PrivateKeyObject: keys.PrivateKeyObject,
  createSecretKey: keys.createSecretKey,
  createPublicKey: keys.createPublicKey,
  createPrivateKey: keys.createPrivateKey,
  generateKeyPair: keys.generateKeyPair,
  generateKeyPairSync: keys.generateKeyPairSync,
  generateKey: keys.generateKey,
  generateKeySync: keys.generateKeySync,
  Sign: signing.Sign,
  Verify: signing.Verify,
  createSign: signing.createSign,
  createVerify: signing.createVerify,
  sign: signing.sign,
  verify: signing.verify,
  Cipheriv: ciphers.Cipheriv,
  Decipheriv: ciphers.Decipheriv,
  createCipheriv: ciphers.createCipheriv,
  createDecipheriv: ciphers.createDecipheriv,
  getCipherInfo: ciphers.getCipherInfo,
});

exports.webcrypto = globalThis.crypto;
exports.subtle = globalThis.crypto.subtle;
exports.getFips = () => 0;
exports.setFips = (value) => {
  if (value) throw nodeError(Error, "ERR_CRYPTO_FIPS_FORCED", "Cannot set FIPS mode in a non-FIPS build.");
};
exports.secureHeapUsed = () => ({ total: 0, min: 0, used: 0, utilization: 0 });

exports.constants = Object.freeze({
  OPENSSL_VERSION_NUMBER: 0,
  SSL_OP_ALL: 0x80000850,
  RSA_PKCS1_PADDING: 1,
  RSA_NO_PADDING: 3,
  RSA_PKCS1_OAEP_PADDING: 4,
  RSA_X931_PADDING: 5,
  RSA_PKCS1_PSS_PADDING: 6,
  RSA_PSS_SALTLEN_DIGEST: -1,
  RSA_PSS_SALTLEN_MAX_SIGN: -2,
  RSA_PSS_SALTLEN_AUTO: -2,
  POINT_CONVERSION_COMPRESSED: 2,
  POINT_CONVERSION_UNCOMPRESSED: 4,
  POINT_CONVERSION_HYBRID: 6,
  defaultCoreCipherList: "",
  defaultCipherList: "",
});

// RSA encryption: OAEP only (crypto.subtle's RSA-OAEP). Node 20 refuses PKCS #1 v1.5 padding in
// privateDecrypt too (CVE-2023-46809); raw RSA (no padding) is not offered.
function rsaEncryption(encrypt, name) {
  return function (key, buffer) {
    const opts = key !== null && typeof key === "object" && !ArrayBuffer.isView(key) && !(key instanceof keys.KeyObject) ? key : {};
    const object = keys.prepareKey(key, encrypt);
    if (object.asymmetricKeyType !== "rsa") throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `${name} needs an RSA key`);
    const padding = opts.padding ?? exports.constants.RSA_PKCS1_OAEP_PADDING;
    if (padding !== exports.constants.RSA_PKCS1_OAEP_PADDING) {
      throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `${name}: only RSA_PKCS1_OAEP_PADDING is supported by workerbox`);
    }
    const params = { name: "RSA-OAEP", hash: webDigest(opts.oaepHash ?? "sha1", "options.oaepHash"), key: object[keys.kState].der, data: toBuffer(buffer, opts.encoding, "buffer") };
    if (opts.oaepLabel !== undefined) params.label = toBuffer(opts.oaepLabel, undefined, "options.oaepLabel");
    return Buffer.from(native("subtle", encrypt ? "encrypt" : "decrypt", params, encrypt ? "ERR_CRYPTO_OPERATION_FAILED" : "ERR_OSSL_RSA_OAEP_DECODING_ERROR"));
  };
}
exports.publicEncrypt = rsaEncryption(true, "publicEncrypt");
exports.privateDecrypt = rsaEncryption(false, "privateDecrypt");

/** The shared secret of an ECDH (P-256/P-384) or X25519 private key and a peer's public key. */
exports.diffieHellman = function diffieHellman(options) {
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  const { privateKey, publicKey } = options;
  if (!(privateKey instanceof keys.KeyObject) || privateKey.type !== "private") throw invalidArgType("options.privateKey", "a private KeyObject", privateKey);
  if (!(publicKey instanceof keys.KeyObject) || publicKey.type !== "public") throw invalidArgType("options.publicKey", "a public KeyObject", publicKey);
  const mine = privateKey[keys.kState];
  const theirs = publicKey[keys.kState];
  if (mine.kind !== theirs.kind || mine.curve !== theirs.curve) {
    throw nodeError(Error, "ERR_CRYPTO_INCOMPATIBLE_KEY", "Incompatible key types for Diffie-Hellman: the keys must be of the same type");
  }
  const kind = { ec: "EC", x25519: "X25519" }[mine.kind];
  if (kind === undefined) throw nodeError(Error, "ERR_CRYPTO_INCOMPATIBLE_KEY", `Diffie-Hellman is not supported for ${mine.kind} keys`);
  return Buffer.from(native("subtle", "deriveBits", { kind, namedCurve: mine.curve, key: mine.der, public: theirs.der }));
};

// checkPrime(Sync) and generatePrime(Sync): internal/crypto_prime.js.
Object.assign(exports, require("node:internal/crypto_prime"));

// Not provided (see docs/compatibility.md): DiffieHellman groups, ECDH objects, privateEncrypt/publicDecrypt,
// X509Certificate, Certificate, createCipher/createDecipher (deprecated, no IV).
for (const name of ["createDiffieHellman", "createDiffieHellmanGroup", "getDiffieHellman", "createECDH", "privateEncrypt", "publicDecrypt"]) {
  exports[name] = function () {
    throw nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", `The ${name}() method is not implemented in workerbox`);
  };
}

// The IV-less createCipher/createDecipher/Cipher/Decipher (removed from Node 22): workerd keeps
// them as ERR_METHOD_NOT_IMPLEMENTED stubs until remove_nodejs_compat_eol_v22.
if (!internals.compat?.enabled.includes("remove_nodejs_compat_eol_v22")) {
  const { notImplemented } = require("node:internal/errors");
  for (const name of ["createCipher", "createDecipher", "Cipher", "Decipher"]) exports[name] = notImplemented(name);
}
