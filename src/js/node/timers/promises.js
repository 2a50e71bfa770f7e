// node:timers/promises: promise forms of the timers (setTimeout, setImmediate, an async
// iterator setInterval, and scheduler.wait), with AbortSignal support.

function abortError(signal) {
  return Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR", cause: signal.reason });
}

/** Node's ERR_INVALID_ARG_TYPE, whose string form names the code (`TypeError [ERR_INVALID_ARG_TYPE]: …`). */
function argTypeError(message) {
  const error = new TypeError(message);
  error.code = "ERR_INVALID_ARG_TYPE";
  Object.defineProperty(error, "toString", {
    value() {
      return `${this.name} [${this.code}]: ${this.message}`;
    },
    writable: true,
    configurable: true,
  });
  return error;
}

function checkSignal(signal) {
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw argTypeError('The "options.signal" property must be an instance of AbortSignal.');
}

/** Node's checks of the delay (when given) and the options: a bad one rejects the promise. */
function checkArgs(delay, options) {
  if (delay !== undefined && typeof delay !== "number") throw argTypeError(`The "delay" argument must be of type number. Received ${typeof delay}`);
  if (options === null || typeof options !== "object") throw argTypeError(`The "options" argument must be of type object. Received ${options === null ? "null" : typeof options}`);
  checkSignal(options.signal);
  if (options.ref !== undefined && typeof options.ref !== "boolean") throw argTypeError(`The "options.ref" property must be of type boolean. Received ${options.ref === null ? "null" : typeof options.ref}`);
}

function later(delay, value, options = {}, checkDelay = true) {
  try {
    checkArgs(checkDelay ? delay : undefined, options);
  } catch (error) {
    return Promise.reject(error);
  }
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(id);
      reject(abortError(signal));
    };
    const id = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(value);
    }, delay);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

exports.setTimeout = (delay, value, options) => later(delay, value, options);
exports.setImmediate = (value, options = {}) => later(0, value, options, false);
exports.setInterval = async function* setInterval(delay, value, options = {}) {
  checkArgs(delay, options);
  const { signal } = options;
  if (signal?.aborted) throw abortError(signal);
  let pending = 0;
  let wake = null;
  const id = globalThis.setInterval(() => {
    pending++;
    wake?.();
  }, delay);
  // An abort stops the ticks at once (those already come are still handed out).
  const onAbort = () => {
    clearInterval(id);
    wake?.();
  };
  signal?.addEventListener("abort", onAbort);
  try {
    // As Node's: ticks that came while the consumer was busy are all handed out, an abort
    // meanwhile notwithstanding; the abort ends the loop when it next waits.
    while (!signal?.aborted) {
      if (pending === 0) await new Promise((resolve) => (wake = resolve));
      wake = null;
      for (; pending > 0; pending--) yield value;
    }
    throw abortError(signal);
  } finally {
    clearInterval(id);
    signal?.removeEventListener("abort", onAbort);
  }
};
exports.scheduler = {
  wait: (delay, options) => later(delay, undefined, options),
  yield: () => later(0, undefined),
};
