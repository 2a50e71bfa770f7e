// Wrangler's module rules for the tests' Vite: files a rule makes Text, Data or CompiledWasm
// modules (by default `*.txt`, `*.html`, `*.sql` as text, `*.bin` as an ArrayBuffer, `*.wasm` and
// `*.wasm?module` as a WebAssembly.Module) load as the worker's bundle would give them, whoever
// imports them (the worker's code or a test). The project's own `rules` (from its wrangler
// configuration) come first, as wrangler combines them. Vite's own queries (`?raw`, `?url`) are
// left to Vite.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { effectiveRules } = require("../project/bundle.js");

const LOADED = new Set(["Text", "Data", "CompiledWasm"]);

/** The module's code for file `file` under rule type `type`. */
function moduleCode(type, file) {
  const bytes = fs.readFileSync(file);
  if (type === "Text") return `export default ${JSON.stringify(bytes.toString("utf8"))};\n`;
  const decode = `Uint8Array.from(atob(${JSON.stringify(bytes.toString("base64"))}), (c) => c.charCodeAt(0))`;
  if (type === "Data") return `export default ${decode}.buffer;\n`;
  return `export default new WebAssembly.Module(${decode});\n`;
}

/**
 * The Vite plugin (enforced before Vite's own, which would make a `.wasm` an asset URL).
 * `projectRules()`: the project's rules (read when first needed), `root()`: the project's root.
 */
function moduleRulesPlugin(projectRules, root) {
  let rules;
  return {
    name: "workerbox:module-rules",
    enforce: "pre",
    load(id) {
      if (id.startsWith("\0")) return undefined;
      const [file, query = ""] = id.split("?");
      // `?module` is part of the CompiledWasm globs; other queries are Vite's.
      if (query !== "" && query !== "module") return undefined;
      if (!path.isAbsolute(file) || /\.[cm]?[jt]sx?$/.test(file)) return undefined;
      rules ??= effectiveRules(projectRules());
      const relative = path.relative(root(), file).split(path.sep).join("/");
      const name = query ? `${relative}?${query}` : relative;
      const rule = rules.find((r) => r.match(name) || r.match(path.basename(file) + (query ? `?${query}` : "")));
      if (!rule || !LOADED.has(rule.type) || !fs.existsSync(file)) return undefined;
      return { code: moduleCode(rule.type, file), map: null };
    },
  };
}

module.exports = { moduleRulesPlugin };
