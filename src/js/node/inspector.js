// node:inspector (enable_nodejs_inspector_module; implied by nodejs_compat from 2026-01-29): no
// inspector session is available, as in workerd without its local-dev flag: open() returns a
// disposable that does nothing, url() is undefined, inspector.console's methods do nothing, and
// Session and the Network reporters throw ERR_METHOD_NOT_IMPLEMENTED.
const EventEmitter = require("node:events");
const { notImplementedClass, notImplementedMethods } = require("node:internal/errors");

const noop = () => {};
const consoleMethods = ["debug", "error", "info", "log", "warn", "dir", "dirxml", "table", "trace", "group", "groupCollapsed", "groupEnd",
  "clear", "count", "countReset", "assert", "profile", "profileEnd", "time", "timeLog", "timeStamp"];

module.exports = {
  close: noop,
  console: Object.fromEntries(consoleMethods.map((name) => [name, noop])),
  open: () => ({ [Symbol.dispose]: () => Promise.resolve() }),
  url: () => undefined,
  waitForDebugger() {
    const error = new Error("Inspector is not active");
    error.code = "ERR_INSPECTOR_NOT_ACTIVE";
    throw error;
  },
  Session: notImplementedClass("Session", EventEmitter),
  Network: notImplementedMethods("Network", ["requestWillBeSent", "dataReceived", "dataSent", "responseReceived", "loadingFinished",
    "loadingFailed", "webSocketCreated", "webSocketHandshakeResponseReceived", "webSocketClosed"]),
};
