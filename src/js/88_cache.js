// The Cache API as Workers has it: `caches.default` and `caches.open(name)`, each a Cache with
// match/put/delete keyed by GET request URL. Cache-Control decides whether and for how long a
// response is kept (no-store/private and Set-Cookie are not cached; s-maxage, max-age or Expires
// set the lifetime). Entries live in the host: createWorker's `cache` handler, or an in-memory
// store by default.

const { Request, Response } = globalThis;
const kConstruct = Symbol("construct");
const CACHE_BINDING = "#cache";

function cacheKey(request, what) {
  if (typeof request === "string" || request instanceof URL) request = new Request(String(request));
  if (!(request instanceof Request)) throw new TypeError(`Cache.${what}: the key must be a Request or a URL.`);
  return request;
}

/** When a response may be served until (ms since the epoch), or null if it must not be cached. */
function lifetime(response) {
  const control = (response.headers.get("cache-control") ?? "").toLowerCase();
  if (/(^|,)\s*(no-store|private)\s*(,|$)/.test(control) || response.headers.has("set-cookie")) return null;
  const seconds = /(?:^|,)\s*s-maxage\s*=\s*(\d+)/.exec(control) ?? /(?:^|,)\s*max-age\s*=\s*(\d+)/.exec(control);
  if (seconds) return Number(seconds[1]) > 0 ? Date.now() + Number(seconds[1]) * 1000 : null;
  const expires = response.headers.get("expires");
  if (expires !== null) {
    const at = Date.parse(expires);
    return Number.isFinite(at) && at > Date.now() ? at : null;
  }
  if (/(^|,)\s*no-cache\s*(,|$)/.test(control)) return null;
  // No freshness information: kept, but revalidation semantics are out of scope; keep for a day.
  return Date.now() + 86_400_000;
}

class Cache {
  #name;
  constructor(token, name) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
  }

  async match(request, options = {}) {
    request = cacheKey(request, "match");
    if (request.method !== "GET" && !options?.ignoreMethod) return undefined;
    const [json, bytes] = await ops.hostCall(CACHE_BINDING, "match", JSON.stringify({ cache: this.#name, url: request.url }), null);
    const found = JSON.parse(json);
    if (found === null) return undefined;
    const headers = [];
    for (let i = 0; i < found.headers.length; i += 2) headers.push([found.headers[i], found.headers[i + 1]]);
    headers.push(["cf-cache-status", "HIT"]);
    const body = [101, 204, 205, 304].includes(found.status) ? null : (bytes ?? new Uint8Array(0));
    return new Response(body, { status: found.status, statusText: found.statusText, headers });
  }

  async put(request, response) {
    request = cacheKey(request, "put");
    if (!(response instanceof Response)) throw new TypeError("Cache.put: the value must be a Response.");
    if (request.method !== "GET") throw new TypeError("Cannot cache response to non-GET request.");
    if (response.status === 206) throw new TypeError("Cannot cache response to a range request (206 Partial Content).");
    if ((response.headers.get("vary") ?? "").includes("*")) throw new TypeError("Cannot cache response with 'Vary: *' header.");
    if (response.bodyUsed) throw new TypeError("Cache.put: the Response body has already been used.");
    const expires = lifetime(response);
    const parts = await internals.responseParts(response);
    if (expires === null) return undefined;
    const args = { cache: this.#name, url: request.url, status: parts.status, statusText: parts.statusText, headers: parts.headers, expires };
    await ops.hostCall(CACHE_BINDING, "put", JSON.stringify(args), parts.body);
    return undefined;
  }

  async delete(request, options = {}) {
    request = cacheKey(request, "delete");
    if (request.method !== "GET" && !options?.ignoreMethod) return false;
    const [json] = await ops.hostCall(CACHE_BINDING, "delete", JSON.stringify({ cache: this.#name, url: request.url }), null);
    return JSON.parse(json) === true;
  }

  get [Symbol.toStringTag]() {
    return "Cache";
  }
}

class CacheStorage {
  #default = new Cache(kConstruct, "default");
  constructor(token) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
  }
  get default() {
    return this.#default;
  }
  async open(name) {
    return new Cache(kConstruct, `named:${String(name)}`);
  }
  get [Symbol.toStringTag]() {
    return "CacheStorage";
  }
}

internals.defineGlobal("Cache", Cache);
internals.defineGlobal("CacheStorage", CacheStorage);
internals.defineGlobal("caches", new CacheStorage(kConstruct));
