"use strict";
// How a project's bundle treats imports of Node.js built-in modules, by the worker's Node.js
// compatibility mode, as wrangler bundles them:
// - under `nodejs_compat_v2` (`nodejs_compat` with a compatibility date from 2024-09-23, or the
//   flag), bare names (`events`, `buffer`, `stream/web`, …) become imports of the runtime's
//   `node:<name>`, even when an npm package of that name is installed, as wrangler's unenv preset
//   aliases them; a module workerd puts behind a further flag the worker lacks (`fs` before
//   2025-09-15, `http`, `os`, …) is bundled from unenv's polyfill instead, as wrangler does, by
//   either name;
// - in older modes, `node:` imports stay imports (without `nodejs_compat` the build warns that the
//   worker will not find them), bare names resolve as ordinary packages, and one that is not
//   installed is esbuild's error with what would provide it added (a `require()` inside
//   try/catch still only fails when it runs, by esbuild's rules);
// - `require()` of a built-in the runtime provides becomes an ES import of it (an ES module bundle
//   has no `require`), so `require("events")` gets the module's default export.

const { builtinModules } = require("node:module");
const { resolveCompat } = require("../compat.js");
const { modules: MODULE_FLAGS } = require("../node-module-flags.json");

const REQUIRE_NAMESPACE = "workerbox-node-require";
const SKIP = Symbol("workerbox-node-builtins");

/** Built-in names that may be imported without the prefix (Node lists prefix-only ones with it). */
const BARE = builtinModules.filter((name) => !name.startsWith("node:"));
const escape = (name) => name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
const BUILTIN = new RegExp(`^(node:)?(${BARE.map(escape).join("|")})$`);
const PREFIXED = /^node:/;

/**
 * The worker's Node.js compatibility mode ("v2", "v1", "als" for only `nodejs_als`, or null) and
 * the flags that are on, from the same date and flag rules createWorker applies.
 */
function nodeCompat(compatibilityDate, compatibilityFlags) {
  let enabled;
  try {
    enabled = resolveCompat(compatibilityDate, compatibilityFlags).enabled;
  } catch {
    // createWorker reports a bad date or flag with its own message; bundle by the flags given.
    enabled = compatibilityFlags ?? [];
  }
  const mode = enabled.includes("nodejs_compat_v2") ? "v2" : enabled.includes("nodejs_compat") ? "v1" : enabled.includes("nodejs_als") ? "als" : null;
  return { mode, enabled };
}

/** unenv's polyfill of `node:<name>`, or null when it has none. */
function unenvPolyfill(name) {
  try {
    return require.resolve(`unenv/node/${name}`);
  } catch {
    return null;
  }
}

/** The esbuild plugin for `config` (its compatibility date and flags, and its file for messages). */
function nodeBuiltinsPlugin(config) {
  const { mode, enabled } = nodeCompat(config.compatibilityDate, config.compatibilityFlags);
  const where = config.file ? `compatibility_flags in ${config.file}` : "compatibilityFlags";
  const provides = (name) => mode === "v1" || mode === "v2" || (mode === "als" && name === "async_hooks");
  /** Under v2, unenv's polyfill for a module whose own flag this worker lacks, else null. */
  const polyfill = (name) => {
    const flag = MODULE_FLAGS[name];
    return mode === "v2" && flag !== undefined && !enabled.includes(flag) ? unenvPolyfill(name) : null;
  };
  /** What a worker in an older mode needs to import a built-in by its bare name. */
  const needs = (name) =>
    mode === "v1"
      ? `a compatibility date on or after 2024-09-23 beside "nodejs_compat" (or the "nodejs_compat_v2" flag in ${where})`
      : `the "nodejs_compat" compatibility flag (add it to ${where}) and a compatibility date on or after 2024-09-23, or an installed package named "${name}"`;

  return {
    name: "workerbox-node-builtins",
    setup(build) {
      const unprovided = new Map(); // node:<name> -> files importing it, when the mode lacks it
      build.onStart(() => unprovided.clear());

      /** The runtime's `node:<name>`, or unenv's polyfill where the worker lacks the module's flag. */
      const builtin = (name, args) => {
        const file = polyfill(name);
        if (file !== null) return { path: file };
        if (args.kind === "require-call") return { path: name, namespace: REQUIRE_NAMESPACE };
        return { path: `node:${name}`, external: true };
      };

      build.onResolve({ filter: PREFIXED }, (args) => {
        const name = args.path.slice("node:".length);
        if (!provides(name) && args.namespace !== REQUIRE_NAMESPACE) {
          const importers = unprovided.get(args.path) ?? [];
          importers.push(args.importer);
          unprovided.set(args.path, importers);
        }
        return builtin(name, args);
      });

      build.onResolve({ filter: BUILTIN }, async (args) => {
        if (args.pluginData?.[SKIP] || PREFIXED.test(args.path)) return undefined;
        if (mode === "v2") return builtin(args.path, args);
        // Older modes: an installed package of that name, as with any import; else esbuild's
        // error (whose rules keep a require() inside try/catch to fail only when run).
        const { kind, resolveDir, importer } = args;
        const resolved = await build.resolve(args.path, { kind, resolveDir, importer, pluginData: { [SKIP]: true } });
        return resolved.errors.length === 0 ? resolved : undefined;
      });

      build.onLoad({ filter: /.*/, namespace: REQUIRE_NAMESPACE }, (args) => ({
        contents: `import builtin from "node:${args.path}";\nmodule.exports = builtin;\n`,
        loader: "js",
      }));

      build.onEnd((result) => {
        for (const error of result.errors) {
          const name = /^Could not resolve "([^"]+)"$/.exec(error.text)?.[1];
          if (name !== undefined && BUILTIN.test(name) && !PREFIXED.test(name)) {
            error.text += `: it is a Node.js built-in module, which a worker imports by that name with ${needs(name)}`;
          }
        }
        for (const [specifier, importers] of unprovided) {
          const files = [...new Set(importers)].filter(Boolean);
          result.warnings.push({
            text: `"${specifier}" is a Node.js built-in module: the worker cannot load it without the "nodejs_compat" compatibility flag (add it to ${where})${files.length ? `; imported by ${files.join(", ")}` : ""}`,
            location: null,
          });
        }
      });
    },
  };
}

module.exports = { nodeBuiltinsPlugin, nodeCompat };
