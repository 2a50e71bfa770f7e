// node:process (and the `process` global with nodejs_compat_v2): what workerd's legacy process
// object has — platform, nextTick, env, features, getBuiltinModule, exit — and, with
// enable_nodejs_process_v2 (implied by nodejs_compat from 2025-09-15), the rest of workerd's
// fuller process (version, versions, argv, pid, cwd, hrtime, …; see internal/process_v2.js).
//
// `process.env` is empty unless nodejs_compat_populate_process_env is on; then it holds the
// worker's text bindings, and JSON ones as JSON text, as workerd fills it.

const EventEmitter = require("node:events");

function coerceEnvValue(prop, value) {
  if (typeof prop === "symbol" || typeof value === "symbol") throw new TypeError("Cannot convert a symbol value to a string");
  return `${value}`;
}

const env = new Proxy(
  {},
  {
    set(target, prop, value) {
      return Reflect.set(target, prop, coerceEnvValue(prop, value));
    },
    defineProperty(target, prop, descriptor) {
      // ERR_INVALID_ARG_VALUE TypeErrors, as workerd's.
      const refuse = (message) => Object.assign(new TypeError(message), { code: "ERR_INVALID_ARG_VALUE" });
      if ("get" in descriptor || "set" in descriptor) throw refuse("process.env values must not have a getter or setter");
      if (!descriptor.configurable || !descriptor.enumerable || !descriptor.writable || !("value" in descriptor)) {
        throw refuse("process.env values must be configurable, enumerable, writable and given explicitly");
      }
      return Reflect.defineProperty(target, prop, { ...descriptor, value: coerceEnvValue(prop, descriptor.value) });
    },
  },
);

function jsonSafe(value, seen = new Set()) {
  if (value === null || ["boolean", "number", "string"].includes(typeof value)) return true;
  if (typeof value !== "object" || seen.has(value)) return false;
  seen.add(value);
  if (Array.isArray(value)) return value.every((v) => jsonSafe(v, seen));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((v) => jsonSafe(v, seen));
}

function populate(bindings) {
  if (!internals.compat?.enabled.includes("nodejs_compat_populate_process_env")) return;
  for (const [name, value] of Object.entries(bindings)) {
    if (typeof value === "string") env[name] = value;
    else if (jsonSafe(value)) env[name] = JSON.stringify(value);
  }
}
if (internals.workerEnv !== undefined) populate(internals.workerEnv);
else internals.onWorkerEnv = populate;

const features = Object.freeze({
  cached_builtins: true,
  debug: false,
  inspector: false,
  ipv6: true,
  openssl_is_boringssl: true,
  require_module: false,
  tls: true,
  tls_alpn: true,
  tls_ocsp: true,
  tls_sni: true,
  typescript: false,
  uv: true,
});

function nextTick(callback, ...args) {
  if (typeof callback !== "function") {
    const error = new TypeError(`The "callback" argument must be of type function. Received ${callback === null ? "null" : typeof callback}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  queueMicrotask(() => callback(...args));
}

function getBuiltinModule(id) {
  // workerd answers for its cloudflare: and workerd: modules too, with their namespaces.
  if (/^(cloudflare|workerd):/.test(String(id))) {
    try {
      return ops.nodeModuleNamespace(String(id));
    } catch {
      return undefined;
    }
  }
  const name = String(id).startsWith("node:") ? String(id).slice(5) : String(id);
  if (!ops.nodeModuleAllowed(name)) return undefined;
  // Under new_module_registry workerd answers with the module's namespace (as import has it).
  if (internals.compat?.enabled.includes("new_module_registry")) return ops.nodeModuleNamespace(name);
  return internals.loadNodeModule(name);
}

/**
 * workerd's process.exit(): outside a request (the script's top level) it is ignored, with a
 * warning. In one, the request fails with workerd's message and its JavaScript stops at once (no
 * `finally` runs: ops.exitRequest terminates it, and the isolate goes on serving the others); a
 * Durable Object's instance is reset, as ctx.abort() resets it.
 */
function exit(code = 0) {
  const event = internals.flowEvent();
  if (event === undefined) {
    internals.logWarning?.("process.exit(...) called without a current request context. Ignoring.");
    return;
  }
  const message = `The Node.js process.exit(${code}) API was called. Canceling the request.`;
  const durable = internals.durableStateOf?.(event);
  if (durable !== undefined) {
    const error = new Error(message);
    error.code = "ERR_PROCESS_EXIT";
    internals.abortDurable(durable, error);
  }
  ops.exitRequest(event, message);
  // V8 takes the termination at its next interrupt check: this loop's first.
  for (;;);
}

const process = Object.setPrototypeOf({ nextTick, env, exit, getBuiltinModule, platform: "linux", features }, EventEmitter.prototype);
Object.defineProperty(process, Symbol.toStringTag, { value: "process", configurable: true });
if (internals.compat?.enabled.includes("enable_nodejs_process_v2")) {
  EventEmitter.call(process);
  require("node:internal/process_v2").install(process);
}
module.exports = process;
