// MIME types as the MIME Sniffing standard parses and serializes them, and Fetch's "extract a
// MIME type" from a Content-Type header: what Request, Response and Blob (65_http.js) report as a
// body's type, and what node:util's MIMEType parses with.

const MIME_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HTTP_WS = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/**
 * A MIME type parsed as the MIME Sniffing standard says: `{ type, subtype, params }` (type,
 * subtype and parameter names lowercased, the first of a repeated parameter kept), or null when
 * `text` is not a valid MIME type. node:util's MIMEType parses with it too.
 */
function parseMimeType(text) {
  text = String(text).replace(HTTP_WS, "");
  const slash = text.indexOf("/");
  if (slash === -1) return null;
  const type = text.slice(0, slash);
  let end = text.indexOf(";", slash);
  if (end === -1) end = text.length;
  const subtype = text.slice(slash + 1, end).replace(HTTP_WS, "");
  if (!MIME_TOKEN.test(type) || !MIME_TOKEN.test(subtype)) return null;
  const params = new Map();
  let at = end;
  while (at < text.length) {
    at++; // the ";"
    while (/[\t\n\r ]/.test(text[at] ?? "")) at++;
    let nameEnd = at;
    while (nameEnd < text.length && text[nameEnd] !== ";" && text[nameEnd] !== "=") nameEnd++;
    const name = text.slice(at, nameEnd).toLowerCase();
    at = nameEnd;
    if (text[at] === ";" || at >= text.length) continue;
    at++; // the "="
    let value = "";
    if (text[at] === '"') {
      at++;
      while (at < text.length && text[at] !== '"') {
        if (text[at] === "\\" && at + 1 < text.length) at++;
        value += text[at++];
      }
      while (at < text.length && text[at] !== ";") at++;
    } else {
      let valueEnd = text.indexOf(";", at);
      if (valueEnd === -1) valueEnd = text.length;
      value = text.slice(at, valueEnd).replace(HTTP_WS, "");
      at = valueEnd;
      if (value === "") continue;
    }
    if (name !== "" && MIME_TOKEN.test(name) && /^[\t\x20-\x7e\x80-\xff]*$/.test(value) && !params.has(name)) params.set(name, value);
  }
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), params };
}

/**
 * A content-type parsed and serialized as the MIME Sniffing standard says ("Text/HTML; Charset=x"
 * becomes "text/html;charset=x"), or "" when it is not a valid MIME type.
 */
function serializeMimeType(text) {
  const parsed = parseMimeType(text);
  if (parsed === null) return "";
  let out = `${parsed.type}/${parsed.subtype}`;
  for (const [name, value] of parsed.params) {
    const quoted = value === "" || !MIME_TOKEN.test(value);
    out += `;${name}=${quoted ? `"${value.replace(/["\\]/g, "\\$&")}"` : value}`;
  }
  return out;
}

/**
 * Fetch's "extract a MIME type" from a Content-Type value that may list several (comma-separated,
 * outside quotes): the last that parses and is not the any-type wildcard, serialized; "" when
 * none does.
 */
function extractMimeType(header) {
  let found = "";
  for (const value of String(header).match(/(?:[^,"]|"(?:[^"\\]|\\.)*"?)+/g) ?? []) {
    const serialized = serializeMimeType(value);
    if (serialized !== "" && !serialized.startsWith("*/*")) found = serialized;
  }
  return found;
}

internals.parseMimeType = parseMimeType;
internals.serializeMimeType = serializeMimeType;
internals.extractMimeType = extractMimeType;
