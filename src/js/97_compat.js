// Compatibility flags that change the global scope or wrap whole APIs: applied per context by
// `prepareContext()`, after the Web APIs are installed and before the user's script runs, from
// the features lib/compat.js turned on. Each block gives a worker with an older compatibility
// date (or the disable flag) what workerd gave it then. Flags that change one API's insides are
// read where that API lives (`internals.feature(…)`); docs/compatibility.md lists them all.

const { ReadableStream, WritableStream, TransformStream } = internals.streams;
/** web-streams-polyfill's field keys (`slot._state`, …: symbols, see build.rs). */
const slot = internals.streams.slots;
// workerd's "internal" (native) writables made here: internal_writable_stream_abort_clears_queue
// is about them only.
const internalWritables = new WeakSet();
const STREAM_CONTROLLERS = [
  "ReadableStreamBYOBRequest",
  "ReadableStreamDefaultController",
  "ReadableByteStreamController",
  "WritableStreamDefaultController",
  "TransformStreamDefaultController",
];

// ECMAScript's and V8's own globals: set_tostring_tag concerns the runtime's API classes only.
const LANGUAGE_GLOBALS = new Set([
  "Symbol", "Promise", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry",
  "ArrayBuffer", "SharedArrayBuffer", "DataView", "BigInt", "Iterator", "AsyncDisposableStack",
  "DisposableStack", "JSON", "Math", "Reflect", "Atomics", "Intl", "WebAssembly", "Temporal",
  "console", "globalThis",
]);

/** A stand-in constructor that refuses to construct, with `Real`'s prototype and statics. */
function refusingConstructor(Real, message) {
  const Refusing = {
    [Real.name]: function () {
      throw new Error(message);
    },
  }[Real.name];
  for (const key of Reflect.ownKeys(Real)) {
    if (key !== "name" && key !== "length") Object.defineProperty(Refusing, key, Object.getOwnPropertyDescriptor(Real, key));
  }
  Object.setPrototypeOf(Refusing, Object.getPrototypeOf(Real));
  return internals.disguise(Refusing, Real);
}

/**
 * TransformStream before transformstream_enable_standard_constructor (2022-11-30): workerd's
 * identity transform for bytes. A transformer or strategies given to it are ignored (workerd
 * logged a warning once); a chunk that is not bytes errors the stream.
 */
function legacyTransformStream() {
  let warned = false;
  const LegacyTransformStream = function (...args) {
    if (new.target === undefined) throw new TypeError("Class constructor TransformStream cannot be invoked without 'new'");
    if (args.some((arg) => arg !== undefined) && !warned) {
      warned = true;
      console.warn("To use the new TransformStream() constructor with a custom transformer, enable the transformstream_enable_standard_constructor compatibility flag.");
    }
    const stream = new TransformStream({
      transform(chunk, controller) {
        if (!ArrayBuffer.isView(chunk) && !(chunk instanceof ArrayBuffer)) {
          throw new TypeError("This TransformStream is being used as a byte stream, but received an object of non-ArrayBuffer/ArrayBufferView type on its writable side.");
        }
        const view = ArrayBuffer.isView(chunk) ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength) : new Uint8Array(chunk);
        controller.enqueue(view.slice());
      },
    });
    internalWritables.add(stream.writable);
    return stream;
  };
  for (const key of Reflect.ownKeys(TransformStream)) {
    if (key !== "name" && key !== "length") Object.defineProperty(LegacyTransformStream, key, Object.getOwnPropertyDescriptor(TransformStream, key));
  }
  return internals.disguise(LegacyTransformStream, TransformStream);
}

/**
 * Before capture_async_api_throws (2022-10-31) workerd's promise-returning APIs threw their
 * synchronous errors (a bad argument, an unparsable URL) instead of returning a rejected
 * promise. `fn` behaves so: when the promise it returns is already rejected, that is thrown
 * (any other result, a promise or not, is returned as it is).
 */
function throwingSynchronously(fn, staysRejected = undefined) {
  const wrapped = {
    [fn.name](...args) {
      const result = Reflect.apply(fn, this, args);
      const [state, reason] = ops.promiseState(result) ?? [];
      if (state !== "rejected" || staysRejected?.(reason)) return result;
      result.catch(() => {});
      throw reason;
    },
  }[fn.name];
  return internals.disguise(wrapped, fn);
}

function wrapMethods(prototype, names, staysRejected = undefined) {
  for (const name of names) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    if (descriptor === undefined || typeof descriptor.value !== "function") continue;
    descriptor.value = throwingSynchronously(descriptor.value, staysRejected);
    Object.defineProperty(prototype, name, descriptor);
  }
}

function asyncApisThrow() {
  internals.defineGlobal("fetch", throwingSynchronously(globalThis.fetch));
  const body = ["arrayBuffer", "bytes", "text", "json", "blob", "formData"];
  wrapMethods(Request.prototype, body);
  wrapMethods(Response.prototype, body);
  wrapMethods(Blob.prototype, ["arrayBuffer", "bytes", "text"]);
  // SubtleCrypto throws only its argument errors; the operations' own (DOMExceptions) reject.
  const cryptoError = (reason) => reason instanceof internals.DOMException;
  wrapMethods(SubtleCrypto.prototype, Object.getOwnPropertyNames(SubtleCrypto.prototype).filter((name) => name !== "constructor"), cryptoError);
  wrapMethods(Cache.prototype, ["match", "put", "delete"]);
  wrapMethods(CacheStorage.prototype, ["open"]);
  // Bindings and storage: a method that does not return a promise is left as it is.
  for (const prototype of internals.asyncApiPrototypes) {
    wrapMethods(prototype, Object.getOwnPropertyNames(prototype).filter((name) => name !== "constructor"));
  }
}

/**
 * Before streams_byob_reader_detaches_buffer (2021-11-10) a BYOB read of one of the runtime's
 * streams (a body, an IdentityTransformStream's, …) left the caller's buffer usable: the read goes
 * into a scratch view and its bytes are copied into the caller's.
 */
function byobReadsKeepBuffers() {
  const { ReadableStreamBYOBReader } = internals.streams;
  const read = ReadableStreamBYOBReader.prototype.read;
  const keeping = {
    read(view, options = undefined) {
      // Only the runtime's streams (workerd's "internal" ones): a stream the worker made always
      // detaches, as in workerd.
      const stream = this?.[slot._ownerReadableStream];
      if (!ArrayBuffer.isView(view) || view.buffer.detached || !internals.runtimeStreams.has(stream)) return Reflect.apply(read, this, [view, options]);
      const Ctor = view.constructor;
      const size = Ctor.BYTES_PER_ELEMENT ?? 1;
      const scratch = Ctor === DataView ? new DataView(new ArrayBuffer(view.byteLength)) : new Ctor(view.length);
      // The caller's buffer stays the caller's while the read waits: as in workerd, a buffer
      // transferred meanwhile gets nothing (a new empty view), and one resized smaller only what
      // still fits at the view's offset (nothing if the view no longer fits).
      const buffer = view.buffer;
      const offset = view.byteOffset;
      return Reflect.apply(read, this, [scratch, options]).then(({ value, done }) => {
        if (value === undefined) return { value, done };
        if (buffer.detached) return { value: new Ctor(new ArrayBuffer(0)), done };
        const room = Math.max(0, buffer.byteLength - offset);
        const length = Math.min(value.byteLength, room - (room % size));
        const at = offset <= buffer.byteLength ? offset : 0;
        new Uint8Array(buffer, at, length).set(new Uint8Array(value.buffer, value.byteOffset, length));
        return { value: new Ctor(buffer, at, length / size), done };
      });
    },
  }.read;
  Object.defineProperty(ReadableStreamBYOBReader.prototype, "read", { value: internals.disguise(keeping, read), writable: true, enumerable: true, configurable: true });
}

/**
 * Before internal_stream_byob_return_view (2024-05-13) a BYOB read of a body stream that ends
 * gave `value: undefined`, not the standard's empty view.
 */
function byobEndsWithoutView() {
  const { ReadableStreamBYOBReader } = internals.streams;
  const fromBodies = new WeakSet();
  const getReader = ReadableStream.prototype.getReader;
  const gettingReader = {
    getReader(options = undefined) {
      const reader = Reflect.apply(getReader, this, [options]);
      if (reader instanceof ReadableStreamBYOBReader && internals.internalStreams.has(this)) fromBodies.add(reader);
      return reader;
    },
  }.getReader;
  Object.defineProperty(ReadableStream.prototype, "getReader", { value: internals.disguise(gettingReader, getReader), writable: true, enumerable: true, configurable: true });
  const read = ReadableStreamBYOBReader.prototype.read;
  const reading = {
    read(...args) {
      const result = Reflect.apply(read, this, args);
      if (!fromBodies.has(this)) return result;
      return result.then((step) => (step.done ? { value: undefined, done: true } : step));
    },
  }.read;
  Object.defineProperty(ReadableStreamBYOBReader.prototype, "read", { value: internals.disguise(reading, read), writable: true, enumerable: true, configurable: true });
}

/**
 * Before fixup-transform-stream-backpressure (2024-12-16) a TransformStream's enqueue() did not
 * turn backpressure on when the readable side filled up, so writes kept going through. The
 * standard implementation's enqueue is followed by undoing that step (its own fields, as
 * web-streams-polyfill names them).
 */
function transformsIgnoreBackpressure() {
  const { TransformStreamDefaultController } = internals.streams;
  const enqueue = TransformStreamDefaultController.prototype.enqueue;
  const enqueuing = {
    enqueue(...args) {
      const stream = this?.[slot._controlledTransformStream];
      const before = stream?.[slot._backpressure];
      Reflect.apply(enqueue, this, args);
      if (before === false && stream[slot._backpressure] === true) {
        stream[slot._backpressureChangePromise_resolve]?.();
        stream[slot._backpressureChangePromise] = new Promise((resolve) => (stream[slot._backpressureChangePromise_resolve] = resolve));
        stream[slot._backpressure] = false;
      }
    },
  }.enqueue;
  Object.defineProperty(TransformStreamDefaultController.prototype, "enqueue", { value: internals.disguise(enqueuing, enqueue), writable: true, enumerable: true, configurable: true });
}

/**
 * Before enable_fast_jsg_struct (2025-12-03) a reader's read() that ends gave `{ done: true }`,
 * without a `value` member (workerd left out a struct's undefined members then).
 */
function readsEndWithoutValue() {
  const { ReadableStreamDefaultReader, ReadableStreamBYOBReader } = internals.streams;
  const strip = (step) => (step.done && step.value === undefined ? { done: true } : step);
  for (const Reader of [ReadableStreamDefaultReader, ReadableStreamBYOBReader]) {
    const shown = Reader.prototype.read;
    // Its `.then(strip)` is the microtask workerd's read() takes after the stream's own
    // promise, so it wraps the method src/js/51_stream_promises.js wrapped, not that wrapper.
    const read = internals.streamMethodBeforeLater.get(shown) ?? shown;
    const reading = {
      read(...args) {
        return Reflect.apply(read, this, args).then(strip);
      },
    }.read;
    Object.defineProperty(Reader.prototype, "read", { value: internals.disguise(reading, shown), writable: true, enumerable: true, configurable: true });
  }
}

/** Makes `writer`'s ready promise a pending one, as web-streams-polyfill keeps it. */
function pendingReady(writer) {
  writer[slot._readyPromise] = new Promise((resolve, reject) => {
    writer[slot._readyPromise_resolve] = resolve;
    writer[slot._readyPromise_reject] = reject;
  });
  writer[slot._readyPromise].catch(() => {});
  writer[slot._readyPromiseState] = "pending";
}

/** Resolves `writer`'s ready promise if it is pending. */
function resolveReady(writer) {
  if (writer[slot._readyPromiseState] !== "pending") return;
  writer[slot._readyPromise_resolve](undefined);
  writer[slot._readyPromise_resolve] = writer[slot._readyPromise_reject] = undefined;
  writer[slot._readyPromiseState] = "fulfilled";
}

/**
 * Before writable_stream_spec_compliant_writer (2026-03-24) workerd's writers differed from the
 * standard in three ways: a writer's ready promise is resolved when the stream has started, with or
 * without backpressure, and not before (the standard: when there is no backpressure); releaseLock() left a resolved ready promise as it
 * was (only a pending one was rejected); and a write whose strategy size() released the lock still
 * went through. web-streams-polyfill's own fields are adjusted for the first two; for the third,
 * a releaseLock() during a write's size() takes effect once the write is queued.
 */
function legacyWriters() {
  const { WritableStream, WritableStreamDefaultWriter } = internals.streams;
  const getWriter = WritableStream.prototype.getWriter;
  const gettingWriter = {
    getWriter() {
      const writer = Reflect.apply(getWriter, this, []);
      if (this[slot._state] !== "writable") return writer;
      const controller = this[slot._writableStreamController];
      // Ready once started, backpressure or not.
      if (controller[slot._started]) {
        resolveReady(writer);
        return writer;
      }
      if (writer[slot._readyPromiseState] !== "pending") pendingReady(writer);
      let started = false;
      Object.defineProperty(controller, slot._started, {
        get: () => started,
        set: (value) => {
          started = value;
          const stream = controller[slot._controlledWritableStream];
          if (value && stream[slot._writer] === writer && stream[slot._state] === "writable") resolveReady(writer);
        },
        configurable: true,
      });
      return writer;
    },
  }.getWriter;
  const writing = new WeakMap(); // writer -> whether releaseLock() was asked for during write()
  const { releaseLock, write } = WritableStreamDefaultWriter.prototype;
  const releasing = {
    releaseLock() {
      if (writing.has(this)) return void writing.set(this, true);
      const ready = this[slot._readyPromise];
      const wasReady = this[slot._readyPromiseState] === "fulfilled";
      Reflect.apply(releaseLock, this, []);
      if (wasReady && this[slot._readyPromiseState] === "rejected") {
        this[slot._readyPromise] = ready;
        this[slot._readyPromiseState] = "fulfilled";
      }
    },
  }.releaseLock;
  const writingChunk = {
    write(...args) {
      if (writing.has(this)) return Reflect.apply(write, this, args);
      writing.set(this, false);
      try {
        return Reflect.apply(write, this, args);
      } finally {
        const release = writing.get(this);
        writing.delete(this);
        if (release) releasing.call(this);
      }
    },
  }.write;
  const define = (target, name, value, original) => Object.defineProperty(target, name, { value: internals.disguise(value, original), writable: true, enumerable: true, configurable: true });
  define(WritableStream.prototype, "getWriter", gettingWriter, getWriter);
  define(WritableStreamDefaultWriter.prototype, "releaseLock", releasing, releaseLock);
  define(WritableStreamDefaultWriter.prototype, "write", writingChunk, write);
}

/**
 * Before internal_writable_stream_abort_clears_queue (2024-09-02) abort() on one of workerd's
 * "internal" writables (here: the legacy TransformStream's) with writes pending was done lazily:
 * it waited for the write in progress (the oldest pending one) to finish, and only then rejected
 * the other queued writes and errored the stream (so with no reader, the abort, the writes and
 * `closed` stay pending). A second abort() meanwhile shares the first one's promise.
 * CompressionStream is left alone: its writes wait for the reader here, not in workerd.
 */
function lazyInternalAborts() {
  const { WritableStreamDefaultWriter } = internals.streams;
  const { abort, write } = WritableStreamDefaultWriter.prototype;
  const pendingWrites = new WeakMap(); // internal writable -> its unsettled write promises, oldest first
  const pendingAborts = new WeakMap(); // internal writable -> the promise of its deferred abort
  const writingChunk = {
    write(...args) {
      const result = Reflect.apply(write, this, args);
      const stream = this[slot._ownerWritableStream];
      if (!internalWritables.has(stream)) return result;
      if (!pendingWrites.has(stream)) pendingWrites.set(stream, []);
      const writes = pendingWrites.get(stream);
      writes.push(result);
      const settled = () => writes.splice(writes.indexOf(result), 1);
      result.then(settled, settled);
      return result;
    },
  }.write;
  const aborting = {
    abort(reason) {
      const stream = this[slot._ownerWritableStream];
      if (pendingAborts.has(stream)) return pendingAborts.get(stream);
      const writes = pendingWrites.get(stream);
      if (!internalWritables.has(stream) || stream[slot._state] !== "writable" || !writes?.length) return Reflect.apply(abort, this, [reason]);
      // The abort happens when the stream next turns to its queue: as its next write starts
      // (that write fails with the reason), or once the write in progress is done.
      const writer = this;
      const controller = stream[slot._writableStreamController];
      const writeAlgorithm = controller[slot._writeAlgorithm];
      let done = false;
      // In workerd the oldest pending write is in progress even before the stream has started.
      let passing = stream[slot._inFlightWriteRequest] === undefined ? 1 : 0;
      let settle;
      const later = new Promise((resolve) => (settle = resolve));
      const abortNow = () => {
        if (done) return;
        done = true;
        pendingAborts.delete(stream);
        if (controller[slot._writeAlgorithm] === startingWrite) controller[slot._writeAlgorithm] = writeAlgorithm;
        settle(writer[slot._ownerWritableStream] === stream ? Reflect.apply(abort, writer, [reason]) : stream.abort(reason));
      };
      const startingWrite = (chunk) => {
        if (done || passing-- > 0) return writeAlgorithm(chunk);
        abortNow();
        return Promise.reject(reason);
      };
      controller[slot._writeAlgorithm] = startingWrite;
      writes[0].then(abortNow, abortNow);
      pendingAborts.set(stream, later);
      return later;
    },
  }.abort;
  const define = (name, value, original) => Object.defineProperty(WritableStreamDefaultWriter.prototype, name, { value: internals.disguise(value, original), writable: true, enumerable: true, configurable: true });
  define("write", writingChunk, write);
  define("abort", aborting, abort);
}

/** Removes @@toStringTag from the runtime's API classes (and its singletons' classes). */
function removeToStringTags() {
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (LANGUAGE_GLOBALS.has(name)) continue;
    const value = Object.getOwnPropertyDescriptor(globalThis, name).value;
    let target;
    if (typeof value === "function" && value.prototype !== null && typeof value.prototype === "object") {
      target = value.prototype;
    } else if (value !== null && typeof value === "object" && value !== globalThis) {
      const proto = Object.getPrototypeOf(value);
      target = proto === null || proto === Object.prototype ? value : proto;
    }
    if (target !== undefined && Object.hasOwn(target, Symbol.toStringTag)) delete target[Symbol.toStringTag];
  }
}

/**
 * Before workers_api_getters_setters_on_prototype (2022-01-31) workerd put an API object's
 * attributes on the object itself, not on its prototype: live, enumerable, configurable
 * properties that read as data properties (writable only with a setter), so `Object.keys`,
 * `JSON.stringify`, `{...x}` and `for…in` list them; the prototypes have none of them. Per class,
 * the attributes in the order workerd lists them (checked against workerd: each class's own
 * ones before its base class's). Each listed class's constructor calls `internals.ownAccessors` (the
 * streams' initialisers do, through `internals.streams.onCreate`).
 */
const OWN_ATTRIBUTES = [
  ["Request", ["keepalive", "integrity", "cf", "signal", "fetcher", "redirect", "headers", "url", "method", "bodyUsed", "body"]],
  ["Response", ["type", "cf", "webSocket", "url", "redirected", "ok", "headers", "statusText", "status", "bodyUsed", "body"]],
  ["Event", ["cancelBubble", "isTrusted", "timeStamp", "srcElement", "target", "currentTarget", "returnValue", "defaultPrevented", "cancelable", "bubbles", "composed", "eventPhase", "type"]],
  ["AbortSignal", ["reason", "aborted"]],
  ["AbortController", ["signal"]],
  ["File", ["lastModified", "name"]],
  ["Blob", ["type", "size"]],
  ["TextDecoder", ["ignoreBOM", "fatal", "encoding"]],
  ["TextEncoder", ["encoding"]],
  ["Crypto", ["subtle"]],
  ["WebSocket", ["binaryType", "extensions", "protocol", "url", "readyState"]],
  // The streams, made by web-streams-polyfill (it calls `internals.streams.onCreate`, see build.rs).
  ["ReadableStream", ["locked"]],
  ["ReadableStreamDefaultReader", ["closed"]],
  ["ReadableStreamBYOBReader", ["closed"]],
  ["WritableStream", ["locked"]],
  ["WritableStreamDefaultWriter", ["desiredSize", "ready", "closed"]],
  ["TransformStream", ["writable", "readable"]],
];
const LEGACY_URL_ATTRIBUTES = ["hash", "searchParams", "search", "pathname", "port", "hostname", "host", "password", "username", "protocol", "origin", "href"];

function attributesOnInstances(legacyUrl) {
  const entries = OWN_ATTRIBUTES.map(([name, keys]) => [globalThis[name], keys]);
  if (legacyUrl) entries.push([globalThis.URL, LEGACY_URL_ATTRIBUTES]);
  // TextEncoderStream, TextDecoderStream, CompressionStream, DecompressionStream.
  entries.push([internals.TransformWrapper, ["writable", "readable"]]);
  // prototype -> [names, [getter, setter] pairs], taken off the prototype.
  const levels = new Map();
  for (const [Class, keys] of entries) {
    if (typeof Class !== "function") continue;
    const prototype = Class.prototype;
    const names = [];
    const pairs = [];
    for (const key of keys) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, key);
      if (descriptor === undefined || descriptor.get === undefined) continue;
      names.push(key);
      pairs.push([descriptor.get, descriptor.set]);
      delete prototype[key];
    }
    levels.set(prototype, [names, pairs]);
  }
  internals.ownAccessors = function ownAccessors(object) {
    for (let prototype = Object.getPrototypeOf(object); prototype !== null; prototype = Object.getPrototypeOf(prototype)) {
      const level = levels.get(prototype);
      if (level !== undefined) ops.ownAccessors(object, level[0], level[1]);
    }
  };
  internals.streams.onCreate = internals.ownAccessors;
  // Made before the script runs.
  internals.ownAccessors(globalThis.crypto);
}

/**
 * Without immutable_api_prototypes (a flag with no date: off unless given) workerd's API
 * constructors have a writable `prototype`, as V8 API functions do; the flag makes it read-only,
 * as a JavaScript class's always is. So each of the runtime's global classes gets a stand-in: a
 * function of the same name that constructs the class (with `new.target`, so subclasses and a
 * reassigned `prototype` behave as in workerd), shares its prototype object (whose
 * `constructor` then names the stand-in) and has its statics. Instances, methods and
 * `instanceof` are as before. Made once, into the startup snapshot; a worker given the flag gets
 * the classes back (`classesWithReadOnlyPrototypes`).
 */
const { apply, construct } = Reflect;
function standIn(Real, parent, fromSource) {
  // With `fromSource` (while the bootstrap runs into the snapshot, when code can be made from
  // strings) a function of its own, named in its source, so that V8 names its instances after it
  // ("#<Request>" in messages); later (a class another flag swapped in) the name is a property.
  const named = fromSource && /^[A-Za-z_$][\w$]*$/.test(Real.name);
  const Mutable = named
    ? new Function("Real", "apply", "construct", `return function ${Real.name}(...args) { return new.target === undefined ? apply(Real, this, args) : construct(Real, args, new.target); };\n//# sourceURL=workerbox:internal/97_compat.js`)(Real, apply, construct)
    : { [Real.name]: function (...args) { return new.target === undefined ? apply(Real, this, args) : construct(Real, args, new.target); } }[Real.name];
  for (const key of Reflect.ownKeys(Real)) {
    if (key !== "name" && key !== "length" && key !== "prototype") Object.defineProperty(Mutable, key, Object.getOwnPropertyDescriptor(Real, key));
  }
  Mutable.prototype = Real.prototype;
  Object.defineProperty(Real.prototype, "constructor", { value: Mutable, writable: true, enumerable: false, configurable: true });
  Object.setPrototypeOf(Mutable, parent);
  return internals.disguise(Mutable, Real);
}

/** The runtime's classes among the globals (ECMAScript's constructors are native code). */
function isRuntimeClass(value) {
  if (typeof value !== "function") return false;
  const prototype = Object.getOwnPropertyDescriptor(value, "prototype");
  return prototype !== undefined && !prototype.writable && /^class\b/.test(internals.functionSource(value));
}

/** name -> [class, stand-in] for every global class, parents before their subclasses. */
const apiStandIns = new Map();
{
  const standIns = new Map(); // class -> stand-in
  const globals = new Set(Object.getOwnPropertyNames(globalThis).map((name) => Object.getOwnPropertyDescriptor(globalThis, name).value));
  const wrap = (Real) => {
    if (standIns.has(Real)) return standIns.get(Real);
    const parent = Object.getPrototypeOf(Real);
    const made = standIn(Real, globals.has(parent) && isRuntimeClass(parent) ? wrap(parent) : parent, true);
    standIns.set(Real, made);
    return made;
  };
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    const Real = Object.getOwnPropertyDescriptor(globalThis, name).value;
    if (!isRuntimeClass(Real)) continue;
    apiStandIns.set(name, [Real, wrap(Real)]);
    internals.defineGlobal(name, apiStandIns.get(name)[1]);
  }
}

/** With immutable_api_prototypes: the classes themselves are the globals again. */
function classesWithReadOnlyPrototypes() {
  for (const [name, [Real, Mutable]] of apiStandIns) {
    Object.defineProperty(Real.prototype, "constructor", { value: Real, writable: true, enumerable: false, configurable: true });
    if (globalThis[name] === Mutable) internals.defineGlobal(name, Real);
  }
}

/** Without it: a class another flag put in a stand-in's place (a legacy URLPattern, …) gets one too. */
const standInsForReplacedClasses = (function standInsForReplacedClasses() {
  for (const [name, [, Mutable]] of apiStandIns) {
    const value = Object.getOwnPropertyDescriptor(globalThis, name)?.value;
    if (value !== Mutable && isRuntimeClass(value)) internals.defineGlobal(name, standIn(value, Object.getPrototypeOf(value), false));
  }
});

const previous = internals.prepareContext;
internals.prepareContext = (function prepareCompatContext(memoryMb, compatJson) {
  previous(memoryMb, compatJson);
  const on = internals.feature;
  if (!on("urlpattern_standard")) internals.defineGlobal("URLPattern", internals.legacyURLPattern());
  if (!on("enable_weak_ref")) {
    delete globalThis.WeakRef;
    delete globalThis.FinalizationRegistry;
  }
  if (!on("no_global_importscripts")) {
    internals.defineGlobal("importScripts", function importScripts(url) {
      throw new Error("Failed to execute 'importScripts' on 'ServiceWorkerGlobalScope': importScripts() is not implemented (nor is it in Cloudflare Workers).");
    });
  }
  if (on("enable_navigator_language")) {
    const prototype = Object.getPrototypeOf(globalThis.navigator);
    Object.defineProperty(prototype, "language", { get: () => "en", enumerable: true, configurable: true });
    Object.defineProperty(prototype, "languages", { get: () => ["en"], enumerable: true, configurable: true });
  }
  if (!on("http_headers_getsetcookie")) delete Headers.prototype.getSetCookie;
  // Request's `cache` came with cache_option_enabled: before it, no such property at all.
  if (!on("cache_option_enabled")) delete globalThis.Request.prototype.cache;
  if (!on("streams_enable_constructors")) {
    const advice = (name) => `To use the new ${name}() constructor, enable the streams_enable_constructors compatibility flag (or use a compatibility date from 2022-11-30).`;
    internals.defineGlobal("ReadableStream", refusingConstructor(ReadableStream, advice("ReadableStream")));
    internals.defineGlobal("WritableStream", refusingConstructor(WritableStream, advice("WritableStream")));
    for (const name of STREAM_CONTROLLERS) delete globalThis[name];
  }
  if (!on("transformstream_enable_standard_constructor")) internals.defineGlobal("TransformStream", legacyTransformStream());
  if (!on("streams_byob_reader_detaches_buffer")) byobReadsKeepBuffers();
  if (!on("internal_stream_byob_return_view")) byobEndsWithoutView();
  if (!on("fixup-transform-stream-backpressure")) transformsIgnoreBackpressure();
  if (!on("writable_stream_spec_compliant_writer")) legacyWriters();
  if (!on("enable_fast_jsg_struct")) readsEndWithoutValue();
  if (!on("internal_writable_stream_abort_clears_queue")) lazyInternalAborts();
  if (!on("capture_async_api_throws")) asyncApisThrow();
  if (!on("workers_api_getters_setters_on_prototype")) attributesOnInstances(!on("url_standard"));
  if (!on("set_tostring_tag")) removeToStringTags();
  if (on("immutable_api_prototypes")) classesWithReadOnlyPrototypes();
  else standInsForReplacedClasses();
});

/**
 * The `Cloudflare` global (workerd's, enumerable): `compatibilityFlags` is a frozen object of every
 * known non-experimental flag (and each experimental one that is on) to whether it is on, made
 * when first read, from what lib/compat.js worked out for this context.
 */
(function cloudflareGlobal() {
  class Cloudflare {
    constructor(token) {
      if (token !== internals) throw new TypeError("Illegal constructor");
      let flags;
      Object.defineProperty(this, "compatibilityFlags", {
        get() {
          if (flags === undefined) {
            flags = Object.create(null); // no prototype, as workerd's
            for (const name of internals.compat?.enabled ?? []) flags[name] = true;
            for (const name of internals.compat?.off ?? []) flags[name] = false;
            Object.freeze(flags);
          }
          return flags;
        },
        enumerable: true,
        configurable: false,
      });
    }
  }
  Object.defineProperty(Cloudflare.prototype, Symbol.toStringTag, { value: "Cloudflare", configurable: true });
  Object.defineProperty(globalThis, "Cloudflare", { value: new Cloudflare(internals), writable: true, configurable: true, enumerable: true });
})();
