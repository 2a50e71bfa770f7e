// node:cluster (enable_nodejs_cluster_module; implied by nodejs_compat from 2025-12-04): a
// Worker is always the primary of a cluster of one. As in workerd, the default export is a
// Cluster (an EventEmitter) whose fork, disconnect and setup functions throw
// ERR_METHOD_NOT_IMPLEMENTED.
const EventEmitter = require("node:events");
const { notImplemented, notImplementedClass } = require("node:internal/errors");

class Cluster extends EventEmitter {
  constructor() {
    super();
    Object.assign(this, {
      isMaster: true, isPrimary: true, isWorker: false, SCHED_NONE: 1, SCHED_RR: 2, schedulingPolicy: 2,
      settings: {}, workers: {},
      Worker: notImplementedClass("Worker", EventEmitter, "cluster.Worker"),
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
