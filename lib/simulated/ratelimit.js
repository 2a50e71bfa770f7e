"use strict";
// Rate limiters as wrangler dev simulates them: `rateLimit({ limit, period, namespace? })` is the
// binding a worker gets as `env.LIMITER`, whose `limit({ key })` counts calls per key in fixed
// windows of `period` seconds aligned to the clock (10 or 60, as production allows) and resolves
// to `{ success }`: true while the window's count is below `limit` (the call is then counted),
// false after that (not counted), as Miniflare's RateLimiterObject does. Counters are kept per
// `(key, period)`; bindings with the same `namespace` string share them (in this process), as
// bindings with one namespace_id do in production. The options' checks happen in the worker
// (src/js/89_local_bindings.js); the counting here, in Node.

const { Binding } = require("../bindings.js");

const PERIODS = [10, 60];
/** Counter maps of named namespaces, shared by every binding made with that name. */
const namespaces = new Map();

function checkOptions(options, where) {
  if (options === null || typeof options !== "object") throw new TypeError(`${where}: options must be an object such as { limit: 100, period: 60 }`);
  const simple = options.simple ?? options;
  const { limit, period = 60 } = simple;
  if (typeof limit !== "number" || !(limit > 0)) throw new TypeError(`${where}: limit must be a number above 0, got ${JSON.stringify(limit)}`);
  if (!PERIODS.includes(period)) throw new TypeError(`${where}: period must be either 10 or 60 (seconds), got ${JSON.stringify(period)}`);
  if (options.namespace !== undefined && (typeof options.namespace !== "string" || options.namespace === "")) throw new TypeError(`${where}: namespace must be a non-empty string (the namespace_id bindings share counters by)`);
  return { limit, period, namespace: options.namespace };
}

class RateLimitBinding extends Binding {
  #counters;

  constructor(options) {
    super("ratelimit", null);
    const { limit, period, namespace } = options;
    this.limitValue = limit;
    this.period = period;
    this.namespace = namespace;
    if (namespace === undefined) this.#counters = new Map();
    else {
      if (!namespaces.has(namespace)) namespaces.set(namespace, new Map());
      this.#counters = namespaces.get(namespace);
    }
  }

  /** One call for `key`: whether it is within the limit of the current window (counted if so). */
  #count(key, limit = this.limitValue, period = this.period) {
    const window = Math.floor(Date.now() / (period * 1000));
    const id = `${period}\n${key}`;
    let counter = this.#counters.get(id);
    if (counter === undefined || counter.window !== window) {
      // A new window for this period: every older counter of the period is done with.
      for (const [other, entry] of this.#counters) if (entry.period === period && entry.window !== window) this.#counters.delete(other);
      counter = { period, window, count: 0 };
      this.#counters.set(id, counter);
    }
    if (counter.count >= limit) return false;
    counter.count++;
    return true;
  }

  /** A worker's call (`env.LIMITER.limit(options)`, checked in the worker). */
  answer(method, args) {
    if (method !== "limit") throw new TypeError(`unknown rate limit operation "${method}"`);
    return { json: JSON.stringify({ success: this.#count(args.key ?? "", args.limit ?? undefined, args.period ?? undefined) }) };
  }

  /** The same `limit({ key })` from Node: counts against the workers' counters. */
  async limit(options) {
    if (options === null || typeof options !== "object" || (options.key !== undefined && typeof options.key !== "string")) throw new TypeError("limit(): options must be { key: string }");
    return { success: this.#count(options.key ?? "") };
  }

  /** Forgets every count (of the namespace, for a shared one). */
  reset() {
    this.#counters.clear();
  }
}

/** A rate limiter binding: `rateLimit({ limit, period = 60, namespace? })` (or wrangler's `{ simple: { limit, period } }`). */
function rateLimit(options) {
  return new RateLimitBinding(checkOptions(options, "rateLimit()"));
}

module.exports = { rateLimit, RateLimitBinding };
