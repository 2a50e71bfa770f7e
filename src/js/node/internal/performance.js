// The User Timing half of `performance` that workerd turns on with
// enable_global_performance_classes or enable_nodejs_perf_hooks_module (both implied by
// nodejs_compat from 2026-03-17): mark/measure entries kept per isolate, getEntries*,
// clearMarks/clearMeasures, and the entry classes as globals. As in workerd, observers never
// receive entries and resource timing is empty. Installed by internals.installPerformanceClasses
// (src/js/95_node.js), which loads this file on first use.

let entries = [];

const illegal = () => {
  throw new TypeError("Illegal constructor");
};
const kCreate = Symbol("create");

class PerformanceEntry {
  #name;
  #type;
  #start;
  #duration;
  constructor(key, name, type, start, duration) {
    if (key !== kCreate) illegal();
    this.#name = String(name);
    this.#type = type;
    this.#start = start;
    this.#duration = duration;
  }
  get name() { return this.#name; }
  get entryType() { return this.#type; }
  get startTime() { return this.#start; }
  get duration() { return this.#duration; }
  toJSON() {
    const json = { name: this.name, entryType: this.entryType, startTime: this.startTime, duration: this.duration };
    // workerd leaves `detail` out when there is none.
    if (this.detail !== undefined && this.detail !== null) json.detail = this.detail;
    return json;
  }
}

class PerformanceMark extends PerformanceEntry {
  #detail;
  constructor(name, options = {}) {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'PerformanceMark' constructor: 1 argument required");
    const start = options?.startTime ?? performance.now();
    if (typeof start !== "number" || !Number.isFinite(start) || start < 0) throw new TypeError("PerformanceMark startTime must be a finite, non-negative number");
    super(kCreate, name, "mark", start, 0);
    this.#detail = options?.detail === undefined ? null : structuredClone(options.detail);
  }
  get detail() { return this.#detail; }
}

class PerformanceMeasure extends PerformanceEntry {
  #detail;
  constructor(key, name, start, duration, detail) {
    super(key, name, "measure", start, duration);
    this.#detail = detail === undefined ? null : detail;
  }
  get detail() { return this.#detail; }
}

class PerformanceResourceTiming extends PerformanceEntry {
  constructor() {
    illegal();
    super();
  }
}

class PerformanceObserverEntryList {
  constructor(key) {
    if (key !== kCreate) illegal();
  }
  getEntries() { return []; }
  getEntriesByType() { return []; }
  getEntriesByName() { return []; }
}

class PerformanceObserver {
  #callback;
  constructor(callback) {
    if (typeof callback !== "function") throw new TypeError("PerformanceObserver requires a callback function");
    this.#callback = callback;
  }
  observe() {}
  disconnect() {}
  takeRecords() { return []; }
  static get supportedEntryTypes() { return ["mark", "measure"]; }
}

function byName(name, type) {
  return entries.filter((e) => e.name === String(name) && (type === undefined || e.entryType === String(type)));
}

const methods = {
  mark(name, options) {
    const mark = new PerformanceMark(name, options);
    entries.push(mark);
    return mark;
  },
  measure(name, startOrOptions, endMark) {
    let start = 0;
    let end = performance.now();
    let detail;
    if (typeof startOrOptions === "string") {
      const startMarks = byName(startOrOptions, "mark");
      if (startMarks.length > 0) start = startMarks[0].startTime;
      if (endMark !== undefined) {
        const endMarks = byName(endMark, "mark");
        if (endMarks.length > 0) end = endMarks[0].startTime;
      }
    } else if (startOrOptions !== undefined && startOrOptions !== null && typeof startOrOptions === "object") {
      if (startOrOptions.start !== undefined) start = Number(startOrOptions.start);
      if (startOrOptions.end !== undefined) end = Number(startOrOptions.end);
      else if (startOrOptions.duration !== undefined) end = start + Number(startOrOptions.duration);
      detail = startOrOptions.detail;
    }
    const measure = new PerformanceMeasure(kCreate, name, start, end >= start ? end - start : 0, detail);
    entries.push(measure);
    return measure;
  },
  getEntries: () => entries.slice(),
  getEntriesByName: (name, type) => byName(name, type),
  getEntriesByType: (type) => entries.filter((e) => e.entryType === String(type)),
  clearMarks(name) {
    entries = entries.filter((e) => e.entryType !== "mark" || (name !== undefined && e.name !== String(name)));
  },
  clearMeasures(name) {
    entries = entries.filter((e) => e.entryType !== "measure" || (name !== undefined && e.name !== String(name)));
  },
  clearResourceTimings() {},
  setResourceTimingBufferSize() {},
};

// enable_nodejs_perf_hooks_module's Node members of `performance`, stubs as workerd has them:
// no event loop to measure, so every figure is 0.
class PerformanceNodeTiming {
  constructor(key) {
    if (key !== kCreate) illegal();
    Object.assign(this, { name: "node", entryType: "node", startTime: 0, duration: 0, nodeStart: 0, v8Start: 0, bootstrapComplete: 0, environment: 0, loopStart: 0, loopExit: 0, idleTime: 0 });
    this.uvMetricsInfo = { loopCount: 0, events: 0, eventsWaiting: 0 };
  }
  toJSON() {
    return { ...this, uvMetricsInfo: { ...this.uvMetricsInfo } };
  }
}

/** A read-only map of event counts (always empty: no UI events in a worker). */
class EventCounts {
  #map = new Map();
  constructor(key) {
    if (key !== kCreate) illegal();
  }
  get size() { return this.#map.size; }
  get(key) { return this.#map.get(key); }
  has(key) { return this.#map.has(key); }
  entries() { return this.#map.entries(); }
  keys() { return this.#map.keys(); }
  values() { return this.#map.values(); }
  forEach(callback, thisArg) { this.#map.forEach((value, key) => callback.call(thisArg, value, key, this)); }
  [Symbol.iterator]() { return this.#map.entries(); }
  get [Symbol.toStringTag]() { return "EventCounts"; }
}

let nodeTiming;
let eventCounts;
const nodeMethods = {
  eventLoopUtilization: () => ({ idle: 0, active: 0, utilization: 0 }),
  timerify: (fn) => fn,
  markResourceTiming() {},
};
const accessors = {
  nodeTiming: () => (nodeTiming ??= new PerformanceNodeTiming(kCreate)),
  eventCounts: () => (eventCounts ??= new EventCounts(kCreate)),
};

module.exports = {
  methods,
  nodeMethods,
  accessors,
  classes: { PerformanceEntry, PerformanceMark, PerformanceMeasure, PerformanceResourceTiming, PerformanceObserver, PerformanceObserverEntryList },
};
