// node:string_decoder: StringDecoder as Node's (and workerd's) — the decoder's state is a 7-byte
// Buffer under a symbol (bytes 0-3 the incomplete character, 4 the bytes missing, 5 the bytes
// buffered, 6 the encoding), checked on every write. UTF-8 holds back an incomplete sequence and
// turns one interrupted or left at end() into U+FFFD as the WHATWG decoder does, so that pieces
// decode as the whole Buffer would; UTF-16LE holds back an odd byte and a lone high surrogate;
// base64/base64url hold back up to two bytes; hex, latin1 and ascii hold nothing.
const { Buffer } = require("node:buffer");

const kState = Symbol("kNativeDecoder");
const ENCODINGS = ["utf8", "utf16le", "base64", "base64url", "hex", "latin1", "ascii"];
const ALIASES = { utf8: "utf8", "utf-8": "utf8", ucs2: "utf16le", "ucs-2": "utf16le", utf16le: "utf16le", "utf-16le": "utf16le", latin1: "latin1", binary: "latin1", base64: "base64", base64url: "base64url", hex: "hex", ascii: "ascii" };
const MISSING = 4;
const BUFFERED = 5;
const ENCODING = 6;

function codeError(Type, code, message) {
  const error = new Type(message);
  error.code = code;
  return error;
}

function normalizeEncoding(encoding) {
  if (encoding === undefined || encoding === null || encoding === "") return "utf8";
  const found = typeof encoding === "string" ? ALIASES[encoding.toLowerCase()] : undefined;
  if (found === undefined) throw codeError(TypeError, "ERR_UNKNOWN_ENCODING", `Unknown encoding: ${encoding}`);
  return found;
}

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** The state of `decoder`, checked: a 7-byte Buffer with sane counts. */
function stateOf(decoder) {
  if (decoder === null || typeof decoder !== "object" || !(kState in decoder)) {
    throw codeError(TypeError, "ERR_INVALID_THIS", 'Value of "this" must be of type StringDecoder');
  }
  const state = decoder[kState];
  if (!(state instanceof Uint8Array)) throw new TypeError("StringDecoder state must be a Uint8Array");
  if (state.length !== 7) throw new Error("Invalid StringDecoder");
  if (state[BUFFERED] > 4) throw new Error("Buffered bytes cannot exceed 4");
  if (state[MISSING] > 4) throw new Error("Missing bytes cannot exceed 4");
  if (state[MISSING] + state[BUFFERED] > 4 || state[ENCODING] >= ENCODINGS.length) throw new Error("Invalid StringDecoder state");
  return state;
}

/** The length of the UTF-8 sequence led by `byte` (1 for anything that is not a lead byte). */
function utf8Length(byte) {
  if ((byte & 0xe0) === 0xc0) return 2;
  if ((byte & 0xf0) === 0xe0) return 3;
  if ((byte & 0xf8) === 0xf0) return 4;
  return 1;
}
const isContinuation = (byte) => (byte & 0xc0) === 0x80;

function decodeWhole(encoding, bytes) {
  if (bytes.length === 0) return "";
  if (encoding === "utf8") return utf8.decode(bytes);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(encoding);
}

/** Takes bytes from `data` into the held character; returns [text, bytes used]. */
function fillHeld(state, encoding, data) {
  let used = 0;
  let out = "";
  while (state[MISSING] > 0 && used < data.length) {
    const byte = data[used];
    if (encoding === "utf8" && !isContinuation(byte)) {
      // Interrupted: the held bytes are what they decode to (U+FFFD), the byte starts afresh.
      out += utf8.decode(state.subarray(0, state[BUFFERED]));
      state[MISSING] = 0;
      state[BUFFERED] = 0;
      return [out, used];
    }
    state[state[BUFFERED]++] = byte;
    state[MISSING]--;
    used++;
    if (state[MISSING] === 0 && encoding === "utf16le" && state[BUFFERED] === 2 && (state[1] & 0xfc) === 0xd8) state[MISSING] = 2;
  }
  if (state[MISSING] === 0 && state[BUFFERED] > 0) {
    out += decodeWhole(encoding, state.slice(0, state[BUFFERED]));
    state[BUFFERED] = 0;
  }
  return [out, used];
}

/** How many bytes at the end of `data` start a character still incomplete, and how many it lacks. */
function incompleteTail(encoding, data) {
  const n = data.length;
  if (n === 0) return [0, 0];
  if (encoding === "utf8") {
    for (let i = n - 1; i >= Math.max(0, n - 4); i--) {
      if (isContinuation(data[i])) continue;
      const need = utf8Length(data[i]);
      return need > n - i ? [n - i, need - (n - i)] : [0, 0];
    }
    return [0, 0];
  }
  if (encoding === "utf16le") {
    if (n % 2 === 1) return [1, 1];
    return (data[n - 1] & 0xfc) === 0xd8 ? [2, 2] : [0, 0];
  }
  if (encoding === "base64" || encoding === "base64url") return n % 3 === 0 ? [0, 0] : [n % 3, 3 - (n % 3)];
  return [0, 0];
}

function StringDecoder(encoding) {
  const normalized = normalizeEncoding(encoding);
  this.encoding = normalized;
  this[kState] = Buffer.alloc(7);
  this[kState][ENCODING] = ENCODINGS.indexOf(normalized);
}

StringDecoder.prototype.write = function write(buf) {
  const state = stateOf(this);
  if (typeof buf === "string") return buf;
  if (!ArrayBuffer.isView(buf)) {
    const { describeReceived } = require("node:internal/errors");
    throw codeError(TypeError, "ERR_INVALID_ARG_TYPE", `The "buf" argument must be an instance of Buffer, TypedArray, or DataView. Received ${describeReceived(buf)}`);
  }
  const encoding = ENCODINGS[state[ENCODING]];
  let data = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  let out = "";
  if (state[MISSING] > 0) {
    const [text, used] = fillHeld(state, encoding, data);
    out += text;
    data = data.subarray(used);
    if (state[MISSING] > 0) return out;
  }
  const [held, missing] = incompleteTail(encoding, data);
  out += decodeWhole(encoding, data.subarray(0, data.length - held));
  if (held > 0) {
    state.set(data.subarray(data.length - held), 0);
    state[BUFFERED] = held;
    state[MISSING] = missing;
  }
  return out;
};

StringDecoder.prototype.end = function end(buf) {
  let out = buf === undefined ? "" : this.write(buf);
  const state = stateOf(this);
  const encoding = ENCODINGS[state[ENCODING]];
  let count = state[BUFFERED];
  if (encoding === "utf16le" && count % 2 === 1) count--;
  if (count > 0) out += decodeWhole(encoding, state.slice(0, count));
  state[BUFFERED] = 0;
  state[MISSING] = 0;
  return out;
};

StringDecoder.prototype.text = function text(buf, offset) {
  const state = stateOf(this);
  state[BUFFERED] = 0;
  state[MISSING] = 0;
  return this.write(buf.slice(offset));
};

Object.defineProperties(StringDecoder.prototype, {
  lastChar: { configurable: true, enumerable: true, get() { return stateOf(this).subarray(0, 4); } },
  lastNeed: { configurable: true, enumerable: true, get() { return stateOf(this)[MISSING]; } },
  lastTotal: { configurable: true, enumerable: true, get() { const state = stateOf(this); return state[BUFFERED] + state[MISSING]; } },
});

module.exports = { StringDecoder };
