"use strict";
// The local-state commands of the CLI, with wrangler's flags and output, on the state
// `workerbox dev` uses (wrangler-state.js: `.wrangler/state/v3`, or `<--persist-to>/v3`):
//   workerbox d1 execute <database> --command SQL | --file PATH [--json] [--local] [--persist-to DIR]
//   workerbox kv key get|put|list|delete … --binding NAME | --namespace-id ID [--local] [--persist-to DIR]
//   workerbox r2 object get|put|delete <bucket>/<key> [--file PATH] [--pipe] [--local] [--persist-to DIR]
// Each loads the project without bundling or migrating (loadProject) and works on wrangler's own
// files (D1, KV and R2 are shared with it; wrangler-state.js). bin/workerbox.js calls run().

const fs = require("node:fs");
const path = require("node:path");

class UsageError extends Error {}

/**
 * Parses `argv` with `flags` ({ name: "string" | "boolean", alias: "name" }): `{ _: positionals,
 * …flags }`; `--name=value` and `--no-name` as yargs takes them.
 */
function parse(argv, flags) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    if (!arg.startsWith("-") || arg === "-") {
      out._.push(arg);
      continue;
    }
    let inline;
    const eq = arg.indexOf("=");
    if (eq > 0) [arg, inline] = [arg.slice(0, eq), arg.slice(eq + 1)];
    let name = arg.replace(/^--?/, "");
    if (typeof flags[name] === "string" && !["string", "boolean"].includes(flags[name])) name = flags[name];
    const negated = name.startsWith("no-") && flags[name.slice(3)] === "boolean";
    if (negated) name = name.slice(3);
    const type = flags[name];
    if (type === undefined) throw new UsageError(`unknown option "${arg}"`);
    const key = name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
    if (type === "boolean") out[key] = negated ? false : inline === undefined ? true : inline !== "false";
    else if (inline !== undefined) out[key] = inline;
    else if (i + 1 < argv.length) out[key] = argv[++i];
    else throw new UsageError(`${arg} needs a value`);
  }
  if (out.remote) throw new UsageError("--remote is not available: workerbox has only local state");
  return out;
}

/** Flags every command takes, as wrangler's. */
const COMMON = { config: "string", c: "config", env: "string", e: "env", local: "boolean", remote: "boolean", "persist-to": "string", preview: "boolean" };

/** The project of `--config` (default the working directory), loaded for its state only. */
async function openProject(args) {
  const { loadProject } = require("./load.js");
  return loadProject(args.config ?? ".", { env: args.env, persistTo: args.persistTo, build: false, migrate: false });
}

/** `d1 execute <database> --command | --file`: resolves to wrangler's results (an array). */
async function d1Execute(argv, out) {
  const args = parse(argv, { ...COMMON, command: "string", file: "string", json: "boolean", yes: "boolean", y: "yes" });
  const [name] = args._;
  if (name === undefined) throw new UsageError("d1 execute needs a database (its binding name or database_name)");
  if (args.command !== undefined && args.file !== undefined) throw new UsageError("can't provide both --command and --file.");
  if (args.command === undefined && args.file === undefined) throw new UsageError("d1 execute needs --command or --file");
  const project = await openProject(args);
  const entry = project.config.bindings.d1.find((e) => e.databaseName === name || e.binding === name);
  if (entry === undefined) throw new Error(`Couldn't find a D1 DB with the name or binding '${name}' in your ${path.basename(project.configFile)} file.`);
  const { splitSql } = require("../d1.js");
  const { d1File } = require("./wrangler-state.js");
  const sql = args.file !== undefined ? fs.readFileSync(path.resolve(args.file), "utf8") : args.command;
  if (!args.json) {
    out.log(`🌀 Executing on local database ${name} (${entry.localId}) from ${path.relative(process.cwd(), path.dirname(path.dirname(d1File(project.stateDir, entry))))}:`);
  }
  const db = project.bindings[entry.binding].database();
  const statements = splitSql(sql);
  let results;
  try {
    results = statements.length === 0 ? [] : await db.batch(statements.map((statement) => db.prepare(statement)));
  } catch (error) {
    // As wrangler reports it: SQLite's words, without the D1_ERROR prefix.
    throw new Error((error.cause ?? error).message.replace(/^D1_ERROR: /, ""), { cause: error });
  }
  const shown = results.map((result) => ({
    // Blobs print as wrangler prints them: [1, 2, 3].
    results: (result.results ?? []).map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Array.isArray(v) ? `[${v.join(", ")}]` : v]))),
    success: result.success,
    meta: { duration: result.meta?.duration },
  }));
  if (!args.json) out.log(`🚣 ${shown.length} command${shown.length === 1 ? "" : "s"} executed successfully.`);
  if (out.isTTY && !args.json) {
    for (const result of shown) if (result.results.length) console.table(result.results.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, String(v)]))));
  } else {
    out.log(JSON.stringify(shown, null, 2));
  }
  return shown;
}

/** The KV namespace of --binding or --namespace-id, as a KVNamespace. */
async function namespaceOf(args) {
  const project = await openProject(args);
  if (args.namespaceId !== undefined) {
    const entry = project.config.bindings.kv.find((e) => e.localId === args.namespaceId || e.id === args.namespaceId);
    if (entry) return project.bindings[entry.binding].namespace();
    const { kv } = require("../api.js");
    const { wranglerKv } = require("./wrangler-kv.js");
    return wranglerKv(kv, project.stateDir, args.namespaceId).namespace();
  }
  if (args.binding === undefined) throw new UsageError("give --binding or --namespace-id");
  const entry = project.config.bindings.kv.find((e) => e.binding === args.binding);
  if (entry === undefined) throw new Error(`No KV namespace with binding "${args.binding}" was found in the "kv_namespaces" section of ${path.basename(project.configFile)}.`);
  return project.bindings[entry.binding].namespace();
}

/** `kv key get|put|list|delete`. */
async function kvKey(action, argv, out) {
  const flags = { ...COMMON, binding: "string", "namespace-id": "string", text: "boolean", path: "string", ttl: "string", expiration: "string", metadata: "string", prefix: "string" };
  const args = parse(argv, flags);
  const [key, value] = args._;
  if (action !== "list" && key === undefined) throw new UsageError(`kv key ${action} needs a key`);
  const namespace = await namespaceOf(args);
  if (action === "get") {
    const bytes = await namespace.get(key, "arrayBuffer");
    if (bytes === null) out.log("Value not found");
    else if (args.text) out.log(Buffer.from(bytes).toString("utf8"));
    else out.write(Buffer.from(bytes));
  } else if (action === "put") {
    if ((value === undefined) === (args.path === undefined)) throw new UsageError("kv key put needs a value or --path (one of them)");
    const options = {};
    if (args.ttl !== undefined) options.expirationTtl = Number(args.ttl);
    if (args.expiration !== undefined) options.expiration = Number(args.expiration);
    if (args.metadata !== undefined) options.metadata = JSON.parse(args.metadata);
    const metadataLog = options.metadata ? ` with metadata "${JSON.stringify(options.metadata)}"` : "";
    const where = args.binding !== undefined ? `binding: "${args.binding}"` : `id: "${args.namespaceId}"`;
    out.log(args.path !== undefined ? `Writing the contents of ${args.path} to the key "${key}" on namespace ${where}${metadataLog}.` : `Writing the value "${value}" to key "${key}" on namespace ${where}${metadataLog}.`);
    await namespace.put(key, args.path !== undefined ? fs.readFileSync(args.path) : value, options);
  } else if (action === "list") {
    const keys = [];
    let cursor;
    do {
      const page = await namespace.list({ prefix: args.prefix, cursor });
      keys.push(...page.keys);
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    out.log(JSON.stringify(keys, undefined, 2));
  } else if (action === "delete") {
    out.log(`Deleting the key "${key}" on namespace ${args.binding !== undefined ? `binding: "${args.binding}"` : `id: "${args.namespaceId}"`}.`);
    await namespace.delete(key);
  } else {
    throw new UsageError(`unknown kv key command "${action}" (get, put, list, delete)`);
  }
}

/** The bucket named `name`: the project's binding with that bucket_name, else a store of that name. */
async function bucketOf(args, name) {
  const project = await openProject(args);
  const entry = project.config.bindings.r2.find((e) => e.localBucket === name);
  if (entry) return project.bindings[entry.binding].bucket();
  const { storage } = require("../api.js");
  return require("./wrangler-r2.js").wranglerR2(storage, project.stateDir, name).bucket();
}

/** `r2 object get|put|delete <bucket>/<key>`. */
async function r2Object(action, argv, out) {
  const args = parse(argv, {
    ...COMMON, file: "string", f: "file", pipe: "boolean", p: "pipe", jurisdiction: "string", J: "jurisdiction",
    "content-type": "string", ct: "content-type", "content-disposition": "string", cd: "content-disposition",
    "content-encoding": "string", ce: "content-encoding", "content-language": "string", cl: "content-language",
    "cache-control": "string", cc: "cache-control", expires: "string", "storage-class": "string", s: "storage-class", force: "boolean", y: "force",
  });
  const [objectPath] = args._;
  const slash = objectPath?.indexOf("/") ?? -1;
  if (slash <= 0 || slash === objectPath.length - 1) throw new UsageError(`r2 object ${action} needs <bucket>/<key>`);
  const [bucketName, key] = [objectPath.slice(0, slash), objectPath.slice(slash + 1)];
  const bucket = await bucketOf(args, bucketName);
  if (action === "get") {
    const file = args.file ?? (args.pipe ? undefined : key);
    if (!args.pipe) out.log(`Downloading "${key}" from "${bucketName}".`);
    const object = await bucket.get(key);
    if (object === null) throw new Error("The specified key does not exist.");
    const body = Buffer.from(await object.arrayBuffer());
    if (file !== undefined) {
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
      fs.writeFileSync(file, body);
    } else {
      out.write(body);
    }
    if (!args.pipe) out.log("Download complete.");
  } else if (action === "put") {
    if ((args.file === undefined) === !args.pipe) throw new UsageError("r2 object put needs --file or --pipe (one of them)");
    const body = args.file !== undefined ? fs.readFileSync(args.file) : await out.readStdin();
    out.log(`Creating object "${key}" in bucket "${bucketName}".`);
    const httpMetadata = {};
    for (const [flag, field] of [["contentType", "contentType"], ["contentDisposition", "contentDisposition"], ["contentEncoding", "contentEncoding"], ["contentLanguage", "contentLanguage"], ["cacheControl", "cacheControl"]]) {
      if (args[flag] !== undefined) httpMetadata[field] = args[flag];
    }
    if (args.expires !== undefined) httpMetadata.cacheExpiry = new Date(args.expires);
    await bucket.put(key, body, { httpMetadata });
    out.log("Upload complete.");
  } else if (action === "delete") {
    out.log(`Deleting object "${key}" from bucket "${bucketName}".`);
    await bucket.delete(key);
    out.log("Delete complete.");
  } else {
    throw new UsageError(`unknown r2 object command "${action}" (get, put, delete)`);
  }
}

/** Standard output, as the commands use it (tests pass their own). */
const processOutput = {
  isTTY: Boolean(process.stdout.isTTY),
  log: (line) => console.log(line),
  write: (bytes) => process.stdout.write(bytes),
  readStdin: async () => {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks);
  },
};

/**
 * Runs `workerbox <group> …` for group "d1" (execute), "kv" (key …) or "r2" (object …). Resolves
 * to false when `argv` is not one of these commands (bin/workerbox.js handles the rest).
 */
async function run(group, argv, out = processOutput) {
  const [sub, action, ...rest] = argv;
  if (group === "d1" && sub === "execute") await d1Execute([action, ...rest].filter((a) => a !== undefined), out);
  else if (group === "kv" && sub === "key") await kvKey(action, rest, out);
  else if (group === "r2" && sub === "object") await r2Object(action, rest, out);
  else return false;
  return true;
}

module.exports = { run, d1Execute, kvKey, r2Object, UsageError, parse };
