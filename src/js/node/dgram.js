// node:dgram (enable_nodejs_dgram_module; implied by nodejs_compat from 2026-01-29): Workers
// have no UDP. As in workerd, sockets can be made but do nothing: bind/close return the socket,
// send/connect are no-ops, address() is {} and no message ever arrives.
const EventEmitter = require("node:events");
const { invalidArgType } = require("node:internal/errors");

class Socket extends EventEmitter {
  constructor(type, callback) {
    super();
    if (typeof type === "string") type = { type };
    if (typeof type !== "object" || type === null || Array.isArray(type)) throw invalidArgType("type", "object", type);
    if (callback !== undefined && typeof callback !== "function") throw invalidArgType("callback", "function", callback);
  }
  bind() { return this; }
  close() { return this; }
  async [Symbol.asyncDispose]() {}
  address() { return {}; }
  remoteAddress() { return {}; }
}
const noop = ["connect", "disconnect", "send", "sendto", "setBroadcast", "setTTL", "setMulticastTTL", "setMulticastLoopback",
  "setMulticastInterface", "addMembership", "dropMembership", "addSourceSpecificMembership", "dropSourceSpecificMembership",
  "setRecvBufferSize", "setSendBufferSize", "ref", "unref"];
for (const name of noop) Socket.prototype[name] = function () { return name === "ref" || name === "unref" ? this : undefined; };
Socket.prototype.getRecvBufferSize = () => 0;
Socket.prototype.getSendBufferSize = () => 0;
Socket.prototype.getSendQueueSize = () => 0;
Socket.prototype.getSendQueueCount = () => 0;

module.exports = { Socket, createSocket: (type, callback) => new Socket(type, callback) };
