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

const streams = internals.streams;

/** Errors a stream through its controller; one that already ended or errored is left as it is. */
function errorQuietly(controller, error) {
  try {
    controller.error(error);
  } catch {}
}

for (const name of STREAM_GLOBALS) {
  const value = internals.streams[name];
  if (typeof value !== "function") throw new Error(`the streams implementation has no ${name}`);
  internals.defineGlobal(name, value);
}

// workerd's own BYOB read: readAtLeast(minElements, view) reads until at least `minElements` of
// the view's elements are in it; if the stream ends first, what came is the value (done only when
// nothing did). A reader's readAtLeast() calls run one after another, so two of them never share
// out the chunks between them. While one of its reads waits, the source's byobRequest.atLeast is
// what is still wanted, in bytes.
/** A BYOB reader -> the bytes its readAtLeast() still wants. */
const wantedAtLeast = new WeakMap();
/** A BYOB reader -> the end of its last readAtLeast() (a promise that never rejects). */
const lastAtLeast = new WeakMap();
Object.defineProperty(streams.ReadableStreamBYOBReader.prototype, "readAtLeast", {
  value: async function readAtLeast(minElements, view) {
    const count = Math.trunc(Number(minElements));
    if (!(count > 0)) throw new TypeError(`Requested invalid minimum number of bytes to read (${minElements}).`);
    if (!ArrayBuffer.isView(view)) throw new TypeError("readAtLeast: the view must be an ArrayBufferView.");
    const size = view.BYTES_PER_ELEMENT ?? 1;
    // As workerd checks it: the count, then the bytes it stands for, against the view's bytes.
    if (count > view.byteLength) throw new TypeError(`Minimum bytes to read (${count}) exceeds size of buffer (${view.byteLength}).`);
    const min = count * size;
    if (min > view.byteLength) throw new TypeError(`Minimum bytes to read (${min}) exceeds size of buffer (${view.byteLength}).`);
    const previous = lastAtLeast.get(this);
    let finished;
    const mine = new Promise((resolve) => (finished = resolve));
    lastAtLeast.set(this, mine);
    if (previous !== undefined) await previous;
    const View = view.constructor;
    const offset = view.byteOffset;
    const total = view.byteLength;
    let buffer = view.buffer;
    let filled = 0;
    try {
      for (;;) {
        wantedAtLeast.set(this, min - filled);
        const { value, done } = await this.read(new Uint8Array(buffer, offset + filled, total - filled));
        if (value !== undefined) {
          buffer = value.buffer;
          filled += value.byteLength;
        }
        if (done && filled === 0) return { value: new View(buffer, offset, 0), done: true };
        if (done || filled >= min) return { value: new View(buffer, offset, Math.floor(filled / size)), done: false };
      }
    } finally {
      wantedAtLeast.delete(this);
      finished();
      if (lastAtLeast.get(this) === mine) lastAtLeast.delete(this);
    }
  },
  writable: true,
  enumerable: true,
  configurable: true,
});

// workerd's byobRequest.atLeast: how many bytes the read it stands for still wants (a
// readAtLeast()'s minimum less what came, else the standard's `min` of the read, in bytes, less
// what was filled); null once the request was answered.
Object.defineProperty(streams.ReadableStreamBYOBRequest.prototype, "atLeast", {
  get: Object.getOwnPropertyDescriptor({
    get atLeast() {
      const controller = this?.[streams.slots._associatedReadableByteStreamController];
      if (controller === undefined) return null;
      const pullInto = controller[streams.slots._pendingPullIntos].peek();
      if (pullInto === undefined) return null;
      const stream = controller[streams.slots._controlledReadableByteStream];
      const reader = stream?.[streams.slots._reader];
      // A tee()'s source: what the readAtLeast() of the branch that pulled wants.
      const branchReader = stream?.[streams.slots._wbsTeeBranch]?.[streams.slots._reader];
      const wanted = (reader === undefined ? undefined : wantedAtLeast.get(reader)) ?? (branchReader === undefined ? undefined : wantedAtLeast.get(branchReader));
      return wanted ?? Math.max(0, pullInto.minimumFill - pullInto.bytesFilled);
    },
  }, "atLeast").get,
  enumerable: true,
  configurable: true,
});

/**
 * A stream the runtime makes for a body (Request, Response, Blob, fetch, bindings): what workerd
 * calls an "internal" stream. They are kept in `internals.internalStreams` for the flags that
 * concern only those (internal_stream_byob_return_view, see src/js/97_compat.js).
 */
internals.internalStreams = new WeakSet();
/** Byte streams made from whole bytes (bodies, Blob.stream()): console.log shows what is left of them. */
internals.sizedStreams = new WeakSet();

/** A byte stream of a copy of `bytes` (a body, `Blob.stream()`), which knows its length. */
internals.bytesStream = (bytes) => {
  // An empty one stays "readable" (with 0 bytes left) until it is read, as workerd's does.
  const stream = internals.internalStream({
    type: "bytes",
    start(controller) {
      if (bytes.byteLength === 0) return;
      controller.enqueue(bytes.slice());
      controller.close();
    },
    pull(controller) {
      controller.close();
      controller.byobRequest?.respond(0);
    },
  });
  internals.sizedStreams.add(stream);
  return stream;
};
/** Writable sides that take only bytes (CompressionStream's, DecompressionStream's). */
internals.byteWritables = new WeakSet();

/**
 * A byte stream the runtime makes (a body, a codec's or an identity pipe's readable side): no
 * default `autoAllocateChunkSize`, so a default read waits for what its source enqueues.
 */
let makingRuntimeStream = false;
/** The runtime's readable streams: cancelling one rejects the reads waiting on it, as in workerd. */
const runtimeStreams = new WeakSet();
internals.runtimeStreams = runtimeStreams;
function runtimeStream(source, strategy) {
  makingRuntimeStream = true;
  try {
    const stream = new streams.ReadableStream(source, strategy);
    runtimeStreams.add(stream);
    return stream;
  } finally {
    makingRuntimeStream = false;
  }
}

/**
 * A cancel reason as workerd's runtime streams pass it on (to the reads waiting, to the writable
 * side of an identity pipe): an error as it is, no reason "Stream was cancelled.", anything else
 * an Error of its text.
 */
internals.cancelError = (reason) => {
  if (reason === undefined) return new Error("Stream was cancelled.");
  return reason instanceof Error ? reason : new Error(String(reason));
};
// build.rs (workerd_stream_sources): asked as a stream is cancelled.
streams.cancelRejectsReads = (stream, reason) => (runtimeStreams.has(stream) ? internals.cancelError(reason) : undefined);

internals.internalStream = (source, strategy = undefined) => {
  const stream = runtimeStream(source, strategy);
  internals.internalStreams.add(stream);
  return stream;
};

// workerd's UnderlyingSource::DEFAULT_AUTO_ALLOCATE_CHUNK_SIZE: a byte stream the worker makes
// gets a 4096-byte byobRequest for a default reader's read (and so for a body read from it)
// unless its source names an autoAllocateChunkSize, or the experimental
// streams_no_default_auto_allocate_chunk_size (with unsafeExperimental) drops the default.
const DEFAULT_AUTO_ALLOCATE_CHUNK_SIZE = 4096;

/** workerd's `expectedLength` (a Web IDL unsigned 64-bit integer): the length a body made of the stream is sent with. */
function expectedLength(value, what) {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (Number.isNaN(number) || number === Infinity || number === -Infinity) throw new TypeError(`Failed to construct '${what}': expectedLength: The value cannot be converted because it is not an integer.`);
  if (number < 0) throw new TypeError(`Failed to construct '${what}': expectedLength: The value cannot be converted because it is negative and this API expects a positive bigint.`);
  return Math.trunc(number);
}

// Called by the ReadableStream constructor before it sets up the controller (build.rs,
// workerd_stream_sources): `dict` is the source as the constructor converted it.
streams.onSource = (stream, source, dict) => {
  const runtime = makingRuntimeStream;
  makingRuntimeStream = false;
  if (runtime || source === null || source === undefined) return;
  if (dict.type === "bytes" && dict.autoAllocateChunkSize === undefined && !internals.feature("streams_no_default_auto_allocate_chunk_size")) {
    dict.autoAllocateChunkSize = DEFAULT_AUTO_ALLOCATE_CHUNK_SIZE;
  }
  const length = expectedLength(source.expectedLength, "ReadableStream");
  if (length !== undefined) internals.fixedLengths.set(stream, { expected: length, left: () => length });
};
// Called at the end of the TransformStream constructor: a transformer's `expectedLength` is its
// readable side's, as in workerd.
streams.onTransformer = (transform, transformer) => {
  if (transformer === null || transformer === undefined) return;
  const length = expectedLength(transformer.expectedLength, "TransformStream");
  if (length !== undefined) internals.fixedLengths.set(transform[streams.slots._readable], { expected: length, left: () => length });
};

/** The shape shared by the standard's transform-stream wrappers: `readable` and `writable`. */
class TransformWrapper {
  #transform;
  constructor(transform) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    this.#transform = transform;
  }
  get readable() {
    return this.#transform.readable;
  }
  get writable() {
    return this.#transform.writable;
  }
}

/**
 * The TransformStream under TextEncoderStream and TextDecoderStream. Its readable side's high
 * water mark is the standard's 0 from encoder_stream_spec_compliant_backpressure (2026-03-24),
 * and 1 before, as in workerd then.
 */
function encodingTransform(transformer) {
  const readable = internals.feature("encoder_stream_spec_compliant_backpressure") ? undefined : { highWaterMark: 1 };
  return new internals.streams.TransformStream(transformer, undefined, readable);
}

// TextEncoderStream and TextDecoderStream: TransformStreams around TextEncoder and a streaming
// TextDecoder (so a character split across chunks decodes correctly).
class TextEncoderStream extends TransformWrapper {
  constructor() {
    const encoder = new TextEncoder();
    let pendingHigh = ""; // a high surrogate that ended the previous chunk
    super(encodingTransform({
      transform(chunk, controller) {
        let text = pendingHigh + String(chunk);
        pendingHigh = "";
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          pendingHigh = text.slice(-1);
          text = text.slice(0, -1);
        }
        if (text.length > 0) controller.enqueue(encoder.encode(text));
      },
      flush(controller) {
        if (pendingHigh) controller.enqueue(encoder.encode(pendingHigh));
      },
    }));
  }
  get encoding() {
    return "utf-8";
  }
  get [Symbol.toStringTag]() {
    return "TextEncoderStream";
  }
}

class TextDecoderStream extends TransformWrapper {
  #decoder;
  constructor(label = "utf-8", options = undefined) {
    // Without pedantic_wpt workerd's TextDecoderStream is fatal unless the options given say
    // otherwise (no options at all: not fatal); with it, the standard's not fatal.
    if (options !== undefined && options !== null && options.fatal === undefined && !internals.feature("pedantic_wpt")) {
      options = { fatal: true, ignoreBOM: options.ignoreBOM };
    }
    const decoder = new TextDecoder(label, options);
    super(encodingTransform({
      transform(chunk, controller) {
        // Chunks must be BufferSources (undefined is not the empty input it is for decode()).
        if (!(chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk) || (typeof SharedArrayBuffer === "function" && chunk instanceof SharedArrayBuffer))) {
          throw new TypeError("TextDecoderStream: chunks must be ArrayBuffers or ArrayBufferViews.");
        }
        const text = decoder.decode(chunk, { stream: true });
        if (text) controller.enqueue(text);
      },
      flush(controller) {
        const text = decoder.decode();
        if (text) controller.enqueue(text);
      },
    }));
    this.#decoder = decoder;
  }
  get encoding() {
    return this.#decoder.encoding;
  }
  get fatal() {
    return this.#decoder.fatal;
  }
  get ignoreBOM() {
    return this.#decoder.ignoreBOM;
  }
  get [Symbol.toStringTag]() {
    return "TextDecoderStream";
  }
}

// 97_compat.js gives them their attributes of their own before workers_api_getters_setters_on_prototype.
internals.TransformWrapper = TransformWrapper;
internals.defineGlobal("TextEncoderStream", TextEncoderStream);
internals.defineGlobal("TextDecoderStream", TextDecoderStream);

// CompressionStream and DecompressionStream ("gzip", "deflate", "deflate-raw"), with the
// codec in native code (flate2). Not a TransformStream: a transform cannot wait for its reader
// between the chunks it makes from one input, and a 500 KB gzip bomb expands to gigabytes. As
// in workerd, a write hands the codec its input and settles once the codec took it, keeping the
// output for the reader (so `await writer.write(); await writer.close();` before reading works),
// and close() finishes the output at once — but only up to AHEAD bytes of unread output: past
// that, output is made one bounded chunk (about 64 KB) per pull, as the reader reads, and the
// write settles once the reader has pulled what its input made (backpressure).
const AHEAD = 1 << 20;
/** workerd's error for data a DecompressionStream cannot decode. */
const DECOMPRESSION_FAILED = "Decompression failed.";
/** A codec's error as workerd's DecompressionStream words it. */
function decompressionError(error) {
  const message = error?.message;
  if (typeof message !== "string") return error;
  if (message.endsWith("data after the end of the compressed stream")) return new TypeError("Trailing bytes after end of compressed data");
  if (message === "unexpected end of file") return new TypeError("Called close() on a decompression stream with incomplete data");
  if (message.startsWith("The compressed data is invalid")) return new TypeError(DECOMPRESSION_FAILED);
  return error;
}
function codecStream(format, decompress, what) {
  format = String(format);
  // The codecs also do brotli (for node:zlib); the web streams take only the three formats.
  // strict_compression_checks (2023-08-01): data after the end of the compressed stream, or a
  // stream closed before its end, is an error; before, the first was ignored and the second
  // ended the output where the data stopped.
  const strict = !decompress || internals.feature("strict_compression_checks");
  let id = ["gzip", "deflate", "deflate-raw"].includes(format) ? ops.codecCreate(format, decompress, undefined, !strict) : null;
  if (id === null) throw new TypeError(`Failed to construct '${what}': Unsupported compression format: '${format}'`);
  let controller;
  let drained = null; // { resolve, reject } of the write whose output is being read
  let wake = null; // resolves a pull waiting for input
  let closing = false;
  let failure = null;
  const release = () => {
    if (id !== null) ops.codecDrop(id);
    id = null;
  };
  const fail = (error) => {
    failure ??= error;
    release();
    drained?.reject(error);
    drained = null;
    wake?.();
  };
  // A codec error fails the whole stream (its writer too) before it reaches the reader.
  const guarded = (op) => {
    try {
      return op();
    } catch (caught) {
      const error = decompress ? decompressionError(caught) : caught;
      fail(error);
      throw error;
    }
  };
  /** Fails the readable side too (an error met in a write or close, not in a pull). */
  const failBoth = (op) => {
    try {
      return op();
    } catch (error) {
      errorQuietly(controller, error);
      throw error;
    }
  };
  /**
   * Makes the output of the input written so far, while less than AHEAD bytes wait unread;
   * true when the codec has used up that input.
   */
  // Output made before the reader asked for it: handed over as one chunk at the next read, as
  // workerd's buffered output is (a reader that reads once after close() gets all of it).
  let ahead = [];
  let aheadBytes = 0;
  let ended = false; // close() finished the output into `ahead`
  const keep = (bytes) => {
    if (bytes.byteLength === 0) return;
    ahead.push(bytes);
    aheadBytes += bytes.byteLength;
  };
  const takeAhead = () => {
    let out = ahead[0];
    if (ahead.length > 1) {
      out = new Uint8Array(aheadBytes);
      let at = 0;
      for (const part of ahead) {
        out.set(part, at);
        at += part.byteLength;
      }
    }
    ahead = [];
    aheadBytes = 0;
    return out;
  };
  const produceAhead = () => {
    while (aheadBytes < AHEAD) {
      const out = guarded(() => ops.codecRead(id));
      if (out === null) return true;
      keep(out);
      if (!ops.codecPending(id)) return true;
    }
    return false;
  };
  // A byte stream, as workerd's (a BYOB reader can read it).
  const readable = runtimeStream({
    type: "bytes",
    start(c) {
      controller = c;
    },
    async pull(c) {
      for (;;) {
        if (failure !== null) throw failure;
        if (aheadBytes > 0) {
          c.enqueue(takeAhead());
          if (ended) c.close();
          return;
        }
        if (ended) return c.close();
        if (id === null) return;
        const out = guarded(() => ops.codecRead(id));
        if (out !== null) {
          if (out.byteLength === 0) continue;
          c.enqueue(out);
          // That read used up the written input: the write is done, without waiting for a pull
          // that would only find nothing more.
          if (!ops.codecPending(id)) {
            drained?.resolve();
            drained = null;
          }
          return;
        }
        // The queued input is used up: the write that brought it is done.
        drained?.resolve();
        drained = null;
        if (closing) {
          let rest;
          try {
            rest = guarded(() => ops.codecFinish(id, decompress && strict));
          } finally {
            id = null;
          }
          if (rest.byteLength > 0) c.enqueue(rest);
          return c.close();
        }
        await new Promise((resolve) => (wake = resolve));
        wake = null;
      }
    },
    cancel(reason) {
      fail(reason ?? new TypeError(`${what}: the readable side was cancelled`));
    },
  }, { highWaterMark: 0 });
  const writable = new internals.streams.WritableStream({
    write(chunk) {
      if (!(chunk instanceof ArrayBuffer) && !ArrayBuffer.isView(chunk)) {
        // A bad chunk errors both sides: the reader sees the TypeError too.
        const error = new TypeError(`${what}: chunks must be ArrayBuffers or ArrayBufferViews`);
        fail(error);
        errorQuietly(controller, error);
        throw error;
      }
      if (failure !== null) throw failure;
      ops.codecWrite(id, chunk instanceof ArrayBuffer ? new Uint8Array(chunk) : chunk);
      if (failBoth(produceAhead)) {
        wake?.();
        return undefined;
      }
      const done = new Promise((resolve, reject) => (drained = { resolve, reject }));
      wake?.();
      return done;
    },
    close() {
      if (failure !== null) throw failure;
      closing = true;
      // Every write settled, so the codec has used up its input: the output ends now, unless
      // the reader is still behind by AHEAD bytes (then a pull ends it).
      if (id !== null && aheadBytes < AHEAD) {
        failBoth(() => {
          try {
            keep(guarded(() => ops.codecFinish(id, decompress && strict)));
          } finally {
            id = null;
          }
          ended = true;
        });
      }
      wake?.();
    },
    abort(reason) {
      fail(reason);
      errorQuietly(controller, reason);
    },
  });
  internals.byteWritables.add(writable);
  return { readable, writable };
}

class CompressionStream extends TransformWrapper {
  constructor(format) {
    super(codecStream(format, false, "CompressionStream"));
  }
  get [Symbol.toStringTag]() {
    return "CompressionStream";
  }
}

class DecompressionStream extends TransformWrapper {
  constructor(format) {
    super(codecStream(format, true, "DecompressionStream"));
  }
  get [Symbol.toStringTag]() {
    return "DecompressionStream";
  }
}

internals.defineGlobal("CompressionStream", CompressionStream);

// ---- IdentityTransformStream and FixedLengthStream --------------------------------------------
// workerd's byte pipes (TransformStream subclasses from before the standard constructor): what
// is written comes out unchanged on a byte readable side (so a BYOB reader can read it), a
// write waits until its bytes are taken, and anything but an ArrayBuffer or a view is a
// TypeError. A FixedLengthStream also insists on exactly its length: a body made from it is sent
// with that Content-Length (`internals.fixedLengths`).

/** Readable sides of FixedLengthStreams → { expected: bytes in all, left(): bytes still to come }. */
internals.fixedLengths = new WeakMap();

/** Adds a FixedLengthStream body's `content-length` to a flat header list that has none. */
internals.addFixedLength = (flat, body, headers) => {
  const length = internals.fixedLengths.get(body)?.expected;
  if (length !== undefined && !headers.has("content-length")) flat.push("content-length", String(length));
};

/**
 * The two sides of an identity pipe, checking `expected` bytes when it is a number. A write and
 * a read meet: the write's bytes are handed over when a read asks (or at once if one waits), and
 * only then is the write done.
 */
function identityPipe(expected, highWaterMark) {
  let readController;
  let writeController;
  let remaining = expected;
  let pendingWrite = null; // { bytes, resolve, reject }: a write waiting for a read
  let pendingPull = null; // a read waiting for a write: resolves the pull
  let aborted = null; // { reason } of an abort() the readable side has not met yet
  let ended = null; // { error } of a close() the readable side has not met yet (error: null or a TypeError)
  const endPull = () => {
    pendingPull?.();
    pendingPull = null;
  };
  const endWrite = (error) => {
    if (pendingWrite === null) return;
    if (error === undefined) pendingWrite.resolve();
    else pendingWrite.reject(error);
    pendingWrite = null;
  };
  // As in workerd, a write takes its bytes when it is made (the strategy's size() is asked
  // then): a buffer resized, changed or transferred while the write waits in the queue does not
  // change what is written. Also noted then: whether a pipe made the write. { chunk, bytes,
  // piped } per write, in the order written (a write refused before it was queued leaves one
  // that the next write skips).
  const made = [];
  const take = (chunk) => {
    const bytes = chunk instanceof ArrayBuffer || ArrayBuffer.isView(chunk) ? internals.bytesOf(chunk).slice() : null;
    made.push({ chunk, bytes, piped: streams.isPiping() });
  };
  const taken = (chunk) => {
    while (made.length > 0 && made[0].chunk !== chunk) made.shift();
    return made.shift();
  };
  /** Errors both sides with `error`. */
  const fail = (error) => {
    errorQuietly(readController, error);
    errorQuietly(writeController, error);
    endWrite(error);
    endPull();
  };
  const readable = runtimeStream({
    type: "bytes",
    start(c) {
      readController = c;
    },
    pull(c) {
      if (aborted !== null) return errorQuietly(c, aborted.reason);
      if (ended !== null) {
        if (ended.error !== null) return errorQuietly(c, ended.error);
        c.close();
        return c.byobRequest?.respond(0);
      }
      if (pendingWrite !== null) {
        c.enqueue(pendingWrite.bytes);
        return endWrite();
      }
      return new Promise((resolve) => (pendingPull = resolve));
    },
    cancel(reason) {
      const error = internals.cancelError(reason);
      errorQuietly(writeController, error);
      endWrite(error);
    },
  }, { highWaterMark: 0 });
  const writable = new streams.WritableStream({
    start(c) {
      writeController = c;
    },
    write(chunk) {
      const write = taken(chunk);
      if (write?.piped && write.bytes === null) {
        // workerd's pipe into one of its own writables words it so, whatever the chunk.
        const error = new TypeError("This WritableStream only supports writing byte types.");
        fail(error);
        throw error;
      }
      if (typeof chunk === "string") {
        const error = new TypeError("This TransformStream is being used as a byte stream, but received a string on its writable side. If you wish to write a string, you'll probably want to explicitly UTF-8-encode it with TextEncoder.");
        fail(error);
        throw error;
      }
      if (!(chunk instanceof ArrayBuffer) && !ArrayBuffer.isView(chunk)) {
        const error = new TypeError("This TransformStream is being used as a byte stream, but received an object of non-ArrayBuffer/ArrayBufferView type on its writable side.");
        fail(error);
        throw error;
      }
      const bytes = write?.bytes ?? internals.bytesOf(chunk).slice();
      if (remaining !== undefined) {
        // As in workerd, the write itself succeeds and the reader gets the error.
        if (bytes.byteLength > remaining) return fail(new TypeError("Attempt to write too many bytes through a FixedLengthStream."));
        remaining -= bytes.byteLength;
      }
      if (bytes.byteLength === 0) return undefined;
      if (pendingPull !== null) {
        readController.enqueue(bytes);
        return endPull();
      }
      return new Promise((resolve, reject) => (pendingWrite = { bytes, resolve, reject }));
    },
    close() {
      // As in workerd, close() itself succeeds and the reader gets the error; and the readable
      // side learns of the end when it is read: a read waiting now ends at once, else the next
      // read does (until then it still reads as "readable").
      const error = remaining !== undefined && remaining !== 0 ? new TypeError("FixedLengthStream did not see all expected bytes before close().") : null;
      if (pendingPull === null) {
        ended = { error };
        return;
      }
      if (error !== null) errorQuietly(readController, error);
      else readController.close();
      endPull();
    },
    abort(reason) {
      // As in workerd, the readable side learns of the abort when it is read: a read waiting
      // now fails at once, else the next read does (until then it still reads as "readable").
      if (pendingPull === null) {
        aborted = { reason };
        return;
      }
      errorQuietly(readController, reason);
      endPull();
    },
  // Without a highWaterMark, as in workerd, the writable side reports no backpressure at all:
  // desiredSize stays 1 and ready stays resolved (each write still waits for its read).
  }, highWaterMark === undefined ? { highWaterMark: 1, size: (chunk) => (take(chunk), 0) } : { highWaterMark, size: (chunk) => (take(chunk), chunk?.byteLength ?? 0) });
  internals.byteWritables.add(writable);
  if (expected !== undefined) internals.fixedLengths.set(readable, { expected, left: () => remaining });
  // Both sides are I/O objects of the request that made them (src/js/52_io_owner.js).
  const owner = internals.ioOwner();
  internals.ownWritable(writable, owner, "Writable");
  internals.ownStream(readable, owner);
  return { readable, writable };
}

/** The optional `{ highWaterMark }` (in bytes) both constructors take. */
function identityStrategy(strategy, what) {
  if (strategy === undefined || strategy === null) return undefined;
  if (typeof strategy !== "object") throw new TypeError(`Failed to construct '${what}': the queuing strategy must be an object.`);
  if (strategy.highWaterMark === undefined) return undefined;
  const mark = Number(strategy.highWaterMark);
  if (!Number.isFinite(mark) || mark < 0) throw new TypeError(`Failed to construct '${what}': highWaterMark must be a non-negative number.`);
  return Math.floor(mark);
}

/** Puts `pipe`'s two sides in place of a TransformStream's own (whose controller is then unused). */
function replaceTransformSides(transform, pipe) {
  transform[streams.slots._readable] = pipe.readable;
  transform[streams.slots._writable] = pipe.writable;
}

class IdentityTransformStream extends streams.TransformStream {
  constructor(strategy = undefined) {
    super();
    // A FixedLengthStream makes its own pipe, with its length.
    if (!(this instanceof FixedLengthStream)) replaceTransformSides(this, identityPipe(undefined, identityStrategy(strategy, "IdentityTransformStream")));
  }
  get [Symbol.toStringTag]() {
    return "IdentityTransformStream";
  }
}

class FixedLengthStream extends IdentityTransformStream {
  constructor(expectedLength, strategy = undefined) {
    // workerd's conversion to an unsigned 64-bit integer: truncated, negative refused.
    const number = expectedLength === undefined ? NaN : Number(expectedLength);
    if (Number.isNaN(number)) throw new TypeError("Failed to construct 'FixedLengthStream': constructor parameter 1 is not of type 'bigint'.");
    if (number < 0) throw new TypeError("The value cannot be converted because it is negative and this API expects a positive bigint.");
    const length = Math.trunc(number);
    if (length > Number.MAX_SAFE_INTEGER) throw new TypeError("FixedLengthStream requires an integer expected length less than 2^53.");
    super();
    // No high water mark above the length, as in workerd.
    const mark = identityStrategy(strategy, "FixedLengthStream");
    const pipe = identityPipe(length, mark === undefined ? undefined : Math.min(mark, length));
    replaceTransformSides(this, pipe);
  }
  get [Symbol.toStringTag]() {
    return "FixedLengthStream";
  }
}

internals.defineGlobal("IdentityTransformStream", IdentityTransformStream);
internals.defineGlobal("FixedLengthStream", FixedLengthStream);

internals.defineGlobal("DecompressionStream", DecompressionStream);

// build.rs (workerd_stream_sources): the stream errors workerd throws from a promise-returning
// method before capture_async_api_throws (2022-10-31) are thrown then, and rejections after.
streams.asyncThrows = () => !internals.feature("capture_async_api_throws");

// A runtime stream (workerd's "internal" streams) takes one read at a time: a second read while
// one waits is rejected.
for (const [Reader, requests] of [[streams.ReadableStreamDefaultReader, streams.slots._readRequests], [streams.ReadableStreamBYOBReader, streams.slots._readIntoRequests]]) {
  const read = Reader.prototype.read;
  const reading = {
    read(...args) {
      const stream = this?.[streams.slots._ownerReadableStream];
      if (stream !== undefined && runtimeStreams.has(stream) && this[requests]?.length > 0) {
        return Promise.reject(new TypeError("This ReadableStream only supports a single pending read request at a time."));
      }
      return Reflect.apply(read, this, args);
    },
  }.read;
  Object.defineProperty(Reader.prototype, "read", { value: internals.disguise(reading, read), writable: true, enumerable: true, configurable: true });
}
