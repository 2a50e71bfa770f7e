// Bindings of the Vitest integration that lib/project does not make (or makes again, to reset):
// rate limiters (wrangler's `ratelimits` entries: `{ name, namespace_id, simple: { limit,
// period } }`) are lib/simulated's rateLimit() bindings: `env.NAME.limit({ key })` counts per key
// in fixed windows of `period` seconds, as Miniflare's rate limiter does; bindings with the same
// namespace_id share their counters, which cloudflare:test's reset() clears (through the pool's
// host binding). Pipelines (`pipelines` entries: `{ binding, stream/pipeline }`):
// `env.NAME.send(records)` accepts an array of records and keeps nothing, as a local pipeline
// with no sink.
"use strict";

/** `{ bindings: { NAME: binding }, reset() }` for the `ratelimits` entries of a wrangler file. */
function makeRateLimiters(entries, api) {
  const bindings = {};
  for (const entry of Array.isArray(entries) ? entries : []) {
    const name = entry?.name;
    if (typeof name !== "string" || entry.simple === null || typeof entry.simple !== "object") {
      throw new TypeError(`ratelimits: each entry needs a name and simple: { limit, period } (got ${JSON.stringify(entry)})`);
    }
    bindings[name] = api.rateLimit({ limit: entry.simple.limit, period: entry.simple.period ?? 60, namespace: String(entry.namespace_id ?? name) });
  }
  return { bindings, reset: () => Object.values(bindings).forEach((binding) => binding.reset()) };
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
