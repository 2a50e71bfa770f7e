// Bindings of the Vitest integration that lib/project does not make, answered in Node as service
// bindings to plain objects: rate limiters (wrangler's `ratelimits` entries:
// `{ name, namespace_id, simple: { limit, period } }`): `env.NAME.limit({ key })` resolves to
// `{ success }`, counting per key in fixed windows of `period` seconds, as workerd's local rate
// limiter does; bindings with the same namespace_id share their counters, which live in Node for
// the runner's life and which cloudflare:test's reset() clears (through the pool's host binding).
// Pipelines (`pipelines` entries: `{ binding, stream/pipeline }`): `env.NAME.send(records)`
// accepts an array of records and keeps nothing, as a local pipeline with no sink.
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

/** `{ NAME: service }` for the `pipelines` entries of a wrangler file. */
function makePipelines(entries, api) {
  const bindings = {};
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (typeof entry?.binding !== "string") throw new TypeError(`pipelines: each entry needs a binding (got ${JSON.stringify(entry)})`);
    bindings[entry.binding] = api.service({
      async send(records) {
        if (!Array.isArray(records)) throw new TypeError("send(): records must be an array");
      },
    });
  }
  return bindings;
}

module.exports = { makeRateLimiters, makePipelines };
