// Request and Response, sharing one Body implementation. A body is whole bytes (from a string,
// buffer, Blob, FormData, …) or a ReadableStream (a user's stream, a request body streamed from
// the host, a fetch() response streamed from the network); bytes become a stream only when
// `body` is asked for, so the common whole-body cases never pay for a stream.

const { Headers, URL, URLSearchParams, ReadableStream } = globalThis;
/** web-streams-polyfill's field keys (symbols, see build.rs). */
const slot = internals.streams.slots;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const keepingBom = new TextDecoder("utf-8", { ignoreBOM: true });
/** MIME types as the MIME Sniffing standard parses them (64_mime.js). */
const { extractMimeType } = internals;

/** A body's text: a leading UTF-8 BOM is dropped from strip_bom_in_read_all_text (2026-01-13). */
function bodyText(bytes) {
  return (internals.feature("strip_bom_in_read_all_text") ? decoder : keepingBom).decode(bytes);
}

const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;
const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);
const REDIRECT_STATUS = new Set([301, 302, 303, 307, 308]);
const NORMALIZED_METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);
// The other methods workerd's HTTP layer knows (see normalizeMethod); any other is an error there.
const KNOWN_METHODS = new Set(["PATCH", "PURGE", "TRACE", "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "MSEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "QUERY", "BAN"]);
const REDIRECT_MODES = new Set(["follow", "manual", "error"]);
const CACHE_MODES = new Set(["no-store", "no-cache", "reload"]);

/**
 * As workerd checks a request's cf against its cache mode when it is sent: `cache: "no-store"`
 * means a cacheTtl of -1, so a cf.cacheTtl of anything else is a TypeError.
 */
internals.checkCacheModeCf = (request) => {
  const cf = request.cf;
  if (request.cache !== "no-store" || cf === null || typeof cf !== "object" || !("cacheTtl" in cf)) return;
  if (cf.cacheTtl !== -1) throw new TypeError(`CacheTtl: ${String(cf.cacheTtl)}, is not compatible with cache: no-store header.`);
};

// ---- Body ------------------------------------------------------------------------------------

/**
 * A body: whole bytes, or a ReadableStream (from `new Response(stream)`, or made on demand when
 * `body` is read), and whether it has been read.
 */
/** Whether a stream was ever read from or cancelled (the Streams Standard's [[disturbed]]). */
function disturbed(stream) {
  return stream[slot._disturbed] === true;
}

/** A stream with no more data that is locked and disturbed: what a read body's `body` is. */
function spentStream() {
  const stream = internals.internalStream({ start: (controller) => controller.close() });
  stream.getReader().read();
  return stream;
}

class BodyState {
  constructor(bytes, stream = null) {
    this.bytes = bytes; // Uint8Array or null
    this.stream = stream; // ReadableStream or null
    this.used = false;
    /** The host made the body and nothing else refers to it (see BodyState.fromHost). */
    this.exclusive = false;
    /**
     * The request it belongs to (src/js/52_io_owner.js): bytes, and the runtime's streams, are
     * workerd's I/O objects; a stream the worker made is not (read from anywhere, as in workerd).
     */
    this.owner = stream === null || internals.internalStreams.has(stream) ? internals.ioOwner() : null;
    if (stream !== null) internals.ownStream(stream, this.owner);
  }
  /**
   * A body the host hands over (an incoming request's, a fetch() response's): its bytes or its
   * stream's chunks were made for it alone, so reading it whole may hand them out without a
   * copy, until a clone shares them.
   */
  static fromHost(bytes, stream = null) {
    const body = new BodyState(bytes, stream);
    body.exclusive = true;
    return body;
  }
  get empty() {
    return this.bytes === null && this.stream === null;
  }
  /** Whether the body can no longer be read: read already, or its stream locked or disturbed. */
  get unusable() {
    return this.used || (this.stream !== null && (this.stream.locked || disturbed(this.stream)));
  }
  /** The body as a ReadableStream of Uint8Arrays, or null when there is no body. */
  get readable() {
    if (this.stream === null && this.used) {
      // Whole bytes already consumed: the body is a stream that was read to its end.
      this.stream = spentStream();
      this.bytes = null;
    }
    if (this.stream === null && this.bytes !== null) {
      this.stream = internals.ownStream(internals.bytesStream(this.bytes), this.owner);
      this.bytes = null;
    }
    return this.stream;
  }
  clone() {
    internals.checkIo(this.owner, "ReadableStreamSource");
    if (this.unusable) throw new TypeError("Body has already been used; it cannot be cloned.");
    this.exclusive = false;
    if (this.stream === null) return new BodyState(this.bytes);
    const [mine, theirs] = this.stream.tee();
    this.stream = internals.ownStream(mine, this.owner);
    const copy = new BodyState(null, theirs);
    copy.owner = this.owner;
    internals.ownStream(theirs, this.owner);
    return copy;
  }
  /** Hands the body over as it is (null, bytes, or a stream for the caller to read), marking it used. */
  take() {
    if (this.unusable) {
      throw new TypeError("Body has already been used. It can only be read once.");
    }
    this.used = !this.empty;
    return this.stream ?? this.bytes;
  }
  /** Reads the whole body, marking it used; `sizeHint`: the length its headers declare, if any. */
  async consume(sizeHint = null) {
    internals.checkIo(this.owner, "ReadableStreamSource");
    if (this.unusable) {
      throw new TypeError("Body has already been used. It can only be read once.");
    }
    this.used = !this.empty;
    if (this.stream === null) {
      const bytes = this.bytes ?? new Uint8Array(0);
      if (this.exclusive && wholeBuffer(bytes)) freshBytes.add(bytes);
      return bytes;
    }
    return readAll(this.stream, true, sizeHint, this.exclusive);
  }
}

/**
 * Byte arrays readAll made itself (nothing else refers to their buffers), so that arrayBuffer()
 * and bytes() can hand them out without another copy: a 95 MB body read with arrayBuffer() is
 * held once, not three times, under limits.memoryMb.
 */
const freshBytes = new WeakSet();

/** Whether a Uint8Array covers its whole buffer. */
const wholeBuffer = (bytes) => bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;

/** The declared length of a body, as a number of bytes, or null. */
function declaredLength(headers) {
  const value = headers?.get("content-length");
  if (value === null || value === undefined || !/^\d{1,16}$/.test(value)) return null;
  return Number(value);
}

/**
 * Reads a stream of byte chunks into one Uint8Array. A body (`strict`) takes only buffers, as
 * workerd's does: a string chunk is a TypeError there; binding values also take strings.
 */
async function readAll(stream, strict = false, sizeHint = null, exclusive = false) {
  let chunks = [];
  // With the length known (a body's Content-Length), the bytes go into one array as they come,
  // and each chunk can be collected at once: the body is held about once, not twice, while it
  // is read. A declared length the budget cannot hold, or that turns out wrong, falls back to
  // collecting the chunks. (A host body that comes as one chunk of that length is used as it is.)
  let whole = null;
  let filled = 0;
  let first = true;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" && !strict ? encoder.encode(chunk)
      : ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
      : chunk instanceof ArrayBuffer ? new Uint8Array(chunk)
      : null;
    if (bytes === null) throw new TypeError("This ReadableStream did not return bytes: a body stream must produce ArrayBuffer or ArrayBufferView chunks.");
    if (first) {
      first = false;
      if (sizeHint !== null && sizeHint > 65536 && !(exclusive && bytes.byteLength >= sizeHint)) {
        try {
          whole = new Uint8Array(sizeHint);
        } catch {
          whole = null;
        }
      }
    }
    if (whole !== null && filled + bytes.byteLength <= whole.byteLength) {
      whole.set(bytes, filled);
      filled += bytes.byteLength;
      continue;
    }
    if (whole !== null) {
      chunks = [whole.subarray(0, filled)];
      whole = null;
    }
    chunks.push(bytes);
  }
  if (whole !== null) {
    if (filled === whole.byteLength) {
      freshBytes.add(whole);
      return whole;
    }
    chunks = [whole.subarray(0, filled)];
  }
  const all = internals.concatBytes(chunks);
  // concat made a new array, or the one chunk is the host's own (exclusive: not shared by a tee).
  if (chunks.length !== 1 || (exclusive && wholeBuffer(all))) freshBytes.add(all);
  return all;
}
internals.readAllBytes = readAll;

/**
 * workerd's warning for a FormData body given with a Content-Type of the caller's own (it lacks
 * the boundary only the FormData serializer knows), logged when something listens for warnings
 * (internals.logWarning, src/js/89_tail.js).
 */
function warnFormDataType() {
  internals.logWarning?.(
    "A FormData body was provided with a custom Content-Type header when constructing a Request or Response object. This will prevent the recipient of the Request or Response from being able to parse the body. Consider omitting the custom Content-Type header.",
  );
}

/** Extracts a body from a BodyInit: bytes or a stream, and the content-type they imply. */
function extractBody(init) {
  if (init === undefined || init === null) return { bytes: null, stream: null, type: null };
  if (init instanceof ReadableStream) {
    if (init.locked || disturbed(init)) throw new TypeError("The ReadableStream given as a body is locked or has been read from.");
    return { bytes: null, stream: init, type: null };
  }
  if (typeof init === "string") return { bytes: encoder.encode(init), stream: null, type: "text/plain;charset=UTF-8" };
  if (init instanceof ArrayBuffer) return { bytes: new Uint8Array(init.slice(0)), stream: null, type: null };
  if (ArrayBuffer.isView(init)) {
    return { bytes: new Uint8Array(init.buffer.slice(init.byteOffset, init.byteOffset + init.byteLength)), stream: null, type: null };
  }
  if (init instanceof URLSearchParams || internals.isLegacySearchParams(init)) {
    return { bytes: encoder.encode(init.toString()), stream: null, type: "application/x-www-form-urlencoded;charset=UTF-8" };
  }
  if (init instanceof globalThis.Blob) return { bytes: internals.blobBytes(init).slice(), stream: null, type: init.type || null };
  if (init instanceof globalThis.FormData) {
    const { bytes, type } = internals.encodeMultipart(init);
    return { bytes, stream: null, type };
  }
  const iterable = iterableBody(init);
  if (iterable !== null) return { bytes: null, stream: iterable, type: null };
  return { bytes: encoder.encode(internals.domString(init)), stream: null, type: "text/plain;charset=UTF-8" };
}

/**
 * From fetch_iterable_type_support (2026-02-19) a body may be a sync or async iterable of bytes
 * (an Array, a generator, …): a stream of its values. With its override adjustment (from
 * 2026-01-15 with that flag) a sync iterable that is not an Array but has its own toString or
 * @@toPrimitive is text, as before. Null: the body is text.
 */
function iterableBody(init) {
  if (!internals.feature("fetch_iterable_type_support") || init === null || typeof init !== "object" || init instanceof String) return null;
  const asyncIterator = init[Symbol.asyncIterator];
  if (asyncIterator === undefined || asyncIterator === null) {
    if (internals.feature("fetch_iterable_type_support_override_adjustment") && !Array.isArray(init)) {
      if (init.toString !== Object.prototype.toString || init[Symbol.toPrimitive] !== Object.prototype[Symbol.toPrimitive]) return null;
    }
    const iterator = init[Symbol.iterator];
    if (iterator === undefined || iterator === null) return null;
  }
  return internals.streams.ReadableStream.from(init);
}

/** The body-reading methods Request and Response share; `state` finds an instance's BodyState. */
function defineBodyMethods(Class, state, headers) {
  const methods = {
    get body() {
      return state(this).readable;
    },
    get bodyUsed() {
      const body = state(this);
      return body.used || (body.stream !== null && disturbed(body.stream));
    },
    async arrayBuffer() {
      const bytes = await state(this).consume(declaredLength(headers(this)));
      if (freshBytes.has(bytes)) return bytes.buffer;
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    },
    async bytes() {
      const bytes = await state(this).consume(declaredLength(headers(this)));
      if (freshBytes.has(bytes)) return bytes;
      return new Uint8Array(bytes);
    },
    async text() {
      return bodyText(await state(this).consume());
    },
    async json() {
      return JSON.parse(bodyText(await state(this).consume()));
    },
    async blob() {
      const bytes = await state(this).consume();
      const type = headers(this).get("content-type") ?? "";
      // blob_standard_mime_type (2024-06-03): the MIME type serialized; before, the header as is.
      if (!internals.feature("blob_standard_mime_type")) return internals.newBlob(bytes.slice(), type, true);
      return internals.newBlob(bytes.slice(), extractMimeType(type), true);
    },
    async formData() {
      const bytes = await state(this).consume();
      return internals.parseFormData(bytes, headers(this).get("content-type"));
    },
  };
  for (const name of Object.getOwnPropertyNames(methods)) {
    const descriptor = Object.getOwnPropertyDescriptor(methods, name);
    descriptor.enumerable = false;
    Object.defineProperty(Class.prototype, name, descriptor);
  }
}

function illegal(what) {
  return new TypeError(`Illegal invocation: ${what} called on an object that is not a ${what.split(".")[0]}`);
}

// ---- Request ---------------------------------------------------------------------------------

/**
 * `request.cf` of an incoming request the host gave no `cf` for: Miniflare's fallback (what
 * `wrangler dev` shows when it cannot fetch a real one), a request from Austin, Texas, through
 * DFW. A host-supplied `cf` (dispatch's `cf`) is laid over it, key by key, as Miniflare does.
 */
const DEFAULT_CF = JSON.stringify({
  asOrganization: "",
  asn: 395747,
  colo: "DFW",
  city: "Austin",
  region: "Texas",
  regionCode: "TX",
  metroCode: "635",
  postalCode: "78701",
  country: "US",
  continent: "NA",
  timezone: "America/Chicago",
  latitude: "30.27130",
  longitude: "-97.74260",
  clientTcpRtt: 0,
  httpProtocol: "HTTP/1.1",
  requestPriority: "weight=192;exclusive=0",
  tlsCipher: "AEAD-AES128-GCM-SHA256",
  tlsVersion: "TLSv1.3",
  tlsClientAuth: {
    certPresented: "0", certVerified: "NONE", certRevoked: "0", certIssuerDN: "", certSubjectDN: "",
    certIssuerDNRFC2253: "", certSubjectDNRFC2253: "", certIssuerDNLegacy: "", certSubjectDNLegacy: "",
    certSerial: "", certIssuerSerial: "", certSKI: "", certIssuerSKI: "", certFingerprintSHA1: "",
    certFingerprintSHA256: "", certNotBefore: "", certNotAfter: "",
  },
  edgeRequestKeepAliveStatus: 0,
  clientTrustScore: 99,
  botManagement: {
    corporateProxy: false, verifiedBot: false, ja3Hash: "25b4882c2bcb50cd6b469ff28c596742",
    staticResource: false, detectionIds: [], score: 99,
  },
});

function deepFreeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze(value[key]);
  }
  return value;
}

/** Marks a request whose `cf` is not waiting to be made from the host's JSON. */
const NO_CF_JSON = Symbol("no cf JSON");

/** An incoming request's `cf`: the host's (JSON) over the default, deeply frozen, as in workerd. */
function incomingCf(cfJson) {
  const cf = JSON.parse(DEFAULT_CF);
  if (typeof cfJson === "string") {
    const given = JSON.parse(cfJson);
    if (given !== null && typeof given === "object" && !Array.isArray(given)) Object.assign(cf, given);
  }
  return deepFreeze(cf);
}

/** A Request's own copy of a `cf` object (JSON round trip, so never frozen), as in workerd. */
function copyCf(cf) {
  return cf !== null && typeof cf === "object" ? JSON.parse(JSON.stringify(cf)) : cf;
}

/**
 * A method as workerd takes it: only the methods its HTTP layer knows (a custom method, CONNECT or
 * M-SEARCH is a TypeError there; TRACE is taken); the six the Fetch standard normalizes are
 * upper-cased; with upper_case_all_http_methods (2024-10-14) so is any other ("patch" is
 * "PATCH"), and before it such a method in lower case is a TypeError, as in workerd then.
 */
function normalizeMethod(method) {
  method = internals.domString(method);
  const upper = method.toUpperCase();
  if (NORMALIZED_METHODS.has(upper)) return upper;
  if (!KNOWN_METHODS.has(upper)) throw new TypeError(`Invalid HTTP method string: ${method}`);
  if (upper === method) return method;
  if (!internals.feature("upper_case_all_http_methods")) {
    throw new TypeError(`Invalid HTTP method string: ${method} (write "${upper}", or use the upper_case_all_http_methods compatibility flag)`);
  }
  return upper;
}

/**
 * A nullable dictionary member `field` of `dict` that must pass `isType`: a value of another
 * type is a TypeError, or, before dont_substitute_null_on_type_error (2022-06-01), taken as null
 * (workerd's optional-value conversion let a failed conversion through as null then).
 */
function nullOnTypeError(value, isType, field, dict, type) {
  if (value === undefined || value === null || isType(value)) return value;
  if (!internals.feature("dont_substitute_null_on_type_error")) return null;
  throw new TypeError(`Incorrect type for the '${field}' field on '${dict}': the provided value is not of type '${type}'.`);
}

class Request {
  #method = "GET";
  #url;
  #headers;
  #body;
  #redirect = "follow";
  #cf = undefined;
  /** An incoming request's `cf` as the host sent it, until first read (see #cfValue). */
  #cfJson = NO_CF_JSON;
  #signal = null;
  #cache = undefined;

  constructor(input, init = {}) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Request': 1 argument required, but only 0 present.");
    if (init === null || (typeof init !== "object" && init !== undefined)) init = {};
    init ??= {};
    let inputBody = null;
    if (input instanceof Request) {
      this.#url = input.#url;
      this.#method = input.#method;
      this.#headers = new Headers(input.#headers);
      this.#redirect = input.#redirect;
      this.#cf = copyCf(input.#cfValue());
      this.#signal = input.#signal;
      this.#cache = input.#cache;
      if (init.body === undefined || init.body === null) {
        if (input.#body.unusable) throw new TypeError("Failed to construct 'Request': the input Request's body has already been used.");
        inputBody = input.#body;
        // Constructing from a Request takes its body.
        if (!inputBody.empty) {
          const taken = new BodyState(null);
          taken.used = true;
          input.#body = taken;
        }
      }
    } else if (!internals.feature("fetch_standard_url")) {
      // Before fetch_standard_url (2024-06-03) workerd kept the URL as given here; fetch() parsed it.
      this.#url = internals.domString(input);
      this.#headers = new Headers();
    } else {
      const url = internals.domString(input);
      const parsed = URL.parse(url);
      if (parsed === null) throw new TypeError(`Invalid URL: "${url}"`);
      this.#url = parsed.href;
      this.#headers = new Headers();
    }
    if (init.method !== undefined) this.#method = normalizeMethod(init.method);
    if (init.headers !== undefined) this.#headers = new Headers(init.headers);
    if (init.redirect !== undefined) {
      const mode = internals.domString(init.redirect);
      if (!REDIRECT_MODES.has(mode)) throw new TypeError(`Invalid redirect mode "${mode}"; expected "follow", "manual" or "error".`);
      this.#redirect = mode;
    }
    if (init.cf !== undefined) this.#cf = copyCf(init.cf);
    if (init.cache !== undefined) {
      // workerd's cache modes; any other (only-if-cached, default, …) is a TypeError there.
      // The option came with cache_option_enabled (2024-11-11), "no-cache" with
      // cache_no_cache_enabled, "reload" with cache_reload_enabled. (workerd's messages, word for word.)
      if (!internals.feature("cache_option_enabled")) throw new Error("The 'cache' field on 'RequestInitializerDict' is not implemented.");
      const mode = internals.domString(init.cache);
      const off = (mode === "no-cache" && !internals.feature("cache_no_cache_enabled")) || (mode === "reload" && !internals.feature("cache_reload_enabled"));
      if (!CACHE_MODES.has(mode) || off) throw new TypeError(`Unsupported cache mode: ${mode}`);
      this.#cache = mode;
    }
    // workerd: cf.cacheControl excludes cf.cacheTtl and the cache option (which maps to a TTL).
    const cf = init.cf;
    if (cf !== null && typeof cf === "object" && "cacheControl" in cf && cf.cacheControl !== undefined) {
      if ("cacheTtl" in cf && cf.cacheTtl !== undefined) throw new TypeError("The 'cacheControl' and 'cacheTtl' options on cf are mutually exclusive. Use 'cacheControl' for explicit Cache-Control header directives, or 'cacheTtl' for a simplified TTL, but not both.");
      if (init.cache !== undefined) throw new TypeError("The 'cacheControl' option on cf cannot be used together with the 'cache' request option. The 'cache' option ('no-store'/'no-cache') maps to cache TTL behavior internally, which conflicts with explicit Cache-Control directives.");
    }
    // signal: null drops the input Request's signal (as does one of the wrong type before
    // dont_substitute_null_on_type_error, 2022-06-01).
    const signal = nullOnTypeError(init.signal, (value) => value instanceof globalThis.AbortSignal, "signal", "RequestInitializerDict", "AbortSignal");
    if (signal === null) this.#signal = null;
    if (signal !== undefined && signal !== null) this.#signal = signal;

    if (init.body !== undefined && init.body !== null) {
      if (this.#method === "GET" || this.#method === "HEAD") {
        throw new TypeError("Request with a GET or HEAD method cannot have a body.");
      }
      const { bytes, stream, type } = extractBody(init.body);
      if (type !== null && !this.#headers.has("content-type")) this.#headers.append("content-type", type);
      else if (type !== null && type.startsWith("multipart/form-data")) warnFormDataType();
      this.#body = new BodyState(bytes, stream);
    } else {
      if (inputBody !== null && !inputBody.empty && (this.#method === "GET" || this.#method === "HEAD")) {
        throw new TypeError("Request with a GET or HEAD method cannot have a body.");
      }
      this.#body = inputBody ?? new BodyState(null);
    }
  }

  static {
    defineBodyMethods(
      Request,
      (request) => {
        if (!(#body in request)) throw illegal("Request.body");
        return request.#body;
      },
      (request) => request.#headers,
    );
    internals.newIncomingRequest = (method, url, flatHeaders, body, cfJson) => Request.#incoming(method, url, flatHeaders, body, cfJson);
    internals.asIncoming = (request) => Request.#asIncoming(request);
    /** A request's body for sending on: null, bytes, or a stream; marks it used. */
    internals.takeRequestBody = (request) => request.#body.take();
    /** Requests whose body (bytes now) came from a stream of unknown length: sent without a length. */
    internals.bodyLengthUnknown = new WeakSet();
    /**
     * Whether a request's body has a length known before it is read, as workerd knows it (and
     * sends it as content-length): bytes or text, a Blob's or another whole body's stream not
     * read from yet (true: its length is what it holds), a FixedLengthStream's or a stream made
     * with `expectedLength` (that number). A stream of unknown length, or no body: undefined.
     */
    internals.requestBodyLength = (request) => {
      if (internals.bodyLengthUnknown.has(request)) return undefined;
      const body = request.#body;
      if (body.stream === null) return body.bytes === null ? undefined : true;
      const fixed = internals.fixedLengths.get(body.stream)?.expected;
      if (fixed !== undefined) return fixed;
      return internals.sizedStreams.has(body.stream) && !disturbed(body.stream) ? true : undefined;
    };
  }

  static #incoming(method, url, flatHeaders, body, cfJson) {
    // A trusted request from the host: fields are already valid. Build it through the
    // constructor (so private fields exist) with the cheapest inputs, then fill in the rest.
    const request = new Request(url);
    request.#method = method;
    const list = [];
    for (let i = 0; i < flatHeaders.length; i += 2) list.push([flatHeaders[i].toLowerCase(), flatHeaders[i + 1]]);
    request.#headers = internals.headersFromList(list);
    Request.#asIncoming(request);
    // A number is the id of a body the host streams in as the worker reads it.
    request.#body = typeof body === "number" ? BodyState.fromHost(null, internals.hostBodyStream(body)) : BodyState.fromHost(body);
    // Built on first read: most handlers never look at it.
    request.#cfJson = cfJson;
    return request;
  }

  /**
   * `request` as a handler receives it, from the host or through a fetch into an entrypoint:
   * workerd's incoming requests do not follow redirects (fetch(request) passes a 3xx on), and
   * their headers are immutable.
   */
  static #asIncoming(request) {
    request.#redirect = "manual";
    internals.headersSetImmutable(request.#headers);
    return request;
  }

  /** The request's `cf`; an incoming request's is made from the host's JSON when first read. */
  #cfValue() {
    if (this.#cfJson !== NO_CF_JSON) {
      this.#cf = incomingCf(this.#cfJson);
      this.#cfJson = NO_CF_JSON;
    }
    return this.#cf;
  }

  get method() {
    return this.#method;
  }
  get url() {
    return this.#url;
  }
  get headers() {
    return this.#headers;
  }
  get redirect() {
    return this.#redirect;
  }
  /** workerd's: the Fetcher a request is bound to, which a script's own Requests never are. */
  get fetcher() {
    return null;
  }
  get cf() {
    return this.#cfValue();
  }
  get signal() {
    this.#signal ??= internals.newAbortSignal();
    return this.#signal;
  }
  get keepalive() {
    return false;
  }
  get integrity() {
    return "";
  }
  get cache() {
    return this.#cache;
  }
  clone() {
    const copy = new Request(this.#url, { method: this.#method, headers: this.#headers, redirect: this.#redirect, cf: this.#cfValue() });
    copy.#signal = this.#signal;
    copy.#cache = this.#cache;
    copy.#body = this.#body.clone();
    return copy;
  }
  get [Symbol.toStringTag]() {
    return "Request";
  }
}

// ---- Response --------------------------------------------------------------------------------

/**
 * A Response's status as workerd converts it (a 32-bit integer: a fraction is dropped, NaN and
 * Infinity are 0, beyond the 32-bit range a TypeError).
 */
function toStatus(value) {
  let status = Number(value);
  if (!Number.isFinite(status)) status = 0;
  status = Math.trunc(status);
  if (status < -2147483648 || status > 2147483647) throw new TypeError("Value out of range. Must be between -2147483648 and 2147483647 (inclusive).");
  return status;
}

function checkStatus(status) {
  if (!Number.isInteger(status) || ((status < 200 || status > 599) && status !== 101)) {
    throw new RangeError("Responses may only be constructed with status codes in the range 200 to 599, inclusive.");
  }
}

// The status text a Response has when none was given, as workerd fills it in (RFC 7231's
// reason phrases, else the status code's class).
const STATUS_TEXT = {
  100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
  200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
  300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified", 305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
  400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
  408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Payload Too Large", 414: "URI Too Long", 415: "Unsupported Media Type",
  416: "Range Not Satisfiable", 417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
  426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
  500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
  506: "Variant Also Negotiates", 507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
};
const STATUS_CLASS = { 2: "Successful", 3: "Redirection", 4: "Client Error", 5: "Server Error" };
const defaultStatusText = (status) => STATUS_TEXT[status] ?? STATUS_CLASS[Math.floor(status / 100)] ?? "";

class Response {
  #status = 200;
  // null: none was given, so the status's default (see `defaultStatusText`).
  #statusText = null;
  #headers;
  #body;
  #type = "default";
  #url = "";
  #redirected = false;
  #webSocket = null;
  #cf = undefined;

  constructor(body = null, init = {}) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    init ??= {};
    if (typeof init !== "object") throw new TypeError("Failed to construct 'Response': init must be an object.");
    const status = init.status === undefined ? 200 : toStatus(init.status);
    checkStatus(status);
    const webSocket = nullOnTypeError(init.webSocket, internals.isWebSocket, "webSocket", "InitializerDict", "WebSocket") ?? null;
    if (status === 101 && webSocket === null) throw new RangeError("Failed to construct 'Response': a Response with status 101 needs a webSocket (one end of a WebSocketPair).");
    if (webSocket !== null && status !== 101) throw new RangeError("Failed to construct 'Response': a webSocket can only be returned with status 101.");
    this.#webSocket = webSocket;
    const statusText = init.statusText === undefined ? null : internals.domString(init.statusText);
    if (statusText !== null && !REASON_PHRASE.test(statusText)) throw new TypeError(`Failed to construct 'Response': Invalid statusText "${statusText}".`);
    this.#status = status;
    this.#statusText = statusText;
    // workerd's ResponseInit takes a `cf` object too, kept as a copy and given back as `cf`.
    if (init.cf !== undefined && init.cf !== null) this.#cf = copyCf(init.cf);
    this.#headers = new Headers(init.headers);
    if (body !== null && body !== undefined) {
      const { bytes, stream, type } = extractBody(body);
      if (NULL_BODY_STATUS.has(status)) {
        // As workerd: a zero-length buffer-backed body ("", an empty buffer, Blob or
        // URLSearchParams) is taken as no body (and no content-type); any other body is refused.
        if (stream !== null || bytes.byteLength > 0) throw new TypeError("Response with null body status (101, 204, 205, or 304) cannot have a body.");
        internals.logWarning?.(
          `Constructing a Response with a null body status (${status}) and a non-null, zero-length body. This is technically incorrect, and we recommend you update your code to explicitly pass in a \`null\` body, e.g. \`new Response(null, { status: ${status}, ... })\`. (We continue to allow the zero-length body behavior because it was previously the only way to construct a Response with a null body status. This behavior may change in the future.)`,
        );
        this.#body = new BodyState(null);
        return;
      }
      if (type !== null && !this.#headers.has("content-type")) this.#headers.append("content-type", type);
      else if (type !== null && type.startsWith("multipart/form-data")) warnFormDataType();
      this.#body = new BodyState(bytes, stream);
    } else {
      this.#body = new BodyState(null);
    }
  }

  static {
    defineBodyMethods(
      Response,
      (response) => {
        if (!(#body in response)) throw illegal("Response.body");
        return response.#body;
      },
      (response) => response.#headers,
    );
    /** A Response as fetch() returns it: any status the server sent, immutable headers, its URL. */
    internals.newFetchResponse = (status, statusText, flatHeaders, body, url, redirected, type = "basic") => {
      const response = new Response(null);
      response.#status = status;
      response.#statusText = statusText;
      const list = [];
      for (let i = 0; i < flatHeaders.length; i += 2) list.push([flatHeaders[i].toLowerCase(), flatHeaders[i + 1]]);
      response.#headers = internals.headersSetImmutable(internals.headersFromList(list));
      if (NULL_BODY_STATUS.has(status)) body = null;
      response.#body = body instanceof ReadableStream ? BodyState.fromHost(null, body) : BodyState.fromHost(body);
      response.#url = url;
      response.#redirected = redirected;
      response.#type = type;
      return response;
    };
    /** What the host gets: status, statusText, raw header list, and the body (bytes or a stream). */
    internals.responseParts = (response) => {
      const flat = [];
      for (const [k, v] of internals.headersList(response.#headers)) flat.push(k, v);
      const body = response.#body.take();
      // A FixedLengthStream's body is sent with its length, as workerd sends it.
      internals.addFixedLength(flat, body, response.#headers);
      return { status: response.#status, statusText: response.statusText, headers: flat, body, webSocket: response.#webSocket };
    };
  }

  static json(data, init = {}) {
    // What JSON.stringify cannot represent (undefined, a function, a symbol) is the text "undefined", as in workerd.
    const text = JSON.stringify(data) ?? "undefined";
    const response = new Response(text, init);
    if (!init || init.headers === undefined || !new Headers(init.headers).has("content-type")) {
      response.#headers.set("content-type", "application/json");
    }
    return response;
  }

  static redirect(url, status = 302) {
    // Before response_redirect_url_standard (2023-03-14) the URL went through KJ's parser.
    const standard = internals.feature("response_redirect_url_standard");
    if (standard) url = internals.domString(url);
    const parsed = standard ? URL.parse(url) : { href: internals.legacyHref(url) };
    if (parsed === null || parsed.href === null) throw new TypeError(`Response.redirect: invalid URL "${String(url)}"`);
    status = Number(status);
    if (!REDIRECT_STATUS.has(status)) throw new RangeError(`Response.redirect: invalid status ${status}; expected 301, 302, 303, 307 or 308.`);
    const response = new Response(null, { status });
    response.#headers.set("location", parsed.href);
    internals.headersSetImmutable(response.#headers);
    return response;
  }

  static error() {
    const response = new Response(null);
    response.#status = 0;
    response.#type = "error";
    internals.headersSetImmutable(response.#headers);
    return response;
  }

  get status() {
    return this.#status;
  }
  get statusText() {
    return this.#statusText ?? defaultStatusText(this.#status);
  }
  get ok() {
    return this.#status >= 200 && this.#status <= 299;
  }
  get headers() {
    return this.#headers;
  }
  get type() {
    return this.#type;
  }
  get url() {
    return this.#url;
  }
  get redirected() {
    return this.#redirected;
  }
  /** The WebSocket end of a 101 response, else null. */
  get webSocket() {
    return this.#webSocket;
  }
  get cf() {
    return this.#cf;
  }
  clone() {
    const copy = new Response(null, { status: this.#status === 0 ? 200 : this.#status, statusText: this.#statusText ?? undefined, headers: this.#headers, cf: this.#cf });
    copy.#status = this.#status;
    copy.#type = this.#type;
    copy.#url = this.#url;
    copy.#redirected = this.#redirected;
    copy.#body = this.#body.clone();
    return copy;
  }
  get [Symbol.toStringTag]() {
    return "Response";
  }
}

internals.defineGlobal("Request", Request);
internals.defineGlobal("Response", Response);
