"use strict";
// Sending to a queue from Node: the `send()` and `sendBatch()` of a queue() binding (and of
// getPlatformProxy()'s `env.QUEUE`), with production's producer limits as the worker-side
// binding enforces them, into the same broker the workers' sends reach.

const { encodeBody } = require("./messages.js");

const MESSAGE_BYTES = 128_000;
const BATCH_MESSAGES = 100;
const BATCH_BYTES = 256_000;

function encode(body, contentType = "json", where) {
  if (!["json", "text", "bytes", "v8"].includes(contentType)) throw new TypeError(`${where}: unsupported content type ${JSON.stringify(contentType)} (json, text, bytes or v8)`);
  const bytes = encodeBody(contentType, body, where);
  if (bytes.length > MESSAGE_BYTES) throw new RangeError(`${where}: the message is ${bytes.length} bytes; a queue message may be at most ${MESSAGE_BYTES}`);
  return bytes;
}

/** Sends encoded `messages` through `hostCall` (the queue's producer entry), checking the batch limits. */
async function sendEncoded(hostCall, messages, delaySeconds) {
  const bytes = Buffer.concat(messages.map((m) => m.bytes));
  if (messages.length > BATCH_MESSAGES || bytes.length > BATCH_BYTES) {
    throw new RangeError(`sendBatch(): ${messages.length} messages of ${bytes.length} bytes; a batch may hold at most ${BATCH_MESSAGES} messages and ${BATCH_BYTES} bytes`);
  }
  const args = { messages: messages.map((m) => ({ contentType: m.contentType, size: m.bytes.length, delaySeconds: m.delaySeconds })), delaySeconds };
  await hostCall("send", args, bytes);
}

/** `queue.send(body, { contentType, delaySeconds })` from Node. */
async function send(hostCall, body, options = {}) {
  const contentType = options?.contentType ?? "json";
  return sendEncoded(hostCall, [{ contentType, bytes: encode(body, contentType, "send()"), delaySeconds: options?.delaySeconds }], undefined);
}

/** `queue.sendBatch([{ body, contentType, delaySeconds }], { delaySeconds })` from Node. */
async function sendBatch(hostCall, messages, options = {}) {
  if (!Array.isArray(messages) || messages.length === 0) throw new TypeError("sendBatch(): messages must be a non-empty array of { body, contentType?, delaySeconds? }");
  const encoded = messages.map((m, i) => {
    const contentType = m?.contentType ?? "json";
    return { contentType, bytes: encode(m?.body, contentType, `sendBatch(): message ${i}`), delaySeconds: m?.delaySeconds };
  });
  return sendEncoded(hostCall, encoded, options?.delaySeconds);
}

module.exports = { send, sendBatch };
