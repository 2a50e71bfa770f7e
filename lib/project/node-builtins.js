"use strict";
// How a project's bundle treats imports of Node.js built-in modules, by the worker's Node.js
// compatibility mode, as wrangler bundles them:
// - `node:`-prefixed imports stay imports (the runtime provides them), in every mode; without
//   `nodejs_compat` the build warns that the worker will not find them at run time.
// - bare names (`events`, `buffer`, `stream/web`, …) become imports of `node:<name>` under
//   `nodejs_compat_v2` (`nodejs_compat` with a compatibility date from 2024-09-23, or the flag),
//   even when an npm package of that name is installed, as wrangler's unenv preset aliases them;
//   in older modes they resolve as ordinary packages, and one that is not installed is an error
//   naming the flag (and date) that would provide it.
// - `require()` of a built-in in bundled CommonJS code becomes an ES import of it (an ES module
//   bundle has no `require`), so `require("events")` gets the module's default export.

const { builtinModules } = require("node:module");
const { resolveCompat } = require("../compat.js");

const REQUIRE_NAMESPACE = "workerbox-node-require";
const SKIP = Symbol("workerbox-node-builtins");

/** Built-in names that may be imported without the prefix (Node lists prefix-only ones with it). */
const BARE = builtinModules.filter((name) => !name.startsWith("node:"));
const escape = (name) => name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
const BUILTIN = new RegExp(`^(node:)?(${BARE.map(escape).join("|")})$`);
const PREFIXED = /^node:/;

/**
 * The worker's Node.js compatibility mode: "v2", "v1", "als" (only `nodejs_als`) or null, from
 * the same date and flag rules createWorker applies.
 */
function nodeCompatMode(compatibilityDate, compatibilityFlags) {
  let enabled;
  try {
    enabled = resolveCompat(compatibilityDate, compatibilityFlags).enabled;
  } catch {
    // createWorker reports a bad date or flag with its own message; bundle by the flags given.
    enabled = compatibilityFlags ?? [];
  }
  if (enabled.includes("nodejs_compat_v2")) return "v2";
  if (enabled.includes("nodejs_compat")) return "v1";
  if (enabled.includes("nodejs_als")) return "als";
  return null;
}

/** The esbuild plugin for `config` (its compatibility date and flags, and its file for messages). */
function nodeBuiltinsPlugin(config) {
  const mode = nodeCompatMode(config.compatibilityDate, config.compatibilityFlags);
  const where = config.file ? `compatibility_flags in ${config.file}` : "compatibilityFlags";
  return {
    name: "workerbox-node-builtins",
    setup(build) {
      const unprovided = new Map(); // node:<name> -> files importing it, when the mode lacks it
      build.onStart(() => unprovided.clear());

      const external = (name, args) => {
        if (args.kind === "require-call") return { path: name, namespace: REQUIRE_NAMESPACE };
        return { path: `node:${name}`, external: true };
      };

      build.onResolve({ filter: PREFIXED }, (args) => {
        const name = args.path.slice("node:".length);
        const provided = mode === "v1" || mode === "v2" || (mode === "als" && name === "async_hooks");
        if (!provided && args.namespace !== REQUIRE_NAMESPACE) {
          const importers = unprovided.get(args.path) ?? [];
          importers.push(args.importer);
          unprovided.set(args.path, importers);
        }
        return external(name, args);
      });

      build.onResolve({ filter: BUILTIN }, async (args) => {
        if (args.pluginData?.[SKIP] || PREFIXED.test(args.path)) return undefined;
        if (mode === "v2") return external(args.path, args);
        // Older modes: an installed package of that name wins, as with any other import.
        const { kind, resolveDir, importer } = args;
        const resolved = await build.resolve(args.path, { kind, resolveDir, importer, pluginData: { [SKIP]: true } });
        if (resolved.errors.length === 0) return resolved;
        const needs =
          mode === "v1"
            ? `a compatibility date on or after 2024-09-23 with "nodejs_compat" (or the "nodejs_compat_v2" flag), or import "node:${args.path}"`
            : `the "nodejs_compat" compatibility flag (add it to ${where}) and a compatibility date on or after 2024-09-23, or install a package named "${args.path}"`;
        return { errors: [{ text: `Could not resolve "${args.path}": it is a Node.js built-in module, which a worker imports by that name with ${needs}` }] };
      });

      build.onLoad({ filter: /.*/, namespace: REQUIRE_NAMESPACE }, (args) => ({
        contents: `import builtin from "node:${args.path}";\nmodule.exports = builtin;\n`,
        loader: "js",
      }));

      build.onEnd((result) => {
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

module.exports = { nodeBuiltinsPlugin, nodeCompatMode };
