"use strict";
// Secrets Store secrets: `secretsStoreSecret({ value })` or `secretsStoreSecret({ get })` is the
// binding a worker gets as `env.SECRET`, whose `get()` resolves to the secret's value, or
// rejects with Miniflare's `Secret "<name>" not found` when there is none (no value, or `get`
// answered null). `workerbox dev` reads the values where `wrangler secrets-store secret create`
// keeps them locally (lib/project/load.js).

const { Binding } = require("../bindings.js");

class SecretsStoreSecretBinding extends Binding {
  #value;
  #get;

  constructor({ secretName, value, get }) {
    super("secrets_store_secret", null);
    this.secretName = secretName;
    this.#value = value;
    this.#get = get;
  }

  /** The value, from Node: what the worker's `get()` resolves to. */
  async get() {
    const value = this.#get === undefined ? this.#value : await this.#get();
    if (value === undefined || value === null) throw new Error(`Secret "${this.secretName}" not found`);
    return String(value);
  }

  async answer(method) {
    if (method !== "get") throw new TypeError(`unknown Secrets Store operation "${method}"`);
    return { json: JSON.stringify({ value: await this.get() }) };
  }
}

/** A Secrets Store secret binding: `secretsStoreSecret({ value } | { get: () => value }, secretName?)`. */
function secretsStoreSecret(options) {
  if (options === null || typeof options !== "object") throw new TypeError("secretsStoreSecret(): options must be { value } or { get: () => value }");
  const { value, get, secretName = "secret" } = options;
  if (value !== undefined && typeof value !== "string") throw new TypeError("secretsStoreSecret(): value must be a string");
  if (get !== undefined && typeof get !== "function") throw new TypeError("secretsStoreSecret(): get must be a function returning the value (or null)");
  if (value !== undefined && get !== undefined) throw new TypeError("secretsStoreSecret(): give value or get, not both");
  if (typeof secretName !== "string") throw new TypeError("secretsStoreSecret(): secretName must be a string");
  return new SecretsStoreSecretBinding({ secretName, value, get });
}

module.exports = { secretsStoreSecret, SecretsStoreSecretBinding };
