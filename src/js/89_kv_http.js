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

  async #getOne(key, options) {
    key = checkKeyName("GET", key);
    const { type = "text", cacheTtl } = getOptions(options);
    let url = keyUrl(key);
    if (cacheTtl !== undefined) url += `&cache_ttl=${Math.trunc(cacheTtl)}`;
    const response = await this.#send(url);
    const cacheStatus = response.headers.get("cf-cache-status");
    if (response.status === 404 || response.status === 410) {
      await response.body?.cancel();
      return { value: null, metadata: null, cacheStatus };
    }
    if (response.status < 200 || response.status >= 300) throw failed("GET", response);
    const meta = response.headers.get("cf-kv-metadata");
    let value;
    if (type === "stream") value = response.body ?? new ReadableStream({ start: (c) => c.close() });
    else if (type === "text") value = await response.text();
    else if (type === "arrayBuffer") value = await response.arrayBuffer();
    else if (type === "json") value = JSON.parse(await response.text());
    else throw new TypeError('Unknown response type. Possible types are "text", "arrayBuffer", "json", and "stream".');
    return { value, metadata: meta === null ? null : JSON.parse(meta), cacheStatus };
  }

  async #getBulk(keys, options, withMetadata) {
    keys = [...keys].map(String);
    const { type, cacheTtl } = getOptions(options);
    const body = { keys };
    if (type !== undefined && type !== "") body.type = type;
    if (withMetadata) body.withMetadata = true;
    if (cacheTtl !== undefined) body.cacheTtl = String(Math.trunc(cacheTtl));
    const response = await this.#send("https://fake-host/bulk/get", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (response.status < 200 || response.status >= 300) throw failed("GET_BULK", response);
    const result = JSON.parse(await response.text());
    const map = new Map();
    // As workerd copies them: own string keys that are not array indices, in order.
    if (result !== null && typeof result === "object") {
      for (const key of Object.keys(result)) {
        if (String(Number(key) >>> 0) === key && Number(key) !== 4294967295) continue;
        map.set(key, result[key]);
      }
    }
    return map;
  }

  async get(key, options) {
    if (Array.isArray(key)) return this.#getBulk(key, options, false);
    return (await this.#getOne(key, options)).value;
  }

  async getWithMetadata(key, options) {
    if (Array.isArray(key)) return this.#getBulk(key, options, true);
    return this.#getOne(key, options);
  }

  async put(key, value, options) {
    key = checkKeyName("PUT", key);
    let url = keyUrl(key);
    const headers = {};
    if (options !== undefined && options !== null) {
      if (options.expiration !== undefined) url += `&expiration=${Math.trunc(Number(options.expiration))}`;
      if (options.expirationTtl !== undefined) url += `&expiration_ttl=${Math.trunc(Number(options.expirationTtl))}`;
      if (options.metadata !== undefined && options.metadata !== null) headers["CF-KV-Metadata"] = JSON.stringify(options.metadata);
    }
    let body;
    if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
      const view = value instanceof ArrayBuffer ? new Uint8Array(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
      body = view.slice();
    } else if (value instanceof ReadableStream) {
      // Read here: a stream already partly read (a BYOB read, then released) is taken too, as
      // workerd pumps what is left of it.
      body = await internals.readAllBytes(value);
    } else if (value !== null && typeof value === "object") {
      throw new TypeError("KV put() accepts only strings, ArrayBuffers, ArrayBufferViews, and ReadableStreams as values.");
    } else {
      body = String(value);
      headers["content-type"] = "text/plain;charset=UTF-8";
    }
    const response = await this.#send(url, { method: "PUT", headers, body });
    if (response.status < 200 || response.status >= 300) throw failed("PUT", response);
    await response.arrayBuffer();
  }

  async delete(key) {
    key = checkKeyName("DELETE", key);
    const response = await this.#send(keyUrl(key), { method: "DELETE" });
    if (response.status < 200 || response.status >= 300) throw failed("DELETE", response);
    await response.body?.cancel();
  }

  async list(options) {
    const params = [];
    if (options !== undefined && options !== null) {
      if (options.limit !== undefined && Number(options.limit) > 0) params.push(`key_count_limit=${Math.trunc(Number(options.limit))}`);
      if (options.prefix !== undefined && options.prefix !== null) params.push(`prefix=${encodeURIComponent(String(options.prefix))}`);
      if (options.cursor !== undefined && options.cursor !== null) params.push(`cursor=${encodeURIComponent(String(options.cursor))}`);
    }
    const response = await this.#send(`https://fake-host/${params.length > 0 ? "?" + params.join("&") : ""}`);
    // (workerd names a failed list "GET" too.)
    if (response.status < 200 || response.status >= 300) throw failed("GET", response);
    const cacheStatus = response.headers.get("cf-cache-status");
    const result = JSON.parse(await response.text());
    if (Array.isArray(result?.keys)) {
      for (const entry of result.keys) {
        if (entry !== null && typeof entry === "object" && typeof entry.metadata === "string") entry.metadata = JSON.parse(entry.metadata);
      }
    }
    result.cacheStatus = cacheStatus;
    return result;
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
