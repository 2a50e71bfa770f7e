// node:crypto's ciphers: createCipheriv / createDecipheriv for AES-128/192/256 in CBC, CTR and
// GCM mode (the AES itself runs natively: webcrypto/node.rs). CBC and CTR stream: update()
// returns what whole blocks allow (CBC decryption holds back the last block for the padding
// check; CTR carries the counter across calls). GCM is authenticated over the whole message by
// the aes-gcm crate's one-shot API, so its output comes from final(). Ciphers are also Transform
// streams, as in Node.
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgType, toBuffer, native } = require("node:internal/crypto_util");
const { secretBytes } = require("node:internal/crypto_keys");
const { StringDecoder } = require("node:string_decoder");
const LazyTransform = require("node:internal/crypto_util").lazyStream(require("node:stream").Transform);

const CIPHERS = ["aes-128-cbc", "aes-192-cbc", "aes-256-cbc", "aes-128-ctr", "aes-192-ctr", "aes-256-ctr", "aes-128-gcm", "aes-192-gcm", "aes-256-gcm"];
const ALIASES = { aes128: "aes-128-cbc", aes192: "aes-192-cbc", aes256: "aes-256-cbc", "id-aes128-gcm": "aes-128-gcm", "id-aes192-gcm": "aes-192-gcm", "id-aes256-gcm": "aes-256-gcm" };
exports.CIPHERS = CIPHERS;

function parseCipher(name) {
  if (typeof name !== "string") throw invalidArgType("cipher", "of type string", name);
  const lower = ALIASES[name.toLowerCase()] ?? name.toLowerCase();
  if (!CIPHERS.includes(lower)) throw nodeError(Error, "ERR_CRYPTO_UNKNOWN_CIPHER", "Unknown cipher");
  const [, bits, mode] = lower.split("-");
  return { keyLength: Number(bits) / 8, mode };
}

/** The 16-byte big-endian counter block `iv` advanced by `blocks`. */
function addCounter(iv, blocks) {
  const value = (BigInt(`0x${Buffer.from(iv).toString("hex")}`) + BigInt(blocks)) % (1n << 128n);
  return Buffer.from(value.toString(16).padStart(32, "0"), "hex");
}

class CipherBase extends LazyTransform {
  #encrypt;
  #mode;
  #key;
  #iv;
  #pending = Buffer.alloc(0);
  #padding = true;
  #aad = Buffer.alloc(0);
  #tag;
  #tagLength;
  #finished = false;
  #decoder;
  #decoderEncoding;

  constructor(encrypt, cipher, key, iv, options = {}) {
    super(options);
    const { keyLength, mode } = parseCipher(cipher);
    const keyBytes = secretBytes(key, "key");
    if (keyBytes.length !== keyLength) throw nodeError(RangeError, "ERR_CRYPTO_INVALID_KEYLEN", "Invalid key length");
    if (iv === null || iv === undefined) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", "Invalid initialization vector");
    const ivBytes = toBuffer(iv, undefined, "iv");
    if (mode === "gcm") {
      if (ivBytes.length !== 12 && ivBytes.length !== 16) {
        throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", ivBytes.length === 0 ? "Invalid initialization vector" : `Invalid initialization vector: workerbox supports AES-GCM ivs of 12 or 16 bytes (got ${ivBytes.length})`);
      }
      const tagLength = options?.authTagLength;
      if (tagLength !== undefined && (![12, 13, 14, 15, 16].includes(tagLength))) {
        throw nodeError(TypeError, "ERR_CRYPTO_INVALID_AUTH_TAG", `Invalid authentication tag length: ${tagLength}`);
      }
      this.#tagLength = tagLength;
    } else if (ivBytes.length !== 16) {
      throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", "Invalid initialization vector");
    }
    this.#encrypt = encrypt;
    this.#mode = mode;
    this.#key = Buffer.from(keyBytes);
    this.#iv = Buffer.from(ivBytes);
  }

  #run(data, iv, padding) {
    const out = native("node", "cipher", { mode: this.#mode, encrypt: this.#encrypt, key: this.#key, iv, data, padding }, "ERR_OSSL_BAD_DECRYPT");
    return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  }

  /** Output as Node gives it: a Buffer, or text through one decoder for the whole stream. */
  #output(bytes, encoding, last) {
    if (encoding === undefined || encoding === "buffer") return bytes;
    if (this.#decoder === undefined || this.#decoderEncoding !== encoding) {
      this.#decoder = new StringDecoder(encoding);
      this.#decoderEncoding = encoding;
    }
    return last ? this.#decoder.write(bytes) + this.#decoder.end() : this.#decoder.write(bytes);
  }

  update(data, inputEncoding, outputEncoding) {
    if (this.#finished) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation update");
    const input = Buffer.concat([this.#pending, toBuffer(data, inputEncoding)]);
    let out = Buffer.alloc(0);
    if (this.#mode === "gcm") {
      this.#pending = input;
    } else if (this.#mode === "ctr") {
      const carried = this.#pending.length;
      out = this.#run(input, this.#iv, false).subarray(carried);
      const blocks = Math.floor(input.length / 16);
      this.#iv = addCounter(this.#iv, blocks);
      this.#pending = input.subarray(blocks * 16);
    } else {
      let whole = input.length - (input.length % 16);
      if (!this.#encrypt && this.#padding && whole === input.length && whole > 0) whole -= 16;
      if (whole > 0) {
        const chunk = input.subarray(0, whole);
        out = this.#run(chunk, this.#iv, false);
        this.#iv = Buffer.from((this.#encrypt ? out : chunk).subarray(whole - 16, whole));
      }
      this.#pending = input.subarray(whole);
    }
    return this.#output(out, outputEncoding, false);
  }

  final(outputEncoding) {
    if (this.#finished) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation final");
    this.#finished = true;
    let out = Buffer.alloc(0);
    if (this.#mode === "gcm") {
      const params = { mode: "gcm", encrypt: this.#encrypt, key: this.#key, iv: this.#iv, data: this.#pending, aad: this.#aad };
      if (this.#encrypt) {
        const tagLength = this.#tagLength ?? 16;
        params.tagLength = tagLength * 8;
        const sealed = native("node", "cipher", params);
        out = Buffer.from(sealed.subarray(0, sealed.length - tagLength));
        this.#tag = Buffer.from(sealed.subarray(sealed.length - tagLength));
      } else {
        if (this.#tag === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Unsupported state or unable to authenticate data");
        params.tag = this.#tag;
        params.tagLength = this.#tag.length * 8;
        try {
          out = Buffer.from(native("node", "cipher", params));
        } catch {
          throw new Error("Unsupported state or unable to authenticate data");
        }
      }
    } else if (this.#mode === "ctr") {
      // update() already returned every byte.
    } else if (this.#pending.length > 0 || this.#padding) {
      try {
        out = this.#run(this.#pending, this.#iv, this.#padding);
      } catch (error) {
        const message = /wrong final block length/.test(error.message) ? "wrong final block length" : /not multiple/.test(error.message) ? "data not multiple of block length" : "bad decrypt";
        const code = message === "bad decrypt" ? "ERR_OSSL_BAD_DECRYPT" : message === "wrong final block length" ? "ERR_OSSL_WRONG_FINAL_BLOCK_LENGTH" : "ERR_OSSL_DATA_NOT_MULTIPLE_OF_BLOCK_LENGTH";
        throw nodeError(Error, code, message);
      }
    }
    this.#pending = Buffer.alloc(0);
    return this.#output(out, outputEncoding, true);
  }

  _transform(chunk, encoding, callback) {
    let out;
    try {
      out = this.update(chunk, encoding);
    } catch (error) {
      return callback(error);
    }
    if (out.length > 0) this.push(out);
    callback();
  }

  _flush(callback) {
    let out;
    try {
      out = this.final();
    } catch (error) {
      return callback(error);
    }
    if (out.length > 0) this.push(out);
    callback();
  }

  setAutoPadding(autoPadding = true) {
    if (this.#finished) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAutoPadding");
    this.#padding = Boolean(autoPadding);
    return this;
  }

  setAAD(buffer, options) {
    if (this.#mode !== "gcm") throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAAD");
    this.#aad = Buffer.concat([this.#aad, toBuffer(buffer, options?.encoding, "buffer")]);
    return this;
  }

  getAuthTag() {
    if (!this.#encrypt || this.#tag === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation getAuthTag");
    return Buffer.from(this.#tag);
  }

  setAuthTag(tag, encoding) {
    if (this.#encrypt || this.#mode !== "gcm" || this.#finished) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAuthTag");
    const bytes = toBuffer(tag, encoding, "buffer");
    if (bytes.length < 12 || bytes.length > 16 || (this.#tagLength !== undefined && bytes.length !== this.#tagLength)) {
      throw nodeError(TypeError, "ERR_CRYPTO_INVALID_AUTH_TAG", `Invalid authentication tag length: ${bytes.length}`);
    }
    this.#tag = Buffer.from(bytes);
    return this;
  }
}

class Cipheriv extends CipherBase {
  constructor(cipher, key, iv, options) {
    super(true, cipher, key, iv, options);
  }
}
class Decipheriv extends CipherBase {
  constructor(cipher, key, iv, options) {
    super(false, cipher, key, iv, options);
  }
}

exports.Cipheriv = Cipheriv;
exports.Decipheriv = Decipheriv;
exports.createCipheriv = (cipher, key, iv, options) => new Cipheriv(cipher, key, iv, options);
exports.createDecipheriv = (cipher, key, iv, options) => new Decipheriv(cipher, key, iv, options);

exports.getCipherInfo = function getCipherInfo(name) {
  let parsed;
  try {
    parsed = parseCipher(name);
  } catch {
    return undefined;
  }
  const canonical = ALIASES[name.toLowerCase()] ?? name.toLowerCase();
  return { name: canonical, nid: undefined, blockSize: parsed.mode === "cbc" ? 16 : 1, ivLength: parsed.mode === "gcm" ? 12 : 16, keyLength: parsed.keyLength, mode: parsed.mode };
};
