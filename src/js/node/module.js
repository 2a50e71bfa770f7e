// node:module: createRequire (a CommonJS `require` that reaches the worker's own modules by path
// and the node: modules it may import), isBuiltin and builtinModules; as in workerd, the
// loader internals (register, _load, _resolveFilename, …) throw ERR_METHOD_NOT_IMPLEMENTED and
// the compile cache is always off. The default export is Module, a function that throws,
// carrying all of the above.
const { notImplemented } = require("node:internal/errors");

// As workerd's: Node's list of built-in modules whatever this worker's flags let it import.
const builtinModules = ("_http_agent _http_client _http_common _http_incoming _http_outgoing _http_server _stream_duplex _stream_passthrough " +
  "_stream_readable _stream_transform _stream_wrap _stream_writable _tls_common _tls_wrap assert assert/strict async_hooks buffer " +
  "child_process cluster console constants crypto dgram diagnostics_channel dns dns/promises domain events fs fs/promises http http2 " +
  "https inspector inspector/promises module net os path path/posix path/win32 perf_hooks process punycode querystring readline " +
  "readline/promises repl stream stream/consumers stream/promises stream/web string_decoder sys timers timers/promises tls " +
  "trace_events tty url util util/types v8 vm wasi worker_threads zlib").split(" ");
const builtinSet = new Set(builtinModules);
/** Built-ins Node only knows with the node: prefix. */
const schemeOnly = new Set(["test", "test/reporters", "sea", "sqlite"]);

function createRequire(path) {
  const text = `${path}`;
  if (!text.startsWith("/") && !text.startsWith("file:")) {
    const error = new TypeError(`The argument must be a file URL object, a file URL string, or an absolute path string. Received ${JSON.stringify(text)}`);
    error.code = "ERR_INVALID_ARG_VALUE";
    throw error;
  }
  // As workerd's (whose registry keys modules by path alone): no query or fragment.
  if (text.startsWith("file:") && /[?#]/.test(text)) throw new TypeError("The specifier must not have query string parameters or hash fragments.");
  const require = internals.createRequire(text);
  require.resolve = notImplemented("module.createRequire.resolve");
  require.resolve.paths = notImplemented("module.createRequire.resolve.paths");
  require.cache = { __proto__: null };
  require.extensions = _extensions;
  require.main = undefined;
  return require;
}

const _extensions = {
  ".js": notImplemented("module._extensions.js"),
  ".json": notImplemented("module._extensions.json"),
  ".node": notImplemented("module._extensions.node"),
};

function isBuiltin(specifier) {
  const name = String(specifier);
  if (name.startsWith("node:")) return builtinSet.has(name.slice(5)) || schemeOnly.has(name.slice(5));
  return builtinSet.has(name);
}

const constants = Object.freeze({ __proto__: null, compileCacheStatus: Object.freeze({ __proto__: null, FAILED: 0, ENABLED: 1, ALREADY_ENABLED: 2, DISABLED: 3 }) });

function Module() {
  throw require("node:internal/errors").notImplementedError("module.Module");
}
Module.prototype.load = function load() {};
Module.prototype.require = function require() {};
Module.prototype._compile = function _compile() {};

Object.assign(Module, {
  Module,
  builtinModules,
  constants,
  createRequire,
  isBuiltin,
  _extensions,
  _cache: { __proto__: null },
  _pathCache: { __proto__: null },
  globalPaths: [],
  enableCompileCache() {},
  getCompileCacheDir: () => undefined,
  flushCompileCache() {},
  getSourceMapsSupport: () => Object.freeze({ __proto__: null, enabled: false, nodeModules: false, generatedCode: false }),
});
for (const name of ["register", "runMain", "syncBuiltinESMExports", "wrap", "_debug", "_findPath", "_initPaths", "_load", "_preloadModules",
  "_resolveFilename", "_resolveLookupPaths", "_nodeModulePaths", "findSourceMap", "findPackageJSON", "setSourceMapsSupport",
  "stripTypeScriptTypes", "registerHooks", "SourceMap"]) {
  Module[name] = notImplemented(`module.${name}`);
}
module.exports = Module;
