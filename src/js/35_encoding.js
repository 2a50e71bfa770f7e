// TextEncoder, TextDecoder (every WHATWG encoding through encoding_rs), atob and btoa.

function bytesOf(input, what) {
  if (input === undefined) return new Uint8Array(0);
  // A detached buffer (or a view of one) holds no bytes.
  if ((input instanceof ArrayBuffer && input.detached) || (ArrayBuffer.isView(input) && input.buffer.detached)) return new Uint8Array(0);
  if (input instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer)) {
    return new Uint8Array(input);
  }
  if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  throw new TypeError(`${what}: the input must be an ArrayBuffer or an ArrayBufferView`);
}

class TextEncoder {
  constructor() {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
  }
  get encoding() {
    return "utf-8";
  }
  encode(input = "") {
    return ops.utf8Encode(internals.domString(input));
  }
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError("Failed to execute 'encodeInto' on 'TextEncoder': parameter 2 is not of type 'Uint8Array'.");
    }
    const [read, written] = ops.utf8EncodeInto(internals.domString(source), destination);
    return { read, written };
  }
  get [Symbol.toStringTag]() {
    return "TextEncoder";
  }
}

// A TextDecoder in the middle of a streaming decode owns a native decoder (its state between
// chunks); one collected before the stream ended frees it.
const streamingDecoders = new FinalizationRegistry((id) => ops.decoderDrop(id));
/** The encodings ICU decoded before text_decoder_cjk_decoder. */
const CJK_ENCODINGS = new Set(["big5", "euc-jp", "euc-kr", "gbk", "gb18030", "iso-2022-jp", "shift_jis"]);

/**
 * UTF-16LE as workerd decoded it before text_decoder_replace_surrogates (2026-02-24): lone
 * surrogates pass through unchanged (an odd last byte is still U+FFFD).
 */
function utf16leKeepingSurrogates(bytes, ignoreBOM) {
  let at = !ignoreBOM && bytes[0] === 0xff && bytes[1] === 0xfe ? 2 : 0;
  const units = [];
  let text = "";
  for (; at + 1 < bytes.length; at += 2) {
    units.push(bytes[at] | (bytes[at + 1] << 8));
    if (units.length === 8192) text += String.fromCharCode(...units.splice(0));
  }
  text += String.fromCharCode(...units);
  return at < bytes.length ? text + "\ufffd" : text;
}

class TextDecoder {
  #encoding;
  #fatal;
  #ignoreBOM;
  #stream = 0; // the native decoder of a streaming decode in progress (0: none)
  #icu = false;
  constructor(label = "utf-8", options = {}) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    const encoding = ops.encodingName(internals.domString(label));
    if (encoding === null) {
      throw new RangeError(`Failed to construct 'TextDecoder': The encoding label provided ('${label}') is invalid.`);
    }
    this.#encoding = encoding;
    this.#fatal = Boolean(options && options.fatal);
    this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    // Before text_decoder_cjk_decoder (2026-03-03) workerd decoded the CJK encodings with ICU's
    // converters (src/runtime/ops/icu_decoder.rs).
    this.#icu = CJK_ENCODINGS.has(encoding) && !internals.feature("text_decoder_cjk_decoder");
  }
  get encoding() {
    return this.#encoding;
  }
  get fatal() {
    return this.#fatal;
  }
  get ignoreBOM() {
    return this.#ignoreBOM;
  }
  decode(input, options = {}) {
    const bytes = bytesOf(input, "Failed to execute 'decode' on 'TextDecoder'");
    const stream = Boolean(options && options.stream);
    if (this.#stream === 0) {
      // The common case, one whole input: no state to keep.
      if (!stream && this.#encoding === "utf-16le" && !this.#fatal && !internals.feature("text_decoder_replace_surrogates")) {
        return utf16leKeepingSurrogates(bytes, this.#ignoreBOM);
      }
      if (!stream) return this.#icu ? ops.icuDecode(this.#encoding, bytes, this.#fatal) : ops.decode(this.#encoding, bytes, this.#fatal, this.#ignoreBOM);
      this.#stream = this.#icu ? ops.icuDecoderCreate(this.#encoding, this.#fatal) : ops.decoderCreate(this.#encoding, this.#ignoreBOM);
      streamingDecoders.register(this, this.#stream, this);
    }
    // The native decoder holds an incomplete character (in any encoding) for the next call; the
    // last call (without stream) flushes it. It is gone after the last call or a fatal error.
    const id = this.#stream;
    try {
      return this.#icu ? ops.icuDecoderDecode(id, bytes, !stream) : ops.decoderDecode(id, bytes, !stream, this.#fatal);
    } catch (error) {
      this.#endStream();
      throw error;
    } finally {
      if (!stream) this.#endStream();
    }
  }
  #endStream() {
    if (this.#stream === 0) return;
    this.#stream = 0;
    streamingDecoders.unregister(this);
  }
  get [Symbol.toStringTag]() {
    return "TextDecoder";
  }
}

function atob(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'atob': 1 argument required, but only 0 present.");
  const decoded = ops.atob(internals.domString(data));
  if (decoded === null) {
    throw new internals.DOMException("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
  }
  return decoded;
}

function btoa(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'btoa': 1 argument required, but only 0 present.");
  const encoded = ops.btoa(internals.domString(data));
  if (encoded === null) {
    throw new internals.DOMException("The string to be encoded contains characters outside of the Latin1 range.", "InvalidCharacterError");
  }
  return encoded;
}

internals.bytesOf = bytesOf;
internals.defineGlobal("TextEncoder", TextEncoder);
internals.defineGlobal("TextDecoder", TextDecoder);
internals.defineGlobal("atob", atob);
internals.defineGlobal("btoa", btoa);
