// node:stream/consumers: reads a whole Node stream, web stream or async iterable.
const { Buffer } = require("node:buffer");

async function chunks(source) {
  const parts = [];
  const iterable = typeof source?.[Symbol.asyncIterator] === "function" ? source : typeof source?.getReader === "function" ? readAll(source) : null;
  if (iterable === null) {
    const error = new TypeError('The "stream" argument must be a stream or an async iterable.');
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  for await (const chunk of iterable) parts.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk.buffer ?? chunk, chunk.byteOffset ?? 0, chunk.byteLength));
  return parts;
}

async function* readAll(webStream) {
  const reader = webStream.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

exports.buffer = async (stream) => Buffer.concat(await chunks(stream));
exports.arrayBuffer = async (stream) => {
  const bytes = Buffer.concat(await chunks(stream));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};
exports.text = async (stream) => new TextDecoder().decode(Buffer.concat(await chunks(stream)));
exports.json = async (stream) => JSON.parse(await exports.text(stream));
exports.blob = async (stream) => new Blob(await chunks(stream));
