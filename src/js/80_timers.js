// Timers and microtasks: setTimeout/setInterval and their clear functions, queueMicrotask.
// Deadlines live on the worker's scheduler thread; the callbacks stay here in the isolate
// (held by the native side as V8 globals keyed by timer id, which is what these return).

function checkCallback(callback, name) {
  if (typeof callback !== "function") {
    throw new TypeError(`${name}: the callback must be a function (strings are not evaluated)`);
  }
}

function arm(callback, delay, args, repeat) {
  // The callback runs in the AsyncLocalStorage frame current when the timer was set.
  // Every macrotask starts with no frame, so only a timer set inside one restores it.
  // An error the callback throws is reported (an "error" event, then the log; 75_global_errors.js).
  const frame = ops.continuationGet();
  const call = args.length === 0 ? () => callback() : () => callback(...args);
  const run = () => {
    if (frame !== undefined) ops.continuationSet(frame);
    try {
      call();
    } catch (error) {
      internals.reportError(error);
    }
  };
  return ops.timerStart(run, Number(delay) || 0, repeat);
}

function setTimeout(callback, delay = 0, ...args) {
  checkCallback(callback, "setTimeout");
  return arm(callback, delay, args, false);
}

function setInterval(callback, delay = 0, ...args) {
  checkCallback(callback, "setInterval");
  return arm(callback, delay, args, true);
}

function clearTimeout(id) {
  if (id !== undefined && id !== null) ops.timerCancel(Number(id) >>> 0);
}

function queueMicrotask(callback) {
  if (typeof callback !== "function") {
    throw new TypeError("queueMicrotask: the argument must be a function");
  }
  ops.queueMicrotask(() => {
    try {
      callback();
    } catch (error) {
      internals.reportError(error);
    }
  });
}

internals.defineGlobal("setTimeout", setTimeout);
internals.defineGlobal("setInterval", setInterval);
internals.defineGlobal("clearTimeout", clearTimeout);
internals.defineGlobal("clearInterval", function clearInterval(id) { clearTimeout(id); });
internals.defineGlobal("queueMicrotask", queueMicrotask);

// performance: a monotonic clock starting when the worker started. (The origin is worked out
// on first use: this file also runs once at snapshot time, long before any worker starts.)
let timeOrigin;
class Performance {
  get timeOrigin() {
    timeOrigin ??= Date.now() - ops.now();
    return timeOrigin;
  }
  now() {
    return ops.now();
  }
  toJSON() {
    return { timeOrigin: this.timeOrigin };
  }
  get [Symbol.toStringTag]() {
    return "Performance";
  }
}
internals.defineGlobal("performance", new Performance());
internals.defineGlobal("Performance", Performance);
