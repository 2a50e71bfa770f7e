// node:repl (enable_nodejs_repl_module; implied by nodejs_compat from 2026-03-17): no REPL can
// run in a Worker; as in workerd, start(), writer() and REPLServer throw
// ERR_METHOD_NOT_IMPLEMENTED, and builtinModules lists the node: modules the worker may import.
const { notImplemented, notImplementedClass } = require("node:internal/errors");
const { Interface } = require("node:readline");

class Recoverable extends SyntaxError {
  constructor(error) {
    super();
    this.err = error;
  }
}

module.exports = {
  start: notImplemented("start"),
  writer: notImplemented("writer"),
  Recoverable,
  REPLServer: notImplementedClass("REPLServer", Interface),
  REPL_MODE_SLOPPY: Symbol("repl-sloppy"),
  REPL_MODE_STRICT: Symbol("repl-strict"),
};
Object.defineProperty(module.exports, "builtinModules", { enumerable: true, get: () => require("node:module").builtinModules });
Object.defineProperty(module.exports, "_builtinLibs", { enumerable: true, get: () => require("node:module").builtinModules });
