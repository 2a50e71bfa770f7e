// Shared plumbing for the bootstrap files. Every file in this folder is the body of
// `function (ops, internals) { "use strict"; … }`, run once, in file-name order, before the
// user's script. `ops` holds the native functions; `internals` is how files share private
// pieces. Neither object is ever reachable from user code.

/** Defines a global the way Web IDL does: writable, configurable, not enumerable. */
internals.defineGlobal = function defineGlobal(name, value) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
};

/** Reports an error nobody caught (a throwing timer callback, a failed waitUntil, …). */
internals.reportError = function reportError(error) {
  let text;
  try {
    text = error instanceof Error || (error && typeof error.stack === "string")
      ? String(error.stack)
      : internals.inspect ? internals.inspect(error) : String(error);
  } catch {
    text = "<unprintable value>";
  }
  ops.log("error", `Uncaught ${text}`);
};

// `self` is the global scope, as in a service worker.
internals.defineGlobal("self", globalThis);
