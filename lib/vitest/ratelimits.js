// Rate limiting bindings for the Vitest integration (wrangler's `ratelimits` entries:
// `{ name, namespace_id, simple: { limit, period } }`): `env.NAME.limit({ key })` resolves to
// `{ success }`, counting per key in fixed windows of `period` seconds, as workerd's local rate
// limiter does. Bindings with the same namespace_id share their counters. Counters live in Node
// for the runner's life; cloudflare:test's reset() clears them (through the pool's host binding).
"use strict";

/** `{ bindings: { NAME: service }, reset() }` for the `ratelimits` entries of a wrangler file. */
function makeRateLimiters(entries, api) {
  const namespaces = new Map();
  const bindings = {};
  for (const entry of Array.isArray(entries) ? entries : []) {
    const name = entry?.name;
    const limit = Number(entry?.simple?.limit);
    const period = Number(entry?.simple?.period);
    if (typeof name !== "string" || !Number.isFinite(limit) || !Number.isFinite(period)) {
      throw new TypeError(`ratelimits: each entry needs a name and simple: { limit, period } (got ${JSON.stringify(entry)})`);
    }
    const namespace = String(entry.namespace_id ?? name);
    if (!namespaces.has(namespace)) namespaces.set(namespace, new Map());
    const counters = namespaces.get(namespace);
    bindings[name] = api.service({
      async limit(options) {
        if (options === null || typeof options !== "object" || typeof options.key !== "string") throw new TypeError("limit(): options must be { key: string }");
        const window = Math.floor(Date.now() / (period * 1000));
        const counter = counters.get(options.key);
        if (counter === undefined || counter.window !== window) {
          counters.set(options.key, { window, count: 1 });
          return { success: limit >= 1 };
        }
        counter.count++;
        return { success: counter.count <= limit };
      },
    });
  }
  return { bindings, reset: () => namespaces.forEach((counters) => counters.clear()) };
}

module.exports = { makeRateLimiters };
