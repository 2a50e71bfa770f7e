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

// The stack's header as V8 writes it: `name: message` with the message the error was made with
// (V8 keeps it), not one assigned since, as workerd shows it. V8 writes it for the stack read
// below: this callback does not run again while it runs, so V8 formats the stack itself, and its
// frames (`frames`, each `\n    at <site>`) are cut off.
const v8StackGetter = Object.getOwnPropertyDescriptor(new Error(), "stack")?.get;
function originalHeader(error, frames) {
  let text;
  try {
    const own = Object.getOwnPropertyDescriptor(error, "stack");
    if (v8StackGetter === undefined || own?.get !== v8StackGetter) return header(error);
    text = Reflect.apply(v8StackGetter, error, []);
  } catch {
    return header(error);
  }
  if (typeof text !== "string") return header(error);
  let end = text.length;
  for (let i = frames.length - 1; i >= 0; i--) {
    if (!text.endsWith(frames[i], end)) return header(error);
    end -= frames[i].length;
  }
  return text.slice(0, end);
}

internals.formatStack = (error, sites) => {
  // A built-in the runtime called (`JSON.parse` under `body.json()`) goes with its caller.
  const names = sites.map((site) => site.getFileName());
  const internal = names.map(internals.isInternalScript);
  const shown = (_, i) => !internal[i] && !(names[i] == null && internal[i + 1] === true);
  const prepare = globalThis.Error?.prepareStackTrace;
  if (typeof prepare === "function") return Reflect.apply(prepare, globalThis.Error, [error, sites.filter(shown)]);
  const frames = sites.map((site) => `\n    at ${site}`);
  return originalHeader(error, frames) + frames.filter(shown).join("");
};
