// node:punycode (enable_nodejs_punycode_module; implied by nodejs_compat from 2025-12-04; long
// deprecated in Node): RFC 3492 Punycode — encode/decode of one label, toASCII/toUnicode of
// whole domain names (only non-ASCII labels are converted, "xn--" labels decoded), and
// ucs2.decode/encode between strings and code points. Version "2.1.0", as workerd reports.

const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;
const MAX_INT = 0x7fffffff;

function fail(kind) {
  const messages = { overflow: "Overflow: input needs wider integers to process", "not-basic": "Illegal input >= 0x80 (not a basic code point)", "invalid-input": "Invalid input" };
  throw new RangeError(messages[kind]);
}

function adapt(delta, points, first) {
  delta = first ? Math.floor(delta / DAMP) : delta >> 1;
  delta += Math.floor(delta / points);
  let k = 0;
  while (delta > ((BASE - T_MIN) * T_MAX) >> 1) {
    delta = Math.floor(delta / (BASE - T_MIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - T_MIN + 1) * delta) / (delta + SKEW));
}

const digitToChar = (d) => String.fromCharCode(d < 26 ? d + 97 : d + 22);
function charToDigit(code) {
  if (code >= 0x30 && code < 0x3a) return code - 22;
  if (code >= 0x41 && code < 0x5b) return code - 0x41;
  if (code >= 0x61 && code < 0x7b) return code - 0x61;
  return BASE;
}

function ucs2decode(string) {
  return Array.from(String(string), (c) => c.codePointAt(0));
}
function ucs2encode(points) {
  return String.fromCodePoint(...points);
}

function decode(input) {
  input = String(input);
  const output = [];
  const basic = Math.max(input.lastIndexOf("-"), 0);
  for (let j = 0; j < basic; j++) {
    if (input.charCodeAt(j) >= 0x80) fail("not-basic");
    output.push(input.charCodeAt(j));
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let index = basic > 0 ? basic + 1 : 0; index < input.length; ) {
    const oldi = i;
    for (let w = 1, k = BASE; ; k += BASE) {
      if (index >= input.length) fail("invalid-input");
      const digit = charToDigit(input.charCodeAt(index++));
      if (digit >= BASE) fail("invalid-input");
      if (digit > Math.floor((MAX_INT - i) / w)) fail("overflow");
      i += digit * w;
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
      if (digit < t) break;
      if (w > Math.floor(MAX_INT / (BASE - t))) fail("overflow");
      w *= BASE - t;
    }
    const length = output.length + 1;
    bias = adapt(i - oldi, length, oldi === 0);
    if (Math.floor(i / length) > MAX_INT - n) fail("overflow");
    n += Math.floor(i / length);
    i %= length;
    output.splice(i++, 0, n);
  }
  return String.fromCodePoint(...output);
}

function encode(input) {
  const points = typeof input === "string" ? ucs2decode(input) : Array.from(input);
  let output = points.filter((c) => c < 0x80).map((c) => String.fromCharCode(c)).join("");
  const basicLength = output.length;
  let handled = basicLength;
  if (basicLength) output += "-";
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < points.length) {
    let m = MAX_INT;
    for (const c of points) if (c >= n && c < m) m = c;
    if (m - n > Math.floor((MAX_INT - delta) / (handled + 1))) fail("overflow");
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of points) {
      if (c < n && ++delta > MAX_INT) fail("overflow");
      if (c === n) {
        let q = delta;
        for (let k = BASE; ; k += BASE) {
          const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias;
          if (q < t) break;
          output += digitToChar(t + ((q - t) % (BASE - t)));
          q = Math.floor((q - t) / (BASE - t));
        }
        output += digitToChar(q);
        bias = adapt(delta, handled + 1, handled === basicLength);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return output;
}

// Domain names: an e-mail address keeps its local part; IDNA's other dots count as dots.
function mapDomain(domain, convert) {
  const [local, host] = String(domain).includes("@") ? [String(domain).split("@")[0] + "@", String(domain).split("@").slice(1).join("@")] : ["", String(domain)];
  return local + host.replace(/[\u3002\uFF0E\uFF61]/g, ".").split(".").map(convert).join(".");
}

module.exports = {
  version: "2.1.0",
  ucs2: { decode: ucs2decode, encode: ucs2encode },
  decode,
  encode,
  toASCII: (domain) => mapDomain(domain, (label) => (/[^\0-\x7f]/.test(label) ? `xn--${encode(label)}` : label)),
  toUnicode: (domain) => mapDomain(domain, (label) => (/^xn--/i.test(label) ? decode(label.slice(4).toLowerCase()) : label)),
};
