// Queues, inside the worker. The producer binding (`env.QUEUE.send()` / `sendBatch()`, class
// WorkerQueue) encodes each body by its content type (`text`, `bytes`, `json`, `v8`), enforces
// production's limits and hands the bytes to the host (`lib/queues/`) in one binding call. The
// consumer side builds what a `queue(batch, env, ctx)` handler receives — MessageBatch, Message,
// and QueueEvent for service-worker scripts — and records what the handler acked and retried,
// with workerd's precedence rules; `internals.dispatchQueue` (90_entry.js) runs the handler.

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const kConstruct = Symbol("construct");

// Production's limits (1 KB = 1000 bytes, as Cloudflare's limits page counts them).
const MESSAGE_LIMIT = 128000;
const BATCH_BYTES_LIMIT = 256000;
const BATCH_COUNT_LIMIT = 100;
const DELAY_LIMIT = 86400;
const CONTENT_TYPES = ["text", "bytes", "json", "v8"];

function describe(value) {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

function checkContentType(type) {
  const lower = String(type).toLowerCase();
  if (!CONTENT_TYPES.includes(lower)) throw new TypeError(`Unsupported queue message content type: ${type}`);
  return lower;
}

function checkDelay(value, what) {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > DELAY_LIMIT) {
    throw new RangeError(`${what}: delaySeconds must be an integer from 0 to ${DELAY_LIMIT} (24 hours), got ${typeof value === "number" ? value : describe(value)}.`);
  }
  return value;
}

/** The content type a body without one gets: JSON from the queues_json_messages date on. */
function defaultContentType() {
  return internals.compat.enabled.includes("queues_json_messages") ? "json" : "v8";
}

/** A body as the bytes production would send for `contentType`. */
function encodeBody(body, contentType) {
  switch (contentType) {
    case "text":
      if (typeof body !== "string") throw new TypeError(`Content Type "text" requires a value of type string, but received: ${typeof body}`);
      return encoder.encode(body);
    case "bytes":
      if (!ArrayBuffer.isView(body)) throw new TypeError(`Content Type "bytes" requires a value of type ArrayBufferView, but received: ${typeof body}`);
      return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
    case "json": {
      const text = JSON.stringify(body);
      if (text === undefined) throw new TypeError(`Content Type "json" requires a value JSON can represent, but received: ${typeof body}`);
      return encoder.encode(text);
    }
    default:
      try {
        return ops.serialize(body);
      } catch (error) {
        if (error && error.name === "DataCloneError") throw new internals.DOMException(error.message, "DataCloneError");
        throw error;
      }
  }
}

function decodeBody(bytes, contentType) {
  switch (contentType) {
    case "text":
      return decoder.decode(bytes);
    case "bytes":
      return bytes;
    case "json":
      return JSON.parse(decoder.decode(bytes));
    case "v8":
      return ops.deserialize(bytes);
  }
  throw new TypeError(`Unsupported queue message content type: ${contentType}`);
}

/** One message of a send: its encoded body, content type and delay. */
function prepare(body, options, what) {
  if (body === undefined) throw new TypeError("Message body cannot be undefined");
  if (options !== undefined && options !== null && typeof options !== "object") throw new TypeError(`${what}: options must be an object.`);
  const contentType = options?.contentType === undefined ? defaultContentType() : checkContentType(options.contentType);
  const delaySeconds = checkDelay(options?.delaySeconds, what);
  return { bytes: encodeBody(body, contentType), contentType, delaySeconds };
}

/** The producer binding: `env.QUEUE.send(body, options)` and `sendBatch(messages, options)`. */
class WorkerQueue {
  #name;
  /** Whether the queue is a service spoken to in workerd's HTTP protocol (kind "queue_http"). */
  #http;
  constructor(token, name, http = false) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
    this.#http = http;
  }

  async send(body, options = undefined) {
    const message = prepare(body, options, "Queue send");
    if (this.#http) return httpSend(this.#name, message, options);
    if (message.bytes.byteLength > MESSAGE_LIMIT) {
      throw new Error(`Queue send failed: message length of ${message.bytes.byteLength} bytes exceeds limit of ${MESSAGE_LIMIT}`);
    }
    return this.#deliver([message], undefined);
  }

  async sendBatch(messages, options = undefined) {
    if (messages === null || messages === undefined || typeof messages[Symbol.iterator] !== "function") {
      throw new TypeError("sendBatch() requires an iterable of messages such as [{ body }]");
    }
    const list = [...messages];
    if (list.length === 0) throw new TypeError("sendBatch() requires at least one message");
    if (options !== undefined && options !== null && typeof options !== "object") throw new TypeError("Queue sendBatch: options must be an object.");
    const batchDelay = checkDelay(options?.delaySeconds, "Queue sendBatch");
    const prepared = list.map((entry, i) => {
      if (entry === null || typeof entry !== "object") throw new TypeError(`sendBatch(): message ${i} must be an object such as { body }, got ${describe(entry)}`);
      return prepare(entry.body, entry, "Queue sendBatch");
    });
    if (this.#http) return httpSendBatch(this.#name, prepared, list, batchDelay);
    if (prepared.length > BATCH_COUNT_LIMIT) {
      throw new Error(`Queue sendBatch failed: batch message count of ${prepared.length} exceeds limit of ${BATCH_COUNT_LIMIT}`);
    }
    let total = 0;
    for (const message of prepared) {
      if (message.bytes.byteLength > MESSAGE_LIMIT) {
        throw new Error(`Queue sendBatch failed: message in batch has length ${message.bytes.byteLength} bytes which exceeds single message size limit of ${MESSAGE_LIMIT}`);
      }
      total += message.bytes.byteLength;
    }
    if (total > BATCH_BYTES_LIMIT) throw new Error(`Queue sendBatch failed: batch size of ${total} bytes exceeds limit of ${BATCH_BYTES_LIMIT}`);
    return this.#deliver(prepared, batchDelay);
  }

  async #deliver(messages, delaySeconds) {
    const all = new Uint8Array(messages.reduce((n, m) => n + m.bytes.byteLength, 0));
    let offset = 0;
    for (const m of messages) {
      all.set(m.bytes, offset);
      offset += m.bytes.byteLength;
    }
    const args = { delaySeconds, messages: messages.map((m) => ({ contentType: m.contentType, delaySeconds: m.delaySeconds, size: m.bytes.byteLength })) };
    const [json] = await ops.hostCall(this.#name, "send", JSON.stringify(args), all);
    const answer = JSON.parse(json);
    // As workerd does: the time as a Date, and 0 (no message waiting) as undefined.
    const metrics = answer.metadata.metrics;
    metrics.oldestMessageTimestamp = metrics.oldestMessageTimestamp ? new Date(metrics.oldestMessageTimestamp) : undefined;
    return answer;
  }

  /** The queue's backlog: `{ backlogCount, backlogBytes, oldestMessageTimestamp }`. */
  async metrics() {
    if (this.#http) return httpMetrics(this.#name);
    const [json] = await ops.hostCall(this.#name, "metrics", "{}", null);
    const metrics = JSON.parse(json);
    metrics.oldestMessageTimestamp = metrics.oldestMessageTimestamp ? new Date(metrics.oldestMessageTimestamp) : undefined;
    return metrics;
  }

  get [Symbol.toStringTag]() {
    return "WorkerQueue";
  }
}

// ---- Producer over HTTP: a queue whose backing is a service ------------------------------------
// As workerd's WorkerQueue speaks to its queue service: POST https://fake-host/message (the body's
// bytes; X-Msg-Fmt names the content type when one was given or JSON is the default,
// X-Msg-Delay-Secs the delay), POST /batch (JSON: each body in base64, its contentType and
// delaySecs; CF-Queue-Batch-* headers), GET /metrics. The service's limits are its own; a status
// other than 200 rejects with its CF-Queues-Error-Cause/-Code under queue_expose_error_codes (and
// always for metrics()), else with `Queue send failed: <status text>`.

/** A metrics object as workerd's struct gives it: the time a Date, and 0 (none) undefined. */
function metricsOf(value, what) {
  if (value === null || typeof value !== "object") throw new Error(`Failed to parse queue ${what} response`);
  const stamp = value.oldestMessageTimestamp;
  const out = { backlogCount: Number(value.backlogCount ?? 0), backlogBytes: Number(value.backlogBytes ?? 0) };
  out.oldestMessageTimestamp = stamp === undefined || stamp === null || Number(stamp) === 0 ? undefined : new Date(Number(stamp));
  return out;
}

async function httpAnswer(response, op, alwaysCodes) {
  if (response.status !== 200) {
    await response.body?.cancel();
    if (alwaysCodes || internals.feature("queue_expose_error_codes")) {
      const cause = response.headers.get("cf-queues-error-cause") ?? "Unknown Internal Error";
      throw new Error(`${cause} (${response.headers.get("cf-queues-error-code") ?? "15000"})`);
    }
    throw new Error(`Queue ${op} failed: ${response.statusText}`);
  }
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`Failed to parse queue ${op === "metrics" ? "metrics" : "send"} response${text}`);
  }
}

function sendAnswer(value) {
  if (value === null || typeof value !== "object" || value.metadata === null || typeof value.metadata !== "object") {
    throw new Error(`Failed to parse queue send response${JSON.stringify(value)}`);
  }
  return { metadata: { metrics: metricsOf(value.metadata.metrics ?? {}, "send") } };
}

/** Whether a message's content type goes on the wire (given, or JSON as the default). */
const explicitType = (entry) => entry?.contentType !== undefined || internals.feature("queues_json_messages");

async function httpSend(name, message, options) {
  const headers = { "content-type": "application/octet-stream" };
  if (explicitType(options)) headers["X-Msg-Fmt"] = message.contentType;
  if (message.delaySeconds !== undefined) headers["X-Msg-Delay-Secs"] = String(message.delaySeconds);
  const request = new Request("https://fake-host/message", { method: "POST", headers, body: message.bytes });
  return sendAnswer(await httpAnswer(await internals.fetchThroughHost(name, request), "send", false));
}

function base64(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.byteLength; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

async function httpSendBatch(name, prepared, entries, batchDelay) {
  let total = 0;
  let largest = 0;
  const messages = prepared.map((m, i) => {
    total += m.bytes.byteLength;
    largest = Math.max(largest, m.bytes.byteLength);
    const wire = { body: base64(m.bytes) };
    if (explicitType(entries[i])) wire.contentType = m.contentType;
    if (m.delaySeconds !== undefined) wire.delaySecs = m.delaySeconds;
    return wire;
  });
  const headers = {
    "CF-Queue-Batch-Count": String(prepared.length),
    "CF-Queue-Batch-Bytes": String(total),
    "CF-Queue-Largest-Msg": String(largest),
    "content-type": "application/json",
  };
  if (batchDelay !== undefined) headers["X-Msg-Delay-Secs"] = String(batchDelay);
  const request = new Request("https://fake-host/batch", { method: "POST", headers, body: JSON.stringify({ messages }) });
  return sendAnswer(await httpAnswer(await internals.fetchThroughHost(name, request), "sendBatch", false));
}

async function httpMetrics(name) {
  const response = await internals.fetchThroughHost(name, new Request("https://fake-host/metrics"));
  return metricsOf(await httpAnswer(response, "metrics", true), "metrics");
}

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  if (kind === "queue") return new WorkerQueue(kConstruct, name);
  if (kind === "queue_http") return new WorkerQueue(kConstruct, name, true);
  return makeOtherBinding(name, kind);
};

// ---- Consumer: what a queue() handler receives ------------------------------------------------

/**
 * What the handler decided, in workerd's shape. The first decision about a message wins, and a
 * decision about one message beats the batch-wide ackAll()/retryAll() made after it.
 */
class QueueResult {
  ackAll = false;
  retryBatch = { retry: false };
  explicitAcks = new Set();
  retries = new Map();

  toJSON() {
    return {
      ackAll: this.ackAll,
      retryBatch: this.retryBatch,
      explicitAcks: [...this.explicitAcks],
      retryMessages: [...this.retries].map(([msgId, delaySeconds]) => (delaySeconds === undefined ? { msgId } : { msgId, delaySeconds })),
    };
  }
}

class Message {
  #id;
  #timestamp;
  #body;
  #attempts;
  #result;
  constructor(token, id, timestamp, body, attempts, result) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#id = id;
    this.#timestamp = timestamp;
    this.#body = body;
    this.#attempts = attempts;
    this.#result = result;
  }
  get id() {
    return this.#id;
  }
  get timestamp() {
    return new Date(this.#timestamp);
  }
  get body() {
    return this.#body;
  }
  get attempts() {
    return this.#attempts;
  }
  retry(options = undefined) {
    const delaySeconds = checkDelay(options?.delaySeconds, "Message retry");
    const result = this.#result;
    if (result.ackAll) {
      console.warn(`Received a call to retry() on message ${this.#id} after ackAll() was already called. Calling retry() on a message after calling ackAll() has no effect.`);
      return;
    }
    if (result.explicitAcks.has(this.#id)) {
      console.warn(`Received a call to retry() on message ${this.#id} after ack() was already called. Calling retry() on a message after calling ack() has no effect.`);
      return;
    }
    if (!result.retries.has(this.#id) || delaySeconds !== undefined) result.retries.set(this.#id, delaySeconds ?? result.retries.get(this.#id));
  }
  ack() {
    const result = this.#result;
    if (result.ackAll) return;
    if (result.retryBatch.retry) {
      console.warn(`Received a call to ack() on message ${this.#id} after retryAll() was already called. Calling ack() on a message after calling retryAll() has no effect.`);
      return;
    }
    if (result.retries.has(this.#id)) {
      console.warn(`Received a call to ack() on message ${this.#id} after retry() was already called. Calling ack() on a message after calling retry() has no effect.`);
      return;
    }
    result.explicitAcks.add(this.#id);
  }
  get [Symbol.toStringTag]() {
    return "Message";
  }
}

function retryAll(result, options) {
  const delaySeconds = checkDelay(options?.delaySeconds, "retryAll");
  if (result.ackAll) {
    console.warn("Received a call to retryAll() after ackAll() was already called. Calling retryAll() after calling ackAll() has no effect.");
    return;
  }
  result.retryBatch = delaySeconds === undefined ? { retry: true } : { retry: true, delaySeconds };
}

function ackAll(result) {
  if (result.retryBatch.retry) {
    console.warn("Received a call to ackAll() after retryAll() was already called. Calling ackAll() after calling retryAll() has no effect.");
    return;
  }
  result.ackAll = true;
}

class MessageBatch {
  #queue;
  #messages;
  #result;
  #metadata;
  constructor(token, queue, messages, result, metadata) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#queue = queue;
    this.#messages = messages;
    this.#result = result;
    this.#metadata = metadata;
  }
  get queue() {
    return this.#queue;
  }
  get messages() {
    return this.#messages;
  }
  /** `{ metrics: { backlogCount, backlogBytes, oldestMessageTimestamp } }` of the queue after this batch was taken. */
  get metadata() {
    return this.#metadata;
  }
  retryAll(options = undefined) {
    retryAll(this.#result, options);
  }
  ackAll() {
    ackAll(this.#result);
  }
  get [Symbol.toStringTag]() {
    return "MessageBatch";
  }
}

/** The event a service-worker script's `addEventListener("queue", …)` receives. */
class QueueEvent extends globalThis.Event {
  #batch;
  #result;
  #waitUntil;
  constructor(token, batch, result, waitUntil) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    super("queue");
    this.#batch = batch;
    this.#result = result;
    this.#waitUntil = waitUntil;
  }
  get queue() {
    return this.#batch.queue;
  }
  get messages() {
    return this.#batch.messages;
  }
  get metadata() {
    return this.#batch.metadata;
  }
  retryAll(options = undefined) {
    retryAll(this.#result, options);
  }
  ackAll() {
    ackAll(this.#result);
  }
  waitUntil(promise) {
    this.#waitUntil(promise);
  }
  get [Symbol.toStringTag]() {
    return "QueueEvent";
  }
}
internals.defineGlobal("QueueEvent", QueueEvent);

/**
 * The batch for one queue event, from the host's message list and bodies. Throws (and the event
 * fails) if a body cannot be decoded, as production does.
 */
internals.queueBatch = function queueBatch(queueName, batchJson, bodies) {
  const result = new QueueResult();
  const parsed = JSON.parse(batchJson);
  const messages = parsed.messages.map(
    (m, i) => new Message(kConstruct, m.id, m.timestamp, decodeBody(bodies[i], m.contentType), m.attempts, result),
  );
  const metrics = { backlogCount: 0, backlogBytes: 0, ...parsed.metadata?.metrics };
  metrics.oldestMessageTimestamp = metrics.oldestMessageTimestamp ? new Date(metrics.oldestMessageTimestamp) : undefined;
  const batch = new MessageBatch(kConstruct, queueName, Object.freeze(messages), result, { metrics });
  return { batch, result, event: (waitUntil) => new QueueEvent(kConstruct, batch, result, waitUntil) };
};

/**
 * `env.SERVICE.queue(queueName, messages)` (service_binding_extra_handlers): runs the bound
 * worker's queue() handler on a batch made here, as workerd's Fetcher.queue(). Each message is
 * `{ id, timestamp, attempts, body }` (structured-cloned) or `{ …, serializedBody }` (bytes V8's
 * serializer wrote, passed as they are); resolves to `{ outcome, ackAll, retryBatch,
 * explicitAcks, retryMessages }`.
 */
internals.fetcherQueue = async function fetcherQueue(binding, queueName, messages) {
  const metas = [];
  const parts = [];
  for (const m of messages ?? []) {
    if ((m?.body === undefined) === (m?.serializedBody === undefined)) throw new TypeError("Expected one of body or serializedBody for each message");
    let bytes;
    if (m.body !== undefined) bytes = encodeBody(m.body, "v8");
    else if (m.serializedBody instanceof ArrayBuffer) bytes = new Uint8Array(m.serializedBody.slice(0));
    else if (ArrayBuffer.isView(m.serializedBody)) bytes = new Uint8Array(m.serializedBody.buffer.slice(m.serializedBody.byteOffset, m.serializedBody.byteOffset + m.serializedBody.byteLength));
    else throw new TypeError("serializedBody must be an ArrayBuffer or an ArrayBufferView.");
    const timestamp = m.timestamp instanceof Date ? m.timestamp.getTime() : Number(m.timestamp ?? Date.now());
    metas.push({ id: String(m.id), timestamp, attempts: Number(m.attempts ?? 1), contentType: "v8", size: bytes.byteLength });
    parts.push(bytes);
  }
  const all = new Uint8Array(parts.reduce((n, b) => n + b.byteLength, 0));
  let at = 0;
  for (const b of parts) {
    all.set(b, at);
    at += b.byteLength;
  }
  const [answer] = await internals.hostCall(binding, "queue", { queue: String(queueName), messages: metas }, all);
  return answer;
};

// Its promise-returning methods throw synchronously before capture_async_api_throws (97_compat.js).
internals.asyncApiPrototypes.push(WorkerQueue.prototype);
