"use strict";
// cloudflare:test's Workflow introspection (introspectWorkflow, introspectWorkflowInstance), the
// pool's side: the isolate posts `/workflow/<operation>` to the runner's host service
// (runners.js) with a devalue body (lib/vitest/serialize.mjs), and this file runs it on the
// binding's engine through lib/workflows/introspect.js. Values cross as devalue in the request
// and V8-serialized bytes in the engine. Sessions of introspectWorkflow() live here, per runner.

const rpc = require("../rpc.js");
const { InstanceOps, WorkflowSession, engineOf } = require("../workflows/introspect.js");
const { operationFromNode } = require("../workflows/mocks.js");

/** The operations the isolate recorded, checked, with values made V8 bytes. */
function operations(list) {
  if (!Array.isArray(list)) throw new TypeError("the modifications must be a list");
  return list.map(operationFromNode);
}

const value = (bytes) => (bytes === null ? undefined : rpc.deserialize(bytes));

/** A handler for one runner's `/workflow/*` calls over its `bindings` (Node objects by name). */
function workflowHost(bindings) {
  const sessions = new Map();
  let next = 0;
  const engine = (name) => {
    const binding = bindings[name];
    if (binding === undefined) throw new TypeError(`no Workflow binding named ${JSON.stringify(name)} in this project`);
    return engineOf(binding, "introspectWorkflow()");
  };
  const session = (id) => {
    const found = sessions.get(id);
    if (found === undefined) throw new Error("[WorkflowIntrospector] this introspector was disposed; call introspectWorkflow() again");
    return found;
  };
  const calls = {
    start: ({ binding }) => {
      const id = String(++next);
      sessions.set(id, new WorkflowSession(engine(binding)));
      return id;
    },
    modifyAll: ({ session: id, operations: ops }) => void session(id).apply(operations(ops)),
    instances: ({ session: id }) => session(id).ids,
    stop: async ({ session: id }) => {
      const found = sessions.get(id);
      sessions.delete(id);
      await found?.dispose();
    },
    modify: ({ binding, id, operations: ops }) => void new InstanceOps(engine(binding), id).apply(operations(ops)),
    stepResult: async ({ binding, id, step }) => value(await new InstanceOps(engine(binding), id).stepResult(step)),
    waitForStatus: ({ binding, id, status }) => new InstanceOps(engine(binding), id).waitForStatus(status),
    output: async ({ binding, id }) => value(await new InstanceOps(engine(binding), id).output()),
    error: ({ binding, id }) => new InstanceOps(engine(binding), id).error(),
    abort: ({ binding, id }) => new InstanceOps(engine(binding), id).dispose(),
  };
  return async (request, operation) => {
    const codec = await import("./serialize.mjs");
    try {
      const call = calls[operation];
      if (call === undefined) throw new TypeError(`unknown Workflow introspection call ${operation}`);
      const result = await call(codec.deserialize(await request.text()));
      return new Response(codec.serialize({ ok: true, value: result }));
    } catch (error) {
      return new Response(codec.serialize({ ok: false, error: { name: error?.name ?? "Error", message: error?.message ?? String(error) } }));
    }
  };
}

module.exports = { workflowHost };
