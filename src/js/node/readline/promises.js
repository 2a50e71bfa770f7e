// node:readline/promises: node:readline's inert Interface, with question() resolving to "" (no
// input ever comes; workerd's answer), and a Readline whose cursor commands do nothing.
const { Interface: Base } = require("node:readline");

class Interface extends Base {
  question() { return Promise.resolve(""); }
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
