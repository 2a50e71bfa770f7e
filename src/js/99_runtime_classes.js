// The runtime's own global classes as workerd presents them, once every bootstrap file has
// defined its globals: each prototype carries workerd's `Symbol.for("cloudflare:internal-class")`
// marker (how code tells an API class from its own), and structuredClone (and RPC values) refuse
// their instances with workerd's DataCloneError, except for the classes workerd serializes:
// Headers and DOMException clone through hooks (ops.setCloneHooks, src/runtime/ops/clone.rs);
// Request and Response keep V8's plain-object copy.

const INTERNAL_CLASS = Symbol.for("cloudflare:internal-class");

/** Each class with clone hooks: its name → [serialize, deserialize]. */
const HOOKS = new Map([
  ["Headers", [(headers) => internals.headersList(headers).map(([name, value]) => [name, value]), (list) => internals.headersFromList(list)]],
  [
    "DOMException",
    [
      (error) => [String(error.message), String(error.name), typeof error.stack === "string" ? error.stack : ""],
      ([message, name, stack]) => {
        const error = new DOMException(message, name);
        if (stack !== "") Object.defineProperty(error, "stack", { value: stack, writable: true, configurable: true });
        return error;
      },
    ],
  ],
]);
for (const [name, [serialize]] of HOOKS) ops.setCloneHooks(globalThis[name].prototype, name, serialize);

/** The key of a placeholder V8's deserializer left for an object with hooks (src/runtime/ops/clone.rs). */
const HOOKED = "\u0000workerbox.cloned";

/**
 * A value just deserialized, with each placeholder replaced by the object its class's
 * `deserialize` makes (one object per placeholder, wherever it appears).
 */
function revive(root) {
  const made = new Map();
  const seen = new Set();
  const fix = (v) => {
    if (v === null || typeof v !== "object") return v;
    if (Object.getPrototypeOf(v) === Object.prototype && Object.hasOwn(v, HOOKED)) {
      if (!made.has(v)) {
        const [name, data] = v[HOOKED];
        made.set(v, HOOKS.get(name)[1](fix(data)));
      }
      return made.get(v);
    }
    if (seen.has(v)) return v;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = fix(v[i]);
    } else if (v instanceof Map) {
      const entries = [...v];
      v.clear();
      for (const [key, item] of entries) v.set(fix(key), fix(item));
    } else if (v instanceof Set) {
      const items = [...v];
      v.clear();
      for (const item of items) v.add(fix(item));
    } else if (!ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer)) {
      for (const key of Object.keys(v)) v[key] = fix(v[key]);
    }
    return v;
  };
  return fix(root);
}
ops.setCloneReviver(revive);

/**
 * Classes whose instances clone (by hooks above, or as V8 copies them). Streams too, for now:
 * workerd sends them over RPC, which workerbox does not yet, and refusing them would fail calls
 * that pass one along unused.
 */
const CLONEABLE = new Set(["Headers", "DOMException", "Request", "Response", "ReadableStream", "WritableStream"]);

for (const name of Object.getOwnPropertyNames(globalThis)) {
  const value = Object.getOwnPropertyDescriptor(globalThis, name)?.value;
  if (typeof value !== "function" || !ops.runtimeFunction(value)) continue;
  const prototype = value.prototype;
  // A class: its prototype has members beyond `constructor` (a plain function's has none).
  if (prototype === null || typeof prototype !== "object" || Reflect.ownKeys(prototype).length < 2) continue;
  if (!Object.hasOwn(prototype, INTERNAL_CLASS) && Object.isExtensible(prototype)) {
    Object.defineProperty(prototype, INTERNAL_CLASS, { value: INTERNAL_CLASS, writable: false, enumerable: false, configurable: false });
  }
  if (!CLONEABLE.has(name)) ops.markUncloneable(prototype);
}
