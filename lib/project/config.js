"use strict";
// Project configuration: finds and reads wrangler.jsonc / wrangler.json / wrangler.toml, checks
// every key (errors name the file, the key and its line), applies an `env.<name>` section, reads
// `.dev.vars` / `.env` secrets, and returns one normalised, plain description of the project.
// Nothing here starts workers or opens stores: `lib/project/load.js` turns this into createWorker
// options.

const fs = require("node:fs");
const path = require("node:path");
const util = require("node:util");
// The JSONC parser (jsonc-parser: five modules, ~5 ms to load) loads only for a file that is not
// plain JSON once its comments and trailing commas are blanked (plainJson), and for a message
// that names a key's line.
const jsonc = () => require("jsonc-parser");
// The TOML parser loads only for wrangler.toml.
const toml = { parse: (text) => require("smol-toml").parse(text) };
const { resolveCompat } = require("../compat.js");
const { hyperdrive, localConnectionFromEnv } = require("../hyperdrive.js");
const { localBindings, LOCAL_BINDING_KEYS } = require("./config-local-bindings.js");

const CONFIG_FILES = ["wrangler.jsonc", "wrangler.json", "wrangler.toml"];

/** A bad configuration file: `problems` lists each `{ file, line, column, key, message }`. */
class ConfigError extends Error {
  constructor(problems) {
    super(problems.map(formatProblem).join("\n"));
    this.name = "ConfigError";
    this.problems = problems;
    this.file = problems[0]?.file;
    this.line = problems[0]?.line;
    this.column = problems[0]?.column;
    this.key = problems[0]?.key;
  }
}

function formatProblem({ file, line, column, key, message }) {
  const where = line ? `${file}:${line}${column ? `:${column}` : ""}` : file;
  return key ? `${where}: ${key}: ${message}` : `${where}: ${message}`;
}

/** Finds the configuration file: `target` is a file, or a folder holding one of CONFIG_FILES. */
function findConfig(target) {
  const resolved = path.resolve(target ?? ".");
  let stat;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new ConfigError([{ file: resolved, message: "no such file or folder" }]);
  }
  if (stat.isFile()) return { file: resolved, others: [] };
  const present = CONFIG_FILES.map((name) => path.join(resolved, name)).filter((file) => fs.existsSync(file));
  if (present.length === 0) {
    throw new ConfigError([{ file: resolved, message: `no configuration file here (looked for ${CONFIG_FILES.join(", ")})` }]);
  }
  return { file: present[0], others: present.slice(1) };
}

/** Parses the file's text; returns `{ raw, positionOf(pathArray) }` (`{ line, column }`, 1-based). */
function parseFile(file, text) {
  if (file.endsWith(".toml")) {
    let raw;
    try {
      raw = toml.parse(text);
    } catch (error) {
      const detail = String(error.message).split("\n")[0];
      throw new ConfigError([{ file, line: error.line, column: error.column, message: `invalid TOML: ${detail}` }]);
    }
    return { raw, positionOf: (keyPath) => tomlPosition(text, keyPath) };
  }
  const options = { allowTrailingComma: true, disallowComments: false };
  let tree = null; // jsonc-parser's, made when needed
  const parseTree = () => {
    if (tree !== null) return tree;
    const errors = [];
    tree = jsonc().parseTree(text, errors, options);
    if (errors.length > 0) {
      const problems = errors.map((e) => ({ file, ...positionAt(text, e.offset), message: `invalid JSON: ${jsonc().printParseErrorCode(e.error)}` }));
      throw new ConfigError(problems);
    }
    return tree;
  };
  let raw;
  const plain = plainJson(text);
  try {
    if (plain === null) throw new SyntaxError("not plain JSON");
    raw = JSON.parse(plain);
  } catch {
    const parsed = parseTree();
    raw = parsed === undefined ? undefined : jsonc().getNodeValue(parsed);
  }
  const positionOf = (keyPath) => {
    const root = parseTree();
    for (let n = keyPath.length; n >= 0 && root; n--) {
      const node = jsonc().findNodeAtLocation(root, keyPath.slice(0, n));
      if (node) return positionAt(text, node.parent?.type === "property" ? node.parent.offset : node.offset);
    }
    return {};
  };
  return { raw, positionOf };
}

/**
 * JSONC `text` as JSON for JSON.parse: its comments and trailing commas turned into spaces, the
 * strings left alone. null when jsonc-parser should read it instead: an unterminated comment, a
 * comma after no value, a `__proto__` key (jsonc-parser's object sets the prototype). Not a
 * validator: when JSON.parse refuses the result, jsonc-parser reads the text and names the problem.
 */
function plainJson(text) {
  if (text.includes('"__proto__"')) return null;
  const out = text.split("");
  let comma = -1; // a comma no value has followed yet
  let last = ""; // the last character that is not blank or a comment
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      i = j;
      comma = -1;
      last = c;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") out[i++] = " ";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end === -1) return null;
      for (; i < end + 2; i++) if (text[i] !== "\n" && text[i] !== "\r") out[i] = " ";
      i--;
    } else if (c === ",") {
      if (last === "," || last === "[" || last === "{" || last === ":" || last === "") return null;
      comma = i;
      last = c;
    } else if (c === "}" || c === "]") {
      if (comma !== -1) out[comma] = " ";
      comma = -1;
      last = c;
    } else if (c !== " " && c !== "\t" && c !== "\n" && c !== "\r") {
      comma = -1;
      last = c;
    }
  }
  return out.join("");
}

function positionAt(text, offset) {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/** tomlLine's line, with the column where that line's text starts. */
function tomlPosition(text, keyPath) {
  const line = tomlLine(text, keyPath);
  if (line === undefined) return {};
  const column = /\S/.exec(text.split("\n")[line - 1] ?? "")?.index ?? 0;
  return { line, column: column + 1 };
}

/**
 * The line where a key path is set in TOML text, as closely as the text shows it: smol-toml
 * gives values but no positions, so this looks for the key's table header (`[a.b]`,
 * `[[a]]`, counting array entries) and then for `key =` below it; a key it cannot find resolves
 * to the nearest enclosing one it did find.
 */
function tomlLine(text, keyPath) {
  const lines = text.split("\n");
  const header = (line) => {
    const m = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    return m ? m[1].replace(/["']/g, "").split(/\s*\.\s*/) : null;
  };
  let found;
  let from = 0;
  const prefix = [];
  for (let i = 0; i < keyPath.length; i++) {
    const segment = keyPath[i];
    if (typeof segment === "number") {
      // The (segment+1)-th `[[prefix]]` header.
      let seen = -1;
      for (let l = from; l < lines.length; l++) {
        const h = header(lines[l]);
        if (h && h.join(".") === prefix.join(".") && /^\s*\[\[/.test(lines[l]) && ++seen === segment) {
          found = l + 1;
          from = l + 1;
          break;
        }
      }
      if (seen !== segment) return found;
      prefix.push(String(segment));
      continue;
    }
    const named = prefix.filter((p) => !/^\d+$/.test(p)).concat(segment).join(".");
    let hit = -1;
    let isHeader = false;
    for (let l = from; l < lines.length; l++) {
      const h = header(lines[l]);
      if (h && (h.join(".") === named || h.join(".").startsWith(`${named}.`))) {
        hit = l;
        isHeader = true;
        break;
      }
      const escaped = segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      if (new RegExp(`^\\s*["']?${escaped}["']?\\s*=`).test(lines[l]) || new RegExp(`^\\s*[\\w.]*\\.${escaped}\\s*=`).test(lines[l])) {
        hit = l;
        break;
      }
    }
    if (hit < 0) return found;
    found = hit + 1;
    // A header is searched again by the next segment (an array index counts from it).
    from = isHeader ? hit : hit + 1;
    prefix.push(segment);
  }
  return found;
}

// ---- validation -------------------------------------------------------------------------------

/** Collects problems and warnings while the configuration is checked. */
class Checker {
  constructor(file, positionOf, rename) {
    this.file = file;
    this.positionOf = positionOf;
    // A key path's name as the user wrote it, when the file is not a wrangler file (cloudflare.config.ts).
    this.rename = rename;
    this.problems = [];
    this.warnings = [];
    this.notes = []; // worth knowing, not a problem: shown only when asked (`workerbox dev --verbose`)
  }
  keyName(keyPath) {
    const renamed = this.rename?.(keyPath);
    if (renamed !== undefined) return renamed;
    return keyPath.reduce((name, p) => (typeof p === "number" ? `${name}[${p}]` : name ? `${name}.${p}` : p), "");
  }
  error(keyPath, message) {
    this.problems.push({ file: this.file, ...this.positionOf(keyPath), key: this.keyName(keyPath), message });
  }
  warn(keyPath, message) {
    const entry = { file: this.file, ...this.positionOf(keyPath), key: this.keyName(keyPath), message };
    this.warnings.push({ ...entry, text: formatProblem(entry) });
  }
  note(keyPath, message) {
    const entry = { file: this.file, ...this.positionOf(keyPath), key: this.keyName(keyPath), message };
    this.notes.push({ ...entry, text: formatProblem(entry) });
  }
  type(value, keyPath, expected) {
    const actual = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    const ok = expected === "table" ? actual === "object" : actual === expected;
    if (!ok) this.error(keyPath, `must be ${expected === "table" ? "a table/object" : expected === "array" ? "an array" : `a ${expected}`}, got ${actual === "object" ? "a table/object" : actual}`);
    return ok;
  }
  string(obj, key, keyPath, { required = false, oneOf } = {}) {
    const value = obj[key];
    if (value === undefined) {
      if (required) this.error([...keyPath, key], "is required");
      return undefined;
    }
    if (!this.type(value, [...keyPath, key], "string")) return undefined;
    if (oneOf && !oneOf.includes(value)) {
      this.error([...keyPath, key], `must be one of ${oneOf.map((v) => JSON.stringify(v)).join(", ")}, got ${JSON.stringify(value)}`);
      return undefined;
    }
    return value;
  }
  stringArray(value, keyPath) {
    if (value === undefined) return undefined;
    if (!this.type(value, keyPath, "array")) return undefined;
    value.forEach((item, i) => this.type(item, [...keyPath, i], "string"));
    return value.filter((item) => typeof item === "string");
  }
  /** Warns about each key of `obj` not in `known`. */
  known(obj, keyPath, known) {
    for (const key of Object.keys(obj)) {
      if (!known.includes(key)) this.warn([...keyPath, key], `unknown key, ignored (known here: ${known.join(", ")})`);
    }
  }
  /** An array of tables, each checked by `each(entry, keyPath)`. */
  tables(value, keyPath, each) {
    if (value === undefined) return [];
    if (!this.type(value, keyPath, "array")) return [];
    const out = [];
    value.forEach((entry, i) => {
      if (this.type(entry, [...keyPath, i], "table")) {
        const result = each(entry, [...keyPath, i]);
        if (result !== undefined) out.push(result);
      }
    });
    return out;
  }
}

/** Top-level keys that an `env.<name>` section inherits when it does not set them. */
const INHERITED = ["name", "main", "compatibility_date", "compatibility_flags", "rules", "alias", "assets", "triggers", "minify", "tsconfig", "no_bundle", "limits", "base_dir", "find_additional_modules", "preserve_file_names", "build", "workers_dev", "routes", "route", "upload_source_maps", "observability", "placement", "logpush", "keep_vars"];
/** Keys an `env.<name>` section must set itself (wrangler does not inherit them). */
const NOT_INHERITED = ["vars", "define", "kv_namespaces", "r2_buckets", "d1_databases", "durable_objects", "queues", "services", "analytics_engine_datasets", "hyperdrive", "vectorize", "ai", "browser", "images", "send_email", "dispatch_namespaces", "mtls_certificates", "tail_consumers", "streaming_tail_consumers", "unsafe", "version_metadata", "workflows", "pipelines", "secrets_store_secrets", "ratelimits", "worker_loaders"];
/** Keys that matter only when deploying; read, not used locally. */
const DEPLOY_ONLY = ["$schema", "account_id", "workers_dev", "preview_urls", "routes", "route", "send_metrics", "keep_vars", "upload_source_maps", "observability", "logpush", "placement", "first_party_worker", "compliance_region"];
/** Bindings or features workerbox does not provide (yet); configuring one warns. */
const UNSUPPORTED = ["vectorize", "ai", "browser", "images", "dispatch_namespaces", "mtls_certificates", "unsafe", "pipelines", "wasm_modules", "text_blobs", "data_blobs", "base_dir", "find_additional_modules", "preserve_file_names", "jsx_factory", "jsx_fragment", "node_compat", "usage_model", "legacy_env", "containers", "unsafe_hello_world"];
const SUPPORTED = ["name", "main", "compatibility_date", "compatibility_flags", "vars", "kv_namespaces", "r2_buckets", "d1_databases", "hyperdrive", "durable_objects", "migrations", "queues", "workflows", "services", "assets", "triggers", "rules", "define", "alias", "env", "minify", "tsconfig", "no_bundle", "limits", "dev", "build", "tail_consumers", "streaming_tail_consumers", ...LOCAL_BINDING_KEYS];

const RULE_TYPES = ["ESModule", "CommonJS", "Text", "Data", "CompiledWasm"];
const HTML_HANDLING = ["auto-trailing-slash", "force-trailing-slash", "drop-trailing-slash", "none"];
const NOT_FOUND_HANDLING = ["none", "404-page", "single-page-application"];
const BINDING_NAME = /^[A-Za-z_$][\w$]*$/;

function checkBindingName(c, entry, key, keyPath, seen) {
  const name = c.string(entry, key, keyPath, { required: true });
  if (name === undefined) return undefined;
  if (!BINDING_NAME.test(name)) {
    c.error([...keyPath, key], `${JSON.stringify(name)} is not a valid binding name (letters, digits, _ and $, not starting with a digit)`);
    return undefined;
  }
  if (seen.has(name)) {
    c.error([...keyPath, key], `binding name ${JSON.stringify(name)} is already used by ${seen.get(name)}`);
    return undefined;
  }
  seen.set(name, c.keyName(keyPath));
  return name;
}

/** Checks one (top-level or env-merged) configuration object and returns its normalised form. */
function normalise(c, raw, base, envName) {
  // keyPath prefix: env.<name> for keys the env section set, top level otherwise.
  const at = (key) => (envName && base.own.has(key) ? ["env", envName, key] : [key]);
  const seen = new Map(); // binding name -> key that declared it
  const out = { bindings: { vars: {}, kv: [], r2: [], d1: [], durableObjects: [], queues: { producers: [], consumers: [] }, workflows: [], services: [] } };

  for (const key of Object.keys(raw)) {
    if (key === "env") continue;
    if (SUPPORTED.includes(key)) continue;
    if (DEPLOY_ONLY.includes(key)) c.note(at(key), "used only when deploying; ignored by workerbox");
    else if (UNSUPPORTED.includes(key)) c.warn(at(key), "not supported by workerbox; ignored");
    else c.warn(at(key), "unknown configuration key; ignored");
  }

  out.name = c.string(raw, "name", at("name").slice(0, -1));
  out.main = c.string(raw, "main", at("main").slice(0, -1));
  if (raw.compatibility_date !== undefined || raw.compatibility_flags !== undefined) {
    const date = c.string(raw, "compatibility_date", at("compatibility_date").slice(0, -1));
    const flags = c.stringArray(raw.compatibility_flags, at("compatibility_flags"));
    try {
      // Experimental flags as wrangler dev takes them (Miniflare runs workerd with --experimental):
      // workerbox/vitest accepts them, createWorker with unsafeExperimental.
      resolveCompat(date, flags, "config", { experimental: true });
      out.compatibilityDate = date;
      out.compatibilityFlags = flags;
    } catch (error) {
      const message = error.message.replace(/^config: /, "").replace(/compatibilityDate /g, "").replace(/ Known flags: .*$/s, " (workerd's flag names are listed in workerbox's lib/compat-flags.json)");
      c.error(/flag/.test(message) ? at("compatibility_flags") : at("compatibility_date"), message);
    }
  } else {
    c.warn(["compatibility_date"], "not set; workerbox uses its newest date (set one, as wrangler requires)");
  }
  if (raw.minify !== undefined) c.type(raw.minify, at("minify"), "boolean") && (out.minify = raw.minify);
  if (raw.no_bundle !== undefined) c.type(raw.no_bundle, at("no_bundle"), "boolean") && (out.noBundle = raw.no_bundle);
  out.tsconfig = c.string(raw, "tsconfig", at("tsconfig").slice(0, -1));

  if (raw.limits !== undefined && c.type(raw.limits, at("limits"), "table")) {
    c.known(raw.limits, at("limits"), ["cpu_ms"]);
    if (raw.limits.cpu_ms !== undefined) {
      const v = raw.limits.cpu_ms;
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) c.error([...at("limits"), "cpu_ms"], `must be a number of milliseconds, got ${JSON.stringify(v)}`);
      else out.cpuMs = v;
    }
  }

  if (raw.vars !== undefined && c.type(raw.vars, at("vars"), "table")) {
    for (const [name, value] of Object.entries(raw.vars)) {
      if (!BINDING_NAME.test(name)) c.error([...at("vars"), name], "is not a valid binding name");
      else if (value instanceof Date || (typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)) {
        c.error([...at("vars"), name], "must be a string, number, boolean, array or table (TOML dates are not JSON)");
      } else if (seen.has(name)) c.error([...at("vars"), name], `binding name already used by ${seen.get(name)}`);
      else {
        seen.set(name, `vars.${name}`);
        out.bindings.vars[name] = JSON.parse(JSON.stringify(value)); // plain objects (parsers may give null-prototype ones)
      }
    }
  }

  // Hyperdrive: the local connection as wrangler dev makes it (lib/hyperdrive.js), an object var.
  c.tables(raw.hyperdrive, at("hyperdrive"), (entry, kp) => {
    c.known(entry, kp, ["binding", "id", "localConnectionString"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const local = (binding && localConnectionFromEnv(binding)) ?? c.string(entry, "localConnectionString", kp);
    if (!binding) return null;
    if (local === undefined) return c.error([...kp, "localConnectionString"], `is needed to run locally: set it, or the CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_${binding} variable, to a local database's connection string (as wrangler dev requires)`), null;
    try {
      out.bindings.vars[binding] = hyperdrive(local);
    } catch (error) {
      c.error([...kp, "localConnectionString"], error.message.replace(/^hyperdrive\(\): /, ""));
    }
    return null;
  });
  out.bindings.kv = c.tables(raw.kv_namespaces, at("kv_namespaces"), (entry, kp) => {
    c.known(entry, kp, ["binding", "id", "preview_id", "remote"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const id = c.string(entry, "id", kp);
    const previewId = c.string(entry, "preview_id", kp);
    // localId: the namespace wrangler dev keeps locally (its `id`, else the binding name).
    return binding && { binding, id: previewId ?? id ?? binding, localId: id ?? binding };
  });
  out.bindings.r2 = c.tables(raw.r2_buckets, at("r2_buckets"), (entry, kp) => {
    c.known(entry, kp, ["binding", "bucket_name", "preview_bucket_name", "jurisdiction", "remote"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const bucket = c.string(entry, "bucket_name", kp);
    const preview = c.string(entry, "preview_bucket_name", kp);
    c.string(entry, "jurisdiction", kp);
    // localBucket: the bucket wrangler dev keeps locally (bucket_name, else the binding name).
    return binding && { binding, bucket: preview ?? bucket ?? binding, localBucket: bucket ?? binding };
  });
  out.bindings.d1 = c.tables(raw.d1_databases, at("d1_databases"), (entry, kp) => {
    c.known(entry, kp, ["binding", "database_name", "database_id", "preview_database_id", "migrations_dir", "migrations_table", "remote"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const name = c.string(entry, "database_name", kp);
    const id = c.string(entry, "preview_database_id", kp) ?? c.string(entry, "database_id", kp);
    const migrationsDir = c.string(entry, "migrations_dir", kp) ?? "migrations";
    const migrationsTable = c.string(entry, "migrations_table", kp) ?? "d1_migrations";
    // localId: the database wrangler keeps locally (preview_database_id, database_id, else the binding name).
    return binding && { binding, databaseName: name ?? binding, databaseId: id ?? name ?? binding, localId: id ?? binding, migrationsDir: path.resolve(base.root, migrationsDir), migrationsTable };
  });
  if (raw.durable_objects !== undefined && c.type(raw.durable_objects, at("durable_objects"), "table")) {
    c.known(raw.durable_objects, at("durable_objects"), ["bindings"]);
    out.bindings.durableObjects = c.tables(raw.durable_objects.bindings, [...at("durable_objects"), "bindings"], (entry, kp) => {
      c.known(entry, kp, ["name", "class_name", "script_name", "environment"]);
      const name = checkBindingName(c, entry, "name", kp, seen);
      const className = c.string(entry, "class_name", kp, { required: true });
      const scriptName = c.string(entry, "script_name", kp);
      c.string(entry, "environment", kp);
      if (!(name && className)) return undefined;
      // Where class_name is written, for errors found later (a class the bundle does not export).
      return Object.defineProperty({ binding: name, className, scriptName }, "at", { value: { file: c.file, ...c.positionOf([...kp, "class_name"]), key: `${c.keyName(kp)}.class_name` } });
    });
  }
  out.migrations = c.tables(raw.migrations, at("migrations"), (entry, kp) => {
    c.known(entry, kp, ["tag", "new_classes", "new_sqlite_classes", "renamed_classes", "deleted_classes", "transferred_classes"]);
    const tag = c.string(entry, "tag", kp, { required: true });
    const newClasses = c.stringArray(entry.new_classes, [...kp, "new_classes"]) ?? [];
    const newSqliteClasses = c.stringArray(entry.new_sqlite_classes, [...kp, "new_sqlite_classes"]) ?? [];
    const deletedClasses = c.stringArray(entry.deleted_classes, [...kp, "deleted_classes"]) ?? [];
    const renamedClasses = c.tables(entry.renamed_classes, [...kp, "renamed_classes"], (r, rkp) => {
      const from = c.string(r, "from", rkp, { required: true });
      const to = c.string(r, "to", rkp, { required: true });
      return from && to ? { from, to } : undefined;
    });
    if (entry.transferred_classes !== undefined) c.warn([...kp, "transferred_classes"], "not supported by workerbox; ignored");
    return tag && { tag, newClasses, newSqliteClasses, deletedClasses, renamedClasses };
  });
  if (raw.queues !== undefined && c.type(raw.queues, at("queues"), "table")) {
    c.known(raw.queues, at("queues"), ["producers", "consumers"]);
    out.bindings.queues.producers = c.tables(raw.queues.producers, [...at("queues"), "producers"], (entry, kp) => {
      c.known(entry, kp, ["binding", "queue", "delivery_delay"]);
      const binding = checkBindingName(c, entry, "binding", kp, seen);
      const queue = c.string(entry, "queue", kp, { required: true });
      if (entry.delivery_delay !== undefined) c.type(entry.delivery_delay, [...kp, "delivery_delay"], "number");
      return binding && queue && { binding, queue, deliveryDelay: entry.delivery_delay };
    });
    out.bindings.queues.consumers = c.tables(raw.queues.consumers, [...at("queues"), "consumers"], (entry, kp) => {
      const numbers = ["max_batch_size", "max_batch_timeout", "max_retries", "max_concurrency", "retry_delay"];
      c.known(entry, kp, ["queue", "dead_letter_queue", "type", ...numbers]);
      const queue = c.string(entry, "queue", kp, { required: true });
      const consumer = { queue, deadLetterQueue: c.string(entry, "dead_letter_queue", kp) };
      for (const n of numbers) if (entry[n] !== undefined && c.type(entry[n], [...kp, n], "number")) consumer[n.replace(/_(\w)/g, (_, ch) => ch.toUpperCase())] = entry[n];
      return queue && consumer;
    });
  }
  out.bindings.workflows = c.tables(raw.workflows, at("workflows"), (entry, kp) => {
    c.known(entry, kp, ["name", "binding", "class_name", "script_name", "remote", "limits"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const name = c.string(entry, "name", kp, { required: true });
    const className = c.string(entry, "class_name", kp, { required: true });
    const scriptName = c.string(entry, "script_name", kp);
    return binding && name && className && { binding, name, className, scriptName };
  });
  // ratelimits, analytics_engine_datasets, send_email, secrets_store_secrets, version_metadata.
  localBindings(c, raw, out, at, (entry, key, kp) => checkBindingName(c, entry, key, kp, seen));
  out.bindings.services = c.tables(raw.services, at("services"), (entry, kp) => {
    c.known(entry, kp, ["binding", "service", "environment", "entrypoint", "remote"]);
    const binding = checkBindingName(c, entry, "binding", kp, seen);
    const service = c.string(entry, "service", kp, { required: true });
    const environment = c.string(entry, "environment", kp);
    const entrypoint = c.string(entry, "entrypoint", kp);
    return binding && service && { binding, service, environment, entrypoint };
  });
  // Workers that receive this one's trace items (lib/tail/), served beside it.
  out.tailConsumers = c.tables(raw.tail_consumers, at("tail_consumers"), (entry, kp) => {
    c.known(entry, kp, ["service", "environment"]);
    const service = c.string(entry, "service", kp, { required: true });
    return service && { service, environment: c.string(entry, "environment", kp) };
  });

  // Streaming tail workers (lib/tail/stream.js): their tailStream() gets each invocation's events.
  out.streamingTailConsumers = c.tables(raw.streaming_tail_consumers, at("streaming_tail_consumers"), (entry, kp) => {
    c.known(entry, kp, ["service"]);
    const service = c.string(entry, "service", kp, { required: true });
    return service && { service };
  });

  if (raw.assets !== undefined && c.type(raw.assets, at("assets"), "table")) {
    const a = raw.assets;
    const kp = at("assets");
    c.known(a, kp, ["directory", "binding", "html_handling", "not_found_handling", "run_worker_first", "experimental_serve_directly"]);
    const directory = c.string(a, "directory", kp, { required: base.requireAssetsDirectory !== false });
    const binding = a.binding === undefined ? undefined : checkBindingName(c, a, "binding", kp, seen);
    const htmlHandling = c.string(a, "html_handling", kp, { oneOf: HTML_HANDLING }) ?? "auto-trailing-slash";
    const notFoundHandling = c.string(a, "not_found_handling", kp, { oneOf: NOT_FOUND_HANDLING }) ?? "none";
    let runWorkerFirst = false;
    if (a.run_worker_first !== undefined) {
      if (typeof a.run_worker_first === "boolean") runWorkerFirst = a.run_worker_first;
      else if (Array.isArray(a.run_worker_first)) {
        runWorkerFirst = c.stringArray(a.run_worker_first, [...kp, "run_worker_first"]);
        runWorkerFirst.forEach((rule, i) => {
          if (!/^!?\//.test(rule)) c.error([...kp, "run_worker_first", i], `route ${JSON.stringify(rule)} must start with "/" (or "!/" to exclude)`);
        });
      } else c.error([...kp, "run_worker_first"], "must be a boolean or an array of route patterns such as [\"/api/*\"]");
    }
    if (a.experimental_serve_directly !== undefined) c.warn([...kp, "experimental_serve_directly"], "deprecated; use run_worker_first");
    if (directory !== undefined) {
      const dir = path.resolve(base.root, directory);
      // workerbox/vitest (requireAssetsDirectory: false): a folder a build makes later (a Vite
      // app's dist) is not there before the build; the tests run without its assets, as said.
      if (!fs.existsSync(dir) && base.requireAssetsDirectory === false) c.warn([...kp, "directory"], `${dir} does not exist (yet): running without these assets`);
      else if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) c.error([...kp, "directory"], `${dir} is not a folder`);
      else out.assets = { directory: dir, binding, htmlHandling, notFoundHandling, runWorkerFirst };
    }
  }

  if (raw.triggers !== undefined && c.type(raw.triggers, at("triggers"), "table")) {
    c.known(raw.triggers, at("triggers"), ["crons"]);
    const crons = c.stringArray(raw.triggers.crons, [...at("triggers"), "crons"]) ?? [];
    crons.forEach((cron, i) => {
      const fields = cron.trim().split(/\s+/);
      if (fields.length < 5 || fields.length > 6) c.error([...at("triggers"), "crons", i], `${JSON.stringify(cron)} is not a cron expression (5 fields: minute hour day month weekday)`);
    });
    out.crons = crons;
  } else out.crons = [];

  out.rules = c.tables(raw.rules, at("rules"), (entry, kp) => {
    c.known(entry, kp, ["type", "globs", "fallthrough"]);
    const type = c.string(entry, "type", kp, { required: true, oneOf: RULE_TYPES });
    const globs = c.stringArray(entry.globs, [...kp, "globs"]);
    if (globs === undefined && entry.globs === undefined) c.error([...kp, "globs"], "is required");
    if (entry.fallthrough !== undefined) c.type(entry.fallthrough, [...kp, "fallthrough"], "boolean");
    if (type === "CommonJS" && raw.no_bundle !== true) c.warn([...kp, "type"], "CommonJS rules only apply with no_bundle; when bundling, esbuild handles CommonJS itself and the rule is ignored");
    return type && globs && { type, globs, fallthrough: entry.fallthrough === true };
  });

  if (raw.define !== undefined && c.type(raw.define, at("define"), "table")) {
    out.define = {};
    for (const [key, value] of Object.entries(raw.define)) {
      if (typeof value !== "string") c.error([...at("define"), key], `must be a string holding a JavaScript expression (e.g. "\\"text\\"" or "42"), got ${typeof value}`);
      else out.define[key] = value;
    }
  }
  if (raw.alias !== undefined && c.type(raw.alias, at("alias"), "table")) {
    out.alias = {};
    for (const [key, value] of Object.entries(raw.alias)) {
      if (typeof value !== "string") c.error([...at("alias"), key], `must be a module name or path string, got ${typeof value}`);
      else out.alias[key] = value.startsWith(".") ? path.resolve(base.root, value) : value;
    }
  }
  // A custom build (wrangler's `build`): run by `workerbox dev` before serving and again when a
  // file under `watch_dir` changes.
  if (raw.build !== undefined && c.type(raw.build, at("build"), "table")) {
    c.known(raw.build, at("build"), ["command", "cwd", "watch_dir"]);
    const command = c.string(raw.build, "command", at("build"), { required: true });
    const cwd = c.string(raw.build, "cwd", at("build"));
    let watch = raw.build.watch_dir ?? "./src";
    if (typeof watch === "string") watch = [watch];
    if (!Array.isArray(watch) || watch.some((w) => typeof w !== "string")) {
      c.error([...at("build"), "watch_dir"], "must be a folder path or a list of them");
      watch = [];
    }
    if (command !== undefined) out.build = { command, cwd: path.resolve(base.root, cwd ?? "."), watchDirs: watch.map((w) => path.resolve(base.root, w)) };
  }

  if (raw.dev !== undefined && c.type(raw.dev, at("dev"), "table")) {
    c.known(raw.dev, at("dev"), ["port", "ip", "local_protocol", "host", "upstream_protocol", "inspector_port", "container_engine", "enable_containers", "generate_types"]);
    out.dev = {};
    if (raw.dev.port !== undefined) {
      const p = raw.dev.port;
      if (!Number.isInteger(p) || p < 0 || p > 65535) c.error([...at("dev"), "port"], `must be a port number from 0 to 65535, got ${JSON.stringify(p)}`);
      else out.dev.port = p;
    }
    out.dev.ip = c.string(raw.dev, "ip", at("dev"));
    if (raw.dev.local_protocol === "https") c.warn([...at("dev"), "local_protocol"], "https is not supported by workerbox dev; serving http");
    for (const key of ["upstream_protocol", "inspector_port", "host", "container_engine", "enable_containers", "generate_types"]) {
      if (raw.dev[key] !== undefined) c.warn([...at("dev"), key], "not supported by workerbox dev; ignored");
    }
  }
  return out;
}

/** Merges an env section over the top level as wrangler does; returns the merged object. */
function applyEnv(c, raw, envName) {
  const envs = raw.env === undefined ? {} : raw.env;
  if (raw.env !== undefined && !c.type(raw.env, ["env"], "table")) return { merged: raw, own: new Set() };
  if (envName === undefined) return { merged: raw, own: new Set() };
  const section = envs[envName];
  if (section === undefined) {
    const names = Object.keys(envs);
    c.error(["env"], `no environment named ${JSON.stringify(envName)} (${names.length ? `defined: ${names.join(", ")}` : "the file defines none"})`);
    return { merged: raw, own: new Set() };
  }
  if (!c.type(section, ["env", envName], "table")) return { merged: raw, own: new Set() };
  if (section.env !== undefined) c.error(["env", envName, "env"], "environments cannot be nested");
  const merged = {};
  for (const key of INHERITED) if (raw[key] !== undefined) merged[key] = raw[key];
  if (raw.name !== undefined && section.name === undefined) merged.name = `${raw.name}-${envName}`;
  for (const key of NOT_INHERITED) {
    if (raw[key] !== undefined && section[key] === undefined) {
      c.warn([key], `set at the top level but not in env.${envName}; not inherited, so env.${envName} has none`);
    }
  }
  for (const [key, value] of Object.entries(section)) if (key !== "env") merged[key] = value;
  // Top-level keys neither inherited nor known to be per-env still get their warnings.
  for (const key of Object.keys(raw)) {
    if (key !== "env" && !INHERITED.includes(key) && !NOT_INHERITED.includes(key) && merged[key] === undefined) merged[key] = raw[key];
  }
  return { merged, own: new Set(Object.keys(section)) };
}

/** Reads `.dev.vars` (or `.env` files) next to the config, as wrangler dev does. */
function readSecrets(root, envName) {
  const files = [];
  const devVars = path.join(root, ".dev.vars");
  if (envName && fs.existsSync(`${devVars}.${envName}`)) files.push(`${devVars}.${envName}`);
  else if (fs.existsSync(devVars)) files.push(devVars);
  else {
    const names = [".env", envName && `.env.${envName}`, ".env.local", envName && `.env.${envName}.local`].filter(Boolean);
    for (const name of names) if (fs.existsSync(path.join(root, name))) files.push(path.join(root, name));
  }
  const secrets = {};
  for (const file of files) Object.assign(secrets, util.parseEnv(fs.readFileSync(file, "utf8")));
  return { secrets, files };
}

/** Where a build tool (Cloudflare's Vite plugin) says its output configuration is. */
const DEPLOY_POINTER = path.join(".wrangler", "deploy", "config.json");

/**
 * The configuration a build wrote, when `.wrangler/deploy/config.json` beside the user's config
 * points to one (as wrangler follows it): `{ file, pointer }`, or `{ missing, pointer }` when
 * the pointer names a file that is not there (the build has not run), or null.
 */
function redirectedConfig(userFile) {
  const pointer = path.join(path.dirname(userFile), DEPLOY_POINTER);
  if (!fs.existsSync(pointer)) return null;
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(pointer, "utf8"));
  } catch (error) {
    throw new ConfigError([{ file: pointer, message: `is not valid JSON: ${error.message}` }]);
  }
  if (parsed === null || typeof parsed !== "object" || typeof parsed.configPath !== "string") {
    throw new ConfigError([{ file: pointer, key: "configPath", message: "must be the path of the configuration the build wrote" }]);
  }
  const file = path.resolve(path.dirname(pointer), parsed.configPath);
  return fs.existsSync(file) ? { file, pointer } : { missing: file, pointer };
}

/** Keys a build tool (Cloudflare's Vite plugin) writes about where the configuration came from. */
const BUILD_BOOKKEEPING = ["configPath", "userConfigPath", "topLevelName", "definedEnvironments", "legacy_env"];
/** Values a build tool writes out for keys the user never set: wrangler's defaults. */
const BUILD_DEFAULTS = {
  jsx_factory: "React.createElement",
  jsx_fragment: "React.Fragment",
  python_modules: { exclude: ["**/*.pyc"] },
};
const BUILD_DEV_DEFAULTS = { local_protocol: "http", upstream_protocol: "http", enable_containers: true, generate_types: false };

/** An empty list, an empty table, or a table of only such (`{ bindings: [] }`). */
const isEmpty = (value) => value !== null && typeof value === "object" && Object.values(value).every(isEmpty);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/**
 * A build's configuration lists every key wrangler knows, most empty or at their defaults; those
 * are dropped (wrangler reads them as unset), and so are deploy-only keys (the plugin sets some
 * itself), so only what the project set is checked and warned about.
 */
function pruneBuildOutput(raw) {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  const out = {};
  for (const [key, value] of Object.entries(raw)) {
    if (BUILD_BOOKKEEPING.includes(key) || DEPLOY_ONLY.includes(key) || isEmpty(value) || (key in BUILD_DEFAULTS && same(value, BUILD_DEFAULTS[key]))) continue;
    if (key === "dev" && value !== null && typeof value === "object") {
      const dev = Object.fromEntries(Object.entries(value).filter(([k, v]) => !(k in BUILD_DEV_DEFAULTS && same(v, BUILD_DEV_DEFAULTS[k]))));
      if (Object.keys(dev).length > 0) out.dev = dev;
      continue;
    }
    out[key] = value;
  }
  return out;
}

/**
 * Reads and checks a project's configuration. `target`: a folder (with wrangler.jsonc, .json or
 * .toml) or a config file. Options: `env` (an `env.<name>` section), `redirect` (default true:
 * follow `.wrangler/deploy/config.json` to the configuration a build wrote, as wrangler does).
 * Throws a ConfigError naming file, key and line of every problem; returns the normalised config
 * with `warnings`, `projectRoot` (the user's config's folder, where state is kept) and, when
 * redirected, `redirectedFrom` (the user's config file). `requireWorker: false` accepts a
 * configuration with neither `main` nor `assets`; `requireAssetsDirectory: false` skips an `assets`
 * table without `directory` (as wrangler's getPlatformProxy does: another tool serves the assets).
 */
function readConfig(target, { env, redirect = true, requireMain = true, requireWorker = true, requireAssetsDirectory = true } = {}) {
  if (env !== undefined && (typeof env !== "string" || env === "")) throw new TypeError("readConfig: options.env must be an environment name");
  const found = findConfig(target);
  const userFile = found.file;
  const redirected = redirect ? redirectedConfig(userFile) : null;
  const early = [];
  let file = found.file;
  let others = found.others;
  if (redirected?.file && redirected.file !== userFile) {
    file = redirected.file;
    others = [];
    if (env !== undefined) early.push({ file, message: `the build's configuration (from ${DEPLOY_POINTER}) is used; the environment "${env}" was chosen when it was built, --env is ignored` });
    env = undefined;
  } else if (redirected?.missing) {
    early.push({ file: redirected.pointer, message: `points to ${redirected.missing}, which does not exist: run the project's build (e.g. \`npm run build\`) first; using ${path.basename(userFile)} meanwhile` });
  }
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError([{ file, message: `cannot read: ${error.message}` }]);
  }
  const parsed = parseFile(file, text);
  const raw = file !== userFile ? pruneBuildOutput(parsed.raw) : parsed.raw;
  const c = new Checker(file, parsed.positionOf);
  for (const problem of early) c.warnings.push({ ...problem, text: formatProblem(problem) });
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new ConfigError([{ file, line: 1, message: "the configuration must be an object/table" }]);
  for (const other of others) c.warn([], `${path.basename(other)} is also present and is ignored (${path.basename(file)} takes precedence)`);
  return checkConfig(c, raw, { file, userFile, env, requireMain, requireWorker, requireAssetsDirectory });
}

/**
 * readConfig() for a configuration given as a wrangler-shaped object rather than read from a
 * wrangler file (lib/project/config-cloudflare.js: cloudflare.config.ts). `rename(keyPath)` names
 * a key as that file writes it, for messages; the same checks and result as readConfig().
 */
function readConfigObject(file, raw, { rename, requireMain = true, requireWorker = true, requireAssetsDirectory = true } = {}) {
  const c = new Checker(file, () => ({}), rename);
  return checkConfig(c, raw, { file, userFile: file, env: undefined, requireMain, requireWorker, requireAssetsDirectory });
}

function checkConfig(c, raw, { file, userFile, env, requireMain, requireWorker, requireAssetsDirectory }) {
  const root = path.dirname(file);
  const { merged, own } = applyEnv(c, raw, env);
  const config = normalise(c, merged, { root, own, requireAssetsDirectory }, env);
  // requireWorker: false (workerbox/vitest: tests may use only the bindings) accepts neither.
  if (config.main === undefined && config.assets === undefined && requireWorker) c.error(["main"], "is required (the worker's entry module), unless the project serves only assets");
  let mainFile;
  if (config.main !== undefined) {
    mainFile = path.resolve(root, config.main);
    if (!fs.existsSync(mainFile) && requireMain) {
      // A main that only a build tool resolves (a virtual module, a generated file).
      const hint = fs.existsSync(path.join(root, "package.json")) ? `; if a build tool (such as @cloudflare/vite-plugin) makes it, run the build (e.g. \`npm run build\`) first: workerbox then uses the configuration it writes (${DEPLOY_POINTER})` : "";
      c.error(at(own, env, "main"), `${mainFile} does not exist${hint}`);
    }
  }
  if (config.assets?.binding !== undefined && config.main === undefined) c.warn(["assets", "binding"], "has no effect without a worker (main)");
  if (c.problems.length > 0) throw new ConfigError(c.problems);
  const { secrets, files: secretFiles } = readSecrets(root, env);
  for (const name of Object.keys(secrets)) {
    if (!BINDING_NAME.test(name)) c.warn([], `${path.basename(secretFiles.at(-1))}: ${JSON.stringify(name)} is not a valid binding name; ignored`);
  }
  // A build's configuration has no .dev.vars of its own: the project's are used.
  const projectRoot = path.dirname(userFile);
  if (secretFiles.length === 0 && projectRoot !== root) Object.assign(secrets, readSecrets(projectRoot, env).secrets);
  return { ...config, file, root, projectRoot, redirectedFrom: file !== userFile ? userFile : undefined, env, mainFile, secrets, secretFiles, warnings: c.warnings, notes: c.notes };
}

function at(own, env, key) {
  return env && own.has(key) ? ["env", env, key] : [key];
}

module.exports = { readConfig, readConfigObject, ConfigError, CONFIG_FILES, SUPPORTED, UNSUPPORTED, DEPLOY_ONLY };
