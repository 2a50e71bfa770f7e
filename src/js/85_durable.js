// Durable Objects inside the worker. For any worker with a namespace binding: `env.NS`
// (idFromName, newUniqueId, idFromString, get, getByName), DurableObjectId, and stubs whose
// fetch() and RPC methods travel through the host (lib/durable.js) to the worker that exports
// the class. In that worker: the live objects, one instance per id, constructed once with its
// DurableObjectState; calls wait while the object's blockConcurrencyWhile() runs; ctx.storage
// is the object's own SQLite database, called synchronously (ops.durable*), so a storage call
// never lets another event in, which is workerd's input-gate ordering.

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

class DurableObjectNamespace {
  #binding;
  #className;
  constructor(token, binding, className) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#className = className;
  }
  idFromName(name) {
    if (arguments.length === 0) throw new TypeError("idFromName: 1 argument required, but only 0 present.");
    name = String(name);
    return new DurableObjectId(kDurable, idForName(this.#className, name), name);
  }
  newUniqueId(options = undefined) {
    if (options?.jurisdiction !== undefined && typeof options.jurisdiction !== "string") throw new TypeError("newUniqueId: jurisdiction must be a string.");
    return new DurableObjectId(kDurable, toHex(crypto.getRandomValues(new Uint8Array(32))), undefined);
  }
  idFromString(id) {
    const text = String(id);
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
  const target = { binding, object: id.toString(), name: id.name };
  const fetcher = {
    id,
    name: id.name,
    fetch(input, init = undefined) {
      return internals.fetchThroughHost(binding, new Request(input, init), { object: target.object, name: target.name });
    },
    [Symbol.toStringTag]: "DurableObject",
  };
  return internals.remoteStub(target, [], fetcher, ["fetch", "id", "name"]);
}

internals.makeDurableObjectBinding = (name, className) => new DurableObjectNamespace(kDurable, name, className);

// ---- The objects this worker exports ----------------------------------------------------------

/** Reads `keys` from the database: a Map of the stored ones (values still serialized). */
function readRaw(handle, keys) {
  const values = ops.durableGet(handle, keys);
  const out = new Map();
  keys.forEach((key, i) => values[i] !== undefined && out.set(key, values[i]));
  return out;
}

function listOptions(options) {
  const { start, startAfter, end, prefix, reverse = false, limit } = options ?? {};
  if (start !== undefined && startAfter !== undefined) throw new TypeError("list: start and startAfter cannot both be given.");
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new TypeError("list: limit must be a positive integer.");
  const text = (v) => (v === undefined ? undefined : String(v));
  return { start: text(start), startAfter: text(startAfter), end: text(end), prefix: text(prefix), reverse: Boolean(reverse), limit };
}

/** Lists from the database: [key, serialized value] pairs in order. */
function listRaw(handle, o) {
  const [keys, values] = ops.durableList(handle, o.start, o.startAfter, o.end, o.prefix, o.reverse, o.limit);
  return keys.map((key, i) => [key, values[i]]);
}

const deserializeMap = (pairs) => new Map(Array.from(pairs, ([key, bytes]) => [key, ops.deserialize(bytes)]));

/** get(): one key's value, or a Map for an array of keys, through `read` (keys → Map of bytes). */
function getThrough(read, keys) {
  if (Array.isArray(keys)) return deserializeMap(read(checkKeys(keys)));
  const found = read([checkKey(keys)]);
  return found.size === 0 ? undefined : ops.deserialize(found.values().next().value);
}

function checkKeys(keys) {
  const list = keys.map((k) => checkKey(k));
  if (list.length > 128) throw new RangeError("Maximum number of keys is 128.");
  return list;
}

function entriesOf(keyOrEntries, value, given) {
  if (keyOrEntries !== null && typeof keyOrEntries === "object") {
    const entries = Object.entries(keyOrEntries);
    if (entries.length > 128) throw new RangeError("Maximum number of pairs is 128.");
    return entries.map(([k, v]) => [checkKey(k), ops.serialize(v)]);
  }
  if (given < 2) throw new TypeError("put: a value is required.");
  return [[checkKey(keyOrEntries), ops.serialize(value)]];
}

/** UTF-8 byte order, the order storage lists keys in. */
function compareUtf8(a, b) {
  const x = encoder.encode(a);
  const y = encoder.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

class DurableObjectStorage {
  #handle;
  /** The transactionSync() under way, whose overlay every call goes through. */
  #active = null;
  constructor(token, handle) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#handle = handle;
  }
  get(keys, options = undefined) {
    if (this.#active) return this.#active.get(keys);
    return promised(() => getThrough((list) => readRaw(this.#handle, list), keys));
  }
  put(keyOrEntries, value = undefined, options = undefined) {
    if (this.#active) return this.#active.put(...arguments);
    const given = arguments.length;
    return promised(() => {
      const entries = entriesOf(keyOrEntries, value, given);
      ops.durableWrite(this.#handle, entries.map(([k]) => k), entries.map(([, v]) => v), []);
    });
  }
  delete(keys, options = undefined) {
    if (this.#active) return this.#active.delete(keys);
    return promised(() => {
      if (Array.isArray(keys)) return ops.durableWrite(this.#handle, [], [], checkKeys(keys));
      return ops.durableWrite(this.#handle, [], [], [checkKey(keys)]) === 1;
    });
  }
  deleteAll(options = undefined) {
    return promised(() => ops.durableDeleteAll(this.#handle));
  }
  list(options = {}) {
    if (this.#active) return this.#active.list(options);
    return promised(() => deserializeMap(listRaw(this.#handle, listOptions(options))));
  }
  /**
   * Runs `closure(txn)`: its writes go to the database together when it resolves, or not at
   * all when it throws or calls `txn.rollback()`. Reads inside see its own writes.
   */
  async transaction(closure) {
    const txn = new DurableObjectTransaction(kDurable, this.#handle);
    let result;
    try {
      result = await closure(txn);
    } catch (error) {
      txn.rollback();
      throw error;
    }
    txn._commit();
    return result;
  }
  /** As transaction(), for a synchronous closure: storage calls made inside it belong to it. */
  transactionSync(closure) {
    if (this.#active) return closure();
    const txn = new DurableObjectTransaction(kDurable, this.#handle);
    let result;
    this.#active = txn;
    try {
      result = closure();
    } catch (error) {
      txn.rollback();
      throw error;
    } finally {
      this.#active = null;
    }
    txn._commit();
    return result;
  }
  sync() {
    return Promise.resolve();
  }
  getAlarm() {
    return Promise.reject(new Error("Durable Object alarms are not supported by workerbox yet."));
  }
  setAlarm() {
    return Promise.reject(new Error("Durable Object alarms are not supported by workerbox yet."));
  }
  deleteAlarm() {
    return Promise.resolve();
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectStorage";
  }
}

/** A transaction's view: its own writes over the database, applied at once by _commit(). */
class DurableObjectTransaction {
  #handle;
  /** key → serialized value, or null for a deletion. */
  #writes = new Map();
  #rolledBack = false;
  constructor(token, handle) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#handle = handle;
  }
  #read(keys) {
    const stored = readRaw(this.#handle, keys.filter((k) => !this.#writes.has(k)));
    const out = new Map();
    for (const key of keys) {
      const value = this.#writes.has(key) ? this.#writes.get(key) : stored.get(key);
      if (value !== undefined && value !== null) out.set(key, value);
    }
    return out;
  }
  get(keys) {
    return promised(() => getThrough((list) => this.#read(list), keys));
  }
  put(keyOrEntries, value = undefined) {
    const given = arguments.length;
    return promised(() => {
      for (const [key, bytes] of entriesOf(keyOrEntries, value, given)) this.#writes.set(key, bytes);
    });
  }
  delete(keys) {
    return promised(() => {
      const list = Array.isArray(keys) ? checkKeys(keys) : [checkKey(keys)];
      const existing = this.#read(list);
      for (const key of list) this.#writes.set(key, null);
      return Array.isArray(keys) ? existing.size : existing.size === 1;
    });
  }
  list(options = {}) {
    return promised(() => {
      const o = listOptions(options);
      const merged = new Map(listRaw(this.#handle, { ...o, limit: undefined }));
      for (const [key, bytes] of this.#writes) {
        const inRange =
          (o.start === undefined || compareUtf8(key, o.start) >= 0) &&
          (o.startAfter === undefined || compareUtf8(key, o.startAfter) > 0) &&
          (o.end === undefined || compareUtf8(key, o.end) < 0) &&
          (o.prefix === undefined || key.startsWith(o.prefix));
        if (bytes === null) merged.delete(key);
        else if (inRange) merged.set(key, bytes);
      }
      const keys = [...merged.keys()].sort(compareUtf8);
      if (o.reverse) keys.reverse();
      return deserializeMap(keys.slice(0, o.limit ?? keys.length).map((k) => [k, merged.get(k)]));
    });
  }
  rollback() {
    this.#rolledBack = true;
    this.#writes.clear();
  }
  _commit() {
    if (this.#rolledBack || this.#writes.size === 0) return;
    const puts = [...this.#writes].filter(([, v]) => v !== null);
    const deletes = [...this.#writes].filter(([, v]) => v === null).map(([k]) => k);
    ops.durableWrite(this.#handle, puts.map(([k]) => k), puts.map(([, v]) => v), deletes);
  }
  get [Symbol.toStringTag]() {
    return "DurableObjectTransaction";
  }
}

function checkKey(key) {
  if (key === undefined) throw new TypeError("A Durable Object storage key is required.");
  const text = String(key);
  if (encoder.encode(text).length > 2048) throw new RangeError("Keys cannot be larger than 2048 bytes.");
  return text;
}

/** A storage call's outcome as a promise, with the work done before it returns. */
function promised(work) {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}

const noop = () => {};

class DurableObjectState {
  #id;
  #storage;
  /** blockConcurrencyWhile() callbacks still running. */
  #blocks = 0;
  /** Calls waiting to be let in, and whether one let in from there is still running. */
  #waiting = [];
  #busy = false;
  constructor(token, id, storage) {
    if (token !== kDurable) throw new TypeError("Illegal constructor");
    this.#id = id;
    this.#storage = storage;
  }
  get id() {
    return this.#id;
  }
  get storage() {
    return this.#storage;
  }
  /** Runs `callback` now and holds every incoming call until its promise settles. */
  blockConcurrencyWhile(callback) {
    this.#blocks++;
    const run = (async () => callback())();
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
  get [Symbol.toStringTag]() {
    return "DurableObjectState";
  }
}

/** The live objects of this worker, by class and id. */
const live = new Map();

/**
 * The instance for a call from the host (`{ className, id, name, dir }`), made on first use.
 * Resolves once the object may take the call, to `{ instance, release }`: call `release()` when
 * the call is over.
 */
internals.durableObjectFor = async function durableObjectFor(spec) {
  const key = `${spec.className}\u0000${spec.id}`;
  let entry = live.get(key);
  if (entry === undefined) {
    const Class = internals.namespace?.[spec.className];
    if (typeof Class !== "function") {
      throw new TypeError(`The worker exports no Durable Object class named "${spec.className}".`);
    }
    const handle = ops.durableOpen(spec.dir ?? "", spec.className, spec.id);
    const id = new DurableObjectId(kDurable, spec.id, spec.name ?? undefined);
    const state = new DurableObjectState(kDurable, id, new DurableObjectStorage(kDurable, handle));
    entry = { state, instance: undefined };
    live.set(key, entry);
    try {
      entry.instance = new Class(state, internals.workerEnv);
    } catch (error) {
      live.delete(key);
      throw error;
    }
  }
  const release = await entry.state._enter();
  return { instance: entry.instance, release };
};
