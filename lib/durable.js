"use strict";
// Durable Object namespaces in the host: `durableObject(className, options)` builds the binding.
// A stub's calls (fetch() and RPC methods) come here and go on to the worker that exports the
// class — `worker` when given, else the worker the binding is bound to — where the live objects
// and their storage are (src/js/85_durable.js, src/runtime/store/durable.rs). This file also
// owns what the host does for those objects on its own: their alarms (a timer per object, run
// with workerd's retries, and found again on disk when a worker starts), eviction of idle
// objects, and the host API on the binding (ids, get, runInDurableObject, runAlarm, evict).

const path = require("node:path");
const { Binding } = require("./bindings.js");
const rpc = require("./rpc.js");

const CLASS_NAME = /^[A-Za-z_$][\w$]*$/;
const HEX_ID = /^[0-9a-f]{64}$/;
const OPTIONS = ["worker", "dir", "sql", "evictAfterMs", "uniqueKey"];
/** workerd evicts an idle object after 70 to 140 seconds; this is the lower end. */
const DEFAULT_EVICT_AFTER_MS = 70_000;
/** An alarm whose handler throws is retried up to 6 times, 2 s after the first failure and
 * doubling, as workerd does. */
const ALARM_RETRIES = 6;
const ALARM_FIRST_RETRY_MS = 2_000;
/** The longest delay Node's timers take; a later alarm is re-armed when that much has passed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

let log = () => {};

/** lib/api.js hands over how to write a line to a worker's onLog. */
function setLogger(logger) {
  log = logger;
}

/**
 * A Durable Object namespace binding for class `className`, exported by the worker it is bound
 * to or by `options.worker`. Storage is in memory, or one SQLite file per object under
 * `options.dir` (`<dir>/<className>/<id>.sqlite3`). With `options.uniqueKey` (Miniflare's
 * `<script>-<Class>`; loadProject gives it) ids are workerd's and each object's file is
 * `<dir>/<uniqueKey>/<id>.sqlite` in workerd's layout, as `wrangler dev` keeps it.
 */
function durableObject(className, options = {}) {
  if (typeof className !== "string" || !CLASS_NAME.test(className)) {
    throw new TypeError(`durableObject(): the class name must be the name of an exported class, got ${JSON.stringify(className)}`);
  }
  if (options === null || typeof options !== "object") throw new TypeError("durableObject(): options must be an object such as { worker, dir }");
  const unknown = Object.keys(options).filter((key) => !OPTIONS.includes(key));
  if (unknown.length > 0) throw new TypeError(`durableObject(): unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (known: ${OPTIONS.join(", ")})`);
  const { worker, dir, sql = true, evictAfterMs = DEFAULT_EVICT_AFTER_MS, uniqueKey } = options;
  if (uniqueKey !== undefined && (typeof uniqueKey !== "string" || uniqueKey === "" || /[/\\\0]/.test(uniqueKey) || uniqueKey.startsWith("."))) {
    throw new TypeError(`durableObject(): options.uniqueKey must be a non-empty name usable as a folder name (Miniflare's "<script>-<Class>"), got ${JSON.stringify(uniqueKey)}`);
  }
  if (worker !== undefined && !rpc.isWorker(worker)) throw new TypeError("durableObject(): options.worker must be a workerbox worker that exports the class");
  if (dir !== undefined && (typeof dir !== "string" || dir === "")) throw new TypeError("durableObject(): options.dir must be a folder path");
  if (typeof sql !== "boolean") throw new TypeError("durableObject(): options.sql must be a boolean (false: the class has no SQL API, as for a new_classes migration)");
  if (!(evictAfterMs === Infinity || (Number.isInteger(evictAfterMs) && evictAfterMs >= 0 && evictAfterMs <= MAX_TIMER_MS))) {
    throw new TypeError(`durableObject(): options.evictAfterMs must be a number of milliseconds (0 or more) or Infinity, got ${String(evictAfterMs)}`);
  }
  const binding = new DurableObjectNamespaceBinding(`durable_object:${className}${uniqueKey === undefined ? "" : `:${uniqueKey}`}`, null);
  binding.className = className;
  binding.worker = worker;
  binding.dir = dir === undefined ? undefined : path.resolve(dir);
  binding.sql = sql;
  binding.uniqueKey = uniqueKey;
  binding.evictAfterMs = evictAfterMs;
  binding.answer = (method, args, bytes, caller) => answer(binding, method, args, bytes, caller);
  return binding;
}

/** Where an object lives and what the worker needs to make it. */
const specOf = (namespace, id, name = null) => ({ className: namespace.className, id, name, dir: namespace.dir, sql: namespace.sql, uniqueKey: namespace.uniqueKey });

async function answer(namespace, method, args, bytes, caller) {
  const home = namespace.worker ?? caller;
  if (home === undefined) throw new Error(`The Durable Object namespace for ${namespace.className} has no worker to run in.`);
  const spec = specOf(namespace, args.object, args.name ?? null);
  // session: the caller's stub, which the object's ctx.abort() (or process.exit()) cuts off (src/js/85_durable.js).
  const session = typeof args.session === "string" ? { session: args.session } : {};
  if (method === "fetch") return inObject(home, namespace, spec, () => rpc.fetchInto(home, { durableObject: spec, ...session }, args, bytes, caller));
  if (method !== "rpc") throw new TypeError(`unknown Durable Object operation "${method}"`);
  const call = { durableObject: spec, path: args.path, kind: args.kind, stubs: rpc.hostIds(caller, args.stubs, args.dupStubs), ...(args.errorValue === true ? { errorValue: true } : {}), ...session };
  // Stubs of the caller's own bindings in the result are named for it (lib/rpc.js describeBindings).
  return rpc.describeAnswer(await inObject(home, namespace, spec, () => rpc.callWorker(home, call, bytes)), caller);
}

// ---- Idle objects -----------------------------------------------------------------------------

/** Per home worker: object key → { calls in progress, idle timer }. */
const activity = new WeakMap();

const objectKey = (spec) => `${spec.className}\u0000${spec.dir ?? ""}\u0000${spec.id}`;

/** Runs `work` (a call into the object) and evicts the object once it has been idle long enough. */
async function inObject(home, namespace, spec, work) {
  let table = activity.get(home);
  if (table === undefined) activity.set(home, (table = new Map()));
  const key = objectKey(spec);
  let entry = table.get(key);
  if (entry === undefined) table.set(key, (entry = { calls: 0, timer: null }));
  entry.calls++;
  clearTimeout(entry.timer);
  try {
    return await work();
  } finally {
    entry.calls--;
    if (entry.calls === 0 && namespace.evictAfterMs !== Infinity) {
      entry.timer = setTimeout(() => {
        if (entry.calls > 0 || table.get(key) !== entry) return;
        table.delete(key);
        hostCall(home, { ...spec }, "evict").catch(() => {});
      }, namespace.evictAfterMs);
      entry.timer.unref();
    }
  }
}

/** A call from Node into the objects of `home` (internals.durableHostCall, or a method of a Node stub); its value. */
async function hostCall(home, spec, kind, extra = {}, args = [], refuseStubs = false) {
  const answer = await rpc.callWorker(home, { durableObject: spec, kind, path: [], stubs: [], ...extra }, rpc.serialize(args));
  const parsed = JSON.parse(answer.json);
  if (parsed.error) throw rpc.remoteError(parsed.error);
  if (refuseStubs && (parsed.stubs ?? []).length > 0) throw new TypeError("The Durable Object returned a function or RpcTarget, which a stub in Node cannot receive.");
  return answer.bytes === undefined || answer.bytes === null ? undefined : rpc.deserialize(answer.bytes);
}

// ---- Alarms -------------------------------------------------------------------------------------

/** Per home worker: object key → { spec, at, retry, timer }. */
const alarms = new WeakMap();

function alarmsOf(home) {
  let table = alarms.get(home);
  if (table === undefined) alarms.set(home, (table = new Map()));
  return table;
}

/** Schedules (or, with `at` null, cancels) the alarm of the object `spec` in `home`. */
function scheduleAlarm(home, spec, at, retry = 0) {
  const table = alarmsOf(home);
  const key = objectKey(spec);
  const previous = table.get(key);
  if (previous !== undefined) clearTimeout(previous.timer);
  table.delete(key);
  if (at === null || at === undefined) return;
  const entry = { spec, at, retry, timer: null };
  const arm = () => {
    const wait = Math.max(0, entry.at - Date.now());
    entry.timer = setTimeout(() => (wait > MAX_TIMER_MS ? arm() : fireAlarm(home, key, entry)), Math.min(wait, MAX_TIMER_MS));
    entry.timer.unref();
  };
  table.set(key, entry);
  arm();
}

/** Runs a scheduled alarm; a throwing handler is retried with workerd's backoff. */
async function fireAlarm(home, key, entry) {
  const table = alarmsOf(home);
  if (table.get(key) !== entry) return;
  try {
    await hostCall(home, entry.spec, "alarm", { retryCount: entry.retry });
    if (table.get(key) === entry) table.delete(key);
  } catch (error) {
    if (error?.code === "ERR_WORKER_DISPOSED" || table.get(key) !== entry) return;
    const where = `Durable Object ${entry.spec.className} ${entry.spec.id}`;
    if (entry.retry >= ALARM_RETRIES) {
      table.delete(key);
      log(home, "error", `${where}: alarm() threw and has been retried ${ALARM_RETRIES} times; giving up: ${error?.stack ?? error}`);
      return;
    }
    const delay = ALARM_FIRST_RETRY_MS * 2 ** entry.retry;
    log(home, "error", `${where}: alarm() threw; retrying in ${delay / 1000} s (retry ${entry.retry + 1} of ${ALARM_RETRIES}): ${error?.stack ?? error}`);
    scheduleAlarm(home, entry.spec, Date.now() + delay, entry.retry + 1);
  }
}

/** `#durable` calls from a worker's objects (setAlarm/deleteAlarm tell the host the time). */
async function callFromWorker(method, args, caller) {
  if (method !== "setAlarm") throw new TypeError(`unknown Durable Object host operation "${method}"`);
  const { className, id, name = null, dir, sql, uniqueKey, time } = args;
  scheduleAlarm(caller, { className, id, name, dir, sql, uniqueKey }, time);
  return { json: "null" };
}

/**
 * A worker is up: the alarms stored on disk for the objects it is home to (through the
 * namespaces in `definitions`) are scheduled again, as workerd does after a restart.
 */
async function workerCreated(worker, definitions) {
  for (const definition of Object.values(definitions)) {
    if (!(definition instanceof DurableObjectNamespaceBinding)) continue;
    definition._bound(worker);
    const home = definition.worker ?? worker;
    if (definition.dir === undefined) continue;
    const scanned = restored.get(home) ?? new Set();
    restored.set(home, scanned);
    const where = `${definition.className}\u0000${definition.dir}\u0000${definition.uniqueKey ?? ""}`;
    if (scanned.has(where)) continue;
    scanned.add(where);
    const stored = await hostCall(home, specOf(definition, undefined), "alarms");
    for (const { id, at } of stored) scheduleAlarm(home, specOf(definition, id), at);
  }
}
/** Per home worker, the (class, folder) pairs whose stored alarms were scheduled already. */
const restored = new WeakMap();

/** Cancels a disposed worker's alarms and idle timers. */
function workerDisposed(worker) {
  for (const entry of alarms.get(worker)?.values() ?? []) clearTimeout(entry.timer);
  for (const entry of activity.get(worker)?.values() ?? []) clearTimeout(entry.timer);
  alarms.delete(worker);
  activity.delete(worker);
  for (const namespace of boundTo.get(worker) ?? []) namespace._unbound(worker);
  boundTo.delete(worker);
}
/** The namespaces bound to each worker, so that they forget it when it is disposed. */
const boundTo = new WeakMap();

// ---- The host API ---------------------------------------------------------------------------------

/** workerd's id key for a namespace's unique key: SHA-256 of it (src/workerd/server/actor-id-impl.c++). */
const workerdKey = (uniqueKey) => require("node:crypto").createHash("sha256").update(uniqueKey).digest();

/** workerd's id whose first 16 bytes are those of `base`: then 16 bytes of their HMAC (the MAC), in hex. */
function workerdId(uniqueKey, base) {
  const first = Buffer.from(base.subarray(0, 16));
  const mac = require("node:crypto").createHmac("sha256", workerdKey(uniqueKey)).update(first).digest().subarray(0, 16);
  return Buffer.concat([first, mac]).toString("hex");
}

/**
 * The binding `durableObject()` returns: given to createWorker's `bindings`, and a small API
 * for Node (tests, tools) on the namespace's objects.
 */
class DurableObjectNamespaceBinding extends Binding {
  #bound = new Set();

  _bound(worker) {
    this.#bound.add(worker);
    let set = boundTo.get(worker);
    if (set === undefined) boundTo.set(worker, (set = new Set()));
    set.add(this);
  }

  _unbound(worker) {
    this.#bound.delete(worker);
  }

  /** The worker the objects live in. */
  #home() {
    if (this.worker !== undefined) return this.worker;
    if (this.#bound.size === 1) return this.#bound.values().next().value;
    if (this.#bound.size === 0) throw new Error(`The Durable Object namespace ${this.className} is not bound to a running worker: pass it in createWorker's bindings first, or give durableObject(…, { worker }).`);
    throw new Error(`The Durable Object namespace ${this.className} is bound to ${this.#bound.size} workers: give durableObject(…, { worker }) to say which one runs its objects.`);
  }

  #id(id) {
    if (typeof id !== "string" || !HEX_ID.test(id)) throw new TypeError(`${this.className}: an object id must be 64 hex digits (from idFromName() or ids()), got ${JSON.stringify(id)}`);
    return id;
  }

  /** The id `env.NS.idFromName(name)` gives in the worker, as a hex string. */
  idFromName(name) {
    const crypto = require("node:crypto");
    if (this.uniqueKey === undefined) return crypto.createHmac("sha256", this.className).update(String(name)).digest("hex");
    return workerdId(this.uniqueKey, crypto.createHmac("sha256", workerdKey(this.uniqueKey)).update(String(name)).digest());
  }

  /** A new id, as `env.NS.newUniqueId()` makes it, as a hex string. */
  newUniqueId() {
    const crypto = require("node:crypto");
    return this.uniqueKey === undefined ? crypto.randomBytes(32).toString("hex") : workerdId(this.uniqueKey, crypto.randomBytes(16));
  }

  /** `hex` checked as `env.NS.idFromString()` checks it (with a uniqueKey, workerd's MAC too), as lower-case hex. */
  idFromString(hex) {
    const text = String(hex);
    if (this.uniqueKey === undefined) {
      if (!HEX_ID.test(text)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
      return text;
    }
    if (!/^[0-9a-fA-F]{64}$/.test(text)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
    const id = workerdId(this.uniqueKey, Buffer.from(text, "hex"));
    if (id !== text.toLowerCase()) throw new TypeError("Durable Object ID is not valid for this namespace.");
    return id;
  }

  /** The ids of the objects that have storage (files under `dir`, or databases in memory). */
  async ids() {
    return hostCall(this.#home(), specOf(this, undefined), "ids");
  }

  /**
   * A stub for object `id` from Node: `fetch(input, init)` and its RPC methods, whose
   * arguments and results are structured clones (no functions or RpcTargets).
   */
  get(id, name = null) {
    const spec = specOf(this, this.#id(id), name);
    const home = () => this.#home();
    const call = async (pathTo, kind, args) => {
      const where = home();
      return inObject(where, this, spec, () => hostCall(where, spec, kind, { path: pathTo }, args, true));
    };
    const fetchOne = async (input, init) => {
      const request = new Request(input, init);
      const headers = [];
      for (const [name, value] of request.headers) headers.push(name, value);
      const body = request.body === null ? null : Buffer.from(await request.arrayBuffer());
      const where = home();
      const args = { method: request.method, url: request.url, headers };
      const head = await inObject(where, this, spec, () => rpc.fetchInto(where, { durableObject: spec }, args, body));
      const { status, statusText, headers: flat } = JSON.parse(head.json);
      const list = [];
      for (let i = 0; i + 1 < flat.length; i += 2) list.push([flat[i], flat[i + 1]]);
      if (head.webSocket !== undefined) {
        const { WebSocketResponse } = require("./websocket.js");
        return new WebSocketResponse(statusText, new Headers(list), head.webSocket);
      }
      const nullBody = status === 101 || status === 204 || status === 205 || status === 304;
      return new Response(nullBody ? null : head.bytes, { status, statusText, headers: list });
    };
    return rpc.nodeStub(call, { id, fetch: fetchOne });
  }

  /**
   * Runs `callback(instance, state, arg)` inside object `id` (constructed first if need be) and
   * resolves to its result. The callback is sent as source code and runs in the worker: it
   * cannot see the variables around it in Node; pass what it needs as `arg` (a structured
   * clone), as with a browser automation tool's evaluate().
   */
  async runInDurableObject(id, callback, arg = undefined) {
    if (typeof callback !== "function") throw new TypeError("runInDurableObject: the callback must be a function (instance, state, arg) => …");
    const spec = specOf(this, this.#id(id));
    const home = this.#home();
    return inObject(home, this, spec, () => hostCall(home, spec, "run", { source: callback.toString() }, [arg]));
  }

  /** Runs object `id`'s alarm now if it has one set; resolves to whether it ran. */
  async runAlarm(id) {
    const spec = specOf(this, this.#id(id));
    const home = this.#home();
    const result = await inObject(home, this, spec, () => hostCall(home, spec, "alarm", { retryCount: 0, force: true }));
    if (result.ran && result.next === null) scheduleAlarm(home, spec, null);
    return result.ran;
  }

  /**
   * A test checkpoint of the storage of every object of the namespace (in memory only; see
   * checkpointStorage() in lib/storage-checkpoint.js): "open", "rollback" (the live instances
   * are dropped, objects made since are forgotten) or "release".
   */
  async checkpoint(action) {
    if (this.dir !== undefined) throw new Error(`The Durable Object namespace ${this.className} keeps its objects under ${this.dir}: only storage in memory takes checkpoints`);
    const home = this.#home();
    const alarms = await hostCall(home, specOf(this, undefined), "checkpoint", { action });
    // After a rollback the objects' alarms are armed as their storage now says (an alarm deleted
    // since the mark is back, one set since is gone).
    if (action === "rollback") for (const [id, at] of alarms ?? []) scheduleAlarm(home, specOf(this, id), at);
  }

  /** Drops the live instance of object `id` (or of every object): storage stays, and the next call constructs it again. */
  async evict(id = undefined) {
    const spec = specOf(this, id === undefined ? undefined : this.#id(id));
    return hostCall(this.#home(), spec, "evict");
  }
}

module.exports = { durableObject, setLogger, callFromWorker, workerCreated, workerDisposed, DurableObjectNamespaceBinding };
