// node:buffer's reads and writes checked as workerd checks them (its port of Node's buffer code):
// the `buffer` npm package coerces an offset with `>>> 0` and throws its own RangeErrors, where
// workerd throws ERR_INVALID_ARG_TYPE for an offset that is not a number, ERR_OUT_OF_RANGE for a
// fractional, negative or too large one and for a value a write cannot hold, and
// ERR_BUFFER_OUT_OF_BOUNDS when the buffer is shorter than the read or write. Each read*/write*
// method of Buffer.prototype is wrapped: the checks, then the package's method without its own.
const { invalidArgType } = require("node:internal/errors");

/** Node's numbers in messages: digits in groups of three, joined by "_". */
function separated(text) {
  const sign = text.startsWith("-") ? "-" : "";
  let digits = sign ? text.slice(1) : text;
  let out = "";
  for (; digits.length > 3; digits = digits.slice(0, -3)) out = `_${digits.slice(-3)}${out}`;
  return `${sign}${digits}${out}`;
}

function outOfRange(name, range, value) {
  let received;
  if (Number.isInteger(value) && Math.abs(value) > 2 ** 32) received = separated(String(value));
  else if (typeof value === "bigint") received = `${value > 2n ** 32n || value < -(2n ** 32n) ? separated(String(value)) : value}n`;
  else received = internals.inspect(value, { quoteStrings: true });
  const error = new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${received}`);
  error.code = "ERR_OUT_OF_RANGE";
  return error;
}

function validateOffset(offset, length) {
  if (typeof offset !== "number") throw invalidArgType("offset", "number", offset);
  if (!Number.isInteger(offset)) throw outOfRange("offset", "an integer", offset);
  if (offset < 0 || offset > length) throw outOfRange("offset", `>= 0 && <= ${length}`, offset);
}

function boundsError(value, length, type = undefined) {
  if (Math.floor(value) !== value) throw outOfRange(type ?? "offset", "an integer", value);
  if (length < 0) {
    const error = new RangeError("Attempt to access memory outside buffer bounds");
    error.code = "ERR_BUFFER_OUT_OF_BOUNDS";
    throw error;
  }
  throw outOfRange(type ?? "offset", `>= ${type ? 1 : 0} and <= ${length}`, value);
}

/** `width` bytes at `offset` (already validated) of `buffer` exist. */
function checkEnd(buffer, offset, width) {
  if (offset + width > buffer.length) boundsError(offset, buffer.length - width);
}

/** A valid offset with `width` bytes at it. */
function checkBounds(buffer, offset, width) {
  validateOffset(offset, buffer.length);
  checkEnd(buffer, offset, width);
}

/** A value a `width`-byte write cannot hold, in Node's words. */
function checkValue(value, min, max, width) {
  if (value <= max && value >= min) return;
  const n = typeof min === "bigint" ? "n" : "";
  let range = `>= ${min}${n} and <= ${max}${n}`;
  if (width > 4) {
    const bits = width * 8;
    // workerd's BigInt message leaves the "n" off the upper bound's 2.
    range = min === 0 || min === 0n ? `>= 0${n} and < 2${n} ** ${bits}${n}` : `>= -(2${n} ** ${bits - 1}${n}) and < 2${n === "n" ? "" : n} ** ${bits - 1}${n}`;
  }
  throw outOfRange("value", range, value);
}

function checkWidth(byteLength) {
  if (!(byteLength >= 1 && byteLength <= 6 && Number.isInteger(byteLength))) boundsError(byteLength, 6, "byteLength");
}

const intRange = (width, signed) => (signed ? [-(2 ** (width * 8 - 1)), 2 ** (width * 8 - 1) - 1] : [0, 2 ** (width * 8) - 1]);

/** Replaces `proto[name]` (and its `Uint` alias) with `make(original)`, which checks and then calls the original without its own checks. */
function wrap(proto, name, make) {
  const original = proto[name];
  if (typeof original !== "function") return;
  const checked = make(original);
  Object.defineProperty(checked, "name", { value: name });
  for (const key of [name, name.replace("UInt", "Uint")]) if (proto[key] === original) proto[key] = checked;
}

exports.install = function install(Buffer) {
  const proto = Buffer.prototype;
  const fixed = { Int8: 1, UInt8: 1, Int16: 2, UInt16: 2, Int32: 4, UInt32: 4, Float: 4, Double: 8 };
  for (const [type, width] of Object.entries(fixed)) {
    const float = type === "Float" || type === "Double";
    const [min, max] = intRange(width, !type.startsWith("U"));
    for (const name of width === 1 ? [type] : [`${type}LE`, `${type}BE`]) {
      wrap(proto, `read${name}`, (original) => function (offset = 0) {
        checkBounds(this, offset, width);
        return Reflect.apply(original, this, [offset, true]);
      });
      wrap(proto, `write${name}`, (original) => function (value, offset = 0) {
        value = +value;
        validateOffset(offset, this.length);
        if (!float) checkValue(value, min, max, width);
        checkEnd(this, offset, width);
        return Reflect.apply(original, this, [value, offset, true]);
      });
    }
  }
  for (const name of ["UIntLE", "UIntBE", "IntLE", "IntBE"]) {
    const signed = name.startsWith("Int");
    wrap(proto, `read${name}`, (original) => function (offset, byteLength) {
      if (offset === undefined) throw invalidArgType("offset", "number", offset);
      checkWidth(byteLength);
      checkBounds(this, offset, byteLength);
      return Reflect.apply(original, this, [offset, byteLength, true]);
    });
    wrap(proto, `write${name}`, (original) => function (value, offset, byteLength) {
      value = +value;
      checkWidth(byteLength);
      validateOffset(offset, this.length);
      checkValue(value, ...intRange(byteLength, signed), byteLength);
      checkEnd(this, offset, byteLength);
      return Reflect.apply(original, this, [value, offset, byteLength, true]);
    });
  }
  for (const name of ["BigInt64LE", "BigInt64BE", "BigUInt64LE", "BigUInt64BE"]) {
    const [min, max] = name.startsWith("BigU") ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
    wrap(proto, `read${name}`, (original) => function (offset = 0) {
      offset = offset >>> 0;
      checkBounds(this, offset, 8);
      return Reflect.apply(original, this, [offset]);
    });
    wrap(proto, `write${name}`, (original) => function (value, offset = 0) {
      if (typeof value === "bigint") checkValue(value, min, max, 8);
      checkBounds(this, offset, 8);
      return Reflect.apply(original, this, [value, offset]);
    });
  }
};
