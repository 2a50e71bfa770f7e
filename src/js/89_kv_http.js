// A KV namespace whose backing is a service (binding kind "kv_http"): as workerd's KvNamespace,
// each operation is an HTTP request to that service in KV's wire protocol — GET/PUT/DELETE on
// `https://fake-host/<key>?urlencoded=true` (expiration, expiration_ttl, cache_ttl as query
// parameters, metadata in the CF-KV-Metadata header), POST /bulk/get with a JSON body for a
// bulk get, GET /?prefix=&cursor=&key_count_limit= for list. The service decides what it accepts
// (its status becomes `KV <OP> failed: <status> <text>`); only key names are checked here, as
// workerd checks them. `deleteBulk()` (workerd's experimental method) is an RPC call of the
// service's `delete()`. The requests go through the host as a service binding's fetch does
// (internals.fetchThroughHost); lib/bindings.js routes them to the service.

const kConstruct = Symbol("construct");
const KEY_LIMIT = 512;
const TYPES = ["text", "arrayBuffer", "json", "stream"];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function checkKeyName(op, key) {
  key = String(key);
  if (key === "") throw new TypeError("Key name cannot be empty.");
  if (key === ".") throw new TypeError('"." is not allowed as a key name.');
  if (key === "..") throw new TypeError('".." is not allowed as a key name.');
  const length = encoder.encode(key).byteLength;
  if (length > KEY_LIMIT) throw new Error(`KV ${op} failed: 414 UTF-8 encoded length of ${length} exceeds key length limit of ${KEY_LIMIT}.`);
  return key;
}

function failed(op, response) {
  return new Error(`KV ${op} failed: ${response.status} ${response.statusText}`);
}

/** `type` and `cacheTtl` of get()'s second argument (a type string or an options object). */
function getOptions(options) {
  if (options === undefined || options === null) return {};
  if (typeof options === "string") return { type: options };
  if (typeof options !== "object") return { type: String(options) };
  return { type: options.type === undefined ? undefined : String(options.type), cacheTtl: options.cacheTtl === undefined ? undefined : Number(options.cacheTtl) };
}

/**
 * A span for a KV operation, as workerd's KvNamespace opens one (kv_get, kv_getWithMetadata,
 * kv_list, kv_put, kv_delete) with its db.* and cloudflare.* tags; streaming tails get it
 * (internals.userSpan, src/js/89_tail.js). `int` makes a 64-bit integer tag (a BigInt).
 */
function kvSpan(name, op, binding) {
  const span = internals.userSpan(name);
  span.setTag("db.system.name", "cloudflare-kv");
  span.setTag("db.operation.name", op);
  span.setTag("cloudflare.binding.name", binding);
  span.setTag("cloudflare.binding.type", "KV");
  return span;
}
const int = (value) => BigInt(Math.trunc(Number(value)));

/** Runs work() inside a span (89_tail.js). */
const inSpan = (span, work) => internals.inSpan(span, work);

/** get()'s type and cache TTL tags, as workerd sets them from its options. */
function tagGetOptions(span, options) {
  if (typeof options === "string") {
    span.setTag("cloudflare.kv.query.type", options);
  } else if (options !== undefined && options !== null && typeof options === "object") {
    if (options.type !== undefined) span.setTag("cloudflare.kv.query.type", String(options.type));
    if (options.cacheTtl !== undefined) span.setTag("cloudflare.kv.query.cache_ttl", int(options.cacheTtl));
  }
}

/** A response body's length when its head gives it (workerd's tryGetLength), else undefined. */
function knownLength(response) {
  const length = response.headers.get("content-length");
  return length !== null && /^\d+$/.test(length) ? BigInt(length) : undefined;
}

const keyUrl = (key) => `https://fake-host/${encodeURIComponent(key)}?urlencoded=true`;

class KVNamespace {
  #name;
  constructor(token, name) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
  }

  #send(url, init = {}) {
    const headers = new Headers(init.headers);
    headers.set("CF-KV-FLPROD-405", url);
    return internals.fetchThroughHost(this.#name, new Request(url, { ...init, headers }));
  }

  async #getOne(key, options, span) {
    key = checkKeyName("GET", key);
    span.setTag("cloudflare.kv.query.keys", key);
    span.setTag("cloudflare.kv.query.keys.count", 1n);
    tagGetOptions(span, options);
    const { type = "text", cacheTtl } = getOptions(options);
    let url = keyUrl(key);
    if (cacheTtl !== undefined) url += `&cache_ttl=${Math.trunc(cacheTtl)}`;
    const response = await this.#send(url);
    const cacheStatus = response.headers.get("cf-cache-status");
    if (cacheStatus !== null) span.setTag("cloudflare.kv.response.cache_status", cacheStatus);
    if (response.status === 404 || response.status === 410) {
      await response.body?.cancel();
      return { value: null, metadata: null, cacheStatus };
    }
    if (response.status < 200 || response.status >= 300) throw failed("GET", response);
    const meta = response.headers.get("cf-kv-metadata");
    if (meta !== null) span.setTag("cloudflare.kv.response.metadata", true);
    // The value is read whole first (a "stream" value then streams those bytes): its size is
    // known, as workerd knows it from the response's length before reading.
    const buffer = await response.arrayBuffer();
    span.setTag("cloudflare.kv.response.size", knownLength(response) ?? BigInt(buffer.byteLength));
    span.setTag("cloudflare.kv.response.returned_rows", 1n);
    let value;
    if (type === "stream") value = new Response(buffer).body ?? new ReadableStream({ start: (c) => c.close() });
    else if (type === "text") value = decoder.decode(buffer);
    else if (type === "arrayBuffer") value = buffer;
    else if (type === "json") value = JSON.parse(decoder.decode(buffer));
    else throw new TypeError('Unknown response type. Possible types are "text", "arrayBuffer", "json", and "stream".');
    return { value, metadata: meta === null ? null : JSON.parse(meta), cacheStatus };
  }

  async #getBulk(keys, options, withMetadata, span) {
    keys = [...keys].map(String);
    let keysText = keys.join(", ");
    if (encoder.encode(keysText).byteLength > 512) keysText = `${keysText.slice(0, 509)}...`;
    span.setTag("cloudflare.kv.query.keys", keysText);
    span.setTag("cloudflare.kv.query.keys.count", BigInt(keys.length));
    tagGetOptions(span, options);
    const { type, cacheTtl } = getOptions(options);
    const body = { keys };
    if (type !== undefined && type !== "") body.type = type;
    if (withMetadata) body.withMetadata = true;
    if (cacheTtl !== undefined) body.cacheTtl = String(Math.trunc(cacheTtl));
    const response = await this.#send("https://fake-host/bulk/get", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (response.status < 200 || response.status >= 300) throw failed("GET_BULK", response);
    const text = await response.text();
    span.setTag("cloudflare.kv.response.size", BigInt(encoder.encode(text).byteLength));
    const result = JSON.parse(text);
    const map = new Map();
    // As workerd copies them: own string keys that are not array indices, in order.
    if (result !== null && typeof result === "object") {
      for (const key of Object.keys(result)) {
        if (String(Number(key) >>> 0) === key && Number(key) !== 4294967295) continue;
        map.set(key, result[key]);
      }
      span.setTag("cloudflare.kv.response.returned_rows", BigInt(map.size));
    }
    return map;
  }

  get(key, options) {
    const span = kvSpan("kv_get", "get", this.#name);
    if (Array.isArray(key)) return inSpan(span, () => this.#getBulk(key, options, false, span));
    return inSpan(span, async () => (await this.#getOne(key, options, span)).value);
  }

  getWithMetadata(key, options) {
    const span = kvSpan("kv_getWithMetadata", "get", this.#name);
    if (Array.isArray(key)) return inSpan(span, () => this.#getBulk(key, options, true, span));
    return inSpan(span, () => this.#getOne(key, options, span));
  }

  async put(key, value, options) {
    key = checkKeyName("PUT", key);
    const span = kvSpan("kv_put", "put", this.#name);
    return inSpan(span, async () => {
      span.setTag("cloudflare.kv.query.keys", key);
      span.setTag("cloudflare.kv.query.keys.count", 1n);
      let url = keyUrl(key);
      const headers = {};
      if (options !== undefined && options !== null) {
        if (options.expiration !== undefined) {
          span.setTag("cloudflare.kv.query.expiration", int(options.expiration));
          url += `&expiration=${Math.trunc(Number(options.expiration))}`;
        }
        if (options.expirationTtl !== undefined) {
          span.setTag("cloudflare.kv.query.expiration_ttl", int(options.expirationTtl));
          url += `&expiration_ttl=${Math.trunc(Number(options.expirationTtl))}`;
        }
        if (options.metadata !== undefined && options.metadata !== null) {
          headers["CF-KV-Metadata"] = JSON.stringify(options.metadata);
          span.setTag("cloudflare.kv.query.metadata", true);
        }
      }
      let body;
      if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
        const view = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
        body = view.slice();
        span.setTag("cloudflare.kv.query.value_type", "ArrayBuffer");
        span.setTag("cloudflare.kv.query.payload.size", BigInt(body.byteLength));
      } else if (value instanceof ReadableStream) {
        span.setTag("cloudflare.kv.query.value_type", "ReadableStream");
        // Read here: a stream already partly read (a BYOB read, then released) is taken too, as
        // workerd pumps what is left of it.
        body = await internals.readAllBytes(value);
      } else if (value !== null && typeof value === "object") {
        throw new TypeError("KV put() accepts only strings, ArrayBuffers, ArrayBufferViews, and ReadableStreams as values.");
      } else {
        body = String(value);
        headers["content-type"] = "text/plain;charset=UTF-8";
        span.setTag("cloudflare.kv.query.value_type", "text");
        span.setTag("cloudflare.kv.query.payload.size", BigInt(encoder.encode(body).byteLength));
      }
      const response = await this.#send(url, { method: "PUT", headers, body });
      if (response.status < 200 || response.status >= 300) throw failed("PUT", response);
      await response.arrayBuffer();
    });
  }

  async delete(key) {
    key = checkKeyName("DELETE", key);
    const span = kvSpan("kv_delete", "delete", this.#name);
    return inSpan(span, async () => {
      span.setTag("cloudflare.kv.query.keys", key);
      span.setTag("cloudflare.kv.query.keys.count", 1n);
      const response = await this.#send(keyUrl(key), { method: "DELETE" });
      if (response.status < 200 || response.status >= 300) throw failed("DELETE", response);
      await response.body?.cancel();
    });
  }

  list(options) {
    const span = kvSpan("kv_list", "list", this.#name);
    return inSpan(span, async () => {
      const params = [];
      if (options !== undefined && options !== null) {
        if (options.limit !== undefined) span.setTag("cloudflare.kv.query.limit", int(options.limit));
        if (options.limit !== undefined && Number(options.limit) > 0) params.push(`key_count_limit=${Math.trunc(Number(options.limit))}`);
        if (options.prefix !== undefined && options.prefix !== null) {
          span.setTag("cloudflare.kv.query.prefix", String(options.prefix));
          params.push(`prefix=${encodeURIComponent(String(options.prefix))}`);
        }
        if (options.cursor !== undefined && options.cursor !== null) {
          span.setTag("cloudflare.kv.query.cursor", String(options.cursor));
          params.push(`cursor=${encodeURIComponent(String(options.cursor))}`);
        }
      }
      const response = await this.#send(`https://fake-host/${params.length > 0 ? "?" + params.join("&") : ""}`);
      // (workerd names a failed list "GET" too.)
      if (response.status < 200 || response.status >= 300) throw failed("GET", response);
      const cacheStatus = response.headers.get("cf-cache-status");
      if (cacheStatus !== null) span.setTag("cloudflare.kv.response.cache_status", cacheStatus);
      const text = await response.text();
      span.setTag("cloudflare.kv.response.size", knownLength(response) ?? BigInt(encoder.encode(text).byteLength));
      const result = JSON.parse(text);
      if (typeof result?.list_complete === "boolean") span.setTag("cloudflare.kv.response.list_complete", result.list_complete);
      if (typeof result?.cursor === "string") span.setTag("cloudflare.kv.response.cursor", result.cursor);
      if (typeof result?.expiration === "number") span.setTag("cloudflare.kv.response.expiration", int(result.expiration));
      if (Array.isArray(result?.keys)) {
        span.setTag("cloudflare.kv.response.returned_rows", BigInt(result.keys.length));
        for (const entry of result.keys) {
          if (entry !== null && typeof entry === "object" && typeof entry.metadata === "string") entry.metadata = JSON.parse(entry.metadata);
        }
      }
      result.cacheStatus = cacheStatus;
      return result;
    });
  }

  get [Symbol.toStringTag]() {
    return "KVNamespace";
  }
}

/** workerd's experimental deleteBulk(keys): the service's own delete() method, over RPC. */
function deleteBulk(...args) {
  // The service's RPC method itself (not the Fetcher's delete(url) shortcut).
  return internals.makeBinding(stubNames.get(this), "service").getRpcMethodForTestOnly("delete")(...args);
}
const stubNames = new WeakMap();

internals.asyncApiPrototypes.push(KVNamespace.prototype);

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  if (kind !== "kv_http") return makeOtherBinding(name, kind);
  const namespace = new KVNamespace(kConstruct, name);
  if (internals.feature("experimental")) {
    stubNames.set(namespace, name);
    Object.defineProperty(namespace, "deleteBulk", { value: deleteBulk, writable: true, configurable: true });
  }
  return namespace;
};
