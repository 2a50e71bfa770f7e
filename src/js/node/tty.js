// node:tty (enable_nodejs_tty_module; implied by nodejs_compat from 2026-03-17): a Worker has
// no terminal. isatty() is always false; ReadStream and WriteStream record their fd; as
// workerd's (without a socket underneath), a WriteStream says it is a TTY of 0x0 with 8-bit
// colour depth but no colours, and its cursor calls do nothing, call back and answer false.
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
  Object.assign(this, { fd, columns: 0, rows: 0 });
}
Object.setPrototypeOf(WriteStream.prototype, Duplex.prototype);
Object.assign(WriteStream.prototype, {
  isTTY: true,
  getColorDepth: () => 8,
  hasColors: () => false,
  _refreshSize() {},
  getWindowSize() { return [this.columns, this.rows]; },
  clearLine(dir, callback) { callback?.(); return false; },
  clearScreenDown(callback) { callback?.(); return false; },
  cursorTo(x, y, callback) { (typeof y === "function" ? y : callback)?.(); return false; },
  moveCursor(dx, dy, callback) { callback?.(); return false; },
});

module.exports = { isatty: () => false, ReadStream, WriteStream };
