// The `cloudflare:workers` module and the worker's own env and exports: `ctx.exports` (a binding
// per entrypoint and Durable Object class the worker exports), the importable `env` and
// `exports` with withEnv()/withExports() by workerd's rules, and `internals.loadCloudflareModule`,
// which makes each `cloudflare:` module once per context (other files add modules to
// `internals.cloudflareModules`). The classes it exports are 84_rpc.js's.

const { WorkerEntrypoint, DurableObject, WorkflowEntrypoint, RpcTarget, RpcStub, RpcPromise, RpcProperty, ServiceStub } = internals.rpc;

let ownExports;

/**
 * `ctx.exports`: a binding for each of the worker's own entrypoints (a WorkerEntrypoint class,
 * or the default handler object) and a namespace for each Durable Object class it exports,
 * as workerd gives them. Made on first use, once the worker's module has run.
 */
internals.ctxExports = function ctxExports() {
  if (ownExports !== undefined) return ownExports;
  const out = {};
  for (const [name, value] of Object.entries(internals.namespace ?? {})) {
    // Every exported object is a handler entrypoint (workerd's named handlers), as is the default one.
    const handlerObject = value !== null && typeof value === "object" && !Array.isArray(value) && (name !== "default" || typeof value.fetch === "function" || Object.keys(value).length > 0);
    if (internals.isEntrypointClass(value) || handlerObject) out[name] = internals.makeBinding(`#self:${name}`, "service");
    else if (typeof value === "function" && value.prototype instanceof DurableObject) out[name] = internals.makeBinding(`#self-do:${name}`, `durable_object:${name}`);
  }
  // A main module that stands in for another (workerbox/vitest's runner, whose worker's module is
  // only loaded later) gives that module's exports through its `__workerboxExports` export.
  const supply = internals.namespace?.__workerboxExports;
  if (typeof supply === "function") {
    const make = { entrypoint: (name) => internals.makeBinding(`#self:${name}`, "service"), durable: (name) => internals.makeBinding(`#self-do:${name}`, `durable_object:${name}`) };
    return (ownExports = supply(Object.freeze(out), make));
  }
  return (ownExports = Object.freeze(out));
};

/** An object that reads as empty and ignores writes. */
function emptyView() {
  const ignore = () => true;
  return new Proxy({}, { set: ignore, defineProperty: ignore, deleteProperty: ignore });
}

/** The env object `import { env } from "cloudflare:workers"` sees; filled in by internals.start. */
internals.envObject = {};

// withEnv() / withExports(): the importable env and exports are views of the current async
// frame's override (the frame node:async_hooks' AsyncLocalStorage keeps, keyed here by these
// objects), else of the worker's own, as workerd's Proxies over its async context.
const kEnvOverride = Object.freeze({ override: "env" });
const kExportsOverride = Object.freeze({ override: "exports" });

/**
 * The env (or exports) the importable view reads now, by workerd's rules: an object given to
 * withEnv()/withExports() in this async frame; null or undefined given there, an empty one (with
 * env_module_nullable_support); else the worker's own, which disallow_importable_env empties
 * (withEnv/withExports still work then). Any other value given falls through to that.
 */
const EMPTY = emptyView();
function currentOf(key, base) {
  const frame = ops.continuationGet();
  if (frame instanceof Map && frame.has(key)) {
    const value = frame.get(key);
    if ((value !== null && typeof value === "object") || typeof value === "function") return value;
    if (value == null && internals.feature("env_module_nullable_support")) return EMPTY;
  }
  return internals.feature("disallow_importable_env") ? EMPTY : base();
}

function withOverrides(name, overrides, fn) {
  if (typeof fn !== "function") throw new TypeError(`Failed to execute '${name}' on 'EnvModule': parameter ${overrides.length + 1} is not of type 'function'.`);
  const previous = ops.continuationGet();
  const frame = new Map(previous instanceof Map ? previous : undefined);
  for (const [key, value] of overrides) frame.set(key, value);
  ops.continuationSet(frame);
  try {
    return fn();
  } finally {
    ops.continuationSet(previous);
  }
}

/** A Proxy reading and writing `current()`, an object chosen when used. */
function viewOf(current) {
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(current(), key),
      set: (_, key, value) => Reflect.set(current(), key, value),
      has: (_, key) => Reflect.has(current(), key),
      ownKeys: () => Reflect.ownKeys(current()),
      deleteProperty: (_, key) => Reflect.deleteProperty(current(), key),
      defineProperty: (_, key, descriptor) => Reflect.defineProperty(current(), key, descriptor),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(current(), key);
        return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
      },
    },
  );
}

const importableEnv = viewOf(() => currentOf(kEnvOverride, () => internals.envObject));
const importableExports = viewOf(() => currentOf(kExportsOverride, internals.ctxExports));
const withEnv = (newEnv, fn) => withOverrides("withEnv", [[kEnvOverride, newEnv]], fn);
const withExports = (newExports, fn) => withOverrides("withExports", [[kExportsOverride, newExports]], fn);
const withEnvAndExports = (newEnv, newExports, fn) => withOverrides("withEnvAndExports", [[kEnvOverride, newEnv], [kExportsOverride, newExports]], fn);

const GLOBAL_SCOPE =
  "Disallowed operation called within global scope. Asynchronous I/O (ex: fetch() or connect()), setting a timeout, and generating random values are not allowed within global scope. To fix this error, perform this operation within a handler. https://developers.cloudflare.com/workers/runtime-apis/handlers/";

/** Whether the cloudflare:/workerd: module being loaded was asked for by a dynamic import(). */
let dynamicImport = false;

/**
 * workerd's error for a built-in module the worker may not import: `Error: No such module "…".`.
 * A static import (the worker does not start) gets `hint` after it, as a second sentence; a
 * dynamic import()'s rejection, which a script may catch and compare, gets workerd's message alone.
 */
function noSuchModule(specifier, hint) {
  return new Error(`No such module "${specifier}".${dynamicImport || hint === undefined ? "" : ` ${hint}`}`);
}
internals.noSuchModule = noSuchModule;
/** The names of cloudflare: modules other files serve by wrapping loadCloudflareModule (86_sockets.js, 89_workflows.js). */
internals.moreCloudflareModules = [];

const cloudflareModules = {
  // workerd's adapter from node:http servers to fetch handlers (with the http server modules).
  node: () => {
    if (!internals.compat?.enabled.includes("enable_nodejs_http_server_modules")) {
      throw noSuchModule("cloudflare:node", "It needs nodejs_compat with the enable_nodejs_http_server_modules compatibility flag (implied by nodejs_compat from 2025-09-01).");
    }
    const { httpServerHandler, handleAsNodeRequest } = internals.loadNodeModule("internal/http_server");
    return { httpServerHandler, handleAsNodeRequest };
  },
  workers: () => ({
    WorkerEntrypoint,
    DurableObject,
    WorkflowEntrypoint,
    RpcTarget,
    RpcStub,
    RpcPromise,
    RpcProperty,
    ServiceStub,
    env: importableEnv,
    exports: importableExports,
    // workerd's proxy of the running request's ctx.cache (its CacheContext, for cache purges):
    // workerbox's requests have none, so it reads as empty, as workerd's does outside a request.
    cache: emptyView(),
    withEnv,
    withExports,
    withEnvAndExports,
    waitUntil: (promise) => {
      // Outside any event (while the module runs) there is no request to wait for, as in workerd.
      if (internals.flowEvent() === undefined) throw new Error(GLOBAL_SCOPE);
      return internals.trackBackground(promise);
    },
  }),
};
// Other files add theirs (cloudflare:email, 89_local_bindings.js).
internals.cloudflareModules = cloudflareModules;
const loadedCloudflare = new Map();

/**
 * `import … from "cloudflare:<name>"`: the module's exports object (one per context). `dynamic`:
 * asked for by an import() (modules/builtins.rs), whose failure gets workerd's message alone.
 */
internals.loadCloudflareModule = function loadCloudflareModule(name, dynamic = false) {
  if (!loadedCloudflare.has(name)) {
    const before = dynamicImport;
    dynamicImport = dynamic === true;
    try {
      const make = cloudflareModules[name];
      if (make === undefined) {
        // workerd: modules (89_unsafe.js) come here by their whole specifier.
        const specifier = name.startsWith("workerd:") ? name : `cloudflare:${name}`;
        const known = [...Object.keys(cloudflareModules), ...internals.moreCloudflareModules].map((n) => (n.startsWith("workerd:") ? n : `cloudflare:${n}`));
        throw noSuchModule(specifier, `workerbox has ${known.sort().join(", ")}.`);
      }
      loadedCloudflare.set(name, make());
    } finally {
      dynamicImport = before;
    }
  }
  return loadedCloudflare.get(name);
};
