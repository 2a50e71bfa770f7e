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

// name -> [OpenSSL NID, block size, IV length, key length, mode]
const CIPHER_INFO = {
  "aes-128-cbc": [419, 16, 16, 16, "cbc"],
  "aes-192-cbc": [423, 16, 16, 24, "cbc"],
  "aes-256-cbc": [427, 16, 16, 32, "cbc"],
  "aes-128-ctr": [904, 1, 16, 16, "ctr"],
  "aes-192-ctr": [905, 1, 16, 24, "ctr"],
  "aes-256-ctr": [906, 1, 16, 32, "ctr"],
  "aes-128-ecb": [418, 16, 0, 16, "ecb"],
  "aes-192-ecb": [422, 16, 0, 24, "ecb"],
  "aes-256-ecb": [426, 16, 0, 32, "ecb"],
  "aes-128-ofb": [420, 1, 16, 16, "ofb"],
  "aes-192-ofb": [424, 1, 16, 24, "ofb"],
  "aes-256-ofb": [428, 1, 16, 32, "ofb"],
  "aes-128-gcm": [895, 1, 12, 16, "gcm"],
  "aes-192-gcm": [898, 1, 12, 24, "gcm"],
  "aes-256-gcm": [901, 1, 12, 32, "gcm"],
  "chacha20-poly1305": [1018, 1, 12, 32, "chacha20-poly1305"],
};
const CIPHERS = Object.keys(CIPHER_INFO);
const ALIASES = { aes128: "aes-128-cbc", aes192: "aes-192-cbc", aes256: "aes-256-cbc", "id-aes128-gcm": "aes-128-gcm", "id-aes192-gcm": "aes-192-gcm", "id-aes256-gcm": "aes-256-gcm" };
exports.CIPHERS = CIPHERS;
// The authenticated modes: a tag, AAD, output at final().
const AEAD = new Set(["gcm", "chacha20-poly1305"]);

function parseCipher(name) {
  if (typeof name !== "string") throw invalidArgType("cipher", "of type string", name);
  const lower = ALIASES[name.toLowerCase()] ?? name.toLowerCase();
  if (!CIPHERS.includes(lower)) throw nodeError(Error, "ERR_CRYPTO_UNKNOWN_CIPHER", "Unknown cipher");
  const [, , , keyLength, mode] = CIPHER_INFO[lower];
  return { keyLength, mode };
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
    if ((iv === null || iv === undefined) && mode !== "ecb") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", "Invalid initialization vector");
    const ivBytes = iv === null || iv === undefined ? Buffer.alloc(0) : toBuffer(iv, undefined, "iv");
    if (mode === "ecb") {
      if (ivBytes.length !== 0) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", "Invalid initialization vector");
    } else if (mode === "chacha20-poly1305") {
      if (ivBytes.length !== 12) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_IV", "Invalid initialization vector");
      const tagLength = options?.authTagLength;
      if (tagLength !== undefined && tagLength !== 16) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_AUTH_TAG", `Invalid authentication tag length: ${tagLength}`);
      this.#tagLength = 16;
    } else if (mode === "gcm") {
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
    } else if (AEAD.has(this.#mode)) {
      this.#pending = input;
    } else if (this.#mode === "ofb") {
      // The keystream carries on from the last whole block's (its output XOR its input).
      const carried = this.#pending.length;
      const stream = this.#run(input, this.#iv, false);
      out = stream.subarray(carried);
      const blocks = Math.floor(input.length / 16);
      if (blocks > 0) {
        const last = (blocks - 1) * 16;
        const next = Buffer.alloc(16);
        for (let i = 0; i < 16; i++) next[i] = stream[last + i] ^ input[last + i];
        this.#iv = next;
      }
      this.#pending = input.subarray(blocks * 16);
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
    if (AEAD.has(this.#mode)) {
      // Streamed: update() gave every byte; the one-shot pass over the message makes the tag.
      const streamed = this.#gcmCounter !== undefined;
      const message = streamed ? Buffer.concat(this.#gcmMessage) : this.#pending;
      this.#gcmMessage = [];
      const params = { mode: this.#mode, encrypt: this.#encrypt, key: this.#key, iv: this.#iv, data: message, aad: this.#aad };
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
    } else if (this.#mode === "ctr" || this.#mode === "ofb") {
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
    if (!AEAD.has(this.#mode)) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAAD");
    this.#aad = Buffer.concat([this.#aad, toBuffer(buffer, options?.encoding, "buffer")]);
    return this;
  }

  getAuthTag() {
    if (!this.#encrypt || this.#tag === undefined) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation getAuthTag");
    return Buffer.from(this.#tag);
  }

  setAuthTag(tag, encoding) {
    if (this.#encrypt || !AEAD.has(this.#mode) || this.#finished) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAuthTag");
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

/** The cipher's facts, or undefined when it is unknown or the asked key/IV lengths do not fit it. */
exports.getCipherInfo = function getCipherInfo(nameOrNid, options = {}) {
  let canonical;
  if (typeof nameOrNid === "number") canonical = CIPHERS.find((name) => CIPHER_INFO[name][0] === nameOrNid);
  else if (typeof nameOrNid === "string") canonical = ALIASES[nameOrNid.toLowerCase()] ?? nameOrNid.toLowerCase();
  else throw invalidArgType("nameOrNid", "of type string or number", nameOrNid);
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  const info = CIPHER_INFO[canonical];
  if (info === undefined) return undefined;
  const [nid, blockSize, ivLength, keyLength, mode] = info;
  const { keyLength: askedKey, ivLength: askedIv } = options;
  if (askedKey !== undefined && askedKey !== keyLength) return undefined;
  // GCM takes IVs of other lengths too (workerbox: 12 or 16 bytes).
  if (askedIv !== undefined && askedIv !== ivLength && !(mode === "gcm" && askedIv === 16)) return undefined;
  return { name: canonical, nid, blockSize, ivLength, keyLength, mode };
};
