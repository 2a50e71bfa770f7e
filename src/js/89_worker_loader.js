// The Worker Loader binding inside the worker (workerd's `workerLoader`, wrangler's
// `worker_loaders`): `env.LOADER.get(name, getCode)` and `load(code)` give a WorkerStub whose
// `getEntrypoint(name?, { props })` is a Fetcher (fetch() and RPC) into a worker made from that
// code. Here the code object is checked and encoded (workerd's errors and messages); the host
// (lib/worker-loader.js) creates the loaded worker, keeps one per name and loader id, and routes
// the calls. A loaded worker's `env` values, and its `globalOutbound` and `tails` stubs, cross as
// RPC values do (84_rpc.js marshal), so service bindings and RpcTargets in them keep working.

const kConstruct = Symbol("construct");
const { marshal, unmarshal, kTarget } = internals.rpc;

/** What each module field becomes in the loaded worker (workerbox's module kinds). */
const MODULE_FIELDS = { js: "esm", cjs: "commonjs", text: "text", data: "data", json: "json", py: "python", wasm: "wasm" };
const FIELD_LIST = "'js', 'cjs', 'text', 'data', 'json', 'py', or 'wasm'";

/** Bytes of a data or wasm module, as base64 for the host. */
function bytesOf(value, name, field) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value).toBase64();
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength).toBase64();
  if (field === "wasm" && value instanceof WebAssembly.Module) {
    throw new TypeError(`Module '${name}': a compiled WebAssembly.Module cannot be passed to a loaded worker in workerbox; pass the module's bytes instead.`);
  }
  throw new TypeError(`Module '${name}': '${field}' must be an ArrayBuffer or ArrayBufferView.`);
}

/** One entry of `modules` as `{ name, type, content, base64? }`, with workerd's checks and messages. */
function encodeModule(name, value, mainModule) {
  if (typeof value === "string") {
    if (name.endsWith(".py")) return { name, type: "python", content: value };
    if (name.endsWith(".js")) return { name, type: "esm", content: value };
    if (mainModule.endsWith(".py") && name.startsWith("python_modules/")) return { name, type: "text", content: value };
    const base = `Module name must end with '.js' or '.py' (or the content must be an object indicating the type explicitly). Got: ${name}`;
    if (name.endsWith(".ts") || name.endsWith(".tsx") || name.endsWith(".jsx")) {
      throw new TypeError(`${base}. If you're trying to load TypeScript, bundle it first with '@cloudflare/worker-bundler' and pass the generated JavaScript modules.`);
    }
    throw new TypeError(base);
  }
  if (value === null || typeof value !== "object") throw new TypeError(`Module '${name}' must be a string or an object with one of ${FIELD_LIST}.`);
  const fields = Object.keys(MODULE_FIELDS).filter((field) => value[field] !== undefined);
  if (fields.length !== 1) {
    throw new TypeError(`Each module must contain exactly one of ${FIELD_LIST}. Module '${name}' contained ${fields.length} properties.`);
  }
  const [field] = fields;
  const content = value[field];
  if (field === "data" || field === "wasm") return { name, type: MODULE_FIELDS[field], content: bytesOf(content, name, field), base64: true };
  if (field === "json") return { name, type: "json", content: JSON.stringify(content) };
  return { name, type: MODULE_FIELDS[field], content: String(content) };
}

/**
 * A stub given as `globalOutbound` or in `tails`: its stub-list entry, for the host. A channel,
 * not a value: ctx.exports' own entrypoints (not serializable as values) may be given, as in workerd.
 */
function channelOf(value, what) {
  const target = typeof value === "function" ? value[kTarget] : undefined;
  if (target?.loaded === true) return marshal(value); // throws workerd's DataCloneError
  if (target?.stub !== undefined) return { remote: target.stub };
  if (target?.binding !== undefined) return { binding: target.binding, object: target.object, name: target.name, props: target.props };
  throw new TypeError(`${what} must be a Fetcher (a service binding, or an entrypoint of ctx.exports).`);
}

/** The code object getCode() gave (or load() was given), encoded for the host. */
function encodeCode(code) {
  if (code === null || typeof code !== "object") throw new TypeError("The worker code must be an object: { compatibilityDate, mainModule, modules, env?, globalOutbound? }.");
  const { compatibilityDate, compatibilityFlags, mainModule, modules, env, globalOutbound, tails, allowExperimental } = code;
  if (typeof mainModule !== "string") throw new TypeError("The worker code's mainModule must be a string naming one of its modules.");
  if (modules === null || typeof modules !== "object") throw new TypeError("The worker code's modules must be an object of { name: module }.");
  const names = Object.keys(modules);
  if (names.length === 0) throw new TypeError("Dynamic Worker code must contain at least one module.");
  const encoded = names.map((name) => encodeModule(name, modules[name], mainModule));
  const isPython = mainModule.endsWith(".py");
  for (const module of encoded) {
    if (!isPython && module.type === "python") throw new TypeError(`Module "${module.name}" is a Python module, but the main module isn't a Python module.`);
    if (isPython && (module.type === "esm" || module.type === "commonjs")) throw new TypeError(`Module "${module.name}" is a JS module, but the main module is a Python module.`);
  }
  if (isPython) throw new Error("Python Workers are not supported by workerbox: a loaded worker's main module must be a JavaScript module.");
  if (!names.includes(mainModule)) throw new TypeError(`The worker code's mainModule "${mainModule}" is not one of its modules.`);
  if (compatibilityFlags !== undefined && (!Array.isArray(compatibilityFlags) || compatibilityFlags.some((f) => typeof f !== "string"))) {
    throw new TypeError("The worker code's compatibilityFlags must be an array of strings.");
  }
  if (allowExperimental === true && !internals.feature("experimental")) {
    throw new Error("'allowExperimental' is only allowed when the calling worker has the 'experimental' compat flag set.");
  }
  // env: each value as an RPC value (structured clone, stubs by reference).
  let envEntries;
  if (env !== undefined && env !== null) {
    if (typeof env !== "object") throw new TypeError("The worker code's env must be an object.");
    envEntries = Object.keys(env).map((key) => {
      const { bytes, stubs } = marshal(env[key]);
      return [key, bytes.toBase64(), stubs];
    });
  }
  const outbound = globalOutbound === undefined ? undefined : globalOutbound === null ? null : channelOf(globalOutbound, "globalOutbound");
  if (tails !== undefined && !Array.isArray(tails)) throw new TypeError("The worker code's tails must be an array of Fetchers.");
  return {
    compatibilityDate: compatibilityDate === undefined ? undefined : String(compatibilityDate),
    compatibilityFlags,
    allowExperimental: allowExperimental === true,
    mainModule,
    modules: encoded,
    env: envEntries,
    outbound,
    tails: tails?.map((tail, i) => channelOf(tail, `tails[${i}]`)),
  };
}

/** Loaded workers of each loader (by its id, or its binding for an anonymous one): name → promise of the host's key. */
const byLoader = new Map();

/** Asks the host to create a worker from `encoded` code (under `name`, or none); resolves to its key. */
async function create(binding, name, encoded) {
  const [answer] = await internals.hostCall(binding, "create", { name, code: encoded });
  return answer.key;
}

/**
 * What a call into the loaded worker needs, made once: the loaded worker (`key` settles when it
 * is), the export `entrypoint`, and `options.props` registered with the host. Props cross as RPC
 * values do, so what cannot be sent fails at once, as in workerd.
 */
function readyOnce(binding, key, entrypoint, options) {
  const props = options?.props === undefined ? undefined : marshal(options.props);
  let fields;
  return () =>
    (fields ??= key.then(async (loaded) => {
      let propsId;
      if (props !== undefined) [{ id: propsId }] = await internals.hostCall(binding, "props", { loaded, bytes: props.bytes.toBase64(), stubs: props.stubs });
      return { loaded, entrypoint, propsId };
    }));
}

/** A loaded worker: `getEntrypoint()` gives a Fetcher into it. */
class WorkerStub {
  #binding;
  #key;
  constructor(token, binding, key) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#key = key;
  }

  /** A Fetcher into entrypoint `name` (default: the default export), its ctx.props `options.props`. */
  getEntrypoint(name = undefined, options = undefined) {
    const entrypoint = name === undefined || name === null || name === "default" ? "default" : String(name);
    const binding = this.#binding;
    const key = this.#key;
    const ready = readyOnce(binding, key, entrypoint, options);
    const fetcher = {
      fetch(input, init = undefined) {
        const request = new Request(input, init);
        return ready().then((fields) => internals.fetchThroughHost(binding, request, fields));
      },
      get [Symbol.toStringTag]() {
        return "Fetcher";
      },
    };
    return internals.remoteStub({ binding, loaded: true, ready }, [], fetcher);
  }

  /** The loaded worker's Durable Object class `name`, its objects' ctx.props `options.props`: for ctx.facets.get(). */
  getDurableObjectClass(name = undefined, options = undefined) {
    const className = name === undefined || name === null ? "default" : String(name);
    const binding = this.#binding;
    const key = this.#key;
    const ready = readyOnce(binding, key, className, options);
    return internals.durableObjectClass({ binding, loaded: true, ready });
  }

  get [Symbol.toStringTag]() {
    return "WorkerStub";
  }
}

/** `env.LOADER`: workerd's WorkerLoader. */
class WorkerLoader {
  #binding;
  #cache;
  constructor(token, binding, id) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    const cacheKey = id === undefined ? `binding:${binding}` : `id:${id}`;
    if (!byLoader.has(cacheKey)) byLoader.set(cacheKey, new Map());
    this.#cache = byLoader.get(cacheKey);
  }

  /**
   * The worker loaded under `name`: getCode() (sync or async) runs only when no worker of that
   * name is loaded yet; without a name, every call loads a new one.
   */
  get(name, getCode) {
    const binding = this.#binding;
    const run = async () => {
      if (typeof getCode !== "function") throw new TypeError("Failed to execute 'get' on 'WorkerLoader': parameter 2 is not of type 'Function'.");
      return create(binding, name, encodeCode(await getCode()));
    };
    let key;
    if (name === null || name === undefined) {
      name = null;
      key = run();
    } else {
      name = String(name);
      key = this.#cache.get(name);
      if (key === undefined) {
        key = (async () => {
          const [found] = await internals.hostCall(binding, "lookup", { name });
          return found !== null ? found.key : run();
        })();
        this.#cache.set(name, key);
      }
    }
    key.catch(() => {});
    return new WorkerStub(kConstruct, binding, key);
  }

  /** A worker from `code`, loaded afresh (no caching); bad code throws here, as in workerd. */
  load(code) {
    const key = create(this.#binding, null, encodeCode(code));
    key.catch(() => {});
    return new WorkerStub(kConstruct, this.#binding, key);
  }

  get [Symbol.toStringTag]() {
    return "WorkerLoader";
  }
}

/** A value of a loaded worker's env, as its loader sent it: `{ b: base64 bytes, s: host stub ids }`. */
function loadedValue(payload) {
  const { b, s } = JSON.parse(payload);
  return unmarshal(Uint8Array.fromBase64(b), s);
}

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  if (kind === "worker_loader") return new WorkerLoader(kConstruct, name, undefined);
  if (kind.startsWith("worker_loader:")) return new WorkerLoader(kConstruct, name, kind.slice("worker_loader:".length));
  if (kind.startsWith("loaded_value:")) return loadedValue(kind.slice("loaded_value:".length));
  return makeOtherBinding(name, kind);
};
