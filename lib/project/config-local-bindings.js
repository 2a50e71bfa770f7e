"use strict";
// The wrangler configuration keys of the smaller bindings wrangler simulates (config.js calls
// this while it checks a configuration): `ratelimits`, `analytics_engine_datasets`,
// `send_email`, `secrets_store_secrets`, `version_metadata` and `worker_loaders`, checked as wrangler checks them
// (its messages' rules: a ratelimit's period is 10 or 60, a send_email binding has
// destination_address or allowed_destination_addresses, not both) and normalised to
// `out.bindings.{ ratelimits, analyticsEngine, sendEmail, secretsStore, versionMetadata,
// workerLoaders }`.

/**
 * Checks the keys of `raw` into `out.bindings`. `c` is config.js's Checker, `at(key)` the key path
 * of a top-level key, `bindingName(entry, key, keyPath)` checks and claims a binding name.
 */
function localBindings(c, raw, out, at, bindingName) {
  out.bindings.ratelimits = c.tables(raw.ratelimits, at("ratelimits"), (entry, kp) => {
    c.known(entry, kp, ["name", "namespace_id", "simple"]);
    const binding = bindingName(entry, "name", kp);
    const namespace = c.string(entry, "namespace_id", kp, { required: true });
    if (entry.simple === undefined) return c.error([...kp, "simple"], "is required: { limit, period }"), undefined;
    if (!c.type(entry.simple, [...kp, "simple"], "table")) return undefined;
    c.known(entry.simple, [...kp, "simple"], ["limit", "period"]);
    const { limit, period } = entry.simple;
    let ok = true;
    if (typeof limit !== "number" || !(limit > 0)) ok = c.error([...kp, "simple", "limit"], `must be a number above 0, got ${JSON.stringify(limit)}`) && false;
    if (period !== 10 && period !== 60) ok = c.error([...kp, "simple", "period"], `must be either 10 or 60, got ${JSON.stringify(period)}`) && false;
    return ok && binding && namespace !== undefined ? { binding, namespace, limit, period } : undefined;
  });
  out.bindings.analyticsEngine = c.tables(raw.analytics_engine_datasets, at("analytics_engine_datasets"), (entry, kp) => {
    c.known(entry, kp, ["binding", "dataset"]);
    const binding = bindingName(entry, "binding", kp);
    const dataset = c.string(entry, "dataset", kp);
    // As production, a dataset not named is named after its binding.
    return binding && { binding, dataset: dataset ?? binding };
  });
  out.bindings.sendEmail = c.tables(raw.send_email, at("send_email"), (entry, kp) => {
    c.known(entry, kp, ["name", "destination_address", "allowed_destination_addresses", "allowed_sender_addresses", "remote"]);
    const binding = bindingName(entry, "name", kp);
    const destinationAddress = c.string(entry, "destination_address", kp);
    const allowedDestinationAddresses = c.stringArray(entry.allowed_destination_addresses, [...kp, "allowed_destination_addresses"]);
    const allowedSenderAddresses = c.stringArray(entry.allowed_sender_addresses, [...kp, "allowed_sender_addresses"]);
    if (entry.destination_address !== undefined && entry.allowed_destination_addresses !== undefined) {
      c.error(kp, 'has both "destination_address" and "allowed_destination_addresses"; give one of them (as wrangler requires)');
      return undefined;
    }
    return binding && { binding, destinationAddress, allowedDestinationAddresses, allowedSenderAddresses };
  });
  out.bindings.secretsStore = c.tables(raw.secrets_store_secrets, at("secrets_store_secrets"), (entry, kp) => {
    c.known(entry, kp, ["binding", "store_id", "secret_name"]);
    const binding = bindingName(entry, "binding", kp);
    const storeId = c.string(entry, "store_id", kp, { required: true });
    const secretName = c.string(entry, "secret_name", kp, { required: true });
    return binding && storeId !== undefined && secretName !== undefined ? { binding, storeId, secretName } : undefined;
  });
  out.bindings.versionMetadata = [];
  if (raw.version_metadata !== undefined && c.type(raw.version_metadata, at("version_metadata"), "table")) {
    c.known(raw.version_metadata, at("version_metadata"), ["binding"]);
    const binding = bindingName(raw.version_metadata, "binding", at("version_metadata"));
    if (binding) out.bindings.versionMetadata.push({ binding });
  }
  // A Worker Loader: [[worker_loaders]] binding = "LOADER" (docs/bindings.md).
  out.bindings.workerLoaders = c.tables(raw.worker_loaders, at("worker_loaders"), (entry, kp) => {
    c.known(entry, kp, ["binding"]);
    const binding = bindingName(entry, "binding", kp);
    return binding && { binding };
  });
}

/** The keys localBindings() reads. */
const LOCAL_BINDING_KEYS = ["ratelimits", "analytics_engine_datasets", "send_email", "secrets_store_secrets", "version_metadata", "worker_loaders"];

module.exports = { localBindings, LOCAL_BINDING_KEYS };
