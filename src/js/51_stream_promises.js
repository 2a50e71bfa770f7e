// The promises streams hand to user code settle one microtask after the stream's own, as in
// workerd: each promise workerd's C++ streams give to JavaScript (`read()`, `write()`, `close()`,
// `abort()`, `cancel()`, `pipeTo()`, a reader's or writer's `closed` and `ready`) is a
// continuation of the one the stream keeps, so a `.then()` on it runs a step later than on the
// standard's (web-streams-polyfill's) promise. Compared with workerd on the same code; the
// stream's own steps (sink and source calls, queues) are build.rs `workerd_stream_schedule`'s.
//
// A getter gives the same promise each time while the stream keeps the same one underneath, and
// that promise is marked handled, as the standard marks `closed` and `ready` (a stream that
// errors while nobody looks at them reports no unhandled rejection).

const then = Promise.prototype.then;
const ignore = () => {};

/**
 * Each wrapper made here -> the method it wraps, for a later wrapper that takes its own step
 * after the stream's promise (src/js/97_compat.js: a `.then()` that reshapes what `read()`
 * gives) and so should not add this one as well.
 */
internals.streamMethodBeforeLater = new WeakMap();

/** A promise that settles as `promise` does, one microtask later. */
function later(promise) {
  return Reflect.apply(then, promise, []);
}

/** Wraps `prototype[name]` (a method returning a promise) so its promise settles a step later. */
function laterMethod(prototype, name) {
  const original = prototype[name];
  const wrapper = {
    [name](...args) {
      return later(Reflect.apply(original, this, args));
    },
  }[name];
  Object.defineProperty(prototype, name, { value: internals.disguise(wrapper, original), writable: true, enumerable: true, configurable: true });
  internals.streamMethodBeforeLater.set(wrapper, original);
}

/** Wraps the getter `prototype[name]` likewise, one promise per promise underneath. */
function laterGetter(prototype, name) {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
  const given = new WeakMap(); // reader or writer -> [promise underneath, promise given out]
  const getting = {
    get [name]() {
      const inner = Reflect.apply(descriptor.get, this, []);
      const memo = given.get(this);
      if (memo !== undefined && memo[0] === inner) return memo[1];
      const outer = later(inner);
      Reflect.apply(then, outer, [undefined, ignore]);
      if (this !== null && typeof this === "object") given.set(this, [inner, outer]);
      return outer;
    },
  };
  const get = Object.getOwnPropertyDescriptor(getting, name).get;
  Object.defineProperty(prototype, name, { ...descriptor, get: internals.disguise(get, descriptor.get) });
}

{
  const s = internals.streams;
  for (const name of ["cancel", "pipeTo"]) laterMethod(s.ReadableStream.prototype, name);
  for (const reader of [s.ReadableStreamDefaultReader, s.ReadableStreamBYOBReader]) {
    for (const name of ["read", "cancel", "readAtLeast"]) if (Object.hasOwn(reader.prototype, name)) laterMethod(reader.prototype, name);
    laterGetter(reader.prototype, "closed");
  }
  for (const name of ["abort", "close"]) laterMethod(s.WritableStream.prototype, name);
  for (const name of ["write", "close", "abort"]) laterMethod(s.WritableStreamDefaultWriter.prototype, name);
  for (const name of ["closed", "ready"]) laterGetter(s.WritableStreamDefaultWriter.prototype, name);
}
