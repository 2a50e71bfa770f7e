// Blob, File and FormData (File API and XHR standards), plus the multipart/form-data encoding
// and parsing that Request/Response bodies use for FormData.

// The WHATWG class, whatever url_standard makes the global one.
const { URLSearchParams } = globalThis;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A Blob's type: lowercased, or "" if it has characters outside printable ASCII. */
function normalizeType(type) {
  const text = internals.domString(type ?? "");
  return /^[\x20-\x7e]*$/.test(text) ? text.toLowerCase() : "";
}

/** A buffer or view among the blob parts, read once every part is converted. */
class BufferPart {
  constructor(source) {
    this.source = source;
  }
  /** Its bytes now (a resizable buffer may have shrunk or grown since it was reached). */
  copy() {
    const part = this.source;
    if (part instanceof ArrayBuffer) return new Uint8Array(part.slice(0));
    return new Uint8Array(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength));
  }
}

/**
 * One blob part as Web IDL converts it: a Blob's bytes, a buffer or view kept to be read when
 * every part is converted (as workerd reads them: a later part's conversion may resize it), and
 * anything else a string.
 */
function convertPart(part) {
  if (part instanceof Blob) return internals.blobBytes(part);
  if (internals.feature("no_resizable_array_buffer_in_blob") && (part instanceof ArrayBuffer ? part.resizable : ArrayBuffer.isView(part) && part.buffer.resizable)) {
    throw new TypeError("Cannot create a Blob with a resizable ArrayBuffer");
  }
  if (part instanceof ArrayBuffer || ArrayBuffer.isView(part)) return new BufferPart(part);
  return internals.domString(part);
}

function partBytes(part, endings) {
  if (typeof part !== "string") return part;
  return encoder.encode(endings === "native" ? part.replace(/\r\n|\r/g, "\n") : part);
}

/**
 * A dictionary argument (BlobPropertyBag, FilePropertyBag, …) as Web IDL converts it: undefined
 * and null are an empty dictionary, any other non-object is a TypeError.
 */
function dictionary(value, what) {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" && typeof value !== "function") {
    throw new TypeError(`Failed to construct '${what}': The provided value is not of type '${what === "File" ? "FilePropertyBag" : "BlobPropertyBag"}'.`);
  }
  return value;
}

/**
 * The `endings` member: "transparent" (default) or "native". workerd leaves it unimplemented
 * (any value but undefined throws, its jsg::Unimplemented); with pedantic_wpt it is the standard's.
 */
function endingsOf(options, what) {
  const value = options.endings;
  if (value === undefined) return "transparent";
  if (!internals.feature("pedantic_wpt")) throw new Error("The 'endings' field on 'Options' is not implemented.");
  const text = String(value);
  if (text !== "transparent" && text !== "native") {
    throw new TypeError(`Failed to construct '${what}': The provided value '${text}' is not a valid enum value of type EndingType.`);
  }
  return text;
}

/** The blobParts sequence, each part converted as it is reached (Web IDL's iteration order). */
function convertParts(parts, what) {
  if (parts === undefined) return [];
  const method = parts === null || (typeof parts !== "object" && typeof parts !== "function") ? undefined : parts[Symbol.iterator];
  if (typeof method !== "function") {
    throw new TypeError(`Failed to construct '${what}': The provided value cannot be converted to a sequence.`);
  }
  const out = [];
  for (const part of { [Symbol.iterator]: () => method.call(parts) }) out.push(convertPart(part));
  return out.map((part) => (part instanceof BufferPart ? part.copy() : part));
}

/** Web IDL's [Clamp] long long: clamped, then rounded half to even (slice(1.5) starts at 2). */
function clampLongLong(value) {
  let x = Number(value);
  if (Number.isNaN(x)) return 0;
  x = Math.min(Math.max(x, -Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
  let r = Math.floor(x);
  const rest = x - r;
  if (rest > 0.5 || (rest === 0.5 && r % 2 !== 0)) r += 1;
  return r === 0 ? 0 : r;
}

/** The largest Blob workerd makes (128 MiB). */
const BLOB_LIMIT = 128 * 1024 * 1024;

/** A Blob's bytes from its converted parts; workerd's RangeError beyond BLOB_LIMIT. */
function joinParts(converted, endings) {
  if (converted.length === 0) return new Uint8Array(0);
  const chunks = converted.map((part) => partBytes(part, endings));
  const size = chunks.reduce((n, c) => n + c.byteLength, 0);
  if (size > BLOB_LIMIT) throw new RangeError(`Blob size ${size} exceeds limit ${BLOB_LIMIT}`);
  return concat(chunks);
}

/** Joins byte chunks into one Uint8Array (shared with the other bootstrap files). */
function concat(chunks) {
  if (chunks.length === 1) return chunks[0];
  const size = chunks.reduce((n, c) => n + c.byteLength, 0);
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}

internals.concatBytes = concat;

class Blob {
  #bytes;
  #type;
  constructor(parts = undefined, options = undefined) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    const what = this instanceof File ? "File" : "Blob"; // new.target may be File's stand-in (97_compat.js)
    const converted = convertParts(parts, what);
    options = dictionary(options, what);
    const endings = endingsOf(options, what);
    const type = options.type;
    this.#bytes = joinParts(converted, endings);
    this.#type = type === undefined ? "" : normalizeType(internals.domString(type));
  }
  static {
    internals.blobBytes = (blob) => blob.#bytes;
    internals.blobInit = (blob, bytes, type) => {
      blob.#bytes = bytes;
      blob.#type = normalizeType(type);
    };
    // `raw`: keep `type` exactly as given (a body's content-type under blob_legacy_mime_type).
    internals.newBlob = (bytes, type, raw = false) => {
      const blob = new Blob();
      blob.#bytes = bytes;
      blob.#type = raw ? internals.domString(type) : normalizeType(type);
      return blob;
    };
  }
  get size() {
    return this.#bytes.byteLength;
  }
  get type() {
    return this.#type;
  }
  slice(start = undefined, end = undefined, contentType = undefined) {
    const size = this.size;
    const clamp = (n) => (n < 0 ? Math.max(size + n, 0) : Math.min(n, size));
    const from = start === undefined ? 0 : clamp(clampLongLong(start));
    const to = end === undefined ? size : clamp(clampLongLong(end));
    return internals.newBlob(this.#bytes.slice(from, Math.max(from, to)), contentType === undefined ? "" : internals.domString(contentType));
  }
  async arrayBuffer() {
    return this.#bytes.slice().buffer;
  }
  async bytes() {
    return this.#bytes.slice();
  }
  async text() {
    return decoder.decode(this.#bytes);
  }
  stream() {
    return internals.bytesStream(this.#bytes);
  }
  get [Symbol.toStringTag]() {
    return "Blob";
  }
}

class File extends Blob {
  #name;
  #lastModified;
  constructor(bits, name, options = undefined) {
    if (arguments.length < 2) throw new TypeError("Failed to construct 'File': 2 arguments required.");
    const converted = convertParts(bits, "File");
    name = internals.domString(name);
    options = dictionary(options, "File");
    // FilePropertyBag's members in Web IDL's order: endings, lastModified, type.
    const endings = endingsOf(options, "File");
    const lastModified = options.lastModified;
    const type = options.type;
    super();
    const bytes = joinParts(converted, endings);
    internals.blobInit(this, bytes, type === undefined ? "" : internals.domString(type));
    this.#name = name;
    this.#lastModified = lastModified === undefined ? Date.now() : Math.trunc(+lastModified) || 0; // unary plus: a BigInt is a TypeError, as Web IDL's long long
  }
  get name() {
    return this.#name;
  }
  get lastModified() {
    return this.#lastModified;
  }
  get webkitRelativePath() {
    return "";
  }
  get [Symbol.toStringTag]() {
    return "File";
  }
}

// Web IDL attributes are enumerable: workerd lists File.prototype's name and lastModified.
for (const key of ["name", "lastModified"]) Object.defineProperty(File.prototype, key, { enumerable: true });

/**
 * A FormData entry value: strings stay strings, Blobs become Files. A Blob given without a file
 * name is named after the entry, as workerd names it (the standard says "blob").
 */
function entryValue(name, value, filename) {
  if (value instanceof Blob) {
    if (value instanceof File && filename === undefined) return value;
    return new File([value], filename === undefined ? name : internals.domString(filename), { type: value.type });
  }
  return internals.domString(value);
}

function needArgs(args, count, what) {
  if (args.length < count) throw new TypeError(`Failed to execute '${what}' on 'FormData': ${count} arguments required, but only ${args.length} present.`);
}

/**
 * FormData's iterators are live, as Web IDL's: each next() looks at the entries as they are now
 * (one that found the end finds entries appended after it), where a generator would stay done.
 */
const formIterators = new WeakMap(); // iterator -> { list(): the entries now, kind, index }
const FormDataIteratorPrototype = Object.create(Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]())));
Object.defineProperty(FormDataIteratorPrototype, "next", {
  value: function next() {
    const state = formIterators.get(this);
    if (state === undefined) throw new TypeError("next() called on an object that is not a FormData iterator");
    const list = state.list();
    if (state.index >= list.length) return { value: undefined, done: true };
    const [key, value] = list[state.index++];
    return { value: state.kind === "keys" ? key : state.kind === "values" ? value : [key, value], done: false };
  },
  writable: true,
  enumerable: true,
  configurable: true,
});
function formIterator(list, kind) {
  const iterator = Object.create(FormDataIteratorPrototype);
  formIterators.set(iterator, { list, kind, index: 0 });
  return iterator;
}

class FormData {
  #entries = [];
  constructor(form = undefined) {
    if (form !== undefined) throw new TypeError("Failed to construct 'FormData': there are no HTML forms in a worker.");
  }
  static {
    internals.formDataEntries = (form) => form.#entries;
  }
  append(name, value, filename = undefined) {
    needArgs(arguments, 2, "append");
    name = internals.domString(name);
    this.#entries.push([name, entryValue(name, value, filename)]);
  }
  set(name, value, filename = undefined) {
    needArgs(arguments, 2, "set");
    name = internals.domString(name);
    const entry = [name, entryValue(name, value, filename)];
    const index = this.#entries.findIndex(([k]) => k === name);
    if (index === -1) this.#entries.push(entry);
    else this.#entries = [...this.#entries.slice(0, index), entry, ...this.#entries.slice(index + 1).filter(([k]) => k !== name)];
  }
  get(name) {
    name = internals.domString(name);
    const found = this.#entries.find(([k]) => k === name);
    return found ? found[1] : null;
  }
  getAll(name) {
    name = internals.domString(name);
    return this.#entries.filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name) {
    name = internals.domString(name);
    return this.#entries.some(([k]) => k === name);
  }
  delete(name) {
    name = internals.domString(name);
    this.#entries = this.#entries.filter(([k]) => k !== name);
  }
  forEach(callback, thisArg = undefined) {
    for (const [k, v] of this.entries()) callback.call(thisArg, v, k, this);
  }
  entries() {
    return formIterator(() => this.#entries, "entries");
  }
  keys() {
    return formIterator(() => this.#entries, "keys");
  }
  values() {
    return formIterator(() => this.#entries, "values");
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  get [Symbol.toStringTag]() {
    return "FormData";
  }
}

// ---- multipart/form-data ---------------------------------------------------------------------

const escapeName = (name) => {
  // workerd refuses a trailing backslash, which would escape the closing quote.
  if (name.endsWith("\\")) throw new TypeError("Name or filename can't end with backslash");
  return name.replace(/\r/g, "%0D").replace(/\n/g, "%0A").replace(/"/g, "%22");
};

/** Encodes a FormData as multipart/form-data; returns the bytes and the content-type. */
internals.encodeMultipart = (form) => {
  const random = new Uint8Array(12);
  ops.fillRandom(random, true);
  const boundary = `----workerbox${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")}`;
  const chunks = [];
  for (const [name, value] of internals.formDataEntries(form)) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(name)}"`;
    if (typeof value === "string") {
      chunks.push(encoder.encode(`${head}\r\n\r\n`), encoder.encode(value.replace(/\r?\n|\r/g, "\r\n")), encoder.encode("\r\n"));
    } else {
      head += `; filename="${escapeName(value.name)}"\r\nContent-Type: ${value.type || "application/octet-stream"}\r\n\r\n`;
      chunks.push(encoder.encode(head), internals.blobBytes(value), encoder.encode("\r\n"));
    }
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  return { bytes: concat(chunks), type: `multipart/form-data; boundary=${boundary}` };
};

function indexOf(haystack, needle, from) {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function parameter(header, name) {
  const match = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]+)`, "i").exec(header);
  if (!match) return null;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2];
}

/** Parses a body as FormData, from multipart/form-data or application/x-www-form-urlencoded. */
internals.parseFormData = (bytes, contentType) => {
  const form = new FormData();
  const type = String(contentType ?? "").toLowerCase();
  if (type.startsWith("application/x-www-form-urlencoded")) {
    // As workerd: a charset parameter other than UTF-8's names is refused, not decoded.
    const charset = parameter(contentType, "charset");
    if (charset !== null && !/^(?:utf-?8|unicode-1-1-utf-8)$/i.test(charset)) throw new TypeError("Non-utf-8 application/x-www-form-urlencoded body.");
    for (const [k, v] of new URLSearchParams(decoder.decode(bytes))) form.append(k, v);
    return form;
  }
  if (!type.startsWith("multipart/form-data")) {
    throw new TypeError(`Body cannot be parsed as FormData: its content-type is "${contentType ?? ""}", not multipart/form-data or application/x-www-form-urlencoded.`);
  }
  const boundary = parameter(contentType, "boundary");
  if (!boundary) throw new TypeError("Body cannot be parsed as FormData: the multipart content-type has no boundary.");
  const delimiter = encoder.encode(`--${boundary}`);
  let at = indexOf(bytes, delimiter, 0);
  if (at === -1) throw new TypeError("Body cannot be parsed as FormData: the boundary does not occur in the body.");
  const malformed = () => new TypeError("Body cannot be parsed as FormData: a multipart part is malformed.");
  // Lines end with CRLF or, as workerd's parser also takes, a bare LF.
  const lineEnd = (i) => (bytes[i] === 0x0d && bytes[i + 1] === 0x0a ? 2 : bytes[i] === 0x0a ? 1 : 0);
  while (true) {
    at += delimiter.length;
    if (bytes[at] === 0x2d && bytes[at + 1] === 0x2d) break; // closing "--"
    while (bytes[at] === 0x20 || bytes[at] === 0x09) at++; // transport padding
    const eol = lineEnd(at);
    if (eol === 0) throw malformed();
    at += eol;
    // The headers end at the first empty line.
    let headerEnd = -1;
    let bodyStart = -1;
    for (let i = at; i < bytes.length; ) {
      const n = lineEnd(i);
      if (n === 0) {
        i++;
        continue;
      }
      if (i === at) {
        headerEnd = i;
        bodyStart = i + n;
        break;
      }
      const m = lineEnd(i + n);
      if (m > 0) {
        headerEnd = i;
        bodyStart = i + n + m;
        break;
      }
      i += n;
    }
    if (headerEnd === -1) throw malformed();
    // The part ends at the line break before the next delimiter.
    let next = -1;
    let contentEnd = -1;
    for (let from = bodyStart; ; ) {
      const found = indexOf(bytes, delimiter, from);
      if (found === -1) break;
      if (found >= bodyStart + 1 && bytes[found - 1] === 0x0a) {
        next = found;
        contentEnd = found >= bodyStart + 2 && bytes[found - 2] === 0x0d ? found - 2 : found - 1;
        break;
      }
      from = found + 1;
    }
    if (next === -1) throw malformed();
    const headers = decoder.decode(bytes.subarray(at, headerEnd)).split(/\r?\n/);
    const disposition = (headers.find((h) => /^content-disposition:/i.test(h)) ?? "").replace(/^content-disposition:\s*/i, "");
    if (!/^form-data\s*(;|$)/i.test(disposition)) {
      throw new TypeError(`Content-Disposition header for FormData part must have the value "form-data", possibly followed by parameters. Got: "${disposition}"`);
    }
    const partType = (headers.find((h) => /^content-type:/i.test(h)) ?? "").replace(/^content-type:\s*/i, "");
    const name = parameter(disposition, "name");
    if (name === null) throw new TypeError("Body cannot be parsed as FormData: a part has no name.");
    const filename = parameter(disposition, "filename");
    const content = bytes.slice(bodyStart, Math.max(bodyStart, contentEnd));
    // Before formdata_parser_supports_files (2021-11-03) workerd gave files as their text.
    const asText = filename === null || !internals.feature("formdata_parser_supports_files");
    form.append(name, asText ? decoder.decode(content) : new File([content], filename, { type: partType }));
    at = next;
  }
  return form;
};

internals.defineGlobal("Blob", Blob);
internals.defineGlobal("File", File);
internals.defineGlobal("FormData", FormData);
