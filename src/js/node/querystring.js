// node:querystring: Node's parse/stringify (a null-prototype result, multi-character separators,
// `maxKeys` counting separators, custom encoders and decoders), `escape`/`unescape`/
// `unescapeBuffer` and the `decode`/`encode` aliases.

/** `text` decoded by `decode`; when that throws, by unescape() (bad escapes kept as they are). */
function decodeText(text, decode) {
  try {
    return decode(text);
  } catch {
    return exports.unescape(text, true);
  }
}

exports.parse = exports.decode = function parse(query, sep, eq, options) {
  const result = { __proto__: null };
  if (typeof query !== "string" || query.length === 0) return result;
  const sepText = sep ? String(sep) : "&";
  const eqText = eq ? String(eq) : "=";
  const maxKeys = typeof options?.maxKeys === "number" ? options.maxKeys : 1000;
  const decode = typeof options?.decodeURIComponent === "function" ? options.decodeURIComponent : exports.unescape;
  let parts = sepText === "" ? [query] : query.split(sepText);
  if (maxKeys > 0 && Number.isFinite(maxKeys)) parts = parts.slice(0, maxKeys);
  for (const part of parts) {
    if (part.length === 0) continue;
    const at = eqText === "" ? 0 : part.indexOf(eqText);
    let key = at < 0 ? part : part.slice(0, at);
    let value = at < 0 ? "" : part.slice(at + eqText.length);
    key = key.length > 0 ? decodeText(key.replace(/\+/g, "%20"), decode) : key;
    value = value.length > 0 ? decodeText(value.replace(/\+/g, "%20"), decode) : value;
    const existing = result[key];
    if (existing === undefined) result[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else result[key] = [existing, value];
  }
  return result;
};

/** A value as query text: strings, finite numbers, bigints and booleans; anything else is "". */
function primitiveText(value) {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
      return Number.isFinite(value) ? `${value}` : "";
    case "bigint":
      return `${value}`;
    case "boolean":
      return value ? "true" : "false";
    default:
      return "";
  }
}

exports.stringify = exports.encode = function stringify(object, sep, eq, options) {
  if (object === null || typeof object !== "object") return "";
  const sepText = sep ? String(sep) : "&";
  const eqText = eq ? String(eq) : "=";
  const encode = typeof options?.encodeURIComponent === "function" ? options.encodeURIComponent : exports.escape;
  const fields = [];
  for (const key of Object.keys(object)) {
    const value = object[key];
    const prefix = encode(primitiveText(key)) + eqText;
    if (Array.isArray(value)) for (const item of value) fields.push(prefix + encode(primitiveText(item)));
    else fields.push(prefix + encode(primitiveText(value)));
  }
  return fields.join(sepText);
};
const hex = Array.from({ length: 256 }, (_, i) => `%${i.toString(16).toUpperCase().padStart(2, "0")}`);
const unreserved = /[A-Za-z0-9\-._~!'()*]/;
/**
 * Node's escape(): UTF-8 percent-encoding of all but the unreserved characters; a high surrogate
 * takes the next code unit as its pair whatever it is (Node's quirk), and one at the end is
 * URIError ERR_INVALID_URI.
 */
exports.escape = function escape(text) {
  if (typeof text !== "string") text = typeof text === "object" ? String(text) : `${text}`;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) out += unreserved.test(text[i]) ? text[i] : hex[c];
    else if (c < 0x800) out += hex[0xc0 | (c >> 6)] + hex[0x80 | (c & 0x3f)];
    else if (c < 0xd800 || c >= 0xe000) out += hex[0xe0 | (c >> 12)] + hex[0x80 | ((c >> 6) & 0x3f)] + hex[0x80 | (c & 0x3f)];
    else {
      if (++i >= text.length) throw Object.assign(new URIError("URI malformed"), { code: "ERR_INVALID_URI" });
      c = 0x10000 + (((c & 0x3ff) << 10) | (text.charCodeAt(i) & 0x3ff));
      out += hex[0xf0 | (c >> 18)] + hex[0x80 | ((c >> 12) & 0x3f)] + hex[0x80 | ((c >> 6) & 0x3f)] + hex[0x80 | (c & 0x3f)];
    }
  }
  return out;
};
exports.unescape = function unescape(text, decodeSpaces) {
  try {
    return decodeURIComponent(text);
  } catch {
    return exports.unescapeBuffer(text, decodeSpaces).toString();
  }
};
/** `%XX` escapes as bytes, everything else as its UTF-8 bytes; malformed escapes stay as text. */
exports.unescapeBuffer = function unescapeBuffer(text, decodeSpaces = false) {
  const { Buffer } = require("node:buffer");
  const parts = String(text).split(/(%[0-9a-fA-F]{2})/);
  return Buffer.concat(
    parts.map((part) => (/^%[0-9a-fA-F]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(decodeSpaces ? part.replace(/\+/g, " ") : part))),
  );
};
