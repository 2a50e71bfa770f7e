// node:vm (enable_nodejs_vm_module; implied by nodejs_compat from 2025-10-01): Workers cannot
// compile code at run time, so, as in workerd, scripts and contexts can be made and checked but
// running one (runIn*Context, compileFunction, measureMemory) throws ERR_METHOD_NOT_IMPLEMENTED.
// A worker created with `allowEval` (as test runners need) may run code in its own context:
// `runInThisContext` compiles with the given filename and line/column offsets.
const { notImplemented, notImplementedClass, invalidArgType } = require("node:internal/errors");

const constants = Object.freeze({
  __proto__: null,
  USE_MAIN_CONTEXT_DEFAULT_LOADER: Symbol("vm_dynamic_import_main_context_default"),
  DONT_CONTEXTIFY: Symbol("vm_context_no_contextify"),
});
const contexts = new WeakSet();

function isContext(object) {
  if (typeof object !== "object" || object === null) throw invalidArgType("object", "object", object);
  return contexts.has(object);
}

function createContext(contextObject = {}) {
  if (contextObject === constants.DONT_CONTEXTIFY) contextObject = {};
  if (typeof contextObject !== "object" || contextObject === null) throw invalidArgType("contextObject", "object", contextObject);
  contexts.add(contextObject);
  return contextObject;
}

class Script {
  cachedDataRejected = undefined;
  cachedDataProduced = undefined;
  cachedData = undefined;
  sourceMapURL = undefined;
  #code;
  #filename;
  #lineOffset;
  #columnOffset;
  constructor(code, options = {}) {
    this.#code = String(code);
    if (typeof options !== "string" && (typeof options !== "object" || options === null)) throw invalidArgType("options", "object", options);
    const { filename = "evalmachine.<anonymous>", lineOffset = 0, columnOffset = 0 } = typeof options === "string" ? { filename: options } : options;
    this.#filename = String(filename);
    this.#lineOffset = lineOffset | 0;
    this.#columnOffset = columnOffset | 0;
  }
  createCachedData() {
    return require("node:buffer").Buffer.alloc(0);
  }
  runInThisContext() {
    if (!ops.evalAllowed()) throw require("node:internal/errors").notImplementedError("runInThisContext");
    return ops.runScript(this.#code, this.#filename, this.#lineOffset, this.#columnOffset);
  }
  runInContext(context) {
    if (!isContext(context)) throw invalidArgType("contextifiedObject", "vm.Context", context);
    throw require("node:internal/errors").notImplementedError("runInThisContext");
  }
  runInNewContext(contextObject, options) {
    return this.runInContext(createContext(contextObject), options);
  }
}

const createScript = (code, options) => new Script(code, options);
module.exports = {
  constants,
  isContext,
  createContext,
  Script,
  createScript,
  runInContext: (code, context, options) => createScript(code, options).runInContext(context, options),
  runInNewContext: (code, context, options) => createScript(code, options).runInNewContext(context, options),
  runInThisContext: (code, options) => createScript(code, options).runInThisContext(options),
  compileFunction: notImplemented("compileFunction"),
  measureMemory: notImplemented("measureMemory"),
  Module: notImplementedClass("Module"),
  SourceTextModule: notImplementedClass("SourceTextModule"),
  SyntheticModule: notImplementedClass("SyntheticModule"),
};
