// node:perf_hooks (enable_nodejs_perf_hooks_module; implied by nodejs_compat from 2026-03-17):
// the global `performance` and Node's constants, with workerd's stubs — eventLoopUtilization
// is all zeroes, timerify returns the function unchanged, createHistogram and
// monitorEventLoopDelay throw ERR_METHOD_NOT_IMPLEMENTED. The Performance* entry classes are the
// globals this flag brings (node/internal/performance.js).

const { notImplemented, notImplementedClass } = require("node:internal/errors");

const constants = Object.freeze({
  NODE_PERFORMANCE_GC_MAJOR: 4,
  NODE_PERFORMANCE_GC_MINOR: 1,
  NODE_PERFORMANCE_GC_INCREMENTAL: 8,
  NODE_PERFORMANCE_GC_WEAKCB: 16,
  NODE_PERFORMANCE_GC_FLAGS_NO: 0,
  NODE_PERFORMANCE_GC_FLAGS_CONSTRUCT_RETAINED: 2,
  NODE_PERFORMANCE_GC_FLAGS_FORCED: 4,
  NODE_PERFORMANCE_GC_FLAGS_SYNCHRONOUS_PHANTOM_PROCESSING: 8,
  NODE_PERFORMANCE_GC_FLAGS_ALL_AVAILABLE_GARBAGE: 16,
  NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY: 32,
  NODE_PERFORMANCE_GC_FLAGS_SCHEDULE_IDLE: 64,
  NODE_PERFORMANCE_ENTRY_TYPE_GC: 0,
  NODE_PERFORMANCE_ENTRY_TYPE_HTTP: 1,
  NODE_PERFORMANCE_ENTRY_TYPE_HTTP2: 2,
  NODE_PERFORMANCE_ENTRY_TYPE_NET: 3,
  NODE_PERFORMANCE_ENTRY_TYPE_DNS: 4,
  NODE_PERFORMANCE_MILESTONE_TIME_ORIGIN_TIMESTAMP: 0,
  NODE_PERFORMANCE_MILESTONE_TIME_ORIGIN: 1,
  NODE_PERFORMANCE_MILESTONE_ENVIRONMENT: 2,
  NODE_PERFORMANCE_MILESTONE_NODE_START: 3,
  NODE_PERFORMANCE_MILESTONE_V8_START: 4,
  NODE_PERFORMANCE_MILESTONE_LOOP_START: 5,
  NODE_PERFORMANCE_MILESTONE_LOOP_EXIT: 6,
  NODE_PERFORMANCE_MILESTONE_BOOTSTRAP_COMPLETE: 7,
});

const entryClass = (name) => globalThis[name] ?? notImplementedClass(name);

module.exports = {
  constants,
  performance: globalThis.performance,
  Performance: globalThis.Performance,
  PerformanceEntry: entryClass("PerformanceEntry"),
  PerformanceMark: entryClass("PerformanceMark"),
  PerformanceMeasure: entryClass("PerformanceMeasure"),
  PerformanceObserver: entryClass("PerformanceObserver"),
  PerformanceObserverEntryList: entryClass("PerformanceObserverEntryList"),
  PerformanceResourceTiming: entryClass("PerformanceResourceTiming"),
  eventLoopUtilization: () => ({ idle: 0, active: 0, utilization: 0 }),
  timerify: (fn) => fn,
  createHistogram: notImplemented("createHistogram"),
  monitorEventLoopDelay: notImplemented("monitorEventLoopDelay"),
};
