// node:buffer's argument handling as Node's (and workerd's) Buffer has it, over the `buffer` npm
// package's Buffer: Buffer.from's dispatch on the value's type (and "offset"/"length" bounds of
// an ArrayBuffer), alloc's size checks, byteLength, compare and copy with their errors,
// write/fill/toString's optional-argument shuffles and checks, indexOf/includes of an empty
// needle, the Uint* aliases being the same functions, and util.inspect's `<Buffer …>` form.
// Each wrapped method checks and normalizes its arguments, then calls the package's.
const { describeReceived } = require("node:internal/errors");

function typeError(code, message) {
  const error = new TypeError(message);
  error.code = code;
  return error;
}
function rangeError(code, message) {
  const error = new RangeError(message);
  error.code = code;
  return error;
}
const received = (value) => (typeof value === "number" && Number.isInteger(value) && Math.abs(value) > 2 ** 32 ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, "_") : String(value));
const outOfRange = (name, range, value) => rangeError("ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${range}. Received ${received(value)}`);
const invalidType = (name, expected, value) => typeError("ERR_INVALID_ARG_TYPE", `The "${name}" argument must be ${expected}. Received ${describeReceived(value)}`);
const unknownEncoding = (encoding) => typeError("ERR_UNKNOWN_ENCODING", `Unknown encoding: ${encoding}`);

/** An integer offset in [min, max] (Node's validateOffset / validateInteger). */
function checkInteger(value, name, min = 0, max = Number.MAX_SAFE_INTEGER) {
  if (typeof value !== "number") throw invalidType(name, "of type number", value);
  if (!Number.isInteger(value)) throw outOfRange(name, "an integer", value);
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value);
}

/** Node's toInteger: a number truncated toward -Infinity, or `fallback` when not a safe number. */
function toInteger(value, fallback) {
  value = +value;
  if (!Number.isNaN(value) && value >= Number.MIN_SAFE_INTEGER && value <= Number.MAX_SAFE_INTEGER) return value % 1 === 0 ? value : Math.floor(value);
  return fallback;
}

const isUint8Array = (value) => value instanceof Uint8Array;
const isAnyArrayBuffer = (value) => value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer);

exports.install = function install(Buffer, bufferModule) {
  const { kMaxLength } = bufferModule;
  const proto = Buffer.prototype;
  const original = {
    from: Buffer.from, alloc: Buffer.alloc, allocUnsafe: Buffer.allocUnsafe, allocUnsafeSlow: Buffer.allocUnsafeSlow, byteLength: Buffer.byteLength,
    isEncoding: Buffer.isEncoding, toString: proto.toString, write: proto.write, fill: proto.fill,
  };
  /** The encoding's canonical name, or undefined when Buffer does not know it. */
  const encodingName = (encoding) => {
    const text = `${encoding}`;
    return original.isEncoding.call(Buffer, text) ? text.toLowerCase() : undefined;
  };

  const firstArgument = (value) =>
    typeError("ERR_INVALID_ARG_TYPE", `The first argument must be of type string or an instance of Buffer, ArrayBuffer, or Array or an Array-like Object. Received ${describeReceived(value)}`);

  function fromArrayBuffer(buffer, byteOffset, length) {
    byteOffset = byteOffset === undefined ? 0 : +byteOffset || 0;
    const maxLength = buffer.byteLength - byteOffset;
    if (maxLength < 0) throw rangeError("ERR_BUFFER_OUT_OF_BOUNDS", '"offset" is outside of buffer bounds');
    if (length === undefined) length = maxLength;
    else {
      length = +length;
      if (length > 0) {
        if (length > maxLength) throw rangeError("ERR_BUFFER_OUT_OF_BOUNDS", '"length" is outside of buffer bounds');
      } else length = 0;
    }
    return original.from.call(Buffer, buffer, byteOffset, length);
  }

  Buffer.from = function from(value, encodingOrOffset, length) {
    if (typeof value === "string") {
      if (typeof encodingOrOffset === "string" && encodingOrOffset.length > 0 && encodingName(encodingOrOffset) === undefined) throw unknownEncoding(encodingOrOffset);
      return original.from.call(Buffer, value, encodingOrOffset);
    }
    if (typeof value === "object" && value !== null) {
      if (isAnyArrayBuffer(value)) return fromArrayBuffer(value, encodingOrOffset, length);
      const primitive = typeof value.valueOf === "function" ? value.valueOf() : undefined;
      if (primitive !== null && primitive !== undefined && primitive !== value && (typeof primitive === "string" || typeof primitive === "object")) return Buffer.from(primitive, encodingOrOffset, length);
      if (ArrayBuffer.isView(value) || value.length !== undefined || isAnyArrayBuffer(value.buffer) || (value.type === "Buffer" && Array.isArray(value.data))) {
        if (!ArrayBuffer.isView(value) && value.length !== undefined && typeof value.length !== "number") return original.alloc.call(Buffer, 0);
        return original.from.call(Buffer, value);
      }
      if (typeof value[Symbol.toPrimitive] === "function") {
        const text = value[Symbol.toPrimitive]("string");
        if (typeof text === "string") return Buffer.from(text, encodingOrOffset);
      }
    }
    throw firstArgument(value);
  };

  // workerd's errors: NaN is an invalid value, a negative size V8's own RangeError.
  const checkSize = (size) => {
    if (typeof size !== "number") throw invalidType("size", "of type number", size);
    if (Number.isNaN(size)) throw rangeError("ERR_INVALID_ARG_VALUE", `The argument 'size' is invalid. Received NaN`);
    if (size < 0) throw new RangeError(`Invalid typed array length: ${size}`);
    if (size > kMaxLength) throw outOfRange("size", `>= 0 && <= ${kMaxLength}`, size);
  };
  Buffer.alloc = function alloc(size, fill, encoding) {
    checkSize(size);
    if (fill !== undefined && fill !== 0 && size > 0) {
      if (encoding !== undefined && typeof encoding !== "string") throw invalidType("encoding", "of type string", encoding);
      return Buffer.allocUnsafe(size).fill(fill, 0, size, encoding);
    }
    return original.alloc.call(Buffer, size);
  };
  for (const name of ["allocUnsafe", "allocUnsafeSlow"]) {
    if (typeof original[name] !== "function") continue;
    const make = original[name];
    Buffer[name] = { [name](size) {
      checkSize(size);
      return make.call(Buffer, size);
    } }[name];
  }

  Buffer.byteLength = function byteLength(string, encoding) {
    if (typeof string !== "string") {
      if (ArrayBuffer.isView(string) || isAnyArrayBuffer(string)) return string.byteLength;
      throw invalidType("string", "of type string or an instance of Buffer or ArrayBuffer", string);
    }
    return original.byteLength.call(Buffer, string, typeof encoding === "string" && encodingName(encoding) !== undefined ? encoding : "utf8");
  };

  const compareBytes = (a, b) => {
    const length = Math.min(a.length, b.length);
    for (let i = 0; i < length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
  };
  Buffer.compare = function compare(buf1, buf2) {
    if (!isUint8Array(buf1)) throw invalidType("buf1", "an instance of Buffer or Uint8Array", buf1);
    if (!isUint8Array(buf2)) throw invalidType("buf2", "an instance of Buffer or Uint8Array", buf2);
    return buf1 === buf2 ? 0 : compareBytes(buf1, buf2);
  };
  proto.compare = function compare(target, targetStart, targetEnd, sourceStart, sourceEnd) {
    if (!isUint8Array(target)) throw invalidType("target", "an instance of Buffer or Uint8Array", target);
    if (arguments.length === 1) return compareBytes(this, target);
    if (targetStart === undefined) targetStart = 0;
    else checkInteger(targetStart, "targetStart", 0, kMaxLength);
    if (targetEnd === undefined) targetEnd = target.length;
    else checkInteger(targetEnd, "targetEnd", 0, target.length);
    if (sourceStart === undefined) sourceStart = 0;
    else checkInteger(sourceStart, "sourceStart", 0, kMaxLength);
    if (sourceEnd === undefined) sourceEnd = this.length;
    else checkInteger(sourceEnd, "sourceEnd", 0, this.length);
    if (sourceStart >= sourceEnd) return targetStart >= targetEnd ? 0 : -1;
    if (targetStart >= targetEnd) return 1;
    return compareBytes(this.subarray(sourceStart, sourceEnd), target.subarray(targetStart, targetEnd));
  };

  proto.copy = function copy(target, targetStart, sourceStart, sourceEnd) {
    if (!isUint8Array(this)) throw invalidType("source", "an instance of Buffer or Uint8Array", this);
    if (!isUint8Array(target)) throw invalidType("target", "an instance of Buffer or Uint8Array", target);
    targetStart = targetStart === undefined ? 0 : toInteger(targetStart, 0);
    if (targetStart < 0) throw outOfRange("targetStart", ">= 0", targetStart);
    sourceStart = sourceStart === undefined ? 0 : toInteger(sourceStart, 0);
    if (sourceStart < 0) throw outOfRange("sourceStart", ">= 0", sourceStart);
    sourceEnd = sourceEnd === undefined ? this.length : toInteger(sourceEnd, 0);
    if (sourceEnd < 0) throw outOfRange("sourceEnd", ">= 0", sourceEnd);
    sourceEnd = Math.min(sourceEnd, this.length);
    for (const [name, value] of [["targetStart", targetStart], ["sourceStart", sourceStart], ["sourceEnd", sourceEnd]]) {
      if (value >= 2 ** 32) throw outOfRange(name, "< 4294967296", value);
    }
    if (targetStart >= target.length || sourceStart >= sourceEnd) return 0;
    const count = Math.min(sourceEnd - sourceStart, target.length - targetStart);
    target.set(this.subarray(sourceStart, sourceStart + count), targetStart);
    return count;
  };

  proto.write = function write(string, offset, length, encoding) {
    if (offset === undefined) return original.write.call(this, string, 0, this.length, "utf8");
    if (length === undefined && typeof offset === "string") {
      encoding = offset;
      length = this.length;
      offset = 0;
    } else {
      checkInteger(offset, "offset", 0, this.length);
      const remaining = this.length - offset;
      if (length === undefined) length = remaining;
      else if (typeof length === "string") {
        encoding = length;
        length = remaining;
      } else {
        checkInteger(length, "length", 0, this.length);
        if (length > remaining) length = remaining;
      }
    }
    if (encoding !== undefined && encoding !== null && encoding !== "" && encodingName(encoding) === undefined) throw unknownEncoding(encoding);
    return original.write.call(this, string, offset, length, encoding || "utf8");
  };

  proto.fill = function fill(value, offset, end, encoding) {
    if (typeof value === "string") {
      if (offset === undefined || typeof offset === "string") {
        encoding = offset;
        offset = 0;
        end = this.length;
      } else if (typeof end === "string") {
        encoding = end;
        end = this.length;
      }
      if (encoding !== undefined && typeof encoding !== "string") throw invalidType("encoding", "of type string", encoding);
      if (encoding !== undefined && encodingName(encoding) === undefined) throw unknownEncoding(encoding);
      if (value.length === 0) value = 0;
    } else {
      encoding = undefined;
      if (isUint8Array(value) || ArrayBuffer.isView(value)) {
        if (value.byteLength === 0) throw typeError("ERR_INVALID_ARG_VALUE", "The argument 'value' is invalid. Received 'zero-length'");
      } else if (typeof value === "object" && value !== null) value = 0; // workerd fills with zeros
    }
    if (offset === undefined) {
      offset = 0;
      end = this.length;
    } else {
      checkInteger(offset, "offset", 0, kMaxLength);
      if (end === undefined) end = this.length;
      else checkInteger(end, "end", 0, this.length);
      if (offset >= end) return this;
    }
    if (typeof value === "boolean") value = Number(value);
    return original.fill.call(this, value, offset, end, encoding);
  };

  proto.toString = function toString(encoding, start, end) {
    if (arguments.length === 0) return original.toString.call(this);
    const length = this.length;
    if (start <= 0) start = 0;
    else if (start >= length) return "";
    else start = Math.trunc(start) || 0;
    if (end === undefined || end > length) end = length;
    else end = Math.trunc(end) || 0;
    if (end <= start) return "";
    if (encoding === undefined) return original.toString.call(this, "utf8", start, end);
    const name = encodingName(encoding);
    if (name === undefined) throw unknownEncoding(encoding);
    return original.toString.call(this, `${encoding}`, start, end);
  };
  proto.toLocaleString = proto.toString;

  // indexOf/lastIndexOf/includes as Node's: the offset clamped to 32 bits (NaN: the start, or the
  // end when searching backwards), a negative one from the end, a number needle as a byte, a
  // string in the given encoding (UTF-16 matched at even offsets), an empty needle found at the
  // clamped offset.
  function search(buffer, value, byteOffset, encoding, forward) {
    if (typeof byteOffset === "string") {
      encoding = byteOffset;
      byteOffset = undefined;
    } else if (byteOffset > 0x7fffffff) byteOffset = 0x7fffffff;
    else if (byteOffset < -0x80000000) byteOffset = -0x80000000;
    byteOffset = +byteOffset;
    if (Number.isNaN(byteOffset)) byteOffset = forward ? 0 : buffer.length;
    byteOffset = Math.trunc(byteOffset);
    let needle;
    let step = 1;
    if (typeof value === "number") needle = [(value >>> 0) & 255];
    else if (typeof value === "string" || isUint8Array(value)) {
      const name = encoding === undefined ? "utf8" : encodingName(encoding);
      if (name === undefined) {
        if (typeof value === "string") throw unknownEncoding(encoding);
      } else if (["ucs2", "ucs-2", "utf16le", "utf-16le"].includes(name)) step = 2;
      needle = typeof value === "string" ? original.from.call(Buffer, value, name ?? "utf8") : value;
    } else throw invalidType("value", "one of type number or string or an instance of Buffer or Uint8Array", value);
    const length = buffer.length;
    const size = needle.length;
    if (byteOffset < 0) byteOffset += length;
    const matches = (at) => {
      for (let j = 0; j < size; j++) if (buffer[at + j] !== needle[j]) return false;
      return true;
    };
    if (forward) {
      if (byteOffset < 0) byteOffset = 0;
      if (size === 0) return Math.min(byteOffset, length);
      if (step === 2 && byteOffset % 2 !== 0) byteOffset++;
      for (let at = byteOffset; at + size <= length; at += step) if (matches(at)) return at;
      return -1;
    }
    if (byteOffset < 0) return -1;
    if (size === 0) return Math.min(byteOffset, length);
    let at = Math.min(byteOffset, length - size);
    if (step === 2 && at % 2 !== 0) at--;
    for (; at >= 0; at -= step) if (matches(at)) return at;
    return -1;
  }
  proto.indexOf = function indexOf(value, byteOffset, encoding) {
    return search(this, value, byteOffset, encoding, true);
  };
  proto.lastIndexOf = function lastIndexOf(value, byteOffset, encoding) {
    return search(this, value, byteOffset, encoding, false);
  };
  proto.includes = function includes(value, byteOffset, encoding) {
    return this.indexOf(value, byteOffset, encoding) !== -1;
  };

  Buffer.concat = function concat(list, length) {
    if (!Array.isArray(list)) throw invalidType("list", "an (Buffer|Uint8Array)[]", list);
    if (list.length === 0) return original.alloc.call(Buffer, 0);
    for (const item of list) if (!isUint8Array(item)) throw invalidType("list", "an (Buffer|Uint8Array)[]", item);
    if (length === undefined) length = list.reduce((sum, item) => sum + item.length, 0);
    else checkInteger(length, "length", 0, kMaxLength);
    const result = original.alloc.call(Buffer, length);
    let at = 0;
    for (const item of list) {
      if (at >= length) break;
      const part = item.length > length - at ? item.subarray(0, length - at) : item;
      result.set(part, at);
      at += part.length;
    }
    return result;
  };

  // Node's per-encoding slice and write methods: xSlice(start, end), xWrite(string, offset, length),
  // the length (by default the buffer's) checked against the room after the offset.
  for (const encoding of ["ascii", "base64", "base64url", "hex", "latin1", "ucs2", "utf8"]) {
    proto[`${encoding}Slice`] = { [`${encoding}Slice`](start = 0, end = this.length) {
      return this.toString(encoding, start, end);
    } }[`${encoding}Slice`];
    proto[`${encoding}Write`] = { [`${encoding}Write`](string, offset = 0, length = this.length) {
      checkInteger(offset, "offset", 0, this.length);
      checkInteger(length, "length", 0, this.length - offset);
      return original.write.call(this, string, offset, length, encoding);
    } }[`${encoding}Write`];
  }

  // Floats go through a DataView (V8's NaN bit pattern, as Node's), after the offset and bounds checks.
  for (const [name, width, set] of [["Float", 4, "setFloat32"], ["Double", 8, "setFloat64"]]) {
    for (const little of [true, false]) {
      const method = `write${name}${little ? "LE" : "BE"}`;
      const checked = proto[method];
      if (typeof checked !== "function") continue;
      proto[method] = { [method](value, offset = 0) {
        const end = Reflect.apply(checked, this, [value, offset]);
        new DataView(this.buffer, this.byteOffset, this.byteLength)[set](offset, +value, little);
        return end;
      } }[method];
    }
  }

  // Node's aliases are the same functions (readUint8 === readUInt8, …).
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (!/^(read|write)(Big)?UInt/.test(name)) continue;
    const alias = name.replace("UInt", "Uint");
    if (typeof proto[name] === "function") proto[alias] = proto[name];
  }

  // `<Buffer 01 02 … n more bytes, key: value>`: at most INSPECT_MAX_BYTES bytes, then the
  // buffer's own non-index properties.
  const custom = Symbol.for("nodejs.util.inspect.custom");
  proto[custom] = proto.inspect = function inspect() {
    const max = bufferModule.INSPECT_MAX_BYTES;
    const shown = Math.min(max, this.length);
    let text = Array.from(this.subarray(0, shown), (byte) => byte.toString(16).padStart(2, "0")).join(" ");
    const remaining = this.length - max;
    if (remaining > 0) text += ` ... ${remaining} more byte${remaining > 1 ? "s" : ""}`;
    const extras = Object.keys(this).filter((key) => !/^\d+$/.test(key));
    if (extras.length > 0) {
      if (this.length !== 0) text += ", ";
      text += extras.map((key) => `${key}: ${internals.inspect(this[key], { quoteStrings: true })}`).join(", ");
    }
    // Always `Buffer`, as workerd's (whatever the object's constructor says).
    return `<Buffer ${text}>`;
  };
};
