// node:querystring: the `querystring-es3` npm package (Node's parse/stringify), with Node's
// `escape`/`unescape` and the `decode`/`encode` aliases.
const qs = require("vendor:querystring-es3");

exports.parse = exports.decode = qs.parse;
exports.stringify = exports.encode = qs.stringify;
exports.escape = function escape(text) {
  return encodeURIComponent(String(text));
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
