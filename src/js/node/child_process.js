// node:child_process (enable_nodejs_child_process_module; implied by nodejs_compat from
// 2026-03-17): a Worker cannot start processes, so, as in workerd, every function and the
// ChildProcess constructor throw ERR_METHOD_NOT_IMPLEMENTED.
const EventEmitter = require("node:events");
const { notImplemented, notImplementedClass } = require("node:internal/errors");

const names = ["_forkChild", "exec", "execFile", "execFileSync", "execSync", "fork", "spawn", "spawnSync"];
module.exports = { ChildProcess: notImplementedClass("ChildProcess", EventEmitter, "child_process.ChildProcess") };
for (const name of names) module.exports[name] = notImplemented(`child_process.${name}`);
