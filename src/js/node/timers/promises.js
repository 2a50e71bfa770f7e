// node:timers/promises: promise forms of the timers (setTimeout, setImmediate, an async
// iterator setInterval, and scheduler.wait), with AbortSignal support.

function abortError(signal) {
  return Object.assign(new Error("The operation was aborted"), { name: "AbortError", code: "ABORT_ERR", cause: signal.reason });
}

function checkSignal(signal) {
  if (signal !== undefined && (signal === null || typeof signal.addEventListener !== "function")) {
    const error = new TypeError('The "options.signal" property must be an instance of AbortSignal.');
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
}

function later(delay, value, options = {}) {
  const { signal } = options;
  checkSignal(signal);
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
exports.setImmediate = (value, options) => later(0, value, options);
exports.setInterval = async function* setInterval(delay, value, options = {}) {
  const { signal } = options;
  checkSignal(signal);
  if (signal?.aborted) throw abortError(signal);
  let pending = 0;
  let wake = null;
  const id = globalThis.setInterval(() => {
    pending++;
    wake?.();
  }, delay);
  const onAbort = () => wake?.();
  signal?.addEventListener("abort", onAbort);
  try {
    for (;;) {
      if (pending === 0) await new Promise((resolve) => (wake = resolve));
      wake = null;
      if (signal?.aborted) throw abortError(signal);
      pending--;
      yield value;
    }
  } finally {
    clearInterval(id);
    signal?.removeEventListener("abort", onAbort);
  }
};
exports.scheduler = {
  wait: (delay, options) => later(delay, undefined, options),
  yield: () => later(0, undefined),
};
