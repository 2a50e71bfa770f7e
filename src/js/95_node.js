// The loader of `node:` modules for nodejs_compat (their sources are in src/js/node/). The
// native side calls `internals.loadNodeModule(name)` when the worker imports `node:<name>`; each
// module is compiled on first import in a context (so workers that never import one pay
// nothing) and runs as `function (ops, internals, exports)`.

const loadedNodeModules = new Map();

internals.loadNodeModule = function loadNodeModule(name) {
  let exports = loadedNodeModules.get(name);
  if (exports === undefined) {
    const factory = ops.nodeModuleFactory(name);
    exports = {};
    factory(ops, internals, exports);
    loadedNodeModules.set(name, exports);
  }
  return exports;
};
