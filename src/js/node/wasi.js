// node:wasi (enable_nodejs_wasi_module; implied by nodejs_compat from 2025-12-04): as in
// workerd, the WASI class exists but constructing it throws ERR_METHOD_NOT_IMPLEMENTED (after its
// options are checked as workerd checks them); of its methods only getImportObject answers ({}).
const { notImplementedError, invalidArgType } = require("node:internal/errors");

const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);

function checkFd(value, name) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
  if (!Number.isInteger(value) || value < 0 || value > 2147483647) {
    const range = Number.isInteger(value) ? ">= 0 && <= 2147483647" : "an integer";
    throw Object.assign(new RangeError(`The value of "${name}" is out of range. It must be ${range}. Received ${value}`), { code: "ERR_OUT_OF_RANGE" });
  }
}

class WASI {
  constructor(options = { version: "unstable" }) {
    if (!isObject(options)) throw invalidArgType("options", "object", options);
    const { version, args, env, preopens, stdin = 0, stdout = 1, stderr = 2, returnOnExit } = options;
    if (version !== "unstable" && version !== "preview1") {
      const shown = typeof version === "string" ? `'${version}'` : String(version);
      throw Object.assign(new TypeError(`The argument 'options.version' must be one of: 'unstable', 'preview1'. Received ${shown}`), { code: "ERR_INVALID_ARG_VALUE" });
    }
    if (args !== undefined && !Array.isArray(args)) throw invalidArgType("options.args", "Array", args);
    if (env !== undefined && !isObject(env)) throw invalidArgType("options.env", "object", env);
    if (preopens !== undefined && !isObject(preopens)) throw invalidArgType("options.preopens", "object", preopens);
    checkFd(stdin, "options.stdin");
    checkFd(stdout, "options.stdout");
    checkFd(stderr, "options.stderr");
    if (returnOnExit !== undefined && typeof returnOnExit !== "boolean") throw invalidArgType("options.returnOnExit", "boolean", returnOnExit);
    throw notImplementedError("WASI");
  }
  finalizeBindings() {
    throw notImplementedError("WASI.finalizeBindings");
  }
  start() {
    throw notImplementedError("WASI.start");
  }
  initialize() {
    throw notImplementedError("WASI.initialize");
  }
  getImportObject() {
    return {};
  }
}

module.exports = { WASI };
