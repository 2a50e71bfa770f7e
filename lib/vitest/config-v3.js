// The Vitest 3 form of @cloudflare/vitest-pool-workers' configuration (its `/config` entry):
// `defineWorkersConfig({ test: { poolOptions: { workers: {...} } } })` and `defineWorkersProject`,
// which most published projects still use. Each becomes the Vitest 4 form workerbox/vitest runs
// on: the `workers` pool options (an object, or a function of `{ inject }`) go to a
// `cloudflareTest()` plugin, and `pool` / `poolOptions` (which Vitest 4 no longer reads) are removed.
"use strict";

/** `config` (an object, a promise, or a function of Vite's ConfigEnv) in the Vitest 4 form. */
function defineWorkersConfig(config) {
  if (typeof config === "function") return async (env) => toPluginForm(await config(env), "defineWorkersConfig");
  if (config && typeof config.then === "function") return config.then((resolved) => toPluginForm(resolved, "defineWorkersConfig"));
  return toPluginForm(config, "defineWorkersConfig");
}

/** The same for one project of a Vitest workspace (`test.projects` / vitest.workspace). */
function defineWorkersProject(config) {
  if (typeof config === "function") return async (env) => toPluginForm(await config(env), "defineWorkersProject");
  if (config && typeof config.then === "function") return config.then((resolved) => toPluginForm(resolved, "defineWorkersProject"));
  return toPluginForm(config, "defineWorkersProject");
}

function toPluginForm(config, caller) {
  if (config === undefined || config === null) config = {};
  if (typeof config !== "object") throw new TypeError(`workerbox/vitest: ${caller}() takes a Vitest configuration object (or a function returning one), got ${typeof config}`);
  const { pool, poolOptions, ...test } = config.test ?? {};
  const workers = poolOptions?.workers ?? {};
  if (typeof workers !== "object" && typeof workers !== "function") throw new TypeError(`workerbox/vitest: ${caller}({ test: { poolOptions: { workers } } }) must be an object or a function, got ${typeof workers}`);
  // That pool's isolatedStorage was on unless turned off (suites written for it expect each test
  // to start from the storage its file's beforeAll left); workerbox's cloudflareTest() has it off.
  const withDefaults = (options) => ({ ...options, isolatedStorage: options?.isolatedStorage ?? true });
  const options = typeof workers === "function" ? async (context) => withDefaults(await workers(context)) : withDefaults(workers);
  // (index.js requires this file: its cloudflareTest is taken when called.)
  const { cloudflareTest } = require("./index.js");
  return { ...config, test, plugins: [...(config.plugins ?? []), cloudflareTest(options)] };
}

module.exports = { defineWorkersConfig, defineWorkersProject };
