// node:readline (enable_nodejs_readline_module; implied by nodejs_compat from 2026-03-17): a
// Worker has no terminal or stdin, so, as in workerd, interfaces are inert — prompts do nothing,
// question() answers "" at once, iteration ends at once — and the cursor helpers return false.
const EventEmitter = require("node:events");

class Interface extends EventEmitter {
  terminal = false;
  line = "";
  cursor = 0;
  getPrompt() { return ""; }
  setPrompt() {}
  prompt() {}
  /** Answers at once with "" (no input ever comes), as workerd's does. */
  question(query, options, callback) {
    if (typeof options === "function") callback = options;
    if (typeof callback === "function") callback("");
  }
  pause() { return this; }
  resume() { return this; }
  close() {}
  write() {}
  getCursorPos() { return { rows: 0, cols: 0 }; }
  async [Symbol.asyncDispose]() {}
  async *[Symbol.asyncIterator]() {}
}

module.exports = {
  Interface,
  createInterface: () => new Interface(),
  clearLine: () => false,
  clearScreenDown: () => false,
  cursorTo: () => false,
  moveCursor: () => false,
  emitKeypressEvents() {},
};
Object.defineProperty(module.exports, "promises", { enumerable: true, get: () => require("node:readline/promises") });
