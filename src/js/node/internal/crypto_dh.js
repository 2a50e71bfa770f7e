// node:crypto's key agreement objects, with workerd's argument checks and messages:
// DiffieHellman / createDiffieHellman (a prime given, or a safe prime of a given size generated
// natively), DiffieHellmanGroup / getDiffieHellman (the RFC 3526 groups modp14–modp18, as
// workerd: their primes are computed from π as the RFC defines them), ECDH / createECDH on
// prime256v1, secp384r1 and secp521r1, and ECDH.convertKey. The arithmetic runs natively
// (webcrypto/node_dh.rs: num-bigint-dig and the RustCrypto curves); keys cross as bytes.
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgType, toBuffer, native, validateInt32, validateString } = require("node:internal/crypto_util");

const kHandle = Symbol("kHandle");
const DH_GENERATOR = 2;
const MAX_BITS = 10000;

// --- The RFC 3526 groups --------------------------------------------------------------------

/** floor(π · 2^bits), by Machin's formula in BigInt fixed point. */
function piScaled(bits) {
  const guard = 64n;
  const one = 1n << (BigInt(bits) + guard);
  const atanInverse = (x) => {
    const square = BigInt(x * x);
    let term = one / BigInt(x);
    let sum = term;
    let sign = -1n;
    for (let k = 1n; ; k++) {
      term /= square;
      const next = term / (2n * k + 1n);
      if (next === 0n) break;
      sum += sign * next;
      sign = -sign;
    }
    return sum;
  };
  return (16n * atanInverse(5) - 4n * atanInverse(239)) >> guard;
}

// RFC 3526: p = 2^n - 2^(n-64) - 1 + 2^64 · (floor(2^(n-130) · π) + k), generator 2.
const GROUPS = { modp14: [2048, 124476n], modp15: [3072, 1690314n], modp16: [4096, 240904n], modp17: [6144, 929484n], modp18: [8192, 4743158n] };
const groupPrimes = new Map();

function groupPrime(name) {
  let prime = groupPrimes.get(name);
  if (prime === undefined) {
    const [n, k] = GROUPS[name];
    const N = BigInt(n);
    const value = (1n << N) - (1n << (N - 64n)) - 1n + (1n << 64n) * (piScaled(n - 130) + k);
    prime = Buffer.from(value.toString(16), "hex");
    groupPrimes.set(name, prime);
  }
  return prime;
}

// --- Finite-field Diffie-Hellman ------------------------------------------------------------

const isBytes = (value) => ArrayBuffer.isView(value) || value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer);
const bigOf = (bytes) => (bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString("hex")}`));
const stripZeros = (bytes) => {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return Buffer.from(bytes.subarray(i));
};

function padTo(bytes, length) {
  if (bytes.length >= length) return Buffer.from(bytes);
  return Buffer.concat([Buffer.alloc(length - bytes.length), bytes]);
}

/** The state of one DiffieHellman object (workerd's DiffieHellmanHandle). */
class DhState {
  constructor(prime, generator) {
    this.prime = prime;
    this.generator = generator;
    this.publicKey = undefined;
    this.privateKey = undefined;
    this.verifyError = undefined;
  }

  /** The DH_check flags, computed once. */
  check() {
    if (this.verifyError === undefined) this.verifyError = native("node", "dhCheck", { prime: this.prime, generator: this.generator });
    return this.verifyError;
  }

  /** workerd's DH_check_pub_key: 1 < key < p - 1. */
  checkPublic(key, what) {
    const value = bigOf(key);
    const p = bigOf(this.prime);
    const subject = what === "computeSecret()" ? "Supplied key" : "key";
    if (value <= 1n) throw new RangeError(`DiffieHellman ${what} failed: ${subject} is too small`);
    if (value >= p - 1n) throw new RangeError(`DiffieHellman ${what} failed: ${subject} is too large`);
  }

  generateKeys() {
    if (this.privateKey === undefined) this.privateKey = stripZeros(native("node", "dhPrivate", { prime: this.prime }));
    this.publicKey = padTo(native("node", "dhModPow", { base: this.generator, exponent: this.privateKey, modulus: this.prime }), this.prime.length);
    return this.publicKey;
  }

  computeSecret(key) {
    if (key.length === 0) throw new Error("DiffieHellman computeSecret() failed: invalid key");
    if (this.privateKey === undefined) throw new Error("No private key");
    this.checkPublic(key, "computeSecret()");
    return padTo(native("node", "dhModPow", { base: key, exponent: this.privateKey, modulus: this.prime }), this.prime.length);
  }
}

function dhState(sizeOrKey, generator) {
  if (typeof sizeOrKey === "number") {
    if (typeof generator !== "number") throw new Error("DiffieHellman init failed: invalid parameters");
    if (sizeOrKey > MAX_BITS) throw new RangeError("DiffieHellman init failed: requested prime size too large");
    if (sizeOrKey < 2) throw new Error("DiffieHellman init failed: could not generate parameters");
    if (generator < 2) throw new RangeError("DiffieHellman init failed: generator too small");
    const prime = Buffer.from(native("node", "dhGeneratePrime", { bits: sizeOrKey, generator }));
    return new DhState(prime, Buffer.from([generator]));
  }
  const key = sizeOrKey;
  if (key.length > MAX_BITS / 8) throw new RangeError("DiffieHellman init failed: key is too large");
  if (key.length === 0) throw new Error("DiffieHellman init failed: invalid key");
  let g;
  if (typeof generator === "number") {
    if (generator < 2) throw new RangeError("DiffieHellman init failed: generator too small");
    g = Buffer.from(generator.toString(16).padStart(2 * Math.ceil(generator.toString(16).length / 2), "0"), "hex");
  } else {
    if (generator.length > MAX_BITS / 8) throw new RangeError("DiffieHellman init failed: generator is too large");
    if (generator.length === 0 || bigOf(generator) <= 1n) throw new Error("DiffieHellman init failed: invalid generator");
    g = stripZeros(generator);
  }
  const p = stripZeros(key);
  if ((p[p.length - 1] & 1) === 0 || bigOf(g) >= bigOf(p)) throw new Error("DiffieHellman init failed: Invalid DH prime generated");
  return new DhState(p, g);
}

const BYTES_EXPECTED = "of type number or string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView";

function DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding) {
  if (!(this instanceof DiffieHellman)) return new DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding);
  if (typeof sizeOrKey !== "number" && typeof sizeOrKey !== "string" && !isBytes(sizeOrKey)) throw invalidArgType("sizeOrKey", BYTES_EXPECTED, sizeOrKey);
  if (typeof sizeOrKey === "number") validateInt32(sizeOrKey, "sizeOrKey");
  if (keyEncoding && keyEncoding !== "buffer" && !(typeof keyEncoding === "string" && Buffer.isEncoding(keyEncoding))) {
    genEncoding = generator;
    generator = keyEncoding;
    keyEncoding = "utf-8";
  }
  keyEncoding ??= "utf-8";
  genEncoding ??= "utf-8";
  if (typeof sizeOrKey !== "number") sizeOrKey = toBuffer(sizeOrKey, keyEncoding === "buffer" ? undefined : keyEncoding);
  if (!generator) generator = DH_GENERATOR;
  else if (typeof generator === "number") validateInt32(generator, "generator");
  else if (typeof generator === "string") generator = toBuffer(generator, genEncoding === "buffer" ? undefined : genEncoding);
  else if (!isBytes(generator)) throw invalidArgType("generator", BYTES_EXPECTED, generator);
  else generator = toBuffer(generator);
  this[kHandle] = dhState(sizeOrKey, generator);
}

function DiffieHellmanGroup(name) {
  if (!(this instanceof DiffieHellmanGroup)) return new DiffieHellmanGroup(name);
  if (!Object.hasOwn(GROUPS, name)) {
    throw new Error("Failed to init DiffieHellmanGroup: invalid group. Only groups {modp14, modp15, modp16, modp17, modp18} are supported.");
  }
  this[kHandle] = new DhState(groupPrime(name), Buffer.from([DH_GENERATOR]));
}

const encode = (bytes, encoding) => (encoding && encoding !== "buffer" ? Buffer.from(bytes).toString(encoding) : Buffer.from(bytes));
const keyBytes = (key, encoding) => {
  if (typeof key === "string") return Buffer.from(key, encoding && encoding !== "buffer" ? encoding : "utf8");
  if (isBytes(key)) return toBuffer(key);
  throw invalidArgType("key", "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", key);
};

const shared = {
  generateKeys(encoding) {
    return encode(this[kHandle].generateKeys(), encoding);
  },
  computeSecret(key, inputEncoding, outputEncoding) {
    return encode(this[kHandle].computeSecret(keyBytes(key, inputEncoding)), outputEncoding);
  },
  getPrime(encoding) {
    return encode(this[kHandle].prime, encoding);
  },
  getGenerator(encoding) {
    return encode(this[kHandle].generator, encoding);
  },
  getPublicKey(encoding) {
    const key = this[kHandle].publicKey;
    if (key === undefined) throw new Error("No public key");
    return encode(key, encoding);
  },
  getPrivateKey(encoding) {
    const key = this[kHandle].privateKey;
    if (key === undefined) throw new Error("No private key");
    return encode(key, encoding);
  },
};
const verifyError = {
  get() {
    return this[kHandle].check();
  },
  configurable: true,
  enumerable: true,
};
for (const Class of [DiffieHellman, DiffieHellmanGroup]) {
  for (const [name, fn] of Object.entries(shared)) Object.defineProperty(Class.prototype, name, { value: fn, writable: true, configurable: true });
  Object.defineProperty(Class.prototype, "verifyError", verifyError);
}
// Only DiffieHellman (not a group) takes keys.
DiffieHellman.prototype.setPublicKey = function setPublicKey(key, encoding) {
  const bytes = keyBytes(key, encoding);
  this[kHandle].checkPublic(bytes, "setPublicKey()");
  this[kHandle].publicKey = padTo(stripZeros(bytes), this[kHandle].prime.length);
  return this;
};
DiffieHellman.prototype.setPrivateKey = function setPrivateKey(key, encoding) {
  this[kHandle].privateKey = stripZeros(keyBytes(key, encoding));
  return this;
};

exports.DiffieHellman = DiffieHellman;
exports.DiffieHellmanGroup = DiffieHellmanGroup;
exports.createDiffieHellman = (sizeOrKey, keyEncoding, generator, genEncoding) => new DiffieHellman(sizeOrKey, keyEncoding, generator, genEncoding);
exports.createDiffieHellmanGroup = (name) => new DiffieHellmanGroup(name);
exports.getDiffieHellman = (name) => new DiffieHellmanGroup(name);

// --- ECDH ------------------------------------------------------------------------------------

const EC_CURVES = { secp224r1: "P-224", "p-224": "P-224", prime256v1: "P-256", secp256r1: "P-256", "p-256": "P-256", secp384r1: "P-384", "p-384": "P-384", secp521r1: "P-521", "p-521": "P-521" };
exports.EC_CURVES = EC_CURVES;
const FORMATS = ["compressed", "uncompressed", "hybrid"];

function checkFormat(format) {
  if (!FORMATS.includes(format)) {
    throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'format' must be one of: 'compressed', 'uncompressed', 'hybrid'. Received ${typeof format === "string" ? `'${format}'` : String(format)}`);
  }
}

function curveOf(name) {
  const curve = EC_CURVES[String(name).toLowerCase()];
  if (curve === undefined) throw new Error("Invalid curve");
  return curve;
}

/** `point` (SEC1) in `format`; hybrid is the uncompressed point with the parity in its tag. */
function pointIn(curve, point, format) {
  if (format === "uncompressed") return point;
  const compressed = Buffer.from(native("node", "ecPoint", { namedCurve: curve, point, compressed: true }));
  if (format === "compressed") return compressed;
  const hybrid = Buffer.from(native("node", "ecPoint", { namedCurve: curve, point, compressed: false }));
  hybrid[0] = compressed[0] === 3 ? 7 : 6;
  return hybrid;
}

function pointBytes(key, encoding, name) {
  if (typeof key === "string") return Buffer.from(key, encoding ?? "utf8");
  if (!ArrayBuffer.isView(key)) throw invalidArgType(name, "of type string or an instance of Buffer, TypedArray, or DataView", key);
  const bytes = toBuffer(key);
  // A hybrid point is read as the uncompressed one.
  if ((bytes[0] === 6 || bytes[0] === 7) && bytes.length > 1) return Buffer.concat([Buffer.from([4]), bytes.subarray(1)]);
  return bytes;
}

function ECDH(curveName) {
  if (!(this instanceof ECDH)) return new ECDH(curveName);
  validateString(curveName, "curveName");
  this[kHandle] = { curve: curveOf(curveName), privateKey: undefined, publicKey: undefined };
}

ECDH.prototype.generateKeys = function generateKeys(encoding, format) {
  if (encoding != null) validateString(encoding, "encoding");
  if (format != null) checkFormat(format);
  const state = this[kHandle];
  const [privateKey, publicKey] = native("node", "ecdhKeys", { namedCurve: state.curve });
  [state.privateKey, state.publicKey] = [Buffer.from(privateKey), Buffer.from(publicKey)];
  return this.getPublicKey(encoding, format);
};

ECDH.prototype.computeSecret = function computeSecret(otherPublicKey, inputEncoding, outputEncoding) {
  const point = pointBytes(otherPublicKey, inputEncoding, "otherPublicKey");
  if (inputEncoding != null) validateString(inputEncoding, "inputEncoding");
  if (outputEncoding != null) validateString(outputEncoding, "outputEncoding");
  const state = this[kHandle];
  if (state.privateKey === undefined) throw new Error("Failed to get ECDH private key");
  let secret;
  try {
    secret = native("node", "ecdhCompute", { namedCurve: state.curve, private: state.privateKey, public: point });
  } catch {
    throw nodeError(Error, "ERR_CRYPTO_ECDH_INVALID_PUBLIC_KEY", "Public key is not valid for specified curve");
  }
  return encode(secret, outputEncoding);
};

ECDH.prototype.getPrivateKey = function getPrivateKey(encoding) {
  if (encoding != null) validateString(encoding, "encoding");
  const key = this[kHandle].privateKey;
  if (key === undefined) throw new Error("Failed to get ECDH private key");
  return encode(key, encoding);
};

ECDH.prototype.getPublicKey = function getPublicKey(encoding, format = "uncompressed") {
  if (encoding != null) validateString(encoding, "encoding");
  checkFormat(format);
  const state = this[kHandle];
  if (state.publicKey === undefined) throw new Error("Failed to get ECDH public key");
  return encode(pointIn(state.curve, state.publicKey, format), encoding);
};

ECDH.prototype.setPrivateKey = function setPrivateKey(key, encoding) {
  if (encoding != null) validateString(encoding, "encoding");
  const bytes = pointBytes(key, encoding, "key");
  const state = this[kHandle];
  const [privateKey, publicKey] = native("node", "ecdhKeys", { namedCurve: state.curve, private: bytes }, "ERR_CRYPTO_INVALID_KEYTYPE");
  [state.privateKey, state.publicKey] = [Buffer.from(privateKey), Buffer.from(publicKey)];
};

ECDH.convertKey = function convertKey(key, curve, inputEncoding, outputEncoding, format = "uncompressed") {
  const point = pointBytes(key, inputEncoding, "key");
  validateString(curve, "curve");
  if (inputEncoding != null) validateString(inputEncoding, "inputEncoding");
  if (outputEncoding != null) validateString(outputEncoding, "outputEncoding");
  checkFormat(format);
  const name = curveOf(curve);
  const uncompressed = Buffer.from(native("node", "ecPoint", { namedCurve: name, point, compressed: false }, "ERR_CRYPTO_ECDH_INVALID_PUBLIC_KEY"));
  return encode(pointIn(name, uncompressed, format), outputEncoding);
};

exports.ECDH = ECDH;
exports.createECDH = (curveName) => new ECDH(curveName);
