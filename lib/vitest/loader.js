// The host module loader of the Vitest integration's isolates (createWorker's `loadModule`):
// Vitest's own runtime (`vitest/worker` and the packages it imports) is loaded from the
// project's node_modules the way Node's ES module resolver finds files — package `exports` and
// `imports` maps (through the resolve.exports library), `main`, and the nearest package.json's
// `type` deciding between ES modules and CommonJS. Test files and the worker's own modules do not
// come this way: Vite transforms them and Vitest's module runner evaluates them. Files, their
// static imports and resolutions are kept for the process (every runner loads the same
// runtime), and the imports also in the cache folder for later processes.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { isBuiltin } = require("node:module");
const { fileURLToPath } = require("node:url");
const resolveExports = require("resolve.exports");

/** Conditions in the order Workers tooling prefers them (as wrangler's bundler, plus Node's). */
function conditionsFor(kind) {
  return ["workerd", "worker", "node", kind === "require" ? "require" : "import", "default"];
}

const packageCache = new Map();

/** The parsed package.json at `dir`, or null. (Most folders asked have none: they are looked
 * for without an exception, which costs more than the lookup.) */
function readPackage(dir) {
  if (!packageCache.has(dir)) {
    let manifest = null;
    const file = path.join(dir, "package.json");
    if (isFile(file)) {
      try {
        manifest = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {}
    }
    packageCache.set(dir, manifest);
  }
  return packageCache.get(dir);
}

/** The nearest folder at or above `dir` with a package.json: { dir, manifest } or null. */
function nearestPackage(dir) {
  for (let current = dir; ; current = path.dirname(current)) {
    const manifest = readPackage(current);
    if (manifest) return { dir: current, manifest };
    if (path.dirname(current) === current) return null;
  }
}

function isFile(file) {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** `file` itself, or with the extensions and index files CommonJS require() tries. */
function probe(file, kind) {
  if (isFile(file)) return file;
  if (kind !== "require") return null;
  for (const candidate of [`${file}.js`, `${file}.cjs`, `${file}.json`, path.join(file, "index.js"), path.join(file, "index.cjs"), path.join(file, "index.json")]) {
    if (isFile(candidate)) return candidate;
  }
  const manifest = readPackage(file);
  if (manifest?.main) return probe(path.join(file, manifest.main), "require");
  return null;
}

/** The file a package's entry `subpath` ("." or "./x") names, or null. */
function packageEntry(dir, manifest, subpath, kind) {
  if (manifest.exports !== undefined) {
    const found = resolveExports.exports(manifest, subpath, { conditions: conditionsFor(kind), unsafe: true });
    return found ? path.join(dir, found[0]) : null;
  }
  if (subpath === ".") {
    const main = kind === "require" ? manifest.main : (manifest.module ?? manifest.main);
    return probe(path.join(dir, main ?? "index.js"), "require");
  }
  return probe(path.join(dir, subpath), "require");
}

/** Resolves a bare specifier (`pkg`, `@scope/pkg/sub`, `#internal`) from `fromDir`. */
function resolveBare(specifier, fromDir, kind) {
  if (specifier.startsWith("#")) {
    const owner = nearestPackage(fromDir);
    const found = owner && resolveExports.imports(owner.manifest, specifier, { conditions: conditionsFor(kind), unsafe: true });
    if (!found) return null;
    const target = found[0];
    return target.startsWith("./") ? path.join(owner.dir, target) : resolveBare(target, owner.dir, kind);
  }
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
  const subpath = specifier.length > name.length ? `.${specifier.slice(name.length)}` : ".";
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    const manifest = readPackage(candidate);
    if (manifest) return packageEntry(candidate, manifest, subpath, kind);
    if (path.dirname(dir) === dir) return null;
  }
}

/** The module type of `file`: by extension, else by the nearest package.json's `type`. */
function typeOf(file) {
  const extension = path.extname(file);
  if (extension === ".mjs") return "esm";
  if (extension === ".cjs") return "commonjs";
  if (extension === ".json") return "json";
  if (extension === ".wasm") return "wasm";
  if (extension === ".js" || extension === "") return nearestPackage(path.dirname(file))?.manifest.type === "module" ? "esm" : "commonjs";
  return "text";
}

const realPaths = new Map();

/**
 * `file`'s real path (symbolic links resolved), as Node's resolver gives it: a package reached
 * through a pnpm, workspace or `npm link` symlink is one module, whichever path led to it (Vite,
 * which resolves the tests' imports, does the same).
 */
function realPath(file) {
  if (file === null || file === undefined) return file;
  let real = realPaths.get(file);
  if (real === undefined) {
    try {
      real = fs.realpathSync.native(file);
    } catch {
      real = file;
    }
    realPaths.set(file, real);
  }
  return real;
}

/** The file `specifier` names, imported (or required) from `referrer`; null when none (its real path). */
function resolveFile(specifier, referrer, kind) {
  return realPath(resolveLink(specifier, referrer, kind));
}

/** resolveFile, before symbolic links are resolved. */
function resolveLink(specifier, referrer, kind) {
  const from = referrer.startsWith("file:") ? fileURLToPath(referrer) : referrer;
  const fromDir = path.isAbsolute(from) ? path.dirname(from) : process.cwd();
  if (specifier.startsWith("file:")) return probe(fileURLToPath(specifier), kind);
  if (path.isAbsolute(specifier)) return probe(specifier, kind);
  if (specifier.startsWith("./") || specifier.startsWith("../")) return probe(path.resolve(fromDir, specifier), kind);
  return resolveBare(specifier, fromDir, kind);
}

/** Static imports and re-exports of an ES module's source (es-module-lexer; none if it fails). */
function staticImports(source) {
  try {
    // Loaded (and its WebAssembly compiled) only when a file has to be scanned.
    const [imports] = require("es-module-lexer").parse(source);
    return imports.filter((i) => (i.type === "static" || i.type === "reexport-star") && typeof i.specifier === "string").map((i) => i.specifier);
  } catch {
    return [];
  }
}

/**
 * Files read before, by path: { mtimeMs, size, type, content, imports } (imports: an ES module's
 * static import specifiers). Every runner of a Vitest process loads the same runtime, so each
 * file is read and scanned once; a file whose size or modification time changed is read again.
 */
const fileCache = new Map();
/** Resolutions made before: "kind\0from\0specifier" → file (found ones only; package.json
 * files are read once per process anyway, see readPackage). */
const resolveCache = new Map();

const SCANS_VERSION = 1;
/**
 * The static imports of ES modules scanned by earlier processes, kept in the cache folder
 * (`<cacheDir>/vitest-imports.json`: path → [mtimeMs, size, imports]), by file of that kind:
 * { file, entries: Map, dirty }. They are only hints: an import they miss is asked for when the
 * isolate links the module, and one the file no longer has is never used.
 */
const scanStores = new Map();

function scanStore(dir) {
  if (!dir) return null;
  const file = path.join(dir, "vitest-imports.json");
  let store = scanStores.get(file);
  if (store === undefined) {
    let entries = new Map();
    try {
      const saved = JSON.parse(fs.readFileSync(file, "utf8"));
      if (saved?.version === SCANS_VERSION && saved.files && typeof saved.files === "object") entries = new Map(Object.entries(saved.files));
    } catch {}
    store = { file, entries, dirty: false };
    scanStores.set(file, store);
  }
  return store;
}

/** Writes `store` when it learnt something (through a temporary file and a rename). */
function saveScans(store) {
  if (!store?.dirty) return;
  store.dirty = false;
  const temporary = `${store.file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(store.file), { recursive: true });
    fs.writeFileSync(temporary, JSON.stringify({ version: SCANS_VERSION, files: Object.fromEntries(store.entries) }));
    fs.renameSync(temporary, store.file);
  } catch {
    try {
      fs.rmSync(temporary, { force: true });
    } catch {}
  }
}

/** An ES module's static imports: from `store` when it scanned this version of it, else scanned. */
function importsOf(file, stat, content, store) {
  const saved = store?.entries.get(file);
  if (Array.isArray(saved) && saved[0] === stat.mtimeMs && saved[1] === stat.size && Array.isArray(saved[2])) return saved[2];
  const imports = staticImports(content.toString("utf8"));
  if (store) {
    store.entries.set(file, [stat.mtimeMs, stat.size, imports]);
    store.dirty = true;
  }
  return imports;
}

/** Node's globals the runner's own modules may use (lib/vitest/node-globals.mjs exports them). */
const NODE_GLOBALS = ["process", "Buffer", "global", "setImmediate", "clearImmediate"];
/** The same for a CommonJS module (whose require() of node: modules the trusted loader allows). */
const COMMONJS_GLOBALS = { process: `require("node:process")`, Buffer: `require("node:buffer").Buffer`, global: "globalThis", setImmediate: `require("node:timers").setImmediate`, clearImmediate: `require("node:timers").clearImmediate` };

/** Whether `source` declares `name` itself (a binding, an import, a function or class; nested
 * ones too: then the name is left alone, as an import beside a top-level one would not compile). */
function declares(source, name) {
  const n = `\\b${name}\\b`;
  return new RegExp(`\\b(?:var|let|const|class|function\\*?)\\s+${name}(?![\\w$])|\\b(?:var|let|const)\\s*[{[][^;=]*?${n}|\\bimport\\b[^;'"\`]*?${n}[^;'"\`]*?\\bfrom\\b`).test(source);
}

/**
 * The Node globals `source` uses as free names: what the isolate's own global scope may lack
 * (the worker's flags decide that), given to the module by an import instead.
 */
function globalsUsed(source) {
  return NODE_GLOBALS.filter((name) => new RegExp(`(?<![.\\w$#'"])${name}(?![\\w$'"])`).test(source) && !declares(source, name));
}

/**
 * `content` with the import of the globals it uses from `globalsFile` put before its first line
 * (on that line, so that line numbers stay): an ES module's import, a CommonJS module's `var`.
 */
function withGlobals(content, type, globalsFile) {
  if (type !== "esm" && type !== "commonjs") return content;
  let source = content.toString("utf8");
  // Their node:process (a default import, or import()) is the runner's process too
  // (node-globals.mjs); named imports keep node:process, whose names that file does not export.
  if (type === "esm") source = source.replace(/(\bimport\s+[\w$]+\s+from\s*|\bimport\s*\(\s*)(["'])node:process\2/g, (_, before) => `${before}${JSON.stringify(globalsFile)}`);
  const used = globalsUsed(source);
  if (used.length === 0) return source === content.toString("utf8") ? content : Buffer.from(source);
  const prefix =
    type === "esm"
      ? `import { ${used.join(", ")} } from ${JSON.stringify(globalsFile)};`
      : `var ${used.map((name) => `${name} = ${COMMONJS_GLOBALS[name]}`).join(", ")};`;
  // A hashbang must stay first.
  if (source.startsWith("#!")) {
    const end = source.indexOf("\n");
    return Buffer.from(`${source.slice(0, end + 1)}${prefix}${source.slice(end + 1)}`);
  }
  return Buffer.from(prefix + source);
}

/** `file`'s type, content and (for an ES module) static imports, from the cache when current. */
function readModule(file, store, globalsFile) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    fileCache.delete(`${globalsFile ?? ""}\0${file}`);
    return null;
  }
  const key = `${globalsFile ?? ""}\0${file}`;
  const known = fileCache.get(key);
  if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known;
  const type = typeOf(file);
  const read = fs.readFileSync(file);
  const content = globalsFile && file !== globalsFile ? withGlobals(read, type, globalsFile) : read;
  const entry = { mtimeMs: stat.mtimeMs, size: stat.size, type, content, imports: type === "esm" ? importsOf(file, stat, content, store) : [] };
  fileCache.set(key, entry);
  return entry;
}

/** resolveFile through the cache of resolutions (checked again when the file has gone). */
function resolveCached(specifier, referrer, kind) {
  const key = `${kind}\0${referrer}\0${specifier}`;
  const known = resolveCache.get(key);
  if (known !== undefined) return known;
  const found = resolveFile(specifier, referrer, kind);
  if (found) resolveCache.set(key, found);
  return found;
}

/**
 * Makes a `loadModule` for createWorker. `aliases` maps exact specifiers to files (the runner's
 * entry points); everything else resolves like Node from the importing module's folder. An ES
 * module comes with its static import graph resolved ahead (each file's content once per
 * answer; the engine keeps the modules it has), so that the isolate links it without asking
 * again for every file. With `cacheDir`, what the files import is kept there for later processes.
 * With `globals` (lib/vitest/node-globals.mjs), each module that uses Node's globals imports them
 * from that file (the worker is created with trustLoadedModules, so that these modules import
 * node: modules whatever the worker's flags).
 */
function createLoader({ aliases: given = {}, cacheDir, globals: globalsGiven, polyfill = () => null } = {}) {
  const aliases = Object.fromEntries(Object.entries(given).map(([specifier, file]) => [specifier, realPath(file)]));
  const globals = realPath(globalsGiven);
  const store = scanStore(cacheDir);
  return async function loadModule(specifier, referrer, { kind }) {
    let file = aliases[specifier];
    if (file === undefined) {
      if (specifier.startsWith("node:") || isBuiltin(specifier)) {
        const name = specifier.replace(/^node:/, "");
        // The worker's code requiring a built-in its flags lack (the runtime asks only then):
        // unenv's polyfill, as wrangler bundles it.
        const substitute = kind === "require" ? polyfill(name) : null;
        if (substitute) {
          file = realPath(substitute);
        } else {
          // A Node built-in the engine does not have: re-exported from its node: name when the
          // engine has that (a bare name in CommonJS), else missing.
          if (specifier.startsWith("node:")) return undefined;
          return { name: `node:${name}`, type: "esm", content: `export * from "node:${name}"; export { default } from "node:${name}";` };
        }
      }
      // `require("./x.wasm?module")` (a CommonJS package written for wrangler's bundler): the
      // compiled module as the default export, as esbuild gives an ES module to require().
      if (file === undefined && kind === "require" && specifier.endsWith(".wasm?module")) {
        const wasm = resolveCached(specifier.slice(0, -"?module".length), referrer, kind);
        if (!wasm) return undefined;
        return { name: `${wasm}?module`, type: "commonjs", content: `module.exports = { default: require(${JSON.stringify(wasm)}) };` };
      }
      file ??= resolveCached(specifier, referrer, kind);
    }
    if (!file) return undefined;
    let module = readModule(file, store, globals);
    if (!module && aliases[specifier] === undefined) {
      // Resolved before, gone now: resolve again.
      resolveCache.delete(`${kind}\0${referrer}\0${specifier}`);
      file = resolveFile(specifier, referrer, kind);
      module = file && readModule(file, store, globals);
    }
    if (!module) return undefined;
    const sent = new Set([file]);
    const dependencies = [];
    const queue = module.type === "esm" ? [[file, module]] : [];
    while (queue.length > 0) {
      const [from, source] = queue.shift();
      for (const spec of source.imports) {
        if (spec.startsWith("node:") || spec.startsWith("cloudflare:") || isBuiltin(spec) || aliases[spec] !== undefined) continue;
        let target = resolveCached(spec, from, "import");
        let found = target && readModule(target, store, globals);
        if (target && !found) {
          resolveCache.delete(`import\0${from}\0${spec}`);
          target = resolveFile(spec, from, "import");
          found = target && readModule(target, store, globals);
        }
        if (!found) continue;
        if (sent.has(target)) {
          dependencies.push({ referrer: from, specifier: spec, name: target });
          continue;
        }
        sent.add(target);
        dependencies.push({ referrer: from, specifier: spec, name: target, type: found.type, content: found.content });
        if (found.type === "esm") queue.push([target, found]);
      }
    }
    saveScans(store);
    return { name: file, type: module.type, content: module.content, dependencies };
  };
}

/**
 * `polyfill` for createLoader: unenv's polyfill of `node:<name>` where the worker (its date and
 * flags) has nodejs_compat_v2 but not the module's own flag (`enable_nodejs_perf_hooks_module`,
 * …), as wrangler's bundle substitutes it; else null.
 */
function unenvPolyfills(compatibilityDate, compatibilityFlags) {
  const { resolveCompat } = require("../compat.js");
  const { modules: MODULE_FLAGS } = require("../node-module-flags.json");
  let enabled = [];
  try {
    enabled = resolveCompat(compatibilityDate, compatibilityFlags, "workerbox/vitest", { experimental: true }).enabled;
  } catch {}
  return (name) => {
    const flag = MODULE_FLAGS[name];
    if (!enabled.includes("nodejs_compat_v2") || flag === undefined || enabled.includes(flag)) return null;
    try {
      return require.resolve(`unenv/node/${name}`);
    } catch {
      return null;
    }
  };
}

module.exports = { createLoader, resolveBare, globalsUsed, realPath, unenvPolyfills };
