// node:vm (enable_nodejs_vm_module; implied by nodejs_compat from 2025-10-01): Workers cannot
// compile code at run time, so, as in workerd, scripts and contexts can be made and checked but
// running one (runIn*Context, compileFunction, measureMemory) throws ERR_METHOD_NOT_IMPLEMENTED
// once its arguments are checked as workerd checks them. A context is a fresh null-prototype
// object marked as one (createContext does not contextify the object given). A worker created
// with `allowEval` (as test runners need) may run code in its own context: `runInThisContext`
// compiles with the given filename and line/column offsets.
const { notImplementedError, notImplementedClass, invalidArgType } = require("node:internal/errors");

const constants = Object.freeze({
  __proto__: null,
  USE_MAIN_CONTEXT_DEFAULT_LOADER: Symbol("vm_dynamic_import_main_context_default"),
  DONT_CONTEXTIFY: Symbol("vm_context_no_contextify"),
});
const contexts = new WeakSet();

// ---- Argument checks (Node's validators, as workerd applies them) ----

const describe = (value) => (typeof value === "string" ? `'${value}'` : String(value));
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
function checkObject(value, name, { nullable = false, array = false } = {}) {
  if ((nullable && value === null) || (array && Array.isArray(value))) return;
  if (!isObject(value)) throw invalidArgType(name, "object", value);
}
function checkType(value, name, type) {
  if (typeof value !== type) throw invalidArgType(name, type, value);
}
function checkInt32(value, name) {
  checkType(value, name, "number");
  if (!Number.isInteger(value) || value < -2147483648 || value > 2147483647) {
    const range = Number.isInteger(value) ? ">= -2147483648 && <= 2147483647" : "an integer";
    throw Object.assign(new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${value}`), { code: "ERR_OUT_OF_RANGE" });
  }
}
function checkPositiveUint32(value, name) {
  checkType(value, name, "number");
  if (!Number.isInteger(value) || value < 1 || value > 4294967295) {
    const range = Number.isInteger(value) ? ">= 1 && <= 4294967295" : "an integer";
    throw Object.assign(new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${value}`), { code: "ERR_OUT_OF_RANGE" });
  }
}
function checkOneOf(value, name, allowed) {
  if (!allowed.includes(value)) {
    const list = allowed.map((v) => (typeof v === "string" ? `'${v}'` : String(v))).join(", ");
    throw Object.assign(new TypeError(`The argument '${name}' must be one of: ${list}. Received ${describe(value)}`), { code: "ERR_INVALID_ARG_VALUE" });
  }
}
function checkBuffer(value, name) {
  if (!ArrayBuffer.isView(value)) throw invalidArgType(name, "an instance of Buffer, TypedArray, or DataView", value);
}
/** The options shared by Script and compileFunction. */
function checkCompileOptions({ filename, lineOffset = 0, columnOffset = 0, cachedData, produceCachedData = false, importModuleDynamically = false }) {
  if (importModuleDynamically !== undefined && typeof importModuleDynamically !== "function") checkType(importModuleDynamically, "options.importModuleDynamically", "boolean");
  checkType(filename, "options.filename", "string");
  checkInt32(lineOffset, "options.lineOffset");
  checkInt32(columnOffset, "options.columnOffset");
  if (cachedData !== undefined) checkBuffer(cachedData, "options.cachedData");
  checkType(produceCachedData, "options.produceCachedData", "boolean");
}
/** The options of running a script. */
function checkRunOptions(options = {}) {
  checkObject(options, "options");
  const { breakOnSigint = false, displayErrors = true, timeout } = options;
  checkType(breakOnSigint, "options.breakOnSigint", "boolean");
  checkType(displayErrors, "options.displayErrors", "boolean");
  if (timeout !== undefined) checkPositiveUint32(timeout, "options.timeout");
}
/** runInNewContext's context options (contextName, contextOrigin, …) as createContext's. */
function contextOptionsOf(options) {
  if (!options) return {};
  const { contextName: name, contextOrigin: origin, contextCodeGeneration, microtaskMode } = options;
  if (name !== undefined) checkType(name, "options.contextName", "string");
  if (origin !== undefined) checkType(origin, "options.contextOrigin", "string");
  let codeGeneration;
  if (contextCodeGeneration !== undefined) {
    checkObject(contextCodeGeneration, "options.contextCodeGeneration");
    const { strings, wasm } = contextCodeGeneration;
    if (strings !== undefined) checkType(strings, "options.contextCodeGeneration.strings", "boolean");
    if (wasm !== undefined) checkType(wasm, "options.contextCodeGeneration.wasm", "boolean");
    codeGeneration = { strings, wasm };
  }
  if (microtaskMode !== undefined) checkType(microtaskMode, "options.microtaskMode", "string");
  return { name, origin, codeGeneration, microtaskMode };
}

// ---- Contexts and scripts ----

function isContext(object) {
  checkObject(object, "object", { array: true });
  return contexts.has(object);
}

function createContext(contextObject = {}, options = {}) {
  if (contextObject !== constants.DONT_CONTEXTIFY && isContext(contextObject)) return contextObject;
  checkObject(options, "options");
  const { name = "VM Context", origin, codeGeneration, microtaskMode, importModuleDynamically = false } = options;
  checkType(name, "options.name", "string");
  if (origin !== undefined) checkType(origin, "options.origin", "string");
  if (codeGeneration !== undefined) {
    checkObject(codeGeneration, "options.codeGeneration");
    const { strings = true, wasm = true } = codeGeneration;
    checkType(strings, "options.codeGeneration.strings", "boolean");
    checkType(wasm, "options.codeGeneration.wasm", "boolean");
  }
  if (typeof importModuleDynamically !== "function") checkType(importModuleDynamically, "options.importModuleDynamically", "boolean");
  checkOneOf(microtaskMode, "options.microtaskMode", ["afterEvaluate", undefined]);
  const context = Object.create(null);
  contexts.add(context);
  return context;
}

function checkContext(context) {
  if (!isContext(context)) {
    const { describeReceived } = require("node:internal/errors");
    throw Object.assign(new TypeError(`The "contextifiedObject" argument must be an vm.Context. Received ${describeReceived(context)}`), { code: "ERR_INVALID_ARG_TYPE" }); // Node's wording
  }
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
    this.#code = `${code}`;
    if (typeof options === "string") options = { filename: options };
    else checkObject(options, "options");
    const { filename = "evalmachine.<anonymous>", lineOffset = 0, columnOffset = 0 } = options;
    checkCompileOptions({ ...options, filename, lineOffset, columnOffset });
    this.#filename = filename;
    this.#lineOffset = lineOffset;
    this.#columnOffset = columnOffset;
  }
  createCachedData() {
    return require("node:buffer").Buffer.alloc(0);
  }
  runInThisContext(options) {
    checkRunOptions(options);
    if (!ops.evalAllowed()) throw notImplementedError("runInThisContext");
    return ops.runScript(this.#code, this.#filename, this.#lineOffset, this.#columnOffset);
  }
  runInContext(context, options) {
    checkContext(context);
    checkRunOptions(options);
    throw notImplementedError("runInThisContext"); // workerd's name for it
  }
  runInNewContext(contextObject, options) {
    return this.runInContext(createContext(contextObject, contextOptionsOf(options)), options);
  }
}

const createScript = (code, options) => new Script(code, options);

function runInContext(code, context, options) {
  checkContext(context);
  if (typeof options === "string") options = { filename: options };
  return createScript(code, options).runInContext(context, options);
}

function runInNewContext(code, contextObject, options) {
  options = typeof options === "string" ? { filename: options } : { ...options };
  const context = createContext(contextObject, contextOptionsOf(options));
  return createScript(code, options).runInNewContext(context, options);
}

function runInThisContext(code, options = {}) {
  if (typeof options === "string") options = { filename: options };
  return createScript(code, options).runInThisContext(options);
}

function compileFunction(code, params = [], options = {}) {
  checkType(code, "code", "string");
  checkObject(options, "options");
  if (params !== undefined) {
    if (!Array.isArray(params)) throw invalidArgType("params", "Array", params);
    params.forEach((param, i) => checkType(param, `params[${i}]`, "string"));
  }
  const { filename = "", parsingContext, contextExtensions = [] } = options;
  checkCompileOptions({ ...options, filename });
  if (parsingContext !== undefined && (typeof parsingContext !== "object" || parsingContext === null || !isContext(parsingContext))) {
    throw invalidArgType("options.parsingContext", "Context", parsingContext);
  }
  if (!Array.isArray(contextExtensions)) throw invalidArgType("options.contextExtensions", "Array", contextExtensions);
  contextExtensions.forEach((extension, i) => checkObject(extension, `options.contextExtensions[${i}]`, { nullable: true }));
  throw notImplementedError("compileFunction");
}

function measureMemory(options = {}) {
  checkObject(options, "options");
  const { mode = "summary", execution = "default" } = options;
  checkOneOf(mode, "options.mode", ["summary", "detailed"]);
  checkOneOf(execution, "options.execution", ["default", "eager"]);
  throw notImplementedError("measureMemory");
}

module.exports = {
  constants,
  isContext,
  createContext,
  Script,
  createScript,
  runInContext,
  runInNewContext,
  runInThisContext,
  compileFunction,
  measureMemory,
  Module: notImplementedClass("Module"),
  SourceTextModule: notImplementedClass("SourceTextModule"),
  SyntheticModule: notImplementedClass("SyntheticModule"),
};
