// node:console: the worker's console (its output goes to the host's onLog), whose methods are
// also the module's named exports. As in workerd, loading the module changes the global console
// too: `Console`, `context` and `createTask` are there but throw ERR_METHOD_NOT_IMPLEMENTED (no
// consoles of other streams, no V8 console contexts or async tasks), and Node's underscore
// fields (`_times`, `_stdout`, …) appear.
const { notImplementedError } = require("node:internal/errors");

const console = globalThis.console;
function Console() {
  throw notImplementedError("Console");
}
const stubs = {
  context() {
    throw notImplementedError("Console.context");
  },
  createTask() {
    throw notImplementedError("Console.createTask");
  },
};
if (!Object.hasOwn(console, "Console")) {
  const { stdout, stderr } = require("node:process");
  Object.assign(console, {
    context: stubs.context,
    _times: new Map(),
    _ignoreErrors: true,
    _stderrErrorHandler: () => {},
    _stdoutErrorHandler: () => {},
    _stderr: stderr,
    _stdout: stdout,
    Console,
    createTask: stubs.createTask,
  });
}
module.exports = console;
