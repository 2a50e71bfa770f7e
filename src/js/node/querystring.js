// node:querystring: the `querystring-es3` npm package (Node's parse/stringify), with Node's
// `escape`/`unescape` and the `decode`/`encode` aliases.
const qs = require("vendor:querystring-es3");

exports.parse = exports.decode = qs.parse;
exports.stringify = exports.encode = qs.stringify;
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
exports.unescape = function unescape(text) {
  try {
    return decodeURIComponent(String(text));
  } catch {
    return exports.unescapeBuffer(text).toString();
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
