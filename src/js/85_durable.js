// Durable Objects inside the worker. For any worker with a namespace binding: `env.NS`
// (idFromName, newUniqueId, idFromString, get, getByName), DurableObjectId, and stubs whose
// fetch() and RPC methods travel through the host (lib/durable.js) to the worker that exports
// the class. In that worker: the live objects, one instance per id, constructed once with its
// DurableObjectState; calls wait while the object's blockConcurrencyWhile() or transaction()
// runs; alarms and the host's own calls (runInDurableObject, eviction, listing ids). The
// storage API is in 85_durable_storage.js.

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one

const kDurable = Symbol("construct");
const HEX_ID = /^[0-9a-f]{64}$/;
const encoder = new TextEncoder();

const toHex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

class DurableObjectId {
  #hex;
  #name;
  constructor(token, hex, name) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#hex = hex;
    this.#name = name;
  }
  toString() {
    return this.#hex;
  }
  equals(other) {
    return other instanceof DurableObjectId && other.#hex === this.#hex;
  }
  /** The name it was made from with idFromName(), else undefined. */
  get name() {
    return this.#name;
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectId";
  }
}

/** idFromName: an HMAC-SHA-256 of the name keyed by the class, so each namespace has its own ids. */
function idForName(className, name) {
  const hash = ops.nodeHashCreate("sha256", encoder.encode(className));
  ops.nodeHashUpdate(hash, encoder.encode(name));
  return toHex(ops.nodeHashDigest(hash));
}

// workerd's ids (src/workerd/server/actor-id-impl.c++), for a namespace given Miniflare's unique
// key (`<script>-<Class>`, as under wrangler dev): key = SHA-256(unique key); an id is 16 bytes
// (the name's HMAC, or random) then the first 16 bytes of the HMAC of those, so idFromString()
// can tell an id of this namespace from any other.
const hmac = (key, bytes) => {
  const hash = ops.nodeHashCreate("sha256", key);
  ops.nodeHashUpdate(hash, bytes);
  return ops.nodeHashDigest(hash);
};
const workerdKeys = new Map();
function workerdKey(uniqueKey) {
  let key = workerdKeys.get(uniqueKey);
  if (key === undefined) {
    const hash = ops.nodeHashCreate("sha256");
    ops.nodeHashUpdate(hash, encoder.encode(uniqueKey));
    workerdKeys.set(uniqueKey, (key = ops.nodeHashDigest(hash)));
  }
  return key;
}
/** The 32-byte id whose first 16 bytes are `base`, in hex. */
function workerdId(uniqueKey, base) {
  const id = new Uint8Array(32);
  id.set(base.subarray(0, 16));
  id.set(hmac(workerdKey(uniqueKey), id.subarray(0, 16)).subarray(0, 16), 16);
  return toHex(id);
}
const HEX_ANY_CASE = /^[0-9a-fA-F]{64}$/;

class DurableObjectNamespace {
  #binding;
  #className;
  /** Miniflare's unique key of the namespace when its ids are workerd's, else undefined. */
  #uniqueKey;
  constructor(token, binding, className, uniqueKey = undefined) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#className = className;
    this.#uniqueKey = uniqueKey;
  }
  idFromName(name) {
    if (arguments.length === 0) throw new TypeError("idFromName: 1 argument required, but only 0 present.");
    name = String(name);
    if (this.#uniqueKey !== undefined) return new DurableObjectId(kDurable, workerdId(this.#uniqueKey, hmac(workerdKey(this.#uniqueKey), encoder.encode(name))), name);
    return new DurableObjectId(kDurable, idForName(this.#className, name), name);
  }
  newUniqueId(options = undefined) {
    if (options?.jurisdiction !== undefined && typeof options.jurisdiction !== "string") throw new TypeError("newUniqueId: jurisdiction must be a string.");
    if (this.#uniqueKey !== undefined) return new DurableObjectId(kDurable, workerdId(this.#uniqueKey, crypto.getRandomValues(new Uint8Array(16))), undefined);
    return new DurableObjectId(kDurable, toHex(crypto.getRandomValues(new Uint8Array(32))), undefined);
  }
  idFromString(id) {
    const text = String(id);
    if (this.#uniqueKey !== undefined) {
      if (!HEX_ANY_CASE.test(text)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
      const bytes = new Uint8Array(32);
      for (let i = 0; i < 32; i++) bytes[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
      const hex = workerdId(this.#uniqueKey, bytes);
      if (hex !== text.toLowerCase()) throw new TypeError("Durable Object ID is not valid for this namespace.");
      return new DurableObjectId(kDurable, hex, undefined);
    }
    if (!HEX_ID.test(text)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
    return new DurableObjectId(kDurable, text, undefined);
  }
  get(id, options = undefined) {
    if (!(id instanceof DurableObjectId)) throw new TypeError("get: the id must be a DurableObjectId from this namespace's idFromName(), newUniqueId() or idFromString().");
    return durableStub(this.#binding, id);
  }
  getByName(name, options = undefined) {
    return this.get(this.idFromName(name), options);
  }
  jurisdiction(name) {
    return this;
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectNamespace";
  }
}

/** A stub for one object: `id`, `name`, fetch(), and RPC methods (src/js/84_rpc.js). */
function durableStub(binding, id) {
  // session: this stub's own link to the object; ctx.abort() there breaks it for good (a new
  // stub gets a new object), as workerd's stub is disconnected.
  const target = { binding, object: id.toString(), name: id.name, session: internals.randomToken() };
  const fetcher = {
    id,
    name: id.name,
    fetch(input, init = undefined) {
      // Before durable_object_fetch_requires_full_url (2021-11-10) a URL without a scheme or
      // host was taken relative to https://fake-host/, as in workerd then.
      if (!(input instanceof Request) && !internals.feature("durable_object_fetch_requires_full_url")) {
        input = new URL(String(input), "https://fake-host/").href;
      }
      return internals.fetchThroughHost(binding, new Request(input, init), { object: target.object, name: target.name, session: target.session });
    },
    [Symbol.toStringTag]: "DurableObject",
  };
  return internals.remoteStub(target, [], fetcher, ["fetch", "id", "name"]);
}

/** A message and the answer an object's WebSockets give it without waking the object. */
class WebSocketRequestResponsePair {
  #request;
  #response;
  constructor(request, response) {
    this.#request = String(request);
    this.#response = String(response);
  }
  get request() {
    return this.#request;
  }
  get response() {
    return this.#response;
  }
}
internals.defineGlobal("WebSocketRequestResponsePair", WebSocketRequestResponsePair);

// The kind's rest is "<ClassName>", or "<ClassName>:<unique key>" for workerd's ids and layout.
internals.makeDurableObjectBinding = (name, rest) => {
  const cut = rest.indexOf(":");
  const namespace = cut === -1 ? new DurableObjectNamespace(kDurable, name, rest) : new DurableObjectNamespace(kDurable, name, rest.slice(0, cut), rest.slice(cut + 1));
  return name.startsWith("#self-do:") ? loopbackNamespace(namespace, name) : namespace;
};

// ---- Facets (workerd's ctx.facets) -------------------------------------------------------------

/**
 * A Durable Object class as a value (workerd's DurableObjectClass): what ctx.exports.<Class>({ props })
 * and a loaded worker's getDurableObjectClass() give, for ctx.facets.get(). It crosses RPC as a
 * stub (src/js/84_rpc.js), so a loaded worker can be given one of its parent's classes.
 */
internals.durableObjectClass = (target) =>
  new Proxy(function DurableObjectClass() {}, {
    get(_, key) {
      if (key === internals.rpc.kTarget) return target;
      if (key === Symbol.toStringTag) return "DurableObjectClass";
      return undefined;
    },
    apply() {
      throw new TypeError("Illegal invocation");
    },
  });

/** Read through ctx.exports.<Class>: true (85_stub_storage.js names it in its DataCloneError). */
internals.kLoopbackNamespace = Symbol("workerbox.loopbackNamespace");

/** ctx.exports.<Class>: the namespace, and called with { props } the class as a value (workerd's LoopbackDurableObjectNamespace). */
function loopbackNamespace(namespace, binding) {
  return new Proxy(function LoopbackDurableObjectNamespace() {}, {
    get(_, key) {
      if (key === internals.kLoopbackNamespace) return true;
      const value = Reflect.get(namespace, key, namespace);
      return typeof value === "function" ? value.bind(namespace) : value;
    },
    has: (_, key) => key in namespace,
    getPrototypeOf: () => Object.getPrototypeOf(namespace),
    apply(_, __, [options]) {
      // Its props as a binding keeps them (service stubs and classes in them as data: 85_stub_storage.js).
      return internals.durableObjectClass({ binding, props: internals.encodeProps(options?.props) });
    },
  });
}

/** What the host needs to find a facet's class (lib/facets.js): a stub, one of this worker's classes, or a loaded worker's. */
async function classEntry(value) {
  const target = typeof value === "function" ? value[internals.rpc.kTarget] : undefined;
  if (target?.loaded === true && target.ready !== undefined) {
    const { loaded, entrypoint, propsId } = await target.ready();
    return { binding: target.binding, loaded, entrypoint, propsId };
  }
  if (target?.stub !== undefined) return { remote: target.stub };
  if (typeof target?.binding === "string" && target.binding.startsWith("#self-do:")) return { binding: target.binding, props: target.props };
  throw new TypeError("A facet's class must be a Durable Object class: ctx.exports.<Class>({ props }), or a loaded worker's getDurableObjectClass().");
}

/**
 * `ctx.facets.get(name, getStartupOptions)`: a stub for the facet `name` of this object, an
 * object of the class getStartupOptions() names (asked on first use), with an id of its own
 * derived from this object's; its calls go through the host (lib/facets.js) to the worker that
 * has the class.
 */
function facetStub(state, name, getStartupOptions) {
  if (typeof getStartupOptions !== "function") throw new TypeError("Failed to execute 'get' on 'DurableObjectFacets': parameter 2 is not of type 'Function'.");
  const facet = idForName(`facet:${state.id.toString()}`, name);
  let fields;
  const ready = () =>
    (fields ??= (async () => {
      const options = await getStartupOptions();
      return { facet, class: await classEntry(options?.class) };
    })());
  // Sent as "#rpc" calls with `facet` set; `loaded` keeps it in this worker (not transferable).
  return internals.remoteStub({ binding: "#rpc", loaded: true, ready }, []);
}

/** The class argument of the storage ops: the class, or "workerd:<unique key>" (workerd's layout, src/runtime/store/durable.rs). */
const storageClass = (spec) => (spec.uniqueKey ? `workerd:${spec.uniqueKey}` : spec.className);

// ---- The objects this worker exports ----------------------------------------------------------

const noop = () => {};

class DurableObjectState {
  #id;
  #storage = null;
  /** blockConcurrencyWhile() callbacks still running. */
  #blocks = 0;
  /** Calls waiting to be let in, and whether one let in from there is still running. */
  #waiting = [];
  #busy = false;
  /** Set by abort(): the error calls into the object fail with (internals.abortDurable). */
  _aborted = undefined;
  /** How to fail each call in flight into the object (or its objects) when it is aborted. */
  _inflight = new Set();
  constructor(token, id, makeStorage) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#id = id;
    this.#storage = makeStorage((work) => this._hold(work));
  }
  get id() {
    return this.#id;
  }
  get storage() {
    return this.#storage;
  }
  get exports() {
    return internals.ctxExports();
  }
  /** The props its class was given (a facet's: `ctx.exports.Class({ props })`); `{}` without. */
  get props() {
    return this._props ?? {};
  }
  /** workerd's Durable Object facets: `get(name, () => ({ class }))` (see facetStub). */
  get facets() {
    const state = this;
    return (this._facets ??= {
      get: (name, getStartupOptions) => facetStub(state, String(name), getStartupOptions),
      abort() {},
      delete() {},
    });
  }
  /** Runs `callback` now and holds every incoming call until its promise settles; its failure breaks the object, as ctx.abort() does. */
  blockConcurrencyWhile(callback) {
    const run = this._hold(callback);
    run.catch((error) => internals.abortDurable(this, error));
    return run;
  }
  /**
   * workerd's ctx.abort(reason): the object is reset. The calls in flight into it (and into the
   * objects it handed out) fail with the reason, as do later calls through the stubs that reached
   * it; a stub got afterwards reaches a new object. The running call fails with it too.
   */
  abort(reason = undefined) {
    const error = reason instanceof Error ? reason : new Error(reason === undefined ? "Worker execution was aborted due to call to ctx.abort()." : String(reason));
    internals.abortDurable(this, error);
    throw error;
  }
  /** `value` (a call's result), failing with the abort reason if the object is aborted first. */
  _abortable(value) {
    if (this._aborted !== undefined) return Promise.reject(this._aborted);
    return new Promise((resolve, reject) => {
      this._inflight.add(reject);
      Promise.resolve(value)
        .then(resolve, reject)
        .finally(() => this._inflight.delete(reject));
    });
  }
  /** Runs `work` now; calls that arrive meanwhile wait until its promise settles. */
  _hold(work) {
    this.#blocks++;
    const run = (async () => work())();
    run
      .then(noop, noop)
      .then(() => {
        this.#blocks--;
        this.#letIn();
      });
    return run;
  }
  /**
   * Resolves to a release function once the object may take a call. Calls that had to wait
   * (behind blockConcurrencyWhile) are let in one at a time, each after the one before it
   * finished, so a backlog cannot interleave its storage reads and writes.
   */
  _enter() {
    // The event of the async flow that calls in (a call resumed by another event's turn is still its caller's).
    const event = internals.flowEvent();
    if (event !== undefined) {
      durableEvents.add(event);
      durableStates.set(event, this);
    }
    if (this.#blocks === 0 && this.#waiting.length === 0 && !this.#busy) return Promise.resolve(noop);
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#letIn();
    });
  }
  #letIn() {
    if (this.#blocks > 0 || this.#busy || this.#waiting.length === 0) return;
    this.#busy = true;
    this.#waiting.shift()(() => {
      this.#busy = false;
      this.#letIn();
    });
  }
  waitUntil(promise) {
    internals.trackBackground(promise);
  }

  // ---- WebSockets (the hibernation API; the object is kept live while it has any) ----------

  /** The object's accepted WebSockets and their tags. */
  #sockets = new Map();
  #autoResponse = null;
  #autoResponded = new WeakMap();
  #eventTimeout = null;
  /** The instance, for the WebSocket handlers (set once it is constructed). */
  _instance = undefined;

  /** Accepts `ws` for this object: its events go to the class's webSocketMessage/Close/Error. */
  acceptWebSocket(ws, tags = []) {
    if (!internals.isWebSocket(ws)) throw new TypeError("acceptWebSocket: the first argument must be a WebSocket.");
    if (!Array.isArray(tags) || tags.length > 10 || tags.some((t) => typeof t !== "string" || t.length > 256)) {
      throw new TypeError("acceptWebSocket: tags must be an array of at most 10 strings of at most 256 characters.");
    }
    ws.accept();
    this.#sockets.set(ws, { tags: [...tags] });
    ws.addEventListener("message", (event) => {
      const auto = this.#autoResponse;
      if (auto !== null && event.data === auto.request) {
        ws.send(auto.response);
        this.#autoResponded.set(ws, new Date());
        return;
      }
      this.#toInstance("webSocketMessage", ws, event.data);
    });
    ws.addEventListener("close", (event) => {
      this.#sockets.delete(ws);
      this.#toInstance("webSocketClose", ws, event.code, event.reason, event.wasClean);
    });
    ws.addEventListener("error", (event) => {
      this.#sockets.delete(ws);
      this.#toInstance("webSocketError", ws, event.error);
    });
  }
  /** Runs a WebSocket handler of the instance as a call (one at a time with the others). */
  #toInstance(name, ...args) {
    const run = (async () => {
      const release = await this._enter();
      try {
        const handler = this._instance?.[name];
        if (typeof handler === "function") await handler.apply(this._instance, args);
      } finally {
        release();
      }
    })();
    internals.trackBackground(run);
  }
  getWebSockets(tag = undefined) {
    const out = [];
    for (const [ws, { tags }] of this.#sockets) if (tag === undefined || tags.includes(String(tag))) out.push(ws);
    return out;
  }
  getTags(ws) {
    const entry = this.#sockets.get(ws);
    if (entry === undefined) throw new TypeError("getTags: this WebSocket was not accepted with acceptWebSocket() by this object.");
    return [...entry.tags];
  }
  /** Answers a message equal to `pair.request` with `pair.response` without calling the object. */
  setWebSocketAutoResponse(pair = undefined) {
    if (pair !== undefined && !(pair instanceof WebSocketRequestResponsePair)) throw new TypeError("setWebSocketAutoResponse: expected a WebSocketRequestResponsePair.");
    this.#autoResponse = pair === undefined ? null : { request: pair.request, response: pair.response };
  }
  getWebSocketAutoResponse() {
    return this.#autoResponse === null ? null : new WebSocketRequestResponsePair(this.#autoResponse.request, this.#autoResponse.response);
  }
  getWebSocketAutoResponseTimestamp(ws) {
    return this.#autoResponded.get(ws) ?? null;
  }
  setHibernatableWebSocketEventTimeout(ms = undefined) {
    this.#eventTimeout = ms ?? null;
  }
  getHibernatableWebSocketEventTimeout() {
    return this.#eventTimeout;
  }
  /** Whether WebSockets keep the object from being evicted. */
  _hasSockets() {
    return this.#sockets.size > 0;
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectState";
  }
}

/** The live objects of this worker, by class and id: `{ state, instance }`. */
const live = new Map();

const liveKey = (spec) => `${spec.className}\u0000${spec.dir ?? ""}\u0000${spec.id}`;

/**
 * Classes a main module supplies on demand through its `__workerboxDurableClass(name)` export
 * (workerbox/vitest's runner, whose objects' classes live in modules the tests load later).
 */
const suppliedClasses = new Map();

async function supplyClass(className) {
  const supply = internals.namespace?.__workerboxDurableClass;
  if (typeof internals.namespace?.[className] === "function" || typeof supply !== "function" || suppliedClasses.has(className)) return;
  const Class = await supply(className);
  if (typeof Class === "function") suppliedClasses.set(className, Class);
}

/** The object for `spec` (`{ className, id, name, dir, sql }`), constructed on first use. */
function liveObject(spec) {
  const key = liveKey(spec);
  let entry = live.get(key);
  if (entry !== undefined) return entry;
  const exported = internals.namespace?.[spec.className];
  const Class = typeof exported === "function" ? exported : suppliedClasses.get(spec.className);
  if (typeof Class !== "function") {
    throw new TypeError(`The worker exports no Durable Object class named "${spec.className}".`);
  }
  const handle = ops.durableOpen(spec.dir ?? "", storageClass(spec), spec.id);
  const id = new DurableObjectId(kDurable, spec.id, spec.name ?? undefined);
  const identity = { className: spec.className, id: spec.id, name: spec.name ?? null, dir: spec.dir, sql: spec.sql, uniqueKey: spec.uniqueKey };
  const makeStorage = (hold) => internals.makeDurableStorage(handle, { spec: identity, sql: spec.sql !== false, hold });
  const state = new DurableObjectState(kDurable, id, makeStorage);
  // A facet's props (lib/facets.js): plain, or an RPC value with stubs.
  if (spec.propsValue !== undefined) state._props = internals.rpc.unmarshal(Uint8Array.fromBase64(spec.propsValue.bytes), spec.propsValue.stubs);
  else if (spec.props !== undefined) state._props = internals.decodeProps(spec.props);
  entry = { state, instance: undefined, handle };
  live.set(key, entry);
  try {
    entry.instance = new Class(state, internals.workerEnv);
    state._instance = entry.instance;
  } catch (error) {
    live.delete(key);
    throw error;
  }
  return entry;
}

/**
 * The instance for a call from the host, made on first use. Resolves once the object may take
 * the call, to `{ instance, state, handle, release }`: call `release()` when the call is over.
 */
internals.durableObjectFor = async function durableObjectFor(spec, session = undefined) {
  const broken = session === undefined ? undefined : brokenSessions.get(session);
  if (broken !== undefined) throw broken;
  if (!live.has(liveKey(spec))) await supplyClass(spec.className);
  const entry = liveObject(spec);
  if (session !== undefined) (entry.sessions ??= new Set()).add(session);
  const release = await entry.state._enter();
  return { instance: entry.instance, state: entry.state, handle: entry.handle, release };
};

/**
 * Runs the object's alarm() handler for the alarm the host scheduled (`retryCount`: how many
 * times it failed before). The stored alarm is cleared while the handler runs (it may set a new
 * one); when the handler throws, the alarm is kept for the host's retry, and the error is
 * thrown. An alarm deleted or moved later meanwhile does not run: `{ ran: false }`.
 */
async function runAlarm(entered, retryCount, force) {
  const at = ops.durableAlarm(entered.handle);
  if (at === null || (!force && retryCount === 0 && at > Date.now() + 5)) return { ran: false, next: at };
  if (typeof entered.instance.alarm !== "function") {
    ops.durableSetAlarm(entered.handle, null);
    throw new TypeError("The Durable Object has an alarm set but no alarm() handler.");
  }
  ops.durableSetAlarm(entered.handle, null);
  try {
    await entered.instance.alarm({ retryCount, isRetry: retryCount > 0 });
  } catch (error) {
    if (ops.durableAlarm(entered.handle) === null) ops.durableSetAlarm(entered.handle, at);
    throw error;
  }
  return { ran: true, next: ops.durableAlarm(entered.handle) };
}

/**
 * Calls the host makes on the objects of this worker (lib/durable.js): `alarm` runs an alarm,
 * `run` runs a function the host gave (as source) with the instance and its state, `evict`
 * drops live instances (storage stays), `ids` lists the ids that have storage, `alarms` lists
 * the alarms stored on disk (to schedule them again in a new process).
 */
internals.durableHostCall = async function durableHostCall(call, args) {
  const spec = call.durableObject;
  switch (call.kind) {
    case "alarm":
    case "run": {
      const entered = await internals.durableObjectFor(spec);
      try {
        if (call.kind === "alarm") return await runAlarm(entered, call.retryCount ?? 0, call.force === true);
        const run = ops.durableCompile(call.source)();
        if (typeof run !== "function") throw new TypeError("runInDurableObject: the callback must be a function.");
        return await run(entered.instance, entered.state, args[0]);
      } finally {
        entered.release();
      }
    }
    case "evict": {
      let evicted = 0;
      for (const [key, entry] of live) {
        const [className, dir, id] = key.split("\u0000");
        if (className !== spec.className || dir !== (spec.dir ?? "") || (spec.id !== undefined && id !== spec.id)) continue;
        // An object with open WebSockets stays live (workerbox does not hibernate them).
        if (entry.state._hasSockets()) continue;
        live.delete(key);
        evicted++;
      }
      return evicted;
    }
    case "checkpoint": {
      // A test checkpoint (workerbox/vitest's isolatedStorage): the class's live instances are
      // dropped before a rollback, so that the next call makes them again from the storage as
      // it was.
      if (call.action === "rollback") {
        for (const key of [...live.keys()]) if (key.split("\u0000")[0] === spec.className) live.delete(key);
      }
      // A rollback answers [[id, alarm time or null], …] for the host to arm the alarms again.
      return ops.durableCheckpoint(spec.dir ?? "", storageClass(spec), call.action);
    }
    case "ids":
      return ops.durableIds(spec.dir ?? "", storageClass(spec));
    case "alarms":
      if (spec.dir === undefined) return [];
      return ops.durableStoredAlarms(spec.dir, storageClass(spec)).map(([id, at]) => ({ id, at }));
  }
  throw new TypeError(`unknown Durable Object host call "${call.kind}"`);
};

// ctx.exports came with enable_ctx_exports (2025-11-17); src/js/90_entry.js removes it before.
internals.durableStatePrototype = DurableObjectState.prototype;
/** Events that are calls into a Durable Object (each enters its state above), until they end. */
const durableEvents = new Set();
internals.isDurableEvent = (id) => durableEvents.has(id);
internals.eventEndHooks.push((id) => {
  durableEvents.delete(id);
  durableStates.delete(id);
});

/** Event id → the Durable Object state a call of it entered (whose objects it hands out belong to it). */
const durableStates = new Map();
internals.durableStateOf = (event) => (event === undefined ? undefined : durableStates.get(event));

/** Stub sessions whose object was aborted → the error their calls fail with. */
const brokenSessions = new Map();

/** Aborts the object of `state` with `error` (DurableObjectState.abort, a failed blockConcurrencyWhile). */
internals.abortDurable = (state, error) => {
  if (state._aborted !== undefined) return;
  state._aborted = error;
  for (const [key, entry] of live) {
    if (entry.state !== state) continue;
    live.delete(key);
    for (const session of entry.sessions ?? []) brokenSessions.set(session, error);
  }
  for (const reject of [...state._inflight]) reject(error);
  state._inflight.clear();
};
