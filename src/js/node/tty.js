// node:tty (enable_nodejs_tty_module; implied by nodejs_compat from 2026-03-17): a Worker has
// no terminal. isatty() is always false; ReadStream and WriteStream record their fd, say they
// are not TTYs and report an 80x24 window, as workerd's do (without a socket underneath).
const { Duplex } = require("node:stream");

function ReadStream(fd) {
  if (!new.target) return new ReadStream(fd);
  Duplex.call(this);
  Object.assign(this, { fd, isRaw: false, isTTY: false });
}
Object.setPrototypeOf(ReadStream.prototype, Duplex.prototype);
ReadStream.prototype.setRawMode = function setRawMode(flag) {
  this.isRaw = Boolean(flag);
  return this;
};

function WriteStream(fd) {
  if (!new.target) return new WriteStream(fd);
  Duplex.call(this);
  Object.assign(this, { fd, isTTY: false, columns: 80, rows: 24 });
}
Object.setPrototypeOf(WriteStream.prototype, Duplex.prototype);
Object.assign(WriteStream.prototype, {
  getColorDepth: () => 1,
  hasColors: () => false,
  getWindowSize() { return [this.columns, this.rows]; },
  clearLine(dir, callback) { callback?.(); return true; },
  clearScreenDown(callback) { callback?.(); return true; },
  cursorTo(x, y, callback) { (typeof y === "function" ? y : callback)?.(); return true; },
  moveCursor(dx, dy, callback) { callback?.(); return true; },
});

module.exports = { isatty: () => false, ReadStream, WriteStream };
