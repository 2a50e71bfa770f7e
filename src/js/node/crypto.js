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
const kHandle = Symbol("kHandle");
const kFinalized = Symbol("kFinalized");

function invalidDigest(algorithm) {
  if (typeof algorithm !== "string") return invalidArgType("algorithm", "of type string", algorithm);
  // workerd's message (from its C++) has no code.
  return new Error("Digest method not supported");
}

function finalizedError(kind) {
  const error = new Error(`${kind} context has already been finalized.`);
  error.name = "OperationError";
  return error;
}

/**
 * The native state of one running hash or HMAC (workerd's HashHandle / HmacHandle, kept under
 * the instance's kHandle symbol as there): its digest() ends it, and update/copy after that
 * throw workerd's "already been finalized" error.
 */
class DigestHandle {
  #id;
  #kind;
  #digest;
  constructor(id, kind) {
    this.#id = id;
    this.#kind = kind;
    unfinished.register(this, id, this);
  }
  update(bytes) {
    if (this.#id === undefined) throw finalizedError(this.#kind);
    ops.nodeHashUpdate(this.#id, bytes);
    return true;
  }
  /** The digest; asked again, the same bytes (workerd caches them). */
  digest() {
    if (this.#id !== undefined) {
      const id = this.#id;
      this.#id = undefined;
      unfinished.unregister(this);
      this.#digest = ops.nodeHashDigest(id);
    }
    return new Uint8Array(this.#digest);
  }
  copy() {
    if (this.#id === undefined) throw finalizedError(this.#kind);
    return new DigestHandle(ops.nodeHashCopy(this.#id), this.#kind);
  }
}

function hashFinalized() {
  return nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
}

function validateOutputLength(options) {
  const length = options !== null && typeof options === "object" ? options.outputLength : undefined;
  if (length !== undefined) util.validateUint32(length, "options.outputLength");
  return length;
}

// Function constructors, as workerd's (and Node's): callable without `new`.
function Hash(algorithm, options) {
  if (!(this instanceof Hash)) return new Hash(algorithm, options);
  const outputLength = validateOutputLength(options);
  let canonical;
  if (algorithm instanceof DigestHandle) {
    this[kHandle] = algorithm;
  } else {
    if (typeof algorithm !== "string") throw invalidArgType("algorithm", "of type string", algorithm);
    canonical = digestName(algorithm);
    if (canonical === undefined) throw invalidDigest(algorithm);
    if (outputLength !== undefined && outputLength !== DIGEST_SIZES[canonical]) {
      throw nodeError(Error, "ERR_OSSL_EVP_NOT_XOF_OR_INVALID_LENGTH", "Output length is not supported for this digest (it is not an XOF)");
    }
    this[kHandle] = new DigestHandle(ops.nodeHashCreate(canonical), "Hash");
  }
  this[kFinalized] = false;
  LazyTransform.call(this, options);
}
Object.setPrototypeOf(Hash.prototype, LazyTransform.prototype);
Object.setPrototypeOf(Hash, LazyTransform);

Hash.prototype.copy = function copy(options) {
  if (this[kFinalized]) throw hashFinalized();
  return new Hash(this[kHandle].copy(), options);
};

Hash.prototype.update = function update(data, inputEncoding) {
  if (this[kFinalized]) throw hashFinalized();
  if (typeof data !== "string" && !ArrayBuffer.isView(data)) throw invalidArgType("data", "of type string or an instance of Buffer, TypedArray, or DataView", data);
  this[kHandle].update(toBuffer(data, inputEncoding));
  return this;
};

Hash.prototype.digest = function digest(outputEncoding) {
  if (this[kFinalized]) throw hashFinalized();
  const bytes = this[kHandle].digest();
  this[kFinalized] = true;
  return encodeOutput(bytes, outputEncoding);
};

Hash.prototype._transform = function _transform(chunk, encoding, callback) {
  this[kHandle].update(toBuffer(chunk, encoding));
  callback();
};

Hash.prototype._flush = function _flush(callback) {
  this.push(Buffer.from(this[kHandle].digest()));
  callback();
};

function Hmac(algorithm, key, options) {
  if (!(this instanceof Hmac)) return new Hmac(algorithm, key, options);
  if (typeof algorithm !== "string") throw invalidArgType("hmac", "of type string", algorithm);
  const canonical = digestName(algorithm);
  const bytes = keys.secretBytes(key, "key", options?.encoding);
  if (canonical === undefined || canonical.startsWith("sha512-")) throw invalidDigest(algorithm);
  this[kHandle] = new DigestHandle(ops.nodeHashCreate(canonical, bytes), "HMAC");
  this[kFinalized] = false;
  LazyTransform.call(this, options);
}
Object.setPrototypeOf(Hmac.prototype, LazyTransform.prototype);
Object.setPrototypeOf(Hmac, LazyTransform);

Hmac.prototype.update = Hash.prototype.update;
Hmac.prototype.digest = function digest(outputEncoding) {
  // As in Node, a second digest() answers an empty result.
  if (this[kFinalized]) return encodeOutput(Buffer.alloc(0), outputEncoding);
  this[kFinalized] = true;
  return encodeOutput(this[kHandle].digest(), outputEncoding);
};
Hmac.prototype._transform = Hash.prototype._transform;
Hmac.prototype._flush = Hash.prototype._flush;

exports.Hash = Hash;
exports.Hmac = Hmac;
exports.createHash = (algorithm, options) => new Hash(algorithm, options);
exports.createHmac = (algorithm, key, options) => new Hmac(algorithm, key, options);

/** One-shot hash: hex by default, as Node's crypto.hash(). */
exports.hash = function hash(algorithm, data, outputEncoding = "hex") {
  util.validateString(algorithm, "algorithm");
  util.validateString(outputEncoding, "outputEncoding");
  if (typeof data !== "string" && !ArrayBuffer.isView(data)) throw invalidArgType("data", "of type string or an instance of Buffer, TypedArray, or DataView", data);
  return new Hash(algorithm).update(data).digest(outputEncoding === "buffer" ? undefined : outputEncoding);
};

exports.getHashes = () => [...util.DIGESTS, "RSA-MD5", "RSA-SHA1", "RSA-SHA224", "RSA-SHA256", "RSA-SHA384", "RSA-SHA512"];
exports.getCiphers = () => [...ciphers.CIPHERS];
exports.getCurves = () => ["secp224r1", "prime256v1", "secp384r1", "secp521r1"];

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

/** A digest name for PBKDF2/HKDF: canonical, or a TypeError naming it (workerd: "Invalid digest"). */
function kdfDigest(digest) {
  const canonical = digestName(digest);
  if (canonical === undefined) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${digest}`);
  return canonical;
}

function byteSource(value, name) {
  if (typeof value === "string" || ArrayBuffer.isView(value) || value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)) return toBuffer(value, undefined, name);
  throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", value);
}

function pbkdf2Check(password, salt, iterations, keylen, digest) {
  util.validateString(digest, "digest");
  const params = { password: keys.secretBytes(password, "password"), salt: byteSource(salt, "salt") };
  util.validateInt32(iterations, "iterations", 1);
  util.validateInt32(keylen, "keylen", 0);
  return { ...params, iterations, length: keylen, digest };
}

function pbkdf2Bytes({ password, salt, iterations, length, digest }) {
  return Buffer.from(native("node", "pbkdf2", { hash: kdfDigest(digest), password, salt, iterations, length }));
}

exports.pbkdf2Sync = function pbkdf2Sync(password, salt, iterations, keylen, digest) {
  return pbkdf2Bytes(pbkdf2Check(password, salt, iterations, keylen, digest));
};

exports.pbkdf2 = function pbkdf2(password, salt, iterations, keylen, digest, callback) {
  if (typeof digest === "function") util.validateString(undefined, "digest");
  checkFunction(callback, "callback");
  const params = pbkdf2Check(password, salt, iterations, keylen, digest);
  later(callback, () => pbkdf2Bytes(params));
};

/** Largest scrypt working memory accepted, whatever maxmem says (it lives outside the V8 heap). */
const SCRYPT_MEMORY_CAP = 256 * 1024 * 1024;
const SCRYPT_DEFAULTS = { N: 16384, r: 8, p: 1, maxmem: 32 * 1024 * 1024 };
const K_MAX_LENGTH = require("node:buffer").kMaxLength;

/** workerd's argument checks: bytes, keylen, and each of N/cost, r/blockSize, p/parallelization once. */
function scryptCheck(password, salt, keylen, options) {
  const params = { password: keys.secretBytes(password, "password"), salt: byteSource(salt, "salt") };
  util.validateInteger(keylen, "keylen", 0, K_MAX_LENGTH);
  let { N, r, p, maxmem } = SCRYPT_DEFAULTS;
  if (options !== undefined && options !== null) {
    const pick = (short, long, current) => {
      let value = current;
      if (options[short] !== undefined) value = util.validateUint32(options[short], short);
      if (options[long] !== undefined) {
        if (options[short] !== undefined) throw util.invalidArgValue(long, options[long]);
        value = util.validateUint32(options[long], long);
      }
      return value;
    };
    N = pick("N", "cost", N);
    r = pick("r", "blockSize", r);
    p = pick("p", "parallelization", p);
    if (options.maxmem !== undefined) maxmem = util.validateInteger(options.maxmem, "maxmem", 0);
    N ||= SCRYPT_DEFAULTS.N;
    r ||= SCRYPT_DEFAULTS.r;
    p ||= SCRYPT_DEFAULTS.p;
    maxmem ||= SCRYPT_DEFAULTS.maxmem;
  }
  return { ...params, N, r, p, maxmem, length: keylen };
}

function scryptBytes({ password, salt, N, r, p, maxmem, length }) {
  // OpenSSL's rules, which workerd applies: N a power of two above 1 and below 2^(16r), p·r
  // under 2^30, and the table (N + 2 blocks of 128·r bytes) with the p lanes within maxmem.
  const memory = 128 * r * (N + 2 + p);
  let reason;
  if (N < 2 || (N & (N - 1)) !== 0) reason = "N must be a power of 2 greater than 1";
  else if (r * 16 < 53 && N >= 2 ** (r * 16)) reason = "N must be less than 2^(16 * r)";
  else if (p * r > 2 ** 30 - 1) reason = "p * r must be less than 2^30";
  else if (memory > maxmem) reason = "memory limit exceeded";
  else if (memory > SCRYPT_MEMORY_CAP) reason = "workerbox's 256 MiB memory limit exceeded";
  if (reason !== undefined) throw nodeError(RangeError, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS", `Invalid scrypt params: ${reason}`);
  return Buffer.from(native("node", "scrypt", { password, salt, N, r, p, length }, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS"));
}

exports.scryptSync = (password, salt, keylen, options) => scryptBytes(scryptCheck(password, salt, keylen, options));

exports.scrypt = function scrypt(password, salt, keylen, options, callback) {
  if (callback === undefined) [callback, options] = [options, undefined];
  const params = scryptCheck(password, salt, keylen, options);
  checkFunction(callback, "callback");
  later(callback, () => scryptBytes(params));
};

function hkdfCheck(digest, ikm, salt, info, keylen) {
  util.validateString(digest, "digest");
  let key;
  if (ikm instanceof keys.KeyObject) key = keys.secretBytes(ikm, "ikm");
  else if (typeof CryptoKey === "function" && ikm instanceof CryptoKey) key = keys.secretBytes(ikm, "ikm");
  else if (typeof ikm === "string" || ArrayBuffer.isView(ikm) || ikm instanceof ArrayBuffer) key = toBuffer(ikm, undefined, "ikm");
  else throw invalidArgType("ikm", "of type string or an instance of SecretKeyObject, ArrayBuffer, TypedArray, DataView, or Buffer", ikm);
  const params = { key, salt: byteSource(salt, "salt"), info: byteSource(info, "info") };
  util.validateInteger(keylen, "length", 0, K_MAX_LENGTH);
  if (params.info.length > 1024) throw util.outOfRange("info", "must not contain more than 1024 bytes", params.info.length);
  return { ...params, digest, length: keylen };
}

function hkdfBytes({ digest, key, salt, info, length }) {
  const hash = kdfDigest(digest);
  if (length > 255 * DIGEST_SIZES[hash]) throw nodeError(RangeError, "ERR_CRYPTO_INVALID_KEYLEN", "Invalid key length");
  const out = native("node", "hkdf", { hash, key, salt, info, length });
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
}

exports.hkdfSync = (digest, ikm, salt, info, keylen) => hkdfBytes(hkdfCheck(digest, ikm, salt, info, keylen));

exports.hkdf = function hkdf(digest, ikm, salt, info, keylen, callback) {
  const params = hkdfCheck(digest, ikm, salt, info, keylen);
  checkFunction(callback, "callback");
  later(callback, () => hkdfBytes(params));
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

// RSA encryption with workerd's defaults (PKCS #1 v1.5 padding, SHA-256 for OAEP), options read
// from the key argument (a KeyObject's own properties too, as workerd does). OAEP runs through
// crypto.subtle's RSA-OAEP; PKCS #1 v1.5 and no padding natively (webcrypto/node.rs).
function rsaEncryption(isPrivate, encrypt, keyName) {
  return function (key, buffer) {
    util.checkMissing([key, buffer], [keyName, "buffer"]);
    const wantType = isPrivate ? "private" : "public";
    let object;
    if (key instanceof keys.KeyObject || (typeof CryptoKey === "function" && key instanceof CryptoKey)) {
      if (key.type !== wantType) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type ${key.type}, expected ${wantType}.`);
      object = key instanceof keys.KeyObject ? key : keys.KeyObject.from(key);
    } else {
      object = isPrivate ? keys.createPrivateKey(key) : keys.createPublicKey(key);
    }
    if (object.asymmetricKeyType !== "rsa") throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", "The key is not an RSA key");
    const opts = key !== null && typeof key === "object" ? key : {};
    const { padding = exports.constants.RSA_PKCS1_PADDING, oaepHash = "sha256", oaepLabel, encoding = "utf8" } = opts;
    if (typeof padding !== "number") throw invalidArgType("options.padding", "of type number", padding);
    util.validateString(oaepHash, "options.oaepHash");
    const data = typeof buffer === "string" ? Buffer.from(buffer, encoding) : toBuffer(buffer, undefined, "buffer");
    const der = object[keys.kState].der;
    if (padding === exports.constants.RSA_PKCS1_OAEP_PADDING && encrypt !== isPrivate) {
      const params = { name: "RSA-OAEP", hash: webDigest(oaepHash, "options.oaepHash"), key: der, data };
      if (oaepLabel !== undefined) params.label = typeof oaepLabel === "string" ? Buffer.from(oaepLabel, encoding) : toBuffer(oaepLabel, undefined, "options.oaepLabel");
      return Buffer.from(native("subtle", encrypt ? "encrypt" : "decrypt", params, encrypt ? "ERR_CRYPTO_OPERATION_FAILED" : "ERR_OSSL_RSA_OAEP_DECODING_ERROR"));
    }
    if (padding !== exports.constants.RSA_PKCS1_PADDING && padding !== exports.constants.RSA_NO_PADDING) {
      throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `Unsupported RSA padding ${padding}`);
    }
    return Buffer.from(native("node", "rsaCipher", { key: der, private: isPrivate, encrypt, padding, data }));
  };
}
exports.publicEncrypt = rsaEncryption(false, true, "key");
exports.privateDecrypt = rsaEncryption(true, false, "privateKey");
exports.privateEncrypt = rsaEncryption(true, true, "privateKey");
exports.publicDecrypt = rsaEncryption(false, false, "key");

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
  try {
    return Buffer.from(native("subtle", "deriveBits", { kind, namedCurve: mine.curve, key: mine.der, public: theirs.der }));
  } catch (error) {
    // workerd's message (it derives on no EC curve; here P-256 and P-384 work).
    throw new Error(`Failed to derive shared secret: ${error.message}`);
  }
};

// checkPrime(Sync) and generatePrime(Sync): internal/crypto_prime.js.
Object.assign(exports, require("node:internal/crypto_prime"));

// X509Certificate and Certificate (SPKAC): internal/crypto_x509.js.
const x509 = require("node:internal/crypto_x509");
exports.X509Certificate = x509.X509Certificate;
exports.Certificate = x509.Certificate;

// DiffieHellman, DiffieHellmanGroup and ECDH: internal/crypto_dh.js.
const dh = require("node:internal/crypto_dh");
Object.assign(exports, {
  DiffieHellman: dh.DiffieHellman,
  DiffieHellmanGroup: dh.DiffieHellmanGroup,
  createDiffieHellman: dh.createDiffieHellman,
  createDiffieHellmanGroup: dh.createDiffieHellmanGroup,
  getDiffieHellman: dh.getDiffieHellman,
  ECDH: dh.ECDH,
  createECDH: dh.createECDH,
});

// The IV-less createCipher/createDecipher/Cipher/Decipher (removed from Node 22): workerd keeps
// them as ERR_METHOD_NOT_IMPLEMENTED stubs until remove_nodejs_compat_eol_v22.
if (!internals.compat?.enabled.includes("remove_nodejs_compat_eol_v22")) {
  const { notImplemented } = require("node:internal/errors");
  for (const name of ["createCipher", "createDecipher", "Cipher", "Decipher"]) exports[name] = notImplemented(name);
}
