// ReadableStream and WritableStream as Workers RPC values, as workerd sends them (a byte stream
// to the other side, in either direction, as an argument or a result). The sender locks the
// stream and exports an RpcTarget over it (a StreamSource reading it, a StreamSink writing it);
// the receiver gets a new stream whose pulls and writes are RPC calls on that object's stub,
// which the stream owns and lets go when it is done, canceled or aborted. The sender's object
// works on its stream in the async flow of the request that sent it, so the request's own I/O
// objects (an IdentityTransformStream's sides, a body) stay usable from those calls, and holds
// that request open (its timers alive: a stream's pull() may wait on one) until the stream is
// done with, as workerd keeps the request's context for it.
// Marshalling itself is 84_rpc.js's (prepare / unmarshal call encode / decode here).

/** A stream's place inside a serialized value: `{ [KEY]: [kind, stub place] }`. */
const KEY = "\u0000workerbox.rpc.stream";

// The standard stream classes, taken before 97_compat.js may put refusing or legacy stand-ins
// in their global names (streams_enable_constructors, transformstream_enable_standard_constructor):
// the runtime's own streams here work at any compatibility date.
const ReadableStream = globalThis.ReadableStream;
const WritableStream = globalThis.WritableStream;
const TransformStream = globalThis.TransformStream;

/** What a receiver's stream reports when the other side goes away before its end, as workerd words it. */
const READ_DISCONNECTED = "ReadableStream received over RPC disconnected prematurely.";
const WRITE_DISCONNECTED = "WritableStream received over RPC was disconnected because the remote execution context has endeded.";

/** Runs `fn` in the async flow of event `owner` (the request that sent the stream), if any. */
const inFlow = (owner, fn) => (owner === undefined ? fn() : internals.enterEventFrame(owner, fn));

/** A chunk as bytes (a Uint8Array over its memory), or workerd's TypeError for anything else. */
function asBytes(value) {
  if (value instanceof Uint8Array) return value;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw new TypeError("This ReadableStream did not return bytes.");
}

/**
 * A sender's hold on the request that sent its stream (see above): `run(fn)` runs `fn` in that
 * request's flow; `finish()` lets the request go and is true only the first time.
 */
function senderHold() {
  const owner = internals.flowEvent();
  const letGo = internals.holdEvent(owner);
  let done = false;
  return {
    run: (fn) => inFlow(owner, fn),
    finish() {
      if (done) return false;
      done = true;
      letGo();
      return true;
    },
  };
}

/** Lets go of `stub` once, however many times it is called. */
function stubRelease(stub) {
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    stub[Symbol.dispose]();
  };
}

/** The sender's side of a ReadableStream: the receiver's pulls read it. */
class StreamSource extends internals.rpc.RpcTarget {
  #reader;
  #hold;

  constructor(stream) {
    super();
    this.#reader = stream.getReader();
    this.#hold = senderHold();
  }

  async read() {
    let result;
    try {
      result = await this.#hold.run(() => this.#reader.read());
    } catch (error) {
      this.#hold.finish();
      throw error;
    }
    const { done, value } = result;
    if (done) {
      this.#hold.finish();
      return { done: true };
    }
    // A view of part of a larger buffer is copied: the clone would carry all of that buffer.
    const bytes = asBytes(value);
    return { done: false, value: bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice() };
  }

  /** Cancels the stream unless it is over already (the promise of that cancel, else undefined). */
  #cancel() {
    return this.#hold.finish() ? this.#hold.run(() => this.#reader.cancel(new Error(READ_DISCONNECTED))) : undefined;
  }

  cancel() {
    return this.#cancel();
  }

  /** The receiver let go before the end: the stream is canceled. */
  [Symbol.dispose]() {
    this.#cancel()?.catch(() => {});
  }
}

/** The sender's side of a WritableStream: the receiver's writes land in it. */
class StreamSink extends internals.rpc.RpcTarget {
  #writer;
  #hold;

  constructor(stream) {
    super();
    this.#writer = stream.getWriter();
    this.#hold = senderHold();
  }

  write(chunk) {
    return this.#hold.run(() => this.#writer.write(chunk));
  }

  close() {
    this.#hold.finish();
    return this.#hold.run(() => this.#writer.close());
  }

  /** Aborts the stream with workerd's disconnect error unless it is over already (that abort's promise, else undefined). */
  #abort() {
    return this.#hold.finish() ? this.#hold.run(() => this.#writer.abort(new Error(WRITE_DISCONNECTED))) : undefined;
  }

  /** The receiver aborted: its reason stays there, as in workerd (the stream here gets workerd's disconnect error). */
  abort() {
    return this.#abort();
  }

  /** The receiver let go without closing: the stream is aborted. */
  [Symbol.dispose]() {
    this.#abort()?.catch(() => {});
  }
}

/** The stub each stream received over RPC reads or writes through (serveConnect's `wait()`). */
const streamStubs = new WeakMap();

/** A stream's stub: its calls wait on the peer's chunks, so limits.bindingMs does not bound them (84_rpc.js send). */
function untimed(stream, stub) {
  const target = stub[internals.rpc.kTarget];
  if (target !== undefined) target.untimed = true;
  streamStubs.set(stream, stub);
  return stream;
}

/** A ReadableStream whose chunks come from `stub`'s read() calls. */
function remoteReadable(stub) {
  const letGo = stubRelease(stub);
  return untimed(new ReadableStream(
    {
      async pull(controller) {
        let result;
        try {
          result = await stub.read();
        } catch {
          letGo();
          controller.error(new Error(READ_DISCONNECTED));
          return;
        }
        if (result?.done !== false) {
          letGo();
          controller.close();
        } else {
          controller.enqueue(result.value);
        }
      },
      async cancel() {
        try {
          await stub.cancel();
        } catch {
          // The other side is gone already: nothing is left to cancel.
        } finally {
          letGo();
        }
      },
    },
    { highWaterMark: 0 },
  ), stub);
}

/** A WritableStream whose writes go to `stub`'s write() calls. */
function remoteWritable(stub) {
  const letGo = stubRelease(stub);
  return untimed(new WritableStream({
    async write(chunk) {
      try {
        await stub.write(asBytes(chunk));
      } catch (error) {
        letGo();
        throw error;
      }
    },
    async close() {
      try {
        await stub.close();
      } finally {
        letGo();
      }
    },
    async abort() {
      try {
        await stub.abort();
      } catch {
        // Gone already.
      } finally {
        letGo();
      }
    },
  }), stub);
}

/**
 * A socket over two streams: what one side writes to `writable`, the other reads from its
 * `readable`. `done` settles when the connection is over (the callee's handler has returned);
 * `opened` resolves to `info`.
 */
function streamSocket(readable, writable, done, info = {}) {
  const opened = Promise.resolve(info);
  const closed = Promise.resolve(done).then(() => undefined);
  closed.catch(() => {});
  return Object.freeze({
    readable,
    writable,
    opened,
    closed,
    upgraded: false,
    secureTransport: "off",
    close() {
      readable.cancel().catch(() => {});
      writable.abort().catch(() => {});
      return closed.catch(() => {});
    },
    startTls() {
      throw new TypeError("startTls() is not available on a socket to a Worker's connect() handler.");
    },
  });
}

/**
 * `connect(address)` through service binding `binding`: the bound entrypoint's
 * `connect(socket)` handler gets a socket whose readable side is what this side writes and whose
 * writable side this side reads, as workerd's Fetcher.connect() gives.
 */
function connectThrough(binding, address, options) {
  if (arguments.length < 2 || address === undefined) throw new TypeError("connect(): an address is required.");
  const up = new TransformStream();
  const down = new TransformStream();
  const call = internals.rpc.send({ binding }, [], "connect", [up.readable, down.writable, typeof address === "string" ? address : String(address?.hostname ?? address)]);
  return streamSocket(down.readable, up.writable, call);
}

/** workerd's error for a read from an inbound TCP connection its client dropped (reset, not ended). */
const CONNECTION_LOST = "Network connection lost.";

/**
 * The readable side of an inbound TCP connection (the host's listener: lib/sockets/listen.js):
 * `readable`'s chunks as they come, and workerd's "Network connection lost." when the client
 * went away without ending, in place of the RPC stream's own disconnect error.
 */
function inboundReadable(readable) {
  const reader = readable.getReader();
  return new ReadableStream(
    {
      async pull(controller) {
        let result;
        try {
          result = await reader.read();
        } catch {
          controller.error(new Error(CONNECTION_LOST));
          return;
        }
        if (result.done) controller.close();
        else controller.enqueue(result.value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A call's `connect` into an entrypoint: its handler gets a socket over the two streams. With
 * `inbound` (a TCP connection the host accepted for it), the socket is workerd's inbound one:
 * `opened` gives `remoteAddress` and `localAddress` (both unset, as workerd gives them) and a
 * dropped client errors reads with workerd's message.
 */
async function serveConnect(root, [readable, writable, , options]) {
  if (typeof root?.connect !== "function") throw new TypeError("The entrypoint has no connect() handler.");
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  const inbound = options?.inbound === true;
  // An inbound connection is I/O of this event while it is open (until the handler has read
  // the client's end or its loss, or the client is gone): a handler awaiting something else
  // meanwhile is not hung, as in workerd. The host's wait() resolves then.
  if (inbound) streamStubs.get(readable)?.wait().catch(() => {});
  const socket = streamSocket(inbound ? inboundReadable(readable) : readable, writable, done, inbound ? internals.struct(["remoteAddress", "localAddress"], {}) : {});
  try {
    await root.connect(socket);
  } finally {
    finish();
  }
}

/**
 * A stream that reads `stream` for a reader elsewhere: `over()` when it ends or fails, `cancelled()`
 * (whose promise the cancel waits for) when that reader gives up first.
 */
function follow(stream, over, cancelled) {
  const reader = stream.getReader();
  return new ReadableStream(
    {
      async pull(controller) {
        let result;
        try {
          result = await reader.read();
        } catch (error) {
          over();
          throw error;
        }
        if (result.done) {
          over();
          controller.close();
        } else {
          controller.enqueue(result.value);
        }
      },
      cancel(reason) {
        const settled = cancelled();
        over();
        reader.cancel(reason).catch(() => {});
        return settled;
      },
    },
    { highWaterMark: 0 },
  );
}

internals.rpcStreams = {
  KEY,
  follow,
  connect: connectThrough,
  /** A ReadableStream over a StreamSource the host names by its stub id (a response body from a named entrypoint). */
  fromHostStub: (id) => remoteReadable(internals.rpc.stubFor(id)),
  serveConnect,

  /**
   * The place for `v` when it is a ReadableStream or WritableStream, else undefined; `walk`
   * exports the object that serves it. A locked stream cannot be sent (workerd's TypeError).
   */
  encode(v, walk) {
    if (v instanceof ReadableStream) {
      if (v.locked) throw new TypeError("The ReadableStream has been locked to a reader.");
      return { [KEY]: ["readable", walk(new StreamSource(v))] };
    }
    if (v instanceof WritableStream) {
      if (v.locked) throw new TypeError("The WritableStream has been locked to a writer.");
      return { [KEY]: ["writable", walk(new StreamSink(v))] };
    }
    return undefined;
  },

  /** The stream for a place `encode` wrote; `take` makes the stub the stream owns from its place. */
  decode(v, take) {
    const [kind, place] = v[KEY];
    const stub = take(place);
    return kind === "writable" ? remoteWritable(stub) : remoteReadable(stub);
  },
};
