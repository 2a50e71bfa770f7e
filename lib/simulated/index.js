"use strict";
// The smaller bindings wrangler simulates locally, as createWorker bindings: rate limiters
// (ratelimit.js), Analytics Engine datasets (analytics-engine.js), send_email (email.js),
// Secrets Store secrets (secrets-store.js), workerd's in-memory cache (memory-cache.js), and version
// metadata (a plain value, here); their worker-side APIs are src/js/89_local_bindings.js. Also
// workerd's unsafe-eval binding (here; worker side src/js/89_unsafe.js).

const { rateLimit } = require("./ratelimit.js");
const { analyticsEngine } = require("./analytics-engine.js");
const { sendEmail } = require("./email.js");
const { secretsStoreSecret } = require("./secrets-store.js");
const { memoryCache } = require("./memory-cache.js");
const { Binding } = require("../bindings.js");

/**
 * The version metadata binding's value, as wrangler dev gives it: `{ id, tag, timestamp }` (a new
 * random id, an empty tag and the time it was made, unless given).
 */
function versionMetadata(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("versionMetadata(): options must be an object such as { id, tag, timestamp }");
  const { id = require("node:crypto").randomUUID(), tag = "", timestamp = new Date().toISOString() } = options;
  for (const [key, value] of Object.entries({ id, tag, timestamp })) if (typeof value !== "string") throw new TypeError(`versionMetadata(): ${key} must be a string`);
  return { id, tag, timestamp };
}

/**
 * workerd's unsafe-eval binding (`unsafeEval` in a workerd config): `env.NAME.eval(code, name?)`,
 * `newFunction(body, name?, ...params)`, `newAsyncFunction(…)` and `newWasmModule(bytes)` compile
 * code in the worker whether or not it allows eval (src/js/89_unsafe.js). For tests and tools:
 * it is what its name says.
 */
function unsafeEval() {
  return new Binding("unsafe_eval", null);
}

module.exports = { rateLimit, analyticsEngine, sendEmail, secretsStoreSecret, versionMetadata, memoryCache, unsafeEval };
