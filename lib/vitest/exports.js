// `ctx.exports` of the worker under test, guessed in Node before its tests run (as Cloudflare's
// pool guesses them): the runner isolate's own main module is the runner, and the worker's main
// module is only imported later, by Vitest's module runner, so the names its `ctx.exports` (and
// `exports` of cloudflare:workers) has are read from its source: its export statements, following
// `export * from "./relative"` into files on disk (a re-export from a module only Vite resolves,
// such as an alias, is not followed, as Cloudflare's esbuild guess does not either). Durable
// Object classes are known from the configuration (bindings and migrations); `additionalExports`
// names exports the guess cannot see. Every other guessed name is taken as a WorkerEntrypoint.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const { resolveBare } = require("./loader.js");

const EXTENSIONS = ["", ".ts", ".tsx", ".mts", ".js", ".mjs", ".jsx", "/index.ts", "/index.js"];

/** The file `specifier` (relative) names from `dir`, trying the extensions bundlers try. */
function resolveRelative(specifier, dir) {
  const base = path.resolve(dir, specifier);
  for (const ext of EXTENSIONS) {
    const file = base + ext;
    if (fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  // `./x.js` written for a `./x.ts` source (TypeScript's ESM convention).
  const stem = base.replace(/\.[cm]?js$/, "");
  for (const ext of [".ts", ".mts", ".tsx"]) if (fs.existsSync(stem + ext)) return stem + ext;
  return null;
}

/** Names a module's source exports: `{ names: Set, classes: Set (declared as classes) }`. */
async function exportNames(file, vite, seen) {
  const names = new Set();
  const classes = new Set();
  if (seen.has(file)) return { names, classes };
  seen.add(file);
  const source = fs.readFileSync(file, "utf8");
  const transform = vite.transformWithOxc ?? vite.transformWithEsbuild;
  const code = /\.[cm]?tsx?$/.test(file) || /\.jsx$/.test(file) ? (await transform(source, file)).code : source;
  const ast = vite.parseAst(code);
  for (const node of ast.body) {
    if (node.type === "ExportDefaultDeclaration") names.add("default");
    else if (node.type === "ExportNamedDeclaration") {
      const declaration = node.declaration;
      if (declaration?.type === "ClassDeclaration") {
        names.add(declaration.id.name);
        classes.add(declaration.id.name);
      } else if (declaration?.type === "VariableDeclaration") {
        // A class bound to a const (`export const X = class …`, or made by a call) may be an
        // entrypoint; a function, arrow function or literal is not.
        for (const d of declaration.declarations) {
          if (d.id.type === "Identifier" && d.init && !/^(?:ArrowFunctionExpression|FunctionExpression|Literal|TemplateLiteral|ObjectExpression|ArrayExpression)$/.test(d.init.type)) names.add(d.id.name);
        }
      }
      for (const specifier of node.specifiers ?? []) {
        const name = specifier.exported.type === "Identifier" ? specifier.exported.name : specifier.exported.value;
        names.add(name);
      }
    } else if (node.type === "ExportAllDeclaration") {
      if (node.exported) names.add(node.exported.type === "Identifier" ? node.exported.name : node.exported.value);
      else if (/^\.\.?\//.test(node.source.value)) {
        const target = resolveRelative(node.source.value, path.dirname(file));
        if (!target) continue;
        const inner = await exportNames(target, vite, seen);
        for (const name of inner.names) if (name !== "default") names.add(name);
        for (const name of inner.classes) classes.add(name);
      }
    }
  }
  return { names, classes };
}

/** Vite, as the project's Vitest loads it (resolved from Vitest's own folder, else the root). */
async function loadVite(vitestFile, root) {
  const file = (vitestFile && resolveBare("vite", path.dirname(vitestFile), "import")) ?? resolveBare("vite", root, "import");
  if (!file) return null;
  return import(pathToFileURL(file).href);
}

const KINDS = { WorkerEntrypoint: "entrypoint", DurableObject: "durable", WorkflowEntrypoint: "entrypoint" };

/**
 * `{ <export name>: "entrypoint" | "durable" }` for the worker whose main module is `main`:
 * `durableClasses` (its own Durable Object classes, from the configuration), `additional`
 * (cloudflareTest({ additionalExports }): name → "WorkerEntrypoint" | "DurableObject" | …).
 * An unreadable main module gives only what the configuration says (with `warn` told why).
 */
async function guessExports(main, { durableClasses = [], additional = {}, vitestFile, root, warn = () => {} }) {
  const out = {};
  for (const name of durableClasses) out[name] = "durable";
  if (main) {
    try {
      const vite = await loadVite(vitestFile, root);
      if (vite) {
        const { names } = await exportNames(main, vite, new Set());
        for (const name of names) if (name !== "default" && out[name] === undefined) out[name] = "entrypoint";
      }
    } catch (error) {
      warn(`could not read the exports of ${main} for ctx.exports (${error.message}); name them in cloudflareTest({ additionalExports })`);
    }
  }
  for (const [name, kind] of Object.entries(additional ?? {})) {
    if (!KINDS[kind]) throw new Error(`cloudflareTest({ additionalExports }): ${name}: "${kind}" is not one of ${Object.keys(KINDS).join(", ")}`);
    out[name] = KINDS[kind];
  }
  return out;
}

module.exports = { guessExports };
