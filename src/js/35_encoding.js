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
  get encoding() {
    return "utf-8";
  }
  encode(input = "") {
    return ops.utf8Encode(String(input));
  }
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError("Failed to execute 'encodeInto' on 'TextEncoder': parameter 2 is not of type 'Uint8Array'.");
    }
    const [read, written] = ops.utf8EncodeInto(String(source), destination);
    return { read, written };
  }
  get [Symbol.toStringTag]() {
    return "TextEncoder";
  }
}

/**
 * Length of an incomplete UTF-8 sequence at the end of `bytes` (0 when it ends cleanly). Only a
 * valid prefix is held back: after E0 the next byte must be A0–BF, after ED 80–9F, after F0
 * 90–BF, after F4 80–8F; anything else is already an error the decoder reports now.
 */
function incompleteUtf8Tail(bytes) {
  const n = bytes.length;
  for (let back = 1; back <= Math.min(3, n); back++) {
    const b = bytes[n - back];
    if ((b & 0xc0) === 0x80) continue; // continuation byte: keep looking for the lead
    const need = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xc2 && b <= 0xdf ? 2 : 1;
    if (need <= back) return 0;
    if (back >= 2) {
      const second = bytes[n - back + 1];
      const lo = b === 0xe0 ? 0xa0 : b === 0xf0 ? 0x90 : 0x80;
      const hi = b === 0xed ? 0x9f : b === 0xf4 ? 0x8f : 0xbf;
      if (second < lo || second > hi) return 0;
    }
    return back;
  }
  return 0;
}

class TextDecoder {
  #encoding;
  #fatal;
  #ignoreBOM;
  #pending = null; // bytes held back by a streaming decode
  #started = false; // a BOM is only stripped at the start of a stream
  constructor(label = "utf-8", options = {}) {
    const encoding = ops.encodingName(String(label));
    if (encoding === null) {
      throw new RangeError(`Failed to construct 'TextDecoder': The encoding label provided ('${label}') is invalid.`);
    }
    this.#encoding = encoding;
    this.#fatal = Boolean(options && options.fatal);
    this.#ignoreBOM = Boolean(options && options.ignoreBOM);
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
    let bytes = bytesOf(input, "Failed to execute 'decode' on 'TextDecoder'");
    const stream = Boolean(options && options.stream);
    if (this.#pending !== null) {
      const joined = new Uint8Array(this.#pending.length + bytes.length);
      joined.set(this.#pending);
      joined.set(bytes, this.#pending.length);
      bytes = joined;
      this.#pending = null;
    }
    // Streaming: hold back an incomplete trailing character for the next call. Exact for UTF-8
    // and UTF-16; other multi-byte legacy encodings decode each chunk as it comes.
    if (stream) {
      let keep = 0;
      if (this.#encoding === "utf-8") keep = incompleteUtf8Tail(bytes);
      else if (this.#encoding === "utf-16le" || this.#encoding === "utf-16be") {
        keep = bytes.length % 2;
        const hi = this.#encoding === "utf-16le" ? bytes[bytes.length - 1 - keep] : bytes[bytes.length - 2 - keep];
        if (bytes.length - keep >= 2 && hi >= 0xd8 && hi <= 0xdb) keep += 2;
      }
      if (keep > 0) {
        this.#pending = bytes.slice(bytes.length - keep);
        bytes = bytes.subarray(0, bytes.length - keep);
      }
    }
    const ignoreBOM = this.#ignoreBOM || this.#started;
    const text = ops.decode(this.#encoding, bytes, this.#fatal, ignoreBOM);
    this.#started = stream && (this.#started || bytes.length > 0);
    return text;
  }
  get [Symbol.toStringTag]() {
    return "TextDecoder";
  }
}

function atob(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'atob': 1 argument required, but only 0 present.");
  const decoded = ops.atob(String(data));
  if (decoded === null) {
    throw new internals.DOMException("The string to be decoded is not correctly encoded.", "InvalidCharacterError");
  }
  return decoded;
}

function btoa(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'btoa': 1 argument required, but only 0 present.");
  const encoded = ops.btoa(String(data));
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
