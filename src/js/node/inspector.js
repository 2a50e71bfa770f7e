// node:inspector (enable_nodejs_inspector_module; implied by nodejs_compat from 2026-01-29): no
// inspector session is available, as in workerd without its local-dev flag: open() returns a
// disposable that does nothing, url() is undefined, waitForDebugger() returns at once,
// inspector.console's methods do nothing, and Session (and its methods) and the Network
// reporters throw ERR_METHOD_NOT_IMPLEMENTED.
const EventEmitter = require("node:events");
const { notImplemented, notImplementedClass, notImplementedMethods } = require("node:internal/errors");

const noop = () => {};
const consoleMethods = ["debug", "error", "info", "log", "warn", "dir", "dirxml", "table", "trace", "group", "groupCollapsed", "groupEnd",
  "clear", "count", "countReset", "assert", "profile", "profileEnd", "time", "timeLog", "timeStamp"];

/** Session: `new` throws ERR_METHOD_NOT_IMPLEMENTED; its prototype has Node's methods, which throw too. */
function sessionClass() {
  const Session = notImplementedClass("Session", EventEmitter);
  for (const name of ["connect", "connectToMainThread", "disconnect", "post"]) Session.prototype[name] = notImplemented(`Session.${name}`);
  return Session;
}

module.exports = {
  close: noop,
  console: Object.fromEntries(consoleMethods.map((name) => [name, noop])),
  open: () => ({ [Symbol.dispose]: () => Promise.resolve() }),
  url: () => undefined,
  waitForDebugger: noop, // returns at once: no debugger will come
  Session: sessionClass(),
  Network: notImplementedMethods("Network", ["requestWillBeSent", "dataReceived", "dataSent", "responseReceived", "loadingFinished",
    "loadingFailed", "webSocketCreated", "webSocketHandshakeResponseReceived", "webSocketClosed"]),
};
