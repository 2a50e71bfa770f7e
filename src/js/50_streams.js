// WHATWG Streams: ReadableStream (default and byte streams, BYOB readers, tee, pipes, async
// iteration), WritableStream, TransformStream and the queuing strategies. The implementation
// is the web-streams-polyfill npm package (a complete, tested implementation of the Streams
// Standard), embedded at build time and evaluated before this file as `internals.streams`.

const STREAM_GLOBALS = [
  "ReadableStream",
  "ReadableStreamDefaultReader",
  "ReadableStreamBYOBReader",
  "ReadableStreamBYOBRequest",
  "ReadableStreamDefaultController",
  "ReadableByteStreamController",
  "WritableStream",
  "WritableStreamDefaultWriter",
  "WritableStreamDefaultController",
  "TransformStream",
  "TransformStreamDefaultController",
  "ByteLengthQueuingStrategy",
  "CountQueuingStrategy",
];

for (const name of STREAM_GLOBALS) {
  const value = internals.streams[name];
  if (typeof value !== "function") throw new Error(`the streams implementation has no ${name}`);
  internals.defineGlobal(name, value);
}
