// node:test: what workerd has of it — the `mock` tracker (mock.fn, mock.method, mock.getter,
// mock.setter, reset, restoreAll) with MockFunctionContext's call records (arguments, result,
// error, this, target, stack) and implementation swapping. There is no test runner.
const { invalidArgType } = require("node:internal/errors");

class MockFunctionContext {
  #calls = [];
  #implementation;
  #restore;
  #times;
  #once = new Map();
  constructor(implementation, restore, times) {
    this.#implementation = implementation;
    this.#restore = restore;
    this.#times = times;
  }
  get calls() {
    return this.#calls.slice();
  }
  callCount() {
    return this.#calls.length;
  }
  mockImplementation(implementation) {
    if (typeof implementation !== "function") throw invalidArgType("implementation", "function", implementation);
    this.#implementation = implementation;
  }
  mockImplementationOnce(implementation, onCall = this.#calls.length) {
    if (typeof implementation !== "function") throw invalidArgType("implementation", "function", implementation);
    if (!Number.isInteger(onCall) || onCall < this.#calls.length) {
      const error = new TypeError(`The argument 'onCall' must be an integer >= ${this.#calls.length}. Received ${onCall}`);
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    this.#once.set(onCall, implementation);
  }
  resetCalls() {
    this.#calls = [];
  }
  restore() {
    this.#restore?.();
  }
  /** The implementation for the next call (a one-off one, else the current one while `times` lasts). */
  nextImplementation(original) {
    const index = this.#calls.length;
    const once = this.#once.get(index);
    if (once) {
      this.#once.delete(index);
      return once;
    }
    if (this.#times !== undefined && index >= this.#times) return original;
    return this.#implementation;
  }
  record(call) {
    this.#calls.push(call);
  }
}

function makeMock(original, implementation, restore, times) {
  const context = new MockFunctionContext(implementation, restore, times);
  const run = (thisArg, args, target) => {
    const impl = context.nextImplementation(original);
    const call = { arguments: args, error: undefined, result: undefined, stack: new Error(), target, this: thisArg };
    try {
      call.result = target === undefined ? Reflect.apply(impl, thisArg, args) : Reflect.construct(impl, args, target);
      return call.result;
    } catch (error) {
      call.error = error;
      throw error;
    } finally {
      context.record(call);
    }
  };
  const proxy = new Proxy(original, {
    apply: (fn, thisArg, args) => run(thisArg, args, undefined),
    // As in Node, `target` records the mocked function itself when `new` reaches it directly.
    construct: (fn, args, newTarget) => run(undefined, args, newTarget === proxy ? fn : newTarget),
    get: (fn, key, receiver) => (key === "mock" ? context : Reflect.get(fn, key, receiver)),
  });
  return proxy;
}

class MockTracker {
  #mocks = new Set();

  fn(original = function () {}, implementation = original, options = {}) {
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [original, implementation];
    if (typeof original !== "function") throw invalidArgType("original", "function", original);
    if (typeof implementation !== "function") throw invalidArgType("implementation", "function", implementation);
    const mock = makeMock(original, implementation, undefined, options.times);
    this.#mocks.add(mock.mock);
    return mock;
  }

  method(object, name, implementation, options = {}) {
    if (object === null || (typeof object !== "object" && typeof object !== "function")) throw invalidArgType("object", "object", object);
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    const { getter = false, setter = false, times } = options;
    if (getter && setter) {
      const error = new TypeError("The property 'options.setter' cannot be used with 'options.getter'");
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    let owner = object;
    let descriptor;
    while (owner !== null && !(descriptor = Object.getOwnPropertyDescriptor(owner, name))) owner = Object.getPrototypeOf(owner);
    const kind = getter ? "get" : setter ? "set" : "value";
    const original = descriptor?.[kind];
    if (typeof original !== "function") throw invalidArgType("methodName", getter ? "getter" : setter ? "setter" : "function", original);
    const own = Object.getOwnPropertyDescriptor(object, name);
    const restore = () => {
      if (own) Object.defineProperty(object, name, own);
      else delete object[name];
    };
    const mock = makeMock(original, implementation ?? original, restore, times);
    Object.defineProperty(object, name, { ...descriptor, [kind]: mock, configurable: true });
    this.#mocks.add(mock.mock);
    return mock;
  }

  getter(object, name, implementation, options = {}) {
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    return this.method(object, name, implementation, { ...options, getter: true });
  }

  setter(object, name, implementation, options = {}) {
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    return this.method(object, name, implementation, { ...options, setter: true });
  }

  reset() {
    this.restoreAll();
    this.#mocks.clear();
  }

  restoreAll() {
    for (const context of this.#mocks) context.restore();
  }
}

module.exports = { mock: new MockTracker(), MockTracker, MockFunctionContext };
