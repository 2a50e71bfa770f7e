// Binding objects in `env`: KV namespaces (production Workers' KV API, with its validation) and
// service bindings (`env.X.fetch`). Every operation becomes `ops.hostCall(binding, method,
// argsJson, bytes)`, answered by the host's handler for that binding.

const { Request, Response, ReadableStream } = globalThis;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Only this file constructs binding objects; `new KVNamespace()` from user code throws. */
const kConstruct = Symbol("construct");

const KEY_LIMIT = 512;
const METADATA_LIMIT = 1024;
const VALUE_LIMIT = 25 * 1024 * 1024;
const LIST_LIMIT = 1000;
const MIN_TTL = 60;

/**
 * Calls the host; resolves to [parsed JSON, Uint8Array | null]. `untimed`: the call waits on a
 * peer (a stream's next chunk, a connect handler's end), so limits.bindingMs does not bound it.
 */
async function hostCall(binding, method, args, bytes = null, untimed = false) {
  const argsJson = JSON.stringify(args);
  // An in-memory embedded store answers at once, on this thread; other bindings go through
  // the scheduler (and the host).
  const inline = ops.storeCallSync(binding, method, argsJson, bytes);
  const [json, payload] = inline ?? (await ops.hostCall(binding, method, argsJson, bytes, untimed));
  return [JSON.parse(json), payload];
}
internals.hostCall = hostCall;

// ---- Bodies streamed between the worker and the host ----------------------------------------

const BODY = "#body";

/** A body stream chunk as bytes; byte streams carry Uint8Arrays, but any buffer is accepted. */
function chunkBytes(chunk) {
  if (chunk instanceof Uint8Array) return chunk;
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  throw new TypeError(`A body stream must produce Uint8Array chunks, but it produced ${chunk === null ? "null" : typeof chunk === "object" ? `a ${chunk.constructor?.name ?? "object"}` : `a ${typeof chunk}`}.`);
}
internals.chunkBytes = chunkBytes;

function reasonText(reason) {
  if (reason === undefined) return "cancelled";
  return reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
}

/** A request body the host streams in: each read asks the host for its next chunk. */
internals.hostBodyStream = (stream) =>
  internals.internalStream({
    type: "bytes",
    async pull(controller) {
      const [answer, bytes] = await hostCall(BODY, "read", { stream });
      if (answer.done) {
        controller.close();
        controller.byobRequest?.respond(0);
      } else if (bytes !== null && bytes.byteLength > 0) {
        controller.enqueue(bytes);
      }
    },
    cancel(reason) {
      return hostCall(BODY, "cancel", { stream, reason: reasonText(reason) }).then(
        () => {},
        () => {},
      );
    },
  });

/** Pumps waiting on their worker stream for the next chunk: how to stop each, by stream id. */
const pumpsByStream = new Map();

/** Stops a pump because the host gave up on its body: it cancels its stream with `reason`. */
class HostCancelled {
  constructor(reason) {
    this.reason = reason;
  }
}

/** Bytes a response body's pump may hold read but not yet taken by the host (its backpressure, with the host's own 64 KiB window). */
const PUMP_AHEAD = 64 * 1024;

/**
 * Sends a response body to the host chunk by chunk. The host answers each write when its
 * reader wants more (backpressure), or with `cancelled` when its reader gave up, which cancels
 * the worker's stream; an error in the worker's stream errors the host's. The stream is read
 * again while a chunk is on its way (up to PUMP_AHEAD bytes read ahead, written one at a time,
 * in order), so one that makes its chunks one by one has each taken as it is made, not several
 * queued ones in one read, as workerd's in-process pump takes them (a caller worker's
 * readAtLeast() sees those chunks).
 */
internals.pumpToHost = async function pumpToHost(stream, body) {
  let reader = null;
  const queue = [];
  let queuedBytes = 0;
  let sending = false;
  /** What stopped the writes: `{ cancelled: true, reason }` (the host's reader gave up) or `{ error }`. */
  let outcome = null;
  let wake = null;
  const woken = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  const sendAll = async () => {
    sending = true;
    while (queue.length > 0 && outcome === null) {
      const bytes = queue[0];
      try {
        const [answer] = await hostCall(BODY, "write", { stream }, bytes);
        if (answer.cancelled) outcome = { cancelled: true, reason: answer.reason };
      } catch (error) {
        outcome = { error };
      }
      // A read the pump waits on meanwhile is given up on (the stream may never give another chunk).
      if (outcome !== null) pumpsByStream.get(stream)?.(outcome.cancelled ? new HostCancelled(outcome.reason) : outcome.error);
      queue.shift();
      queuedBytes -= bytes.byteLength;
      woken();
    }
    sending = false;
    woken();
  };
  /** Waits until the queue is under the bound (`all`: empty); true when the host's reader gave up. */
  const sent = async (all) => {
    while (outcome === null && sending && (all || queuedBytes >= PUMP_AHEAD)) await new Promise((resolve) => (wake = resolve));
    if (outcome !== null && !outcome.cancelled) throw outcome.error;
    return outcome !== null;
  };
  try {
    reader = body.getReader();
    for (;;) {
      let stop;
      const stopped = new Promise((_, reject) => (stop = reject));
      pumpsByStream.set(stream, stop);
      let next;
      try {
        next = await Promise.race([reader.read(), stopped]);
      } finally {
        pumpsByStream.delete(stream);
      }
      const { done, value } = next;
      if (done) break;
      const bytes = chunkBytes(value);
      if (bytes.byteLength === 0) continue;
      queue.push(bytes);
      queuedBytes += bytes.byteLength;
      if (!sending) sendAll();
      if (await sent(false)) {
        await reader.cancel(outcome.reason).catch(() => {});
        return;
      }
    }
    if (await sent(true)) {
      await reader.cancel(outcome.reason).catch(() => {});
      return;
    }
    await hostCall(BODY, "close", { stream });
  } catch (error) {
    if (error instanceof HostCancelled) {
      // The host's reader is already gone: only the worker's stream is left to cancel.
      await reader?.cancel(error.reason).catch(() => {});
      return;
    }
    const [name, message, stack] = internals.errorParts(error);
    hostCall(BODY, "error", { stream, name, message, stack }).catch(() => {});
    reader?.cancel(error).catch(() => {});
  }
};

/**
 * The host gave up on response body `stream` while its pump waits for the worker's stream
 * (limits.bodyIdleMs, lib/bodies.js): the worker's stream is cancelled with `reason`. A pump
 * not waiting on its stream learns it from the answer to its next write.
 */
internals.cancelResponseBody = function cancelResponseBody(stream, reason) {
  const stop = pumpsByStream.get(stream);
  if (stop !== undefined) stop(new HostCancelled(reason));
  return stop !== undefined;
};

/**
 * Called by the native side when nothing is left that could produce another chunk of any
 * response body (no timer, binding call or event): each pump waiting on its stream errors the
 * host's body instead of leaving its reader hanging.
 */
internals.abortStalledBodies = function abortStalledBodies() {
  const error = new TypeError(
    "The worker's response body stalled: its stream is waiting for a chunk, but no timer, I/O or binding call is left that could produce one.",
  );
  const stalled = [...pumpsByStream.values()];
  for (const stop of stalled) stop(error);
  return stalled.length;
};

/** Reads a BodyInit-like value (string, buffer, view, ReadableStream) into bytes. */
async function toBytes(value, what) {
  if (typeof value === "string") return encoder.encode(value);
  if (value instanceof globalThis.Blob) return internals.blobBytes(value).slice();
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  if (value instanceof ReadableStream) return internals.readAllBytes(value);
  throw new TypeError(`${what} must be a string, ArrayBuffer, ArrayBufferView or ReadableStream.`);
}

function kvError(op, status, message) {
  return new Error(`KV ${op} failed: ${status} ${message}`);
}

function checkKey(op, key) {
  if (key === undefined) throw new TypeError(`KV ${op}: a key is required.`);
  key = String(key);
  if (key === "") throw kvError(op, 400, "Key names must not be empty.");
  if (key === "." || key === "..") throw kvError(op, 400, `Illegal key name "${key}". Please use a different name.`);
  const length = encoder.encode(key).byteLength;
  if (length > KEY_LIMIT) throw kvError(op, 414, `UTF-8 encoded length of ${length} exceeds key length limit of ${KEY_LIMIT}.`);
  return key;
}

function decodeValue(bytes, type) {
  switch (type) {
    case "text":
      return decoder.decode(bytes);
    case "json":
      return JSON.parse(decoder.decode(bytes));
    case "arrayBuffer":
      // The host's answer is a buffer of its own, made for this call: handed out as it is (a
      // 25 MiB value is held once under limits.memoryMb, not twice).
      if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes.buffer;
      return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    case "stream":
      return internals.internalStream({
        type: "bytes",
        start(controller) {
          if (bytes.byteLength > 0) controller.enqueue(bytes);
          controller.close();
        },
      });
  }
  throw new TypeError(`Unknown response type "${type}". Possible types are "text", "arrayBuffer", "json", and "stream".`);
}

function readOptions(options) {
  if (options === undefined || options === null) return { type: "text", cacheTtl: undefined };
  if (typeof options === "string") return { type: options, cacheTtl: undefined };
  if (typeof options !== "object") throw new TypeError("KV GET: options must be a type string or an object.");
  return { type: options.type ?? "text", cacheTtl: options.cacheTtl };
}

class KVNamespace {
  #name;
  constructor(token, name) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
  }

  async #get(key, options) {
    key = checkKey("GET", key);
    const { type, cacheTtl } = readOptions(options);
    if (!["text", "json", "arrayBuffer", "stream"].includes(type)) decodeValue(null, type);
    if (cacheTtl !== undefined && !(Number(cacheTtl) >= MIN_TTL)) {
      throw kvError("GET", 400, `Invalid cache_ttl of ${cacheTtl}. Cache TTL must be at least ${MIN_TTL}.`);
    }
    const [found, bytes] = await hostCall(this.#name, "get", { key });
    if (found === null) return { value: null, metadata: null };
    return { value: decodeValue(bytes ?? new Uint8Array(0), type), metadata: found.metadata ?? null };
  }

  async get(key, options) {
    return (await this.#get(key, options)).value;
  }

  async getWithMetadata(key, options) {
    const { value, metadata } = await this.#get(key, options);
    return { value, metadata, cacheStatus: null };
  }

  async put(key, value, options = {}) {
    key = checkKey("PUT", key);
    options ??= {};
    const bytes = await toBytes(value, "KV put() value");
    if (bytes.byteLength > VALUE_LIMIT) throw kvError("PUT", 413, `Value length of ${bytes.byteLength} exceeds limit of ${VALUE_LIMIT}.`);
    const now = Math.floor(Date.now() / 1000);
    let expiration;
    if (options.expirationTtl !== undefined) {
      const ttl = Number(options.expirationTtl);
      if (!Number.isFinite(ttl) || ttl < MIN_TTL) {
        throw kvError("PUT", 400, `Invalid expiration_ttl of ${options.expirationTtl}. Expiration TTL must be at least ${MIN_TTL}.`);
      }
      expiration = now + Math.floor(ttl);
    } else if (options.expiration !== undefined) {
      expiration = Math.floor(Number(options.expiration));
      if (!Number.isFinite(expiration) || expiration < now + MIN_TTL) {
        throw kvError("PUT", 400, `Invalid expiration of ${options.expiration}. Expiration times must be at least ${MIN_TTL} seconds in the future.`);
      }
    }
    let metadata;
    if (options.metadata !== undefined) {
      const json = JSON.stringify(options.metadata);
      const length = encoder.encode(json).byteLength;
      if (length > METADATA_LIMIT) throw kvError("PUT", 413, `Metadata length of ${length} exceeds limit of ${METADATA_LIMIT}.`);
      metadata = options.metadata;
    }
    await hostCall(this.#name, "put", { key, expiration, metadata }, bytes);
  }

  async delete(key) {
    key = checkKey("DELETE", key);
    await hostCall(this.#name, "delete", { key });
  }

  async list(options = {}) {
    options ??= {};
    const limit = options.limit === undefined ? LIST_LIMIT : Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT) {
      throw kvError("LIST", 400, `Invalid key_count_limit of ${options.limit}. Please specify an integer between 1 and ${LIST_LIMIT}.`);
    }
    const prefix = options.prefix === undefined || options.prefix === null ? "" : String(options.prefix);
    const cursor = options.cursor === undefined || options.cursor === null ? undefined : String(options.cursor);
    const [result] = await hostCall(this.#name, "list", { prefix, limit, cursor });
    const keys = result.keys.map((k) => {
      const entry = { name: k.name };
      if (k.expiration !== undefined && k.expiration !== null) entry.expiration = k.expiration;
      if (k.metadata !== undefined && k.metadata !== null) entry.metadata = k.metadata;
      return entry;
    });
    return result.list_complete
      ? { keys, list_complete: true, cacheStatus: null }
      : { keys, list_complete: false, cursor: result.cursor, cacheStatus: null };
  }

  get [Symbol.toStringTag]() {
    return "KVNamespace";
  }
}

/** Sends a request to the host handler of binding `name`; resolves to the Response it gave. */
/**
 * A fetch through the host (service bindings, Durable Object stubs, RPC stubs): as in workerd,
 * the request's signal rejects it with its reason, when aborted already or before the answer.
 */
function fetchThroughHost(name, request, extra = undefined) {
  const signal = internals.subrequestSignal(request);
  if (signal.aborted) return Promise.reject(signal.reason);
  // The receiving entrypoint learns that this side gave up (its request.signal aborts under
  // enable_request_signal): the rejection waits for it to have run its abort handlers.
  const token = internals.randomToken();
  const answer = fetchThroughHostUnaborted(name, request, { ...extra, token });
  return new Promise((resolve, reject) => {
    let gaveUp = false;
    const onAbort = () => {
      gaveUp = true;
      const reason = signal.reason;
      hostCall(name, "fetchCancel", { ...extra, token }).then(
        () => reject(reason),
        () => reject(reason),
      );
    };
    signal.addEventListener("abort", onAbort, { once: true });
    answer.then(
      (response) => {
        signal.removeEventListener("abort", onAbort);
        if (!gaveUp) resolve(response);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        if (!gaveUp) reject(error);
      },
    );
  });
}

async function fetchThroughHostUnaborted(name, request, extra) {
  const headers = [];
  for (const [k, v] of internals.headersList(request.headers)) headers.push(k, v);
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  // As workerd sends it: with a content-length when the body's length is known beforehand.
  const known = hasBody && !request.headers.has("content-length") ? internals.requestBodyLength(request) : undefined;
  const body = hasBody ? new Uint8Array(await request.arrayBuffer()) : null;
  if (known !== undefined) headers.push("content-length", String(known === true ? body.byteLength : known));
  // A body of unknown length goes chunked, and the receiving worker sees it so (as in workerd).
  if (hasBody && request.body !== null && known === undefined && !request.headers.has("content-length") && !request.headers.has("transfer-encoding")) {
    headers.push("transfer-encoding", "chunked");
  }
  const [head, bytes] = await hostCall(name, "fetch", { method: request.method, url: request.url, headers, ...extra }, body);
  // A WebSocket answer: its end here talks to the one the host holds.
  if (head.webSocket !== undefined) {
    const list = [];
    for (let i = 0; i < head.headers.length; i += 2) list.push([head.headers[i], head.headers[i + 1]]);
    return new Response(null, { status: 101, statusText: head.statusText, headers: list, webSocket: internals.webSocketFromHost(head.webSocket) });
  }
  const nullBody = [101, 204, 205, 304].includes(head.status) || request.method === "HEAD";
  // As workerd's: immutable headers and the request's URL (no fragment), type "default".
  const hash = request.url.indexOf("#");
  const url = hash === -1 ? request.url : request.url.slice(0, hash);
  // An empty status text is none: the status's own, as a Response made without one has.
  // A worker's answer streams (head.stream): its body arrives chunk by chunk, as workerd delivers it.
  // One of unknown length from a named entrypoint streams as an RPC stream (head.bodyStub, 84_rpc_streams.js).
  if (nullBody && head.bodyStub !== undefined) internals.rpcStreams.fromHostStub(head.bodyStub).cancel().catch(() => {});
  const answer = nullBody ? null : head.stream !== undefined ? internals.hostBodyStream(head.stream) : head.bodyStub !== undefined ? internals.rpcStreams.fromHostStub(head.bodyStub) : bytes ?? new Uint8Array(0);
  return internals.newFetchResponse(head.status, head.statusText === "" ? null : head.statusText, head.headers, answer, url, false, "default");
}
internals.fetchThroughHost = fetchThroughHost;

/** A service binding: `env.NAME.fetch(input, init)` calls the host's handler. */
class Fetcher {
  #name;
  constructor(token, name) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
  }

  /**
   * A socket to the bound worker's `connect(socket)` handler, as workerd's Fetcher.connect():
   * the two directions cross as RPC streams (84_rpc_streams.js).
   */
  connect(address, options = undefined) {
    return internals.rpcStreams.connect(this.#name, address, options);
  }

  fetch(input, init = undefined) {
    return this.#fetch(input, init, undefined);
  }

  /** fetch(), with `extra` for the host (the props of ctx.exports.<Entrypoint>({ props }): 84_rpc.js). */
  #fetch(input, init, extra) {
    const request = new Request(input, init);
    try {
      internals.checkCacheModeCf(request);
    } catch (error) {
      // A rejection (found when the request is sent, as workerd's), whatever capture_async_api_throws says.
      return Promise.resolve().then(() => Promise.reject(error));
    }
    // As workerd's Fetcher: a redirect is followed (to this same service) unless the request says
    // otherwise; a hop to another origin drops Authorization from
    // strip_authorization_on_cross_origin_redirect's date (86_fetch.js followRedirects).
    if (request.redirect !== "follow") return fetchThroughHost(this.#name, request, extra);
    const name = this.#name;
    // followRedirects() keeps the body in memory; a body whose length was not known before (a
    // stream) still goes without a content-length, as workerd sends it.
    const unknownLength = internals.requestBodyLength(request) === undefined;
    const send = (url, hop) => {
      const next = new Request(url, hop);
      if (unknownLength) internals.bodyLengthUnknown.add(next);
      return fetchThroughHost(name, next, extra);
    };
    return internals.followRedirects(request, send, !internals.feature("strip_authorization_on_cross_origin_redirect"));
  }

  static {
    internals.fetchWithProps = (fetcher, props, input, init) => fetcher.#fetch(input, init, { props });
  }

  get [Symbol.toStringTag]() {
    return "Fetcher";
  }
}

// Object storage buckets (R2's API) are src/js/89_r2_http.js's R2Bucket for every backing (a
// bucket workerbox keeps answers through src/js/88_r2_store.js).

internals.makeBinding = function makeBinding(name, kind) {
  // A Durable Object namespace's kind carries its class: "durable_object:<ClassName>".
  if (kind.startsWith("durable_object:")) return internals.makeDurableObjectBinding(name, kind.slice("durable_object:".length));
  switch (kind) {
    case "kv":
      return new KVNamespace(kConstruct, name);
    case "service":
      return internals.serviceStub(name, new Fetcher(kConstruct, name));
    case "d1":
      return internals.makeD1Binding(name);

    case "outbound":
      internals.interceptOutbound();
      return undefined;
  }
  throw new TypeError(`unknown binding kind "${kind}" for env.${name}`);
};

// Their promise-returning methods throw synchronously before capture_async_api_throws (97_compat.js).
internals.asyncApiPrototypes.push(KVNamespace.prototype, Fetcher.prototype);
