// node:crypto's checkPrime/checkPrimeSync and generatePrime/generatePrimeSync, with workerd's
// argument checks and limits (8192 bits at most, at most 64 checks, add/rem only as the pairs
// 12/11, 24/23 and 60/59). Arithmetic is the isolate's BigInt: Miller-Rabin with random bases
// after trial division by small primes; generated primes have their top two bits set (as
// OpenSSL's), safe primes are p = 2q + 1 with q prime too. Results are big-endian ArrayBuffers,
// or bigints with { bigint: true }.
const { Buffer } = require("node:buffer");
const { invalidArgType, outOfRange, checkInteger, checkFunction } = require("node:internal/crypto_util");

const MAX_BITS = 8192;
const MAX_CHECKS = 64;
const NUMBER_TYPES = "an instance of ArrayBuffer, TypedArray, Buffer, or DataView, or of type bigint";
const SMALL_PRIMES = [];
for (let n = 3; SMALL_PRIMES.length < 300; n += 2) if (SMALL_PRIMES.every((p) => n % p !== 0)) SMALL_PRIMES.push(n);

const isBytes = (value) => ArrayBuffer.isView(value) || value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer);

function bytesOf(value) {
  return ArrayBuffer.isView(value) ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : new Uint8Array(value);
}

function toBigInt(bytes) {
  let hex = "";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex === "" ? 0n : BigInt(`0x${hex}`);
}

/** `value` (bytes or a non-negative bigint) as a bigint; `name` for errors. */
function numberOf(value, name) {
  if (typeof value === "bigint") {
    if (value < 0n) throw outOfRange(name, ">= 0", `${value}n`);
    return value;
  }
  if (!isBytes(value)) throw invalidArgType(name, NUMBER_TYPES, value);
  return toBigInt(bytesOf(value));
}

const bitLength = (n) => (n === 0n ? 0 : n.toString(2).length);

function randomBits(bits) {
  const bytes = new Uint8Array(Math.ceil(bits / 8));
  crypto.getRandomValues(bytes);
  return toBigInt(bytes) & ((1n << BigInt(bits)) - 1n);
}

function modPow(base, exponent, modulus) {
  let result = 1n;
  base %= modulus;
  while (exponent > 0n) {
    if (exponent & 1n) result = (result * base) % modulus;
    base = (base * base) % modulus;
    exponent >>= 1n;
  }
  return result;
}

/** Miller-Rabin with `rounds` random bases, after trial division. */
function isProbablePrime(n, rounds) {
  if (n < 2n) return false;
  if (n < 4n) return true;
  if ((n & 1n) === 0n) return false;
  for (const p of SMALL_PRIMES) {
    const big = BigInt(p);
    if (n === big) return true;
    if (n % big === 0n) return false;
  }
  let d = n - 1n;
  let s = 0;
  while ((d & 1n) === 0n) {
    d >>= 1n;
    s++;
  }
  const bits = bitLength(n);
  for (let i = 0; i < rounds; i++) {
    let a;
    do a = randomBits(bits) % (n - 3n); while (a < 2n);
    let x = modPow(a, d, n);
    if (x === 1n || x === n - 1n) continue;
    let composite = true;
    for (let r = 1; r < s; r++) {
      x = (x * x) % n;
      if (x === n - 1n) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

/** Rounds giving an error rate below 2^-128 for random inputs (OpenSSL's choice: 64 for large). */
const defaultRounds = (bits) => (bits >= 2048 ? 128 : 64) / 2;

function checkOptions(options) {
  if (options === undefined) return 0;
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  const { checks = 0 } = options;
  checkInteger(checks, "options.checks", 0, 2 ** 31 - 1);
  return checks;
}

function candidateOf(candidate) {
  if (typeof candidate !== "bigint" && !isBytes(candidate)) throw invalidArgType("candidate", NUMBER_TYPES, candidate);
  return numberOf(candidate, "candidate");
}

function checkPrimeNow(n, checks) {
  if (checks > MAX_CHECKS) throw new RangeError("Invalid number of checks");
  if (bitLength(n) > MAX_BITS) throw new RangeError("checkPrime candidate exceeds maximum size");
  return isProbablePrime(n, checks === 0 ? defaultRounds(bitLength(n)) : checks);
}

function checkPrimeSync(candidate, options) {
  const n = candidateOf(candidate);
  return checkPrimeNow(n, checkOptions(options));
}

function checkPrime(candidate, options, callback) {
  const n = candidateOf(candidate);
  if (typeof options === "function") {
    callback = options;
    options = undefined;
  }
  const checks = checkOptions(options);
  checkFunction(callback, "callback");
  Promise.resolve().then(() => checkPrimeNow(n, checks)).then((result) => callback(null, result), (error) => callback(error));
}

function generateOptions(options) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw invalidArgType("options", "of type object", options);
  const { safe = false, bigint = false } = options;
  if (typeof safe !== "boolean") throw invalidArgType("options.safe", "of type boolean", safe);
  if (typeof bigint !== "boolean") throw invalidArgType("options.bigint", "of type boolean", bigint);
  const add = options.add === undefined ? undefined : numberOf(options.add, "options.add");
  const rem = options.rem === undefined ? undefined : numberOf(options.rem, "options.rem");
  return { safe, bigint, add, rem };
}

/** A random prime of `bits` bits (the checks that depend on values throw here, as workerd's op does). */
function randomPrime(bits, { safe, add, rem }) {
  if (bits > MAX_BITS) throw new RangeError(`generatePrime size exceeds maximum (${MAX_BITS} bits)`);
  if (add !== undefined) {
    const pairs = [[12n, 11n], [24n, 23n], [60n, 59n]];
    if (rem === undefined || !pairs.some(([a, r]) => a === add && r === rem)) throw new RangeError("Invalid values for add and rem");
    if (bitLength(add) > bits) throw new RangeError("options.add must not be bigger than size of the requested prime");
  }
  if (bits < 2 || (safe && bits < 3)) throw new Error("Error while generating prime");
  const top = bits >= 2 ? 3n << BigInt(bits - 2) : 1n << BigInt(bits - 1);
  const low = 1n << BigInt(bits - 1);
  const high = 1n << BigInt(bits);
  for (let attempt = 0; attempt < 1_000_000; attempt++) {
    let p = randomBits(bits) | top | 1n;
    if (add !== undefined) {
      p = p - (p % add) + rem;
      if (p >= high) p -= add;
      if (p < low) continue;
    }
    const rounds = defaultRounds(bits);
    if (!isProbablePrime(p, rounds)) continue;
    if (safe && !isProbablePrime((p - 1n) >> 1n, rounds)) continue;
    return p;
  }
  throw new Error("Error while generating prime");
}

function toArrayBuffer(n, bits) {
  const hex = n.toString(16).padStart(Math.ceil(bits / 8) * 2, "0");
  const bytes = Buffer.from(hex, "hex");
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

function generatePrimeSync(size, options = {}) {
  checkInteger(size, "size", 1, 2 ** 31 - 1);
  const parsed = generateOptions(options);
  const prime = randomPrime(size, parsed);
  return parsed.bigint ? prime : toArrayBuffer(prime, size);
}

function generatePrime(size, options, callback) {
  checkInteger(size, "size", 1, 2 ** 31 - 1);
  if (typeof options === "function") {
    callback = options;
    options = {};
  }
  checkFunction(callback, "callback");
  const parsed = generateOptions(options);
  Promise.resolve()
    .then(() => {
      const prime = randomPrime(size, parsed);
      return parsed.bigint ? prime : toArrayBuffer(prime, size);
    })
    .then((prime) => callback(null, prime), (error) => callback(error));
}

module.exports = { checkPrime, checkPrimeSync, generatePrime, generatePrimeSync };
