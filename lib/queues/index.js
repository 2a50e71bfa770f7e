"use strict";
// Queues, as the API (lib/api.js) takes them: the queue() binding and its broker (queue.js), the
// hooks through which the API lends it its workers, and the batch of
// dispatch(worker, { type: "queue" }) (messages.js). The message store is backlog.js's.

const { queue, Queue, setWorkerAccess, workerDisposed } = require("./queue.js");
const { batchFromInput, encodeBody } = require("./messages.js");

module.exports = { queue, Queue, setWorkerAccess, workerDisposed, batchFromInput, encodeBody };
