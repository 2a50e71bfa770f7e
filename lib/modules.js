// The worker's extra modules on the host side: `createWorker({ modules })` entries normalised
// for the native side, and `createWorker({ loadModule })`, the host's loader that the engine
// asks (binding `#module`, src/runtime/module_loader.rs) for every import and require() the
// worker's own modules cannot answer.
"use strict";

const MODULE_TYPES = new Set(["esm", "commonjs", "wasm", "text", "data", "json"]);
const EXTENSION_TYPES = { ".js": "esm", ".mjs": "esm", ".cjs": "commonjs", ".wasm": "wasm", ".json": "json", ".bin": "data" };

function isPlainObject(value) {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * One module: a source string, bytes, or `{ type, content }`, as `{ kind, content: Buffer }`;
 * the type defaults from the name's extension. `where` names the entry in errors.
 */
function moduleEntry(name, spec, where, typeRequired = true) {
  let kind;
  let content = spec;
  let namedExports;
  if (isPlainObject(spec)) {
    ({ type: kind, content, namedExports } = spec);
    if ((typeRequired || kind !== undefined) && !MODULE_TYPES.has(kind)) throw new TypeError(`${where}.type must be one of ${[...MODULE_TYPES].join(", ")}`);
    // A CommonJS module's named exports, as workerd's `namedExports`: exactly these names.
    if (namedExports !== undefined) {
      if (kind !== "commonjs") throw new TypeError(`${where}.namedExports is only for a module of type "commonjs"`);
      if (!Array.isArray(namedExports) || !namedExports.every((n) => typeof n === "string")) throw new TypeError(`${where}.namedExports must be an array of strings`);
    }
  }
  const isBytes = content instanceof ArrayBuffer || ArrayBuffer.isView(content);
  if (typeof content !== "string" && !isBytes) {
    throw new TypeError(`${where} must be a string, bytes, or { type, content }`);
  }
  const extension = /\.[^./]+$/.exec(name)?.[0] ?? "";
  kind ??= EXTENSION_TYPES[extension] ?? (isBytes ? "data" : "text");
  const buffer = typeof content === "string" ? Buffer.from(content, "utf8") : ArrayBuffer.isView(content) ? Buffer.from(content.buffer, content.byteOffset, content.byteLength) : Buffer.from(content);
  return namedExports === undefined ? { kind, content: buffer } : { kind, content: buffer, namedExports: [...namedExports] };
}

/** Normalises `options.modules` into [{ name, kind, content: Buffer }], naming any bad entry. */
function validateModules(modules) {
  if (modules === undefined) return undefined;
  if (!isPlainObject(modules)) throw new TypeError("createWorker: options.modules must be an object of { name: source }");
  return Object.entries(modules).map(([name, spec]) => ({ name, ...moduleEntry(name, spec, `createWorker: options.modules[${JSON.stringify(name)}]`) }));
}

/** Checks `options.loadModule`. */
function validateLoader(loadModule) {
  if (loadModule !== undefined && typeof loadModule !== "function") {
    throw new TypeError("createWorker: options.loadModule must be a function (specifier, referrer) => { name, type, content } | undefined (or a promise of one)");
  }
  return loadModule;
}

/**
 * Answers the engine's `#module` call: runs the host's loader on `{ specifier, referrer, kind }`
 * (kind: "import" or "require") and returns `{ json: { found: false } }` or
 * `{ json: { name, type }, bytes }`. A loader that throws, or answers with something that is not
 * a module, fails the import with a message naming the specifier.
 */
async function answerModuleLoad(loadModule, { specifier, referrer, kind }) {
  const found = await loadModule(specifier, referrer, { kind });
  if (found === undefined || found === null) return { json: JSON.stringify({ found: false }) };
  const where = `loadModule(${JSON.stringify(specifier)}) returned a module that`;
  const spec = isPlainObject(found) ? found : { content: found };
  const name = spec.name ?? specifier;
  if (typeof name !== "string" || name.length === 0) throw new TypeError(`${where} has no usable name (a non-empty string)`);
  const { kind: type, content } = moduleEntry(name, { type: spec.type ?? (typeof spec.content === "string" && !/\.[^./]+$/.test(name) ? "esm" : undefined), content: spec.content }, where, false);
  if (spec.dependencies === undefined) return { json: JSON.stringify({ name, type }), bytes: content };
  // Imports resolved ahead: { referrer, specifier, name, type?, content? } (content omitted when
  // the worker has that module already), sent in one payload after the module's own content.
  if (!Array.isArray(spec.dependencies)) throw new TypeError(`${where} has dependencies that are not an array`);
  const parts = [content];
  const dependencies = spec.dependencies.map((dep, i) => {
    const at = `${where} has dependencies[${i}] that`;
    for (const key of ["referrer", "specifier", "name"]) if (typeof dep?.[key] !== "string" || dep[key] === "") throw new TypeError(`${at} has no ${key}`);
    if (dep.content === undefined || dep.content === null) return { referrer: dep.referrer, specifier: dep.specifier, name: dep.name };
    const entry = moduleEntry(dep.name, { type: dep.type, content: dep.content }, at, false);
    parts.push(entry.content);
    return { referrer: dep.referrer, specifier: dep.specifier, name: dep.name, type: entry.kind, size: entry.content.length };
  });
  return { json: JSON.stringify({ name, type, size: content.length, dependencies }), bytes: Buffer.concat(parts) };
}

/**
 * typescript_strip_types (experimental, as workerd's): the worker's ES modules (the script of a
 * module worker and each "esm" module) lose their TypeScript types before they load. workerd strips
 * them with swc, keeping every position; workerbox uses esbuild's transform (an optional peer
 * dependency), which lays the code out anew, so stack traces' lines and columns can differ.
 * Imports are kept as written (verbatimModuleSyntax). What cannot be stripped fails createWorker,
 * naming the module. `validated` is createWorker's validated options, changed in place.
 */
function stripTypeScript(validated) {
  let esbuild;
  try {
    esbuild = require("esbuild");
  } catch {
    throw new TypeError("createWorker: the typescript_strip_types flag needs the esbuild package (an optional peer dependency of workerbox): npm install esbuild");
  }
  const strip = (code, name) => {
    try {
      return esbuild.transformSync(code, { loader: "ts", target: "esnext", sourcefile: name, tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } } }).code;
    } catch (error) {
      const first = error.errors?.[0];
      const where = first?.location ? `${name}:${first.location.line}:${first.location.column}` : name;
      throw new SyntaxError(`createWorker: typescript_strip_types could not strip the types of ${where}: ${first?.text ?? error.message}`);
    }
  };
  if (validated.format !== "service-worker" && typeof validated.script === "string") validated.script = strip(validated.script, validated.filename);
  for (const module of validated.modules ?? []) {
    if (module.kind === "esm") module.content = Buffer.from(strip(module.content.toString("utf8"), module.name), "utf8");
  }
}

module.exports = { validateModules, validateLoader, answerModuleLoad, isPlainObject, stripTypeScript };
