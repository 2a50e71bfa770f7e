// Errors nobody caught, as the global scope's events: the `ErrorEvent` and
// `PromiseRejectionEvent` classes, `reportError()`, the "error" event that every uncaught error
// (a throwing timer callback, event listener or queueMicrotask callback, a failed waitUntil,
// reportError()) is dispatched as, and the `unhandledrejection` / `rejectionhandled` events the
// native side asks for after each turn (src/runtime/isolate/pump.rs, `report_rejections`).
// Handlers are `addEventListener(type, …)` listeners and `globalThis.on<type>`; an event a
// handler calls preventDefault() on (or an on-handler returns true for, as in workerd) is not
// logged.

const { Event } = globalThis;
const globalTarget = internals.globalEventTarget;

const ILLEGAL = Symbol("illegal constructor");

class ErrorEvent extends Event {
  #message;
  #filename;
  #lineno;
  #colno;
  #error;
  constructor(type, init = undefined) {
    init = internals.eventInit("ErrorEvent", arguments.length, init);
    super(type, init);
    // workerd makes its Event subclasses trusted when a script constructs them (only Event is not).
    internals.eventMarkTrusted(this);
    this.#message = init.message === undefined ? "" : String(init.message);
    this.#filename = init.filename === undefined ? "" : String(init.filename);
    this.#lineno = init.lineno === undefined ? 0 : Number(init.lineno) | 0;
    this.#colno = init.colno === undefined ? 0 : Number(init.colno) | 0;
    this.#error = init.error;
  }
  get message() {
    return this.#message;
  }
  get filename() {
    return this.#filename;
  }
  get lineno() {
    return this.#lineno;
  }
  get colno() {
    return this.#colno;
  }
  get error() {
    return this.#error;
  }
  get [Symbol.toStringTag]() {
    return "ErrorEvent";
  }
}

// As in workerd, only the runtime makes these (`new PromiseRejectionEvent()` is an illegal
// constructor there).
class PromiseRejectionEvent extends Event {
  #promise;
  #reason;
  constructor(token, type, promise, reason) {
    if (token !== ILLEGAL) throw new TypeError("Illegal constructor");
    // Cancelable, as in browsers: preventDefault() keeps the rejection out of the log.
    super(type, { cancelable: true });
    this.#promise = promise;
    this.#reason = reason;
  }
  get promise() {
    return this.#promise;
  }
  get reason() {
    return this.#reason;
  }
  get [Symbol.toStringTag]() {
    return "PromiseRejectionEvent";
  }
}

/** The ErrorEvent for `error`, with V8's message and location as workerd fills them. */
function errorEventFor(error) {
  let message = "", filename = "", lineno = 0, colno = 0;
  try {
    [message, filename, lineno, colno] = ops.errorMessage(error);
  } catch {
    // A hostile value (a throwing toString through a Proxy, …): the fields stay empty.
  }
  // For a value that is not an Error, V8's location is the innermost frame, which is ours.
  if (internals.isInternalScript(filename)) [filename, lineno, colno] = ["", 0, 0];
  return new ErrorEvent("error", { message, filename, lineno, colno, error, cancelable: true });
}

let reporting = 0;

/**
 * Every uncaught error goes here: an "error" event at the global scope, then the log unless a
 * handler prevented it. An error thrown by an "error" handler itself is only logged (no loop).
 */
internals.reportError = function reportError(error) {
  if (reporting > 0) {
    internals.logUncaught(error);
    return;
  }
  reporting++;
  let log = true;
  try {
    log = globalTarget.dispatchEvent(errorEventFor(error));
  } catch (failure) {
    // Only a bug or termination gets here; the error itself is still logged below.
    if (failure !== error) internals.logUncaught(failure);
  } finally {
    reporting--;
  }
  if (log) internals.logUncaught(error);
};

internals.defineGlobal("reportError", function reportError(error) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'reportError' on 'ServiceWorkerGlobalScope': parameter 1 is not of type 'JsValue'."); // workerd's words
  internals.reportError(error);
});

/**
 * Promises an `unhandledrejection` event was dispatched for and that are still unhandled, with
 * their reasons (a later `rejectionhandled` event carries the reason too under pedantic_wpt, as
 * the HTML standard says; otherwise undefined, as workerd gives it).
 */
const reported = new WeakMap();

/**
 * Called by the native side after a turn for each promise rejected with no handler
 * ("unhandledrejection", with its reason) and each reported promise that got a handler since
 * ("rejectionhandled"). Returns whether the rejection is still to be logged.
 */
internals.promiseRejection = function promiseRejection(type, promise, reason) {
  if (type === "rejectionhandled") {
    if (!reported.has(promise)) return false;
    // workerd's rejectionhandled event has no reason; the HTML standard's (pedantic_wpt) has it.
    reason = internals.feature("pedantic_wpt") ? reported.get(promise) : undefined;
    reported.delete(promise);
    globalTarget.dispatchEvent(new PromiseRejectionEvent(ILLEGAL, type, promise, reason));
    return false;
  }
  reported.set(promise, reason);
  return globalTarget.dispatchEvent(new PromiseRejectionEvent(ILLEGAL, type, promise, reason));
};

internals.defineGlobal("ErrorEvent", ErrorEvent);
internals.defineGlobal("PromiseRejectionEvent", PromiseRejectionEvent);
