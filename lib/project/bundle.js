"use strict";
// Bundling a project's worker with esbuild (an optional peer dependency): TypeScript and JSX,
// npm packages resolved with the `workerd`/`worker`/`browser` conditions, module rules (Text,
// Data and CompiledWasm files become separate modules of the worker, as in wrangler),
// `define`/`alias` (with `process.env.NODE_ENV` as wrangler dev defines it), Node built-ins as
// wrangler treats them (./node-builtins.js), and an external source map. Also owns mapping a
// worker's error stacks and log lines from the bundle back to the original files and lines, and
// the no-bundle fallback. With `cache` (the dev server), a first build is answered from the
// bundle cache when it can be (bundle-cache.js) and its files are written after the call
// returns (while the worker is created).

const fs = require("node:fs");
const path = require("node:path");
const { stackMapper, identityMapper, mapError } = require("../sourcemap.js");
const { nodeBuiltinsPlugin } = require("./node-builtins.js");
const bundleCache = require("./bundle-cache.js");
// Loaded on first use (a project with module rules or an unbundled worker).
// picomatch loads only for a rule's glob that is more than `**/*.<ext>` or a path (glob.js).
const { globMatcher } = require("./glob.js");

/** wrangler's default module rules; a project's own rules come first. */
const DEFAULT_RULES = [
  { type: "Text", globs: ["**/*.txt", "**/*.html", "**/*.sql"] },
  { type: "Data", globs: ["**/*.bin"] },
  { type: "CompiledWasm", globs: ["**/*.wasm", "**/*.wasm?module"] },
];
const MODULE_KIND = { Text: "text", Data: "data", CompiledWasm: "wasm", ESModule: "esm", CommonJS: "commonjs" };

/**
 * `process.env.NODE_ENV` (and its `global.`/`globalThis.` forms) as the bundle's constant, as
 * wrangler dev defines it: the shell's NODE_ENV, else "development". A project's own `define`
 * of the same keys wins. Besides matching what code reads, a package's branch for the other
 * mode is left out of the bundle: React's CommonJS entry points pick their development or
 * production build by it (on Remix's server build, 2.4 MB with both, 2.07 MB with one).
 */
function nodeEnvDefine() {
  const value = JSON.stringify(process.env.NODE_ENV || "development");
  return { "process.env.NODE_ENV": value, "global.process.env.NODE_ENV": value, "globalThis.process.env.NODE_ENV": value };
}

/** esbuild, if installed (it is an optional peer dependency), else null. */
function loadEsbuild() {
  try {
    return require("esbuild");
  } catch {
    return null;
  }
}

let oneShot = null; // { api, users } while its service runs
/**
 * A second copy of esbuild's JS API, with a service process of its own started without Go's
 * garbage collector (GOGC=off, bounded by GOMEMLIMIT=1GiB; a user's own GOGC/GOMEMLIMIT win),
 * for the dev server's first bundle: Go's collector, which the long-lived service keeps, costs
 * that one build about a third of its time (Remix's 2.4 MB server build). The process is
 * stopped once no first bundle uses it (releaseOneShot), so its memory goes with it; the
 * incremental context of the reloads lives in the ordinary service. Null without esbuild.
 */
function oneShotEsbuild() {
  if (oneShot !== null) return oneShot.api;
  let id;
  try {
    id = require.resolve("esbuild");
  } catch {
    return null;
  }
  const cached = require.cache[id];
  delete require.cache[id];
  let api;
  try {
    api = require(id);
  } catch {
    return null;
  } finally {
    if (cached) require.cache[id] = cached;
    else delete require.cache[id];
  }
  // The service starts now (initialize() spawns it) with these variables; later spawns see
  // the environment as it was.
  const saved = { GOGC: process.env.GOGC, GOMEMLIMIT: process.env.GOMEMLIMIT };
  if (saved.GOGC === undefined) process.env.GOGC = "off";
  if (saved.GOMEMLIMIT === undefined) process.env.GOMEMLIMIT = "1GiB";
  try {
    api.initialize({}).catch(() => {});
  } catch {
    // Started already.
  } finally {
    for (const [name, value] of Object.entries(saved)) if (value === undefined) delete process.env[name];
  }
  oneShot = { api, users: 0 };
  return api;
}

/** Runs `fn(api)` with the first bundle's esbuild (oneShotEsbuild); stops its service after the last user. */
async function withOneShot(fn) {
  const api = oneShotEsbuild();
  if (api === null) return fn(null);
  const held = oneShot;
  held.users++;
  try {
    return await fn(api);
  } finally {
    if (--held.users === 0 && oneShot === held) stopOneShotEsbuild();
  }
}

/** Stops the first bundle's esbuild service (oneShotEsbuild), if one runs and nothing uses it. */
function stopOneShotEsbuild() {
  if (oneShot === null || oneShot.users > 0) return;
  const { api } = oneShot;
  oneShot = null;
  api.stop?.()?.catch?.(() => {});
}

/**
 * Starts esbuild's service process now (it starts on the first call otherwise), so that it
 * boots while the rest of the dev server loads: with `oneShot`, the service of a first bundle
 * made without a source map (bundle()'s `deferMap`). Does nothing without esbuild.
 */
function warmEsbuild({ oneShot: first = false } = {}) {
  (first ? oneShotEsbuild() : loadEsbuild())?.transform("", {}).catch(() => {});
}

/** picomatch's matcher for `globs` (with dotfiles), made on its first use: a bundle whose imports no rule can claim never needs one. */
function lazyMatcher(globs) {
  let match = null;
  return (file) => (match ??= globMatcher(globs, { dot: true }))(file);
}

/**
 * The project's rules followed by the defaults, as wrangler combines them: a project rule of some
 * type replaces the default rule of that type unless it says `fallthrough: true`.
 */
function effectiveRules(rules = []) {
  const replaced = new Set(rules.filter((r) => !r.fallthrough).map((r) => r.type));
  const all = [...rules, ...DEFAULT_RULES.filter((r) => !replaced.has(r.type))];
  return all.map((rule) => ({ ...rule, match: lazyMatcher(rule.globs) }));
}

function ruleFor(rules, file, root) {
  const relative = path.relative(root, file).split(path.sep).join("/");
  return rules.find((rule) => rule.match(relative) || rule.match(path.basename(file)));
}

/**
 * The import paths the module rules can claim, as a filter esbuild checks itself: every import
 * that passes it is a round trip to this process (a 2.4 MB bundle has ~160 imports, ~50 ms of
 * them). When every glob of a non-JavaScript rule ends in `*.<extension>` (the defaults do), only
 * relative or absolute paths ending in one of those extensions (or `?module`) can be claimed;
 * otherwise any relative or absolute path can. Null: no rule can claim any.
 */
function rulesFilter(rules) {
  const extensions = new Set();
  for (const rule of rules) {
    if (rule.type === "ESModule" || rule.type === "CommonJS") continue;
    for (const glob of rule.globs) {
      const match = /(?:^|\/)\*\.([A-Za-z0-9_?-]+(?:\.[A-Za-z0-9_?-]+)*)$/.exec(glob);
      if (!match) return /^[./]/;
      // picomatch's `?` is any one character.
      extensions.add(match[1].replace(/\./g, "\\.").replace(/\?/g, "."));
    }
  }
  if (extensions.size === 0) return null;
  return new RegExp(`^[./].*\\.(?:${[...extensions].join("|")})(?:\\?module)?$`);
}

/** An esbuild plugin that turns files matched by Text/Data/CompiledWasm rules into modules. */
function modulesPlugin(rules, root, outdir, modules) {
  return {
    name: "workerbox-module-rules",
    setup(build) {
      // An incremental context runs this setup once: each rebuild starts from an empty map.
      build.onStart(() => modules.clear());
      const filter = rulesFilter(rules);
      if (filter === null) return;
      build.onResolve({ filter }, (args) => {
        if (args.kind === "entry-point" || !/^[./]/.test(args.path)) return undefined;
        const cleaned = args.path.replace(/\?module$/, "");
        const rule = ruleFor(rules, path.resolve(args.resolveDir, cleaned), root);
        if (!rule || rule.type === "ESModule" || rule.type === "CommonJS") return undefined;
        const file = path.resolve(args.resolveDir, cleaned);
        if (!fs.existsSync(file)) return { errors: [{ text: `${args.path} (a ${rule.type} module) does not exist: ${file}` }] };
        modules.set(file, MODULE_KIND[rule.type]);
        let specifier = path.relative(outdir, file).split(path.sep).join("/");
        if (!specifier.startsWith(".")) specifier = `./${specifier}`;
        return { path: specifier, external: true, watchFiles: [file] };
      });
    },
  };
}

/** An error carrying esbuild's messages, each with file and line. */
class BuildError extends Error {
  constructor(messages, root) {
    const lines = messages.map((m) => {
      const loc = m.location ? `${path.resolve(root, m.location.file)}:${m.location.line}:${m.location.column + 1}: ` : "";
      return `${loc}${m.text}`;
    });
    super(`build failed:\n${lines.join("\n")}`);
    this.name = "BuildError";
    this.errors = messages;
  }
}

/**
 * Bundles `config.mainFile` into `<root>/.workerbox/bundle/`. Returns `{ script, filename,
 * modules, inputs, sourceMap, exports }`: createWorker's script, filename and modules, the files
 * the bundle read (to watch), a mapper for stacks, and the names the bundle exports (unknown,
 * undefined, without bundling).
 *
 * `deferMap` (the dev server's first bundle, when no esbuild context exists yet): the bundle is
 * made without its source map, as a one-off build in a service of its own (oneShotEsbuild), so
 * the first answer does not wait for the map (a quarter of esbuild's time on a large bundle);
 * the result says `mapDeferred: true`, its `mapper` maps nothing until given one (`set()`), and
 * nothing is saved to the bundle cache. The caller makes the map with the next bundle() call
 * (the incremental context's first build, with the map), whose script is the same text: esbuild
 * writes an external map without touching the code (no sourceMappingURL comment).
 */
async function bundle(config, { outdir = path.join(config.root, ".workerbox", "bundle"), incremental, cache, lookup = true, deferMap = false } = {}) {
  const rules = effectiveRules(config.rules);
  if (config.noBundle) return unbundled(config, rules);
  const settings = {
    target: "es2024", // wrangler's target and loaders (its COMMON_ESBUILD_OPTIONS)
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    minify: config.minify === true,
    keepNames: true,
    define: { ...nodeEnvDefine(), ...config.define },
    alias: config.alias,
    tsconfig: config.tsconfig ? path.resolve(config.root, config.tsconfig) : undefined,
    loader: { ".js": "jsx", ".mjs": "jsx", ".cjs": "jsx" },
    jsx: "transform",
  };
  // The bundle cache (bundle-cache.js) answers a first build (no esbuild context yet) when
  // nothing that went into its bundle changed; esbuild is then not even loaded.
  const key = cache ? bundleCache.buildKey(config, outdir, settings, rules) : undefined;
  let cacheStatus = cache ? { status: "built" } : undefined;
  if (cache && lookup && !incremental?.context) {
    const found = bundleCache.lookup(cache, key);
    if (found.hit) {
      const built = found.hit;
      refreshOutfile(cache, built);
      return { ...built, mapper: built.sourceMap ? stackMapper(built.filename, built.sourceMap) : identityMapper, cache: { status: "hit" } };
    }
    cacheStatus = found.corrupt ? { status: "corrupt", message: found.corrupt } : { status: "miss", message: found.miss };
  }
  if (cache) {
    // Our own folders exist before the build starts: making them later would change the mtime of
    // a folder the cache records, and the save would be refused.
    for (const dir of [outdir, cache.dir]) {
      try {
        fs.mkdirSync(dir, { recursive: true });
      } catch {
        // reported when written
      }
    }
  }
  const defer = deferMap && !incremental?.context;
  if (defer) {
    // Made by the first bundle's own esbuild service, without the source map.
    const built = await withOneShot((esbuild) => (esbuild === null ? null : runEsbuild(esbuild, config, rules, outdir, { ...settings, sourcemap: false }, [], undefined, cache)));
    if (built !== null) {
      delete built.mapText;
      return { ...built, mapper: laterMapper(), mapDeferred: true, ...(cacheStatus ? { cache: cacheStatus } : {}) };
    }
  }
  const esbuild = loadEsbuild();
  if (esbuild === null) {
    if (/\.(m?js)$/.test(config.mainFile)) return unbundled(config, rules, { reason: "esbuild is not installed" });
    throw new Error(`${config.mainFile} needs bundling, but esbuild is not installed: run \`npm install --save-dev esbuild\` (it is an optional peer dependency of workerbox)`);
  }
  const before = cache ? bundleCache.statBefore(cache, config.root, [outdir, cache.dir]) : null;
  const startedNs = BigInt(Date.now()) * 1_000_000n;
  const built = await runEsbuild(esbuild, config, rules, outdir, settings, [], incremental, cache);
  if (cache) {
    // Saved once the worker is being created (the disk writes are off the first answer's path).
    const mapText = built.mapText;
    cache.pending = Promise.resolve(cache.pending).then(() => new Promise((resolve) => setImmediate(() => {
      cache.lastSave = bundleCache.save(cache, key, built, { root: config.root, startedNs, before, mapText, extra: settings.tsconfig ? [settings.tsconfig] : [] });
      resolve();
    })));
  }
  delete built.mapText;
  return { ...built, ...(cacheStatus ? { cache: cacheStatus } : {}) };
}

/**
 * A stack mapper whose source map comes later (bundle()'s `deferMap`): it maps nothing while
 * `pending`; `set(mapper)` gives it the real one.
 */
function laterMapper() {
  let inner = null;
  return {
    pending: true,
    mapStack: (text) => (inner ? inner.mapStack(text) : text),
    mapLocation: (line, column) => (inner ? inner.mapLocation(line, column) : null),
    set(mapper) {
      inner = mapper;
      this.pending = false;
    },
  };
}

/** After a cache hit: the bundle's files in the output folder, if they are not those already. */
function refreshOutfile(cache, built) {
  cache.pending = Promise.resolve(cache.pending).then(() => new Promise((resolve) => setImmediate(() => {
    if (bundleCache.projectGone(cache)) return resolve();
    try {
      if (fs.statSync(built.filename).size !== Buffer.byteLength(built.script)) throw new Error("differs");
    } catch {
      try {
        fs.mkdirSync(path.dirname(built.filename), { recursive: true });
        fs.writeFileSync(built.filename, built.script);
        if (built.sourceMap) fs.writeFileSync(`${built.filename}.map`, JSON.stringify(built.sourceMap));
      } catch {
        // Only a copy for people to read: the worker runs from memory.
      }
    }
    resolve();
  })));
}

/**
 * A holder for bundle()'s `incremental` option: the first bundle makes an esbuild context, later
 * ones rebuild it (esbuild keeps the files it parsed and did not see change), as a dev server's
 * reloads do. `dispose()` ends the context (esbuild's process stays up while one is open).
 */
function incrementalBundles() {
  return {
    context: null,
    async dispose() {
      const context = this.context;
      this.context = null;
      if (context) await context.dispose().catch(() => {});
    },
  };
}

/** One esbuild run from `config.mainFile` into `<outdir>/index.js`, with `settings` over the common ones. */
async function runEsbuild(esbuild, config, rules, outdir, settings, plugins = [], incremental = undefined, cache = undefined) {
  const modules = incremental?.context ? incremental.modules : new Map();
  const outfile = path.join(outdir, "index.js");
  let result;
  try {
    const options = {
      entryPoints: [config.mainFile],
      absWorkingDir: config.root,
      outfile,
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      sourcemap: "external",
      sourcesContent: false,
      metafile: true,
      logLevel: "silent",
      external: ["cloudflare:*"],
      ...settings,
      plugins: [...plugins, nodeBuiltinsPlugin(config), modulesPlugin(rules, config.root, outdir, modules)],
    };
    if (incremental === undefined || typeof esbuild.context !== "function") result = await esbuild.build(options);
    else {
      if (!incremental.context) {
        incremental.context = await esbuild.context(options);
        incremental.modules = modules;
      }
      result = await incremental.context.rebuild();
    }
  } catch (error) {
    if (Array.isArray(error.errors)) throw new BuildError(error.errors, config.root);
    throw error;
  }
  const js = result.outputFiles.find((f) => f.path.endsWith(".js"));
  const map = result.outputFiles.find((f) => f.path.endsWith(".js.map"));
  const writeOut = () => {
    fs.mkdirSync(outdir, { recursive: true });
    fs.writeFileSync(outfile, js.text);
    if (map) fs.writeFileSync(`${outfile}.map`, map.text);
    else fs.rmSync(`${outfile}.map`, { force: true });
  };
  // With a cache (the dev server), the copy on disk is written while the worker is created.
  if (cache) {
    cache.pending = Promise.resolve(cache.pending).then(() => new Promise((resolve) => setImmediate(() => {
      try {
        if (!bundleCache.projectGone(cache)) writeOut();
      } catch {
        // Only a copy for people to read: the worker runs from memory.
      }
      resolve();
    })));
  } else writeOut();
  const inputs = Object.keys(result.metafile.inputs).map((file) => path.resolve(config.root, file.replace(/^[a-z-]+:/, "")));
  const moduleMap = {};
  for (const [file, kind] of modules) {
    moduleMap[file] = { type: kind, content: fs.readFileSync(file) };
    inputs.push(file);
  }
  const sourceMap = map ? JSON.parse(map.text) : undefined;
  const output = Object.entries(result.metafile.outputs).find(([file]) => path.resolve(config.root, file) === outfile)?.[1];
  return {
    script: js.text,
    filename: outfile,
    exports: output?.exports,
    modules: moduleMap,
    inputs,
    mapper: sourceMap ? stackMapper(outfile, sourceMap) : identityMapper,
    sourceMap,
    mapText: map?.text,
    warnings: result.warnings.map((w) => `${w.location ? `${path.resolve(config.root, w.location.file)}:${w.location.line}: ` : ""}${w.text}`),
  };
}

/**
 * No bundling: main and every module file next to it (by the rules) become modules. Besides the
 * project's rules, `.js`/`.mjs` files are ES modules and `.cjs` files CommonJS ones (a project
 * rule of type `CommonJS`, e.g. for `**\/*.js`, comes first and wins).
 */
function unbundled(config, rules, { reason } = {}) {
  const base = path.dirname(config.mainFile);
  const moduleMap = {};
  const inputs = [];
  const rulesWithJs = [...rules, { type: "ESModule", match: globMatcher(["**/*.js", "**/*.mjs"]) }, { type: "CommonJS", match: globMatcher(["**/*.cjs"]) }];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(file);
      } else if (file !== config.mainFile) {
        const rule = ruleFor(rulesWithJs, file, base);
        if (rule && MODULE_KIND[rule.type]) {
          moduleMap[file] = { type: MODULE_KIND[rule.type], content: fs.readFileSync(file) };
          inputs.push(file);
        }
      }
    }
  };
  walk(base);
  const script = fs.readFileSync(config.mainFile, "utf8");
  return {
    script,
    filename: config.mainFile,
    modules: moduleMap,
    inputs: [config.mainFile, ...inputs],
    mapper: identityMapper,
    warnings: reason ? [`${reason}: ${path.relative(config.root, config.mainFile)} and the modules beside it are loaded without bundling`] : [],
  };
}

module.exports = { warmEsbuild, stopOneShotEsbuild, bundle, incrementalBundles, loadEsbuild, mapError, effectiveRules, rulesFilter, BuildError, DEFAULT_RULES };
