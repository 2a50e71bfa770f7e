// node:child_process (enable_nodejs_child_process_module; implied by nodejs_compat from
// 2026-03-17): a Worker cannot start processes, so, as in workerd, every function and the
// ChildProcess constructor throw ERR_METHOD_NOT_IMPLEMENTED — after exec(), fork() and
// spawnSync() check their arguments' types as Node does (ERR_INVALID_ARG_TYPE first).
// ChildProcess.prototype has Node's methods, which throw the same way.
const EventEmitter = require("node:events");
const { notImplemented, notImplementedClass, invalidArgType } = require("node:internal/errors");

const isObject = (value) => value !== null && typeof value === "object";
const isAbsent = (value) => value === null || value === undefined;

/** Checks per function, before the not-implemented error (workerd validates these arguments). */
const checks = {
  exec(command, options, callback) {
    if (typeof command !== "string") throw invalidArgType("command", "string", command);
    if (typeof options === "function") return;
    if (!isAbsent(options) && !isObject(options)) throw invalidArgType("options", "object", options);
    if (!isAbsent(callback) && typeof callback !== "function") throw invalidArgType("callback", "function", callback);
  },
  fork(modulePath, args, options) {
    if (!isAbsent(args) && !Array.isArray(args)) {
      if (!isObject(args)) throw invalidArgType("args", "object", args);
      options = args;
    }
    if (!isAbsent(options) && !isObject(options)) throw invalidArgType("options", "object", options);
  },
  spawnSync(file) {
    if (typeof file !== "string") throw invalidArgType("file", "string", file);
  },
};

const ChildProcess = notImplementedClass("ChildProcess", EventEmitter, "child_process.ChildProcess");
for (const name of ["kill", "send", "disconnect", "unref", "ref"]) ChildProcess.prototype[name] = notImplemented(`ChildProcess.${name}`);
ChildProcess.prototype[Symbol.dispose] = notImplemented("ChildProcess.Symbol.dispose");

const names = ["_forkChild", "exec", "execFile", "execFileSync", "execSync", "fork", "spawn", "spawnSync"];
module.exports = { ChildProcess };
for (const name of names) {
  const fail = notImplemented(`child_process.${name}`);
  const check = checks[name];
  module.exports[name] = check
    ? {
        [name](...args) {
          check(...args);
          return fail();
        },
      }[name]
    : fail;
}
