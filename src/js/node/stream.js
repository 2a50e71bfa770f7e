// node:stream: the `readable-stream` npm package (Node's streams, published separately), plus
// the web-stream adapters (`Readable`/`Writable`/`Duplex` `.fromWeb`/`.toWeb`) that Workers code
// uses to hand Node streams to fetch and Response: the package's own call into Node internals
// that do not exist outside Node, so they are replaced here.
const stream = require("vendor:readable-stream");
const { Buffer } = require("node:buffer");

module.exports = stream;

{
  /** A Node Readable over a WHATWG ReadableStream. */
  stream.Readable.fromWeb = function fromWeb(readableStream, options = {}) {
    const reader = readableStream.getReader();
    let reading = false;
    return new stream.Readable({
      ...options,
      read() {
        if (reading) return;
        reading = true;
        reader.read().then(
          ({ value, done }) => {
            reading = false;
            if (done) this.push(null);
            else this.push(value); // as Node's adapter: push() itself makes a Uint8Array a Buffer (a Buffer stays the same object)
          },
          (error) => this.destroy(error),
        );
      },
      destroy(error, callback) {
        reader.cancel(error ?? undefined).then(() => callback(error), () => callback(error));
      },
    });
  };
  /** A WHATWG ReadableStream over a Node Readable. */
  stream.Readable.toWeb = function toWeb(readable) {
    const iterator = readable[Symbol.asyncIterator]();
    return new internals.streams.ReadableStream({
      async pull(controller) {
        const { value, done } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(typeof value === "string" ? new TextEncoder().encode(value) : value instanceof Uint8Array ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength) : value);
      },
      cancel(reason) {
        readable.destroy(reason instanceof Error ? reason : undefined);
      },
    });
  };
  /** A Node Writable over a WHATWG WritableStream. */
  stream.Writable.fromWeb = function fromWeb(writableStream, options = {}) {
    const writer = writableStream.getWriter();
    return new stream.Writable({
      ...options,
      write(chunk, encoding, callback) {
        // As Node's adapter: a string is bytes unless the stream is in object mode (or keeps strings).
        const bytes = typeof chunk === "string" && !options.objectMode && options.decodeStrings !== false;
        writer.write(bytes ? Buffer.from(chunk, encoding) : chunk).then(() => callback(), callback);
      },
      final(callback) {
        writer.close().then(() => callback(), callback);
      },
      destroy(error, callback) {
        writer.abort(error ?? undefined).then(() => callback(error), () => callback(error));
      },
    });
  };
  /**
   * A WHATWG WritableStream over a Node Writable, as Node's adapter: a write is done once the
   * Writable takes it (or, when it asks to, once it drains); close ends it and waits for its
   * finish; an error of the Writable errors the stream.
   */
  stream.Writable.toWeb = function toWeb(writable) {
    let drain = null;
    let controller;
    writable.on("drain", () => {
      const waiting = drain;
      drain = null;
      waiting?.resolve();
    });
    stream.finished(writable, { readable: false }, (error) => {
      if (!error) return;
      drain?.reject(error);
      drain = null;
      controller.error(error);
    });
    return new internals.streams.WritableStream({
      start(c) {
        controller = c;
      },
      write(chunk) {
        if (writable.writableNeedDrain || !writable.write(chunk)) {
          drain = Promise.withResolvers();
          return drain.promise;
        }
      },
      close() {
        return new Promise((resolve, reject) => {
          stream.finished(writable, { readable: false }, (error) => (error ? reject(error) : resolve()));
          if (!writable.writableEnded) writable.end();
        });
      },
      abort(reason) {
        writable.destroy(reason instanceof Error ? reason : undefined);
      },
    });
  };
}
// A Duplex is destroyed as a Writable is (Node 22's): writes still buffered (corked) call back
// with ERR_STREAM_DESTROYED.
stream.Duplex.prototype.destroy = stream.Writable.prototype.destroy;

stream.Duplex.fromWeb = function fromWeb(pair, options = {}) {
  return stream.Duplex.from({ readable: stream.Readable.fromWeb(pair.readable, options), writable: stream.Writable.fromWeb(pair.writable, options) });
};
stream.Duplex.toWeb = function toWeb(duplex) {
  return { readable: stream.Readable.toWeb(duplex), writable: stream.Writable.toWeb(duplex) };
};

// Node 22's default high water marks (64 KiB, 16 objects), read and set through the vendored
// package's own state module, which every stream asks.
{
  const state = require("vendor:readable-stream/lib/internal/streams/state.js");
  stream.getDefaultHighWaterMark = state.getDefaultHighWaterMark;
  stream.setDefaultHighWaterMark = state.setDefaultHighWaterMark;
}

/**
 * Two Duplex streams joined back to back (Node 22's stream.duplexPair): what one side writes, the
 * other reads. A write completes once the other side asks for more, so backpressure crosses over;
 * ending one side ends what the other reads.
 */
stream.duplexPair = function duplexPair(options) {
  const sides = [];
  const pending = [null, null]; // per side: the callback of its write that waits for the other side's read
  const make = (self) =>
    new stream.Duplex({
      ...options,
      read() {
        const callback = pending[1 - self];
        if (callback) {
          pending[1 - self] = null;
          callback();
        }
      },
      write(chunk, encoding, callback) {
        if (chunk.length === 0) {
          require("node:process").nextTick(callback);
          return;
        }
        pending[self] = callback;
        sides[1 - self].push(chunk);
      },
      final(callback) {
        sides[1 - self].on("end", callback);
        sides[1 - self].push(null);
      },
    });
  sides.push(make(0), make(1));
  return sides;
};

// The package's browser entry defines `promises` on its Stream, which what it exports only
// inherits; workerd's node:stream has it as its own (a named export: node:stream/promises).
Object.defineProperty(stream, "promises", { value: stream.promises, writable: true, enumerable: true, configurable: true });
