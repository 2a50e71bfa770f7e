// How console.log and util.inspect show the runtime's API objects, as workerd does: each class's
// attributes in workerd's order (read through the object, so subclasses and live values show),
// internal state in brackets, and map-likes with their entries. The shapes were printed by
// workerd (2025 compatibility dates); an attribute an object lacks here is left out. The
// formatting itself is src/js/25_inspect.js's (`internals.inspectAs`).

const slot = internals.streams.slots;
const streams = internals.streams;

/** The attributes of `Class`, in workerd's order (those an object lacks here are left out). */
function shape(Class, keys, more = {}) {
  internals.inspectAs(Class, { keys, ...more });
}

const EVENT = ["type", "eventPhase", "composed", "bubbles", "cancelable", "defaultPrevented", "returnValue", "currentTarget", "target", "srcElement", "timeStamp", "isTrusted", "cancelBubble"];
// workerd lists Event's constants for its subclasses only (they come from Event's prototype).
const EVENT_SUBCLASS = [...EVENT, "NONE", "CAPTURING_PHASE", "AT_TARGET", "BUBBLING_PHASE"];

shape(Request, ["method", "url", "headers", "redirect", "fetcher", "signal", "cf", "integrity", "keepalive", "cache", "body", "bodyUsed"]);
shape(Response, ["status", "statusText", "headers", "ok", "redirected", "url", "webSocket", "cf", "type", "body", "bodyUsed"]);
shape(Headers, [], { entries: (headers) => [...headers], internal: (headers) => [["immutable", internals.headersImmutable(headers)]] });
shape(URLSearchParams, [], { entries: (params) => [...params] });
shape(FormData, [], { entries: (form) => [...form] });
shape(URL, ["origin", "href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash", "searchParams"]);
shape(URLPattern, ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash", "hasRegExpGroups"]);
shape(AbortController, ["signal"]);
shape(AbortSignal, ["aborted", "reason", "onabort"]);
shape(TextDecoder, ["encoding", "fatal", "ignoreBOM"]);
shape(TextEncoder, ["encoding"]);
shape(Blob, ["size", "type"]);
shape(File, ["name", "lastModified", "size", "type"]);
shape(Event, EVENT);
shape(CustomEvent, ["detail", ...EVENT_SUBCLASS]);
shape(MessageEvent, ["ports", "source", "lastEventId", "origin", "data", ...EVENT_SUBCLASS]);
shape(CloseEvent, ["wasClean", "reason", "code", ...EVENT_SUBCLASS]);
shape(ErrorEvent, ["filename", "message", "lineno", "colno", "error", ...EVENT_SUBCLASS]);
shape(DOMException, ["code", "name", "message", "stack"]);
shape(Crypto, ["subtle"]);
shape(CryptoKey, ["usages", "algorithm", "extractable", "type"]);
shape(ByteLengthQueuingStrategy, ["highWaterMark"]);
shape(CountQueuingStrategy, ["highWaterMark"]);
shape(WebSocket, ["readyState", "url", "protocol", "extensions", "binaryType"]);
shape(CacheStorage, ["default"]);
shape(Performance, ["timeOrigin"]);
shape(Navigator, ["languages", "language", "platform", "hardwareConcurrency", "userAgent"]);

// ---- Streams ------------------------------------------------------------------------------------

/** What is left of a stream whose length is known, as a BigInt; undefined for any other. */
function lengthLeft(stream) {
  const fixed = internals.fixedLengths.get(stream);
  if (fixed !== undefined) return BigInt(fixed.left());
  if (!internals.sizedStreams.has(stream) || stream[slot._state] !== "readable") return undefined;
  return BigInt(stream[slot._readableStreamController][slot._queueTotalSize]);
}

/** Whether a readable stream is a byte stream (a BYOB reader can be had). */
const isByteStream = (stream) => stream[slot._readableStreamController] instanceof streams.ReadableByteStreamController;

shape(streams.ReadableStream, ["locked"], {
  internal: (stream) => [
    ["state", stream[slot._state]],
    ["supportsBYOB", isByteStream(stream)],
    // A body made from whole bytes, or a FixedLengthStream's, knows what is left of it.
    ["length", lengthLeft(stream)],
  ],
});
/**
 * A writable's state as workerd shows it: one of the runtime's (bytes only) has no "erroring"
 * (it is "errored" once aborted) and is "closed" once close() was asked.
 */
function writableState(stream) {
  const state = stream[slot._state];
  if (!internals.byteWritables.has(stream)) return state;
  if (state === "erroring") return "errored";
  const closing = stream[slot._closeRequest] !== undefined || stream[slot._inFlightCloseRequest] !== undefined;
  return state === "writable" && closing ? "closed" : state;
}
shape(streams.WritableStream, ["locked"], {
  internal: (stream) => [
    ["state", writableState(stream)],
    ["expectsBytes", internals.byteWritables.has(stream)],
  ],
});
shape(streams.TransformStream, ["readable", "writable"]);
shape(streams.ReadableStreamDefaultReader, ["closed"]);
shape(streams.ReadableStreamBYOBReader, ["closed"]);
shape(streams.WritableStreamDefaultWriter, ["closed", "ready", "desiredSize"]);
shape(streams.ReadableStreamDefaultController, ["desiredSize"]);
shape(streams.ReadableByteStreamController, ["byobRequest", "desiredSize"]);
shape(streams.ReadableStreamBYOBRequest, ["view", "atLeast"]);
shape(streams.WritableStreamDefaultController, ["signal"]);
shape(streams.TransformStreamDefaultController, ["desiredSize"]);
shape(TextEncoderStream, ["encoding", "readable", "writable"]);
shape(TextDecoderStream, ["encoding", "fatal", "ignoreBOM", "readable", "writable"]);
shape(CompressionStream, ["readable", "writable"]);
shape(DecompressionStream, ["readable", "writable"]);
