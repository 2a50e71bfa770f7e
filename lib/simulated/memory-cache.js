"use strict";
// workerd's in-memory cache binding (`memoryCache` in a workerd config): `memoryCache({ limits:
// { maxKeys, maxValueSize, maxTotalValueSize }, id? })` is the binding a worker gets as
// `env.CACHE`, whose `read(key, fallback?)` (src/js/89_local_bindings.js) returns the cached value
// or fills it from the fallback. The entries live here, in Node, as V8-serialized bytes, so every
// worker given one binding (or bindings with the same `id`, as workerd shares caches by id across
// isolates) sees the same cache. A value larger than `maxValueSize` is returned but not kept; when
// `maxKeys` or `maxTotalValueSize` would be exceeded, expired entries go first, then the least
// recently read ones, as workerd's LRU does.

const { Binding } = require("../bindings.js");

/** Caches shared by id: every binding made with one id uses the same entries. */
const shared = new Map();

function checkLimits(options, where) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== "object") throw new TypeError(`${where}: options must be an object such as { limits: { maxKeys: 100, maxValueSize: 1024, maxTotalValueSize: 65536 } }`);
  const limits = options.limits ?? {};
  if (limits === null || typeof limits !== "object") throw new TypeError(`${where}: limits must be an object`);
  const out = {};
  for (const [key, fallback] of [["maxKeys", 1_000], ["maxValueSize", 1024 * 1024], ["maxTotalValueSize", 64 * 1024 * 1024]]) {
    const value = limits[key] ?? fallback;
    if (!Number.isSafeInteger(value) || value < 0) throw new TypeError(`${where}: limits.${key} must be a whole number of 0 or more, got ${JSON.stringify(limits[key])}`);
    out[key] = value;
  }
  const unknown = Object.keys(limits).filter((key) => !(key in out));
  if (unknown.length) throw new TypeError(`${where}: unknown limit ${unknown.map((k) => JSON.stringify(k)).join(", ")} (known: maxKeys, maxValueSize, maxTotalValueSize)`);
  if (options.id !== undefined && (typeof options.id !== "string" || options.id === "")) throw new TypeError(`${where}: id must be a non-empty string (bindings with one id share their entries)`);
  return { limits: out, id: options.id };
}

/** The entries of one cache: a Map in least-recently-read-first order, and their total size. */
class Entries {
  constructor(limits) {
    this.limits = limits;
    this.map = new Map();
    this.total = 0;
  }

  delete(key) {
    this.#drop(key);
  }

  #drop(key) {
    const entry = this.map.get(key);
    if (entry === undefined) return;
    this.map.delete(key);
    this.total -= entry.bytes.byteLength;
  }

  get(key, now = Date.now()) {
    const entry = this.map.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiration !== null && entry.expiration <= now) {
      this.#drop(key);
      return undefined;
    }
    // Most recently read moves to the end.
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.bytes;
  }

  /** Keeps `bytes` under `key` unless it is too large; makes room first. Returns whether it was kept. */
  put(key, bytes, expiration, now = Date.now()) {
    this.#drop(key);
    const { maxKeys, maxValueSize, maxTotalValueSize } = this.limits;
    if (bytes.byteLength > maxValueSize || bytes.byteLength > maxTotalValueSize || maxKeys === 0) return false;
    if (expiration !== null && expiration <= now) return false;
    const fits = () => this.map.size + 1 <= maxKeys && this.total + bytes.byteLength <= maxTotalValueSize;
    if (!fits()) for (const [other, entry] of this.map) if (entry.expiration !== null && entry.expiration <= now) this.#drop(other);
    while (!fits()) this.#drop(this.map.keys().next().value);
    this.map.set(key, { bytes, expiration });
    this.total += bytes.byteLength;
    return true;
  }

  clear() {
    this.map.clear();
    this.total = 0;
  }
}

class MemoryCacheBinding extends Binding {
  #entries;

  constructor({ limits, id }) {
    super("memory_cache", null);
    this.limits = limits;
    this.id = id;
    if (id === undefined) this.#entries = new Entries({ ...limits });
    else {
      // Bindings sharing an id share one cache, whose limits are the largest any of them gives (as workerd's).
      if (!shared.has(id)) shared.set(id, new Entries({ ...limits }));
      this.#entries = shared.get(id);
      for (const key of Object.keys(limits)) this.#entries.limits[key] = Math.max(this.#entries.limits[key], limits[key]);
    }
  }

  /** A worker's call: `get { key }` → the value's bytes (or `{ hit: false }`), `put { key, expiration }` + bytes, `delete { key }`. */
  answer(method, args, bytes) {
    switch (method) {
      case "get": {
        const value = this.#entries.get(String(args.key));
        return value === undefined ? { json: '{"hit":false}' } : { json: '{"hit":true}', bytes: value };
      }
      case "put": {
        const expiration = typeof args.expiration === "number" && Number.isFinite(args.expiration) ? args.expiration : null;
        const kept = this.#entries.put(String(args.key), Buffer.from(bytes ?? []), expiration);
        return { json: JSON.stringify({ kept }) };
      }
      case "delete":
        this.#entries.delete(String(args.key));
        return { json: "null" };
      default:
        throw new TypeError(`unknown memory cache operation "${method}"`);
    }
  }

  /** How many entries the cache holds now (expired ones not yet dropped included), and their bytes. */
  stats() {
    return { keys: this.#entries.map.size, bytes: this.#entries.total };
  }

  /** Forgets every entry (of every binding sharing the id, for a shared one). */
  reset() {
    this.#entries.clear();
  }
}

/** An in-memory cache binding: `memoryCache({ limits: { maxKeys, maxValueSize, maxTotalValueSize }, id? })`. */
function memoryCache(options) {
  return new MemoryCacheBinding(checkLimits(options, "memoryCache()"));
}

module.exports = { memoryCache, MemoryCacheBinding };
