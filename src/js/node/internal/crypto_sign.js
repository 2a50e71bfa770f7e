// node:crypto's signatures: createSign / createVerify (Sign and Verify collect the data, then
// sign or verify it whole; they are Writable streams too, as in Node) and the one-shot sign() / verify(). RSA PKCS #1 v1.5 and PSS with
// SHA-1/SHA-2, ECDSA on P-256/P-384 (DER signatures by default, IEEE P1363 with
// dsaEncoding), Ed25519. The signing itself is crypto.subtle's (webcrypto/asymmetric.rs).
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgValue, toBuffer, encodeOutput, native, webDigest, digestName, checkFunction, later, DIGEST_SIZES } = require("node:internal/crypto_util");
const { prepareKey, kState } = require("node:internal/crypto_keys");
const LazyWritable = require("node:internal/crypto_util").lazyStream(require("node:stream").Writable);

const RSA_PKCS1_PADDING = 1;
const RSA_PKCS1_PSS_PADDING = 6;
const RSA_PSS_SALTLEN_DIGEST = -1;
const RSA_PSS_SALTLEN_MAX_SIGN = -2;

function options(input) {
  return input !== null && typeof input === "object" && !ArrayBuffer.isView(input) && !(input instanceof ArrayBuffer) && !(input instanceof require("node:internal/crypto_keys").KeyObject) ? input : {};
}

/** The subtleCall parameters for signing (or verifying) `data` with `key` and digest `algorithm`. */
function signParams(algorithm, key, data, opts) {
  const state = key[kState];
  const hashName = algorithm === null || algorithm === undefined ? undefined : algorithm;
  switch (state.kind) {
    case "ed25519":
      if (hashName !== undefined && digestName(hashName) !== undefined && !/^(sha512|ed25519)$/i.test(hashName)) {
        // Node ignores the digest for Ed25519 in sign()/verify(); createSign refuses Ed25519 keys.
      }
      return { name: "Ed25519", key: state.der, data };
    case "ec": {
      const hash = webDigest(hashName ?? "sha256", "algorithm");
      return { name: "ECDSA", hash, namedCurve: state.curve, key: state.der, data };
    }
    case "rsa": {
      const hash = webDigest(hashName ?? "sha256", "algorithm");
      const padding = opts.padding ?? RSA_PKCS1_PADDING;
      if (padding === RSA_PKCS1_PADDING) return { name: "RSASSA-PKCS1-v1_5", hash, key: state.der, data };
      if (padding !== RSA_PKCS1_PSS_PADDING) throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `Unsupported RSA padding ${padding} for signatures`);
      const digestSize = DIGEST_SIZES[digestName(hashName ?? "sha256")];
      const maxSalt = Math.ceil((state.bits - 1) / 8) - digestSize - 2;
      let salt = opts.saltLength ?? RSA_PSS_SALTLEN_MAX_SIGN;
      if (salt === RSA_PSS_SALTLEN_DIGEST) salt = digestSize;
      const auto = salt === RSA_PSS_SALTLEN_MAX_SIGN;
      if (auto) salt = maxSalt;
      if (!Number.isInteger(salt) || salt < 0 || salt > maxSalt) throw invalidArgValue("options.saltLength", opts.saltLength);
      return { name: "RSA-PSS", hash, saltLength: salt, key: state.der, data, auto, digestSize };
    }
    default:
      throw nodeError(Error, "ERR_CRYPTO_UNSUPPORTED_OPERATION", `Signatures with ${state.kind} keys are not supported`);
  }
}

/** workerd refuses DSA keys for signatures (it reads them, but does not sign with them). */
function refuseDsa(key, signing) {
  if (key.asymmetricKeyType === "dsa") throw new Error(`${signing ? "Signing" : "Verifying"} with DSA keys is not currently supported`);
}

function signBytes(algorithm, data, keyInput, streaming) {
  if (keyInput === undefined || keyInput === null) throw new Error("No key provided to sign");
  const opts = options(keyInput);
  const key = prepareKey(keyInput, false);
  refuseDsa(key, true);
  // Sign objects (createSign) hash first; workerd cannot set a digest for Ed25519 there.
  if (streaming && key.asymmetricKeyType === "ed25519") throw new Error("Failed to set signature digest");
  const params = signParams(algorithm, key, data, opts);
  delete params.auto;
  delete params.digestSize;
  let signature = native("subtle", "sign", params);
  if (params.name === "ECDSA" && (opts.dsaEncoding ?? "der") === "der") {
    signature = native("node", "sigToDer", { namedCurve: params.namedCurve, signature });
  } else if (params.name === "ECDSA" && opts.dsaEncoding !== "ieee-p1363") {
    throw invalidArgValue("options.dsaEncoding", opts.dsaEncoding);
  }
  return Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength);
}

function verifyBytes(algorithm, data, keyInput, signature, streaming) {
  if (keyInput === undefined || keyInput === null) throw new Error("No key provided to sign");
  const opts = options(keyInput);
  const key = prepareKey(keyInput, true);
  refuseDsa(key, false);
  if (streaming && key.asymmetricKeyType === "ed25519") throw new Error("Failed to set signature digest");
  const params = signParams(algorithm, key, data, opts);
  const { auto, digestSize } = params;
  delete params.auto;
  delete params.digestSize;
  if (params.name === "ECDSA" && (opts.dsaEncoding ?? "der") === "der") {
    const raw = native("node", "sigFromDer", { namedCurve: params.namedCurve, signature });
    if (raw === false) return false;
    signature = raw;
  }
  params.signature = signature;
  if (params.name === "RSA-PSS" && auto) {
    // RSA_PSS_SALTLEN_AUTO: the salt length is whatever the signer chose; the common choices
    // (the maximum, the digest's size, none) are tried in turn.
    for (const salt of new Set([params.saltLength, digestSize, 0])) {
      if (native("subtle", "verify", { ...params, saltLength: salt })) return true;
    }
    return false;
  }
  return native("subtle", "verify", params);
}

class Sign extends LazyWritable {
  #algorithm;
  #chunks = [];
  constructor(algorithm, options) {
    super(options);
    if (typeof algorithm !== "string") throw require("node:internal/crypto_util").invalidArgType("algorithm", "of type string", algorithm);
    if (digestName(algorithm) === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${algorithm}`);
    this.#algorithm = algorithm;
  }
  update(data, encoding) {
    if (this.#chunks === undefined) throw new Error("Signing context has already been finalized");
    this.#chunks.push(Buffer.from(toBuffer(data, encoding)));
    return this;
  }
  _write(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }
  sign(privateKey, outputEncoding) {
    if (this.#chunks === undefined) throw new Error("Signing context has already been finalized");
    const data = Buffer.concat(this.#chunks);
    const signature = signBytes(this.#algorithm, data, privateKey, true);
    this.#chunks = undefined;
    return encodeOutput(signature, outputEncoding);
  }
}

class Verify extends LazyWritable {
  #algorithm;
  #chunks = [];
  constructor(algorithm, options) {
    super(options);
    if (typeof algorithm !== "string") throw require("node:internal/crypto_util").invalidArgType("algorithm", "of type string", algorithm);
    if (digestName(algorithm) === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${algorithm}`);
    this.#algorithm = algorithm;
  }
  update(data, encoding) {
    if (this.#chunks === undefined) throw new Error("Signing context has already been finalized");
    this.#chunks.push(Buffer.from(toBuffer(data, encoding)));
    return this;
  }
  _write(chunk, encoding, callback) {
    this.update(chunk, encoding);
    callback();
  }
  verify(publicKey, signature, signatureEncoding) {
    if (this.#chunks === undefined) throw new Error("Verification context has already been finalized");
    if (publicKey === undefined || publicKey === null) throw new Error("No key provided to sign");
    const data = Buffer.concat(this.#chunks);
    const valid = verifyBytes(this.#algorithm, data, publicKey, toBuffer(signature, signatureEncoding, "signature"), true);
    this.#chunks = undefined;
    return valid;
  }
}

exports.Sign = Sign;
exports.Verify = Verify;
exports.createSign = (algorithm, options) => new Sign(algorithm, options);
exports.createVerify = (algorithm, options) => new Verify(algorithm, options);

exports.sign = function sign(algorithm, data, key, callback) {
  const bytes = toBuffer(data, undefined, "data");
  if (callback !== undefined) {
    checkFunction(callback, "callback");
    return later(callback, () => signBytes(algorithm, bytes, key));
  }
  return signBytes(algorithm, bytes, key);
};

exports.verify = function verify(algorithm, data, key, signature, callback) {
  const bytes = toBuffer(data, undefined, "data");
  const sig = toBuffer(signature, undefined, "signature");
  if (callback !== undefined) {
    checkFunction(callback, "callback");
    return later(callback, () => verifyBytes(algorithm, bytes, key, sig));
  }
  return verifyBytes(algorithm, bytes, key, sig);
};
