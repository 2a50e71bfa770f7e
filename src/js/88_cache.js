// The Cache API as Workers has it: `caches.default` and `caches.open(name)`, each a Cache with
// match/put/delete keyed by GET request URL. Cache-Control decides whether and for how long a
// response is kept (no-store/private and Set-Cookie are not cached; s-maxage, max-age or Expires
// set the lifetime). match() follows HTTP for the request it is given: a response stored with
// `Vary` matches only a request with the same values of those headers, `If-None-Match` /
// `If-Modified-Since` give a 304, and a `Range` gives a 206 (or 416). Entries live in the host:
// createWorker's `cache` handler or cache service, or an in-memory store by default. Each
// operation is a span (cache_match, cache_put, cache_delete) with workerd's cache.* tags, which
// streaming tails get (internals.userSpan, src/js/89_tail.js).

const { Request, Response } = globalThis;
const kConstruct = Symbol("construct");
const CACHE_BINDING = "#cache";
const encoder = new TextEncoder();

/** A span for a Cache API operation, as workerd's Cache opens one (makeUserTraceSpan). */
const cacheSpan = (name) => internals.userSpan(name);

/** Runs work() inside a span (89_tail.js). */
const inSpan = (span, work) => internals.inSpan(span, work);

/** The request's URL and method tags, and options.ignoreMethod's, as workerd sets them. */
function tagRequest(span, request) {
  span.setTag("cache.request.url", request.url);
  span.setTag("cache.request.method", request.method);
}
function tagIgnoreMethod(span, options) {
  if (options !== undefined && options !== null && options.ignoreMethod !== undefined) span.setTag("cache.request.ignore_method", Boolean(options.ignoreMethod));
}

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

  match(request, options = {}) {
    const span = cacheSpan("cache_match");
    tagIgnoreMethod(span, options);
    return inSpan(span, () => this.#match(request, options, span));
  }

  async #match(request, options, span) {
    request = cacheKey(request, "match");
    tagRequest(span, request);
    if (request.method !== "GET" && !options?.ignoreMethod) return undefined;
    for (const [header, tag] of [["range", "range"], ["if-modified-since", "if_modified_since"], ["if-none-match", "if_none_match"]]) {
      const value = request.headers.get(header);
      if (value !== null) span.setTag(`cache.request.header.${tag}`, value);
    }
    // internals.hostCall: an in-memory store answers on this thread (src/js/85_bindings.js).
    const [found, bytes] = await internals.hostCall(CACHE_BINDING, "match", { cache: this.#name, url: request.url });
    // A cache service's miss comes with its answer's status, length and CF-Cache-Status.
    if (found === null || found.miss === true) {
      if (found !== null) {
        span.setTag("cache.response.status_code", BigInt(found.status));
        if (found.size !== undefined) span.setTag("cache.response.body.size", BigInt(found.size));
        if (found.cacheStatus !== undefined) span.setTag("cache.response.cache_status", found.cacheStatus);
      }
      span.setTag("cache.response.success", false);
      return undefined;
    }
    span.setTag("cache.response.status_code", BigInt(found.status));
    span.setTag("cache.response.body.size", BigInt(bytes?.byteLength ?? 0));
    span.setTag("cache.response.cache_status", "HIT");
    span.setTag("cache.response.success", true);
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

  put(request, response) {
    const span = cacheSpan("cache_put");
    return inSpan(span, () => this.#put(request, response, span));
  }

  async #put(request, response, span) {
    request = cacheKey(request, "put");
    if (!(response instanceof Response)) throw new TypeError("Cache.put: the value must be a Response.");
    tagRequest(span, request);
    span.setTag("cache.request.payload.status_code", BigInt(response.status));
    if (request.method !== "GET") throw new TypeError("Cannot cache response to non-GET request.");
    if (response.status === 206) throw new TypeError("Cannot cache response to a range request (206 Partial Content).");
    if ((response.headers.get("vary") ?? "").includes("*")) throw new TypeError("Cannot cache response with 'Vary: *' header.");
    for (const [header, tag] of [["cache-control", "cache_control"], ["cache-tag", "cache_tag"], ["etag", "etag"], ["expires", "expires"], ["last-modified", "last_modified"]]) {
      const value = response.headers.get(header);
      if (value !== null) span.setTag(`cache.request.payload.header.${tag}`, value);
    }
    if (response.status === 304) {
      // As workerd: a 304 (an answer to a conditional request) is not cached, silently.
      internals.logWarning?.("Ignoring attempt to Cache.put() a 304 status response. 304 responses are not meaningful to cache, and a potential source of bugs. Consider validating that the response status is meaningful to cache before calling Cache.put().");
      return undefined;
    }
    if (response.bodyUsed) throw new TypeError("Cache.put: the Response body has already been used.");
    const expires = lifetime(response);
    const parts = await internals.responseParts(response);
    // The request's values of the headers the response varies on, for match() to compare.
    const varyOn = (response.headers.get("vary") ?? "").split(",").map((h) => h.trim().toLowerCase()).filter(Boolean);
    const vary = varyOn.map((name) => [name, request.headers.get(name)]);
    // A streamed body (a clone's branch, an R2 object's body) is read whole: the store keeps bytes.
    let body = parts.body instanceof ReadableStream ? new Uint8Array(await new Response(parts.body).arrayBuffer()) : parts.body;
    if (typeof body === "string") body = encoder.encode(body);
    // The size of the response as it goes to a cache service: HTTP/1.1 head (with its length) and body.
    const length = body?.byteLength ?? 0;
    let head = `HTTP/1.1 ${parts.status} ${parts.statusText}\r\n`;
    for (let i = 0; i + 1 < parts.headers.length; i += 2) head += `${parts.headers[i]}: ${parts.headers[i + 1]}\r\n`;
    if (!response.headers.has("content-length")) head += `Content-Length: ${length}\r\n`;
    span.setTag("cache.request.payload.size", BigInt(encoder.encode(head).byteLength + 2 + length));
    // What is not to be kept (expires: null) still goes to the host: a cache service decides for
    // itself (workerd sends it every put), the in-memory store and handlers drop it.
    const args = { cache: this.#name, url: request.url, status: parts.status, statusText: parts.statusText, headers: parts.headers, expires, vary };
    const [answer] = await internals.hostCall(CACHE_BINDING, "put", args, body);
    // A cache service's answer: 204 stored, 413 refused.
    if (answer === null || answer?.status === 204) span.setTag("cache.response.success", true);
    else if (answer?.status === 413) span.setTag("cache.response.success", false);
    return undefined;
  }

  delete(request, options = {}) {
    const span = cacheSpan("cache_delete");
    tagIgnoreMethod(span, options);
    return inSpan(span, () => this.#delete(request, options, span));
  }

  async #delete(request, options, span) {
    request = cacheKey(request, "delete");
    tagRequest(span, request);
    if (request.method !== "GET" && !options?.ignoreMethod) return false;
    const [answer] = await internals.hostCall(CACHE_BINDING, "delete", { cache: this.#name, url: request.url });
    // A cache service answers with its PURGE's status; a store with whether it had the entry.
    if (answer === null || typeof answer !== "object") {
      span.setTag("cache.response.success", answer === true);
      return answer === true;
    }
    span.setTag("cache.response.status_code", BigInt(answer.status));
    if (answer.status === 200 || answer.status === 404) {
      span.setTag("cache.response.success", answer.status === 200);
      return answer.status === 200;
    }
    if (answer.status === 429) {
      span.setTag("cache.response.success", false);
      throw new Error("Unable to delete cached response. Subrequests are being rate-limited.");
    }
    throw new Error("Unable to delete cached response.");
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
