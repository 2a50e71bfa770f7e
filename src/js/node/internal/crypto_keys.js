// node:crypto's keys: KeyObject, createSecretKey / createPublicKey / createPrivateKey (PEM,
// DER and JWK in; PEM, DER and JWK out through export()), generateKeyPair(Sync), and
// `prepareKey`, which turns any key argument Node accepts (KeyObject, PEM text, DER or JWK
// object, CryptoKey) into a KeyObject for the sign/verify/cipher code. Key bytes are kept in
// canonical form (secret: raw bytes; private: PKCS #8 DER; public: SPKI DER); parsing and
// conversion happen natively (webcrypto/node.rs, webcrypto/asymmetric.rs).
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgType, invalidArgValue, toBuffer, native, checkInteger, checkFunction, later } = require("node:internal/crypto_util");

const kState = Symbol("kKeyObjectState");
// Node's curve names for the WebCrypto ones, and back.
const CURVES = { "P-256": "prime256v1", "P-384": "secp384r1" };
const CURVE_INPUT = { prime256v1: "P-256", "p-256": "P-256", secp256r1: "P-256", secp384r1: "P-384", "p-384": "P-384" };
const WEB_KIND = { rsa: "RSA", ec: "EC", ed25519: "Ed25519", x25519: "X25519" };
const PEM_LABELS = {
  "PRIVATE KEY": "pkcs8",
  "PUBLIC KEY": "spki",
  "RSA PRIVATE KEY": "pkcs1-private",
  "RSA PUBLIC KEY": "pkcs1-public",
  "EC PRIVATE KEY": "sec1",
  CERTIFICATE: "x509",
};

class KeyObject {
  constructor(type, state) {
    if (type !== "secret" && type !== "public" && type !== "private") throw invalidArgValue("type", type);
    this[kState] = { type, ...state };
  }

  static from(key) {
    if (!(key instanceof CryptoKey)) throw invalidArgType("key", "an instance of CryptoKey", key);
    return fromCryptoKey(key);
  }

  get type() {
    return this[kState].type;
  }

  get asymmetricKeyType() {
    return this[kState].kind;
  }

  get asymmetricKeyDetails() {
    const { kind, curve, bits, exponent } = this[kState];
    if (kind === "rsa") return { modulusLength: bits, publicExponent: BigInt(`0x${Buffer.from(exponent).toString("hex") || "0"}`) };
    if (kind === "ec") return { namedCurve: CURVES[curve] };
    if (kind === undefined) return undefined;
    return {};
  }

  get symmetricKeySize() {
    return this[kState].type === "secret" ? this[kState].bytes.length : undefined;
  }

  equals(other) {
    if (!(other instanceof KeyObject)) throw invalidArgType("otherKeyObject", "an instance of KeyObject", other);
    const a = this[kState];
    const b = other[kState];
    if (a.type !== b.type) return false;
    const x = a.type === "secret" ? a.bytes : a.der;
    const y = b.type === "secret" ? b.bytes : b.der;
    return x.length === y.length && Buffer.compare(Buffer.from(x), Buffer.from(y)) === 0;
  }

  export(options = {}) {
    const state = this[kState];
    if (state.type === "secret") {
      if (options.format === "jwk") return { kty: "oct", k: Buffer.from(state.bytes).toString("base64url") };
      return Buffer.from(state.bytes);
    }
    if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
    const { format, type, cipher, passphrase } = options;
    if (format === "jwk") {
      const text = native("subtle", "exportKey", { kind: WEB_KIND[state.kind], namedCurve: state.curve || undefined, format: "jwk", type: state.type, key: state.der });
      return JSON.parse(text);
    }
    if (format !== "pem" && format !== "der") throw invalidArgValue("options.format", format);
    if (cipher !== undefined || passphrase !== undefined) {
      throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "Encrypted private key export is not supported by workerbox");
    }
    let der;
    let label;
    if (state.type === "public") {
      if (type === "spki") [der, label] = [state.der, "PUBLIC KEY"];
      else if (type === "pkcs1" && state.kind === "rsa") [der, label] = [native("node", "toPkcs1", { type: "public", key: state.der }), "RSA PUBLIC KEY"];
      else throw invalidArgValue("options.type", type, `is not supported for a ${state.kind} public key`);
    } else if (type === "pkcs8") [der, label] = [state.der, "PRIVATE KEY"];
    else if (type === "pkcs1" && state.kind === "rsa") [der, label] = [native("node", "toPkcs1", { type: "private", key: state.der }), "RSA PRIVATE KEY"];
    else if (type === "sec1" && state.kind === "ec") [der, label] = [native("node", "toSec1", { namedCurve: state.curve, key: state.der }), "EC PRIVATE KEY"];
    else throw invalidArgValue("options.type", type, `is not supported for a ${state.kind} private key`);
    if (format === "der") return Buffer.from(der);
    const base64 = Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
    return `-----BEGIN ${label}-----\n${base64}\n-----END ${label}-----\n`;
  }

  toCryptoKey() {
    throw nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "KeyObject.prototype.toCryptoKey() is not implemented");
  }

  get [Symbol.toStringTag]() {
    return "KeyObject";
  }
}

class SecretKeyObject extends KeyObject {}
class PublicKeyObject extends KeyObject {}
class PrivateKeyObject extends KeyObject {}
Object.assign(exports, { SecretKeyObject, PublicKeyObject, PrivateKeyObject });

function makeAsymmetric(info) {
  const [type, kind, der, curve, bits, exponent] = info;
  const state = { kind, der: new Uint8Array(der), curve: curve || undefined, bits: bits || undefined, exponent };
  return type === "private" ? new PrivateKeyObject("private", state) : new PublicKeyObject("public", state);
}

function fromCryptoKey(key) {
  const internal = globalThis.crypto.subtle && internals.cryptoKeyData ? internals.cryptoKeyData(key) : undefined;
  if (internal === undefined) throw nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "Converting a CryptoKey to a KeyObject is not supported");
  if (key.type === "secret") return new SecretKeyObject("secret", { bytes: new Uint8Array(internal) });
  return makeAsymmetric(native("node", "keyInfo", { format: key.type === "private" ? "pkcs8" : "spki", data: internal }));
}

function parsePem(text, wantPrivate) {
  const match = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(text);
  if (match === null) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The key is not a PEM-encoded key");
  const label = match[1];
  if (label === "ENCRYPTED PRIVATE KEY" || /Proc-Type:\s*4,ENCRYPTED/.test(match[2])) {
    throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "Encrypted private keys are not supported by workerbox");
  }
  const format = PEM_LABELS[label];
  if (format === undefined) throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `Unsupported PEM type "${label}"`);
  if (format === "x509" && wantPrivate) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "A certificate holds no private key");
  const body = match[2].replace(/^[A-Za-z-]+:.*$/gm, "").replace(/\s+/g, "");
  return { format, data: Buffer.from(body, "base64") };
}

function importJwk(jwk, wantPrivate) {
  if (jwk === null || typeof jwk !== "object") throw invalidArgType("key.key", "of type object", jwk);
  if (jwk.kty === "oct") return new SecretKeyObject("secret", { bytes: Buffer.from(String(jwk.k), "base64url") });
  let kind;
  let curve;
  if (jwk.kty === "RSA") kind = "RSA";
  else if (jwk.kty === "EC") [kind, curve] = ["EC", jwk.crv];
  else if (jwk.kty === "OKP" && (jwk.crv === "Ed25519" || jwk.crv === "X25519")) kind = jwk.crv;
  else throw nodeError(TypeError, "ERR_CRYPTO_INVALID_JWK", "Invalid JWK data");
  if (wantPrivate && jwk.d === undefined) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_JWK", "Invalid JWK private key");
  const [type, der] = native("subtle", "importKey", { kind, namedCurve: curve, format: "jwk", data: JSON.stringify(jwk) }, "ERR_CRYPTO_INVALID_JWK");
  return makeAsymmetric(native("node", "keyInfo", { format: type === "private" ? "pkcs8" : "spki", data: der }));
}

/** A KeyObject from any asymmetric key input; `wantPrivate` refuses public keys. */
function parseAsymmetric(input, wantPrivate, name) {
  if (input instanceof KeyObject) return input;
  if (typeof CryptoKey === "function" && input instanceof CryptoKey) return fromCryptoKey(input);
  let key = input;
  let format = "pem";
  let type;
  let encoding;
  if (input !== null && typeof input === "object" && !ArrayBuffer.isView(input) && !(input instanceof ArrayBuffer)) {
    // A passphrase only matters for encrypted keys, which parsePem refuses with a clear error.
    ({ key, format = "pem", type, encoding } = input);
    if (key instanceof KeyObject) return key;
    if (typeof CryptoKey === "function" && key instanceof CryptoKey) return fromCryptoKey(key);
  }
  if (format === "jwk") return importJwk(key, wantPrivate);
  let parsed;
  if (format === "pem") {
    if (typeof key !== "string" && !ArrayBuffer.isView(key) && !(key instanceof ArrayBuffer)) {
      throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject or CryptoKey", key);
    }
    parsed = parsePem(typeof key === "string" ? key : toBuffer(key).toString("latin1"), wantPrivate);
  } else if (format === "der") {
    const data = toBuffer(key, encoding, `${name}.key`);
    const derFormat = { pkcs8: "pkcs8", spki: "spki", sec1: "sec1", pkcs1: wantPrivate ? "pkcs1-private" : "pkcs1-public" }[type];
    if (derFormat === undefined) throw invalidArgValue(`${name}.type`, type);
    parsed = { format: derFormat, data };
  } else {
    throw invalidArgValue(`${name}.format`, format);
  }
  return makeAsymmetric(native("node", "keyInfo", parsed, "ERR_INVALID_ARG_VALUE"));
}

function publicOf(key) {
  const state = key[kState];
  const spki = native("node", "publicOf", { kind: state.kind, namedCurve: state.curve, key: state.der });
  return makeAsymmetric(native("node", "keyInfo", { format: "spki", data: spki }));
}

exports.createSecretKey = function createSecretKey(key, encoding) {
  return new SecretKeyObject("secret", { bytes: new Uint8Array(toBuffer(key, encoding, "key")) });
};

exports.createPrivateKey = function createPrivateKey(key) {
  const object = parseAsymmetric(key, true, "key");
  if (object.type !== "private") throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The key is not a private key");
  return object;
};

exports.createPublicKey = function createPublicKey(key) {
  const object = parseAsymmetric(key, false, "key");
  if (object.type === "secret") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", "Invalid key object type secret, expected private or public.");
  return object.type === "private" ? publicOf(object) : object;
};

/** The KeyObject for a sign/verify key argument; `usePublic` turns a private key into its public half. */
exports.prepareKey = function prepareKey(input, usePublic) {
  const object = parseAsymmetric(input, !usePublic, "key");
  if (object.type === "secret") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type secret, expected ${usePublic ? "public" : "private"}.`);
  if (usePublic && object.type === "private") return publicOf(object);
  return object;
};

/** Secret bytes from a KeyObject, CryptoKey or bytes (createHmac, pbkdf2, hkdf, ciphers). */
exports.secretBytes = function secretBytes(key, name = "key", encoding) {
  if (key instanceof KeyObject) {
    if (key.type !== "secret") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type ${key.type}, expected secret.`);
    return Buffer.from(key[kState].bytes);
  }
  if (typeof CryptoKey === "function" && key instanceof CryptoKey) return Buffer.from(fromCryptoKey(key)[kState].bytes);
  return toBuffer(key, encoding, name);
};

function generate(type, options = {}) {
  if (typeof type !== "string") throw invalidArgType("type", "of type string", type);
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  let params;
  if (type === "rsa") {
    checkInteger(options.modulusLength, "options.modulusLength", 1);
    const exponent = options.publicExponent ?? 65537;
    checkInteger(exponent, "options.publicExponent", 3);
    const bytes = Buffer.from(exponent.toString(16).padStart(exponent.toString(16).length + (exponent.toString(16).length % 2), "0"), "hex");
    params = { kind: "RSA", modulusLength: options.modulusLength, publicExponent: bytes };
  } else if (type === "ec") {
    if (typeof options.namedCurve !== "string") throw invalidArgType("options.namedCurve", "of type string", options.namedCurve);
    const curve = CURVE_INPUT[options.namedCurve.toLowerCase()];
    if (curve === undefined) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_CURVE", "Invalid EC curve name");
    params = { kind: "EC", namedCurve: curve };
  } else if (type === "ed25519" || type === "x25519") {
    params = { kind: WEB_KIND[type] };
  } else {
    throw invalidArgValue("type", type, "must be a supported key type ('rsa', 'ec', 'ed25519' or 'x25519')");
  }
  const [pkcs8, spki] = native("subtle", "generateKeyPair", params);
  const privateKey = makeAsymmetric(native("node", "keyInfo", { format: "pkcs8", data: pkcs8 }));
  const publicKey = makeAsymmetric(native("node", "keyInfo", { format: "spki", data: spki }));
  const { publicKeyEncoding, privateKeyEncoding } = options;
  return {
    publicKey: publicKeyEncoding ? publicKey.export(publicKeyEncoding) : publicKey,
    privateKey: privateKeyEncoding ? privateKey.export(privateKeyEncoding) : privateKey,
  };
}

exports.generateKeyPairSync = generate;

exports.generateKeyPair = function generateKeyPair(type, options, callback) {
  if (typeof options === "function") [callback, options] = [options, undefined];
  checkFunction(callback, "callback");
  later((error, pair) => (error ? callback(error) : callback(null, pair.publicKey, pair.privateKey)), () => generate(type, options));
};

exports.generateKeySync = function generateKeySync(type, options = {}) {
  const length = options.length;
  if (type === "hmac") checkInteger(length, "options.length", 8, 2 ** 31 - 1);
  else if (type === "aes") {
    if (![128, 192, 256].includes(length)) throw nodeError(RangeError, "ERR_OUT_OF_RANGE", 'The value of "options.length" is out of range. It must be one of: 128, 192, 256.');
  } else throw invalidArgValue("type", type, "must be a supported key type");
  const bytes = new Uint8Array(Math.floor(length / 8));
  ops.fillRandom(bytes);
  return new SecretKeyObject("secret", { bytes });
};

exports.generateKey = function generateKey(type, options, callback) {
  checkFunction(callback, "callback");
  later(callback, () => exports.generateKeySync(type, options));
};

exports.KeyObject = KeyObject;
exports.kState = kState;
