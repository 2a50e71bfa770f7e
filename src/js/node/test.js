// node:test: what workerd has of it — the `mock` tracker (mock.fn, mock.method, mock.getter,
// mock.setter, reset, restoreAll) with MockFunctionContext's call records (arguments, result,
// error, this, target, stack) and implementation swapping. There is no test runner.
const { invalidArgType, describeReceived } = require("node:internal/errors");

function invalidArgValue(name, reason, value) {
  const error = new TypeError(`The ${name.includes(".") ? "property" : "argument"} '${name}' ${reason}. Received ${internals.inspect(value, { quoteStrings: true })}`);
  error.code = "ERR_INVALID_ARG_VALUE";
  return error;
}

/** options.times: an integer >= 1 when given (Node's validateInteger errors). */
function checkTimes(times) {
  if (times === undefined) return;
  if (typeof times !== "number") {
    const error = new TypeError(`The "options.times" property must be of type number. Received ${describeReceived(times)}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  if (!Number.isInteger(times) || times < 1 || times > Number.MAX_SAFE_INTEGER) {
    const range = Number.isInteger(times) ? `>= 1 && <= ${Number.MAX_SAFE_INTEGER}` : "an integer";
    const error = new RangeError(`The value of "options.times" is out of range. It must be ${range}. Received ${times}`);
    error.code = "ERR_OUT_OF_RANGE";
    throw error;
  }
}

class MockFunctionContext {
  #calls = [];
  #implementation;
  #restore;
  #times;
  #once = new Map();
  #original;
  constructor(original, implementation, restore, times) {
    this.#original = original;
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
    if (typeof onCall !== "number") throw invalidArgType("onCall", "number", onCall);
    if (!Number.isInteger(onCall) || onCall < this.#calls.length) {
      // Node's validateInteger(onCall, "onCall", callCount).
      const range = Number.isInteger(onCall) ? `>= ${this.#calls.length} && <= ${Number.MAX_SAFE_INTEGER}` : "an integer";
      const error = new RangeError(`The value of "onCall" is out of range. It must be ${range}. Received ${onCall}`);
      error.code = "ERR_OUT_OF_RANGE";
      throw error;
    }
    this.#once.set(onCall, implementation);
  }
  resetCalls() {
    this.#calls = [];
  }
  /** Back to the original: as the implementation, and (for a method) on its object. */
  restore() {
    this.#implementation = this.#original;
    this.#once.clear();
    this.#times = undefined;
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
  const context = new MockFunctionContext(original, implementation, restore, times);
  const run = (thisArg, args, target) => {
    const impl = context.nextImplementation(original);
    const call = { arguments: args, error: undefined, result: undefined, stack: new Error(), target, this: thisArg };
    try {
      call.result = target === undefined ? Reflect.apply(impl, thisArg, args) : Reflect.construct(impl, args, target);
      // A construction's `this` is the object it made.
      if (target !== undefined) call.this = call.result;
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
    // The options may come first or second (mock.fn({ times }), mock.fn(fn, { times })).
    if (original !== null && typeof original === "object") [original, implementation, options] = [function () {}, undefined, original];
    else if (implementation !== null && typeof implementation === "object") [implementation, options] = [original, implementation];
    implementation ??= original;
    checkTimes(options.times);
    if (typeof original !== "function") throw invalidArgType("original", "function", original);
    if (typeof implementation !== "function") throw invalidArgType("implementation", "function", implementation);
    const mock = makeMock(original, implementation, undefined, options.times);
    this.#mocks.add(mock.mock);
    return mock;
  }

  method(object, name, implementation, options = {}) {
    if (object === null || (typeof object !== "object" && typeof object !== "function")) throw invalidArgType("object", "object", object);
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    if (typeof name !== "string" && typeof name !== "symbol") {
      const error = new TypeError(`The "methodName" argument must be one of type string or symbol. Received ${describeReceived(name)}`);
      error.code = "ERR_INVALID_ARG_TYPE";
      throw error;
    }
    const { getter = false, setter = false, times } = options;
    checkTimes(times);
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
    if (typeof original !== "function") throw invalidArgValue("methodName", `must be a ${getter ? "getter" : setter ? "setter" : "method"}`, original);
    // As Node's: restoring puts the descriptor found (maybe a prototype's) on the object itself.
    const restore = () => Object.defineProperty(object, name, descriptor);
    const mock = makeMock(original, implementation ?? original, restore, times);
    Object.defineProperty(object, name, { ...descriptor, [kind]: mock, configurable: true });
    this.#mocks.add(mock.mock);
    return mock;
  }

  getter(object, name, implementation, options = {}) {
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    if (options.getter === false) throw invalidArgValue("options.getter", "cannot be false", false);
    return this.method(object, name, implementation, { ...options, getter: true });
  }

  setter(object, name, implementation, options = {}) {
    if (implementation !== null && typeof implementation === "object") [implementation, options] = [undefined, implementation];
    if (options.setter === false) throw invalidArgValue("options.setter", "cannot be false", false);
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
