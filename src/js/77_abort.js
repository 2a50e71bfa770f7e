// AbortController and AbortSignal (DOM Standard): abort(reason), reason, aborted,
// throwIfAborted, the "abort" event and onabort, and the static AbortSignal.abort(),
// AbortSignal.timeout() and AbortSignal.any().

const { EventTarget, Event } = globalThis;
const kConstruct = Symbol("construct");

class AbortSignal extends EventTarget {
  #aborted = false;
  #reason = undefined;
  #onabort = null;
  #dependents = new Set(); // signals from AbortSignal.any() that follow this one

  constructor(token) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    super();
  }

  static #create() {
    return new AbortSignal(kConstruct);
  }

  static {
    internals.signalAbort = (signal, reason) => signal.#abort(reason);
    internals.newAbortSignal = () => AbortSignal.#create();
  }

  #abort(reason) {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason === undefined ? new internals.DOMException("This operation was aborted", "AbortError") : reason;
    this.dispatchEvent(new Event("abort"));
    for (const dependent of this.#dependents) dependent.#abort(this.#reason);
    this.#dependents.clear();
  }

  get aborted() {
    return this.#aborted;
  }

  get reason() {
    return this.#reason;
  }

  throwIfAborted() {
    if (this.#aborted) throw this.#reason;
  }

  get onabort() {
    return this.#onabort;
  }

  set onabort(handler) {
    if (this.#onabort) this.removeEventListener("abort", this.#onabort);
    this.#onabort = typeof handler === "function" ? handler : null;
    if (this.#onabort) this.addEventListener("abort", this.#onabort);
  }

  static abort(reason = undefined) {
    const signal = AbortSignal.#create();
    signal.#abort(reason);
    return signal;
  }

  static timeout(ms) {
    const delay = Number(ms);
    if (!Number.isFinite(delay) || delay < 0) throw new TypeError(`AbortSignal.timeout: ${ms} is not a valid number of milliseconds`);
    const signal = AbortSignal.#create();
    setTimeout(() => signal.#abort(new internals.DOMException("The operation was aborted due to timeout", "TimeoutError")), delay);
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
    for (const s of list) s.#dependents.add(signal);
    return signal;
  }

  get [Symbol.toStringTag]() {
    return "AbortSignal";
  }
}

class AbortController {
  #signal = internals.newAbortSignal();

  get signal() {
    return this.#signal;
  }

  abort(reason = undefined) {
    internals.signalAbort(this.#signal, reason);
  }

  get [Symbol.toStringTag]() {
    return "AbortController";
  }
}

internals.defineGlobal("AbortSignal", AbortSignal);
internals.defineGlobal("AbortController", AbortController);
