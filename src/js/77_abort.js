// AbortController and AbortSignal (DOM Standard): abort(reason), reason, aborted,
// throwIfAborted, the "abort" event and onabort, and the static AbortSignal.abort(),
// AbortSignal.timeout() and AbortSignal.any().

const { EventTarget, Event } = globalThis;
const kConstruct = Symbol("construct");

class AbortSignal extends EventTarget {
  #aborted = false;
  #reason = undefined;
  #onabort = null;
  #onabortListener = null;
  #dependents = new Set(); // signals from AbortSignal.any() that follow this one
  #sources = null; // for a signal from AbortSignal.any(): the non-dependent signals it follows
  /** The request it belongs to: another reading whether it aborted throws, as workerd's canceler does. */
  #owner = internals.ioOwner();

  constructor(token) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    super();
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
  }

  static #create() {
    return new AbortSignal(kConstruct);
  }

  static {
    internals.isAbortSignal = (value) => value !== null && typeof value === "object" && #aborted in value;
    /** Whether it aborted, for the runtime's own use (no check of the request it belongs to). */
    internals.signalAborted = (signal) => signal.#aborted;
    internals.signalAbort = (signal, reason) => signal.#abort(reason);
    /** Aborts with `reason` as given, even undefined (workerd's WritableStream abort(), src/js/98_pedantic.js). */
    internals.signalAbortAsIs = (signal, reason) => signal.#abort(reason, true);
    internals.newAbortSignal = () => AbortSignal.#create();
  }

  // The DOM Standard's "signal abort": this signal and every dependent one not yet aborted are
  // marked aborted (with this reason) before any of their "abort" events fires.
  #abort(reason, keepUndefined = false) {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason === undefined && !keepUndefined ? new internals.DOMException("The operation was aborted", "AbortError") : reason;
    const toAbort = [];
    for (const dependent of this.#dependents) {
      if (dependent.#aborted) continue;
      dependent.#aborted = true;
      dependent.#reason = this.#reason;
      toAbort.push(dependent);
    }
    this.#dependents.clear();
    this.#fireAbort();
    for (const dependent of toAbort) dependent.#fireAbort();
  }

  #fireAbort() {
    this.dispatchEvent(internals.eventMarkTrusted(new Event("abort")));
  }

  get aborted() {
    internals.checkIo(this.#owner, "RefcountedCanceler");
    return this.#aborted;
  }

  get reason() {
    return this.#reason;
  }

  throwIfAborted() {
    internals.checkIo(this.#owner, "RefcountedCanceler");
    if (this.#aborted) throw this.#reason;
  }

  get onabort() {
    return this.#onabort;
  }

  set onabort(handler) {
    if (this.#onabortListener !== null) this.removeEventListener("abort", this.#onabortListener);
    // A function or an object (called through its handleEvent), as workerd keeps; anything else is null.
    this.#onabort = typeof handler === "function" || (typeof handler === "object" && handler !== null) ? handler : null;
    this.#onabortListener = this.#onabort === null ? null : typeof handler === "function" ? handler : (event) => handler.handleEvent?.(event);
    if (this.#onabortListener !== null) this.addEventListener("abort", this.#onabortListener);
  }

  static abort(reason = undefined) {
    const signal = AbortSignal.#create();
    signal.#abort(reason);
    return signal;
  }

  static timeout(ms) {
    // As workerd: any number is taken; NaN and negative delays fire at once, Infinity never.
    let delay = Number(ms);
    if (!(delay > 0)) delay = 0;
    const signal = AbortSignal.#create();
    if (delay !== Infinity) setTimeout(() => signal.#abort(new internals.DOMException("The operation was aborted due to timeout", "TimeoutError")), delay);
    return signal;
  }

  static any(signals) {
    const list = [...signals];
    for (const s of list) {
      if (!(s instanceof AbortSignal)) throw new TypeError("AbortSignal.any: every item must be an AbortSignal");
    }
    const signal = AbortSignal.#create();
    const already = list.find((s) => s.#aborted);
    if (already) {
      signal.#abort(already.#reason);
      return signal;
    }
    // A dependent signal follows the sources of the signals it was made from, not those signals.
    signal.#sources = new Set();
    for (const s of list) {
      for (const source of s.#sources ?? [s]) {
        signal.#sources.add(source);
        source.#dependents.add(signal);
      }
    }
    return signal;
  }

  get [Symbol.toStringTag]() {
    return "AbortSignal";
  }
}

class AbortController {
  #signal = internals.newAbortSignal();
  /** The request it belongs to: abort() from another throws, as workerd's canceler does (src/js/52_io_owner.js). */
  #owner = internals.ioOwner();

  constructor() {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
  }

  get signal() {
    return this.#signal;
  }

  abort(reason = undefined) {
    internals.checkIo(this.#owner, "RefcountedCanceler");
    internals.signalAbort(this.#signal, reason);
  }

  get [Symbol.toStringTag]() {
    return "AbortController";
  }
}

internals.defineGlobal("AbortSignal", AbortSignal);
internals.defineGlobal("AbortController", AbortController);
