// node:crypto's ciphers: createCipheriv / createDecipheriv for AES-128/192/256 in CBC, CTR and
// GCM mode (the AES itself runs natively: webcrypto/node.rs). CBC and CTR stream: update()
// returns what whole blocks allow (CBC decryption holds back the last block for the padding
// check; CTR carries the counter across calls). GCM with a 12-byte IV streams too: its
// ciphertext is AES-CTR from IV || 2 with a 32-bit counter (NIST SP 800-38D), so update()
// returns it as Node does, while the message is kept for final(), where the aes-gcm crate's
// one-shot API makes the tag (or checks it; plaintext from update() is unauthenticated until
// then, as in Node). With a 16-byte IV, GCM output comes from final(). Ciphers are also
// Transform streams, as in Node.
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

/** GCM's counter block: `iv` advanced by `blocks` in its last 32 bits only (inc32). */
function addCounter32(block, blocks) {
  const next = Buffer.from(block);
  next.writeUInt32BE((next.readUInt32BE(12) + blocks) % 2 ** 32, 12);
  return next;
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
  // GCM with a 12-byte IV: the keystream's next counter block and the message so far.
  #gcmCounter;
  #gcmMessage = [];

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
    if (mode === "gcm" && ivBytes.length === 12) this.#gcmCounter = Buffer.concat([ivBytes, Buffer.from([0, 0, 0, 2])]);
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
    // workerd (unlike Node, which takes it as UTF-8) wants a string's encoding named.
    if (typeof data === "string" && inputEncoding === undefined) {
      throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The argument 'inputEncoding' If inputEncoding is not provided then the data must be a Buffer. Received undefined");
    }
    const input = Buffer.concat([this.#pending, toBuffer(data, inputEncoding)]);
    let out = Buffer.alloc(0);
    if (this.#mode === "gcm" && this.#gcmCounter !== undefined) {
      const carried = this.#pending.length;
      this.#gcmMessage.push(input.subarray(carried));
      const params = { mode: "ctr", counterBits: 32, encrypt: true, key: this.#key, iv: this.#gcmCounter, data: input };
      const stream = native("node", "cipher", params);
      out = Buffer.from(stream.buffer, stream.byteOffset, stream.byteLength).subarray(carried);
      const blocks = Math.floor(input.length / 16);
      this.#gcmCounter = addCounter32(this.#gcmCounter, blocks);
      this.#pending = input.subarray(blocks * 16);
    } else if (this.#mode === "gcm") {
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
      // Streamed: update() gave every byte; the one-shot pass over the message makes the tag.
      const streamed = this.#gcmCounter !== undefined;
      const message = streamed ? Buffer.concat(this.#gcmMessage) : this.#pending;
      this.#gcmMessage = [];
      const params = { mode: "gcm", encrypt: this.#encrypt, key: this.#key, iv: this.#iv, data: message, aad: this.#aad };
      if (this.#encrypt) {
        const tagLength = this.#tagLength ?? 16;
        params.tagLength = tagLength * 8;
        const sealed = native("node", "cipher", params);
        out = streamed ? Buffer.alloc(0) : Buffer.from(sealed.subarray(0, sealed.length - tagLength));
        this.#tag = Buffer.from(sealed.subarray(sealed.length - tagLength));
      } else {
        if (this.#tag === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Unsupported state or unable to authenticate data");
        params.tag = this.#tag;
        params.tagLength = this.#tag.length * 8;
        let opened;
        try {
          opened = native("node", "cipher", params);
        } catch {
          throw new Error("Unsupported state or unable to authenticate data");
        }
        out = streamed ? Buffer.alloc(0) : Buffer.from(opened);
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
