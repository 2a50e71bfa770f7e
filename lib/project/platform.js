"use strict";
// getPlatformProxy(): a project's bindings as Node objects, for framework dev servers that run in
// Node (the shape of wrangler's getPlatformProxy: `{ env, cf, ctx, caches, dispose }`).
// KV namespaces and R2 buckets are workerbox's embedded native stores, which have no Node-side
// API: they are answered only inside a worker. So this file starts one small internal worker
// that holds the same store bindings and runs each call (a POST carrying the arguments) there;
// the stores (and their files under .workerbox/state) are the very ones the dev server's worker
// uses. Service bindings call their handler or worker directly; vars and secrets are plain values.

const { kBinding } = require("../bindings.js");
const { loadProject } = require("./load.js");

/** The internal worker: runs one KV or R2 call on env[name] per request. */
const PROXY_SCRIPT = `
const meta = (o) => o === null ? null : ({ key: o.key, version: o.version, size: o.size, etag: o.etag, httpEtag: o.httpEtag,
  uploaded: o.uploaded instanceof Date ? o.uploaded.getTime() : o.uploaded, httpMetadata: o.httpMetadata ?? {}, customMetadata: o.customMetadata ?? {},
  range: o.range, storageClass: o.storageClass });
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
    const response = await dispatch(getWorker(), {
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

class R2Object {
  constructor(meta) {
    Object.assign(this, { ...meta, uploaded: new Date(meta.uploaded) });
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
    createMultipartUpload() {
      return Promise.reject(new Error("R2 multipart uploads are not supported by workerbox"));
    },
    resumeMultipartUpload() {
      throw new Error("R2 multipart uploads are not supported by workerbox");
    },
  };
}

/** A service binding: `fetch()` goes to its handler, worker or object. */
function serviceStub(handler, dispatch) {
  return {
    async fetch(input, init) {
      const request = new Request(input, init);
      if (typeof handler === "function") return handler(request);
      if (typeof handler.dispatch === "function") return dispatch(handler, request);
      return handler.fetch(request);
    },
  };
}

/** A no-op Cache API, as wrangler's getPlatformProxy provides. */
function noopCaches() {
  const cache = { match: async () => undefined, put: async () => undefined, delete: async () => false };
  return { default: cache, open: async () => cache };
}

/** Request.cf values a local request could plausibly carry. */
const CF = Object.freeze({ colo: "LOCAL", country: "XX", city: "Local", continent: "XX", timezone: "UTC", asn: 0, asOrganization: "workerbox", httpProtocol: "HTTP/1.1", tlsVersion: "", clientTcpRtt: 0, requestPriority: "", edgeRequestKeepAliveStatus: 1 });

// Production's producer limits (as the worker-side binding enforces them).
const QUEUE_MESSAGE_BYTES = 128_000;
const QUEUE_BATCH_MESSAGES = 100;
const QUEUE_BATCH_BYTES = 256_000;

/** A queue producer in Node: send()/sendBatch() into the same queue the workers use. */
function queueProducer(queueBinding) {
  const { encodeBody } = require("../queues/messages.js");
  const encode = (body, contentType = "json", where) => {
    if (!["json", "text", "bytes", "v8"].includes(contentType)) throw new TypeError(`${where}: unsupported content type ${JSON.stringify(contentType)} (json, text, bytes or v8)`);
    const bytes = encodeBody(contentType, body, where);
    if (bytes.length > QUEUE_MESSAGE_BYTES) throw new RangeError(`${where}: the message is ${bytes.length} bytes; a queue message may be at most ${QUEUE_MESSAGE_BYTES}`);
    return bytes;
  };
  const send = async (messages, delaySeconds) => {
    const bytes = Buffer.concat(messages.map((m) => m.bytes));
    if (messages.length > QUEUE_BATCH_MESSAGES || bytes.length > QUEUE_BATCH_BYTES) {
      throw new RangeError(`sendBatch(): ${messages.length} messages of ${bytes.length} bytes; a batch may hold at most ${QUEUE_BATCH_MESSAGES} messages and ${QUEUE_BATCH_BYTES} bytes`);
    }
    const args = { messages: messages.map((m) => ({ contentType: m.contentType, size: m.bytes.length, delaySeconds: m.delaySeconds })), delaySeconds };
    await queueBinding._hostCall("send", args, bytes);
  };
  return {
    async send(body, options = {}) {
      const contentType = options.contentType ?? "json";
      await send([{ contentType, bytes: encode(body, contentType, "send()"), delaySeconds: options.delaySeconds }], undefined);
    },
    async sendBatch(messages, options = {}) {
      if (!Array.isArray(messages) || messages.length === 0) throw new TypeError("sendBatch(): messages must be a non-empty array of { body, contentType?, delaySeconds? }");
      const encoded = messages.map((m, i) => {
        const contentType = m?.contentType ?? "json";
        return { contentType, bytes: encode(m?.body, contentType, `sendBatch(): message ${i}`), delaySeconds: m?.delaySeconds };
      });
      await send(encoded, options.delaySeconds);
    },
  };
}

/**
 * A Durable Object namespace for Node over a namespace binding's host API: ids with toString(),
 * equals() and name, and stubs with fetch() and RPC methods (structured clones both ways).
 */
function durableNamespace(namespace) {
  const HEX = /^[0-9a-f]{64}$/;
  const idOf = (hex, name) => ({ name, toString: () => hex, equals: (other) => String(other) === hex });
  return {
    idFromName: (name) => idOf(namespace.idFromName(name), String(name)),
    newUniqueId: () => idOf(require("node:crypto").randomBytes(32).toString("hex"), undefined),
    idFromString(hex) {
      if (!HEX.test(String(hex))) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
      return idOf(String(hex), undefined);
    },
    get: (id) => namespace.get(String(id), id?.name ?? null),
    getByName: (name) => namespace.get(namespace.idFromName(name), String(name)),
  };
}

/**
 * Options (wrangler's names): `configPath` (a config file or project folder; default "."),
 * `environment`, `persist` (true: `<root>/.workerbox/state`, false: memory, `{ path }`);
 * workerbox's own: `project` (a project from loadProject() or a dev server's `.project`, to share
 * its very stores in this process), `services`.
 * Resolves to `{ env, cf, ctx, caches, dispose, unsupported, warnings }`.
 */
async function getPlatformProxy(options = {}) {
  const { createWorker, dispatch } = require("../api.js");
  let project = options.project;
  if (project === undefined) {
    const persist = options.persist ?? true;
    const persistTo = persist === false ? false : typeof persist === "object" && persist !== null ? persist.path : undefined;
    project = await loadProject(options.configPath ?? ".", { env: options.environment, persistTo, services: options.services });
  }
  const env = {};
  const storeBindings = {};
  const kinds = {};
  const unsupported = [...project.unsupported];
  const durables = {};
  for (const [name, value] of Object.entries(project.bindings)) {
    const kind = value !== null && typeof value === "object" ? value[kBinding] : undefined;
    if (kind === undefined) env[name] = value;
    else if (kind === "kv" || kind === "storage") {
      if (value.store === null) {
        // Handler-backed (custom) stores need no worker: but loadProject makes only embedded ones.
        unsupported.push({ key: kind, binding: name, reason: "custom-handler stores are not proxied" });
        continue;
      }
      storeBindings[name] = value;
      kinds[name] = kind;
    } else if (kind === "service") env[name] = serviceStub(value.handler, dispatch);
    else if (kind === "d1" && typeof value.database === "function") env[name] = value.database();
    else if (kind === "queue" && typeof value._hostCall === "function") env[name] = queueProducer(value);
    else if (kind.startsWith("durable_object:") && project.options) durables[name] = value;
    else unsupported.push({ key: kind, binding: name, reason: `the platform proxy has no Node-side ${kind} binding yet` });
  }
  let worker = null;
  if (Object.keys(storeBindings).length > 0) {
    worker = await createWorker({ script: PROXY_SCRIPT, filename: "workerbox-platform-proxy.js", bindings: storeBindings, onLog: () => {}, pool: false, limits: { wallMs: 0, cpuMs: 0 } });
    const call = caller(() => worker, dispatch);
    for (const [name, kind] of Object.entries(kinds)) env[name] = kind === "kv" ? kvNamespace(call, name) : r2Bucket(call, name);
  }
  // Durable Objects live in a worker of the project's own script, started for the proxy; each
  // namespace is reached through the host API on a binding of its own (lib/durable.js).
  let home = null;
  if (Object.keys(durables).length > 0) {
    const { durableObject } = require("../api.js");
    // A worker of the caller's (the node:test helper's) runs them when given.
    home = options.worker ?? (await createWorker({ ...project.options, pool: false }));
    for (const [name, value] of Object.entries(durables)) {
      env[name] = durableNamespace(durableObject(value.className, { worker: home, dir: value.dir, sql: value.sql, evictAfterMs: value.evictAfterMs }));
    }
  }
  let disposed = false;
  return {
    env,
    cf: CF,
    ctx: { waitUntil(promise) { Promise.resolve(promise).catch(() => {}); }, passThroughOnException() {}, props: {} },
    caches: noopCaches(),
    unsupported,
    warnings: project.warnings,
    async dispose() {
      if (disposed) return;
      disposed = true;
      if (worker) await worker.dispose();
      if (home && home !== options.worker) await home.dispose();
    },
  };
}

module.exports = { getPlatformProxy };
