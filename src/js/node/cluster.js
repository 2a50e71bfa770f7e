// node:cluster (enable_nodejs_cluster_module; implied by nodejs_compat from 2025-12-04): a
// Worker is always the primary of a cluster of one. As in workerd, the default export is a
// Cluster (an EventEmitter) whose fork, disconnect and setup functions throw
// ERR_METHOD_NOT_IMPLEMENTED, and whose Worker class makes workers that are never connected.
const EventEmitter = require("node:events");
const { notImplemented } = require("node:internal/errors");

/** workerd's cluster.Worker: a worker of no cluster (never connected, always dead; send() fails). */
class Worker extends EventEmitter {
  constructor() {
    super();
    this._connected = false;
    this.id = 0;
    this.exitedAfterDisconnect = false;
    this.process = globalThis.process;
  }
  isConnected() {
    return this._connected;
  }
  isDead() {
    return true;
  }
  send() {
    return false;
  }
  kill() {
    this._connected = false;
  }
  destroy() {
    this._connected = false;
  }
  disconnect() {
    this._connected = false;
    return this;
  }
}

class Cluster extends EventEmitter {
  constructor() {
    super();
    Object.assign(this, {
      isMaster: true, isPrimary: true, isWorker: false, SCHED_NONE: 1, SCHED_RR: 2, schedulingPolicy: 2,
      settings: {}, workers: {},
      Worker,
      fork: notImplemented("cluster.fork"),
      disconnect: notImplemented("cluster.disconnect"),
      setupPrimary: notImplemented("cluster.setupPrimary"),
      setupMaster: notImplemented("cluster.setupMaster"),
    });
  }
}
const cluster = new Cluster();
cluster.Cluster = Cluster;
module.exports = cluster;
