// node:console: the worker's console (its output goes to the host's onLog), whose methods are
// also the module's named exports. As in workerd, `Console` is there but cannot make consoles of
// other streams (it throws ERR_METHOD_NOT_IMPLEMENTED), and the global console carries it too.
const { notImplementedError } = require("node:internal/errors");

function Console() {
  throw notImplementedError("Console");
}
if (!Object.hasOwn(globalThis.console, "Console")) globalThis.console.Console = Console;
module.exports = globalThis.console;
