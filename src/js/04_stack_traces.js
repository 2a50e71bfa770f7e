// Error stacks as workerd's read: the runtime's own frames (this bootstrap, the streams
// implementation: `workerbox:internal/…`) are left out, as workerd's C++ has none to show. The
// native side hands every stack V8 formats to `internals.formatStack` (V8's
// PrepareStackTraceCallback, set for worker isolates in src/runtime/isolate/boot.rs), which
// then also honours a script's own `Error.prepareStackTrace(error, callSites)`, as V8 would.

const errorToString = Error.prototype.toString;

/** V8's header line: `Name: message`, as Error.prototype.toString gives it for any object. */
function header(error) {
  try {
    return Reflect.apply(errorToString, error, []);
  } catch {
    return "<error>";
  }
}

internals.formatStack = (error, sites) => {
  // A built-in the runtime called (`JSON.parse` under `body.json()`) goes with its caller.
  const names = sites.map((site) => site.getFileName());
  const internal = names.map(internals.isInternalScript);
  const shown = sites.filter((_, i) => !internal[i] && !(names[i] == null && internal[i + 1] === true));
  const prepare = globalThis.Error?.prepareStackTrace;
  if (typeof prepare === "function") return Reflect.apply(prepare, globalThis.Error, [error, shown]);
  let stack = header(error);
  for (const site of shown) stack += `\n    at ${site}`;
  return stack;
};
