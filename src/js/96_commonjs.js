// CommonJS modules given in createWorker's `modules` (`type: "commonjs"`, or a `.cjs` name), as
// Workers' CommonJS module rule runs them: `require`, `module`, `exports`, `__filename`,
// `__dirname`. The native module loader calls `internals.loadCommonJs(name, nodeEnabled)` when
// an ES module imports one; `require()` inside reaches the other modules by path relative to the
// requiring one, and `node:` modules when nodejs_compat is on; what those do not answer goes to
// the host's `loadModule` when the worker has one (ops.hostModule). Each runs once per context.
// An ES module required runs synchronously and gives what workerd's require(esm) gives.

const commonJsCache = new Map();

function normalizeModulePath(path) {
  const parts = [];
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return parts.join("/");
}

/**
 * `require` for the module named `referrer`; `origin` is its real path, when known (createRequire),
 * whose require gives a module's value itself at any date (`direct`), as workerd's does.
 */
function requireFrom(referrer, nodeEnabled, origin = undefined, direct = false) {
  return function require(specifier) {
    specifier = String(specifier);
    const bare = specifier.startsWith("node:") ? specifier.slice(5) : specifier;
    // A trusted host module (trustLoadedModules) requires any node: module, whatever the flags.
    if (nodeEnabled === "trusted" && !bare.startsWith("internal/") && ops.nodeModuleExists(bare) && (specifier.startsWith("node:") || ops.userModule(bare) === undefined)) {
      return internals.loadNodeModule(bare);
    }
    // Bare names ("buffer") reach node: modules only with nodejs_compat_v2, as in workerd.
    const bareAllowed = internals.compat?.enabled.includes("nodejs_compat_v2") && ops.nodeModuleAllowed(bare);
    if (nodeEnabled && (specifier.startsWith("node:") || bareAllowed) && !bare.startsWith("internal/")) {
      // createRequire's require gives a node: module's namespace before require_returns_default_export
      // (2026-01-22), as workerd's; a CommonJS module's require gives its exports.
      if (ops.nodeModuleAllowed(bare)) {
        // Its ES module form is made now (if not yet), so that the named exports an import sees
        // keep their values whatever the code that required it patches later, as workerd's.
        const namespace = ops.nodeModuleNamespace(bare);
        return direct && !internals.feature("require_returns_default_export") ? namespace : internals.loadNodeModule(bare);
      }
      return fromHost(specifier, referrer, nodeEnabled, origin, direct);
    }
    // A file:///bundle/ URL (import.meta.resolve's answer under new_module_registry) names a bundle module.
    if (specifier.startsWith("file:///bundle/")) {
      try {
        specifier = decodeURIComponent(specifier.slice("file:///bundle/".length));
      } catch {}
    }
    const relative = specifier.startsWith("./") || specifier.startsWith("../");
    const base = referrer.includes("/") ? referrer.slice(0, referrer.lastIndexOf("/")) : "";
    const name = normalizeModulePath(relative ? `${base}/${specifier}` : specifier);
    for (const candidate of [name, `${name}.js`, `${name}.cjs`, `${name}.json`, `${name}/index.js`]) {
      const found = ops.userModule(candidate);
      if (found !== undefined) return required(candidate, found, nodeEnabled, direct);
    }
    return fromHost(specifier, referrer, nodeEnabled, origin, direct);
  };
}

/** What require() gives for module `name` (`found`: ops.userModule's answer). */
function required(name, found, nodeEnabled, direct = false) {
  if (found[0] === "esm") return requireEsModule(name);
  const value = load(name, found, nodeEnabled);
  return direct ? value : asRequired(value);
}

/**
 * require() of an ES module, as workerd does it: the module runs now (a top-level await is an
 * error) and gives its namespace's `module.exports` export when it has one (or `default` when it
 * sets `__cjsUnwrapDefault`); else, with export_commonjs_default (2022-10-31), its default
 * export; before that, with require_returns_default_export, its default export when it has one
 * (else a mutable copy of the namespace), or the namespace itself.
 */
// ES modules whose require() met a top-level await: required again, they fail again (the module
// stays unfinished), as in workerd.
const stalled = new Map();
const STALLED = /^Top-level await (in module is not permitted|is not supported)/;

function requireEsModule(name) {
  if (stalled.has(name)) throw new Error(stalled.get(name));
  let namespace;
  try {
    namespace = ops.requireEsModule(name);
  } catch (error) {
    if (STALLED.test(error?.message)) stalled.set(name, error.message);
    throw error;
  }
  if (namespace.__cjsUnwrapDefault === true) return namespace.default;
  if ("module.exports" in namespace) return namespace["module.exports"];
  if (internals.feature("export_commonjs_default")) return namespace.default;
  if (!internals.feature("require_returns_default_export")) return namespace;
  return "default" in namespace ? namespace.default : { ...namespace };
}

/**
 * What require() gives for one of the worker's modules: its value, or before
 * export_commonjs_default (2022-10-31) an object like the module's namespace, `{ default: value }`,
 * as workerd gave then (its legacy module registry only: under new_module_registry, the value).
 */
function asRequired(value) {
  if (internals.feature("export_commonjs_default") || internals.feature("new_module_registry")) return value;
  const namespace = Object.create(null, {
    default: { value, writable: true, enumerable: true, configurable: false },
    [Symbol.toStringTag]: { value: "Module" },
  });
  return Object.preventExtensions(namespace);
}

/** A module the host's loadModule finds for `require(specifier)` in `referrer`, else the error. */
function fromHost(specifier, referrer, nodeEnabled, origin, direct = false) {
  const name = ops.hostModule(specifier, referrer, origin);
  if (name === undefined) throw moduleNotFound(specifier, referrer);
  return required(name, ops.userModule(name), nodeEnabled, direct);
}

function moduleNotFound(specifier, referrer) {
  // A built-in the worker may not require: workerd's message alone (code may catch and compare it).
  const builtin = /^(node|cloudflare|workerd):/.test(specifier);
  const error = new Error(builtin ? `No such module "${specifier}".` : `Cannot find module '${specifier}' required by ${referrer}: it is not one of the worker's modules`);
  error.code = "MODULE_NOT_FOUND";
  return error;
}

function load(name, [kind, content, filename], nodeEnabled) {
  switch (kind) {
    case "commonjs":
      return runCommonJs(name, content, nodeEnabled, filename);
    case "text":
      return content;
    case "json":
      return JSON.parse(content);
    case "data":
      return content;
    case "wasm":
      return new WebAssembly.Module(content);
    default:
      return requireEsModule(name);
  }
}

/** Runs a CommonJS module once; `filename` is the host's name for a module it loaded. */
function runCommonJs(name, factory, nodeEnabled, hostFilename) {
  let module = commonJsCache.get(name);
  if (module !== undefined) return module.exports;
  let filename = hostFilename ?? `/${name}`;
  let dir = filename.includes("/") ? filename.slice(0, filename.lastIndexOf("/")) || "/" : "/";
  // Under new_module_registry a bundle module's are workerd's: its base name, and its directory
  // under /bundle ("dir/m": "m" and "/bundle/dir").
  if (hostFilename === undefined && internals.feature("new_module_registry")) {
    const slash = name.lastIndexOf("/");
    filename = name.slice(slash + 1);
    dir = slash < 0 ? "/bundle" : `/bundle/${name.slice(0, slash)}`;
  }
  module = { exports: {}, id: name, filename, loaded: false };
  commonJsCache.set(name, module);
  try {
    Reflect.apply(factory, module.exports, [module.exports, requireFrom(name, nodeEnabled), module, filename, dir]);
  } catch (error) {
    commonJsCache.delete(name);
    throw error;
  }
  module.loaded = true;
  return module.exports;
}

/** node:module's createRequire: a `require` as if in the module at `path` (`/name` or a file: URL). */
internals.createRequire = function createRequire(path) {
  const text = String(path);
  const name = normalizeModulePath(text.replace(/^file:\/\//, ""));
  return requireFrom(name, true, text, true);
};

internals.loadCommonJs = function loadCommonJs(name, nodeEnabled) {
  const found = ops.userModule(name);
  if (found === undefined || found[0] !== "commonjs") throw new TypeError(`${name} is not a CommonJS module of this worker`);
  return runCommonJs(name, found[1], nodeEnabled, found[2]);
};
