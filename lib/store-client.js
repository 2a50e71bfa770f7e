"use strict";
// Node-side clients of KV and R2-style storage bindings: what `kv(…).namespace()` and
// `storage(…).bucket()` return (and getPlatformProxy() gives as `env.KV`/`env.BUCKET`), with
// Workers' KVNamespace and R2Bucket APIs. Each client runs its calls in a small internal worker
// given that one binding, so a call from Node goes through the very code, validation and errors
// of a worker's own `env` binding and reaches the same store (the same SQLite file, or the same
// handlers); the worker is made on the first call. Workers are the API's (lib/api.js): it hands
// this file createWorker and dispatch through setWorkerAccess(), so nothing here imports it.

let access = null;
/** Called by lib/api.js: how to make an internal worker and send it a request. */
function setWorkerAccess(api) {
  access = api;
}

/** The internal worker: runs one KV or R2 call on env[name] per request. */
const PROXY_SCRIPT = `
const meta = (o) => o === null ? null : ({ key: o.key, version: o.version, size: o.size, etag: o.etag, httpEtag: o.httpEtag,
  uploaded: o.uploaded instanceof Date ? o.uploaded.getTime() : o.uploaded, httpMetadata: o.httpMetadata ?? {}, customMetadata: o.customMetadata ?? {},
  range: o.range, storageClass: o.storageClass, checksums: o.checksums?.toJSON?.() ?? {}, ssecKeyMd5: o.ssecKeyMd5 });
const answer = (result, body = null) => new Response(body, { headers: { "x-result": encodeURIComponent(JSON.stringify(result ?? null)) } });
export default {
  async fetch(request, env) {
    const [, name, method] = new URL(request.url).pathname.split("/");
    const args = JSON.parse(decodeURIComponent(request.headers.get("x-args") ?? "%5B%5D"));
    const kind = request.headers.get("x-kind");
    const b = env[decodeURIComponent(name)];
    try {
      if (kind === "kv") {
        switch (method) {
          case "get": {
            const { value, metadata } = await b.getWithMetadata(args[0], { type: "arrayBuffer" });
            return value === null ? answer({ found: false }) : answer({ found: true, metadata }, value);
          }
          case "put": return answer(await b.put(args[0], await request.arrayBuffer(), args[1] ?? {}));
          case "delete": return answer(await b.delete(args[0]));
          case "list": return answer(await b.list(args[0] ?? {}));
        }
      } else if (kind === "storage") {
        const options = args[1] ?? {};
        if (options.onlyIf && options.onlyIf.uploadedBefore !== undefined) options.onlyIf.uploadedBefore = new Date(options.onlyIf.uploadedBefore);
        if (options.onlyIf && options.onlyIf.uploadedAfter !== undefined) options.onlyIf.uploadedAfter = new Date(options.onlyIf.uploadedAfter);
        switch (method) {
          case "head": return answer(meta(await b.head(args[0])));
          case "get": {
            const o = await b.get(args[0], options);
            if (o === null) return answer(null);
            if (typeof o.arrayBuffer !== "function") return answer({ ...meta(o), bodyIncluded: false });
            return answer({ ...meta(o), bodyIncluded: true }, await o.arrayBuffer());
          }
          case "put": return answer(meta(await b.put(args[0], args[2] ? null : await request.arrayBuffer(), options)));
          case "delete": return answer(await b.delete(args[0]));
          case "list": {
            const r = await b.list(args[0] ?? {});
            return answer({ ...r, objects: r.objects.map(meta) });
          }
          case "createMultipartUpload": {
            const upload = await b.createMultipartUpload(args[0], options);
            return answer({ key: upload.key, uploadId: upload.uploadId });
          }
          case "uploadPart": return answer(await b.resumeMultipartUpload(args[0], args[1]).uploadPart(args[2], await request.arrayBuffer()));
          case "completeMultipartUpload": return answer(meta(await b.resumeMultipartUpload(args[0], args[1]).complete(args[2])));
          case "abortMultipartUpload": return answer(await b.resumeMultipartUpload(args[0], args[1]).abort());
        }
      }
      return answer({ error: { name: "TypeError", message: "unknown operation " + kind + "." + method } });
    } catch (error) {
      return answer({ error: { name: error.name, message: error.message } });
    }
  },
};`;

/** A rejected call's error, rebuilt in Node. */
function rebuildError(info) {
  const Class = { TypeError, RangeError, SyntaxError }[info.name] ?? Error;
  const error = new Class(info.message);
  if (error.name !== info.name) Object.defineProperty(error, "name", { value: info.name, configurable: true, writable: true });
  return error;
}

async function toBytes(value) {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (ArrayBuffer.isView(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ReadableStream || value instanceof Blob) return Buffer.from(await new Response(value).arrayBuffer());
  throw new TypeError("the value must be a string, ArrayBuffer, ArrayBufferView, Blob or ReadableStream");
}

/** Calls `kind.method` on binding `name` in the internal worker; resolves to { result, body }. */
function caller(getWorker, dispatch) {
  return async (kind, name, method, args, body = null) => {
    const response = await dispatch(await getWorker(), {
      url: `http://workerbox.proxy/${encodeURIComponent(name)}/${method}`,
      method: "POST",
      headers: { "x-kind": kind, "x-args": encodeURIComponent(JSON.stringify(args)) },
      body: body ?? undefined,
    });
    const result = JSON.parse(decodeURIComponent(response.headers.get("x-result") ?? "null"));
    if (result && result.error) throw rebuildError(result.error);
    return { result, response };
  };
}

async function decode(bytes, type) {
  switch (type ?? "text") {
    case "text":
      return Buffer.from(bytes).toString("utf8");
    case "json":
      return JSON.parse(Buffer.from(bytes).toString("utf8"));
    case "arrayBuffer":
      return bytes;
    case "stream":
      return new Response(bytes).body;
    default:
      throw new TypeError(`KV get: unknown type ${JSON.stringify(type)} (text, json, arrayBuffer or stream)`);
  }
}

/** A KV namespace as Workers' KVNamespace API. */
function kvNamespace(call, name) {
  const typeOf = (options) => (typeof options === "string" ? options : options?.type);
  const getOne = async (key, options) => {
    const { result, response } = await call("kv", name, "get", [key]);
    if (!result.found) return { value: null, metadata: null, cacheStatus: null };
    return { value: await decode(await response.arrayBuffer(), typeOf(options)), metadata: result.metadata ?? null, cacheStatus: null };
  };
  const many = async (keys, options, withMetadata) => {
    const map = new Map();
    for (const key of keys) {
      const found = await getOne(key, options);
      map.set(key, withMetadata ? (found.value === null ? null : { value: found.value, metadata: found.metadata }) : found.value);
    }
    return map;
  };
  return {
    async get(key, options) {
      if (Array.isArray(key)) return many(key, options, false);
      return (await getOne(key, options)).value;
    },
    async getWithMetadata(key, options) {
      if (Array.isArray(key)) return many(key, options, true);
      return getOne(key, options);
    },
    async put(key, value, options = {}) {
      await call("kv", name, "put", [key, options], await toBytes(value));
    },
    async delete(key) {
      await call("kv", name, "delete", [key]);
    },
    async list(options = {}) {
      return (await call("kv", name, "list", [options])).result;
    },
  };
}

/** An object's checksums as workerd's Checksums: ArrayBuffers, toJSON() as hex. */
class Checksums {
  #hex;
  constructor(hex) {
    this.#hex = hex;
    for (const name of ["md5", "sha1", "sha256", "sha384", "sha512"]) {
      const bytes = hex[name] === undefined ? undefined : Buffer.from(hex[name], "hex");
      this[name] = bytes === undefined ? undefined : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    }
  }
  toJSON() {
    return { ...this.#hex };
  }
}

class R2Object {
  constructor(meta) {
    Object.assign(this, { ...meta, uploaded: new Date(meta.uploaded), checksums: new Checksums(meta.checksums ?? {}) });
    delete this.bodyIncluded;
  }
  writeHttpMetadata(headers) {
    const names = { contentType: "content-type", contentLanguage: "content-language", contentDisposition: "content-disposition", contentEncoding: "content-encoding", cacheControl: "cache-control", cacheExpiry: "expires" };
    for (const [key, header] of Object.entries(names)) {
      const value = this.httpMetadata?.[key];
      if (value !== undefined) headers.set(header, key === "cacheExpiry" ? new Date(value).toUTCString() : value);
    }
  }
}

class R2ObjectBody extends R2Object {
  #response;
  constructor(meta, response) {
    super(meta);
    this.#response = response;
  }
  get body() {
    return this.#response.body;
  }
  get bodyUsed() {
    return this.#response.bodyUsed;
  }
  arrayBuffer() {
    return this.#response.arrayBuffer();
  }
  bytes() {
    return this.#response.arrayBuffer().then((b) => new Uint8Array(b));
  }
  text() {
    return this.#response.text();
  }
  json() {
    return this.#response.json();
  }
  blob() {
    return this.#response.blob();
  }
}

/** Dates in R2 options travel as numbers. */
function plainOptions(options = {}) {
  const copy = { ...options };
  if (copy.onlyIf && !(copy.onlyIf instanceof Headers)) {
    copy.onlyIf = { ...copy.onlyIf };
    for (const key of ["uploadedBefore", "uploadedAfter"]) if (copy.onlyIf[key] instanceof Date) copy.onlyIf[key] = copy.onlyIf[key].getTime();
  } else if (copy.onlyIf instanceof Headers) {
    throw new TypeError("R2 onlyIf as Headers is not supported by the platform proxy; pass { etagMatches, … }");
  }
  if (copy.httpMetadata instanceof Headers) throw new TypeError("R2 httpMetadata as Headers is not supported by the platform proxy; pass an object");
  return copy;
}

/** An R2 bucket as Workers' R2Bucket API. */
function r2Bucket(call, name) {
  return {
    async head(key) {
      const { result } = await call("storage", name, "head", [key]);
      return result === null ? null : new R2Object(result);
    },
    async get(key, options) {
      const { result, response } = await call("storage", name, "get", [key, plainOptions(options)]);
      if (result === null) return null;
      return result.bodyIncluded ? new R2ObjectBody(result, response) : new R2Object(result);
    },
    async put(key, value, options) {
      const bytes = await toBytes(value);
      const { result } = await call("storage", name, "put", [key, plainOptions(options), bytes === null], bytes);
      return result === null ? null : new R2Object(result);
    },
    async delete(keys) {
      await call("storage", name, "delete", [keys]);
    },
    async list(options) {
      const { result } = await call("storage", name, "list", [options ?? {}]);
      return { ...result, objects: result.objects.map((o) => new R2Object(o)) };
    },
    async createMultipartUpload(key, options) {
      const { result } = await call("storage", name, "createMultipartUpload", [key, plainOptions(options)]);
      return new R2MultipartUpload(call, name, result.key, result.uploadId);
    },
    resumeMultipartUpload(key, uploadId) {
      for (const [index, value] of [key, uploadId].entries()) {
        if (value === undefined) throw new TypeError(`Failed to execute 'resumeMultipartUpload' on 'R2Bucket': parameter ${index + 1} is not of type 'string'.`);
      }
      return new R2MultipartUpload(call, name, String(key), String(uploadId));
    },
  };
}

/** An upload in progress, as Workers' R2MultipartUpload (each call goes through the worker's). */
class R2MultipartUpload {
  #call;
  #name;
  constructor(call, name, key, uploadId) {
    this.#call = call;
    this.#name = name;
    Object.defineProperty(this, "key", { value: key, enumerable: true });
    Object.defineProperty(this, "uploadId", { value: uploadId, enumerable: true });
  }
  async uploadPart(partNumber, value) {
    const bytes = (await toBytes(value)) ?? Buffer.alloc(0);
    return (await this.#call("storage", this.#name, "uploadPart", [this.key, this.uploadId, partNumber], bytes)).result;
  }
  async abort() {
    await this.#call("storage", this.#name, "abortMultipartUpload", [this.key, this.uploadId]);
  }
  async complete(uploadedParts) {
    const parts = uploadedParts === undefined || uploadedParts === null ? uploadedParts : [...uploadedParts];
    return new R2Object((await this.#call("storage", this.#name, "completeMultipartUpload", [this.key, this.uploadId, parts])).result);
  }
}


/**
 * A Node-side client of `binding` (a KV or storage binding): `{ client, dispose() }`. The
 * internal worker is made on the first call; dispose() ends it.
 */
function storeClient(binding, kind, name = kind === "kv" ? "KV" : "BUCKET") {
  let worker = null;
  let starting = null;
  let disposed = false;
  const getWorker = async () => {
    if (disposed) throw new Error(`this ${kind === "kv" ? "KV namespace" : "bucket"} client was disposed`);
    starting ??= access.createWorker({ script: PROXY_SCRIPT, filename: "workerbox-store-client.js", bindings: { [name]: binding }, onLog: () => {}, pool: false, limits: { wallMs: 0, cpuMs: 0 } }).then((made) => (worker = made));
    return starting;
  };
  const call = caller(getWorker, (...args) => access.dispatch(...args));
  return {
    client: kind === "kv" ? kvNamespace(call, name) : r2Bucket(call, name),
    async dispose() {
      disposed = true;
      const made = worker ?? (starting ? await starting.catch(() => null) : null);
      if (made) await made.dispose();
    },
  };
}

module.exports = { setWorkerAccess, storeClient };
