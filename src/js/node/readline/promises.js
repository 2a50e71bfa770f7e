// node:readline/promises: node:readline's inert Interface, with question() returning a promise
// that never settles (no input ever comes), and a Readline whose cursor commands do nothing.
const { Interface: Base } = require("node:readline");

class Interface extends Base {
  question() { return new Promise(() => {}); }
}
class Readline {
  clearLine() { return this; }
  clearScreenDown() { return this; }
  cursorTo() { return this; }
  moveCursor() { return this; }
  commit() { return Promise.resolve(); }
  rollback() { return this; }
}
module.exports = { Interface, Readline, createInterface: () => new Interface() };
