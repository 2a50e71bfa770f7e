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

/** How workerd's other node: modules differ from the vendored packages (node:stream's: 94_node_streams.js). */
const VENDOR_PATCHES = {
  // workerd's path.resolve() starts from "/", not from process.cwd() ("/bundle").
  "path-browserify/index.js": [["          cwd = process.cwd();\n", "          cwd = '/';\n"]],
  // UTF-8 through the engine's TextEncoder, not the package's array of bytes per string (which
  // takes seconds and gigabytes for a 128 MiB string): the same bytes (a lone surrogate is
  // U+FFFD) and, as before, only whole characters where the room runs out.
  "buffer/index.js": [
    ["        return utf8ToBytes(string).length\n      case 'ucs2':", "        return utf8Length(string)\n      case 'ucs2':"],
    ["          return mustMatch ? -1 : utf8ToBytes(string).length // assume utf8", "          return mustMatch ? -1 : utf8Length(string) // assume utf8"],
    [
      "function utf8Write (buf, string, offset, length) {\n  return blitBuffer(utf8ToBytes(string, buf.length - offset), buf, offset, length)\n}",
      `function utf8Write (buf, string, offset, length) {
  return new TextEncoder().encodeInto(string, buf.subarray(offset, Math.min(buf.length, offset + length))).written
}
function utf8Length (string) {
  if (/^[\\x00-\\x7f]*$/.test(string)) return string.length
  let n = 0
  for (let i = 0; i < string.length; i++) {
    const c = string.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < string.length && (string.charCodeAt(i + 1) & 0xfc00) === 0xdc00) { n += 4; i++ }
    else n += 3
  }
  return n
}`,
    ],
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
      const patches = internals.nodeStreamPatches(internals.feature("enable_streams_nodejs_v24_compat"))[path] ?? VENDOR_PATCHES[path];
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
  // enable_nodejs_perf_hooks_module adds Node's members (stubs, as workerd's).
  const node = internals.features.has("enable_nodejs_perf_hooks_module");
  for (const name of node ? ["timerify", "eventLoopUtilization", "markResourceTiming"] : []) {
    const method = { [name](...args) { return impl().nodeMethods[name](...args); } }[name];
    Object.defineProperty(proto, name, { value: method, writable: true, configurable: true, enumerable: true });
  }
  for (const name of node ? ["eventCounts", "nodeTiming"] : ["eventCounts"]) {
    const get = { [name]() { return impl().accessors[name](); } }[name];
    Object.defineProperty(proto, name, { get: Object.defineProperty(get, "name", { value: `get ${name}` }), configurable: true, enumerable: true });
  }
  // As in workerd with these flags, performance is an EventTarget (its listeners on a target of its own).
  let target;
  Object.setPrototypeOf(proto, EventTarget.prototype);
  for (const name of ["addEventListener", "removeEventListener", "dispatchEvent"]) {
    const method = { [name](...args) { return Reflect.apply(EventTarget.prototype[name], (target ??= new EventTarget()), args); } }[name];
    Object.defineProperty(proto, name, { value: method, writable: true, configurable: true, enumerable: true });
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
