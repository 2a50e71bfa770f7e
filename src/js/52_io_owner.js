// Which request an I/O object belongs to, and workerd's error for using it from another one.
// In workerd an I/O object (a body stream, a fetch() response, a WebSocket, an
// IdentityTransformStream's writable side, an AbortController's canceler) belongs to the I/O
// context of the request that made it; touched from another request's handler it throws
// "Cannot perform I/O on behalf of a different request. … (I/O type: <what>)". Here the owner is
// the event (ops.currentEvent()) running when the object was made; objects made outside any
// event (at the top level) or inside a Durable Object call (workerd gives each object one I/O
// context, see 85_durable.js) belong to no one and may be used from anywhere, as in workerd.
// The sockets of 86_sockets.js keep their own owner the same way.
//
// Streams: the runtime's own streams (bodies and what the runtime makes for them) are registered
// here with their owner; a reader taken from one rejects read() from another request, and so do
// pipeTo() and cancel(). A stream the worker made itself (new ReadableStream) belongs to no one,
// as in workerd.

const OTHER_REQUEST =
  "Cannot perform I/O on behalf of a different request. I/O objects (such as streams, request/response bodies, and others) created in the context of one request handler cannot be accessed from a different request's handler. This is a limitation of Cloudflare Workers which allows us to improve overall performance.";

// Which event is running: a promise continuation runs in whatever macrotask settled its promise
// (another request's, when that request resolved it), so the event is carried along the async
// flow instead, in V8's continuation-preserved embedder data (the AsyncLocalStorage frame of
// src/js/node/async_hooks.js, a Map, under a key of its own): an event's first turn puts it there
// (EventWork in 90_entry.js, a WebSocket's events in 76_websocket.js), every reaction and timer
// registered after keeps it. Where no frame says, the macrotask's event (ops.currentEvent()).
const kEvent = Symbol("event");

/** Puts event `id` in the current async flow; `fn`, when given, runs in it and the flow is put back after. */
internals.enterEventFrame = (id, fn = undefined) => {
  const previous = ops.continuationGet();
  const frame = new Map(previous instanceof Map ? previous : undefined);
  frame.set(kEvent, id);
  ops.continuationSet(frame);
  if (fn === undefined) return undefined;
  try {
    return fn();
  } finally {
    ops.continuationSet(previous);
  }
};

/** The event whose async flow is running, or undefined. */
function flowEvent() {
  const frame = ops.continuationGet();
  if (frame instanceof Map) {
    const id = frame.get(kEvent);
    if (id !== undefined) return id;
  }
  return ops.currentEvent();
}
internals.flowEvent = flowEvent;

/** The event an I/O object made now belongs to, or null (no event, or a Durable Object's). */
internals.ioOwner = () => {
  const id = flowEvent();
  return id === undefined || internals.isDurableEvent?.(id) ? null : id;
};

/** workerd's error when the running event is not `owner` (null when it may go ahead). */
internals.foreignIo = (owner, type) => {
  if (owner === null || owner === undefined) return null;
  const id = flowEvent();
  if (id === undefined || id === owner || internals.isDurableEvent?.(id)) return null;
  return new Error(`${OTHER_REQUEST} (I/O type: ${type})`);
};

/** Throws workerd's error when the running event is not `owner`. */
internals.checkIo = (owner, type) => {
  const error = internals.foreignIo(owner, type);
  if (error !== null) throw error;
};

const streams = internals.streams;
/** Runtime-made readable streams → the event they belong to. */
const streamOwners = new WeakMap();
/** Readers and writers of owned streams → [owner, I/O type]. */
const handleOwners = new WeakMap();

/** Registers `stream` (a readable the runtime made) as `owner`'s, `type` naming it in errors. */
internals.ownStream = (stream, owner, type = "ReadableStreamSource") => {
  if (owner !== null && owner !== undefined && stream !== null && stream !== undefined && !streamOwners.has(stream)) streamOwners.set(stream, [owner, type]);
  return stream;
};

/** Replaces method `name` of `proto` with `wrapper`, which reads as the original (name, length, source). */
function replace(proto, name, wrapper) {
  Object.defineProperty(proto, name, { value: internals.disguise(wrapper, proto[name]), writable: true, enumerable: true, configurable: true });
}

const rs = streams.ReadableStream.prototype;
const getReader = rs.getReader;
replace(rs, "getReader", function getReader_(options = undefined) {
  const reader = Reflect.apply(getReader, this, [options]);
  const owned = streamOwners.get(this);
  if (owned !== undefined) handleOwners.set(reader, owned);
  return reader;
});

/** `original` (a method returning a promise) rejecting when `table` says its `this` is another request's. */
function guardedMethod(name, original, table) {
  return {
    [name](...args) {
      const owned = table.get(this);
      if (owned !== undefined) {
        const error = internals.foreignIo(owned[0], owned[1]);
        if (error !== null) return Promise.reject(error);
      }
      return Reflect.apply(original, this, args);
    },
  }[name];
}

/** Wraps the method `name` of `proto` with the check (and its un-delayed form, src/js/51_stream_promises.js, too). */
function guardAsync(proto, name, table) {
  const original = proto[name];
  const guarded = guardedMethod(name, original, table);
  replace(proto, name, guarded);
  const before = internals.streamMethodBeforeLater.get(original);
  if (before !== undefined) internals.streamMethodBeforeLater.set(guarded, guardedMethod(name, before, table));
}

guardAsync(streams.ReadableStreamDefaultReader.prototype, "read", handleOwners);
guardAsync(streams.ReadableStreamBYOBReader.prototype, "read", handleOwners);
guardAsync(rs, "pipeTo", streamOwners);
guardAsync(rs, "cancel", streamOwners);

/** Runtime-made writable sides → [owner, type]; a writer taken from one rejects write()/close() from another request. */
const writableOwners = new WeakMap();
internals.ownWritable = (writable, owner, type = "Writable") => {
  if (owner !== null && owner !== undefined) writableOwners.set(writable, [owner, type]);
  return writable;
};
const ws = streams.WritableStream.prototype;
const getWriter = ws.getWriter;
replace(ws, "getWriter", function getWriter_() {
  const writer = Reflect.apply(getWriter, this, []);
  const owned = writableOwners.get(this);
  if (owned !== undefined) handleOwners.set(writer, owned);
  return writer;
});
guardAsync(streams.WritableStreamDefaultWriter.prototype, "write", handleOwners);
guardAsync(streams.WritableStreamDefaultWriter.prototype, "close", handleOwners);

// A TransformStream's two sides are I/O objects in workerd (unlike a ReadableStream or a
// WritableStream the worker makes): a write or read from another request than the one that made
// it throws, with the I/O types workerd names them by ("$_5>" and "$_1>", as workerd prints them).
// The global constructor records who made each one; its class, prototype and statics are the
// polyfill's.
const TransformStream = streams.TransformStream;
const OwnedTransformStream = new Proxy(TransformStream, {
  construct(target, args, newTarget) {
    const stream = Reflect.construct(target, args, newTarget === OwnedTransformStream ? target : newTarget);
    const owner = internals.ioOwner();
    if (owner !== null) {
      internals.ownWritable(stream[streams.slots._writable], owner, "$_5>");
      internals.ownStream(stream[streams.slots._readable], owner, "$_1>");
    }
    return stream;
  },
});
internals.disguise(OwnedTransformStream, TransformStream);
Object.defineProperty(TransformStream.prototype, "constructor", { value: OwnedTransformStream, writable: true, enumerable: false, configurable: true });
internals.defineGlobal("TransformStream", OwnedTransformStream);
