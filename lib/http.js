"use strict";
// Conversions between Node's fetch types and the plain values the native addon takes:
// a request becomes { method, url, headers: [name, value, …], body: Buffer | null, stream },
// where bodies known as bytes travel whole and streams, Blobs and FormData stream (`stream` is
// a Node ReadableStream, see bodies.js); a worker's response becomes Node's Response, whose
// body is whole bytes (response.js) or a ReadableStream fed by the worker.

const { bufferedResponse } = require("./response.js");
const { isPlainObject } = require("./modules.js");

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function describe(value) {
  if (value === null) return "null";
  if (typeof value === "object") return value.constructor?.name ? `a ${value.constructor.name}` : "an object";
  return `a ${typeof value}`;
}

function parseUrl(url, where) {
  if (typeof url !== "string" && !(url instanceof URL)) {
    throw new TypeError(`dispatch: ${where} must be a string or URL, got ${describe(url)}`);
  }
  try {
    return new URL(url).href;
  } catch {
    throw new TypeError(`dispatch: invalid URL ${JSON.stringify(String(url))} in ${where} (it must be absolute, e.g. "http://localhost/")`);
  }
}

/** Header pairs from a Headers, an array of pairs, or a record (array values repeat the name). */
function headerList(init) {
  if (init === undefined || init === null) return [];
  const flat = [];
  const add = (name, value) => {
    if (typeof name !== "string" || !TOKEN.test(name)) {
      throw new TypeError(`dispatch: invalid header name ${JSON.stringify(name)} in request.headers`);
    }
    const text = String(value);
    if (/[\0\r\n]/.test(text)) {
      throw new TypeError(`dispatch: the value of header "${name}" contains a NUL, CR or LF character`);
    }
    const wide = /[^\x00-\xff]/.exec(text);
    if (wide !== null) {
      const code = wide[0].codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
      throw new TypeError(`dispatch: the value of header "${name}" has a character outside Latin-1 (U+${code} at index ${wide.index}); header values are byte strings, as in Node's Headers`);
    }
    flat.push(name, text);
  };
  // An array first: asking `instanceof Headers` makes Node load its fetch classes (undici,
  // 20-30 ms), which a request from Node's http server (the dev server's) never needs.
  if (Array.isArray(init)) {
    for (const pair of init) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw new TypeError("dispatch: request.headers as an array must hold [name, value] pairs");
      }
      add(pair[0], pair[1]);
    }
  } else if (init instanceof Headers) {
    for (const [name, value] of init) add(name, value);
  } else if (typeof init === "object") {
    for (const [name, value] of Object.entries(init)) {
      if (Array.isArray(value)) for (const v of value) add(name, v);
      else if (value !== undefined) add(name, value);
    }
  } else {
    throw new TypeError(`dispatch: request.headers must be a Headers, an array of pairs or an object, got ${describe(init)}`);
  }
  return flat;
}

function hasHeader(flat, name) {
  for (let i = 0; i < flat.length; i += 2) if (flat[i].toLowerCase() === name) return true;
  return false;
}

/**
 * Turns any body Node's fetch accepts into `{ bytes }` (known bytes, sent whole) or `{ stream }`
 * (streamed to the worker as it reads); adds content-type when the body implies one.
 */
function readBody(body, flat) {
  if (body === undefined || body === null) return { bytes: null, stream: null };
  if (typeof body === "string") return { bytes: Buffer.from(body, "utf8"), stream: null };
  if (Buffer.isBuffer(body)) return { bytes: body, stream: null };
  if (ArrayBuffer.isView(body)) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength), stream: null };
  if (body instanceof ArrayBuffer) return { bytes: Buffer.from(body), stream: null };
  if (body instanceof ReadableStream) {
    if (body.locked) throw new TypeError("dispatch: request.body is a ReadableStream that is locked (already being read)");
    return { bytes: null, stream: body };
  }
  if (body instanceof URLSearchParams) {
    if (!hasHeader(flat, "content-type")) flat.push("content-type", "application/x-www-form-urlencoded;charset=UTF-8");
    return { bytes: Buffer.from(body.toString(), "utf8"), stream: null };
  }
  if (body instanceof Blob || body instanceof FormData) {
    // Node's own Response knows each one's content-type (a multipart boundary for FormData).
    const response = new Response(body);
    const type = response.headers.get("content-type");
    if (type && !hasHeader(flat, "content-type")) flat.push("content-type", type);
    return { bytes: null, stream: response.body };
  }
  throw new TypeError(`dispatch: request.body must be a string, Buffer, ArrayBuffer, typed array, Blob, FormData, URLSearchParams or ReadableStream, got ${describe(body)}`);
}

/** Normalises dispatch()'s `input` into the native request shape. */
function toNativeRequest(input) {
  // A plain object is no Request: it is not asked (see headerList: that loads Node's fetch classes).
  if (!isPlainObject(input) && input instanceof Request) {
    const headers = [];
    for (const [name, value] of input.headers) headers.push(name, value);
    if (input.bodyUsed) throw new TypeError("dispatch: the Request's body has already been read");
    return { method: input.method, url: input.url, headers, body: null, stream: input.body };
  }
  if (typeof input === "string" || input instanceof URL) {
    return { method: "GET", url: parseUrl(input, "the URL"), headers: [], body: null, stream: null };
  }
  if (input === null || typeof input !== "object") {
    throw new TypeError(`dispatch: the request must be a Request, a URL, or { url, method, headers, body }, got ${describe(input)}`);
  }
  const url = parseUrl(input.url, "request.url");
  const method = input.method === undefined ? "GET" : input.method;
  if (typeof method !== "string" || !TOKEN.test(method)) {
    throw new TypeError(`dispatch: invalid request.method ${JSON.stringify(method)}`);
  }
  const upper = method.toUpperCase();
  const normalized = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"].includes(upper) ? upper : method;
  const headers = headerList(input.headers);
  const { bytes, stream } = readBody(input.body, headers);
  if ((bytes !== null || stream !== null) && (normalized === "GET" || normalized === "HEAD")) {
    throw new TypeError(`dispatch: a ${normalized} request cannot have a body (request.body)`);
  }
  // `cf`: what the worker sees as request.cf, laid over its default (Miniflare's) key by key.
  let cf;
  if (input.cf !== undefined) {
    if (input.cf === null || typeof input.cf !== "object" || Array.isArray(input.cf)) throw new TypeError("dispatch: request.cf must be an object (what the worker sees as request.cf)");
    try {
      cf = JSON.stringify(input.cf);
    } catch (error) {
      throw new TypeError(`dispatch: request.cf must be JSON-serializable: ${error.message}`);
    }
  }
  return { method: normalized, url, headers, body: bytes, stream, cf };
}

const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/**
 * Builds Node's Response from the worker's { status, statusText, headers, body }; `stream`
 * (a ReadableStream fed by the worker) is the body when the worker streams it.
 */
/** The CPU time (ms) each answer's event had used when it responded, for tail consumers' `cpuTime`. */
const cpuTimes = new WeakMap();
/** The header list (flat: name, value, …) each answer had in the worker. */
const rawHeaders = new WeakMap();

/**
 * A header value as an HTTP client receives it from workerd: a value with characters beyond
 * Latin-1 (workerd sends its UTF-8 bytes) as those bytes, one character each, as Node's HTTP
 * parser gives them. (Node's Headers takes nothing else.)
 */
const byteString = (value) => (/[^\x00-\xff]/.test(value) ? Buffer.from(value, "utf8").toString("latin1") : value);

/** A Headers' entries as a flat list (name, value, …), each Set-Cookie its own entry (Node's iteration joins them). */
function flatHeaders(headers) {
  const flat = [];
  for (const [name, value] of headers) if (name !== "set-cookie") flat.push(name, value);
  for (const cookie of headers.getSetCookie()) flat.push("set-cookie", cookie);
  return flat;
}

/** An answer's body: the worker's stream or bytes, or null (a null-body status, a HEAD: its stream is cancelled). */
function answerBody(outcome, method, stream) {
  const withoutBody = NULL_BODY_STATUS.has(outcome.status) || method === "HEAD";
  if (withoutBody && stream !== null) stream.cancel("the response has no body").catch(() => {});
  return withoutBody ? null : stream ?? outcome.body ?? null;
}

/**
 * A service binding's fetch() (`args`: its url, method and flat header list; `bytes`: its body)
 * answered by `answer(request)` with a Response, in callService's answer shape: status, text and
 * headers as JSON, the body whole.
 */
async function fetchAnsweredBy(answer, args, bytes) {
  const headers = new Headers();
  for (let i = 0; i + 1 < args.headers.length; i += 2) headers.append(args.headers[i], args.headers[i + 1]);
  const response = await answer(new Request(args.url, { method: args.method, headers, body: bytes ?? undefined }));
  const flat = flatHeaders(response.headers);
  const body = response.body === null ? null : Buffer.from(await response.arrayBuffer());
  return { json: JSON.stringify({ status: response.status, statusText: response.statusText, headers: flat }), bytes: body };
}

function toNodeResponse(outcome, method, stream = null) {
  const body = answerBody(outcome, method, stream);
  const init = { status: outcome.status, statusText: outcome.statusText };
  // Whole bytes (most answers) skip the byte stream Node's constructor would build for them. (An
  // empty body stays Node's: its stream closes a microtask after construction, visible in its state.)
  const buffered = body !== null && stream === null && body.byteLength > 0;
  const response = buffered ? bufferedResponse(body, init) : new Response(body, init);
  const headers = response.headers;
  const flat = outcome.headers;
  for (let i = 0; i + 1 < flat.length; i += 2) headers.append(flat[i], byteString(flat[i + 1]));
  if (typeof outcome.cpuMs === "number") cpuTimes.set(response, outcome.cpuMs);
  // The worker's own header list, for a caller worker (lib/bindings.js callService): its values
  // as they were, where Node's Headers hold bytes.
  rawHeaders.set(response, flat);
  return response;
}

/**
 * Marks a dispatch() input whose caller writes the answer to Node's http server itself (the dev
 * server's bridge, lib/project/dev.js): the answer is then a plain object, `{ [RAW_ANSWER]: true,
 * status, statusText, headers, body }` — `headers` the flat list (name, value, …) that Node's
 * Headers would give through flatHeaders() (names in lower case and sorted, repeated names joined
 * with ", ", each Set-Cookie its own entry last), `body` whole bytes, a ReadableStream or null —
 * so that no Node Response is made: the first one makes Node load its fetch classes (undici,
 * 20-30 ms on Node 24), on the path to a dev server's first answer. An answer Node's Response
 * would refuse or change in another way (a status outside 200-599, a header it rejects) is
 * Node's Response as usual, so that the outcome is the same.
 */
const RAW_ANSWER = Symbol("workerbox.rawAnswer");

/** A status text Node's Response takes (HTTP's reason-phrase). */
const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** HTTP whitespace at either end of a header value, which Node's Headers strips. */
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;

/** The worker's header list as flatHeaders(new Headers(list)) gives it, or null when Node's Headers would refuse one. */
function answerHeaderLines(flat) {
  const joined = new Map();
  const cookies = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i].toLowerCase();
    const value = byteString(flat[i + 1]).replace(EDGE_WHITESPACE, "");
    if (!TOKEN.test(name) || /[\0\r\n]/.test(value)) return null;
    if (name === "set-cookie") cookies.push(value);
    else joined.set(name, joined.has(name) ? `${joined.get(name)}, ${value}` : value);
  }
  const lines = [];
  for (const name of [...joined.keys()].sort()) lines.push(name, joined.get(name));
  for (const cookie of cookies) lines.push("set-cookie", cookie);
  return lines;
}

/** toNodeResponse() for a RAW_ANSWER input: the answer as a plain object (see RAW_ANSWER). */
function toRawAnswer(outcome, method, stream = null) {
  const usual = outcome.status >= 200 && outcome.status <= 599 && REASON_PHRASE.test(outcome.statusText ?? "");
  const headers = usual ? answerHeaderLines(outcome.headers) : null;
  if (headers === null) return toNodeResponse(outcome, method, stream);
  const answer = { [RAW_ANSWER]: true, status: outcome.status, statusText: outcome.statusText ?? "", headers, body: answerBody(outcome, method, stream) };
  if (typeof outcome.cpuMs === "number") cpuTimes.set(answer, outcome.cpuMs);
  rawHeaders.set(answer, outcome.headers);
  return answer;
}

// The methods workerd's HTTP server takes (as sent on the wire: upper case); for any other it
// answers 501 without running the worker.
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "PURGE", "OPTIONS", "TRACE", "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "MSEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "QUERY", "BAN"]);

/** workerd's answer to a request whose method it does not know, or null for a known method. */
function unrecognizedMethod(method) {
  if (KNOWN_METHODS.has(method)) return null;
  return new Response("ERROR: Unrecognized request method.", { status: 501, statusText: "Not Implemented", headers: { "content-type": "text/plain" } });
}

module.exports = { toNativeRequest, toNodeResponse, toRawAnswer, RAW_ANSWER, unrecognizedMethod, flatHeaders, fetchAnsweredBy, cpuTimes, rawHeaders };
