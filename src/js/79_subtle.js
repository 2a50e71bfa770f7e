// crypto.subtle (Web Crypto's SubtleCrypto), CryptoKey and crypto.DigestStream. This file does
// what the spec does in JS terms — algorithm normalisation, argument and usage checks, JWK
// metadata, key length rules — and hands the cryptography to native code through
// `ops.subtleCall` (src/runtime/webcrypto). A CryptoKey keeps its key material in a private
// slot: raw bytes for secret keys, PKCS #8 DER for private keys, SPKI DER for public keys.

const { DOMException } = internals;
// Per-algorithm facts, the JWK checks and base64url: 78_subtle_facts.js.
const { RSA, asymmetricKind, pairUsages, secretUsages, HASH_BLOCK_BITS, checkCurve, jwkAlg, checkJwk, base64url } = internals.subtleFacts;

const CRYPTO_ERRORS = new Set(["NotSupportedError", "DataError", "OperationError", "InvalidAccessError"]);

/** Calls a native crypto operation, turning its named errors into DOMExceptions. */
function native(op, params) {
  try {
    return ops.subtleCall(op, params);
  } catch (error) {
    if (error && CRYPTO_ERRORS.has(error.name)) throw new DOMException(error.message, error.name);
    throw error;
  }
}

const fail = (name, message) => new DOMException(message, name);

/** A copy of a BufferSource's bytes, as a Uint8Array. */
function bufferSource(value, what) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  if (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer) return new Uint8Array(value.slice(0));
  throw new TypeError(`${what} must be an ArrayBuffer or an ArrayBufferView`);
}

/** Like bufferSource, without the copy: for native calls that read the bytes before returning. */
function bufferView(value, what) {
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)) return new Uint8Array(value);
  throw new TypeError(`${what} must be an ArrayBuffer or an ArrayBufferView`);
}

/** The ArrayBuffer behind a Uint8Array returned by native code (which owns a whole buffer). */
const arrayBuffer = (bytes) => (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer);

// ---------------------------------------------------------------------------------------------
// Algorithm normalisation (WebCrypto §18.4): which algorithms each operation accepts, and the
// parameter dictionary each one reads.

const HASHES = ["SHA-1", "SHA-256", "SHA-384", "SHA-512"];
const AES = ["AES-CTR", "AES-CBC", "AES-GCM", "AES-KW"];

const SUPPORTED = {
  digest: { "SHA-1": null, "SHA-256": null, "SHA-384": null, "SHA-512": null, MD5: null },
  generateKey: {
    "RSASSA-PKCS1-v1_5": "RsaHashedKeyGenParams", "RSA-PSS": "RsaHashedKeyGenParams", "RSA-OAEP": "RsaHashedKeyGenParams",
    ECDSA: "EcKeyGenParams", ECDH: "EcKeyGenParams",
    "AES-CTR": "AesKeyGenParams", "AES-CBC": "AesKeyGenParams", "AES-GCM": "AesKeyGenParams", "AES-KW": "AesKeyGenParams",
    HMAC: "HmacKeyGenParams", Ed25519: null, X25519: null, "NODE-ED25519": "EcKeyGenParams",
  },
  importKey: {
    "RSASSA-PKCS1-v1_5": "RsaHashedImportParams", "RSA-PSS": "RsaHashedImportParams", "RSA-OAEP": "RsaHashedImportParams",
    ECDSA: "EcKeyImportParams", ECDH: "EcKeyImportParams",
    "AES-CTR": null, "AES-CBC": null, "AES-GCM": null, "AES-KW": null,
    HMAC: "HmacImportParams", PBKDF2: null, HKDF: null, Ed25519: null, X25519: null, "NODE-ED25519": "EcKeyImportParams",
  },
  sign: { "RSASSA-PKCS1-v1_5": null, "RSA-PSS": "RsaPssParams", ECDSA: "EcdsaParams", HMAC: null, Ed25519: null, "NODE-ED25519": null },
  encrypt: { "RSA-OAEP": "RsaOaepParams", "AES-CTR": "AesCtrParams", "AES-CBC": "AesCbcParams", "AES-GCM": "AesGcmParams" },
  deriveBits: { ECDH: "EcdhKeyDeriveParams", X25519: "EcdhKeyDeriveParams", HKDF: "HkdfParams", PBKDF2: "Pbkdf2Params" },
  wrapKey: { "AES-KW": null },
  getKeyLength: { "AES-CTR": "AesDerivedKeyParams", "AES-CBC": "AesDerivedKeyParams", "AES-GCM": "AesDerivedKeyParams", "AES-KW": "AesDerivedKeyParams", HMAC: "HmacImportParams", HKDF: null, PBKDF2: null },
};
SUPPORTED.verify = SUPPORTED.sign;
SUPPORTED.decrypt = SUPPORTED.encrypt;
SUPPORTED.unwrapKey = SUPPORTED.wrapKey;

// Member name -> [type, required]. Types: bytes (BufferSource), hash, number, string, key.
const DICTIONARIES = {
  AesKeyGenParams: { length: ["number", true] },
  AesDerivedKeyParams: { length: ["number", true] },
  AesGcmParams: { iv: ["bytes", true], additionalData: ["bytes", false], tagLength: ["number", false] },
  AesCbcParams: { iv: ["bytes", true] },
  AesCtrParams: { counter: ["bytes", true], length: ["number", true] },
  HmacKeyGenParams: { hash: ["hash", true], length: ["number", false] },
  HmacImportParams: { hash: ["hash", true], length: ["number", false] },
  RsaHashedKeyGenParams: { modulusLength: ["number", true], publicExponent: ["bytes", true], hash: ["hash", true] },
  RsaHashedImportParams: { hash: ["hash", true] },
  RsaPssParams: { saltLength: ["number", true] },
  RsaOaepParams: { label: ["bytes", false] },
  EcKeyGenParams: { namedCurve: ["string", true] },
  EcKeyImportParams: { namedCurve: ["string", true] },
  EcdsaParams: { hash: ["hash", true] },
  EcdhKeyDeriveParams: { public: ["key", true] },
  HkdfParams: { hash: ["hash", true], salt: ["bytes", true], info: ["bytes", true] },
  Pbkdf2Params: { hash: ["hash", true], salt: ["bytes", true], iterations: ["number", true] },
};

/** Normalises an AlgorithmIdentifier for `op`: a fresh object with the canonical name and the
 * members of the algorithm's parameter dictionary, converted. */
function normalize(algorithm, op) {
  if (typeof algorithm === "string") return normalize({ name: algorithm }, op);
  if (algorithm === null || (typeof algorithm !== "object" && typeof algorithm !== "function")) {
    throw new TypeError("The algorithm must be a string or an object with a 'name'");
  }
  if (algorithm.name === undefined) throw new TypeError("The algorithm's 'name' member is required");
  const requested = String(algorithm.name);
  const table = SUPPORTED[op];
  const name = Object.keys(table).find((n) => n.toUpperCase() === requested.toUpperCase());
  if (name === undefined) throw fail("NotSupportedError", `Unrecognized or unsupported algorithm '${requested}' for ${op}`);
  const result = { name };
  const dictionary = DICTIONARIES[table[name]] || {};
  for (const [member, [type, required]] of Object.entries(dictionary)) {
    const value = algorithm[member];
    if (value === undefined) {
      if (required) throw new TypeError(`${name}: the '${member}' member is required`);
      continue;
    }
    if (type === "bytes") result[member] = bufferSource(value, `${name}: '${member}'`);
    else if (type === "number") {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new TypeError(`${name}: '${member}' must be a finite number`);
      result[member] = Math.trunc(n);
    } else if (type === "string") result[member] = String(value);
    else if (type === "hash") {
      result.hash = normalize(value, "digest");
      if (result.hash.name === "MD5") throw fail("NotSupportedError", `${name} cannot use MD5`);
    } else if (type === "key") {
      if (!slotOf(value)) throw new TypeError(`${name}: '${member}' must be a CryptoKey`);
      result[member] = value;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// CryptoKey

const USAGES = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];
const KEY_TOKEN = Symbol("CryptoKey");
let slotOf;

class CryptoKey {
  #slot;
  #algorithm;
  #usages;
  constructor(token, slot) {
    if (token !== KEY_TOKEN) throw new TypeError("Illegal constructor");
    this.#slot = slot;
    this.#algorithm = publicAlgorithm(slot.algorithm);
    this.#usages = [...slot.usages];
  }
  get type() {
    return slotOf(this).type;
  }
  get extractable() {
    return slotOf(this).extractable;
  }
  get algorithm() {
    slotOf(this);
    return this.#algorithm;
  }
  get usages() {
    slotOf(this);
    return this.#usages;
  }
  get [Symbol.toStringTag]() {
    return "CryptoKey";
  }
  static {
    slotOf = (key) => {
      if (key === null || typeof key !== "object" || !(#slot in key)) throw new TypeError("Expected a CryptoKey");
      return key.#slot;
    };
  }
}

/** A copy of an RSA key's publicExponent: an ArrayBuffer before crypto_preserve_public_exponent. */
const publicExponent = (bytes) => (internals.feature("crypto_preserve_public_exponent") ? new Uint8Array(bytes) : new Uint8Array(bytes).buffer);

/** The `algorithm` object user code sees: a copy, with byte members copied again. */
function publicAlgorithm(algorithm) {
  const copy = { name: algorithm.name };
  for (const member of ["modulusLength", "publicExponent", "hash", "namedCurve", "length"]) {
    if (algorithm[member] === undefined) continue;
    const value = algorithm[member];
    copy[member] = member === "publicExponent" ? publicExponent(value) : member === "hash" ? { name: value.name } : value;
  }
  return copy;
}

/** Checks and orders a sequence of KeyUsage strings. */
function readUsages(usages) {
  if (usages === null || typeof usages !== "object" || typeof usages[Symbol.iterator] !== "function") {
    throw new TypeError("keyUsages must be a sequence of strings");
  }
  const set = new Set();
  for (const usage of usages) {
    const u = String(usage);
    if (!USAGES.includes(u)) throw new TypeError(`'${u}' is not a valid key usage`);
    set.add(u);
  }
  return USAGES.filter((u) => set.has(u));
}

function checkUsages(usages, allowed, what) {
  const bad = usages.find((u) => !allowed.includes(u));
  if (bad !== undefined) throw fail("SyntaxError", `Usage '${bad}' is not valid for ${what}`);
}

function newKey(type, extractable, algorithm, usages, material) {
  return new CryptoKey(KEY_TOKEN, { type, extractable: Boolean(extractable), algorithm, usages, material });
}

// ---------------------------------------------------------------------------------------------
// Key generation, import and export

/** An error workerd reports from the operation itself: a rejection even before capture_async_api_throws. */
const rejectLater = (error) => Promise.resolve().then(() => Promise.reject(error));

function generateKey(algorithm, extractable, usages) {
  const name = algorithm.name;
  const kind = asymmetricKind(name);
  if (kind === "RSA") {
    // workerd generates with the exponents 3 and 65537 only (others can make generation loop).
    const exponent = new Uint8Array(algorithm.publicExponent).reduce((n, b) => n * 256 + b, 0);
    if (exponent !== 3 && exponent !== 65537) return rejectLater(fail("OperationError", `The "publicExponent" must be either 3 or 65537, but got ${exponent}.`));
  }
  if (kind === undefined) {
    checkUsages(usages, secretUsages(name), name);
    let bits;
    const keyAlgorithm = { name };
    if (name === "HMAC") {
      bits = algorithm.length === undefined ? HASH_BLOCK_BITS[algorithm.hash.name] : algorithm.length;
      if (bits <= 0) throw fail("OperationError", "HMAC key length must be greater than 0");
      Object.assign(keyAlgorithm, { hash: algorithm.hash, length: bits });
    } else {
      bits = algorithm.length;
      if (![128, 192, 256].includes(bits)) throw fail("OperationError", "AES key length must be 128, 192 or 256 bits");
      keyAlgorithm.length = bits;
    }
    if (usages.length === 0) throw fail("SyntaxError", "Usages cannot be empty when creating a key.");
    const material = new Uint8Array(Math.ceil(bits / 8));
    ops.fillRandom(material);
    if (bits % 8) material[material.length - 1] &= 0xff << (8 - (bits % 8));
    return newKey("secret", extractable, keyAlgorithm, usages, material);
  }
  const [privateUsages, publicUsages] = pairUsages(name);
  checkUsages(usages, [...privateUsages, ...publicUsages], name);
  const keyAlgorithm = { name };
  const params = { kind };
  if (kind === "RSA" && internals.feature("strict_crypto_checks") && algorithm.modulusLength % 128 !== 0) {
    throw fail("OperationError", "Can't generate key: RSA key size is required to be a multiple of 128");
  }
  if (kind === "RSA") {
    Object.assign(keyAlgorithm, { modulusLength: algorithm.modulusLength, publicExponent: algorithm.publicExponent, hash: algorithm.hash });
    Object.assign(params, { modulusLength: algorithm.modulusLength, publicExponent: algorithm.publicExponent });
  } else if (kind === "EC" || name === "NODE-ED25519") {
    checkCurve(algorithm);
    keyAlgorithm.namedCurve = params.namedCurve = algorithm.namedCurve;
  }
  const [privateDer, publicDer] = native("generateKeyPair", params);
  const privateKeyUsages = usages.filter((u) => privateUsages.includes(u));
  if (privateKeyUsages.length === 0) throw fail("SyntaxError", "Usages cannot be empty when creating a key.");
  return {
    publicKey: newKey("public", true, keyAlgorithm, usages.filter((u) => publicUsages.includes(u)), publicDer),
    privateKey: newKey("private", extractable, keyAlgorithm, privateKeyUsages, privateDer),
  };
}

function importKey(format, keyData, algorithm, extractable, usages) {
  const name = algorithm.name;
  const kind = asymmetricKind(name);
  // workerd reads a JWK's alg as an algorithm name: a non-string one names no algorithm it knows.
  if (format === "jwk" && keyData?.alg !== undefined && typeof keyData.alg !== "string") {
    return rejectLater(fail("NotSupportedError", `Unrecognized or unimplemented algorithm "${String(keyData.alg)}"`));
  }
  if (kind === undefined) return importSecretKey(format, keyData, algorithm, extractable, usages);
  const keyAlgorithm = { name };
  const params = { kind, format };
  if (kind === "EC" || name === "NODE-ED25519") {
    checkCurve(algorithm);
    keyAlgorithm.namedCurve = algorithm.namedCurve;
    if (kind === "EC") params.namedCurve = algorithm.namedCurve;
  }
  if (kind === "RSA") keyAlgorithm.hash = algorithm.hash;
  if (format === "raw" && kind === "RSA") throw fail("NotSupportedError", `${name} keys cannot be imported in 'raw' format`);
  if (format === "jwk") {
    const isPrivate = keyData.d !== undefined;
    const [privateUsages, publicUsages] = pairUsages(name, true);
    checkUsages(usages, isPrivate ? privateUsages : publicUsages, `a ${isPrivate ? "private" : "public"} ${name} key`);
    const use = name === "RSA-OAEP" || name === "ECDH" || name === "X25519" ? "enc" : "sig";
    checkJwk(keyData, keyAlgorithm, usages, extractable, jwkAlg({ ...keyAlgorithm, hash: algorithm.hash }), use);
    params.data = JSON.stringify(keyData);
  } else {
    params.data = keyData;
  }
  const [type, der, modulusLength, publicExponent] = native("importKey", params);
  const [privateUsages, publicUsages] = pairUsages(name, true);
  checkUsages(usages, type === "private" ? privateUsages : publicUsages, `a ${type} ${name} key`);
  if (type === "private" && usages.length === 0) throw fail("SyntaxError", "Usages cannot be empty when importing a private key.");
  if (kind === "RSA") {
    if (internals.feature("strict_crypto_checks")) checkImportedRsa(modulusLength, publicExponent);
    Object.assign(keyAlgorithm, { modulusLength, publicExponent });
  }
  return newKey(type, extractable, keyAlgorithm, usages, der);
}

/** strict_crypto_checks' limits on an imported RSA key (workerd's): size and public exponent. */
function checkImportedRsa(modulusLength, exponentBytes) {
  if (modulusLength % 8 !== 0 || modulusLength < 256 || modulusLength > 16384) {
    throw fail("OperationError", `The modulus length must be a multiple of 8 and between 256 and 16k, but ${modulusLength} was requested.`);
  }
  const exponent = [...new Uint8Array(exponentBytes)].reduce((n, b) => n * 256 + b, 0);
  if (![3, 17, 37, 65537].includes(exponent)) throw fail("OperationError", `Imported RSA key has invalid publicExponent ${exponent}.`);
}

function importSecretKey(format, keyData, algorithm, extractable, usages) {
  const name = algorithm.name;
  checkUsages(usages, secretUsages(name), name);
  const keyAlgorithm = { name };
  let material;
  if (format === "raw") {
    material = keyData;
  } else if (format === "jwk" && (name === "HMAC" || AES.includes(name))) {
    if (keyData.kty !== "oct") throw fail("DataError", "The JWK 'kty' member must be 'oct'");
    material = base64url.decode(keyData.k, "k");
    const bits = material.length * 8;
    checkJwk(keyData, { ...algorithm, name }, usages, extractable, jwkAlg(algorithm, bits), name === "HMAC" ? "sig" : "enc");
  } else {
    throw fail("NotSupportedError", `${name} keys cannot be imported in '${format}' format`);
  }
  if (name === "PBKDF2" || name === "HKDF") {
    if (extractable) throw fail("SyntaxError", `${name} keys cannot be extractable`);
  } else if (name === "HMAC") {
    let bits = material.length * 8;
    if (bits === 0) throw fail("DataError", "HMAC key data must not be empty");
    if (algorithm.length !== undefined) {
      if (algorithm.length > bits || algorithm.length <= bits - 8) throw fail("DataError", "The HMAC key length does not match the key data");
      bits = algorithm.length;
    }
    Object.assign(keyAlgorithm, { hash: algorithm.hash, length: bits });
  } else {
    if (![16, 24, 32].includes(material.length)) throw fail("DataError", "AES key data must be 128, 192 or 256 bits");
    keyAlgorithm.length = material.length * 8;
  }
  if (usages.length === 0) throw fail("SyntaxError", "Usages cannot be empty when importing a secret key.");
  return newKey("secret", extractable, keyAlgorithm, usages, material);
}

/** JWK members in the order workerd writes them, so a JSON.stringify of an export matches. */
const JWK_ORDER = ["kty", "use", "key_ops", "alg", "ext", "crv", "x", "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "oth", "k"];

function orderedJwk(jwk) {
  return internals.struct(JWK_ORDER, jwk);
}

/** Exports `key` (checked extractable) as an ArrayBuffer, or a JWK object. */
function exportKey(format, key) {
  const slot = slotOf(key);
  if (!slot.extractable) throw fail("InvalidAccessError", "The key is not extractable");
  const algorithm = slot.algorithm;
  const kind = asymmetricKind(algorithm.name);
  if (kind === undefined) {
    if (algorithm.name === "PBKDF2" || algorithm.name === "HKDF") throw fail("NotSupportedError", `${algorithm.name} keys cannot be exported`);
    if (format === "raw") return arrayBuffer(new Uint8Array(slot.material));
    if (format !== "jwk") throw fail("NotSupportedError", `Secret keys cannot be exported in '${format}' format`);
    const jwk = { kty: "oct", k: base64url.encode(slot.material), alg: jwkAlg(algorithm, slot.material.length * 8) };
    return orderedJwk(Object.assign(jwk, { key_ops: [...slot.usages], ext: slot.extractable }));
  }
  if (format === "raw" && kind === "RSA") throw fail("NotSupportedError", "RSA keys cannot be exported in 'raw' format");
  const out = native("exportKey", { kind, namedCurve: kind === "EC" ? algorithm.namedCurve : null, format, type: slot.type, key: slot.material });
  if (format !== "jwk") return arrayBuffer(out);
  const jwk = JSON.parse(out);
  const alg = jwkAlg(algorithm);
  // workerd writes no `alg` for EC keys (ECDSA, ECDH): the curve says enough.
  if (alg !== undefined && kind !== "EC") jwk.alg = alg;
  return orderedJwk(Object.assign(jwk, { key_ops: [...slot.usages], ext: slot.extractable }));
}

// ---------------------------------------------------------------------------------------------
// Operations

/** The key's slot, after checking that it is for `algorithm` and allows `usage`. */
function usableKey(key, algorithm, usage) {
  const slot = slotOf(key);
  if (slot.algorithm.name !== algorithm.name) {
    throw fail("InvalidAccessError", `The key is for ${slot.algorithm.name}, not ${algorithm.name}`);
  }
  if (!slot.usages.includes(usage)) throw fail("InvalidAccessError", `The key does not allow '${usage}'`);
  return slot;
}

function requireType(slot, type, what) {
  if (slot.type !== type) throw fail("InvalidAccessError", `${what} needs a ${type} key`);
}

function signatureParams(algorithm, slot, data) {
  const params = { name: algorithm.name === "NODE-ED25519" ? "Ed25519" : algorithm.name, key: slot.material, data };
  if (algorithm.name === "ECDSA") Object.assign(params, { hash: algorithm.hash.name, namedCurve: slot.algorithm.namedCurve });
  else if (RSA.includes(algorithm.name)) Object.assign(params, { hash: slot.algorithm.hash.name, saltLength: algorithm.saltLength });
  return params;
}

function sign(algorithm, key, data) {
  const slot = usableKey(key, algorithm, "sign");
  if (algorithm.name === "HMAC") return native("hmacSign", { hash: slot.algorithm.hash.name, key: slot.material, data });
  requireType(slot, "private", "Signing");
  return native("sign", signatureParams(algorithm, slot, data));
}

function verify(algorithm, key, signature, data) {
  const slot = usableKey(key, algorithm, "verify");
  if (algorithm.name === "HMAC") return native("hmacVerify", { hash: slot.algorithm.hash.name, key: slot.material, data, signature });
  requireType(slot, "public", "Verifying");
  return native("verify", { ...signatureParams(algorithm, slot, data), signature });
}

function cipher(op, algorithm, key, data, usage) {
  const slot = usableKey(key, algorithm, usage);
  const params = { ...algorithm, key: slot.material, data };
  if (algorithm.name === "RSA-OAEP") {
    requireType(slot, op === "encrypt" ? "public" : "private", op === "encrypt" ? "Encryption" : "Decryption");
    params.hash = slot.algorithm.hash.name;
  }
  if (algorithm.name === "AES-CTR" && (algorithm.length === 0 || algorithm.length > 128)) {
    throw fail("OperationError", "AES-CTR length must be between 1 and 128");
  }
  return native(op, params);
}

function deriveBits(algorithm, baseKey, length, usage = "deriveBits") {
  const slot = usableKey(baseKey, algorithm, usage);
  const name = algorithm.name;
  if (name === "HKDF" || name === "PBKDF2") {
    if (length === null) throw fail("OperationError", `${name} needs a length`);
    if (length % 8 !== 0) throw fail("OperationError", "The length must be a multiple of 8");
    const params = { hash: algorithm.hash.name, key: slot.material, salt: algorithm.salt, length };
    if (name === "HKDF") return native("hkdf", { ...params, info: algorithm.info });
    if (algorithm.iterations === 0) throw fail("OperationError", "PBKDF2 iterations must be greater than 0");
    return native("pbkdf2", { ...params, iterations: algorithm.iterations });
  }
  requireType(slot, "private", "Key agreement");
  const peer = slotOf(algorithm.public);
  if (peer.type !== "public") throw fail("InvalidAccessError", "The 'public' member must be a public key");
  if (peer.algorithm.name !== name || peer.algorithm.namedCurve !== slot.algorithm.namedCurve) {
    throw fail("InvalidAccessError", "The public key is for a different algorithm or curve");
  }
  const secret = native("deriveBits", { kind: asymmetricKind(name), namedCurve: slot.algorithm.namedCurve ?? null, key: slot.material, public: peer.material });
  if (length === null) return secret;
  if (length > secret.length * 8) throw fail("OperationError", `The length (${length}) is longer than the shared secret (${secret.length * 8} bits)`);
  const out = secret.slice(0, Math.ceil(length / 8));
  if (length % 8) out[out.length - 1] &= 0xff << (8 - (length % 8));
  return out;
}

/** The key length (bits) `deriveKey` has to derive for a key of `algorithm`, or null. */
function keyLength(algorithm) {
  if (AES.includes(algorithm.name)) {
    if (![128, 192, 256].includes(algorithm.length)) throw fail("OperationError", "AES key length must be 128, 192 or 256 bits");
    return algorithm.length;
  }
  if (algorithm.name === "HMAC") {
    const bits = algorithm.length === undefined ? HASH_BLOCK_BITS[algorithm.hash.name] : algorithm.length;
    if (bits === 0) throw new TypeError("HMAC key length must not be 0");
    return bits;
  }
  return null;
}

/** Normalises for wrapping: AES-KW as such, anything else as an encryption algorithm. */
function wrapAlgorithm(algorithm, op, encryptOp) {
  try {
    return normalize(algorithm, op);
  } catch (error) {
    if (!(error instanceof DOMException) || error.name !== "NotSupportedError") throw error;
    return normalize(algorithm, encryptOp);
  }
}

const FORMATS = ["raw", "pkcs8", "spki", "jwk"];

function readFormat(format) {
  const f = String(format);
  if (!FORMATS.includes(f)) throw new TypeError(`'${f}' is not a valid key format`);
  return f;
}

function readKeyData(format, keyData) {
  if (format === "jwk") {
    if (keyData === null || typeof keyData !== "object" || ArrayBuffer.isView(keyData) || keyData instanceof ArrayBuffer) {
      throw new TypeError("JWK key data must be an object");
    }
    return keyData;
  }
  return bufferSource(keyData, "keyData");
}

function requireArgs(count, needed, method) {
  if (count < needed) throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': ${needed} arguments required, but only ${count} present.`);
}

function readLength(length) {
  if (length === undefined || length === null) return null;
  const n = Number(length);
  if (!Number.isFinite(n) || n < 0) throw new TypeError("The length must be a non-negative number");
  return Math.trunc(n);
}

/** A digest's algorithm; an unknown one is workerd's NotSupportedError, word for word. */
function digestAlgorithm(algorithm) {
  try {
    return normalize(algorithm, "digest");
  } catch (error) {
    if (error instanceof DOMException && error.name === "NotSupportedError") {
      throw fail("NotSupportedError", "Unrecognized or unimplemented digest algorithm requested.");
    }
    throw error;
  }
}

const SUBTLE_TOKEN = Symbol("SubtleCrypto");

class SubtleCrypto {
  constructor(token) {
    if (token !== SUBTLE_TOKEN) throw new TypeError("Illegal constructor");
  }

  /** workerd's own: whether two BufferSources of one length hold the same bytes, in time that does not depend on where they differ. */
  timingSafeEqual(a, b) {
    const bytes = (value, n) => {
      if (!(value instanceof ArrayBuffer) && !ArrayBuffer.isView(value)) throw new TypeError(`Failed to execute 'timingSafeEqual' on 'SubtleCrypto': parameter ${n} is not of type 'JsBufferSource'.`);
      return internals.bytesOf(value);
    };
    const left = bytes(a, 1);
    const right = bytes(b, 2);
    if (left.byteLength !== right.byteLength) throw new TypeError("Input buffers must have the same byte length.");
    let difference = 0;
    for (let i = 0; i < left.byteLength; i++) difference |= left[i] ^ right[i];
    return difference === 0;
  }

  async digest(algorithm, data) {
    requireArgs(arguments.length, 2, "digest");
    const normalized = digestAlgorithm(algorithm);
    // The hash is computed before native() returns, so the bytes are read in place: no copy
    // (a 95 MB body hashed under limits.memoryMb is held once).
    return arrayBuffer(native("digest", { hash: normalized.name, data: bufferView(data, "data") }));
  }

  async generateKey(algorithm, extractable, keyUsages) {
    requireArgs(arguments.length, 3, "generateKey");
    const usages = readUsages(keyUsages);
    return generateKey(normalize(algorithm, "generateKey"), extractable, usages);
  }

  async importKey(format, keyData, algorithm, extractable, keyUsages) {
    requireArgs(arguments.length, 5, "importKey");
    format = readFormat(format);
    keyData = readKeyData(format, keyData);
    const usages = readUsages(keyUsages);
    return importKey(format, keyData, normalize(algorithm, "importKey"), extractable, usages);
  }

  async exportKey(format, key) {
    requireArgs(arguments.length, 2, "exportKey");
    format = readFormat(format);
    slotOf(key);
    return exportKey(format, key);
  }

  async sign(algorithm, key, data) {
    requireArgs(arguments.length, 3, "sign");
    const normalized = normalize(algorithm, "sign");
    data = bufferSource(data, "data");
    slotOf(key);
    return arrayBuffer(sign(normalized, key, data));
  }

  async verify(algorithm, key, signature, data) {
    requireArgs(arguments.length, 4, "verify");
    const normalized = normalize(algorithm, "verify");
    signature = bufferSource(signature, "signature");
    data = bufferSource(data, "data");
    slotOf(key);
    return verify(normalized, key, signature, data);
  }

  async encrypt(algorithm, key, data) {
    requireArgs(arguments.length, 3, "encrypt");
    const normalized = normalize(algorithm, "encrypt");
    data = bufferSource(data, "data");
    slotOf(key);
    return arrayBuffer(cipher("encrypt", normalized, key, data, "encrypt"));
  }

  async decrypt(algorithm, key, data) {
    requireArgs(arguments.length, 3, "decrypt");
    const normalized = normalize(algorithm, "decrypt");
    data = bufferSource(data, "data");
    slotOf(key);
    return arrayBuffer(cipher("decrypt", normalized, key, data, "decrypt"));
  }

  async deriveBits(algorithm, baseKey, length = null) {
    requireArgs(arguments.length, 2, "deriveBits");
    const normalized = normalize(algorithm, "deriveBits");
    slotOf(baseKey);
    return arrayBuffer(deriveBits(normalized, baseKey, readLength(length)));
  }

  async deriveKey(algorithm, baseKey, derivedKeyType, extractable, keyUsages) {
    requireArgs(arguments.length, 5, "deriveKey");
    const normalized = normalize(algorithm, "deriveBits");
    const importAlgorithm = normalize(derivedKeyType, "importKey");
    const length = keyLength(normalize(derivedKeyType, "getKeyLength"));
    const usages = readUsages(keyUsages);
    slotOf(baseKey);
    const secret = deriveBits(normalized, baseKey, length, "deriveKey");
    return importKey("raw", secret, importAlgorithm, extractable, usages);
  }

  async wrapKey(format, key, wrappingKey, wrapAlgorithmIdentifier) {
    requireArgs(arguments.length, 4, "wrapKey");
    format = readFormat(format);
    const algorithm = wrapAlgorithm(wrapAlgorithmIdentifier, "wrapKey", "encrypt");
    slotOf(key);
    const slot = usableKey(wrappingKey, algorithm, "wrapKey");
    const exported = exportKey(format, key);
    let bytes;
    if (format === "jwk") {
      let json = JSON.stringify(exported);
      // AES-KW needs whole 64-bit blocks; trailing spaces do not change the JSON.
      if (algorithm.name === "AES-KW") json = json.padEnd(Math.ceil(json.length / 8) * 8, " ");
      bytes = new TextEncoder().encode(json);
    } else {
      bytes = new Uint8Array(exported);
    }
    if (algorithm.name === "AES-KW") return arrayBuffer(native("encrypt", { name: "AES-KW", key: slot.material, data: bytes }));
    return arrayBuffer(cipher("encrypt", algorithm, wrappingKey, bytes, "wrapKey"));
  }

  async unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithmIdentifier, unwrappedKeyAlgorithm, extractable, keyUsages) {
    requireArgs(arguments.length, 7, "unwrapKey");
    format = readFormat(format);
    wrappedKey = bufferSource(wrappedKey, "wrappedKey");
    const algorithm = wrapAlgorithm(unwrapAlgorithmIdentifier, "unwrapKey", "decrypt");
    const importAlgorithm = normalize(unwrappedKeyAlgorithm, "importKey");
    const usages = readUsages(keyUsages);
    const slot = usableKey(unwrappingKey, algorithm, "unwrapKey");
    const bytes = algorithm.name === "AES-KW"
      ? native("decrypt", { name: "AES-KW", key: slot.material, data: wrappedKey })
      : cipher("decrypt", algorithm, unwrappingKey, wrappedKey, "unwrapKey");
    let keyData = bytes;
    if (format === "jwk") {
      try {
        keyData = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw fail("DataError", "The unwrapped key is not valid JWK JSON");
      }
      keyData = readKeyData(format, keyData);
    }
    return importKey(format, keyData, importAlgorithm, extractable, usages);
  }

  get [Symbol.toStringTag]() {
    return "SubtleCrypto";
  }
}

const subtle = new SubtleCrypto(SUBTLE_TOKEN);

// crypto.DigestStream (Cloudflare Workers): a WritableStream that hashes what is written to it;
// `digest` resolves to the ArrayBuffer once the stream is closed. Hashing is incremental, in
// a native hasher kept by id.
class DigestStream extends globalThis.WritableStream {
  #digest;
  #bytesWritten = 0n;
  #dispose;
  constructor(algorithm) {
    // Besides the digests, workerd's checksums: crc32, crc32c, crc64nvme.
    const checksum = typeof algorithm === "string" ? algorithm.toLowerCase() : undefined;
    const { name } = ["crc32", "crc32c", "crc64nvme"].includes(checksum) ? { name: checksum } : digestAlgorithm(algorithm);
    let id;
    try {
      id = ops.digestCreate(name);
    } catch (error) {
      throw new DOMException(error.message, error.name);
    }
    let resolve, reject;
    const digest = new Promise((res, rej) => {
      resolve = res;
      reject = rej;
    });
    digest.catch(() => {});
    let self;
    let disposed = false;
    let open = true;
    super({
      write(chunk) {
        if (disposed) throw new Error("The DigestStream was disposed.");
        let bytes;
        if (typeof chunk === "string") bytes = new TextEncoder().encode(chunk);
        else if (chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk)) bytes = bufferSource(chunk, "chunk");
        else throw new TypeError("DigestStream is a byte stream but received an object of non-ArrayBuffer/ArrayBufferView/string type on its writable side.");
        ops.digestUpdate(id, bytes);
        self.#bytesWritten += BigInt(bytes.byteLength);
      },
      close() {
        if (disposed) throw new Error("The DigestStream was disposed.");
        open = false;
        resolve(arrayBuffer(ops.digestFinish(id)));
      },
      abort(reason) {
        if (open) ops.digestDrop(id);
        open = false;
        reject(reason);
      },
    });
    self = this;
    this.#digest = digest;
    // [Symbol.dispose](): the hasher is freed and later writes fail (workerd's message); again, nothing.
    this.#dispose = () => {
      if (disposed) return;
      disposed = true;
      if (open) ops.digestDrop(id);
      open = false;
      reject(new Error("The DigestStream was disposed."));
    };
  }
  [Symbol.dispose]() {
    this.#dispose();
  }
  get digest() {
    return this.#digest;
  }
  get bytesWritten() {
    return this.#bytesWritten;
  }
  get [Symbol.toStringTag]() {
    return "DigestStream";
  }
}

Object.defineProperty(internals.Crypto.prototype, "subtle", {
  get() {
    return subtle;
  },
  enumerable: true,
  configurable: true,
});
Object.defineProperty(internals.Crypto.prototype, "DigestStream", { value: DigestStream, writable: true, enumerable: false, configurable: true });

internals.defineGlobal("SubtleCrypto", SubtleCrypto);
internals.defineGlobal("CryptoKey", CryptoKey);

// node:crypto's KeyObject.from(): a key's material (raw bytes, PKCS #8 or SPKI DER).
internals.cryptoKeyData = (key) => slotOf(key).material;
