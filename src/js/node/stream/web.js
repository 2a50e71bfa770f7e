// node:stream/web: the runtime's WHATWG streams under the names Node exports them by.
for (const name of [
  "ReadableStream", "ReadableStreamDefaultReader", "ReadableStreamBYOBReader", "ReadableStreamBYOBRequest",
  "ReadableByteStreamController", "ReadableStreamDefaultController", "TransformStream",
  "TransformStreamDefaultController", "WritableStream", "WritableStreamDefaultWriter",
  "WritableStreamDefaultController", "ByteLengthQueuingStrategy", "CountQueuingStrategy",
  "TextEncoderStream", "TextDecoderStream", "CompressionStream", "DecompressionStream",
]) {
  if (globalThis[name] !== undefined) exports[name] = globalThis[name];
}
