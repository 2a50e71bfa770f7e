// The loader of `node:` modules for nodejs_compat. Two kinds of CommonJS module live here:
// workerbox's own `node:` modules (src/js/node/<name>.js, run as
// `function (exports, require, module, ops, internals)`), and the files of the npm packages they
// are built on (embedded by build.rs, run as ordinary CommonJS without ops). Each is compiled on
// first require in a context, so workers that never import one pay nothing.
//
// Resolution: `node:x`, or a bare `x` that is a `node:` module, is that module (vendored code's
// `require("buffer")` therefore gets workerbox's node:buffer); `vendor:pkg[/file]` is an embedded
// npm file (how the node: modules reach the packages); relative paths resolve inside the
// requiring package; other bare names are embedded packages, after the aliases below.

// Bare names the embedded packages require that workerbox answers itself.
const VENDOR_ALIASES = {
  "abort-controller": "node:internal/abort_controller",
  "process/": "node:process",
  process: "node:process",
};

const loaded = new Map();

function notFound(specifier, from) {
  const error = new Error(`Cannot find module '${specifier}' (required from ${from})`);
  error.code = "MODULE_NOT_FOUND";
  return error;
}

function dirname(path) {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

function joinPath(dir, relative) {
  const parts = dir === "" ? [] : dir.split("/");
  for (const part of relative.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}

/** The cache key (`node:<name>` or `vendor:<package>/<file>`) `specifier` names from `from`. */
function resolve(specifier, from) {
  if (specifier.startsWith("node:")) {
    const name = specifier.slice(5);
    if (ops.nodeModuleExists(name)) return specifier;
    throw notFound(specifier, from);
  }
  const fromVendor = from.startsWith("vendor:");
  if (fromVendor && (specifier.startsWith("./") || specifier.startsWith("../"))) {
    const path = ops.vendorResolve(joinPath(dirname(from.slice(7)), specifier));
    if (path === undefined) throw notFound(specifier, from);
    return `vendor:${path}`;
  }
  if (specifier.startsWith("vendor:")) {
    const path = ops.vendorResolve(specifier.slice(7));
    if (path === undefined) throw notFound(specifier, from);
    return `vendor:${path}`;
  }
  const bare = specifier.endsWith("/") ? specifier.slice(0, -1) : specifier;
  if (fromVendor && Object.hasOwn(VENDOR_ALIASES, specifier)) return VENDOR_ALIASES[specifier];
  if (ops.nodeModuleExists(bare) && !bare.startsWith("internal/")) return `node:${bare}`;
  if (bare.startsWith("internal/") && !fromVendor && ops.nodeModuleExists(bare)) return `node:${bare}`;
  if (fromVendor) {
    const path = ops.vendorResolve(bare);
    if (path !== undefined) return `vendor:${path}`;
  }
  throw notFound(specifier, from);
}

/**
 * enable_streams_nodejs_v24_compat (a flag with no date): node:stream as Node 24 has it, where
 * workerd's flag changes it, as patches to readable-stream 4.8.0 (Node 18's streams) made when
 * the file is loaded. An unknown `defaultEncoding` is an ERR_UNKNOWN_ENCODING; a pipe whose
 * destination's write() throws destroys the destination with that error; write() tells of
 * backpressure after `_write()` ran; write and end callbacks get `null` for no error, and end(cb)
 * on an errored stream gets its error; a Transform that pushed null calls back on the next tick.
 */
const UNKNOWN_ENCODING = `((encoding) => {
  if (encoding != null && !require("buffer").Buffer.isEncoding(encoding)) throw new (require("../../ours/errors").codes.ERR_UNKNOWN_ENCODING)(encoding);
  return encoding || "utf8";
})(options && options.defaultEncoding)`;
// Texts both patch sets change: a write's callback and the end callbacks.
const WRITE_CALLBACK = "    state.pendingcb--\n    cb()\n";
const FINISH_CALLBACKS = "    onfinishCallbacks[i]()\n";
const STREAMS_V24 = {
  "readable-stream/lib/internal/streams/readable.js": [
    ["this.defaultEncoding = (options && options.defaultEncoding) || 'utf8'", `this.defaultEncoding = ${UNKNOWN_ENCODING}`],
    ["    const ret = dest.write(chunk)\n", "    let ret\n    try {\n      ret = dest.write(chunk)\n    } catch (error) {\n      dest.destroy(error)\n      return\n    }\n"],
  ],
  "readable-stream/lib/internal/streams/writable.js": [
    ["this.defaultEncoding = (options && options.defaultEncoding) || 'utf8'", `this.defaultEncoding = ${UNKNOWN_ENCODING}`],
    ["  const ret = state.length < state.highWaterMark\n  // We must ensure that previous needDrain will not be reset to false.\n  if (!ret) state.needDrain = true\n", "  let ret\n"],
    ["  return ret && !state.errored && !state.destroyed\n}\nfunction doWrite", "  ret = state.length < state.highWaterMark || state.length === 0\n  if (!ret) state.needDrain = true\n  return ret && !state.errored && !state.destroyed\n}\nfunction doWrite"],
    [WRITE_CALLBACK, WRITE_CALLBACK.replace("cb()", "cb(null)")],
    ["    if (err || state.finished) {\n      process.nextTick(cb, err)\n    } else {", "    if (err) {\n      process.nextTick(cb, err)\n    } else if (state.errored) {\n      process.nextTick(cb, state.errored)\n    } else if (state.finished) {\n      process.nextTick(cb, null)\n    } else {"],
    [FINISH_CALLBACKS, FINISH_CALLBACKS.replace("()", "(null)")],
  ],
  "readable-stream/lib/internal/streams/transform.js": [
    ["    if (\n      wState.ended ||", "    if (rState.ended) {\n      require('process').nextTick(callback)\n      return\n    }\n    if (\n      wState.ended ||"],
  ],
};

/** Without the flag, as workerd (Node 22's streams there): a write callback gets `undefined`, an end callback `null`. */
const STREAMS_V22 = {
  "readable-stream/lib/internal/streams/writable.js": [
    [WRITE_CALLBACK, WRITE_CALLBACK.replace("cb()", "cb(undefined)")],
    [FINISH_CALLBACKS, FINISH_CALLBACKS.replace("()", "(null)")],
  ],
};

function load(key) {
  let module = loaded.get(key);
  if (module !== undefined) return module.exports;
  module = { exports: {}, id: key, loaded: false };
  loaded.set(key, module);
  const require = (specifier) => load(resolve(String(specifier), key));
  try {
    if (key.startsWith("node:")) {
      ops.nodeModuleFactory(key.slice(5))(module.exports, require, module, ops, internals);
    } else {
      const path = key.slice(7);
      const patches = (internals.feature("enable_streams_nodejs_v24_compat") ? STREAMS_V24 : STREAMS_V22)[path];
      ops.vendorFactory(path, patches)(module.exports, require, module, `/vendor/${path}`, `/vendor/${dirname(path)}`);
    }
  } catch (error) {
    loaded.delete(key);
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

/** `node:<name>`'s exports, for the module loader (src/runtime/modules.rs) and `require`. */
internals.loadNodeModule = function loadNodeModule(name) {
  return load(`node:${name}`);
};

/**
 * nodejs_compat_v2's globals: `Buffer`, `process` and `global`, and `setImmediate` /
 * `clearImmediate`. Buffer and process are loaded on first use (a getter that then replaces
 * itself with the value), so a worker that never touches them does not load them.
 */
/**
 * A property made on first use: a getter that replaces itself with `make()`'s value. With
 * `settable`, assigning first replaces it too (as for globals a script may overwrite).
 */
internals.lazyProperty = function lazyProperty(object, name, make, { enumerable = false, settable = false } = {}) {
  const define = (value) => Object.defineProperty(object, name, { value, writable: true, configurable: true, enumerable });
  Object.defineProperty(object, name, {
    configurable: true,
    enumerable,
    get() {
      const value = make();
      define(value);
      return value;
    },
    set: settable ? define : undefined,
  });
};

/** A global made on first use. */
const lazy = (name, get) => internals.lazyProperty(globalThis, name, get, { settable: true });

internals.installNodeGlobals = function installNodeGlobals() {
  lazy("Buffer", () => load("node:buffer").Buffer);
  lazy("process", () => load("node:process"));
  lazy("global", () => globalThis);
  lazy("setImmediate", () => load("node:timers").setImmediate);
  lazy("clearImmediate", () => load("node:timers").clearImmediate);
};

/**
 * enable_global_performance_classes / enable_nodejs_perf_hooks_module: performance.mark,
 * measure, getEntries* and clear*, and the Performance* entry classes as globals
 * (node/internal/performance.js, loaded on first use).
 */
internals.installPerformanceClasses = function installPerformanceClasses() {
  const impl = () => load("node:internal/performance");
  const proto = Object.getPrototypeOf(globalThis.performance);
  for (const name of ["mark", "measure", "getEntries", "getEntriesByName", "getEntriesByType", "clearMarks", "clearMeasures", "clearResourceTimings", "setResourceTimingBufferSize"]) {
    const method = { [name](...args) { return impl().methods[name](...args); } }[name];
    Object.defineProperty(proto, name, { value: method, writable: true, configurable: true, enumerable: true });
  }
  for (const name of ["PerformanceEntry", "PerformanceMark", "PerformanceMeasure", "PerformanceResourceTiming", "PerformanceObserver", "PerformanceObserverEntryList"]) {
    lazy(name, () => impl().classes[name]);
  }
};

/**
 * enable_nodejs_global_timers (implied by nodejs_compat from 2026-02-10): the global
 * setTimeout/setInterval/clearTimeout/clearInterval/setImmediate/clearImmediate are node:timers'
 * (Timeout objects instead of numbers), as workerd makes them. node:timers keeps the runtime's.
 * node:timers is loaded when a script first reads one of them.
 */
internals.installNodeTimers = function installNodeTimers() {
  internals.webTimers = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval, clearTimeout: globalThis.clearTimeout };
  for (const name of ["setTimeout", "setInterval", "clearTimeout", "clearInterval", "setImmediate", "clearImmediate"]) {
    lazy(name, () => load("node:timers")[name]);
  }
};
