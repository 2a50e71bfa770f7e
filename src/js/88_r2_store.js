// The wire of a bucket workerbox keeps itself (binding kind "storage": `storage()`, `storage({ dir
// })`, handlers, wrangler's `.wrangler/state`): the same R2Bucket as a service-backed one
// (src/js/89_r2_http.js) sends it workerd's binding-protocol requests ({ version, method,
// object, range, onlyIf, httpFields, customFields, md5…sha512, storageClass, ssec, … }), and this
// file answers each with the R2Result the HTTP path would parse from an R2 server's answer
// (src/js/88_r2_objects.js): so objects, options, validation and errors are one code for both.
// The answers are Miniflare's R2 server's (what workerd's R2 client meets under `wrangler dev`):
// its checks and errors (InvalidObjectName, EntityTooLarge, MetadataTooLarge, BadDigest,
// InvalidMaxKeys, InvalidRange, NoSuchKey, PreconditionFailed), checksums (MD5 always, the
// others when put() was given them, checked), a head's or get's range, list()'s include. Each
// request becomes a host call on the store (src/runtime/store/objects.rs and multipart.rs, or
// lib/bindings.js for handlers), whose `extra` keeps the other checksums, the storage class and
// the SSE-C key's MD5.

const { R2Result, HASHES, HTTP_TEXT_FIELDS, toHex, fromHex } = internals.r2Http;
const { atob } = globalThis;
const hostCall = internals.hostCall;
const utf8 = new TextEncoder();
const MAX_KEY_SIZE = 1024;
const MAX_VALUE_SIZE = 5_368_709_120 - 5_242_880;
const MAX_METADATA_SIZE = 2048;
const MAX_LIST_KEYS = 1000;

// [status, v4 code, message], as R2 (and Miniflare) answer.
const ERRORS = {
  NoSuchKey: [404, 10007, "The specified key does not exist."],
  EntityTooLarge: [400, 100100, "Your proposed upload exceeds the maximum allowed object size."],
  MetadataTooLarge: [400, 10012, "Your metadata headers exceed the maximum allowed metadata size."],
  InvalidObjectName: [400, 10020, "The specified object name is not valid."],
  InvalidMaxKeys: [400, 10022, "MaxKeys params must be positive integer <= 1000."],
  PreconditionFailed: [412, 10031, "At least one of the pre-conditions you specified did not hold."],
  BadDigest: [400, 10037, ""],
  InvalidRange: [416, 10039, "The requested range is not satisfiable"],
};

/** An error answer (throws nothing: the bucket decides what it means). */
class Refused {
  constructor(kind, message = undefined) {
    this.kind = kind;
    this.message = message;
  }
}

function failed(refusal) {
  const [status, code, message] = ERRORS[refusal.kind];
  const result = new R2Result(status);
  result.error = { code, message: refusal.message ?? message };
  return result;
}

function answer(metadata, body = undefined) {
  const result = new R2Result(200);
  result.metadata = JSON.stringify(metadata);
  result.body = body;
  return result;
}

function checkKey(key) {
  if (utf8.encode(String(key ?? "")).byteLength > MAX_KEY_SIZE) throw new Refused("InvalidObjectName");
  return String(key ?? "");
}

/** Miniflare's serialisedLength: two bytes a character once any is beyond Latin-1. */
const serialisedLength = (text) => (/[^\u0000-\u00ff]/.test(text) ? text.length * 2 : text.length);

// ---- Store records <-> the protocol's JSON ----------------------------------------------------

/** An object the store gave (lib/bindings.js's / objects.rs's fields) as an R2 answer's metadata. */
function wireObject(meta, range = undefined) {
  const extra = meta.extra ?? {};
  const checksums = {};
  // Not a multipart object: its etag is its MD5.
  if (/^[0-9a-f]{32}$/.test(meta.etag)) checksums[HASHES[0][3]] = meta.etag;
  for (const [name, , , wire] of HASHES.slice(1)) if (typeof extra.checksums?.[name] === "string") checksums[wire] = extra.checksums[name];
  const http = meta.httpMetadata ?? {};
  const httpFields = {};
  for (const field of HTTP_TEXT_FIELDS) if (http[field] !== undefined && http[field] !== null) httpFields[field] = String(http[field]);
  if (http.cacheExpiry !== undefined && http.cacheExpiry !== null) {
    const ms = typeof http.cacheExpiry === "number" ? http.cacheExpiry : new Date(http.cacheExpiry).getTime();
    if (Number.isFinite(ms)) httpFields.cacheExpiry = String(Math.trunc(ms));
  }
  const out = {
    name: meta.key,
    version: meta.version,
    size: String(meta.size),
    etag: meta.etag,
    uploaded: String(meta.uploaded),
    httpFields,
    customFields: Object.entries(meta.customMetadata ?? {}).map(([k, v]) => ({ k, v: String(v) })),
    checksums,
    storageClass: typeof extra.storageClass === "string" && extra.storageClass !== "" ? extra.storageClass : "Standard",
  };
  if (range !== undefined) out.range = { offset: String(range.offset), length: String(range.length) };
  if (typeof extra.ssecKeyMd5 === "string") out.ssec = { keyMd5: extra.ssecKeyMd5 };
  return out;
}

/** A put's or an upload's storage class and SSE-C key MD5 (hex), as the store keeps them. */
function storedExtra(request) {
  const extra = { storageClass: request.storageClass ?? "Standard" };
  if (request.ssec?.key !== undefined) extra.ssecKeyMd5 = toHex(digest("MD5", fromHex(request.ssec.key)));
  return extra;
}

/** A request's httpFields / customFields as the store keeps them (cacheExpiry in ms). */
function storedMetadata(request) {
  const httpMetadata = {};
  for (const field of HTTP_TEXT_FIELDS) if (request.httpFields?.[field] !== undefined) httpMetadata[field] = request.httpFields[field];
  if (request.httpFields?.cacheExpiry !== undefined) httpMetadata.cacheExpiry = Number(request.httpFields.cacheExpiry);
  const customMetadata = {};
  let size = 0;
  for (const { k, v } of request.customFields ?? []) {
    customMetadata[k] = v;
    size += serialisedLength(k) + serialisedLength(v);
  }
  if (size > MAX_METADATA_SIZE) throw new Refused("MetadataTooLarge");
  return { httpMetadata, customMetadata };
}

/** onlyIf as the store checks it: If-Match compares strongly (weak etags never match it). */
function storedConditions(onlyIf) {
  if (onlyIf === undefined) return undefined;
  const out = {};
  const values = (list, strongOnly) => list.filter((e) => e.type === "wildcard" || !strongOnly || e.type === "strong").map((e) => (e.type === "wildcard" ? "*" : e.value));
  if (onlyIf.etagMatches !== undefined) out.etagMatches = values(onlyIf.etagMatches, true);
  if (onlyIf.etagDoesNotMatch !== undefined) out.etagDoesNotMatch = values(onlyIf.etagDoesNotMatch, false);
  if (onlyIf.uploadedBefore !== undefined) out.uploadedBefore = Number(onlyIf.uploadedBefore);
  if (onlyIf.uploadedAfter !== undefined) out.uploadedAfter = Number(onlyIf.uploadedAfter);
  if (onlyIf.secondsGranularity) out.secondsGranularity = true;
  return out;
}

/** A Range header's single range in an object of `size` bytes (Miniflare's parseRanges): {offset, length}, or undefined for the whole object. */
function headerRange(header, size) {
  const prefix = /^ *bytes *=/i.exec(header);
  if (prefix === null) return undefined;
  const rest = header.slice(prefix[0].length);
  if (rest.trimStart() === "") return undefined;
  const ranges = [];
  for (const part of rest.split(",")) {
    const match = /^ *(\d+)? *- *(\d+)? *$/.exec(part);
    if (match === null) return undefined;
    const [, start, end] = match;
    if (start !== undefined && end !== undefined) {
      const first = parseInt(start, 10);
      const last = Math.min(parseInt(end, 10), size - 1);
      if (first > parseInt(end, 10) || first >= size) return undefined;
      ranges.push({ offset: first, length: last - first + 1 });
    } else if (start !== undefined) {
      const first = parseInt(start, 10);
      if (first >= size) return undefined;
      ranges.push({ offset: first, length: size - first });
    } else if (end !== undefined) {
      const suffix = parseInt(end, 10);
      if (suffix >= size) return undefined;
      if (suffix === 0) continue;
      ranges.push({ offset: size - suffix, length: suffix });
    } else {
      return undefined;
    }
  }
  return ranges.length === 1 ? ranges[0] : undefined;
}

/** Whether a `range` option fits an object of `size` bytes, as Miniflare checks it. */
function rangeFits(range, size) {
  if (range.suffix !== undefined) return Number(range.suffix) > 0;
  const offset = range.offset === undefined ? 0 : Number(range.offset);
  const length = range.length === undefined ? size - offset : Number(range.length);
  return !(offset < 0 || offset > size || length <= 0);
}

const digest = (name, bytes) => new Uint8Array(ops.subtleCall("digest", { hash: name, data: bytes }));

/** The checksums a put was given, checked against the value's: { sha1…: hex } of those besides MD5. */
function checkedChecksums(request, bytes) {
  const out = {};
  for (const [name, label] of HASHES) {
    if (request[name] === undefined) continue;
    const provided = name === "md5" ? Uint8Array.from(atob(request.md5), (c) => c.charCodeAt(0)) : fromHex(request[name]);
    const computed = digest(label, bytes);
    const hex = toHex(computed);
    if (toHex(provided ?? []) !== hex) {
      const message = [`The ${label} checksum you specified did not match what we received.`, `You provided a ${label} checksum with value: ${toHex(provided ?? [])}`, `Actual ${label} was: ${hex}`].join("\n");
      throw new Refused("BadDigest", message);
    }
    if (name !== "md5") out[name] = hex;
  }
  return out;
}

/** The key bytes a cursor stands for (the stores' cursors are the key, base64url), or undefined. */
function cursorKey(cursor) {
  try {
    const base64 = cursor.trim().replace(/-/g, "+").replace(/_/g, "/");
    return Uint8Array.from(atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4)), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function compareBytes(a, b) {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

// ---- The requests -----------------------------------------------------------------------------

async function head(bucket, request) {
  const key = checkKey(request.object);
  const [meta] = await hostCall(bucket, "head", { key });
  if (meta === null) throw new Refused("NoSuchKey");
  return answer(wireObject(meta, { offset: 0, length: meta.size }));
}

async function get(bucket, request) {
  const key = checkKey(request.object);
  const args = { key, onlyIf: storedConditions(request.onlyIf) };
  if (request.rangeHeader !== undefined) {
    const [meta] = await hostCall(bucket, "head", { key });
    if (meta === null) throw new Refused("NoSuchKey");
    args.range = headerRange(request.rangeHeader, meta.size);
  } else if (request.range !== undefined) {
    args.range = {};
    for (const field of ["offset", "length", "suffix"]) if (request.range[field] !== undefined) args.range[field] = Number(request.range[field]);
  }
  const [meta, bytes] = await hostCall(bucket, "get", args);
  if (meta === null) throw new Refused("NoSuchKey");
  const whole = { offset: 0, length: meta.size };
  if (!meta.bodyIncluded) {
    const result = failed(new Refused("PreconditionFailed"));
    result.metadata = JSON.stringify(wireObject(meta, whole));
    return result;
  }
  if (request.range !== undefined && !rangeFits(args.range, meta.size)) throw new Refused("InvalidRange");
  return answer(wireObject(meta, meta.range ?? whole), bytes ?? new Uint8Array(0));
}

async function put(bucket, request, bytes) {
  const key = checkKey(request.object);
  bytes ??= new Uint8Array(0);
  if (bytes.byteLength > MAX_VALUE_SIZE) throw new Refused("EntityTooLarge");
  const { httpMetadata, customMetadata } = storedMetadata(request);
  const extra = { checksums: checkedChecksums(request, bytes), ...storedExtra(request) };
  const args = { key, httpMetadata, customMetadata, onlyIf: storedConditions(request.onlyIf), extra };
  const [meta] = await hostCall(bucket, "put", args, bytes);
  if (meta === null) throw new Refused("PreconditionFailed");
  return answer(wireObject(meta));
}

async function list(bucket, request) {
  let limit = request.limit ?? MAX_LIST_KEYS;
  if (limit < 1 || limit > MAX_LIST_KEYS) throw new Refused("InvalidMaxKeys");
  const include = request.include ?? [];
  // R2 may give fewer objects when metadata is asked for; Miniflare gives at most 100 then.
  if (include.length > 0) limit = Math.min(limit, 100);
  const args = { prefix: request.prefix ?? "", delimiter: request.delimiter, cursor: request.cursor, startAfter: request.startAfter, limit };
  // Given both, the listing starts after the later of the cursor's key and startAfter (the store
  // would take the cursor's).
  if (args.cursor && args.startAfter !== undefined) {
    const fromCursor = cursorKey(args.cursor);
    if (fromCursor !== undefined && compareBytes(fromCursor, utf8.encode(args.startAfter)) <= 0) args.cursor = undefined;
  }
  const [page] = await hostCall(bucket, "list", args);
  const objects = page.objects.map((meta) => {
    const object = wireObject(meta);
    if (!include.includes(0)) object.httpFields = {};
    if (!include.includes(1)) object.customFields = [];
    return object;
  });
  const out = { objects, truncated: page.truncated, delimitedPrefixes: page.delimitedPrefixes };
  if (page.truncated) out.cursor = page.cursor;
  return answer(out);
}

async function remove(bucket, request) {
  const keys = (request.objects ?? [request.object]).map(checkKey);
  await hostCall(bucket, "delete", { keys });
  return answer({});
}

async function createMultipartUpload(bucket, request) {
  const key = checkKey(request.object);
  const { httpMetadata, customMetadata } = storedMetadata(request);
  const [result] = await hostCall(bucket, "createMultipartUpload", { key, httpMetadata, customMetadata, extra: storedExtra(request) });
  return answer({ uploadId: result.uploadId });
}

async function uploadPart(bucket, request, bytes) {
  const args = { key: String(request.object), uploadId: request.uploadId, partNumber: request.partNumber };
  const [part] = await hostCall(bucket, "uploadPart", args, bytes ?? new Uint8Array(0));
  return answer({ etag: part.etag });
}

async function completeMultipartUpload(bucket, request) {
  const parts = request.parts.map(({ part, etag }) => ({ partNumber: part, etag }));
  const [meta] = await hostCall(bucket, "completeMultipartUpload", { key: String(request.object), uploadId: request.uploadId, parts });
  return answer(wireObject(meta));
}

async function abortMultipartUpload(bucket, request) {
  await hostCall(bucket, "abortMultipartUpload", { key: String(request.object), uploadId: request.uploadId });
  return answer({});
}

const METHODS = { head, get, put, list, delete: remove, createMultipartUpload, uploadPart, completeMultipartUpload, abortMultipartUpload };

/** The wire of bucket binding `bucket`: { get(request), put(request, bytes) }, each an R2Result. */
internals.r2StoreWire = (bucket) => {
  const send = async (request, bytes = null) => {
    const method = METHODS[request.method];
    if (method === undefined) throw new Error(`internal error: no R2 method "${request.method}"`);
    try {
      return await method(bucket, request, bytes);
    } catch (error) {
      if (error instanceof Refused) return failed(error);
      throw error;
    }
  };
  return { get: send, put: send };
};
