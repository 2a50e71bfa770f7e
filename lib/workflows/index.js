"use strict";
// Workflows, as the API (lib/api.js) takes them: the workflow() binding (binding.js), the
// hooks through which the API lends it its workers, and its engine (engine.js), clock
// (clock.js) and store (store.js) behind it; introspection for tests (introspect.js, mocks.js).

const { workflow, Workflow, setWorkerAccess, workerDisposed } = require("./binding.js");
const { introspectWorkflow, introspectWorkflowInstance } = require("./introspect.js");

module.exports = { workflow, Workflow, setWorkerAccess, workerDisposed, introspectWorkflow, introspectWorkflowInstance };
