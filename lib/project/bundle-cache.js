"use strict";
// The bundle cache of `workerbox dev` (and of loadProject's `cache` option): the last bundle of a
// project (script, source map, modules, exports) kept under `<project>/.wrangler/tmp/workerbox-bundle/`,
// one slot per config file and environment, and reused at the next start instead of running
// esbuild again when nothing that went into it changed:
// - the key: esbuild's version, the sources of workerbox's bundling code, and every setting of
//   the build (main, rules, define, alias, tsconfig, minify, compatibility date and flags, root
//   and output folder);
// - every input esbuild read (from its metafile) and every module file, by size and mtime;
// - every folder that holds an input, up to the project root (or, for inputs outside it, up to
//   the folder the input and the root share): a new file in one (one that would now resolve
//   first, `./a.ts` beside `./a.js`, a nearer `node_modules`) changes the folder's mtime;
// - the `package.json`, `tsconfig.json` and `jsconfig.json` of each of those folders (esbuild
//   reads them without listing them as inputs), including their absence.
// A save records the stats taken before the build for paths the previous bundle already had (an
// edit made while esbuild runs then misses next time), and a path first seen in this build only
// when it was last changed before the build began. A slot that cannot be read (torn, edited,
// hashes that do not match) is reported once and removed.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const FORMAT = 1;
const PROBES = ["package.json", "tsconfig.json", "jsconfig.json"];
/** A path first seen in a build must be older than the build by this much to be trusted. */
const SLOP_NS = 50_000_000n;
/** Folders never taken as evidence (their mtime changes for unrelated reasons). */
const NEVER = new Set([path.parse(process.cwd()).root, os.tmpdir(), os.homedir()]);

// node:crypto (~3-5 ms to load) loads when something is first hashed: a start without a bundle
// (a build's configuration served as it is) hashes nothing.
const sha = (data) => require("node:crypto").createHash("sha256").update(data).digest("hex");

let libDigest = null;
/** A digest of workerbox's own bundling code and esbuild's version, read once per process. */
function toolDigest() {
  if (libDigest !== null) return libDigest;
  const hash = require("node:crypto").createHash("sha256");
  for (const file of ["bundle.js", "bundle-cache.js", "node-builtins.js", "../node-module-flags.json", "../compat.js"]) {
    try {
      hash.update(fs.readFileSync(path.join(__dirname, file)));
    } catch {
      hash.update(`missing ${file}`);
    }
  }
  try {
    hash.update(JSON.parse(fs.readFileSync(require.resolve("esbuild/package.json"), "utf8")).version);
  } catch {
    hash.update("no esbuild");
  }
  libDigest = hash.digest("hex");
  return libDigest;
}

/** The folder of a project's bundle cache slots. */
function cacheRoot(config) {
  return path.join(config.projectRoot ?? config.root, ".wrangler", "tmp", "workerbox-bundle");
}

/**
 * A holder for bundle()'s `cache` option: where this config's slot is and what the previous
 * build read (so a save can use stats taken before the next build).
 */
function bundleCache(config, { env } = {}) {
  let dir = null; // named on first use (see sha)
  return {
    get dir() {
      return (dir ??= path.join(cacheRoot(config), sha(`${config.file}\0${env ?? config.env ?? ""}`).slice(0, 16)));
    },
    root: config.projectRoot ?? config.root,
    known: null,
  };
}

/**
 * Whether the project folder of `holder` is gone (removed while the dev server still ran, e.g. a
 * test's temporary copy): its late writes (the bundle's copy, the cache) are then skipped rather
 * than making the folder again.
 */
function projectGone(holder) {
  return holder?.root !== undefined && !fs.existsSync(holder.root);
}

/**
 * Whether a start of `target` (a project folder or config file) will likely not need esbuild:
 * it has a bundle cache, or it serves a build's configuration (`.wrangler/deploy/config.json`,
 * as Cloudflare's Vite plugin writes it, with `no_bundle`). The CLI then does not boot esbuild's
 * process ahead of need.
 */
function hasBundleCache(target) {
  let dir = path.resolve(target ?? ".");
  try {
    if (!fs.statSync(dir).isDirectory()) dir = path.dirname(dir);
  } catch {
    return false;
  }
  return fs.existsSync(path.join(dir, ".wrangler", "tmp", "workerbox-bundle")) || fs.existsSync(path.join(dir, ".wrangler", "deploy", "config.json"));
}

/** The key of a build: everything besides the files that decides its output. */
function buildKey(config, outdir, settings, rules) {
  return sha(JSON.stringify({
    format: FORMAT,
    tools: toolDigest(),
    root: config.root,
    main: config.mainFile,
    outdir,
    settings,
    rules: rules.map((r) => ({ type: r.type, globs: r.globs, fallthrough: r.fallthrough })),
    date: config.compatibilityDate,
    flags: config.compatibilityFlags,
  }));
}

/** [size, mtime ns] of a file or folder as strings, or null when it does not exist. */
function stat(file) {
  try {
    const s = fs.statSync(file, { bigint: true });
    return [String(s.isDirectory() ? -1n : s.size), String(s.mtimeNs)];
  } catch {
    return null;
  }
}

const within = (dir, file) => file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);

/** Every folder whose listing decided how the inputs resolved (see the file comment). */
function foldersOf(inputs, root) {
  const dirs = new Set();
  for (const file of inputs) {
    let top = root;
    while (!within(top, file) && path.dirname(top) !== top) top = path.dirname(top);
    for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
      if (!NEVER.has(dir)) dirs.add(dir);
      if (dir === top || path.dirname(dir) === dir) break;
    }
    // The root's own folders down from the shared one (a nearer node_modules would appear there).
    for (let dir = root; within(top, dir); dir = path.dirname(dir)) {
      if (!NEVER.has(dir)) dirs.add(dir);
      if (dir === top || path.dirname(dir) === dir) break;
    }
  }
  return [...dirs];
}

/** The paths whose stats a slot records: inputs, their folders, and the probes in each folder. */
function watchedPaths(inputs, root, extra = []) {
  const dirs = foldersOf(inputs, root);
  // esbuild also looks for a tsconfig.json above the root: those files (not their folders).
  const above = [];
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    above.push(...PROBES.map((name) => path.join(dir, name)));
    if (path.dirname(dir) === dir) break;
  }
  const probes = [...dirs.flatMap((dir) => PROBES.map((name) => path.join(dir, name))), ...above, ...extra];
  return [...new Set([...inputs, ...extra, ...dirs, ...probes, ...extendedConfigs(probes)])];
}

/**
 * The files the tsconfig/jsconfig files among `files` extend (`"extends"`, a path or a package
 * file, followed transitively), found as esbuild would, best effort: a changed base config misses.
 */
function extendedConfigs(files) {
  const found = new Set();
  const queue = files.filter((file) => /[/\\][tj]sconfig[^/\\]*\.json$/.test(file));
  while (queue.length) {
    const file = queue.pop();
    let text;
    try {
      text = fs.readFileSync(file, "utf8");
    } catch {
      continue;
    }
    const match = /"extends"\s*:\s*(\[[^\]]*\]|"[^"]*")/.exec(text);
    if (!match) continue;
    for (const [, name] of match[1].matchAll(/"([^"]*)"/g)) {
      const candidates = name.startsWith(".") || path.isAbsolute(name) ? [path.resolve(path.dirname(file), name), path.resolve(path.dirname(file), `${name}.json`)] : [];
      if (candidates.length === 0) {
        for (const request of [name, `${name}.json`, `${name}/tsconfig.json`]) {
          try {
            candidates.push(require.resolve(request, { paths: [path.dirname(file)] }));
            break;
          } catch {
            // not this form
          }
        }
      }
      for (const candidate of candidates) {
        if (found.has(candidate)) continue;
        found.add(candidate);
        queue.push(candidate);
      }
    }
  }
  return [...found];
}

/** Stats of `paths` now, for the next save (see bundle()). */
function statBefore(holder, root, made = []) {
  const before = new Map();
  for (const file of holder.known ?? []) before.set(file, stat(file));
  // The folders our own output folders were just made in (their mtime is ours, not a change).
  for (const dir of made) {
    for (let d = dir; within(root, d); d = path.dirname(d)) {
      before.set(d, stat(d));
      if (d === root || path.dirname(d) === d) break;
    }
  }
  return before;
}

/**
 * Looks up the slot for `key`. Returns `{ hit: built }`, `{ miss: reason }` or `{ corrupt:
 * reason }` (the slot is then removed). Remembers the slot's paths for the next save.
 */
function lookup(holder, key) {
  const manifestFile = path.join(holder.dir, "manifest.json");
  let text;
  try {
    text = fs.readFileSync(manifestFile, "utf8");
  } catch {
    return { miss: "no cached bundle yet" };
  }
  let manifest;
  const corrupt = (reason) => {
    fs.rmSync(holder.dir, { recursive: true, force: true });
    return { corrupt: `${path.relative(process.cwd(), holder.dir) || holder.dir}: ${reason}; it was removed and the worker is bundled again` };
  };
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    return corrupt(`manifest.json is not valid JSON (${error.message})`);
  }
  if (manifest?.format !== FORMAT || !Array.isArray(manifest.stats) || typeof manifest.script !== "string" || typeof manifest.filename !== "string") {
    return corrupt("manifest.json is not a bundle cache manifest of this workerbox");
  }
  holder.known = manifest.stats.map(([file]) => file);
  if (manifest.key !== key) return { miss: "the build settings changed" };
  for (const [file, recorded] of manifest.stats) {
    const now = stat(file);
    if (JSON.stringify(now) !== JSON.stringify(recorded)) return { miss: `${path.relative(process.cwd(), file) || file} changed` };
  }
  let script;
  let map;
  try {
    script = fs.readFileSync(path.join(holder.dir, "index.js"));
    map = manifest.map ? fs.readFileSync(path.join(holder.dir, "index.js.map")) : null;
  } catch (error) {
    return corrupt(`cannot read the cached bundle (${error.code ?? error.message})`);
  }
  if (sha(script) !== manifest.script || (map && sha(map) !== manifest.map)) return corrupt("the cached bundle does not match its manifest (a torn or edited file)");
  let sourceMap;
  try {
    sourceMap = map ? JSON.parse(map.toString("utf8")) : undefined;
  } catch {
    return corrupt("the cached source map is not valid JSON");
  }
  const modules = {};
  for (const [file, type] of manifest.modules ?? []) {
    try {
      modules[file] = { type, content: fs.readFileSync(file) };
    } catch {
      return { miss: `${file} is gone` };
    }
  }
  return {
    hit: {
      script: script.toString("utf8"),
      filename: manifest.filename,
      exports: manifest.exports ?? undefined,
      modules,
      inputs: manifest.inputs,
      sourceMap,
      warnings: manifest.warnings ?? [],
    },
  };
}

/**
 * Writes the slot for a build that began at `startedNs` (wall clock), with `before` the stats
 * taken just before it. Skips the save (and says why) when a path first seen in this build
 * changed after the build began. Never throws: a cache that cannot be written only costs a build.
 */
function save(holder, key, built, { root, startedNs, before, mapText, extra }) {
  if (projectGone(holder)) return { skipped: `the project folder ${holder.root} is gone` };
  // The slot's folder first: making it changes the mtime of folders recorded below.
  try {
    fs.mkdirSync(holder.dir, { recursive: true });
  } catch (error) {
    return { skipped: `cannot write ${holder.dir}: ${error.message}` };
  }
  const paths = watchedPaths(built.inputs, root, extra);
  const stats = [];
  for (const file of paths) {
    const known = before?.has(file) ? before.get(file) : undefined;
    const now = known === undefined ? stat(file) : known;
    if (known === undefined && now !== null && BigInt(now[1]) > startedNs - SLOP_NS) {
      holder.known = paths;
      return { skipped: `${file} changed while the worker was bundled` };
    }
    stats.push([file, now]);
  }
  holder.known = paths;
  const manifest = {
    format: FORMAT,
    key,
    filename: built.filename,
    exports: built.exports ?? null,
    inputs: built.inputs,
    modules: Object.entries(built.modules).map(([file, m]) => [file, m.type]),
    warnings: built.warnings,
    script: sha(built.script),
    map: mapText ? sha(mapText) : null,
    stats,
  };
  try {
    const write = (name, data) => {
      const temporary = path.join(holder.dir, `${name}.${process.pid}.tmp`);
      fs.writeFileSync(temporary, data);
      fs.renameSync(temporary, path.join(holder.dir, name));
    };
    // The manifest goes last and names the others' hashes: a reader never takes a torn slot.
    write("index.js", built.script);
    if (mapText) write("index.js.map", mapText);
    write("manifest.json", JSON.stringify(manifest));
    return { saved: true };
  } catch (error) {
    return { skipped: `cannot write ${holder.dir}: ${error.message}` };
  }
}

module.exports = { bundleCache, hasBundleCache, buildKey, lookup, save, statBefore, cacheRoot, watchedPaths, projectGone };
