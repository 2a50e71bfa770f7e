// node:timers: Node's timer functions over the runtime's timers. setTimeout/setInterval return
// a Timeout object (ref/unref/hasRef/refresh, and its id when turned into a number, so the
// global clearTimeout accepts it too); setImmediate runs the callback after the current
// macrotask's microtasks (as a zero-delay timer).

class Timeout {
  #id;
  #arm;
  #refed = true;
  constructor(arm) {
    this.#arm = arm;
    this.#id = arm();
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
  refresh() {
    globalThis.clearTimeout(this.#id);
    this.#id = this.#arm();
    return this;
  }
  close() {
    globalThis.clearTimeout(this.#id);
    return this;
  }
  [Symbol.toPrimitive]() {
    return this.#id;
  }
  [Symbol.dispose]() {
    this.close();
  }
}

class Immediate {
  #id;
  #refed = true;
  constructor(callback, args) {
    this.#id = globalThis.setTimeout(() => callback(...args), 0);
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
    globalThis.clearTimeout(this.#id);
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
  return new Timeout(() => globalThis.setTimeout(callback, delay, ...args));
};
exports.setInterval = function setInterval(callback, delay, ...args) {
  checkCallback(callback);
  return new Timeout(() => globalThis.setInterval(callback, delay, ...args));
};
exports.setImmediate = function setImmediate(callback, ...args) {
  checkCallback(callback);
  return new Immediate(callback, args);
};
const clear = (timer) => {
  if (timer !== undefined && timer !== null) globalThis.clearTimeout(timer);
};
exports.clearTimeout = clear;
exports.clearInterval = clear;
exports.clearImmediate = clear;
Object.defineProperty(exports, "promises", { enumerable: true, get: () => require("node:timers/promises") });
