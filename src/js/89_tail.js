// Tail workers: the host (lib/project/tail.js) delivers a producer's trace items to this worker
// as an RPC call of kind "tail" carrying the list of TraceItems; it runs the module's
// `tail(events, env, ctx)` handler (default export object, or a WorkerEntrypoint class's
// tail(events)), as workerd runs a tail_consumers worker after each invocation of its producer.

const dispatchBeforeTail = internals.dispatchRpc;
internals.dispatchRpc = function dispatchRpc(id, callJson, argsBytes) {
  if (!callJson.startsWith('{"kind":"tail"')) return dispatchBeforeTail(id, callJson, argsBytes);
  const { ctx, work } = internals.eventContext(id);
  (async () => {
    const events = ops.deserialize(argsBytes);
    const exported = internals.namespace?.default;
    if (internals.isEntrypointClass(exported)) {
      const instance = new exported(ctx, internals.workerEnv);
      if (typeof instance.tail !== "function") throw new TypeError("The tail worker's default export has no tail() method.");
      await instance.tail(events);
    } else {
      if (exported === null || typeof exported?.tail !== "function") throw new TypeError("The tail worker's default export has no tail(events, env, ctx) handler.");
      await exported.tail(events, internals.workerEnv, ctx);
    }
    return undefined;
  })()
    .then(() => ops.respondRpc(id, ops.serialize(undefined), '{"stubs":[]}'))
    .catch((error) => {
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => work.responded(false));
};
