// node:console: the worker's console (its output goes to the host's onLog).
module.exports = globalThis.console;
