// The smaller bindings wrangler simulates locally, inside the worker: rate limiters
// (`env.LIMITER.limit({ key })`), Analytics Engine datasets (`env.AE.writeDataPoint(point)`),
// send_email (`env.EMAIL.send(message)`, with `EmailMessage` of `cloudflare:email`) and Secrets
// Store secrets (`env.SECRET.get()`), workerd's in-memory cache (`env.CACHE.read(key, fallback)`), and Hyperdrive's `connect()`. Arguments are checked here, with the errors workerd and
// Miniflare give; the state (counters, data points, sent mail, secret values) is the host's
// (lib/simulated/), reached through internals.hostCall.

const kConstruct = Symbol("construct");
const encoder = new TextEncoder();

function illegal(token) {
  if (token !== kConstruct) throw new TypeError("Illegal constructor");
}

// ---- Rate limiting ------------------------------------------------------------------------------

const RATELIMIT_OPTIONS = ["key", "limit", "period"];
const RATELIMIT_PERIODS = [10, 60];

function rateLimitCheck(ok, message) {
  if (!ok) throw new Error(message);
}

class RateLimit {
  #name;
  constructor(token, name) {
    illegal(token);
    this.#name = name;
  }

  /** Counts one call for `key` in the current window; resolves to `{ success }`. */
  async limit(options) {
    rateLimitCheck(typeof options === "object" && options !== null, "invalid rate limit options");
    const unknown = Object.keys(options).filter((key) => !RATELIMIT_OPTIONS.includes(key));
    rateLimitCheck(unknown.length === 0, `bad rate limit options: [${unknown.join(",")}]`);
    const { key = "", limit, period } = options;
    rateLimitCheck(typeof key === "string", `invalid key: ${String(key)}`);
    rateLimitCheck(limit === undefined || typeof limit === "number", `limit must be a number: ${String(limit)}`);
    rateLimitCheck(period === undefined || typeof period === "number", `period must be a number: ${String(period)}`);
    rateLimitCheck(period === undefined || RATELIMIT_PERIODS.includes(period), `unsupported period: ${period}`);
    const [answer] = await internals.hostCall(this.#name, "limit", { key, limit, period });
    return { success: answer.success === true };
  }

  get [Symbol.toStringTag]() {
    return "RateLimit";
  }
}

// ---- Analytics Engine ---------------------------------------------------------------------------

const AE_MAX_MEMBERS = 20;
const AE_MAX_INDEX_BYTES = 96;
const AE_MAX_BLOB_BYTES = 800 * AE_MAX_MEMBERS;
const AE_PREFIX = "writeDataPoint(): ";

/** A sequence argument as workerd's conversion takes it: an array (or iterable), else a TypeError. */
function aeSequence(value, field) {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object" || typeof value[Symbol.iterator] !== "function") {
    throw new TypeError(`Failed to execute 'writeDataPoint' on 'AnalyticsEngineDataset': ${field} is not a sequence.`);
  }
  return [...value];
}

/** A blob or index: null, bytes (a buffer or view) or a string (other values become strings). */
function aeBytes(value) {
  if (value === null || value === undefined) return null;
  if (value instanceof ArrayBuffer) return { bytes: new Uint8Array(value) };
  if (ArrayBuffer.isView(value)) return { bytes: new Uint8Array(value.buffer, value.byteOffset, value.byteLength) };
  if (typeof value === "symbol") throw new TypeError("Cannot convert a Symbol value to a string");
  const text = String(value);
  return { text, bytes: encoder.encode(text) };
}

function base64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.byteLength; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/** A blob as it crosses to the host: a string, or `{ base64 }` for bytes. */
const aeWire = (item) => (item === null ? null : item.text !== undefined ? item.text : { base64: base64(item.bytes) });

/**
 * A data point as workerd's writeLogfwdr posts it to an Analytics Engine service: its
 * AnalyticsEngineEvent in Cap'n Proto's JSON (Data as byte arrays, 64-bit integers as strings,
 * every double, the blobs given).
 */
function aeEventJson(dataset, index, blobs, doubles) {
  const event = { accountId: "1", dataset: [...encoder.encode(dataset)], schemaVersion: "0", index1: [...(index?.bytes ?? [])], timestamp: String(BigInt(Date.now()) * 1000000n) };
  for (let i = 0; i < AE_MAX_MEMBERS; i++) event[`double${i + 1}`] = doubles[i] ?? 0;
  blobs.forEach((blob, i) => {
    if (blob !== null) event[`blob${i + 1}`] = [...blob.bytes];
  });
  return JSON.stringify(event);
}

class AnalyticsEngineDataset {
  #name;
  /** The dataset's name when its backing is a service spoken to over HTTP (kind "analytics_engine_http:<dataset>"). */
  #httpDataset;
  constructor(token, name, httpDataset = null) {
    illegal(token);
    this.#name = name;
    this.#httpDataset = httpDataset;
  }

  /** Checks the data point as workerd does and hands it to the host; returns nothing. */
  writeDataPoint(event) {
    if (event !== undefined && event !== null && typeof event !== "object") {
      throw new TypeError("Failed to execute 'writeDataPoint' on 'AnalyticsEngineDataset': parameter 1 is not of type 'AnalyticsEngineDataPoint'.");
    }
    const indexes = aeSequence(event?.indexes, "indexes");
    const blobs = aeSequence(event?.blobs, "blobs");
    const doubles = aeSequence(event?.doubles, "doubles").map((value) => {
      if (typeof value === "bigint" || typeof value === "symbol") throw new TypeError(`Cannot convert a ${typeof value === "bigint" ? "BigInt" : "Symbol"} value to a number`);
      return Number(value);
    });
    if (indexes.length > 1) throw new TypeError(`${AE_PREFIX}Maximum of 1 indexes supported.`);
    const index = indexes.length === 1 ? aeBytes(indexes[0]) : null;
    if (index !== null && index.bytes.byteLength > AE_MAX_INDEX_BYTES) throw new TypeError(`${AE_PREFIX}Size of indexes[0] exceeds ${AE_MAX_INDEX_BYTES} bytes).`);
    if (blobs.length > AE_MAX_MEMBERS) throw new TypeError(`${AE_PREFIX}Maximum of ${AE_MAX_MEMBERS} blobs supported.`);
    let total = 0;
    const blobValues = blobs.map((blob) => {
      const item = aeBytes(blob);
      total += item === null ? 0 : item.bytes.byteLength;
      if (total > AE_MAX_BLOB_BYTES) throw new TypeError(`${AE_PREFIX}Cumulative size of blobs exceeds ${AE_MAX_BLOB_BYTES} bytes).`);
      return item;
    });
    if (doubles.length > AE_MAX_MEMBERS) throw new TypeError(`${AE_PREFIX}Maximum of ${AE_MAX_MEMBERS} doubles supported.`);
    if (this.#httpDataset !== null) {
      const request = new Request("https://fake-host", { method: "POST", body: aeEventJson(this.#httpDataset, index, blobValues, doubles) });
      internals.fetchThroughHost(this.#name, request).then((response) => response.arrayBuffer(), () => {}).catch(() => {});
      return;
    }
    const point = { index1: index === null ? "" : aeWire(index), blobs: blobValues.map(aeWire), doubles, timestamp: Date.now() };
    // Production writes without waiting; so does this (a failed write is the host's to report).
    internals.hostCall(this.#name, "write", point).catch(() => {});
  }

  get [Symbol.toStringTag]() {
    return "AnalyticsEngineDataset";
  }
}

// ---- Email --------------------------------------------------------------------------------------

/** The raw message of each EmailMessage (a string or a ReadableStream). */
const rawOfMessage = new WeakMap();

class EmailMessage {
  #from;
  #to;
  constructor(from, to, raw) {
    if (arguments.length < 3) throw new TypeError(`Failed to construct 'EmailMessage': 3 arguments required, but only ${arguments.length} present.`);
    this.#from = String(from);
    this.#to = String(to);
    if (!(typeof raw === "string" || raw instanceof globalThis.ReadableStream)) raw = String(raw);
    rawOfMessage.set(this, raw);
  }

  get from() {
    return this.#from;
  }

  get to() {
    return this.#to;
  }
}

async function rawBytes(raw) {
  if (typeof raw === "string") return encoder.encode(raw);
  return new Uint8Array(await new globalThis.Response(raw).arrayBuffer());
}

/** An address of a MessageBuilder (a string or `{ name, email }`) as `{ name?, email }`. */
function builderAddress(value, field) {
  if (typeof value === "string") return { email: value };
  if (value !== null && typeof value === "object" && typeof value.email === "string") return { name: value.name === undefined ? undefined : String(value.name), email: value.email };
  throw new TypeError(`send(): ${field} must be an address string or { name, email }`);
}

const builderAddresses = (value, field) => (value === undefined ? undefined : (Array.isArray(value) ? value : [value]).map((v) => builderAddress(v, field)));

function attachmentContent(content, i) {
  if (typeof content === "string") return { text: content };
  if (content instanceof ArrayBuffer || ArrayBuffer.isView(content)) return aeWire({ bytes: content instanceof ArrayBuffer ? new Uint8Array(content) : new Uint8Array(content.buffer, content.byteOffset, content.byteLength) });
  throw new TypeError(`send(): attachments[${i}].content must be a string, an ArrayBuffer or a view of one`);
}

class SendEmail {
  #name;
  constructor(token, name) {
    illegal(token);
    this.#name = name;
  }

  /** Sends an EmailMessage (or a message builder object): checked, then kept as an .eml file. */
  async send(message) {
    let answer;
    if (rawOfMessage.has(message)) {
      const bytes = await rawBytes(rawOfMessage.get(message));
      [answer] = await internals.hostCall(this.#name, "send", { from: message.from, to: message.to }, bytes);
      console.log(`send_email binding called with the following message:\n  ${answer.file}`);
    } else if (message !== null && typeof message === "object" && message.from !== undefined && message.to !== undefined) {
      const builder = {
        from: builderAddress(message.from, "from"),
        to: builderAddresses(message.to, "to"),
        cc: builderAddresses(message.cc, "cc"),
        bcc: builderAddresses(message.bcc, "bcc"),
        replyTo: message.replyTo === undefined ? undefined : builderAddress(message.replyTo, "replyTo"),
        subject: message.subject === undefined ? "" : String(message.subject),
        text: message.text === undefined ? undefined : String(message.text),
        html: message.html === undefined ? undefined : String(message.html),
        headers: message.headers === undefined ? undefined : Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, String(v)])),
        attachments: message.attachments === undefined ? undefined : [...message.attachments].map((a, i) => ({
          filename: String(a?.filename ?? ""), type: String(a?.type ?? "application/octet-stream"), disposition: a?.disposition === "inline" ? "inline" : "attachment", contentId: a?.contentId === undefined ? undefined : String(a.contentId), content: attachmentContent(a?.content, i),
        })),
      };
      [answer] = await internals.hostCall(this.#name, "build", builder);
      console.log(`send_email binding called with a message builder:\n  ${answer.file}`);
    } else {
      throw new TypeError("send(): the message must be an EmailMessage (from cloudflare:email) or { from, to, subject, text?, html? }");
    }
    return { messageId: answer.messageId };
  }

  get [Symbol.toStringTag]() {
    return "SendEmail";
  }
}

// ---- Secrets Store ------------------------------------------------------------------------------

class SecretsStoreSecret {
  #name;
  constructor(token, name) {
    illegal(token);
    this.#name = name;
  }

  /** The secret's value (a string); rejects when the store has no such secret. */
  async get() {
    const [answer] = await internals.hostCall(this.#name, "get", {});
    return answer.value;
  }

  get [Symbol.toStringTag]() {
    return "SecretsStoreSecret";
  }
}

// ---- Hyperdrive ---------------------------------------------------------------------------------
// The binding of a local database (lib/hyperdrive.js gives its parts, marked, in the env JSON):
// the connection's parts, and connect() for a socket to the database, as workerd's Hyperdrive
// binding has and Miniflare makes it locally (straight to the database).

const HYPERDRIVE_MARK = "__workerboxHyperdrive";
const HYPERDRIVE_PARTS = ["connectionString", "host", "port", "user", "password", "database"];

class Hyperdrive {
  constructor(token, parts) {
    illegal(token);
    // Own read-only properties, as workerd's lazy instance properties are.
    for (const key of HYPERDRIVE_PARTS) Object.defineProperty(this, key, { value: parts[key], enumerable: true });
  }

  /** A socket to the database (connect() of cloudflare:sockets to its host and port). */
  connect() {
    return internals.socketConnect({ hostname: this.host, port: this.port });
  }

  get [Symbol.toStringTag]() {
    return "Hyperdrive";
  }
}

/** Replaces each marked Hyperdrive var of `env` with its Hyperdrive object. */
internals.makeHyperdriveBindings = function makeHyperdriveBindings(env) {
  for (const [name, value] of Object.entries(env)) {
    if (value === null || typeof value !== "object" || value[HYPERDRIVE_MARK] !== true) continue;
    const parts = {};
    for (const key of HYPERDRIVE_PARTS) parts[key] = value[key];
    env[name] = new Hyperdrive(kConstruct, parts);
  }
};

// ---- In-memory cache (workerd's memoryCache binding) ---------------------------------------------

const MEMORY_CACHE_MAX_KEY_BYTES = 2048;

function memoryCacheKey(key, method) {
  if (typeof key !== "string") throw new TypeError(`Failed to execute '${method}' on 'MemoryCache': parameter 1 is not of type 'string'.`);
  if (encoder.encode(key).byteLength > MEMORY_CACHE_MAX_KEY_BYTES) throw new RangeError("Key too large.");
  return key;
}

/** A value as the cache keeps it: V8-serialized, with workerd's error for what cannot be. */
function memoryCacheSerialize(value) {
  try {
    return ops.serialize(value);
  } catch {
    throw new DOMException(`failed to serialize ${typeof value}`, "DataCloneError");
  }
}

class MemoryCache {
  #name;
  /** Fallbacks under way in this worker, by key: later reads of the key wait for them. */
  #filling = new Map();
  constructor(token, name) {
    illegal(token);
    this.#name = name;
    // delete() exists only under workerd's memory_cache_delete flag (one isolate, one set of flags).
    if (!internals.compat?.enabled.includes("memory_cache_delete")) delete MemoryCache.prototype.delete;
  }

  async #get(key) {
    const [answer, bytes] = await internals.hostCall(this.#name, "get", { key });
    return answer.hit ? { value: ops.deserialize(bytes) } : null;
  }

  /**
   * The value cached under `key`; on a miss, `fallback(key)`'s `{ value, expiration? }` is cached
   * (unless too large) and returned. Concurrent reads of one key share one fallback; if it fails,
   * the next waiting read runs its own.
   */
  async read(key, fallback) {
    key = memoryCacheKey(key, "read");
    if (fallback !== undefined && typeof fallback !== "function") throw new TypeError("Failed to execute 'read' on 'MemoryCache': parameter 2 is not of type 'function'.");
    for (;;) {
      const filling = this.#filling.get(key);
      if (filling !== undefined) {
        const result = await filling.then((value) => ({ value }), () => null);
        if (result !== null) return result.value;
        continue;
      }
      const hit = await this.#get(key);
      if (hit !== null) return hit.value;
      if (fallback === undefined) return undefined;
      if (this.#filling.has(key)) continue;
      const fill = this.#fill(key, fallback);
      this.#filling.set(key, fill);
      try {
        return await fill;
      } finally {
        if (this.#filling.get(key) === fill) this.#filling.delete(key);
      }
    }
  }

  async #fill(key, fallback) {
    const result = await fallback(key);
    if (result === null || typeof result !== "object") throw new TypeError("The fallback of MemoryCache.read() must return an object such as { value, expiration? }.");
    const { value, expiration } = result;
    if (expiration !== undefined && typeof expiration !== "number") throw new TypeError("Expiration time must be a number.");
    if (Number.isNaN(expiration)) throw new TypeError("Expiration time must not be NaN.");
    const bytes = memoryCacheSerialize(value);
    await internals.hostCall(this.#name, "put", { key, expiration: expiration ?? null }, bytes);
    return ops.deserialize(bytes);
  }

  /** Drops `key` from the cache. */
  delete(key) {
    key = memoryCacheKey(key, "delete");
    internals.hostCall(this.#name, "delete", { key }).catch(() => {});
  }

  get [Symbol.toStringTag]() {
    return "MemoryCache";
  }
}

// ---- Wiring -------------------------------------------------------------------------------------

const LOCAL_KINDS = {
  ratelimit: RateLimit,
  analytics_engine: AnalyticsEngineDataset,
  send_email: SendEmail,
  secrets_store_secret: SecretsStoreSecret,
  memory_cache: MemoryCache,
};

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  if (kind.startsWith("analytics_engine_http:")) return new AnalyticsEngineDataset(kConstruct, name, kind.slice("analytics_engine_http:".length));
  const Class = LOCAL_KINDS[kind];
  return Class === undefined ? makeOtherBinding(name, kind) : new Class(kConstruct, name);
};

internals.cloudflareModules.email = () => ({ EmailMessage });
