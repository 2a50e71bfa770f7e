// node:crypto's keys: KeyObject, createSecretKey / createPublicKey / createPrivateKey (PEM,
// DER and JWK in; PEM, DER and JWK out through export()), generateKeyPair(Sync), and
// `prepareKey`, which turns any key argument Node accepts (KeyObject, PEM text, DER or JWK
// object, CryptoKey) into a KeyObject for the sign/verify/cipher code. Key bytes are kept in
// canonical form (secret: raw bytes; private: PKCS #8 DER; public: SPKI DER); parsing and
// conversion happen natively (webcrypto/node.rs, webcrypto/asymmetric.rs).
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgType, invalidArgValue, toBuffer, native, checkInteger, checkFunction, later } = require("node:internal/crypto_util");

const kState = Symbol("kKeyObjectState");
const { notImplementedError } = require("node:internal/errors");
const PARSE_FAILED = "Failed to parse private key";
const PUBLIC_PARSE_FAILED = "Failed to parse public key";
const PRIVATE_FORMATS = ["pkcs8", "pkcs1-private", "sec1", "dsa-private"];
// Node's curve names for the WebCrypto ones, and back.
const CURVES = { "P-224": "secp224r1", "P-256": "prime256v1", "P-384": "secp384r1", "P-521": "secp521r1" };
const CURVE_INPUT = { secp224r1: "P-224", "p-224": "P-224", prime256v1: "P-256", "p-256": "P-256", secp256r1: "P-256", secp384r1: "P-384", "p-384": "P-384", secp521r1: "P-521", "p-521": "P-521" };
const WEB_KIND = { rsa: "RSA", ec: "EC", ed25519: "Ed25519", x25519: "X25519" };
const PEM_LABELS = {
  "PRIVATE KEY": "pkcs8",
  "PUBLIC KEY": "spki",
  "RSA PRIVATE KEY": "pkcs1-private",
  "RSA PUBLIC KEY": "pkcs1-public",
  "EC PRIVATE KEY": "sec1",
  "DSA PRIVATE KEY": "dsa-private",
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
    const { kind, curve, bits, exponent, divisor } = this[kState];
    if (kind === "rsa") return { modulusLength: bits, publicExponent: BigInt(`0x${Buffer.from(exponent).toString("hex") || "0"}`) };
    if (kind === "dsa") return { modulusLength: bits, divisorLength: divisor };
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
    // Keys from non-extractable CryptoKeys cannot be compared (workerd answers false).
    if (a.extractable === false || b.extractable === false) return false;
    const x = a.type === "secret" ? a.bytes : a.der;
    const y = b.type === "secret" ? b.bytes : b.der;
    return x.length === y.length && Buffer.compare(Buffer.from(x), Buffer.from(y)) === 0;
  }

  export(options = {}) {
    const state = this[kState];
    if (state.type === "secret") {
      if (options?.format === "jwk") return { kty: "oct", ext: true, k: Buffer.from(state.bytes).toString("base64url") };
      return Buffer.from(state.bytes);
    }
    if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
    const { format, type, cipher, passphrase } = options;
    if (format === "jwk") {
      if (WEB_KIND[state.kind] === undefined) throw new Error("Key type is invalid for JWK export");
      const text = native("subtle", "exportKey", { kind: WEB_KIND[state.kind], namedCurve: state.curve || undefined, format: "jwk", type: state.type, key: state.der });
      // workerd's members: the key's own, with alg only for Ed25519.
      const jwk = JSON.parse(text);
      const out = {};
      if (state.kind === "ed25519") out.alg = "EdDSA";
      for (const name of ["crv", "d", "dp", "dq", "e", "kty", "n", "p", "q", "qi", "x", "y"]) if (jwk[name] !== undefined) out[name] = jwk[name];
      return out;
    }
    if (format !== "pem" && format !== "der") throw invalidArgValue("options.format", format);
    if (cipher !== undefined && state.type === "private") {
      // PKCS #8 only (PBES2: PBKDF2-SHA256 with AES-CBC), as an ENCRYPTED PRIVATE KEY.
      if (type !== "pkcs8") throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "workerbox encrypts private keys in PKCS #8 only (type 'pkcs8')");
      if (typeof cipher !== "string") throw invalidArgType("options.cipher", "of type string", cipher);
      const pass = passphrase === undefined ? Buffer.alloc(0) : toBuffer(passphrase, undefined, "options.passphrase");
      const sealed = native("node", "pkcs8Encrypt", { key: state.der, passphrase: pass, cipher: cipher.toLowerCase() });
      return format === "der" ? Buffer.from(sealed) : toPem(sealed, "ENCRYPTED PRIVATE KEY");
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
    else if (type === "sec1") throw new Error("SEC1 can only be used for EC keys");
    else throw invalidArgValue("options.type", type, `is not supported for a ${state.kind} private key`);
    if (format === "der") return Buffer.from(der);
    return toPem(der, label);
  }

  toCryptoKey() {
    throw notImplementedError("toCryptoKey");
  }

  get [Symbol.toStringTag]() {
    return "KeyObject";
  }
}

function toPem(der, label) {
  const base64 = Buffer.from(der).toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
  return `-----BEGIN ${label}-----\n${base64}\n-----END ${label}-----\n`;
}

class SecretKeyObject extends KeyObject {}
class PublicKeyObject extends KeyObject {}
class PrivateKeyObject extends KeyObject {}
Object.assign(exports, { SecretKeyObject, PublicKeyObject, PrivateKeyObject });

function makeAsymmetric(info) {
  const [type, kind, der, curve, bits, exponent, divisor] = info;
  const state = { kind, der: new Uint8Array(der), curve: curve || undefined, bits: bits || undefined, exponent, divisor };
  return type === "private" ? new PrivateKeyObject("private", state) : new PublicKeyObject("public", state);
}

function fromCryptoKey(key) {
  const internal = globalThis.crypto.subtle && internals.cryptoKeyData ? internals.cryptoKeyData(key) : undefined;
  if (internal === undefined) throw nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "Converting a CryptoKey to a KeyObject is not supported");
  if (key.type === "secret") return new SecretKeyObject("secret", { bytes: new Uint8Array(internal), extractable: key.extractable });
  const object = makeAsymmetric(native("node", "keyInfo", { format: key.type === "private" ? "pkcs8" : "spki", data: internal }));
  object[kState].extractable = key.extractable;
  return object;
}

/**
 * OpenSSL's legacy PEM encryption (Proc-Type: 4,ENCRYPTED): the key is EVP_BytesToKey(MD5,
 * passphrase, the IV's first 8 bytes, 1 round), the body AES-CBC with PKCS #7 padding.
 */
function decryptLegacyPem(headers, body, passphrase) {
  const info = /DEK-Info:\s*AES-(128|192|256)-CBC,([0-9A-Fa-f]+)/.exec(headers);
  if (info === null || passphrase === undefined) throw new Error(PARSE_FAILED);
  const keyLength = Number(info[1]) / 8;
  const iv = Buffer.from(info[2], "hex");
  const pass = toBuffer(passphrase, undefined, "passphrase");
  let key = Buffer.alloc(0);
  let block = Buffer.alloc(0);
  while (key.length < keyLength) {
    const id = ops.nodeHashCreate("md5");
    ops.nodeHashUpdate(id, Buffer.concat([block, pass, iv.subarray(0, 8)]));
    block = Buffer.from(ops.nodeHashDigest(id));
    key = Buffer.concat([key, block]);
  }
  try {
    return Buffer.from(native("node", "cipher", { mode: "cbc", encrypt: false, key: key.subarray(0, keyLength), iv, data: body, padding: true }));
  } catch {
    throw new Error(PARSE_FAILED);
  }
}

function parsePem(text, wantPrivate, passphrase) {
  const match = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/.exec(text);
  if (match === null) throw new Error(wantPrivate ? PARSE_FAILED : PUBLIC_PARSE_FAILED);
  const label = match[1];
  const headers = match[2].match(/^[A-Za-z-]+:.*$/gm)?.join("\n") ?? "";
  const body = Buffer.from(match[2].replace(/^[A-Za-z-]+:.*$/gm, "").replace(/\s+/g, ""), "base64");
  if (label === "ENCRYPTED PRIVATE KEY") {
    if (passphrase === undefined) throw new Error(PARSE_FAILED);
    try {
      return { format: "pkcs8", data: native("node", "pkcs8Decrypt", { data: body, passphrase: toBuffer(passphrase, undefined, "passphrase") }) };
    } catch {
      throw new Error(PARSE_FAILED);
    }
  }
  const format = PEM_LABELS[label];
  if (format === undefined) throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `Unsupported PEM type "${label}"`);
  if (format === "x509" && wantPrivate) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "A certificate holds no private key");
  if (/Proc-Type:\s*4,ENCRYPTED/.test(headers)) return { format, data: decryptLegacyPem(headers, body, passphrase) };
  return { format, data: body };
}

// The members each JWK key type must have (workerd's messages name the first missing one).
const JWK_MEMBERS = {
  RSA: [["n", "e"], ["d", "p", "q", "dp", "dq", "qi"]],
  EC: [["crv", "x", "y"], ["d"]],
  OKP: [["crv"], ["d"]],
};
// PKCS #8 of a raw Ed25519 / X25519 private key: this prefix, then the 32 bytes.
const OKP_PKCS8_PREFIX = { Ed25519: "302e020100300506032b657004220420", X25519: "302e020100300506032b656e04220420" };

function importJwk(jwk, wantPrivate) {
  if (jwk === null || typeof jwk !== "object") throw invalidArgType("key.key", "of type object", jwk);
  if (jwk.kty === "oct") return new SecretKeyObject("secret", { bytes: Buffer.from(String(jwk.k), "base64url") });
  const members = JWK_MEMBERS[jwk.kty];
  if (members === undefined) {
    if (!wantPrivate) throw new Error("JWK public key import is not implemented for this key type");
    throw nodeError(TypeError, "ERR_CRYPTO_INVALID_JWK", "Invalid JWK data");
  }
  for (const name of [...(jwk.kty === "OKP" && wantPrivate ? [] : members[0]), ...(wantPrivate ? members[1] : [])]) {
    if (jwk.kty === "OKP" && name === "d" && jwk.crv === undefined) throw new Error("OKP JWK missing crv parameter");
    if (jwk[name] === undefined) throw new Error(`${jwk.kty} JWK missing ${name} parameter`);
  }
  if (jwk.kty === "OKP" && !wantPrivate && jwk.x === undefined) throw new Error("OKP JWK missing x parameter");
  let kind;
  let curve;
  if (jwk.kty === "RSA") kind = "RSA";
  else if (jwk.kty === "EC") [kind, curve] = ["EC", jwk.crv];
  else if (jwk.crv === "Ed25519" || jwk.crv === "X25519") kind = jwk.crv;
  else throw nodeError(TypeError, "ERR_CRYPTO_INVALID_JWK", "Invalid JWK data");
  if (kind === jwk.crv && wantPrivate) {
    // From d alone, as workerd (x is not checked against it).
    const d = Buffer.from(String(jwk.d), "base64url");
    if (d.length !== 32) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_JWK", "Invalid JWK private key");
    return makeAsymmetric(native("node", "keyInfo", { format: "pkcs8", data: Buffer.concat([Buffer.from(OKP_PKCS8_PREFIX[kind], "hex"), d]) }));
  }
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
  let passphrase;
  const isKeyData = (value) => typeof value === "string" || ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
  if (input !== null && typeof input === "object" && !ArrayBuffer.isView(input) && !(input instanceof ArrayBuffer)) {
    ({ key, format = "pem", type, encoding, passphrase } = input);
    if (key instanceof KeyObject) return key;
    if (typeof CryptoKey === "function" && key instanceof CryptoKey) return fromCryptoKey(key);
    if (format !== "jwk" && !isKeyData(key)) {
      throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject or CryptoKey", key);
    }
  } else if (!isKeyData(input)) {
    throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "options.key" property must be of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject or CryptoKey. Received ${require("node:internal/errors").describeReceived(input)}`);
  }
  if (format === "jwk") return importJwk(key, wantPrivate);
  // A private key that cannot be read fails as in workerd, with one message.
  const info = (parsed) => {
    try {
      return native("node", "keyInfo", parsed, "ERR_INVALID_ARG_VALUE");
    } catch {
      throw new Error(wantPrivate ? PARSE_FAILED : PUBLIC_PARSE_FAILED);
    }
  };
  if (format === "pem") {
    const parsed = parsePem(typeof key === "string" ? key : toBuffer(key).toString("latin1"), wantPrivate, passphrase);
    // As BoringSSL, a private key's label is a hint: "RSA PRIVATE KEY" holding PKCS #8 reads too.
    if (PRIVATE_FORMATS.includes(parsed.format)) {
      for (const candidate of [parsed.format, ...PRIVATE_FORMATS]) {
        try {
          return makeAsymmetric(native("node", "keyInfo", { format: candidate, data: parsed.data }));
        } catch {}
      }
    }
    return makeAsymmetric(info(parsed));
  }
  if (format !== "der") throw invalidArgValue(`${name}.format`, format);
  const data = toBuffer(key, encoding, `${name}.key`);
  const derFormat = { pkcs8: "pkcs8", spki: "spki", sec1: "sec1", pkcs1: wantPrivate ? "pkcs1-private" : "pkcs1-public" }[type];
  if (derFormat === undefined) throw invalidArgValue(`${name}.type`, type);
  if (wantPrivate && derFormat !== "pkcs8") {
    // As in workerd (BoringSSL), pkcs1 and sec1 are hints: a PKCS #8 key or the other form reads too.
    for (const candidate of [derFormat, ...PRIVATE_FORMATS]) {
      try {
        return makeAsymmetric(native("node", "keyInfo", { format: candidate, data }));
      } catch {}
    }
    throw new Error(PARSE_FAILED);
  }
  return makeAsymmetric(info({ format: derFormat, data }));
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
  if (object.type !== "private") {
    const given = key instanceof KeyObject || (typeof CryptoKey === "function" && key instanceof CryptoKey) || key?.key instanceof KeyObject;
    if (given) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type ${object.type}, expected private.`);
    // workerd reads key data as a private key and fails as for any other unreadable one.
    throw new Error(PARSE_FAILED);
  }
  return object;
};

exports.createPublicKey = function createPublicKey(key) {
  const object = parseAsymmetric(key, false, "key");
  if (object.type === "secret") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", "Invalid key object type secret, expected private or public.");
  return object.type === "private" ? publicOf(object) : object;
};

/** The KeyObject for a sign/verify key argument; `usePublic` turns a private key into its public half. */
// sign()/verify() and friends are often handed the same PEM text again and again: the keys they
// parse from a string are kept (the eight used last; never handed out by createPrivateKey
// or createPublicKey, whose results are new objects each time).
const PEM_CACHE_SIZE = 8;
const pemCache = new Map();

function remember(cacheKey, object) {
  pemCache.delete(cacheKey);
  if (pemCache.size >= PEM_CACHE_SIZE) pemCache.delete(pemCache.keys().next().value);
  pemCache.set(cacheKey, object);
  return object;
}

exports.prepareKey = function prepareKey(input, usePublic) {
  const cacheKey = typeof input === "string" ? `${usePublic ? "public" : "private"}:${input}` : undefined;
  const cached = cacheKey === undefined ? undefined : pemCache.get(cacheKey);
  if (cached !== undefined) return remember(cacheKey, cached);
  const object = parseAsymmetric(input, !usePublic, "key");
  if (object.type === "secret") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type secret, expected ${usePublic ? "public" : "private"}.`);
  if (!usePublic && object.type === "public") {
    const given = input instanceof KeyObject || (typeof CryptoKey === "function" && input instanceof CryptoKey) || input?.key instanceof KeyObject;
    if (given) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", "Invalid key object type public, expected private.");
    throw new Error(PARSE_FAILED);
  }
  const prepared = usePublic && object.type === "private" ? publicOf(object) : object;
  return cacheKey === undefined ? prepared : remember(cacheKey, prepared);
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

/** Node's ERR_INVALID_ARG_TYPE for an options property ("The "x" property must be …"). */
function propertyType(name, expected, value) {
  return nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" property must be ${expected}. Received ${require("node:internal/errors").describeReceived(value)}`);
}

function propertyRange(name, value, min, max, range = `>= ${min} && <= ${max}`) {
  if (typeof value !== "number") throw propertyType(name, "of type number", value);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${Number.isInteger(value) ? range : "an integer"}. Received ${value}`);
  }
  return value;
}

/** workerd's checks of generateKeyPair's options, in its order. */
function checkPairOptions(type, options) {
  for (const name of ["publicKeyEncoding", "privateKeyEncoding"]) {
    if (options[name] !== undefined && (options[name] === null || typeof options[name] !== "object")) throw propertyType(`options.${name}`, "of type object", options[name]);
  }
  if (type === "rsa") {
    propertyRange("options.modulusLength", options.modulusLength, 0, 4294967295, ">= 0 && < 4294967296");
    if (options.publicExponent !== undefined) propertyRange("options.publicExponent", options.publicExponent, 0, 4294967295, ">= 0 && < 4294967296");
  } else if (type === "ec") {
    if (options.paramEncoding !== undefined && options.paramEncoding !== "named" && options.paramEncoding !== "explicit") {
      throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.paramEncoding' must be one of: 'named', 'explicit'. Received ${typeof options.paramEncoding === "string" ? `'${options.paramEncoding}'` : String(options.paramEncoding)}`);
    }
  } else if (type === "dh") {
    const { prime, primeLength, generator, groupName } = options;
    if (groupName !== undefined && typeof groupName !== "string") throw propertyType("options.group", "of type string", groupName);
    if (prime !== undefined && !ArrayBuffer.isView(prime) && !(prime instanceof ArrayBuffer)) throw propertyType("options.prime", "an instance of Buffer, TypedArray, or ArrayBuffer", prime);
    if (primeLength !== undefined) propertyRange("options.primeLength", primeLength, 0, 2147483647);
    if (generator !== undefined) propertyRange("options.generator", generator, 0, 2147483647);
  }
}

function generate(type, options = {}) {
  if (typeof type !== "string") throw invalidArgType("type", "of type string", type);
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  if (type === "rsa" || type === "ec" || type === "ed25519" || type === "x25519" || type === "dh") checkPairOptions(type, options);
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
    // Natively on every curve (crypto.subtle has no P-224).
    const [pkcs8, spki] = native("node", "ecGenerate", { namedCurve: curve });
    return encodePair(pkcs8, spki, options);
  } else if (type === "ed25519" || type === "x25519") {
    params = { kind: WEB_KIND[type] };
  } else if (type === "dh") {
    throw new Error("Generating DH keys from a prime length is not yet implemented");
  } else {
    throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'type' must be one of: 'rsa', 'ec', 'ed25519', 'x25519', 'dh'. Received '${type}'`);
  }
  const [pkcs8, spki] = native("subtle", "generateKeyPair", params);
  return encodePair(pkcs8, spki, options);
}

function encodePair(pkcs8, spki, options) {
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
// util.promisify(generateKeyPair) resolves to { publicKey, privateKey }, as in Node.
Object.defineProperty(exports.generateKeyPair, Symbol.for("nodejs.util.promisify.custom"), {
  value: (type, options) => new Promise((resolve, reject) => exports.generateKeyPair(type, options, (error, publicKey, privateKey) => (error ? reject(error) : resolve({ publicKey, privateKey })))),
  configurable: true,
});

exports.generateKeySync = function generateKeySync(type, options = {}) {
  const length = options.length;
  if (type === "hmac") checkInteger(length, "options.length", 8, 65536);
  else if (type === "aes") {
    if (![128, 192, 256].includes(length)) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.length' must be one of: 128, 192, 256. Received ${String(length)}`);
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
