"use strict";
// Bindings answered in the host: `kv()`, `storage()` and `service()` build binding definitions for
// createWorker's `bindings` (`d1()` is in lib/d1.js; a KV or storage binding's `namespace()` /
// `bucket()`, its Node-side client, lib/store-client.js), and `createDispatcher()` answers a worker's
// binding calls by calling their handlers. The embedded stores (`kv()`, `kv({ dir })`,
// `storage()`, `storage({ dir })`, `d1()`, and a worker's default Cache API store) are not
// answered here: each is a native SQLite store (src/runtime/store) that the worker's scheduler
// thread answers itself.

const path = require("node:path");
const { NativeStore } = require("../native.js");
const rpc = require("./rpc.js");
const { storeClient } = require("./store-client.js");
const { callMultipart } = require("./r2-multipart.js");

const kBinding = Symbol("workerbox.binding");

/**
 * A binding definition: its kind, and either the handler that answers its calls in Node or the
 * embedded store (a NativeStore) that answers them in Rust.
 */
class Binding {
  constructor(kind, handler, store = null) {
    this[kBinding] = kind;
    this.handler = handler;
    this.store = store;
  }
}

/** A KV binding: `namespace()` is the same namespace as a KVNamespace in Node. */
class KVBinding extends Binding {
  #client = null;
  /** A KVNamespace in Node on this binding's namespace: the one the workers given it see. */
  namespace() {
    return (this.#client ??= storeClient(this, "kv")).client;
  }
}

/** A storage binding: `bucket()` is the same bucket as an R2Bucket in Node. */
class StorageBinding extends Binding {
  #client = null;
  /** An R2Bucket in Node on this binding's bucket: the one the workers given it see. */
  bucket() {
    return (this.#client ??= storeClient(this, "storage")).client;
  }
}

const BINDING_CLASSES = { kv: KVBinding, storage: StorageBinding };

const toBuffer = (value) =>
  typeof value === "string" ? Buffer.from(value, "utf8") : ArrayBuffer.isView(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value instanceof ArrayBuffer ? Buffer.from(value) : null;

/** An embedded store of `kind`: in memory, or in its SQLite file under `dir`. */
function embedded(kind, dir) {
  const Class = BINDING_CLASSES[kind] ?? Binding;
  return new Class(kind, null, new NativeStore(kind, dir === undefined ? undefined : path.resolve(dir)));
}

const CACHE_METHODS = ["match", "put", "delete"];

/**
 * The Cache API's store for a worker: a binding for your handlers, or null for the worker's own
 * in-memory store (made by the native side, no object here).
 */
function cacheStore(handlers) {
  if (handlers === undefined) return null;
  // A cache service spoken to over HTTP (workerd's cacheApiOutbound).
  if (handlers !== null && typeof handlers === "object" && handlers.service !== undefined) return serviceBacked("cache", handlers.service, "createWorker: options.cache");
  if (handlers === null || typeof handlers !== "object" || CACHE_METHODS.some((m) => typeof handlers[m] !== "function")) {
    throw new TypeError("createWorker: options.cache must be an object with match(cache, url), put(cache, url, entry) and delete(cache, url) functions");
  }
  return new Binding("cache", handlers);
}

/**
 * The Cache API over HTTP to a cache service, as workerd speaks to its cacheApiOutbound:
 * match() is a GET of the URL with `Cache-Control: only-if-cached` (a hit is an answer whose
 * CF-Cache-Status is HIT; anything else a miss), put() a PUT whose body is the response
 * serialized as HTTP/1.1 (status line, headers, body), delete() a PURGE (200: deleted).
 */
async function callCacheService(backing, method, args, bytes, dispatch, caller) {
  const send = (httpMethod, headers, body = null) => callService(backing, "fetch", { method: httpMethod, url: args.url, headers }, body, dispatch, caller);
  switch (method) {
    case "match": {
      const answer = await send("GET", ["cache-control", "only-if-cached"]);
      const head = JSON.parse(answer.json);
      const status = head.headers.findIndex((v, i) => i % 2 === 0 && v.toLowerCase() === "cf-cache-status");
      if (status === -1 || head.headers[status + 1] !== "HIT") {
        // A miss, with what the worker's cache_match span tells of the answer.
        const miss = { miss: true, status: head.status, size: answer.bytes?.byteLength ?? 0 };
        if (status !== -1) miss.cacheStatus = head.headers[status + 1];
        return { json: JSON.stringify(miss) };
      }
      return { json: JSON.stringify({ status: head.status, statusText: head.statusText, headers: head.headers }), bytes: answer.bytes ?? Buffer.alloc(0) };
    }
    case "put": {
      let text = `HTTP/1.1 ${args.status} ${args.statusText ?? ""}\r\n`;
      for (let i = 0; i + 1 < args.headers.length; i += 2) text += `${args.headers[i]}: ${args.headers[i + 1]}\r\n`;
      if (!args.headers.some((v, i) => i % 2 === 0 && v.toLowerCase() === "content-length")) text += `Content-Length: ${bytes?.byteLength ?? 0}\r\n`;
      const payload = Buffer.concat([Buffer.from(text + "\r\n", "latin1"), bytes ?? Buffer.alloc(0)]);
      const answer = await send("PUT", ["content-length", String(payload.byteLength)], payload);
      return { json: JSON.stringify({ status: JSON.parse(answer.json).status }) };
    }
    case "delete": {
      const answer = await send("PURGE", ["x-real-ip", "127.0.0.1"]);
      return { json: JSON.stringify({ status: JSON.parse(answer.json).status }) };
    }
  }
  throw new TypeError(`unknown cache operation "${method}"`);
}

async function callCache(handler, method, args, bytes) {
  switch (method) {
    case "match": {
      const entry = await handler.match(args.cache, args.url);
      if (entry === null || entry === undefined || (entry.expires !== undefined && entry.expires <= Date.now())) return { json: "null" };
      const { body, ...head } = entry;
      return { json: JSON.stringify(head), bytes: toBuffer(body ?? "") };
    }
    case "put": {
      // A response not to be kept: only a cache service is sent it.
      if (args.expires === null) return { json: "null" };
      const { cache, url, ...entry } = args;
      await handler.put(cache, url, { ...entry, body: bytes ?? Buffer.alloc(0) });
      return { json: "null" };
    }
    case "delete":
      return { json: JSON.stringify(Boolean(await handler.delete(args.cache, args.url))) };
  }
  throw new TypeError(`unknown cache operation "${method}"`);
}

const KV_METHODS = ["get", "put", "delete", "list"];
const STORAGE_METHODS = ["get", "put", "delete", "list"];

/**
 * An object storage bucket binding (R2's API). `storage()` keeps objects in memory,
 * `storage({ dir })` in `dir/storage.sqlite3`, `storage({ get, put, delete, list })` calls your
 * handlers. One binding given to several workers is one bucket. `storage({ service, bucket })` is
 * a bucket whose backing is a service spoken to in R2's binding protocol (workerd's `r2Bucket`
 * naming a service; `bucket` its name, for spans).
 */
function storage(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("storage(): options must be an object: storage(), storage({ dir }) or storage({ get, put, delete, list })");
  if (options.service !== undefined) {
    if (options.bucket !== undefined && (typeof options.bucket !== "string" || options.bucket === "")) throw new TypeError("storage(): options.bucket must be a non-empty string (the bucket's name)");
    return serviceBacked(options.bucket === undefined ? "r2_http" : `r2_http:${options.bucket}`, options.service, "storage()");
  }
  if (options.bucket !== undefined) throw new TypeError("storage(): options.bucket names the bucket of a service-backed storage({ service, bucket })");
  if (STORAGE_METHODS.some((m) => m in options)) {
    for (const m of STORAGE_METHODS) {
      if (typeof options[m] !== "function") throw new TypeError(`storage(): handler "${m}" must be a function (a custom store needs get, put, delete and list)`);
    }
    return new StorageBinding("storage", options);
  }
  if (options.dir !== undefined) {
    if (typeof options.dir !== "string" || options.dir === "") throw new TypeError("storage(): options.dir must be a folder path");
    return embedded("storage", options.dir);
  }
  return embedded("storage");
}

/**
 * A binding whose backing is a service spoken to in workerd's HTTP protocol for `kind` (the
 * worker's binding kind, "kv_http", "queue_http", …): the worker's requests (and RPC calls) go to
 * `target` — a workerbox worker, a `service()` binding (for a named entrypoint) or a fetch
 * handler — as a service binding's do. workerd backs KV, R2, queue and Analytics Engine bindings so.
 */
function serviceBacked(kind, target, where) {
  let backing;
  if (target instanceof Binding && target[kBinding] === "service") backing = target;
  else if (rpc.isWorker(target) || typeof target === "function" || (target !== null && typeof target === "object" && typeof target.fetch === "function")) backing = service(target);
  else throw new TypeError(`${where}: options.service must be a workerbox worker, a service() binding or a fetch handler (request) => Response`);
  const binding = new Binding(kind, null);
  binding.service = backing;
  return binding;
}

/**
 * A KV namespace binding. `kv()` keeps data in memory, `kv({ dir })` in `dir/kv.sqlite3`, and
 * `kv({ get, put, delete, list })` calls your own handlers (sync or async). One binding given to
 * several workers is one namespace. `kv({ service })` is a namespace whose backing is a service
 * spoken to in KV's HTTP protocol (workerd's `kvNamespace` naming a service).
 */
function kv(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("kv(): options must be an object: kv(), kv({ dir }) or kv({ get, put, delete, list })");
  if (options.service !== undefined) return serviceBacked("kv_http", options.service, "kv()");
  if (KV_METHODS.some((m) => m in options)) {
    for (const m of KV_METHODS) {
      if (typeof options[m] !== "function") throw new TypeError(`kv(): handler "${m}" must be a function (a custom KV needs get, put, delete and list)`);
    }
    return new KVBinding("kv", options);
  }
  if (options.dir !== undefined) {
    if (typeof options.dir !== "string" || options.dir === "") throw new TypeError("kv(): options.dir must be a folder path");
    return embedded("kv", options.dir);
  }
  return embedded("kv");
}

/**
 * A service binding: `env.NAME.fetch()` calls `handler(request)`, or a workerbox worker (its
 * default export, or `options.entrypoint`, a named WorkerEntrypoint class), whose RPC methods
 * `env.NAME.method(…)` calls too. An object with methods answers RPC calls from Node.
 * `options.props` (a JSON value, a worker handler only) is the callee's `ctx.props` on every
 * fetch and call through the binding, as workerd's service designator `props`.
 */
function service(handler, options = {}) {
  const ok = typeof handler === "function" || (handler !== null && typeof handler === "object");
  if (!ok) throw new TypeError("service(): pass a function (request) => Response, an object with fetch(request) or RPC methods, or a workerbox worker");
  if (options === null || typeof options !== "object") throw new TypeError("service(): options must be an object such as { entrypoint: \"Name\" }");
  const { entrypoint } = options;
  if (entrypoint !== undefined && (typeof entrypoint !== "string" || entrypoint === "")) {
    throw new TypeError("service(): options.entrypoint must be the name of an exported WorkerEntrypoint class");
  }
  if (entrypoint !== undefined && !rpc.isWorker(handler)) throw new TypeError("service(): options.entrypoint needs a workerbox worker as the handler");
  let props;
  if (options.props !== undefined) {
    try {
      props = JSON.parse(JSON.stringify(options.props));
    } catch (error) {
      throw new TypeError(`service(): options.props must be a JSON value (it becomes the callee's ctx.props): ${error.message}`);
    }
  }
  const binding = new Binding("service", handler);
  binding.entrypoint = entrypoint;
  if (props !== undefined) binding.props = props;
  return binding;
}

/** The handler of a service binding of a worker to its own entrypoints (selfService()). */
const SELF = Object.freeze({ self: true });

/**
 * A service binding of the worker it is given to, to its own entrypoint `entrypoint` (default:
 * its default export): what wrangler's `services` entry naming the worker itself gives.
 */
function selfService(entrypoint) {
  const binding = new Binding("service", SELF);
  binding.entrypoint = entrypoint;
  return binding;
}

async function callKV(handler, method, args, bytes) {
  switch (method) {
    case "get": {
      let found = await handler.get(args.key);
      if (found === null || found === undefined) return { json: "null" };
      if (typeof found === "string" || ArrayBuffer.isView(found) || found instanceof ArrayBuffer) found = { value: found };
      const value = toBuffer(found.value);
      if (value === null) throw new TypeError("the KV get handler must return null or { value: string | Uint8Array | ArrayBuffer, metadata?, expiration? }");
      return { json: JSON.stringify({ metadata: found.metadata ?? null, expiration: found.expiration ?? null }), bytes: value };
    }
    case "put":
      await handler.put(args.key, bytes ?? Buffer.alloc(0), { expiration: args.expiration, metadata: args.metadata });
      return { json: "null" };
    case "delete":
      await handler.delete(args.key);
      return { json: "null" };
    case "list": {
      const result = await handler.list({ prefix: args.prefix, limit: args.limit, cursor: args.cursor });
      if (!result || !Array.isArray(result.keys)) throw new TypeError("the KV list handler must return { keys: [{ name }], list_complete, cursor? }");
      return { json: JSON.stringify({ keys: result.keys, list_complete: Boolean(result.list_complete), cursor: result.cursor }) };
    }
  }
  throw new TypeError(`unknown KV operation "${method}"`);
}

/** The metadata the worker sees for a stored object. */
function objectMeta(key, object) {
  const value = toBuffer(object.value) ?? Buffer.alloc(0);
  return {
    key,
    version: object.version ?? "",
    size: object.size ?? value.byteLength,
    etag: object.etag ?? require("node:crypto").createHash("md5").update(value).digest("hex"),
    uploaded: new Date(object.uploaded ?? 0).getTime(),
    httpMetadata: object.httpMetadata ?? {},
    customMetadata: object.customMetadata ?? {},
    // The checksums besides MD5 ({ sha1…sha512: hex }), the storage class, the SSE-C key's MD5.
    extra: { checksums: object.checksums ?? {}, storageClass: object.storageClass, ssecKeyMd5: object.ssecKeyMd5 },
  };
}

/**
 * Whether R2's onlyIf conditions hold for an object (`meta` null: it does not exist), as R2 and
 * Miniflare check them (src/runtime/store/objects.rs's Conditions::hold does the same):
 * `etagMatches` lists strong etags (and `*`); times in ms, truncated to seconds with
 * `secondsGranularity`; a passing If-None-Match passes If-Modified-Since, a passing If-Match
 * If-Unmodified-Since.
 */
function conditionsHold(meta, onlyIf) {
  if (!onlyIf) return true;
  if (!meta) return onlyIf.etagMatches === undefined && onlyIf.uploadedAfter === undefined;
  const includes = (list) => list.some((etag) => etag === "*" || etag === meta.etag);
  const truncate = (ms) => (onlyIf.secondsGranularity ? Math.floor(ms / 1000) * 1000 : ms);
  const uploaded = truncate(meta.uploaded);
  const ifMatch = onlyIf.etagMatches === undefined || includes(onlyIf.etagMatches);
  const ifNoneMatch = onlyIf.etagDoesNotMatch === undefined || !includes(onlyIf.etagDoesNotMatch);
  const ifModifiedSince = onlyIf.uploadedAfter === undefined || truncate(onlyIf.uploadedAfter ?? 0) < uploaded || (onlyIf.etagDoesNotMatch !== undefined && ifNoneMatch);
  const ifUnmodifiedSince = onlyIf.uploadedBefore === undefined || uploaded < truncate(onlyIf.uploadedBefore ?? 0) || (onlyIf.etagMatches !== undefined && ifMatch);
  return ifMatch && ifNoneMatch && ifModifiedSince && ifUnmodifiedSince;
}

async function callStorage(handler, method, args, bytes) {
  // Multipart uploads go through the bucket's `multipart` hooks (lib/r2-multipart.js).
  const multipart = await callMultipart(handler, method, args, bytes, objectMeta);
  if (multipart !== undefined) return multipart;
  switch (method) {
    case "head":
    case "get": {
      const object = await handler.get(args.key);
      if (object === null || object === undefined) return { json: "null" };
      const meta = objectMeta(args.key, object);
      if (method === "head") return { json: JSON.stringify(meta) };
      if (!conditionsHold(meta, args.onlyIf)) return { json: JSON.stringify({ ...meta, bodyIncluded: false }) };
      const value = toBuffer(object.value) ?? Buffer.alloc(0);
      let offset = 0;
      let length = value.byteLength;
      if (args.range) {
        if (args.range.suffix !== undefined) {
          length = Math.min(args.range.suffix, value.byteLength);
          offset = value.byteLength - length;
        } else {
          offset = Math.min(args.range.offset ?? 0, value.byteLength);
          length = Math.min(args.range.length ?? value.byteLength - offset, value.byteLength - offset);
        }
      }
      const range = args.range ? { offset, length } : undefined;
      return { json: JSON.stringify({ ...meta, range, bodyIncluded: true }), bytes: value.subarray(offset, offset + length) };
    }
    case "put": {
      if (args.onlyIf) {
        const existing = await handler.get(args.key);
        const meta = existing === null || existing === undefined ? null : objectMeta(args.key, existing);
        if (!conditionsHold(meta, args.onlyIf)) return { json: "null" };
      }
      const value = bytes ?? Buffer.alloc(0);
      const extra = args.extra ?? {};
      const options = { httpMetadata: args.httpMetadata, customMetadata: args.customMetadata, checksums: extra.checksums ?? {}, storageClass: extra.storageClass ?? "Standard" };
      if (extra.ssecKeyMd5 !== undefined) options.ssecKeyMd5 = extra.ssecKeyMd5;
      const stored = await handler.put(args.key, value, options);
      const object = stored ?? { value, ...options, uploaded: Date.now() };
      return { json: JSON.stringify(objectMeta(args.key, object)) };
    }
    case "delete":
      for (const key of args.keys) await handler.delete(key);
      return { json: "null" };
    case "list": {
      const all = [...(await handler.list())].map((o) => objectMeta(o.key, o)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const after = args.cursor ? Buffer.from(args.cursor, "base64url").toString("utf8") : args.startAfter;
      const objects = [];
      const prefixes = new Set();
      let truncated = false;
      let last;
      for (const meta of all) {
        if (!meta.key.startsWith(args.prefix) || (after !== undefined && meta.key <= after)) continue;
        if (objects.length + prefixes.size >= args.limit) {
          truncated = true;
          break;
        }
        const rest = meta.key.slice(args.prefix.length);
        const cut = args.delimiter ? rest.indexOf(args.delimiter) : -1;
        if (cut >= 0) {
          const prefix = args.prefix + rest.slice(0, cut + args.delimiter.length);
          prefixes.add(prefix);
        } else {
          objects.push(meta);
        }
        last = meta.key;
      }
      const result = { objects, truncated, delimitedPrefixes: [...prefixes] };
      if (truncated) result.cursor = Buffer.from(last, "utf8").toString("base64url");
      return { json: JSON.stringify(result) };
    }
  }
  throw new TypeError(`unknown storage operation "${method}"`);
}

async function callService(definition, method, args, bytes, dispatch, caller, bodies = undefined) {
  // A binding of the worker to itself (selfService()): the caller is the worker it names.
  const handler = definition.handler === SELF ? caller : definition.handler;
  // service(…, { props }): the callee's ctx.props, for calls and fetches alike.
  const props = definition.props !== undefined && rpc.isWorker(handler) ? { props: definition.props } : {};
  if (method === "rpc") return rpc.callService(handler, definition.entrypoint, caller, { ...args, ...props }, bytes);
  // service_binding_extra_handlers: `env.SVC.scheduled(options)` runs the bound worker's handler.
  if (method === "scheduled") {
    if (!rpc.isWorker(handler)) throw new TypeError("scheduled(): this service binding's handler is not a workerbox worker, so it has no scheduled() handler to run");
    const result = await dispatch(handler, { type: "scheduled", cron: args.cron, scheduledTime: args.scheduledTime });
    return { json: JSON.stringify({ outcome: result.outcome, noRetry: result.noRetry }) };
  }
  // service_binding_extra_handlers: `env.SVC.queue(queueName, messages)` runs the bound worker's
  // queue() handler on that batch (bodies are V8-serialized, their sizes in the message list).
  if (method === "queue") {
    if (!rpc.isWorker(handler)) throw new TypeError("queue(): this service binding's handler is not a workerbox worker, so it has no queue() handler to run");
    const bodies = [];
    let at = 0;
    for (const m of args.messages) {
      bodies.push(Buffer.from(bytes.subarray(at, at + m.size)));
      at += m.size;
    }
    const metas = { messages: args.messages.map(({ id, timestamp, attempts, contentType }) => ({ id, timestamp, attempts, contentType })) };
    const { outcome, decisions } = await runQueueBatch(handler, args.queue, metas, bodies);
    return { json: JSON.stringify({ outcome, ...decisions }) };
  }
  // The caller gave up on a fetch into a named entrypoint (lib/rpc.js cancelFetch).
  if (method === "fetchCancel") return definition.entrypoint !== undefined && rpc.isWorker(handler) ? rpc.cancelFetch(handler, args.token) : { json: "null" };
  if (method !== "fetch") throw new TypeError(`unknown service binding operation "${method}"`);
  // As for calls, the caller's props (ctx.exports.<Entrypoint>({ props }).fetch()) when the binding has none.
  const fetchProps = props.props === undefined && args.props !== undefined && rpc.isWorker(handler) ? { props: args.props } : props;
  if (definition.entrypoint !== undefined || fetchProps.props !== undefined) return rpc.fetchInto(handler, { entrypoint: definition.entrypoint ?? "default", ...fetchProps }, args, bytes, caller);
  if (typeof handler !== "function" && typeof handler.dispatch !== "function" && typeof handler.fetch !== "function") {
    throw new TypeError("This service binding's handler has no fetch(request) method.");
  }
  const headers = new Headers();
  for (let i = 0; i + 1 < args.headers.length; i += 2) headers.append(args.headers[i], args.headers[i + 1]);
  const request = new Request(args.url, { method: args.method, headers, body: bytes ?? undefined });
  let response;
  if (typeof handler === "function") response = await handler(request);
  else if (typeof handler.dispatch === "function") response = await dispatch(handler, request);
  else response = await handler.fetch(request);
  if (response?.webSocket != null && response.status === 101) {
    // A WebSocket answer: the caller's end is joined to the one the answering worker holds.
    const flat = [];
    for (const [name, value] of response.headers) flat.push(name, value);
    const webSocket = require("./websocket.js").relayHostSocket(caller, response.webSocket);
    return { json: JSON.stringify({ status: 101, statusText: response.statusText, headers: flat, webSocket }), bytes: null };
  }
  // A Response of another fetch implementation (Miniflare's, undici's own copy): its parts.
  if (!(response instanceof Response) && response !== null && typeof response === "object" && typeof response.status === "number" && typeof response.arrayBuffer === "function" && response.headers) {
    const body = response.body === null || response.status === 204 || response.status === 304 ? null : await response.arrayBuffer();
    response = new Response(body, { status: response.status, statusText: response.statusText, headers: [...response.headers] });
  }
  if (!(response instanceof Response)) throw new TypeError(`the service handler must return a Response, got ${response === null ? "null" : typeof response}`);
  // A worker's answer: its own header list (values beyond Latin-1 as they were; workerd keeps
  // a header's text from worker to worker), else Node's.
  const { rawHeaders, flatHeaders } = require("./http.js");
  const flat = rawHeaders.get(response) ?? flatHeaders(response.headers);
  // A worker's answer to a worker caller streams, as workerd delivers it: the caller reads it
  // chunk by chunk through its own `#body` reads (lib/bodies.js), as the callee writes it.
  const nullBody = [101, 204, 205, 304].includes(response.status) || args.method === "HEAD";
  if (bodies !== undefined && rpc.isWorker(handler) && response.body !== null && !nullBody) {
    const stream = bodies.addRequestBody(response.body, { holdLoop: false });
    return { json: JSON.stringify({ status: response.status, statusText: response.statusText, headers: flat, stream }), bytes: null };
  }
  const body = response.body === null ? null : Buffer.from(await response.arrayBuffer());
  return { json: JSON.stringify({ status: response.status, statusText: response.statusText, headers: flat }), bytes: body };
}

/** A queue producer's send()/sendBatch(), answered by the queue itself (lib/queues/queue.js). */
const callQueue = (queue, method, args, bytes) => queue._hostCall(method, args, bytes);

/**
 * A call through `ctx.exports.<name>` of worker `self`: a service binding to its own entrypoint
 * (`#self:<export>`), or a namespace of its own Durable Object class (`#self-do:<class>`), whose
 * storage is where a namespace binding of this worker for that class keeps it (else memory).
 */
function callSelf(name, definitions, method, args, bytes, dispatch, self) {
  if (name.startsWith("#self:")) {
    const entrypoint = name.slice("#self:".length);
    return callService({ handler: self, entrypoint }, method, args, bytes, dispatch, self);
  }
  const className = name.slice("#self-do:".length);
  const own = Object.values(definitions).find((d) => d.className === className && typeof d.answer === "function" && (d.worker === undefined || d.worker === self));
  const namespace = own ?? (selfNamespaces.get(self)?.get(className) ?? makeSelfNamespace(self, className));
  return namespace.answer(method, args, bytes, self);
}

/** Namespaces made for ctx.exports classes that no binding of the worker names. */
const selfNamespaces = new WeakMap();

function makeSelfNamespace(self, className) {
  const namespace = require("./durable.js").durableObject(className, { worker: self });
  if (!selfNamespaces.has(self)) selfNamespaces.set(self, new Map());
  selfNamespaces.get(self).set(className, namespace);
  return namespace;
}

/**
 * Returns the function the native addon calls for every binding operation. It never throws or
 * rejects: a handler's error is reported back so the worker's promise rejects with its message.
 */
function createDispatcher(definitions, dispatch, bodies, self = () => undefined) {
  // The host ids of the stubs in an answer are the worker's to use from then on (lib/rpc.js handedOut).
  return async (name, method, argsJson, bytes) => rpc.handedOut(await answerCall(name, method, argsJson, bytes), self());
  async function answerCall(name, method, argsJson, bytes) {
    try {
      if (name === "#body") return await bodies.call(method, JSON.parse(argsJson), bytes);
      if (name === "#rpc") {
        const answer = await rpc.callStub(method, JSON.parse(argsJson), bytes, self());
        return { json: answer.json, bytes: answer.bytes ?? undefined };
      }
      if (name === "#durable") return await require("./durable.js").callFromWorker(method, JSON.parse(argsJson), self());
      if (name === "#ws") return require("./websocket.js").fromWorker(self(), method, JSON.parse(argsJson), bytes);
      if (name === "#module") return await require("./modules.js").answerModuleLoad(definitions["#module"].loadModule, JSON.parse(argsJson));
      // ctx.exports: the worker's own entrypoints and Durable Object classes.
      if (name.startsWith("#self:") || name.startsWith("#self-do:")) {
        const answer = await callSelf(name, definitions, method, JSON.parse(argsJson), bytes, dispatch, self());
        return { json: answer.json, bytes: answer.bytes ?? undefined };
      }
      const definition = definitions[name];
      if (!definition) throw new Error(`env.${name} is not a binding`);
      if (definition.store !== null) throw new Error(`env.${name} is answered by its embedded store, not by the host`);
      const args = JSON.parse(argsJson);
      const kind = definition[kBinding];
      // A binding whose backing is a service (serviceBacked()): its HTTP requests and RPC calls go there.
      if (definition.service instanceof Binding) {
        const answer = await (kind === "cache" ? callCacheService : callService)(definition.service, method, args, bytes, dispatch, self());
        return { json: answer.json, bytes: answer.bytes ?? undefined };
      }
      const call = { kv: callKV, storage: callStorage, cache: callCache, queue: callQueue }[kind];
      // A binding family defined in its own file (d1) answers its calls itself.
      const answer =
        typeof definition.answer === "function"
          ? await definition.answer(method, args, bytes, self())
          : call
            ? await call(definition.handler, method, args, bytes)
            : await callService(definition, method, args, bytes, dispatch, self(), bodies);
      return { json: answer.json, bytes: answer.bytes ?? undefined };
    } catch (error) {
      const isError = error instanceof Error;
      return { errorName: isError ? error.name : "Error", errorMessage: isError ? error.message : String(error) };
    }
  }
}

/** Runs one queue batch in a worker (for a service binding's queue()): set by lib/api.js, which owns the workers. */
let runQueueBatch = () => {
  throw new Error("queue(): no worker access was set (lib/api.js sets it)");
};
function setQueueBatchRunner(run) {
  runQueueBatch = run;
}

module.exports = { kv, storage, service, serviceBacked, selfService, cacheStore, kBinding, Binding, createDispatcher, setQueueBatchRunner };
