// pedantic_wpt / non_pedantic_wpt (no date: off unless given). With the flag workerd follows the
// standards where it used to differ; the streams and events here follow the standards already,
// so this file owns the other direction: without the flag (the default), it gives a worker
// workerd's older streams behaviour, by adjusting web-streams-polyfill's own fields around its
// methods. The other places the flag reaches are read where they live: Event's currentTarget
// and isTrusted (src/js/75_events.js), WebSocket.close()'s codes (src/js/76_websocket.js) and
// TextDecoderStream's `fatal` default (src/js/50_streams.js). docs/compatibility.md lists what it changes.

/** web-streams-polyfill's field keys (`slot._state`, …: symbols, see build.rs). */
const slot = internals.streams.slots;

/** What was replaced, to put back for a worker given the flag: [object, key, descriptor]. */
const replaced = [];

/** Replaces `prototype[name]` (a method) with `wrapper`, disguised as the original. */
function replaceMethod(prototype, name, makeWrapper) {
  replaced.push([prototype, name, Object.getOwnPropertyDescriptor(prototype, name)]);
  const original = prototype[name];
  const wrapper = makeWrapper(original);
  Object.defineProperty(prototype, name, { value: internals.disguise(wrapper, original), writable: true, enumerable: true, configurable: true });
}

/** The stream a WritableStreamDefaultWriter is locked to, or undefined (released, or not a writer). */
function writerStream(writer) {
  return writer !== null && typeof writer === "object" && Object.hasOwn(writer, slot._ownerWritableStream) ? writer[slot._ownerWritableStream] : undefined;
}

/** Whether `stream` is one of web-streams-polyfill's WritableStreams. */
function isWritable(stream) {
  return stream !== null && typeof stream === "object" && Object.hasOwn(stream, slot._writableStreamController);
}

/**
 * Without pedantic_wpt, abort() without a reason leaves the controller's signal with an undefined
 * reason (the standard: an "AbortError" DOMException). The signal is aborted here first, with the
 * reason as given, so the standard's own step finds it aborted already.
 */
function abortWithoutReason(stream) {
  if (!isWritable(stream) || stream[slot._state] === "closed" || stream[slot._state] === "errored") return;
  const signal = stream[slot._writableStreamController][slot._abortController]?.signal;
  if (signal !== undefined) internals.signalAbortAsIs(signal, undefined);
}

/**
 * Without pedantic_wpt, close() on an errored WritableStream rejects with the stream's error (the
 * standard: a TypeError). This also covers a TransformStream's writable side after its readable
 * side was cancelled.
 */
function closeErroredWithItsError(stream) {
  return isWritable(stream) && stream[slot._state] === "errored" ? Promise.reject(stream[slot._storedError]) : undefined;
}

function legacyWritables() {
  const { WritableStream, WritableStreamDefaultWriter } = internals.streams;
  replaceMethod(WritableStream.prototype, "abort", (abort) => ({
    abort(reason = undefined) {
      if (reason === undefined && isWritable(this) && this[slot._writer] === undefined) abortWithoutReason(this);
      return Reflect.apply(abort, this, [reason]);
    },
  }).abort);
  replaceMethod(WritableStreamDefaultWriter.prototype, "abort", (abort) => ({
    abort(reason = undefined) {
      if (reason === undefined) abortWithoutReason(writerStream(this));
      return Reflect.apply(abort, this, [reason]);
    },
  }).abort);
  replaceMethod(WritableStream.prototype, "close", (close) => ({
    close() {
      if (isWritable(this) && this[slot._writer] === undefined) return closeErroredWithItsError(this) ?? Reflect.apply(close, this, []);
      return Reflect.apply(close, this, []);
    },
  }).close);
  replaceMethod(WritableStreamDefaultWriter.prototype, "close", (close) => ({
    close() {
      return closeErroredWithItsError(writerStream(this)) ?? Reflect.apply(close, this, []);
    },
  }).close);

  // Without pedantic_wpt, a writer's desiredSize while the stream is erroring is still the
  // controller's (high water mark less what is queued); the standard's is null.
  const desiredSize = Object.getOwnPropertyDescriptor(WritableStreamDefaultWriter.prototype, "desiredSize");
  const getting = {
    get desiredSize() {
      const stream = writerStream(this);
      if (stream !== undefined && stream[slot._state] === "erroring") {
        const controller = stream[slot._writableStreamController];
        return controller[slot._strategyHWM] - controller[slot._queueTotalSize];
      }
      return Reflect.apply(desiredSize.get, this, []);
    },
  };
  const get = Object.getOwnPropertyDescriptor(getting, "desiredSize").get;
  replaced.push([WritableStreamDefaultWriter.prototype, "desiredSize", desiredSize]);
  Object.defineProperty(WritableStreamDefaultWriter.prototype, "desiredSize", { ...desiredSize, get: internals.disguise(get, desiredSize.get) });
}

/**
 * Without pedantic_wpt, a byte stream's close() while a BYOB read waits, and its byobRequest has
 * not been asked for, ends that read (done, with an empty view) and leaves byobRequest null
 * (workerd dropped the pending request); the standard keeps the request for respond(0). And
 * respondWithNewView() on the closed stream is easier to please (below).
 */
function byobCloseEndsUnaskedReads() {
  const { ReadableByteStreamController } = internals.streams;
  replaceMethod(ReadableByteStreamController.prototype, "close", (close) => ({
    close() {
      const pending = this !== null && typeof this === "object" && this[slot._byobRequest] === null ? this[slot._pendingPullIntos] : undefined;
      const first = pending !== undefined && pending.length > 0 ? pending.peek() : undefined;
      const unasked = first !== undefined && first.readerType === "byob" && first.bytesFilled === 0;
      Reflect.apply(close, this, []);
      if (unasked && this[slot._controlledReadableByteStream][slot._state] === "closed") this.byobRequest?.respond(0);
    },
  }).close);

  // And once it is closed, respondWithNewView() takes any empty view as respond(0); the standard
  // (and workerd with the flag) wants one on the request's own buffer, at its offset.
  const { ReadableStreamBYOBRequest } = internals.streams;
  replaceMethod(ReadableStreamBYOBRequest.prototype, "respondWithNewView", (respondWithNewView) => ({
    respondWithNewView(view) {
      const controller = this !== null && typeof this === "object" ? this[slot._associatedReadableByteStreamController] : undefined;
      if (controller !== undefined && controller[slot._controlledReadableByteStream]?.[slot._state] === "closed" && ArrayBuffer.isView(view) && view.byteLength === 0 && !view.buffer.detached) {
        return Reflect.apply(ReadableStreamBYOBRequest.prototype.respond, this, [0]);
      }
      return Reflect.apply(respondWithNewView, this, [view]);
    },
  }).respondWithNewView);
}

// What web-streams-polyfill asks (build.rs): whether a WritableStream's underlying sink with a
// `type` is a RangeError (with the flag; workerd took any type without it), and whether a sink's
// missing write() and close() are done at once (without the flag, as workerd ran them
// synchronously then) or a microtask later (with it, as the standard says).
internals.streams.pedanticWpt = () => internals.feature("pedantic_wpt");

// The default (without the flag) is made once, into the startup snapshot; a worker given the
// flag gets the standard's methods back.
legacyWritables();
byobCloseEndsUnaskedReads();

const previousPrepare = internals.prepareContext;
internals.prepareContext = (function preparePedanticContext(memoryMb, compatJson) {
  previousPrepare(memoryMb, compatJson);
  if (internals.feature("pedantic_wpt")) {
    for (const [object, key, descriptor] of replaced) Object.defineProperty(object, key, descriptor);
    // Event's isTrusted is each instance's own property then (src/js/75_events.js).
    delete Event.prototype.isTrusted;
  }
});
