// node:repl (enable_nodejs_repl_module; implied by nodejs_compat from 2026-03-17): no REPL can
// run in a Worker; as in workerd, start(), writer() and REPLServer throw
// ERR_METHOD_NOT_IMPLEMENTED (REPLServer's methods too), and builtinModules lists the public
// node: modules the worker may import.
const { notImplemented, notImplementedClass } = require("node:internal/errors");
const { Interface } = require("node:readline");

class Recoverable extends SyntaxError {
  constructor(error) {
    super();
    this.err = error;
  }
}

const REPLServer = notImplementedClass("REPLServer", Interface);
for (const name of ["setupHistory", "defineCommand", "displayPrompt", "clearBufferedCommand"]) REPLServer.prototype[name] = notImplemented(`REPLServer.${name}`);
// Node lists the public modules only (no "_http_agent" and the like).
let modules;
const publicModules = () => (modules ??= require("node:module").builtinModules.filter((name) => !name.startsWith("_")));

module.exports = {
  start: notImplemented("start"),
  writer: notImplemented("writer"),
  Recoverable,
  REPLServer,
  REPL_MODE_SLOPPY: Symbol("repl-sloppy"),
  REPL_MODE_STRICT: Symbol("repl-strict"),
};
Object.defineProperty(module.exports, "builtinModules", { enumerable: true, get: publicModules });
Object.defineProperty(module.exports, "_builtinLibs", { enumerable: true, get: publicModules });
