// workerd's R2Bucket, for a bucket whose backing is a service (binding kind "r2_http" or
// "r2_http:<bucket>") and for one workerbox keeps (kind "storage": its requests are answered by
// src/js/88_r2_store.js, as an R2 server would answer them). For a service, as in workerd, each
// operation is an HTTP request to that service in R2's binding protocol.
// head/get/list are `GET https://fake-host/` with the request's JSON in `CF-R2-Request`; put,
// delete and the multipart calls are `PUT https://fake-host/` whose body is the JSON
// (`CF-R2-Metadata-Size` bytes of it) followed by the value. A GET answer starts with its JSON
// metadata (`CF-R2-Metadata-Size` bytes), then the object's bytes; a PUT answer is the JSON. An
// answer of status 400 or more carries `CF-R2-Error: {"version","v4code","message"}`, which
// becomes `Error("<action>: <message> (<v4code>)")` (404 with 10007 is "not found": null; 412
// with 10031/10032 a failed condition). The wire and the objects (workerd's HeadResult and
// GetResult, with own read-only properties) are src/js/88_r2_objects.js's; here are the bucket,
// its multipart uploads and the options as workerd reads them. Each operation is a span
// (r2_get, r2_put…) with workerd's tags (internals.userSpan, src/js/89_tail.js). The requests go
// through the host as a service binding's fetch does (internals.fetchThroughHost);
// lib/bindings.js routes them to the service.

const { Headers, ReadableStream, Blob } = globalThis;
const kConstruct = Symbol("construct");
const BUFFER_TYPES = "ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob";
const { VERSION, HTTP, CUSTOM, HTTP_TEXT_FIELDS, HTTP_HEADERS, HTTP_TAGS, HASHES, encoder, toHex, fromHex, bytesOf, isBufferSource, dateMs, iso } = internals.r2Http;
const { sendGet, sendPut, objectFields, tagObject, parseObject, newHead, newBody } = internals.r2Http;

// ---- Options, as workerd reads them -----------------------------------------------------------

/** If-Match / If-None-Match, as workerd's parseConditionalEtagHeader. */
function parseEtagHeader(text) {
  const out = [];
  let commaRequired = false;
  for (;;) {
    text = text.replace(/^[ \t]+/, "");
    if (text === "") return out;
    const c = text[0];
    if (c === ",") {
      text = text.slice(1);
      commaRequired = false;
    } else if (c === "*") {
      if (commaRequired) throw new Error("Comma was expected to separate etags. Encountered a wildcard character '*' instead.");
      return [{ type: "wildcard" }];
    } else if (c === "W") {
      if (commaRequired) throw new Error("Comma was expected to separate etags. Encountered a weak quotation character 'W' instead. This would otherwise indicate the start of a new weak etag.");
      if (!(text.length > 2 && text[1] === "/" && text[2] === '"')) throw new Error("Weak etags must start with W/ and their value must be quoted");
      const end = text.indexOf('"', 3);
      if (end === -1) throw new Error("Unclosed double quote for Etag");
      out.push({ value: text.slice(3, end), type: "weak" });
      text = text.slice(end + 1);
      commaRequired = true;
    } else if (c === '"') {
      if (commaRequired) throw new Error("Comma was expected to separate etags. Encountered a double quote character '\"' instead. This would otherwise indicate the start of a new strong etag.");
      const end = text.indexOf('"', 1);
      if (end === -1) throw new Error("Unclosed double quote for Etag");
      out.push({ value: text.slice(1, end), type: "strong" });
      text = text.slice(end + 1);
      commaRequired = true;
    } else {
      return out;
    }
  }
}

/** onlyIf (an R2Conditional or a Headers) into the request's `onlyIf`, with its span tags. */
function addOnlyIf(span, request, onlyIf) {
  if (onlyIf === undefined) return;
  const c = { secondsGranularity: false };
  if (onlyIf instanceof Headers) {
    c.secondsGranularity = true;
    for (const [header, field] of [
      ["if-match", "etagMatches"],
      ["if-none-match", "etagDoesNotMatch"],
    ]) {
      const value = onlyIf.get(header);
      if (value === null) continue;
      c[field] = parseEtagHeader(value);
      if (c[field].length === 0) throw new Error(`Invalid ETag in ${header} header`);
    }
    if (onlyIf.has("if-modified-since")) c.uploadedAfter = Date.parse(onlyIf.get("if-modified-since"));
    if (onlyIf.has("if-unmodified-since")) c.uploadedBefore = Date.parse(onlyIf.get("if-unmodified-since"));
  } else if (onlyIf !== null && typeof onlyIf === "object") {
    c.secondsGranularity = Boolean(onlyIf.secondsGranularity ?? false);
    for (const field of ["etagMatches", "etagDoesNotMatch"]) {
      const value = onlyIf[field];
      if (value === undefined) continue;
      if (typeof value !== "string") throw new TypeError(`Failed to execute on 'R2Bucket': onlyIf.${field} is not of type 'string'.`);
      if (value.startsWith('"') && value.endsWith('"')) throw new TypeError(`Conditional ETag should not be wrapped in quotes (${value}).`);
      c[field] = [value === "*" ? { type: "wildcard" } : { value, type: "strong" }];
    }
    if (onlyIf.uploadedAfter !== undefined) c.uploadedAfter = dateMs(onlyIf.uploadedAfter);
    if (onlyIf.uploadedBefore !== undefined) c.uploadedBefore = dateMs(onlyIf.uploadedBefore);
  } else {
    throw new TypeError("onlyIf must be an R2Conditional object or a Headers.");
  }
  const out = {};
  const etags = (list) => list.map((e) => (e.type === "wildcard" ? "*" : e.value)).join(", ");
  if (c.etagMatches !== undefined) {
    out.etagMatches = c.etagMatches;
    span.setTag("cloudflare.r2.request.only_if.etag_matches", etags(c.etagMatches));
  }
  if (c.etagDoesNotMatch !== undefined) {
    out.etagDoesNotMatch = c.etagDoesNotMatch;
    span.setTag("cloudflare.r2.request.only_if.etag_does_not_match", etags(c.etagDoesNotMatch));
  }
  for (const [field, tag] of [
    ["uploadedBefore", "uploaded_before"],
    ["uploadedAfter", "uploaded_after"],
  ]) {
    if (c[field] === undefined) continue;
    out[field] = String(Math.trunc(c[field]));
    if (c.secondsGranularity) out.secondsGranularity = true;
    span.setTag(`cloudflare.r2.request.only_if.${tag}`, iso(c[field]));
  }
  request.onlyIf = out;
}

/** A get()'s `range` (a Headers' range header, or `{ offset, length, suffix }`) into `request`, tagged on `span`. */
function addRange(span, request, range) {
  if (range instanceof Headers) {
    const header = range.get("range");
    if (header !== null) {
      request.rangeHeader = header;
      span.setTag("cloudflare.r2.request.range", header);
    }
  } else if (range !== undefined && range !== null) {
    const out = {};
    if (range.offset !== undefined) {
      const offset = checkNumber(range.offset, "range", "Starting offset");
      out.offset = String(offset);
      span.setTag("cloudflare.r2.request.range.offset", BigInt(offset));
    }
    if (range.length !== undefined) {
      const length = checkNumber(range.length, "range", "Length");
      out.length = String(length);
      span.setTag("cloudflare.r2.request.range.length", BigInt(length));
    }
    if (range.suffix !== undefined) {
      if (range.offset !== undefined) throw new TypeError("Suffix is incompatible with offset.");
      if (range.length !== undefined) throw new TypeError("Suffix is incompatible with length.");
      const suffix = checkNumber(range.suffix, "suffix", "Suffix");
      out.suffix = String(suffix);
      span.setTag("cloudflare.r2.request.range.suffix", BigInt(suffix));
    }
    request.range = out;
  }
}

/** An SSE-C key (32 bytes, or 64 lowercase hex digits) as the hex the request carries. */
function ssecKeyHex(key) {
  if (key === undefined) return undefined;
  if (typeof key === "string") {
    if (!/^[0-9a-f]+$/.test(key)) throw new Error("SSE-C Key has invalid format");
    if (key.length !== 64) throw new Error("SSE-C Key must be 32 bytes in length");
    return key;
  }
  if (!isBufferSource(key) && !Array.isArray(key)) throw new TypeError("ssecKey must be a string or a buffer of 32 bytes.");
  const bytes = Array.isArray(key) ? Uint8Array.from(key) : bytesOf(key);
  if (bytes.byteLength !== 32) throw new Error("SSE-C Key must be 32 bytes in length");
  return toHex(bytes);
}

function addSsec(span, request, key) {
  const hex = ssecKeyHex(key);
  if (hex === undefined) return;
  request.ssec = { key: hex };
  span.setTag("cloudflare.r2.request.ssec_key", true);
}

/** httpMetadata (an R2HTTPMetadata or a Headers) as { contentType…, cacheExpiry (ms) }. */
function readHttpMetadata(value) {
  const out = {};
  if (value instanceof Headers) {
    for (const [field, header] of Object.entries(HTTP_HEADERS)) if (value.has(header)) out[field] = value.get(header);
    if (value.has("expires")) out.cacheExpiry = Date.parse(value.get("expires"));
    return out;
  }
  if (value === null || typeof value !== "object") throw new TypeError("httpMetadata must be an R2HTTPMetadata object or a Headers.");
  for (const field of HTTP_TEXT_FIELDS) if (value[field] !== undefined) out[field] = String(value[field]);
  if (value.cacheExpiry !== undefined) out.cacheExpiry = dateMs(value.cacheExpiry);
  return out;
}

/** customMetadata and httpMetadata of put() / createMultipartUpload() into the request. */
function addMetadata(span, request, options) {
  let custom;
  let http;
  if (options.customMetadata !== undefined) {
    custom = {};
    for (const [k, v] of Object.entries(options.customMetadata)) custom[k] = String(v);
    request.customFields = Object.entries(custom).map(([k, v]) => ({ k, v }));
    span.setTag("cloudflare.r2.request.custom_metadata", true);
  }
  if (options.httpMetadata !== undefined) {
    http = readHttpMetadata(options.httpMetadata);
    const fields = {};
    for (const [field, tag] of HTTP_TAGS) {
      if (http[field] === undefined) continue;
      fields[field] = http[field];
      span.setTag(`cloudflare.r2.request.http_metadata.${tag}`, http[field]);
    }
    if (http.cacheExpiry !== undefined) {
      fields.cacheExpiry = String(Math.trunc(http.cacheExpiry));
      span.setTag("cloudflare.r2.request.http_metadata.cache_expiry", BigInt(Math.trunc(http.cacheExpiry)));
    }
    request.httpFields = fields;
  }
  return { custom, http };
}

/** A put or uploadPart value: its bytes (null for none), the size tag set when its length is known. */
function checkValue(value, what) {
  const ok = value === null || value === undefined || typeof value === "string" || isBufferSource(value) || value instanceof ReadableStream || value instanceof Blob;
  if (!ok) throw new TypeError(`Failed to execute '${what}': parameter 2 is not of type '${BUFFER_TYPES}'.`);
}

async function valueBytes(span, value) {
  if (value === null || value === undefined) return null;
  let bytes;
  if (typeof value === "string") bytes = encoder.encode(value);
  else if (isBufferSource(value)) bytes = bytesOf(value).slice();
  else if (value instanceof Blob) bytes = internals.blobBytes(value).slice();
  if (bytes !== undefined) {
    span.setTag("cloudflare.r2.request.size", BigInt(bytes.byteLength));
    return bytes;
  }
  // A stream must have a known length (a FixedLengthStream's, or a body's), as workerd requires.
  const fixed = internals.fixedLengths.get(value)?.expected;
  if (fixed !== undefined) span.setTag("cloudflare.r2.request.size", BigInt(fixed));
  else if (!internals.sizedStreams.has(value)) throw new TypeError("Provided readable stream must have a known length (request/response body or readable half of FixedLengthStream)");
  bytes = await internals.readAllBytes(value);
  if (fixed === undefined) span.setTag("cloudflare.r2.request.size", BigInt(bytes.byteLength));
  return bytes;
}

// ---- The bucket -------------------------------------------------------------------------------

function checkNumber(value, what, name) {
  const n = Number(value);
  if (!(n >= 0)) throw new RangeError(`Invalid ${what}. ${name} (${n}) must be greater than or equal to 0.`);
  if (!Number.isInteger(n)) throw new RangeError(`Invalid range. ${name} (${n}) must be an integer, not floating point.`);
  return n;
}

let bucketWire;
let bucketSpan;

/** The wire of a service-backed bucket: each request an HTTP request to the service. */
const httpWire = (name) => ({ get: (request) => sendGet(name, request), put: (request, value) => sendPut(name, request, value) });

class R2Bucket {
  #name;
  #bucket;
  #wire;
  constructor(token, name, bucket, wire) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
    this.#bucket = bucket;
    this.#wire = wire;
  }

  /** A span for `operation`, with the tags every R2 span has. */
  #span(name, operation) {
    const span = internals.userSpan(name);
    span.setTag("cloudflare.binding.type", "r2");
    span.setTag("cloudflare.binding.name", this.#name);
    span.setTag("cloudflare.r2.operation", operation);
    if (this.#bucket !== undefined) span.setTag("cloudflare.r2.bucket", this.#bucket);
    return span;
  }

  /** `body(span)` in a span for `operation` on the object `key` (its first request tag), ended when it settles. */
  #keyed(name, operation, key, body) {
    const span = this.#span(name, operation);
    return internals.inSpan(span, () => {
      span.setTag("cloudflare.r2.request.key", key);
      return body(span);
    });
  }

  async head(key) {
    key = String(key);
    return this.#keyed("r2_head", "HeadObject", key, async (span) => {
      const result = await this.#wire.get({ version: VERSION, method: "head", object: key });
      result.discard();
      result.tag(span);
      const fields = parseObject("head", result);
      if (fields === null) return null;
      tagObject(span, fields);
      return newHead(fields);
    });
  }

  async get(key, options = undefined) {
    key = String(key);
    return this.#keyed("r2_get", "GetObject", key, async (span) => {
      const request = { version: VERSION, method: "get", object: key };
      if (options !== undefined && options !== null) {
        addOnlyIf(span, request, options.onlyIf);
        addRange(span, request, options.range);
        addSsec(span, request, options.ssecKey);
      }
      const result = await this.#wire.get(request);
      result.tag(span);
      if (result.preconditionFailed || result.error !== undefined) result.discard();
      if (result.preconditionFailed) {
        const fields = parseObject("get", result);
        tagObject(span, fields);
        return newHead(fields);
      }
      const fields = parseObject("get", result);
      if (fields === null) return null;
      tagObject(span, fields);
      return newBody(fields, result.body ?? null);
    });
  }

  async put(key, value, options = undefined) {
    key = String(key);
    checkValue(value, "put' on 'R2Bucket");
    return this.#keyed("r2_put", "PutObject", key, async (span) => {
      const request = { version: VERSION, method: "put", object: key };
      let sent = { custom: undefined, http: undefined };
      if (options !== undefined && options !== null) {
        addOnlyIf(span, request, options.onlyIf);
        sent = addMetadata(span, request, options);
        let hashed = false;
        for (const [name, label, length] of HASHES) {
          const value = options[name];
          if (value === undefined) continue;
          if (hashed) throw new TypeError("You cannot specify multiple hashing algorithms.");
          hashed = true;
          let bytes;
          if (typeof value === "string") {
            if (value.length !== length * 2) throw new TypeError(`${label} is ${length * 2} hex characters, not ${value.length}`);
            bytes = fromHex(value);
            if (bytes === null) throw new TypeError(`Provided ${label} wasn't a valid hex string`);
          } else if (isBufferSource(value)) {
            bytes = bytesOf(value);
            if (bytes.byteLength !== length) throw new TypeError(`${label} is ${length} bytes, not ${bytes.byteLength}`);
          } else {
            throw new TypeError(`${name} must be a string of hex digits or a buffer.`);
          }
          // MD5 travels as base64, the others as hex (workerd's r2-api.capnp).
          request[name] = name === "md5" ? btoa(String.fromCharCode(...bytes)) : toHex(bytes);
          span.setTag("cloudflare.r2.request.checksum.type", name);
          span.setTag("cloudflare.r2.request.checksum.value", typeof value === "string" ? value : toHex(bytes));
        }
        if (options.storageClass !== undefined) {
          request.storageClass = String(options.storageClass);
          span.setTag("cloudflare.r2.request.storage_class", request.storageClass);
        }
        addSsec(span, request, options.ssecKey);
      }
      const bytes = await valueBytes(span, value);
      const result = await this.#wire.put(request, bytes);
      result.tag(span);
      if (result.preconditionFailed) return null;
      // The object has the metadata sent (none sent: empty), as workerd gives it.
      const fields = parseObject("put", result, { httpMetadata: sent.http ?? {}, customMetadata: sent.custom ?? {} });
      if (fields === null) return null;
      tagObject(span, fields);
      return newHead(fields);
    });
  }

  async createMultipartUpload(key, options = undefined) {
    if (key === undefined) throw new TypeError("Failed to execute 'createMultipartUpload' on 'R2Bucket': parameter 1 is not of type 'string'.");
    key = String(key);
    return this.#keyed("r2_createMultipartUpload", "CreateMultipartUpload", key, async (span) => {
      const request = { version: VERSION, method: "createMultipartUpload", object: key };
      if (options !== undefined && options !== null) {
        addMetadata(span, request, options);
        if (options.storageClass !== undefined) {
          request.storageClass = String(options.storageClass);
          span.setTag("cloudflare.r2.request.storage_class", request.storageClass);
        }
        addSsec(span, request, options.ssecKey);
      }
      const result = await this.#wire.put(request);
      result.tag(span);
      result.throwIfError("createMultipartUpload");
      const uploadId = String(result.json().uploadId ?? "");
      span.setTag("cloudflare.r2.response.upload_id", uploadId);
      return new R2MultipartUpload(kConstruct, this, key, uploadId);
    });
  }

  resumeMultipartUpload(key, uploadId) {
    for (const [index, value] of [key, uploadId].entries()) {
      if (value === undefined) throw new TypeError(`Failed to execute 'resumeMultipartUpload' on 'R2Bucket': parameter ${index + 1} is not of type 'string'.`);
    }
    return new R2MultipartUpload(kConstruct, this, String(key), String(uploadId));
  }

  async delete(keys) {
    const list = Array.isArray(keys) ? keys.map(String) : undefined;
    const one = list === undefined ? String(keys) : undefined;
    const span = this.#span("r2_delete", "DeleteObject");
    return internals.inSpan(span, async () => {
      const request = { version: VERSION, method: "delete" };
      if (list !== undefined) request.objects = list;
      else request.object = one;
      span.setTag("cloudflare.r2.request.keys", list === undefined ? one : list.join(", "));
      const result = await this.#wire.put(request);
      result.tag(span);
      if (result.objectNotFound) return;
      result.throwIfError("delete");
    });
  }

  async list(options = undefined) {
    const span = this.#span("r2_list", "ListObjects");
    return internals.inSpan(span, async () => {
      const request = { version: VERSION, method: "list" };
      let expected = [];
      const honour = internals.feature("r2_list_honor_include");
      if (options !== undefined && options !== null) {
        if (options.limit !== undefined) {
          request.limit = Math.trunc(Number(options.limit)) | 0;
          span.setTag("cloudflare.r2.request.limit", BigInt(request.limit));
        }
        for (const [field, tag] of [
          ["prefix", "prefix"],
          ["cursor", "cursor"],
          ["delimiter", "delimiter"],
          ["startAfter", "start_after"],
        ]) {
          if (options[field] === undefined) continue;
          if (typeof options[field] !== "string") throw new TypeError(`Incorrect type for the '${field}' field on 'ListOptions': the provided value is not of type 'string'.`);
          request[field] = options[field];
          span.setTag(`cloudflare.r2.request.${tag}`, options[field]);
        }
        if (options.include !== undefined) {
          const include = [...options.include];
          for (const name of include) {
            if (name === "httpMetadata") span.setTag("cloudflare.r2.request.include.http_metadata", true);
            else if (name === "customMetadata") span.setTag("cloudflare.r2.request.include.custom_metadata", true);
          }
          request.include = include.map((name) => {
            if (name === "httpMetadata") return HTTP;
            if (name === "customMetadata") return CUSTOM;
            throw new RangeError(`Unsupported include value ${name}`);
          });
          expected = request.include;
        } else if (honour) {
          request.include = [];
        }
      }
      request.newRuntime = true;
      if (!honour) {
        request.include = [HTTP, CUSTOM];
        expected = [HTTP, CUSTOM];
      }
      const result = await this.#wire.get(request);
      result.discard();
      result.tag(span);
      result.throwIfError("list");
      const answer = result.json();
      const objects = (answer.objects ?? []).map((meta) => newHead(objectFields(meta, expected)));
      const truncated = Boolean(answer.truncated);
      let cursor;
      if (typeof answer.cursor === "string") {
        cursor = answer.cursor;
        span.setTag("cloudflare.r2.response.cursor", cursor);
      }
      const delimitedPrefixes = (answer.delimitedPrefixes ?? []).map(String);
      span.setTag("cloudflare.r2.response.returned_objects", BigInt(objects.length));
      span.setTag("cloudflare.r2.response.delimited_prefixes", BigInt(delimitedPrefixes.length));
      span.setTag("cloudflare.r2.response.truncated", truncated);
      return internals.struct(["objects", "truncated", "cursor", "delimitedPrefixes"], { objects, truncated, cursor, delimitedPrefixes });
    });
  }

  get [Symbol.toStringTag]() {
    return "R2Bucket";
  }

  // For R2MultipartUpload (not reachable from the worker): the bucket's wire and a span of its own.
  static {
    bucketWire = (bucket) => bucket.#wire;
    bucketSpan = (bucket, name, operation) => bucket.#span(name, operation);
  }
}

// ---- Multipart uploads ------------------------------------------------------------------------

function checkPartNumber(value) {
  const number = Number(value);
  const integer = Number.isFinite(number) ? Math.trunc(number) : 0;
  if (!(integer >= 1 && integer <= 10000)) throw new TypeError(`Part number must be between 1 and 10000 (inclusive). Actual value was: ${integer}`);
  return integer;
}

class R2MultipartUpload {
  #bucket;
  constructor(token, bucket, key, uploadId) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#bucket = bucket;
    // As workerd lists them: uploadId, then key.
    Object.defineProperty(this, "uploadId", { value: uploadId, enumerable: true, configurable: true });
    Object.defineProperty(this, "key", { value: key, enumerable: true, configurable: true });
  }

  #span(name, operation) {
    const span = bucketSpan(this.#bucket, name, operation);
    span.setTag("cloudflare.r2.request.upload_id", this.uploadId);
    return span;
  }

  async uploadPart(partNumber, value, options = undefined) {
    if (arguments.length < 2) throw new TypeError(`Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter ${arguments.length + 1} is not of type '${arguments.length ? BUFFER_TYPES : "integer"}'.`);
    partNumber = checkPartNumber(partNumber);
    if (value === null || value === undefined) throw new TypeError(`Failed to execute 'uploadPart' on 'R2MultipartUpload': parameter 2 is not of type '${BUFFER_TYPES}'.`);
    checkValue(value, "uploadPart' on 'R2MultipartUpload");
    const span = this.#span("r2_uploadPart", "UploadPart");
    return internals.inSpan(span, async () => {
      span.setTag("cloudflare.r2.request.part_number", BigInt(partNumber));
      span.setTag("cloudflare.r2.request.key", this.key);
      const request = { version: VERSION, method: "uploadPart", uploadId: this.uploadId, partNumber, object: this.key };
      if (options !== undefined && options !== null) addSsec(span, request, options.ssecKey);
      const bytes = await valueBytes(span, value);
      const result = await bucketWire(this.#bucket).put(request, bytes);
      result.tag(span);
      result.throwIfError("uploadPart");
      const etag = String(result.json().etag ?? "");
      span.setTag("cloudflare.r2.response.etag", etag);
      return { partNumber, etag };
    });
  }

  async abort() {
    const span = this.#span("r2_abortMultipartUpload", "AbortMultipartUpload");
    return internals.inSpan(span, async () => {
      span.setTag("cloudflare.r2.request.key", this.key);
      const result = await bucketWire(this.#bucket).put({ version: VERSION, method: "abortMultipartUpload", object: this.key, uploadId: this.uploadId });
      result.tag(span);
      if (result.objectNotFound) return;
      result.throwIfError("abortMultipartUpload");
    });
  }

  async complete(uploadedParts) {
    if (!Array.isArray(uploadedParts)) throw new TypeError("Failed to execute 'complete' on 'R2MultipartUpload': parameter 1 is not of type 'Array'.");
    const parts = uploadedParts.map((part, index) => {
      if (part === null || typeof part !== "object") throw new TypeError(`Failed to execute 'complete' on 'R2MultipartUpload': uploadedParts[${index}] is not an object { partNumber, etag }.`);
      const number = Number(part.partNumber);
      return { partNumber: Number.isFinite(number) ? Math.trunc(number) : 0, etag: part.etag === undefined ? "" : String(part.etag) };
    });
    const span = this.#span("r2_completeMultipartUpload", "CompleteMultipartUpload");
    return internals.inSpan(span, async () => {
      span.setTag("cloudflare.r2.request.key", this.key);
      span.setTag("cloudflare.r2.request.uploaded_parts", parts.map((p) => p.partNumber).join(", "));
      const wire = parts.map((p) => ({ etag: p.etag, part: checkPartNumber(p.partNumber) }));
      const request = { version: VERSION, method: "completeMultipartUpload", object: this.key, uploadId: this.uploadId, parts: wire };
      const result = await bucketWire(this.#bucket).put(request);
      result.tag(span);
      const fields = parseObject("completeMultipartUpload", result);
      if (fields === null) throw new Error("internal error: a multipart completion gave no object");
      tagObject(span, fields);
      return newHead(fields);
    });
  }

  get [Symbol.toStringTag]() {
    return "R2MultipartUpload";
  }
}

internals.asyncApiPrototypes.push(R2Bucket.prototype, R2MultipartUpload.prototype);

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  if (kind === "storage") return new R2Bucket(kConstruct, name, undefined, internals.r2StoreWire(name));
  if (kind === "r2_http") return new R2Bucket(kConstruct, name, undefined, httpWire(name));
  if (kind.startsWith("r2_http:")) return new R2Bucket(kConstruct, name, kind.slice("r2_http:".length), httpWire(name));
  return makeOtherBinding(name, kind);
};
