"use strict";
// Queue messages as bytes: the content types a message may have ("text", "bytes", "json", "v8"),
// a body encoded for the worker or decoded as its consumer would see it, and the batch of
// dispatch(worker, { type: "queue", queue, messages }) checked and encoded. Used by the queue
// binding (queue.js), by dispatch() in lib/api.js and by the platform proxy's producers in Node.

const rpc = require("../rpc.js");

const CONTENT_TYPES = new Set(["text", "bytes", "json", "v8"]);

/** A value as an error message shows it: NaN and Infinity as such, not as JSON's null. */
function shown(value) {
  if (typeof value === "number" || value === undefined) return String(value);
  if (typeof value === "function") return "a function";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return typeof value;
  }
}

/** A new message id: 32 hex digits. */
function messageId() {
  return require("node:crypto").randomBytes(16).toString("hex");
}

/** Decodes a body as the consumer would see it (for a custom `send` handler). */
function decodeBody(contentType, bytes) {
  switch (contentType) {
    case "text":
      return bytes.toString("utf8");
    case "bytes":
      return new Uint8Array(bytes);
    case "json":
      return JSON.parse(bytes.toString("utf8"));
    default:
      return rpc.deserialize(bytes);
  }
}

/** A host value as the bytes of `contentType` (for dispatch(worker, { type: "queue" })). */
function encodeBody(contentType, body, where) {
  switch (contentType) {
    case "text":
      if (typeof body !== "string") throw new TypeError(`${where}: a "text" body must be a string, got ${typeof body}`);
      return Buffer.from(body, "utf8");
    case "bytes":
      if (!ArrayBuffer.isView(body) && !(body instanceof ArrayBuffer)) throw new TypeError(`${where}: a "bytes" body must be an ArrayBuffer or a typed array, got ${typeof body}`);
      return ArrayBuffer.isView(body) ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : Buffer.from(body);
    case "json": {
      const text = JSON.stringify(body);
      if (text === undefined) throw new TypeError(`${where}: a "json" body must be a value JSON can represent, got ${typeof body}`);
      return Buffer.from(text, "utf8");
    }
    default:
      // V8's own format without Node's host-object extensions, which the worker could not read.
      try {
        return rpc.serialize(body);
      } catch (error) {
        throw new TypeError(`${where}: the body cannot be structured-cloned: ${error.message}`, { cause: error });
      }
  }
}

/**
 * dispatch(worker, { type: "queue", queue, messages }): the batch as the runner takes it.
 * Each message is `{ body, id?, timestamp?, attempts?, contentType? }`; bodies are
 * structured-cloned (content type "v8") unless `contentType` says otherwise.
 */
function batchFromInput(input) {
  const { queue: name = "queue", messages } = input;
  if (typeof name !== "string" || name === "") throw new TypeError("dispatch: event.queue must be the queue's name, a non-empty string");
  if (!Array.isArray(messages) || messages.length === 0) throw new TypeError("dispatch: event.messages must be a non-empty array of { body, id?, timestamp?, attempts? }");
  if (messages.length > 100) throw new TypeError(`dispatch: event.messages holds ${messages.length} messages; a batch holds at most 100`);
  const metas = [];
  const bodies = [];
  messages.forEach((m, i) => {
    const where = `dispatch: event.messages[${i}]`;
    if (m === null || typeof m !== "object") throw new TypeError(`${where} must be an object such as { body }`);
    const contentType = m.contentType ?? "v8";
    if (!CONTENT_TYPES.has(contentType)) throw new TypeError(`${where}.contentType must be "text", "bytes", "json" or "v8", got ${shown(contentType)}`);
    const id = m.id ?? messageId();
    if (typeof id !== "string" || id === "") throw new TypeError(`${where}.id must be a non-empty string`);
    const timestamp = m.timestamp === undefined ? Date.now() : m.timestamp instanceof Date ? m.timestamp.getTime() : m.timestamp;
    if (typeof timestamp !== "number" || !Number.isFinite(timestamp)) throw new TypeError(`${where}.timestamp must be a Date or milliseconds since the epoch`);
    const attempts = m.attempts ?? 1;
    if (!Number.isInteger(attempts) || attempts < 1) throw new TypeError(`${where}.attempts must be a positive integer, got ${shown(attempts)}`);
    metas.push({ id, timestamp, attempts, contentType });
    bodies.push(encodeBody(contentType, m.body, where));
  });
  return { name, metas: { messages: metas }, bodies };
}

module.exports = { CONTENT_TYPES, shown, messageId, decodeBody, encodeBody, batchFromInput };
