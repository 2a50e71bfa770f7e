// Timers and microtasks: setTimeout/setInterval and their clear functions, queueMicrotask.
// Deadlines live on the worker's scheduler thread; the callbacks stay here in the isolate
// (held by the native side as V8 globals keyed by timer id, which is what these return).

function checkCallback(callback, name) {
  if (typeof callback !== "function") {
    throw new TypeError(`${name}: the callback must be a function (strings are not evaluated)`);
  }
}

/**
 * As in workerd, an event may have at most 10 000 timers active at once: per event, the ids of
 * its active timers and how many have finished (workerd's message gives both).
 */
const MAX_ACTIVE_TIMEOUTS = 10000;
const timersByEvent = new Map(); // event id -> { active: Set<timer id>, finished }
const eventOfTimer = new Map(); // timer id -> that record
internals.eventEndHooks.push((id) => {
  const record = timersByEvent.get(id);
  if (record === undefined) return;
  timersByEvent.delete(id);
  for (const timer of record.active) eventOfTimer.delete(timer);
});

function arm(callback, delay, args, repeat) {
  const event = internals.flowEvent(); // the request whose async flow sets it (52_io_owner.js)
  let record;
  if (event !== undefined) {
    record = timersByEvent.get(event);
    if (record === undefined) timersByEvent.set(event, (record = { active: new Set(), finished: 0 }));
    if (record.active.size >= MAX_ACTIVE_TIMEOUTS) {
      throw new Error(`You have exceeded the number of active timeouts you may set. max active timeouts: ${MAX_ACTIVE_TIMEOUTS}, current active timeouts: ${record.active.size}, finished timeouts: ${record.finished}`);
    }
  }
  // The callback runs in the AsyncLocalStorage frame current when the timer was set.
  // Every macrotask starts with no frame, so only a timer set inside one restores it.
  // An error the callback throws is reported (an "error" event, then the log; 75_global_errors.js).
  const frame = ops.continuationGet();
  const call = args.length === 0 ? () => callback() : () => callback(...args);
  let id;
  const run = () => {
    if (!repeat && record !== undefined && record.active.delete(id)) {
      record.finished++;
      eventOfTimer.delete(id);
    }
    if (frame !== undefined) ops.continuationSet(frame);
    try {
      call();
    } catch (error) {
      internals.reportError(error);
    }
  };
  id = ops.timerStart(run, Number(delay) || 0, repeat);
  if (record !== undefined && typeof id === "number") {
    record.active.add(id);
    eventOfTimer.set(id, record);
  }
  return id;
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
  if (id === undefined || id === null) return;
  const timer = Number(id) >>> 0;
  const record = eventOfTimer.get(timer);
  if (record !== undefined) {
    eventOfTimer.delete(timer);
    record.active.delete(timer);
  }
  ops.timerCancel(timer);
}

function queueMicrotask(callback) {
  if (typeof callback !== "function") {
    throw new TypeError("Failed to execute 'queueMicrotask' on 'ServiceWorkerGlobalScope': parameter 1 is not of type 'function'.");
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

// performance: as workerd's, now() is on Date.now()'s scale (milliseconds since the epoch) and
// timeOrigin is 0; here it is the epoch time of the worker's start plus a monotonic clock, so
// it never goes back. (That start is worked out on first use: this file also runs once at
// snapshot time, long before any worker starts.)
let clockStart;
class Performance {
  get timeOrigin() {
    return 0;
  }
  now() {
    clockStart ??= Date.now() - ops.now();
    return clockStart + ops.now();
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
