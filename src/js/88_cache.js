// The Cache API as Workers has it: `caches.default` and `caches.open(name)`, each a Cache with
// match/put/delete keyed by GET request URL. Cache-Control decides whether and for how long a
// response is kept (no-store/private and Set-Cookie are not cached; s-maxage, max-age or Expires
// set the lifetime). match() follows HTTP for the request it is given: a response stored with
// `Vary` matches only a request with the same values of those headers, `If-None-Match` /
// `If-Modified-Since` give a 304, and a `Range` gives a 206 (or 416). Entries live in the host:
// createWorker's `cache` handler, or an in-memory store by default.

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

/** An entity tag without its weak prefix, for the weak comparison If-None-Match uses. */
const opaqueTag = (tag) => tag.trim().replace(/^W\//, "");

/** Whether a stored response answers the request's conditional headers with 304 Not Modified. */
function notModified(requestHeaders, headers, status) {
  if (status !== 200) return false;
  const ifNoneMatch = requestHeaders.get("if-none-match");
  const etag = headers.get("etag");
  if (ifNoneMatch !== null) {
    if (etag === null) return false;
    return ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => opaqueTag(tag) === opaqueTag(etag));
  }
  const since = requestHeaders.get("if-modified-since");
  const modified = headers.get("last-modified");
  if (since === null || modified === null) return false;
  const [a, b] = [Date.parse(modified), Date.parse(since)];
  return Number.isFinite(a) && Number.isFinite(b) && a <= b;
}

/**
 * A stored 200 answered for `Range`: one satisfiable `bytes=` range gives a 206 with
 * Content-Range, an unsatisfiable one a 416; several ranges, or a header that is not a byte
 * range, are ignored (the whole response), as Cloudflare's cache does.
 */
function rangeResponse(range, body, headers, found) {
  const size = body.byteLength;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(range);
  if (match === null || (match[1] === "" && match[2] === "")) return new Response(body, { status: found.status, statusText: found.statusText, headers });
  let start;
  let end;
  if (match[1] === "") {
    // The last N bytes.
    const suffix = Number(match[2]);
    start = Math.max(0, size - suffix);
    end = size - 1;
    if (suffix === 0) start = size;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) {
    const refused = new Headers(headers);
    refused.set("content-range", `bytes */${size}`);
    refused.delete("content-length");
    return new Response(null, { status: 416, statusText: "Range Not Satisfiable", headers: refused });
  }
  const partial = new Headers(headers);
  partial.set("content-range", `bytes ${start}-${end}/${size}`);
  partial.set("content-length", String(end - start + 1));
  return new Response(body.slice(start, end + 1), { status: 206, statusText: "Partial Content", headers: partial });
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
    // internals.hostCall: an in-memory store answers on this thread (src/js/85_bindings.js).
    const [found, bytes] = await internals.hostCall(CACHE_BINDING, "match", { cache: this.#name, url: request.url });
    if (found === null) return undefined;
    // Vary: the request must carry what the stored one carried in the headers it names.
    for (const [name, value] of found.vary ?? []) {
      if (request.headers.get(name) !== value) return undefined;
    }
    const headers = new Headers();
    for (let i = 0; i < found.headers.length; i += 2) headers.append(found.headers[i], found.headers[i + 1]);
    headers.set("cf-cache-status", "HIT");
    if (notModified(request.headers, headers, found.status)) {
      const kept = new Headers();
      for (const name of ["etag", "last-modified", "cache-control", "expires", "vary", "date", "content-location", "cf-cache-status"]) {
        if (headers.has(name)) kept.set(name, headers.get(name));
      }
      return new Response(null, { status: 304, headers: kept });
    }
    const body = [101, 204, 205, 304].includes(found.status) ? null : (bytes ?? new Uint8Array(0));
    const range = request.headers.get("range");
    if (range !== null && found.status === 200 && body !== null) return rangeResponse(range, body, headers, found);
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
    // The request's values of the headers the response varies on, for match() to compare.
    const varyOn = (response.headers.get("vary") ?? "").split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
    const vary = varyOn.map((name) => [name, request.headers.get(name)]);
    const args = { cache: this.#name, url: request.url, status: parts.status, statusText: parts.statusText, headers: parts.headers, expires, vary };
    // A streamed body (a clone's branch, an R2 object's body) is read whole: the store keeps bytes.
    const body = parts.body instanceof ReadableStream ? new Uint8Array(await new Response(parts.body).arrayBuffer()) : parts.body;
    await internals.hostCall(CACHE_BINDING, "put", args, body);
    return undefined;
  }

  async delete(request, options = {}) {
    request = cacheKey(request, "delete");
    if (request.method !== "GET" && !options?.ignoreMethod) return false;
    const [deleted] = await internals.hostCall(CACHE_BINDING, "delete", { cache: this.#name, url: request.url });
    return deleted === true;
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

// The rest of the Cache API is declared in workerd but not implemented there: each throws.
const notImplemented = (Class, names) => {
  for (const name of names) {
    const method = { [name]() { throw new Error(`Failed to execute '${name}' on '${Class.name}': the method is not implemented.`); } }[name];
    Object.defineProperty(Class.prototype, name, { value: method, writable: true, enumerable: true, configurable: true });
  }
};
notImplemented(Cache, ["add", "addAll", "keys", "matchAll"]);
notImplemented(CacheStorage, ["delete", "has", "keys", "match"]);

internals.defineGlobal("Cache", Cache);
internals.defineGlobal("CacheStorage", CacheStorage);
internals.defineGlobal("caches", new CacheStorage(kConstruct));
