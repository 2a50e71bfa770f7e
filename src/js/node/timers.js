// node:timers: Node's timer functions over the runtime's timers (and, with
// enable_nodejs_global_timers, the global ones too: see internals.installNodeTimers). setTimeout/setInterval return
// a Timeout object (ref/unref/hasRef/refresh, and its id when turned into a number, so the
// global clearTimeout accepts it too); setImmediate runs the callback after the current
// macrotask's microtasks (as a zero-delay timer).

const kSwap = Symbol("swap the timer id");
// The runtime's own timers (with enable_nodejs_global_timers the globals become this module's).
const web = internals.webTimers ?? { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval, clearTimeout: globalThis.clearTimeout };

/** What Timeout and Immediate share: the timer id (their number value) and the ref flag. */
class Timer {
  #id;
  #refed = true;
  constructor(id) {
    this.#id = id;
  }
  /** Clears the current timer, and takes `id` as the new one when given. */
  [kSwap](id) {
    web.clearTimeout(this.#id);
    if (id !== undefined) this.#id = id;
  }
  ref() {
    this.#refed = true;
    return this;
  }
  unref() {
    this.#refed = false;
    return this;
  }
  hasRef() {
    return this.#refed;
  }
  [Symbol.toPrimitive]() {
    return this.#id;
  }
  [Symbol.dispose]() {
    this[kSwap]();
  }
}

class Timeout extends Timer {
  #arm;
  constructor(arm) {
    super(arm());
    this.#arm = arm;
  }
  refresh() {
    this[kSwap](this.#arm());
    return this;
  }
  close() {
    this[kSwap]();
    return this;
  }
}

class Immediate extends Timer {
  /** The request it belongs to: disposing or clearing it from another throws, as in workerd. */
  #owner = internals.ioOwner();
  constructor(callback, args) {
    super(web.setTimeout(() => callback(...args), 0));
  }
  [Symbol.dispose]() {
    internals.checkIo(this.#owner, "IoContext");
    super[Symbol.dispose]();
  }
}

function checkCallback(callback) {
  if (typeof callback !== "function") {
    const error = new TypeError(`The "callback" argument must be of type function. Received ${callback === null ? "null" : typeof callback}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
}

exports.setTimeout = function setTimeout(callback, delay, ...args) {
  checkCallback(callback);
  return new Timeout(() => web.setTimeout(callback, delay, ...args));
};
exports.setInterval = function setInterval(callback, delay, ...args) {
  checkCallback(callback);
  return new Timeout(() => web.setInterval(callback, delay, ...args));
};
exports.setImmediate = function setImmediate(callback, ...args) {
  checkCallback(callback);
  return new Immediate(callback, args);
};
const clear = (timer) => {
  if (timer !== undefined && timer !== null) web.clearTimeout(timer);
};
exports.clearTimeout = clear;
exports.clearInterval = clear;
exports.clearImmediate = function clearImmediate(immediate) {
  if (immediate instanceof Immediate) immediate[Symbol.dispose]();
  else clear(immediate);
};
// Node's legacy timer lists, as workerd has them: unenroll clears, enroll is refused.
exports.unenroll = function unenroll(timer) {
  if (timer instanceof Timeout || typeof timer === "number") clear(timer);
};
exports.enroll = function enroll(item, msecs) {
  void item, msecs;
  throw new Error("Not implemented. Please use setTimeout() instead.");
};
Object.defineProperty(exports, "promises", { enumerable: true, get: () => require("node:timers/promises") });
