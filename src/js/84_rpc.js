// Workers RPC inside the worker. Owns the classes of the `cloudflare:workers` module
// (WorkerEntrypoint, DurableObject, WorkflowEntrypoint, RpcTarget; the module itself, env and
// ctx.exports are 84_workers_module.js's; `new RpcStub()` is 84_rpc_local.js's), the stubs a worker calls
// through (service bindings, and objects other workers passed by reference), promise
// pipelining on call results, and `internals.dispatchRpc`, which serves calls from the host into
// this worker's entrypoints and into the objects it handed out.
//
// Values cross as V8 structured clones (ops.serialize). Functions and RpcTarget instances cross
// by reference: they stay in this worker's export table and the other side gets a stub whose
// calls come back here, until the stub is disposed. Which worker holds which stub is the host's
// business (lib/rpc.js); a message carries, beside its bytes, the list of stubs in it.

/** Marks a stub's place inside a serialized value: `{ [STUB_KEY]: index into the stub list }`. */
const STUB_KEY = "\u0000workerbox.rpc.stub";
/**
 * Wraps a serialized value holding the places below, so that the receiver looks for them even
 * when the value holds no stub: `{ [SPECIAL_KEY]: value }`.
 */
const SPECIAL_KEY = "\u0000workerbox.rpc.special";
/** A DOMException's place: `{ [DOM_EXCEPTION_KEY]: [message, name, stack] }` (V8 would clone it as an Error). */
const DOM_EXCEPTION_KEY = "\u0000workerbox.rpc.domexception";
/**
 * An AbortSignal's place (enable_abortsignal_rpc): `{ [SIGNAL_KEY]: { reason } }` when aborted,
 * else `{ [SIGNAL_KEY]: { trigger } }`, a function whose call settles when the signal aborts
 * (with `{ reason }`) or when the receiver lets it go (with `{}`).
 */
const SIGNAL_KEY = "\u0000workerbox.rpc.signal";
/** Read through a stub proxy: where its calls go (`{ binding }` or `{ stub }`). */
const kTarget = Symbol("workerbox.rpc.target");
/** What a stub of `new RpcStub(value)` stands for: `{ value, disposed }`. */
const kLocal = Symbol("workerbox.rpc.local");
/** Read through a stub or promise proxy: which of cloudflare:workers' classes it is an instance of. */
const kKind = Symbol("workerbox.rpc.kind");
/** Objects this worker handed out by reference may not grow without bound. */
const MAX_EXPORTS = 100000;

class WorkerEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}

class DurableObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}

class WorkflowEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}

/** Instances of subclasses cross RPC by reference: the receiver gets a stub. */
class RpcTarget {}

// The classes workerd's stubs, pipelined results and stub properties are instances of: not
// constructible (an "Illegal constructor" TypeError, as in workerd); the proxies below report
// their prototypes, so `instanceof` answers as it does there.
const illegal = () => {
  throw new TypeError("Illegal constructor");
};
const rpcClass = (name, methods) => {
  const C = { [name]: function () { illegal(); } }[name];
  for (const m of methods) Object.defineProperty(C.prototype, m, { value: { [m](...a) { return Promise.resolve(this)[m](...a); } }[m], writable: true, configurable: true });
  Object.defineProperty(C.prototype, Symbol.toStringTag, { value: `Js${name}`, configurable: true });
  return C;
};
const RpcPromise = rpcClass("RpcPromise", ["then", "catch", "finally"]);
const RpcProperty = rpcClass("RpcProperty", ["then", "catch", "finally"]);
/** What `env.SERVICE` (a service binding) is an instance of. */
const ServiceStub = rpcClass("ServiceStub", []);
const KIND_PROTO = { RpcPromise: () => RpcPromise.prototype, RpcProperty: () => RpcProperty.prototype, RpcStub: () => internals.rpc.RpcStub.prototype, ServiceStub: () => ServiceStub.prototype };
/** A proxy's getPrototypeOf trap for `kind` (a Durable Object stub keeps its function's). */
const protoTrap = (kind) => (fn) => KIND_PROTO[kind]?.() ?? Reflect.getPrototypeOf(fn);

internals.isEntrypointClass = (value) => typeof value === "function" && value.prototype instanceof WorkerEntrypoint;

// ---- Marshalling ------------------------------------------------------------------------------

const exported = new Map();
/** Export id → what letting the object go does (its disposer, or a stub's release). */
const releasers = new Map();
/** Export id → the event whose async flow exported it (see stubFor's own exports coming home). */
const exportEvents = new Map();
/** Export id → the Durable Object state it came from, if a call into one handed it out. */
const exportStates = new Map();
let nextExport = 1;

function exportObject(value, release = undefined) {
  if (exported.size >= MAX_EXPORTS) {
    throw new RangeError(`This worker holds ${MAX_EXPORTS} objects passed by reference over RPC; dispose stubs that are no longer needed.`);
  }
  const id = nextExport++;
  exported.set(id, value);
  if (release !== undefined) releasers.set(id, release);
  const event = internals.flowEvent();
  exportEvents.set(id, event);
  // An object a Durable Object call handed out: aborting that object cuts it off (84_rpc_serve.js).
  const durable = internals.durableStateOf?.(event);
  if (durable !== undefined) exportStates.set(id, durable);
  return id;
}

/** The other side let go of export `id`: it is forgotten and its owner's disposer runs. */
function releaseExport(id) {
  const release = releasers.get(id);
  exported.delete(id);
  releasers.delete(id);
  exportEvents.delete(id);
  exportStates.delete(id);
  release?.();
}

/**
 * Exports an RpcTarget or function passed by reference; the last stub for it released calls its
 * `[Symbol.dispose]()`, as in workerd. In a call's params under rpc_params_dup_stubs, an object
 * with a `dup()` method is dup()ed and the duplicate exported (and disposed) instead.
 */
function exportOwned(v, params) {
  const owned = params && typeof v.dup === "function" ? v.dup() : v;
  return exportObject(owned, () => {
    const dispose = owned?.[Symbol.dispose];
    if (typeof dispose === "function") Reflect.apply(dispose, owned, []);
  });
}

/**
 * Turns `value` into bytes plus the list of stubs in it: functions and RpcTargets are exported
 * (`{ local }`), stubs received from elsewhere are passed on (`{ remote }`). Plain objects,
 * arrays, Maps and Sets are walked; everything else is left to the structured clone.
 */
function marshal(value, params = false) {
  const prepared = prepare(value, params);
  return { bytes: serializeValue(prepared), ...prepared };
}

/** The bytes of a prepared value (errors in it with their own properties under enhanced_error_serialization, as workerd sends them). */
const serializeValue = (prepared) => ops.serialize(prepared.special ? { [SPECIAL_KEY]: prepared.replaced } : prepared.replaced, internals.feature("enhanced_error_serialization"));

/** marshal(), once the bodies of the Requests and Responses in `value` are read (84_rpc_http.js). */
async function marshalAsync(value, params = false) {
  const prepared = prepare(value, params);
  if (prepared.pending.length > 0) await Promise.all(prepared.pending);
  return { bytes: serializeValue(prepared), ...prepared };
}

/** What copyValue()'s `visit` returns for a value it leaves to the walk. */
const WALK_ON = Symbol("workerbox.rpc.walkOn");

/**
 * A copy of `value` in which Arrays, Maps, Sets and plain objects are copied (one copy for a
 * container met twice or in a cycle) and what `visit(v, walk)` makes of each function and of each
 * object before it is looked at as a container (`WALK_ON`: go on); primitives stay as they are.
 * An object that is no container is what `other(v, proto)` gives (itself by default); with
 * `nullProto` an object without a prototype is copied as a plain one. An array is copied by its
 * own keys, or with `denseArrays` by index up to its length. Shared by marshal() and the stubs
 * kept as data (85_stub_storage.js encode/decode), which differ only in `visit` and `other`.
 */
function copyValue(value, { visit, other = (v) => v, nullProto = false, denseArrays = false }) {
  const seen = new Map();
  const walk = (v) => {
    if (typeof v === "function") return visit(v, walk);
    if (v === null || typeof v !== "object") return v;
    if (seen.has(v)) return seen.get(v);
    const visited = visit(v, walk);
    if (visited !== WALK_ON) return visited;
    if (Array.isArray(v)) {
      const out = [];
      seen.set(v, out);
      if (denseArrays) for (let i = 0; i < v.length; i++) out[i] = walk(v[i]);
      else for (const key of Object.keys(v)) out[key] = walk(v[key]);
      return out;
    }
    if (v instanceof Map) {
      const out = new Map();
      seen.set(v, out);
      for (const [key, item] of v) out.set(walk(key), walk(item));
      return out;
    }
    if (v instanceof Set) {
      const out = new Set();
      seen.set(v, out);
      for (const item of v) out.add(walk(item));
      return out;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && !(nullProto && proto === null)) return other(v, proto);
    const out = {};
    seen.set(v, out);
    for (const key of Object.keys(v)) out[key] = walk(v[key]);
    return out;
  };
  return walk(value);
}

/** The walk of marshal(): the value with its places, the stubs, and the body reads pending. */
function prepare(value, params) {
  const stubs = [];
  const pending = [];
  let special = false;
  // The stubs for host stubs passed on (`remote` entries) and the `new RpcStub()` holders sent,
  // as `send` may hand them over.
  const passed = [];
  /** Where each of `passed` sits in `stubs` (a result's hand-over may mark it: handOver()). */
  const passedAt = [];
  const locals = [];
  const place = (entry) => {
    stubs.push(entry);
    return { [STUB_KEY]: stubs.length - 1 };
  };
  // Functions and RpcTargets become places; the objects RPC carries specially become theirs.
  const visit = (v, walk) => {
    if (typeof v === "function") {
      const kind = v[kKind];
      if (kind === "RpcPromise" || kind === "RpcProperty") {
        throw new DOMException(`Could not serialize object of type "${kind}". This type does not support serialization.`, "DataCloneError");
      }
      const local = v[kLocal];
      // A stub of `new RpcStub(x)`: the export holds a duplicate of it, let go when released.
      if (local !== undefined) {
        if (local.disposed) throw new DOMException("An RPC stub that was disposed cannot be sent.", "DataCloneError");
        const held = internals.rpcLocal.dupHolder(local);
        locals.push(local);
        return place({ local: exportObject(local.value, () => internals.rpcLocal.disposeHolder(held)) });
      }
      const target = v[kTarget];
      if (target?.stub !== undefined) {
        if (target.released) throw new DOMException("An RPC stub that was disposed cannot be sent.", "DataCloneError");
        internals.checkIo(target.owner, "Client");
        passed.push(target);
        passedAt.push(stubs.length);
        return place({ remote: target.stub });
      }
      // An entrypoint of a loaded worker (89_worker_loader.js) stays in this worker, as in workerd.
      if (target?.loaded === true) throw new DOMException(LOADED_NOT_TRANSFERABLE, "DataCloneError");
      // ctx.exports.<Entrypoint> itself (workerd's LoopbackServiceStub) is not serializable; what
      // calling it with { props } gives is.
      if (target?.binding?.startsWith("#self:") && !Object.hasOwn(target, "props")) {
        throw new DOMException('Could not serialize object of type "LoopbackServiceStub". This type does not support serialization.', "DataCloneError");
      }
      // A service binding or Durable Object stub: the host makes a stub that calls through it.
      if (target !== undefined) return place({ binding: target.binding, object: target.object, name: target.name, props: target.props });
      return place({ local: exportOwned(v, params) });
    }
    if (v instanceof RpcTarget) return place({ local: exportOwned(v, params) });
    if (v instanceof DOMException) {
      special = true;
      return { [DOM_EXCEPTION_KEY]: [v.message, v.name, typeof v.stack === "string" ? v.stack : ""] };
    }
    // A Request or Response: its parts, the body read before the value is written.
    const http = internals.rpcHttp.encode(v, pending, walk);
    if (http !== undefined) {
      special = true;
      return http;
    }
    // A ReadableStream or WritableStream: an object serving it is exported (84_rpc_streams.js).
    const stream = internals.rpcStreams.encode(v, walk);
    if (stream !== undefined) {
      special = true;
      return stream;
    }
    if (internals.isAbortSignal(v) && internals.feature("enable_abortsignal_rpc")) {
      special = true;
      if (internals.signalAborted(v)) return { [SIGNAL_KEY]: { reason: walk(v.reason) } };
      return { [SIGNAL_KEY]: { trigger: walk(internals.rpcSignal.trigger(v)) } };
    }
    return WALK_ON;
  };
  // Any other object that is not a container (not a plain object: a null prototype neither).
  const other = (v, proto) => {
    unserializable(v, proto);
    return v;
  };
  const replaced = copyValue(value, { visit, other, denseArrays: true });
  return { replaced, special, stubs, passed, passedAt, locals, pending };
}

const objectTag = Object.prototype.toString;

/**
 * Throws workerd's DataCloneError for an object RPC cannot send: an instance of a class that is
 * not an RpcTarget, an object without a prototype, or a Proxy that emulates neither a plain
 * object nor an RpcTarget. Built-in values V8 clones (Dates, typed arrays, errors…) pass.
 */
function unserializable(v, proto) {
  if (proto !== null && objectTag.call(v) !== "[object Object]") return;
  if (ops.isProxy(v)) {
    throw new DOMException(
      "Proxy could not be serialized because it is not a valid RPC receiver type. The Proxy must emulate either a plain object or an RpcTarget, as indicated by the Proxy's prototype chain.",
      "DataCloneError",
    );
  }
  const ctor = proto === null ? undefined : Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  // The runtime's own classes are the serializer's to judge (src/js/99_runtime_classes.js).
  if (typeof ctor === "function" && ops.runtimeFunction(ctor)) return;
  const type = typeof ctor === "function" && typeof ctor.name === "string" && ctor.name !== "" ? ctor.name : "Object";
  throw new DOMException(`Could not serialize object of type "${type}". This type does not support serialization.`, "DataCloneError");
}

/** Host stub id → how many stubs in this worker stand for it (each dup() adds one). */
const holds = new Map();

/**
 * A new stub for host stub `id`, pushed onto `created` when given. `{ stub, own }` in place of an
 * id is a host stub for this worker's own export `own`, held by nothing else: when the export
 * was made in the async flow running now (an object this request sent, coming home), a local
 * stub of it whose last let-go releases the export, as Cap'n Proto shortens a capability that
 * points home, and the host forgets its stub; otherwise (another request's object) a stub
 * through the host as any, so that workerd's I/O-context rules still apply to it.
 */
function stubFor(id, created = undefined) {
  if (id !== null && typeof id === "object" && id.binding !== undefined) {
    // A stub of a binding: what it names rides along (`home`: one of this worker's), for
    // keeping it as data (85_stub_storage.js); calls still go through the host.
    const stub = stubFor(id.stub, created);
    stub[kTarget].described = id.binding;
    return stub;
  }
  if (id !== null && typeof id === "object") {
    const { stub: hostId, own } = id;
    if (!exported.has(own) || exportEvents.get(own) !== internals.flowEvent()) return stubFor(hostId, created);
    internals.hostCall("#rpc", "forget", { stub: hostId }).catch(() => {});
    const stub = internals.rpcLocal.localStub({ value: exported.get(own), disposed: false, count: { n: 1, last: () => releaseExport(own) } }, []);
    created?.push(stub);
    return stub;
  }
  holds.set(id, (holds.get(id) ?? 0) + 1);
  // Held again: a release of it still waiting on a call being prepared is called off.
  disposeWhenSent.delete(id);
  // Tied to the request it arrived in (owner): another request cannot send it on.
  const target = { stub: id, released: false, owner: internals.ioOwner() };
  // The request's context holds it: let go when that request is over (see releaseEventStubs).
  if (target.owner !== null && target.owner !== undefined) {
    let owned = ownedStubs.get(target.owner);
    if (owned === undefined) ownedStubs.set(target.owner, (owned = new Set()));
    owned.add(target);
  }
  const stub = remoteStub(target, []);
  created?.push(stub);
  return stub;
}

/** Event id → the stubs (their targets) that request's context holds, released when it is over. */
const ownedStubs = new Map();

/**
 * Request `id`'s context is over (or aborted): the stubs it holds are let go, dup()s included, as
 * workerd disposes them when it tears the context down (a call's context lasts while its
 * result's stubs are held, and while its waitUntil work runs).
 */
function releaseEventStubs(id) {
  const owned = ownedStubs.get(id);
  if (owned === undefined) return;
  ownedStubs.delete(id);
  // A Durable Object's context outlives its events (its props' stubs, made as its first event
  // came in, among them): what it got stays.
  if (internals.isDurableEvent?.(id)) return;
  for (const target of owned) {
    target.tornDown = true;
    release(target);
  }
}
internals.releaseEventStubs = releaseEventStubs;
internals.eventEndHooks.push(releaseEventStubs);

/** A stub no request holds: it lives until let go of explicitly (84_rpc_signal.js keeps its sinks so). */
function unown(stub) {
  const target = stub[kTarget];
  ownedStubs.get(target.owner)?.delete(target);
  target.owner = null;
}

/** Runs `fn` once every export in `ids` has been let go by the other side. */
function onAllReleased(ids, fn) {
  let left = ids.length;
  for (const id of ids) {
    const previous = releasers.get(id);
    releasers.set(id, () => {
      previous?.();
      if (--left === 0) fn();
    });
  }
}

/** Marks a stub released and drops its hold; true when no other stub here stands for its host stub. */
function unhold(target) {
  target.released = true;
  ownedStubs.get(target.owner)?.delete(target);
  const left = (holds.get(target.stub) ?? 1) - 1;
  if (left > 0) {
    holds.set(target.stub, left);
    return false;
  }
  holds.delete(target.stub);
  return true;
}

/**
 * A call's result hands the stubs passed on in it over to the caller, as workerd transfers a
 * result's stubs: this side's hold on each goes; where this side still holds the same host stub
 * otherwise (the argument it came in as, a dup() of it), the host gives the caller one of its
 * own (`dup` in its entry).
 */
function handOver({ passed, passedAt, stubs }) {
  passed.forEach((target, i) => {
    if (target.released) return;
    if (!unhold(target)) stubs[passedAt[i]].dup = true;
  });
}

/**
 * Host stub id → the calls on it (or passing it on) made here and not yet answered: `starting`
 * (being prepared: their bodies read, say) and `sent` (on their way to the host, or running).
 */
const inFlight = new Map();
/** Host stubs let go while a call on them was still being prepared: disposed once it is sent. */
const disposeWhenSent = new Set();

/**
 * Counts a call on (or passing on) the host stubs `ids` until it is answered, so that letting one
 * go never overtakes it: a release goes to the host after the calls made before it, as Cap'n
 * Proto sends a release after the calls made on a capability. Returns `{ sent(), done() }`.
 */
function trackCall(ids) {
  for (const id of ids) {
    const entry = inFlight.get(id) ?? { starting: 0, sent: 0 };
    entry.starting++;
    inFlight.set(id, entry);
  }
  let state = "starting";
  const leave = (from, to) => {
    if (state !== from) return;
    state = to;
    for (const id of ids) {
      const entry = inFlight.get(id);
      if (entry === undefined) continue;
      entry[from]--;
      if (to === "sent") entry.sent++;
      if (entry.starting === 0 && disposeWhenSent.delete(id)) hostDispose(id);
      if (entry.starting === 0 && entry.sent === 0) inFlight.delete(id);
    }
  };
  return { sent: () => leave("starting", "sent"), done: () => (leave("starting", "done"), leave("sent", "done")) };
}

const hostDispose = (id) => internals.hostCall("#rpc", "dispose", { stub: id }).catch(() => {});

/**
 * Lets go of one stub for a host stub; the host forgets it when no stub here stands for it. With
 * `into` (`{ released, releasing }` of a call's answer, 84_rpc_serve.js) the host lets it go
 * before the caller sees the answer: named in `released` (the host disposes it), or, while calls
 * made here on it are still on their way, disposed through the same channel as those calls
 * (after them) and named in `releasing` (the host waits for that). A release while such a call is
 * still being prepared waits until it is sent.
 */
function release(target, into = undefined) {
  if (target.released || !unhold(target)) return;
  const id = target.stub;
  const busy = inFlight.get(id);
  if (busy !== undefined && busy.starting > 0) {
    disposeWhenSent.add(id);
    return;
  }
  if (busy === undefined && into !== undefined) {
    into.released.push(id);
    return;
  }
  hostDispose(id);
  into?.releasing.push(id);
}

/** workerd's DataCloneError for an entrypoint of a loaded worker sent over RPC. */
const LOADED_NOT_TRANSFERABLE =
  "Entrypoints to dynamically-loaded workers cannot be transferred to other Workers, because the system does not know how to reload this Worker from scratch. Instead, have the parent Worker expose an entrypoint which constructs the dynamic worker and forwards to it.";

/** workerd's error for a call on a stub whose object's context (a Durable Object) was aborted. */
const CONTEXT_GONE = "The execution context which hosts this callback is no longer running.";

/** workerd's error for a call on a stub that was disposed (or handed over). */
const DISPOSED = "RPC stub used after being disposed.";

/**
 * The value `marshal` wrote, with each stub place turned into a stub for host id `ids[i]`
 * (each also pushed onto `created` when given).
 */
function unmarshal(bytes, ids, created = undefined) {
  let value = ops.deserialize(bytes);
  const special = value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.hasOwn(value, SPECIAL_KEY);
  if (special) value = value[SPECIAL_KEY];
  else if (ids.length === 0) return value;
  const seen = new Set();
  const walk = (v) => {
    if (v === null || typeof v !== "object" || seen.has(v)) return v;
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype && Object.hasOwn(v, STUB_KEY)) return stubFor(ids[v[STUB_KEY]], created);
    if (special && proto === Object.prototype && Object.hasOwn(v, DOM_EXCEPTION_KEY)) {
      const [message, name, stack] = v[DOM_EXCEPTION_KEY];
      const error = new DOMException(message, name);
      if (stack !== "") Object.defineProperty(error, "stack", { value: stack, writable: true, configurable: true });
      return error;
    }
    if (special && proto === Object.prototype && Object.hasOwn(v, internals.rpcHttp.KEY)) return internals.rpcHttp.decode(v, walk);
    // A stream owns its stub (not one of `created`, which a call's end or a result's disposer lets go).
    if (special && proto === Object.prototype && Object.hasOwn(v, internals.rpcStreams.KEY)) return internals.rpcStreams.decode(v, (p) => stubFor(ids[p[STUB_KEY]]));
    if (special && proto === Object.prototype && Object.hasOwn(v, SIGNAL_KEY)) {
      const { reason, trigger } = v[SIGNAL_KEY];
      // The copy owns its trigger's stub (not one of `created`, let go when a call ends): it
      // hears aborts while the request that received it lasts, as workerd's copy does.
      return internals.rpcSignal.receive(walk(reason), trigger === undefined ? undefined : stubFor(ids[trigger[STUB_KEY]]));
    }
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = walk(v[i]);
    } else if (v instanceof Map) {
      const entries = [...v];
      v.clear();
      for (const [key, item] of entries) v.set(walk(key), walk(item));
    } else if (v instanceof Set) {
      const items = [...v];
      v.clear();
      for (const item of items) v.add(walk(item));
    } else if (proto === Object.prototype) {
      for (const key of Object.keys(v)) v[key] = walk(v[key]);
    }
    return v;
  };
  return walk(value);
}

/**
 * An error thrown on the other side of a call: its name and message, with this side's stack (the
 * call's, as workerd gives it) and, under enhanced_error_serialization, the other own properties
 * the thrower gave it (`props`).
 */
function remoteError({ name, message, props }) {
  const Kind = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError }[name] ?? Error;
  const error = new Kind(message);
  Error.captureStackTrace?.(error, send);
  if (Kind === Error && name !== "Error") {
    Object.defineProperty(error, "name", { value: name, writable: true, configurable: true, enumerable: false });
  }
  if (props !== null && typeof props === "object") {
    for (const key of Object.keys(props)) if (key !== "stack" && key !== "message" && key !== "name") error[key] = props[key];
  }
  // An error thrown on the other side of an RPC call says so, as in workerd.
  error.remote = true;
  return error;
}

// ---- Calling out ------------------------------------------------------------------------------

/** Sends one call to `target` through the host; resolves to the (unmarshalled) result. */
async function send(target, path, kind, args) {
  // A stub whose object's Durable Object was aborted, as workerd words it (the calls in flight
  // then got the abort's reason).
  if (target.contextGone === true) throw new Error(CONTEXT_GONE);
  if (target.released) {
    // Let go with its request's context (not disposed by the script): from another request,
    // workerd's cross-request error, as there.
    if (target.tornDown === true) internals.checkIo(target.owner, "Client");
    throw new Error(DISPOSED);
  }
  // Whether the host gives the receiver stubs of its own for those passed on (rpc_params_dup_stubs).
  const dupStubs = internals.feature("rpc_params_dup_stubs");
  const prepared = prepare(args, dupStubs);
  // The host stubs it names are not let go before it reaches the host (trackCall).
  const tracked = trackCall([...(target.stub !== undefined ? [target.stub] : []), ...prepared.passed.map((moved) => moved.stub)]);
  try {
    return await sendPrepared(target, path, kind, prepared, dupStubs, tracked);
  } finally {
    tracked.done();
  }
}

/** send(), once the arguments are prepared: their bodies read, the call sent and its answer unmarshalled. */
async function sendPrepared(target, path, kind, prepared, dupStubs, tracked) {
  const { stubs, passed, locals } = prepared;
  if (prepared.pending.length > 0) await Promise.all(prepared.pending);
  const bytes = serializeValue(prepared);
  // Otherwise they are handed over: the caller's are gone from here on (the receiver lets the
  // host stub go when its call ends), as workerd transferred them; so is a `new RpcStub()` sent
  // (its export holds the reference now).
  if (!dupStubs) {
    for (const moved of passed) if (!moved.released) unhold(moved);
    for (const holder of locals) internals.rpcLocal.disposeHolder(holder);
  }
  // errorValue: an error the callee throws comes back as a value (with its own properties).
  const call = { path, kind, stubs, dupStubs, errorValue: true };
  // A loaded worker's entrypoint (89_worker_loader.js) names its worker once the loader has it.
  if (target.ready !== undefined) Object.assign(call, await target.ready());
  // A stub's call goes to the host's stub table; a binding's (service or Durable Object, whose
  // object id and name ride along) to that binding.
  // A stream's chunk calls and a connect wait on the peer, not on a handler: no bindingMs.
  const untimed = target.untimed === true || kind === "connect";
  const sending =
    target.binding === undefined
      ? internals.hostCall("#rpc", "call", { ...call, stub: target.stub }, bytes, untimed)
      : internals.hostCall(target.binding, "rpc", { ...call, object: target.object, name: target.name, props: target.props, session: target.session }, bytes, untimed);
  tracked.sent();
  const [answer, payload] = await sending;
  if (answer.contextGone === true) target.contextGone = true;
  if (answer.error) throw remoteError(answer.error);
  if (payload === null) return undefined;
  const created = [];
  const result = unmarshal(payload, answer.stubs ?? [], created);
  if (answer.thrown) throw remoteError(result);
  // An object result gets a disposer of the stubs in it (`using result = await stub.method()`),
  // as workerd adds one.
  if (result !== null && typeof result === "object" && !Object.hasOwn(result, Symbol.dispose) && Object.isExtensible(result)) {
    Object.defineProperty(result, Symbol.dispose, { value: () => created.forEach((stub) => stub[Symbol.dispose]()), writable: true, configurable: true });
  }
  return result;
}

/**
 * A call result that can be awaited and also used at once (promise pipelining):
 * `stub.getCounter().increment()` calls `increment` on whatever `getCounter()` resolves to.
 * `value()` gives the promise of the value this stands for, made on first use.
 */
function pipelined(value, key, unboxed = undefined) {
  let memo;
  // `value()` gives a promise of `{ v }`: boxed, so that a stub or property met along the path is
  // not awaited (a thenable adopted) before the path's end, as workerd pipelines through it.
  const boxed = () => (memo ??= key === undefined ? value() : value().then(({ v }) => ({ v: readMember(v, key) })));
  const resolve = () => (key === undefined && unboxed !== undefined ? unboxed : boxed().then(({ v }) => v));
  // The request that made it: another may await a call's result (a plain promise), but not
  // pipeline on it or await a property of it, as in workerd.
  const owner = internals.ioOwner();
  return new Proxy(function rpcPromise() {}, {
    getPrototypeOf: protoTrap("RpcPromise"),
    get(_, name) {
      if (name === kKind) return "RpcPromise";
      if (name === "then" || name === "catch" || name === "finally") {
        if (key !== undefined) internals.checkIo(owner, "Pipeline");
        const promise = resolve();
        return promise[name].bind(promise);
      }
      if (typeof name === "symbol") return undefined;
      internals.checkIo(owner, "JsRpcPromise");
      return pipelined(boxed, name);
    },
    apply(_, __, args) {
      internals.checkIo(owner, "JsRpcPromise");
      const call =
        key === undefined
          ? () => boxed().then(({ v }) => callMember(v, undefined, args))
          : () => value().then(({ v }) => callMember(v, key, args));
      return started(call());
    },
  });
}

/**
 * A pipelined promise over a call already sent (its rejection is the caller's to see: marked
 * handled rather than given a reaction, so that awaiting it keeps the caller's async stack).
 */
function started(promise) {
  ops.markHandled(promise);
  return pipelined(() => promise.then((v) => ({ v })), undefined, promise);
}

function readMember(v, key) {
  if (v === null || v === undefined) throw new TypeError(`Cannot read "${key}" of ${v} (an RPC result).`);
  return v[key];
}

function callMember(v, key, args) {
  const f = key === undefined ? v : readMember(v, key);
  if (typeof f !== "function") throw new TypeError(`"${key ?? "the RPC result"}" is not a function.`);
  return Reflect.apply(f, v, args);
}

// Before fetcher_no_get_put_delete (2024-03-26) a binding's get(url), put(url, body) and
// delete(url) were fetch() with that method, as in workerd then.
const FETCH_SHORTCUTS = new Map([["get", "GET"], ["put", "PUT"], ["delete", "DELETE"]]);

function fetchShortcut(fetcher, method) {
  return method === "PUT"
    ? (url, body = undefined) => fetcher.fetch(url, { method, body })
    : (url) => fetcher.fetch(url, { method });
}

/**
 * A stub for something in another worker: property reads build a path, a call sends it.
 * `await stub.prop` reads a property over RPC; `stub[Symbol.dispose]()` releases it. The
 * names in `local` (fetch() of a service binding, a Durable Object stub's id) come from
 * `fetcher` instead.
 */
function remoteStub(target, path, fetcher = null, local = ["fetch", "connect"]) {
  const kind = path.length > 0 ? "RpcProperty" : target.object !== undefined ? "DurableObjectStub" : target.binding !== undefined && fetcher !== null ? "ServiceStub" : "RpcStub";
  return new Proxy(function rpcStub() {}, {
    getPrototypeOf: protoTrap(kind),
    get(_, name) {
      if (name === kKind) return kind;
      if (name === kTarget) return path.length === 0 ? target : undefined;
      if (path.length === 0) {
        // The class it is an instance of (`env.SVC.constructor()` is workerd's "Illegal constructor").
        if (name === "constructor" && KIND_PROTO[kind] !== undefined) return KIND_PROTO[kind]().constructor;
        if (name === Symbol.dispose) return () => target.stub !== undefined && release(target);
        if (name === "dup") return () => (target.stub !== undefined ? stubFor(target.described === undefined ? target.stub : { stub: target.stub, binding: target.described }) : remoteStub(target, path, fetcher, local));
        // fetch() on a stub received over RPC: into the object's fetch(), or through the
        // binding it stands for.
        if (name === "fetch" && target.stub !== undefined) {
          return async (input, init = undefined) => {
            if (target.released) throw new Error(DISPOSED);
            // Its release waits for it (trackCall), held as being prepared until answered.
            const tracked = trackCall([target.stub]);
            try {
              return await internals.fetchThroughHost("#rpc", new Request(input, init), { stub: target.stub });
            } finally {
              tracked.done();
            }
          };
        }
        // ctx.exports.<Entrypoint>({ props }).fetch(): the entrypoint's fetch() gets those props.
        if (name === "fetch" && fetcher !== null && target.props !== undefined) return (input, init = undefined) => internals.fetchWithProps(fetcher, target.props, input, init);
        if (fetcher !== null && (local.includes(name) || name === Symbol.toStringTag)) {
          const member = fetcher[name];
          return typeof member === "function" ? member.bind(fetcher) : member;
        }
        // service_binding_extra_handlers (experimental): a service binding's scheduled(options)
        // runs the bound worker's scheduled() handler and resolves to { outcome, noRetry }.
        if (fetcher !== null && name === "scheduled" && target.binding !== undefined && internals.compat?.enabled.includes("service_binding_extra_handlers")) {
          return async (options = {}) => {
            const time = options?.scheduledTime instanceof Date ? options.scheduledTime.getTime() : Number(options?.scheduledTime ?? Date.now());
            const [answer] = await internals.hostCall(target.binding, "scheduled", { cron: String(options?.cron ?? ""), scheduledTime: time });
            return answer;
          };
        }
        // service_binding_extra_handlers: queue(queueName, messages) runs the bound worker's
        // queue() handler on that batch (89_queue.js).
        if (fetcher !== null && name === "queue" && target.binding !== undefined && internals.compat?.enabled.includes("service_binding_extra_handlers")) {
          return (queueName, messages) => internals.fetcherQueue(target.binding, queueName, messages);
        }
        // A property for any name, even one the binding keeps (fetch), as workerd's test hook.
        if (fetcher !== null && name === "getRpcMethodForTestOnly") return (method) => remoteStub(target, [String(method)], fetcher, local);
        if (fetcher !== null && FETCH_SHORTCUTS.has(name) && !internals.feature("fetcher_no_get_put_delete")) {
          return fetchShortcut(fetcher, FETCH_SHORTCUTS.get(name));
        }
        // Bindings (service bindings, Durable Object stubs) have RPC methods from the rpc
        // flag (2024-04-03), or with the experimental flag, as in workerd; before it, only their
        // own members.
        if (fetcher !== null && !internals.feature("rpc") && !internals.feature("experimental")) return undefined;
      }
      if (name === "then") return path.length === 0 ? undefined : (ok, fail) => send(target, path, "get", []).then(ok, fail);
      // A property (an RpcProperty) is a promise of its value: catch() and finally() too.
      if ((name === "catch" || name === "finally") && path.length > 0) return (...a) => send(target, path, "get", [])[name](...a);
      if (typeof name === "symbol") return undefined;
      return remoteStub(target, [...path, name], fetcher, local);
    },
    apply(_, __, args) {
      // ctx.exports.<Entrypoint>({ props }): the same binding, its calls carrying `props` (the
      // entrypoint's ctx.props), as in workerd.
      if (path.length === 0 && target.binding?.startsWith("#self:") && args[0] !== null && typeof args[0] === "object" && "props" in args[0]) {
        // Service stubs and Durable Object classes in them kept as data (85_stub_storage.js).
        return remoteStub({ ...target, props: internals.encodeProps(args[0].props) }, [], fetcher, local);
      }
      return started(send(target, path, "call", args));
    },
  });
}

/** `env.NAME` of a service binding: fetch() as before, any other name an RPC method. */
internals.serviceStub = (name, fetcher) => remoteStub({ binding: name }, [], fetcher);
internals.remoteStub = remoteStub;

// ---- Shared with 84_rpc_serve.js (serving calls) ----------------------------------------------

internals.rpc = { copyValue, WALK_ON, send, stubFor, unown, exportStates, exportEvents, CONTEXT_GONE, DISPOSED, marshal, marshalAsync, unmarshal, release, releaseExport, handOver, onAllReleased, exported, kTarget, kKind, kLocal, protoTrap, started, RpcTarget, WorkerEntrypoint, DurableObject, WorkflowEntrypoint, RpcPromise, RpcProperty, ServiceStub };
