// Shared plumbing for the bootstrap files. Every file in this folder is the body of
// `function (ops, internals) { "use strict"; … }`, run once, in file-name order, before the
// user's script. `ops` holds the native functions; `internals` is how files share private
// pieces. Neither object is ever reachable from user code.

/** Defines a global the way Web IDL does: writable, configurable, not enumerable. */
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

// `self` is the global scope, as in a service worker.
internals.defineGlobal("self", globalThis);
