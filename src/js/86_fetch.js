// fetch(): outbound HTTP from the worker. Requests go to the worker's scheduler thread
// (reqwest) — or, when the host gave createWorker an `outbound` handler, to that handler, the
// way a service binding's requests do. Request and response bodies stream in both directions
// (a small response comes whole with its head). An AbortSignal cancels a request in flight,
// and its response body while that is still being read.

const { Request, Response, URL, ReadableStream, atob } = globalThis;
const OUTBOUND = "#outbound";
let intercepted = false;

/** Called by the entry when the host passed an `outbound` handler. */
internals.interceptOutbound = () => {
  intercepted = true;
};

function abortedPromise(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** Unread response bodies are dropped when their stream is garbage-collected. */
const unread = new FinalizationRegistry((id) => ops.fetchCancel(id));

/** A response body read from the network as the worker reads it; `onStart` gets its controller. */
function networkBody(id, onStart, onEnd) {
  const stream = internals.internalStream({
    type: "bytes",
    start: onStart,
    async pull(controller) {
      let chunk;
      try {
        [, chunk] = await ops.fetchRead(id);
      } catch (error) {
        onEnd();
        throw error;
      }
      if (chunk === null) {
        onEnd();
        controller.close();
        controller.byobRequest?.respond(0);
      } else if (chunk.byteLength > 0) {
        controller.enqueue(chunk);
      }
    },
    cancel() {
      onEnd();
      ops.fetchCancel(id);
    },
  });
  unread.register(stream, id);
  return stream;
}

/** Uploads a request body stream chunk by chunk; each write waits until the last was sent. */
async function upload(id, stream) {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const bytes = internals.chunkBytes(value);
      if (bytes.byteLength > 0) await ops.fetchWrite(id, bytes);
    }
    await ops.fetchWrite(id, null);
  } catch (error) {
    ops.fetchWrite(id, null, String(error?.message ?? error)).catch(() => {});
    reader.cancel(error).catch(() => {});
  }
}

/** The bytes of `text` with its %XX escapes decoded (the URL Standard's percent-decode). */
function percentDecode(text) {
  const bytes = new Uint8Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x25 && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) {
      bytes[length++] = parseInt(text.slice(i + 1, i + 3), 16);
      i += 2;
    } else {
      bytes[length++] = c & 0xff;
    }
  }
  return bytes.subarray(0, length);
}

/**
 * The answer to a fetch of a data: URL, as workerd makes it (src/workerd/api/data-url.c++): 200
 * with the URL's MIME type (text/plain;charset=US-ASCII when it has none or a bad one) and its
 * decoded bytes (base64 when the type ends in ";base64"), no body for a method other than GET;
 * null for a data: URL without a comma (refused as any other scheme).
 */
function dataUrlResponse(request) {
  const url = URL.parse(request.url);
  if (url === null) return null;
  url.hash = "";
  const href = url.href.slice("data:".length);
  const comma = href.indexOf(",");
  if (comma === -1) return null;
  let type = href.slice(0, comma).replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "");
  let bytes = percentDecode(href.slice(comma + 1));
  const semicolon = type.lastIndexOf(";");
  if (semicolon !== -1 && /^base64$/i.test(type.slice(semicolon + 1).trim()) && type.slice(-2) === "64") {
    type = type.slice(0, semicolon);
    let text = "";
    for (const byte of bytes) text += String.fromCharCode(byte);
    text = text.replace(/[^A-Za-z0-9+/]/g, "");
    if (text.length % 4 === 1) text = text.slice(0, -1);
    const binary = atob(text);
    bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  }
  if (type.startsWith(";")) type = `text/plain${type}`;
  const contentType = internals.serializeMimeType(type) || "text/plain;charset=US-ASCII";
  return new Response(request.method === "GET" ? bytes : null, { status: 200, headers: { "content-type": contentType } });
}

async function fetch(input, init = undefined) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'fetch': 1 argument required, but only 0 present.");
  let request = new Request(input, init);
  internals.checkCacheModeCf(request);
  const signal = internals.subrequestSignal(request);
  signal.throwIfAborted();
  // A data: URL as the URL Standard parses it (before fetch_standard_url, request.url keeps the
  // text as given, leading spaces and all; workerd still answers it).
  if (/^[\x00-\x20]*data:/i.test(request.url)) {
    const response = dataUrlResponse(request);
    if (response !== null) return response;
  }
  if (!internals.feature("fetch_standard_url")) {
    // Before fetch_standard_url (2024-06-03) fetch() parsed the URL with KJ's parser.
    const href = internals.legacyHref(request.url);
    if (href === null || URL.parse(href) === null) throw new TypeError(`Fetch API cannot load: ${request.url}`);
    if (href !== request.url) request = new Request(href, request);
  }
  const protocol = new URL(request.url).protocol;
  if (protocol !== "http:" && protocol !== "https:") {
    // Before fetch_refuses_unknown_protocols (2021-11-10) workerd sent any other scheme as http:.
    const asHttp = internals.feature("fetch_refuses_unknown_protocols") || /^[0-9]/.test(protocol) ? null : URL.parse(`http:${request.url.slice(protocol.length)}`);
    if (asHttp === null || asHttp.host === "") {
      throw new TypeError(`fetch: unsupported protocol "${protocol}" in ${request.url} (only http: and https: are supported)`);
    }
    request = new Request(asHttp.href, request);
  }
  if (intercepted) {
    return Promise.race([internals.fetchThroughHost(OUTBOUND, request).then((response) => fetched(response, request.url)), abortedPromise(signal)]);
  }
  if (request.redirect === "follow" && request.headers.has("authorization") && !internals.feature("strip_authorization_on_cross_origin_redirect")) {
    return followKeepingAuthorization(request);
  }
  const headers = [];
  for (const [name, value] of internals.headersList(request.headers)) headers.push(name, value);
  // Before brotli_content_encoding (2024-04-29) fetch() did not offer brotli ("br").
  if (!internals.feature("brotli_content_encoding") && !request.headers.has("accept-encoding")) headers.push("accept-encoding", "gzip, deflate");
  // A WebSocket handshake: the answer is a 101 Response with a webSocket to accept().
  if ((request.headers.get("upgrade") ?? "").toLowerCase() === "websocket") {
    if (request.method !== "GET") throw new TypeError("fetch: a WebSocket upgrade must be a GET request.");
    return Promise.race([internals.fetchWebSocket(request.url, headers), abortedPromise(signal)]);
  }
  const source = request.method === "GET" || request.method === "HEAD" ? null : internals.takeRequestBody(request);
  const streamed = source instanceof ReadableStream;
  // A FixedLengthStream's body goes out with its length rather than chunked, as in workerd.
  if (streamed) internals.addFixedLength(headers, source, request.headers);
  const [id, pending] = ops.fetch(request.method, request.url, headers, streamed ? true : source, request.redirect);
  if (streamed) upload(id, source);
  // The native promise settles even after an abort (with an AbortError); nothing waits on it then.
  pending.catch(() => {});
  // Aborting cancels the request, and later its body stream too, until the body is read.
  let bodyController = null;
  const cancel = () => {
    ops.fetchCancel(id);
    bodyController?.error(signal.reason);
  };
  const stopListening = () => signal.removeEventListener("abort", cancel);
  signal.addEventListener("abort", cancel, { once: true });
  let body = null;
  try {
    const [json, bytes] = await Promise.race([pending, abortedPromise(signal)]);
    const head = JSON.parse(json);
    body = head.stream ? networkBody(id, (controller) => void (bodyController = controller), stopListening) : bytes;
    if (request.method === "HEAD" && body !== null) {
      if (head.stream) ops.fetchCancel(id);
      body = null;
    }
    return internals.newFetchResponse(head.status, head.statusText, head.headers, body, head.url, head.redirected);
  } finally {
    if (!(body instanceof ReadableStream)) stopListening();
  }
}

/**
 * The host's `outbound` handler's answer as fetch() gives a network response: with the request's
 * URL as its `url` (as workerd sets it for every fetch), and the same headers as a network one.
 */
function fetched(response, url) {
  if (response.webSocket !== null) return response;
  const flat = [];
  for (const [name, value] of internals.headersList(response.headers)) flat.push(name, value);
  // A response URL has no fragment (Fetch standard; workerd drops it too).
  const hash = url.indexOf("#");
  return internals.newFetchResponse(response.status, response.statusText, flat, response.body, hash === -1 ? url : url.slice(0, hash), false);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Before strip_authorization_on_cross_origin_redirect (2025-09-01) workerd kept a request's
 * Authorization header when a redirect led to another origin. The network layer drops it, so
 * such a request follows its redirects here (see followRedirects).
 */
function followKeepingAuthorization(request) {
  return followRedirects(request, (url, init) => fetch(url, init), true);
}

/**
 * Follows `request`'s redirects one hop at a time, each sent by `send(url, init)` with redirect
 * "manual" (a fetch, or a service binding's), with the Fetch standard's method and body rules (the
 * body is kept in memory for 307 and 308). A hop to another origin drops the Authorization header
 * unless `keepAuthorization`.
 */
async function followRedirects(request, send, keepAuthorization) {
  let method = request.method;
  let body = method === "GET" || method === "HEAD" ? null : await request.arrayBuffer();
  let url = request.url;
  const headers = new Headers(request.headers);
  for (let hop = 0; ; hop++) {
    const response = await send(url, { method, headers, body, redirect: "manual", signal: request.signal });
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) {
      if (hop === 0) return response;
      const flat = [];
      for (const [name, value] of internals.headersList(response.headers)) flat.push(name, value);
      return internals.newFetchResponse(response.status, response.statusText, flat, response.body, url, true);
    }
    await response.body?.cancel();
    if (hop === 20) throw new TypeError("fetch: too many redirects (20)");
    const next = URL.parse(location, url);
    if (next === null) throw new TypeError(`fetch: the redirect to "${location}" is not a valid URL`);
    if ((response.status === 303 && method !== "HEAD") || ((response.status === 301 || response.status === 302) && method === "POST")) {
      method = "GET";
      body = null;
    }
    if (!keepAuthorization && next.origin !== new URL(url).origin) headers.delete("authorization");
    url = next.href;
  }
}
internals.followRedirects = followRedirects;

internals.defineGlobal("fetch", fetch);
internals.fetch = fetch; // the runtime's own, whatever the worker does to the global (navigator.sendBeacon)
