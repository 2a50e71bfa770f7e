"use strict";
// The Worker Loader binding on the host (workerd's `workerLoader`, wrangler's `worker_loaders`):
// `workerLoader({ id })` for createWorker's `bindings`, and the answers to the calls its
// worker-side API (src/js/89_worker_loader.js) makes. Each loaded worker is a workerbox worker
// of its own (its own isolate, made with createWorker, with the parent's limits, network policy
// and log), kept per parent worker, loader id and name, and disposed with the parent. Calls into
// it go as a service binding's do (lib/rpc.js callWorker / fetchInto); its env values, and the
// stubs given as `globalOutbound` or `tails`, are RPC values whose stubs the host table holds.

const rpc = require("./rpc.js");
const { Binding, kBinding } = require("./bindings.js");
const { fetchAnsweredBy } = require("./http.js");

/** lib/api.js hands over createWorker (this file sits below it). */
let access = null;
function setWorkerAccess(api) {
  access = api;
}

/** workerd's error for fetch() in a loaded worker whose globalOutbound is null. */
const NO_INTERNET =
  "This worker is not permitted to access the internet via global functions like fetch(). It must use capabilities (such as bindings in 'env') to talk to the outside world.";

/** A worker_loader binding: `env.NAME.get(name, getCode)` and `env.NAME.load(code)`. */
class WorkerLoaderBinding extends Binding {
  constructor(id) {
    super(id === undefined ? "worker_loader" : `worker_loader:${id}`, null);
    this.id = id;
  }

  /** A call of the worker-side API, from worker `caller` (lib/bindings.js createDispatcher). */
  answer(method, args, bytes, caller) {
    return answer(this, method, args, bytes, caller);
  }
}

/**
 * A Worker Loader binding. Loaders given the same `id` (in one worker) share their loaded
 * workers: `get(name, …)` through either reuses the worker the other loaded under that name.
 */
function workerLoader(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw new TypeError("workerLoader(): options must be an object such as { id: \"shared\" }");
  for (const key of Object.keys(options)) {
    if (key !== "id") throw new TypeError(`workerLoader(): unknown option "${key}" (known options: id)`);
  }
  const { id } = options;
  if (id !== undefined && (typeof id !== "string" || id === "")) throw new TypeError("workerLoader(): options.id must be a non-empty string");
  return new WorkerLoaderBinding(id);
}

/**
 * Per parent worker: what its loaded workers inherit (`settings`), its loaders' named workers
 * (loader → name → record) and every record by key.
 */
const parents = new WeakMap();

/**
 * Called by createWorker once a worker exists: when it has a worker_loader binding, what its
 * loaded workers inherit from it (`{ onLog, limits, network, outbound, experimental }`).
 */
function bindParent(worker, definitions, settings) {
  if (!Object.values(definitions).some((d) => d instanceof WorkerLoaderBinding)) return;
  parents.set(worker, { settings, loaders: new Map(), byKey: new Map(), nextKey: 1, disposed: false });
}

/** Disposes the workers `worker` loaded (it is being disposed). */
function workerDisposed(worker) {
  const state = parents.get(worker);
  if (state === undefined) return;
  state.disposed = true;
  parents.delete(worker);
  for (const record of state.byKey.values()) record.ready.then((child) => child.dispose(), () => {});
}

/**
 * A loaded worker's Durable Object class (getDurableObjectClass(), for a facet: lib/facets.js),
 * from `target` ({ loaded, entrypoint: class name, propsId }) of `owner`'s loaders.
 */
async function loadedClass(owner, target) {
  const state = parents.get(owner);
  if (state === undefined) throw new Error("The worker that loaded this class has been disposed.");
  const record = recordOf(state, target.loaded);
  const child = await record.ready;
  return { home: child, className: target.entrypoint, props: propsOf(record, target) };
}

const json = (value) => ({ json: JSON.stringify(value) });

/** An answer that rejects the caller's RPC call with `error` (its name and message). */
const errorAnswer = (error) => json({ error: { name: error?.name ?? "Error", message: error?.message ?? String(error), stack: error?.stack } });

async function answer(loader, method, args, bytes, caller) {
  const state = parents.get(caller);
  if (state === undefined) throw new Error("This worker loader's worker has been disposed.");
  const loaderKey = loader.id === undefined ? loader : `id:${loader.id}`;
  let named = state.loaders.get(loaderKey);
  if (named === undefined) state.loaders.set(loaderKey, (named = new Map()));
  switch (method) {
    case "lookup": {
      const record = named.get(args.name);
      return json(record === undefined ? null : { key: record.key });
    }
    case "create": {
      // Two contexts of the parent may race to load one name: the first one's worker is kept.
      if (args.name !== null && named.has(args.name)) return json({ key: named.get(args.name).key });
      const record = load(state, caller, args.code);
      if (args.name !== null) named.set(args.name, record);
      return json({ key: record.key });
    }
    case "props": {
      const record = recordOf(state, args.loaded);
      const id = record.nextProps++;
      record.props.set(id, { bytes: args.bytes, stubs: rpc.hostIds(caller, args.stubs, true) });
      return json({ id });
    }
    case "rpc": {
      const record = recordOf(state, args.loaded);
      let child;
      try {
        child = await record.ready;
      } catch (error) {
        return errorAnswer(error);
      }
      const call = { entrypoint: args.entrypoint, path: args.path, kind: args.kind, stubs: rpc.hostIds(caller, args.stubs, args.dupStubs), ...propsOf(record, args), ...(args.errorValue === true ? { errorValue: true } : {}) };
      return rpc.callWorker(child, call, bytes);
    }
    case "fetch": {
      const record = recordOf(state, args.loaded);
      const child = await record.ready;
      // A worker loaded with `tails`: its default entrypoint's requests go the way dispatch() does,
      // so that each ends in a trace for its tail consumers.
      if (record.tailed && args.entrypoint === "default" && args.propsId === undefined) return fetchTraced(child, args, bytes);
      return rpc.fetchInto(child, { entrypoint: args.entrypoint, ...propsOf(record, args) }, args, bytes, caller);
    }
  }
  throw new TypeError(`unknown worker loader operation "${method}"`);
}

function recordOf(state, key) {
  const record = state.byKey.get(key);
  if (record === undefined) throw new Error("This loaded worker is gone (its loader's worker was disposed).");
  return record;
}

/** The props a call's entrypoint was given (`getEntrypoint(name, { props })`), as the callee's call takes them. */
function propsOf(record, args) {
  const props = args.propsId === undefined ? undefined : record.props.get(args.propsId);
  return props === undefined ? {} : { propsValue: props };
}

/** Starts loading a worker from `code` (as src/js/89_worker_loader.js encoded it); its record at once. */
function load(state, parent, code) {
  const key = state.nextKey++;
  const record = { key, props: new Map(), nextProps: 1 };
  record.tailed = (code.tails?.length ?? 0) > 0;
  record.ready = create(state, parent, code).then((child) => {
    // The parent went while this one started: it goes too.
    if (state.disposed) child.dispose().catch(() => {});
    return child;
  });
  record.ready.catch(() => {});
  state.byKey.set(key, record);
  return record;
}

/** A service-like binding whose requests (the loaded worker's fetch()) go to a stub of the parent's. */
function outboundVia(stubId) {
  const binding = new Binding("service", null);
  binding.answer = (method, args, bytes, caller) => rpc.callStub(method, { ...args, stub: stubId }, bytes, caller);
  return binding;
}

/** The loaded worker's outbound when its code said `globalOutbound: null`: fetch() fails, as in workerd. */
function noInternet() {
  const binding = new Binding("service", null);
  binding.answer = () => {
    throw new Error(NO_INTERNET);
  };
  return binding;
}

/** A tail consumer for a stub given in `tails`: its tail(events) is called with each trace. */
function tailVia(stubId, onLog) {
  return (events) =>
    rpc
      .callStub("call", { stub: stubId, path: ["tail"], kind: "call", stubs: [] }, rpc.serialize([JSON.parse(JSON.stringify(events))]))
      .then((answer) => {
        const error = JSON.parse(answer.json).error;
        if (error) onLog("error", `workerbox: a loaded worker's tail consumer failed: ${error.name}: ${error.message}`);
      })
      .catch((error) => onLog("error", `workerbox: a loaded worker's tail consumer failed: ${error?.message ?? error}`));
}

/** A request into a loaded worker through dispatch() (its tails see it), answered as a service binding's fetch is. */
function fetchTraced(child, args, bytes) {
  return fetchAnsweredBy((request) => access.dispatch(child, request), args, bytes);
}

async function create(state, parent, code) {
  const { settings } = state;
  const main = code.modules.find((m) => m.name === code.mainModule);
  if (main.type !== "esm") throw new TypeError(`workerbox runs a loaded worker's main module as an ES module: "${main.name}" must be given as a string or { js }.`);
  const modules = {};
  for (const m of code.modules) {
    if (m !== main) modules[m.name] = { type: m.type, content: m.base64 ? Buffer.from(m.content, "base64") : m.content };
  }
  const bindings = {};
  // The host ids its env and outbound name: the loaded worker's to use once it exists.
  const handed = [];
  for (const [name, base64, stubs] of code.env ?? []) {
    // Each value reaches the loaded worker's env as an RPC value: its stubs get host ids of their own.
    const ids = rpc.hostIds(parent, stubs, true);
    handed.push(...ids);
    bindings[name] = new Binding(`loaded_value:${JSON.stringify({ b: base64, s: ids })}`, null);
  }
  let outbound;
  if (code.outbound === null) outbound = noInternet();
  else if (code.outbound !== undefined) {
    const [id] = rpc.hostIds(parent, [code.outbound], true);
    handed.push(id);
    outbound = outboundVia(id);
  }
  else outbound = settings.outbound; // inherited from the parent (none: the network)
  const tailConsumers = code.tails?.length ? code.tails.map((entry) => tailVia(rpc.hostIds(parent, [entry], true)[0], settings.onLog)) : undefined;
  const child = await access.createWorker({
    script: main.content,
    filename: main.name,
    format: "module",
    ...(Object.keys(modules).length > 0 ? { modules } : {}),
    bindings,
    onLog: settings.onLog,
    ...(code.compatibilityDate !== undefined ? { compatibilityDate: code.compatibilityDate } : {}),
    ...(code.compatibilityFlags !== undefined ? { compatibilityFlags: code.compatibilityFlags } : {}),
    unsafeExperimental: code.allowExperimental === true,
    ...(settings.limits !== undefined ? { limits: settings.limits } : {}),
    network: settings.network,
    // Loaded code is mostly loaded once: no warm spare is kept for it.
    pool: false,
    ...(outbound !== undefined ? { outbound } : {}),
    ...(tailConsumers !== undefined ? { tailConsumers } : {}),
  });
  // Before its first event (record.ready resolves after this): a worker's top level makes no calls.
  rpc.handTo(child, handed);
  return child;
}

module.exports = { workerLoader, WorkerLoaderBinding, bindParent, workerDisposed, setWorkerAccess, loadedClass, kBinding };
