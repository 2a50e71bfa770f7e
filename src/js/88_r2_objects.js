// R2's binding protocol, the wire and the objects (for src/js/89_r2_http.js, the service-backed
// bucket): sendGet() (GET with the request's JSON in CF-R2-Request; the answer is
// CF-R2-Metadata-Size bytes of JSON, then the object's bytes) and sendPut() (PUT whose body is the
// JSON, then the value; the answer is JSON), each giving an R2Result (status, the CF-R2-Error
// error, what 404/10007 and 412/10031-10032 mean, the response span tags); and workerd's objects
// made from an answer's metadata: HeadResult (R2Object: own read-only key, version, size, etag,
// httpEtag, checksums, uploaded, httpMetadata, customMetadata, range, storageClass, ssecKeyMd5;
// writeHttpMetadata()), GetResult (R2ObjectBody: its body and readers) and Checksums
// (ArrayBuffers, toJSON() as hex), with addHeadResultSpanTags's tags (tagObject). All of it is
// internals.r2Http.

const { Request, Response, Headers, Blob } = globalThis;
const kConstruct = Symbol("construct");
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const VERSION = 1;
const HTTP = 0;
const CUSTOM = 1;
const NONE64 = 18446744073709551615;
const HTTP_FIELDS = ["contentType", "contentLanguage", "contentDisposition", "contentEncoding", "cacheControl", "cacheExpiry"];
/** The HTTP metadata fields that are strings: all but cacheExpiry. */
const HTTP_TEXT_FIELDS = HTTP_FIELDS.filter((field) => field !== "cacheExpiry");
const HTTP_HEADERS = { contentType: "content-type", contentLanguage: "content-language", contentDisposition: "content-disposition", contentEncoding: "content-encoding", cacheControl: "cache-control" };
// Span tag suffixes of the text fields, in the order workerd sets them.
const HTTP_TAGS = [
  ["contentType", "content_type"],
  ["contentEncoding", "content_encoding"],
  ["contentDisposition", "content_disposition"],
  ["contentLanguage", "content_language"],
  ["cacheControl", "cache_control"],
];
const HASHES = [
  ["md5", "MD5", 16, "0"],
  ["sha1", "SHA-1", 20, "1"],
  ["sha256", "SHA-256", 32, "2"],
  ["sha384", "SHA-384", 48, "3"],
  ["sha512", "SHA-512", 64, "4"],
];

const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
function fromHex(text) {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}
const bytesOf = (source) => (source instanceof ArrayBuffer ? new Uint8Array(source) : new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
const isBufferSource = (value) => value instanceof ArrayBuffer || ArrayBuffer.isView(value);
const dateMs = (value) => (value instanceof Date ? value.getTime() : new Date(value).getTime());
const iso = (ms) => new Date(ms).toISOString();

// ---- The wire: requests to the service and what its answers mean ------------------------------

function readError(response) {
  const text = response.headers.get("cf-r2-error") ?? '{"version":0,"v4code":0,"message":"Unspecified error"}';
  const error = JSON.parse(text);
  return { code: Number(error?.v4code ?? 0) >>> 0, message: String(error?.message ?? "") };
}

/** The outcome of one request: status, error ({ code, message }), metadata (JSON text), body (a GET answer's stream). */
class R2Result {
  constructor(status) {
    this.status = status;
    this.error = undefined;
    this.metadata = undefined;
    this.body = undefined;
  }
  /** Drops the rest of a GET answer (an object's bytes no one will read). */
  discard() {
    this.body?.cancel().catch(() => {});
  }
  get objectNotFound() {
    return this.status === 404 && this.error?.code === 10007;
  }
  get preconditionFailed() {
    return this.status === 412 && (this.error?.code === 10031 || this.error?.code === 10032);
  }
  get success() {
    return this.status >= 200 && this.status < 400;
  }
  throwIfError(action) {
    if (this.error !== undefined) throw new Error(`${action}: ${this.error.message} (${this.error.code})`);
  }
  json() {
    if (this.metadata === undefined) throw new Error("internal error: the R2 service's answer carried no metadata");
    return JSON.parse(this.metadata);
  }
  /** workerd's addR2ResponseSpanTags. */
  tag(span) {
    span.setTag("cloudflare.r2.response.success", this.success);
    if (this.error !== undefined) {
      span.setTag("error.type", this.error.message);
      span.setTag("cloudflare.r2.error.message", this.error.message);
      span.setTag("cloudflare.r2.error.code", BigInt(this.error.code));
    }
  }
}

/** head/get/list: GET with the request in CF-R2-Request; the answer's metadata, then its body. */
async function sendGet(binding, request) {
  const headers = { "cf-r2-request": JSON.stringify(request) };
  const response = await internals.fetchThroughHost(binding, new Request("https://fake-host/", { headers }));
  const result = new R2Result(response.status);
  if (response.status >= 400) result.error = readError(response);
  const sizeText = response.headers.get("cf-r2-metadata-size");
  if (sizeText === null) {
    await response.body?.cancel();
    return result;
  }
  // As C's atoi: the leading digits.
  const size = Number(/^\s*([+-]?\d*)/.exec(sizeText)[1]) || 0;
  if (size > 1024 * 1024) throw new Error("internal error: R2 metadata size seems way too large");
  if (size < 0) throw new Error("internal error: R2 metadata size parsed as negative");
  // The metadata is read off the front; the rest streams on as the object's body.
  const reader = (response.body ?? internals.internalStream({ start: (c) => c.close() })).getReader();
  let head = new Uint8Array(0);
  while (head.byteLength < size) {
    const { value, done } = await reader.read();
    if (done) break;
    const next = new Uint8Array(head.byteLength + value.byteLength);
    next.set(head);
    next.set(value, head.byteLength);
    head = next;
  }
  if (head.byteLength < size) {
    reader.cancel().catch(() => {});
    throw new Error("internal error: R2 metadata buffer not read fully/overflow?");
  }
  result.metadata = decoder.decode(head.subarray(0, size));
  let rest = head.byteLength > size ? head.slice(size) : null;
  result.body = internals.internalStream({
    type: "bytes",
    async pull(controller) {
      for (;;) {
        const chunk = rest ?? (await reader.read()).value;
        rest = null;
        if (chunk === undefined) {
          controller.close();
          controller.byobRequest?.respond(0);
          return;
        }
        if (chunk.byteLength > 0) return controller.enqueue(new Uint8Array(chunk));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return result;
}

/** put, delete and the multipart calls: PUT whose body is the request's JSON, then `value`. */
async function sendPut(binding, request, value = null) {
  const json = encoder.encode(JSON.stringify(request));
  const body = new Uint8Array(json.byteLength + (value?.byteLength ?? 0));
  body.set(json);
  if (value !== null) body.set(value, json.byteLength);
  const headers = { "cf-r2-metadata-size": String(json.byteLength) };
  const response = await internals.fetchThroughHost(binding, new Request("https://fake-host/", { method: "PUT", headers, body }));
  const result = new R2Result(response.status);
  if (response.status >= 400) {
    result.error = readError(response);
    await response.body?.cancel();
    return result;
  }
  result.metadata = await response.text();
  return result;
}

// ---- Objects --------------------------------------------------------------------------------

/** Own read-only properties, as workerd's lazy instance properties (which list last-declared first). */
function defineOwn(target, fields) {
  for (const [name, value] of Object.entries(fields).reverse()) Object.defineProperty(target, name, { value, enumerable: true, configurable: true, writable: false });
}

/** An object's checksums: an ArrayBuffer (or undefined) per algorithm; toJSON() as hex. */
class Checksums {
  #hex;
  constructor(token, hex) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#hex = hex;
    const fields = {};
    for (const [name] of HASHES) fields[name] = hex[name] === undefined ? undefined : fromHex(hex[name]).buffer;
    defineOwn(this, fields);
  }
  toJSON() {
    return internals.struct(
      HASHES.map(([name]) => name),
      this.#hex,
    );
  }
  get [Symbol.toStringTag]() {
    return "Checksums";
  }
}

/** The HTTP metadata of an answer's `httpFields` (cacheExpiry a Date). */
function httpMetadataOf(fields) {
  const out = {};
  for (const name of HTTP_TEXT_FIELDS) if (fields[name] !== undefined && fields[name] !== null) out[name] = String(fields[name]);
  if (fields.cacheExpiry !== undefined && fields.cacheExpiry !== null && Number(fields.cacheExpiry) !== NONE64) out.cacheExpiry = new Date(Number(fields.cacheExpiry));
  return out;
}

/** An R2 object as workerd parses an answer's metadata (parseObjectMetadata). */
function objectFields(meta, expected, overrides = {}) {
  let httpMetadata;
  if (meta.httpFields !== undefined && meta.httpFields !== null) httpMetadata = httpMetadataOf(meta.httpFields);
  else if (expected.includes(HTTP)) httpMetadata = {};
  let customMetadata;
  if (Array.isArray(meta.customFields)) {
    customMetadata = {};
    for (const field of meta.customFields) customMetadata[String(field?.k ?? "")] = String(field?.v ?? "");
  } else if (expected.includes(CUSTOM)) customMetadata = {};
  let range;
  if (meta.range !== undefined && meta.range !== null) range = { offset: Number(meta.range.offset ?? NONE64), length: Number(meta.range.length ?? NONE64) };
  const hex = {};
  for (const [name, , , wire] of HASHES) {
    const value = meta.checksums?.[wire] ?? meta.checksums?.[name];
    if (typeof value === "string" && value !== "") hex[name] = value.toLowerCase();
  }
  return {
    key: String(meta.name ?? ""),
    version: String(meta.version ?? ""),
    size: Number(meta.size ?? 0),
    etag: String(meta.etag ?? ""),
    hex,
    uploaded: Number(meta.uploaded ?? 0),
    httpMetadata: "httpMetadata" in overrides ? overrides.httpMetadata : httpMetadata,
    customMetadata: "customMetadata" in overrides ? overrides.customMetadata : customMetadata,
    range,
    storageClass: String(meta.storageClass ?? ""),
    ssecKeyMd5: meta.ssec !== undefined && meta.ssec !== null ? String(meta.ssec.keyMd5 ?? "") : undefined,
  };
}

class HeadResult {
  #fields;
  constructor(token, fields) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#fields = fields;
    const http = fields.httpMetadata;
    defineOwn(this, {
      key: fields.key,
      version: fields.version,
      size: fields.size,
      etag: fields.etag,
      httpEtag: `"${fields.etag}"`,
      checksums: new Checksums(kConstruct, fields.hex),
      uploaded: new Date(fields.uploaded),
      httpMetadata: http === undefined ? undefined : internals.struct(HTTP_FIELDS, { ...http, cacheExpiry: http.cacheExpiry === undefined ? undefined : new Date(http.cacheExpiry) }),
      customMetadata: fields.customMetadata === undefined ? undefined : { ...fields.customMetadata },
      range: fields.range === undefined ? undefined : internals.struct(["offset", "length", "suffix"], fields.range),
      storageClass: fields.storageClass,
      ssecKeyMd5: fields.ssecKeyMd5,
    });
  }
  writeHttpMetadata(headers) {
    if (!(headers instanceof Headers)) throw new TypeError("Failed to execute 'writeHttpMetadata' on 'HeadResult': parameter 1 is not of type 'Headers'.");
    const m = this.#fields.httpMetadata;
    if (m === undefined) throw new TypeError(`HTTP metadata unknown for key \`${this.#fields.key}\`. Did you forget to add 'httpMetadata' to \`include\` when listing?`);
    for (const [field, header] of Object.entries(HTTP_HEADERS)) if (m[field] !== undefined) headers.set(header, m[field]);
    if (m.cacheExpiry !== undefined) headers.set("expires", new Date(m.cacheExpiry).toUTCString());
  }
  get [Symbol.toStringTag]() {
    return "HeadResult";
  }
}

/** workerd's addHeadResultSpanTags. */
function tagObject(span, fields) {
  span.setTag("cloudflare.r2.response.etag", fields.etag);
  span.setTag("cloudflare.r2.response.size", fields.size);
  span.setTag("cloudflare.r2.response.uploaded", iso(fields.uploaded));
  for (const [name] of HASHES) if (fields.hex[name] !== undefined) span.setTag(`cloudflare.r2.response.checksum.${name}`, fields.hex[name]);
  span.setTag("cloudflare.r2.response.storage_class", fields.storageClass);
  if (fields.ssecKeyMd5 !== undefined) span.setTag("cloudflare.r2.response.ssec_key", true);
  const m = fields.httpMetadata;
  if (m !== undefined) {
    for (const [field, tag] of HTTP_TAGS) if (m[field] !== undefined) span.setTag(`cloudflare.r2.response.${tag}`, m[field]);
    if (m.cacheExpiry !== undefined) span.setTag("cloudflare.r2.response.cache_expiry", iso(m.cacheExpiry));
  }
  if (fields.customMetadata !== undefined) span.setTag("cloudflare.r2.response.custom_metadata", true);
}

/** An object with its body: the rest of the service's answer, streamed (read as a Response's body). */
class GetResult extends HeadResult {
  #body;
  #contentType;
  constructor(token, fields, stream) {
    super(token, fields);
    this.#body = new Response(stream);
    this.#contentType = fields.httpMetadata?.contentType;
  }
  get body() {
    return this.#body.body;
  }
  get bodyUsed() {
    return this.#body.bodyUsed;
  }
  arrayBuffer() {
    return this.#body.arrayBuffer();
  }
  bytes() {
    return this.#body.bytes();
  }
  text() {
    return this.#body.text();
  }
  json() {
    return this.#body.json();
  }
  async blob() {
    return new Blob([await this.#body.arrayBuffer()], { type: this.#contentType ?? "" });
  }
  get [Symbol.toStringTag]() {
    return "GetResult";
  }
}

/** workerd's parseObjectMetadata for a single-object answer: null when not found, else fields. */
function parseObject(action, result, overrides = {}) {
  if (result.objectNotFound) return null;
  if (!result.preconditionFailed) result.throwIfError(action);
  return objectFields(result.json(), [HTTP, CUSTOM], overrides);
}

internals.r2Http = {
  VERSION, HTTP, CUSTOM, HTTP_FIELDS, HTTP_TEXT_FIELDS, HTTP_HEADERS, HTTP_TAGS, HASHES, encoder, toHex, fromHex, bytesOf, isBufferSource, dateMs, iso,
  R2Result, sendGet, sendPut, objectFields, tagObject, parseObject,
  newHead: (fields) => new HeadResult(kConstruct, fields),
  newBody: (fields, bytes) => new GetResult(kConstruct, fields, bytes),
};
internals.asyncApiPrototypes.push(GetResult.prototype);
