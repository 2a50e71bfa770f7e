// Shared plumbing for the bootstrap files. Every file in this folder is the body of
// `function (ops, internals) { "use strict"; … }`, run once, in file-name order, before the
// user's script. `ops` holds the native functions; `internals` is how files share private
// pieces. Neither object is ever reachable from user code.

/** Defines a global the way Web IDL does: writable, configurable, not enumerable. */
/** Whether a script name is the runtime's own (the bootstrap, the streams implementation). */
internals.isInternalScript = (name) => typeof name === "string" && name.startsWith("workerbox:internal/");

/**
 * Web IDL's DOMString conversion (ToString): a Symbol is a TypeError, as in workerd, where
 * `String(symbol)` would give "Symbol(…)". For the strings the Web APIs take as input.
 */
internals.domString = (value) => `${value}`;

internals.defineGlobal = function defineGlobal(name, value) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
};

/**
 * Logs an error nobody caught as "Uncaught …" (and, as any uncaught error does, marks the isolate
 * for renewal in per-request mode).
 */
internals.logUncaught = function logUncaught(error) {
  let text;
  try {
    text = error instanceof Error || (error && typeof error.stack === "string")
      ? String(error.stack)
      : internals.inspect ? internals.inspect(error) : String(error);
  } catch {
    text = "<unprintable value>";
  }
  ops.logUncaught(text);
};

/**
 * Reports an error nobody caught (a throwing timer callback or event listener, a failed
 * waitUntil, `reportError()`): an "error" ErrorEvent at the global scope first (75_global_errors.js
 * replaces this), logged unless a handler called preventDefault().
 */
internals.reportError = function reportError(error) {
  internals.logUncaught(error);
};

/**
 * Set by 97_compat.js (before workers_api_getters_setters_on_prototype) to a function that gives a
 * new API object its attributes as own properties; every API class's constructor calls it.
 */
/**
 * Called with an event's id when the event is over (its response sent and its waitUntil work
 * settled, or its scheduled/queue handler done), after the runtime dropped the timers it left:
 * API families that keep per-event state register here (src/js/85_durable.js,
 * src/js/86_sockets.js); src/js/90_entry.js calls them.
 */
internals.eventEndHooks = [];

internals.ownAccessors = null;

// `self` is the global scope, as in a service worker.
internals.defineGlobal("self", globalThis);

const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));

/**
 * Web IDL's iterator objects for a pair-iterable interface (`Headers Iterator`, …): their
 * prototype inherits from %IteratorPrototype%, has `next()` and the @@toStringTag `tag`.
 * Returns `make(step)`, where `step()` gives the next `{ value, done }`.
 */
internals.iteratorFactory = function iteratorFactory(tag) {
  const steps = new WeakMap();
  const prototype = Object.create(IteratorPrototype, {
    next: {
      value: function next() {
        const step = steps.get(this);
        if (step === undefined) throw new TypeError(`next() called on an object that is not a ${tag}`);
        return step();
      },
      writable: true,
      enumerable: true,
      configurable: true,
    },
    [Symbol.toStringTag]: { value: tag, configurable: true },
  });
  return function make(step) {
    const iterator = Object.create(prototype);
    steps.set(iterator, step);
    return iterator;
  };
};

/**
 * Whether the compatibility feature named by its enable flag (`"url_standard"`, …) is on for this
 * worker. `internals.features` is filled per context by `prepareContext()` (src/js/30_wasm.js)
 * from what lib/compat.js worked out, before the user's script runs.
 */
internals.features = new Set();
/** Prototypes whose methods return promises (bindings, storage), for capture_async_api_throws. */
internals.asyncApiPrototypes = [];
internals.feature = (flag) => internals.features.has(flag);

/**
 * A dictionary the runtime returns (a JSG_STRUCT in workerd) with `fields` in that order, their
 * values taken from `source`. A field that is undefined is there, set to undefined, with
 * enable_fast_jsg_struct (2025-12-03); before, it is left out.
 */
internals.struct = function struct(fields, source) {
  const all = internals.feature("enable_fast_jsg_struct");
  const out = {};
  for (const field of fields) if (all || source[field] !== undefined) out[field] = source[field];
  return out;
};

// The runtime's own uses of these stay possible when enable_weak_ref is off (src/js/97_compat.js
// removes the globals then, as workerd does).
internals.WeakRef = WeakRef;
internals.FinalizationRegistry = FinalizationRegistry;
