#!/usr/bin/env node
"use strict";
// The workerbox command line:
//   workerbox serve <file> [--port N] [--host H] [--var NAME=VALUE]…  serves one worker script;
//   workerbox dev [dir] [--port N] [--host H] [--env NAME] [--var NAME=VALUE]… [--no-watch]
//     serves a wrangler-style project (lib/project/dev.js) with rebuilds on change.
//   workerbox d1 migrations list|apply <database> [--config path] [--env NAME] [--local]
//     lists or applies a project's local D1 migrations (lib/project/migrations.js).
//   workerbox d1 execute, kv key get|put|list|delete, r2 object get|put|delete: the project's
//     local state, with wrangler's flags (lib/project/state-cli.js).
// Request and response bodies stream through dispatch() in both.

// Node's on-disk code cache for the modules this command loads (Node 22.1+; in the OS temp
// folder, or NODE_COMPILE_CACHE's): later starts skip compiling them again.
try {
  require("node:module").enableCompileCache?.();
} catch {}

const { mark } = require("../lib/project/timing.js");
mark("cli: entry");
const fs = require("node:fs");
const path = require("node:path");

const USAGE = `Usage:
  workerbox serve <worker.js> [--port 8787] [--host 127.0.0.1] [--var NAME=VALUE]...
  workerbox dev [project-dir | wrangler.toml | -c config...] [--port 8787] [--host 127.0.0.1] [--env NAME]
                [--var NAME=VALUE]... [--persist-to DIR | --no-persist] [--no-watch] [--no-migrate]
                [--inspect[=9229]] [--no-cache] [--verbose]
  workerbox d1 migrations list|apply <database> [--config path] [--env NAME] [--persist-to DIR] [--local]
  workerbox d1 execute <database> --command SQL | --file PATH [--json] [--config path] [--env NAME] [--persist-to DIR] [--local]
  workerbox kv key get <key> | put <key> [value] | list | delete <key> --binding NAME | --namespace-id ID
                [--path FILE] [--ttl S] [--expiration T] [--metadata JSON] [--prefix P] [--text] [--persist-to DIR] [--local]
  workerbox r2 object get|put|delete <bucket>/<key> [--file PATH] [--pipe] [--content-type T]... [--persist-to DIR] [--local]

serve  serves one worker script over HTTP. --var adds a plain-text env binding (repeatable).
dev    serves a project described by wrangler.jsonc / wrangler.json / wrangler.toml like
       \`wrangler dev\`: bundles it with esbuild, rebuilds on change, serves its assets, logs each
       request; GET /__scheduled?cron=... runs its scheduled() handler. --verbose also lists
       config keys used only when deploying (accepted silently otherwise). A restart reuses the
       last bundle when none of its inputs changed (.wrangler/tmp/workerbox-bundle) and V8's
       compiled code (the per-user cache); --no-cache turns both off. -c/--config may be
       given several times: every worker runs in this server (the first is the one served) and
       their service, Durable Object (script_name), Workflow and tail_consumers bindings reach
       each other; workers of other \`workerbox dev\` processes are found through the dev registry.
d1     \`d1 migrations list <database>\` shows which files of the database's migrations_dir are
       applied to the local database (under .wrangler/state/v3) and which are pending; \`apply\`
       applies the pending ones, recorded in its d1_migrations table as wrangler does. <database>
       is a binding name or a database_name; --config names the project folder or config file.
       \`d1 execute\` runs SQL on the local database and prints wrangler's JSON (a table on a terminal).
kv, r2 read and write the local KV namespaces and R2 buckets \`workerbox dev\` uses.
State lives where wrangler keeps it: <project>/.wrangler/state/v3, or <--persist-to DIR>/v3.

Exit codes: 0 after SIGINT/SIGTERM, 1 on a start-up error (bad config, build failure, port in use), 2 on bad usage.`;

function fail(message) {
  console.error(`workerbox: ${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseArgs(argv) {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h" || command === undefined) {
    console.log(USAGE);
    process.exit(command === undefined ? 2 : 0);
  }
  if (command !== "serve" && command !== "dev") fail(`unknown command "${command}" (commands: serve, dev, d1, kv, r2)`);
  const options = { command, configs: [], file: undefined, port: undefined, host: undefined, vars: {}, env: undefined, persistTo: undefined, watch: true, migrate: true, verbose: false };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => {
      if (i + 1 >= rest.length) fail(`${arg} needs a value`);
      return rest[++i];
    };
    if (arg === "--port" || arg === "-p") {
      const port = Number(value());
      if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port must be an integer from 0 to 65535`);
      options.port = port;
    } else if (arg === "--host" || arg === "--ip") {
      options.host = value();
    } else if (arg === "--var") {
      const pair = value();
      const eq = pair.indexOf("=");
      if (eq <= 0) fail(`--var takes NAME=VALUE, got "${pair}"`);
      options.vars[pair.slice(0, eq)] = pair.slice(eq + 1);
    } else if (command === "dev" && (arg === "--env" || arg === "-e")) {
      options.env = value();
    } else if (command === "dev" && (arg === "--config" || arg === "-c")) {
      options.configs.push(value());
    } else if (command === "dev" && arg === "--persist-to") {
      options.persistTo = value();
    } else if (command === "dev" && arg === "--no-migrate") {
      options.migrate = false;
    } else if (command === "dev" && arg === "--no-persist") {
      options.persistTo = false;
    } else if (command === "dev" && (arg === "--verbose" || arg === "-v")) {
      options.verbose = true;
    } else if (command === "dev" && arg === "--no-watch") {
      options.watch = false;
    } else if (command === "dev" && arg === "--no-cache") {
      options.cache = false;
    } else if (command === "dev" && (arg === "--inspect" || arg.startsWith("--inspect="))) {
      const port = arg === "--inspect" ? 9229 : Number(arg.slice("--inspect=".length));
      if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--inspect takes a port from 0 to 65535, got "${arg.slice("--inspect=".length)}"`);
      options.inspect = port;
    } else if (arg.startsWith("-")) {
      fail(`unknown option "${arg}" for ${command}`);
    } else if (options.file === undefined) {
      options.file = arg;
    } else {
      fail(`unexpected argument "${arg}"`);
    }
  }
  if (command === "serve" && options.file === undefined) fail("serve needs a worker script file");
  if (command === "dev" && options.configs.length > 0 && options.file !== undefined) fail(`give the project as -c ${options.file} too, or leave out -c`);
  return options;
}

/** Closes the server and disposes on SIGINT/SIGTERM; a second signal exits at once. */
function onSignals(stop) {
  let stopping = false;
  const handler = (signal) => {
    if (stopping) process.exit(130);
    stopping = true;
    console.log(`\nworkerbox: ${signal}, shutting down`);
    stop().then(
      () => process.exit(0),
      (error) => {
        console.error(`workerbox: shutdown failed: ${error.stack ?? error}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
}

async function serve(options) {
  const { createWorker, dispatch } = require("../index.js");
  const { nodeHandler, upgradeHandler } = require("../lib/project/dev.js");
  const file = path.resolve(options.file);
  let script;
  try {
    script = fs.readFileSync(file, "utf8");
  } catch (error) {
    fail(`cannot read ${options.file}: ${error.message}`);
  }
  let worker;
  try {
    worker = await createWorker({ script, filename: file, bindings: options.vars });
  } catch (error) {
    console.error(`workerbox: ${options.file} failed to start:\n${error.stack}`);
    process.exit(1);
  }
  const host = options.host ?? "127.0.0.1";
  let address;
  const handler = nodeHandler({
    getWorker: () => worker,
    dispatch,
    origin: () => `http://${address}`,
    onError: (error, req) => {
      console.error(`[worker] ${req.method} ${req.url} failed:\n${error.stack}`);
      return error;
    },
  });
  const server = require("node:http").createServer(handler);
  server.on("upgrade", upgradeHandler({ getWorker: () => worker, dispatch, origin: () => `http://${address}`, onError: (error, req) => (console.error(`[worker] ${req.method} ${req.url} failed:\n${error.stack}`), error) }));
  server.on("error", async (error) => {
    console.error(error.code === "EADDRINUSE" ? `workerbox: port ${options.port ?? 8787} on ${host} is already in use; pass --port (0 picks a free port)` : `workerbox: ${error.message}`);
    await worker.dispose();
    process.exit(1);
  });
  server.listen(options.port ?? 8787, host, () => {
    const { port } = server.address();
    address = `${host}:${port}`;
    console.log(`workerbox: serving ${options.file} (${worker.format}) on http://${address}/`);
  });
  onSignals(async () => {
    server.close();
    server.closeAllConnections();
    await worker.dispose();
  });
}

async function dev(options) {
  // esbuild's service process boots while the addon and the project tooling load, unless the
  // project has a bundle cache (a restart then likely needs no esbuild at start): the one that
  // makes the first bundle, without its source map, unless --inspect (lib/project/bundle.js).
  const targets = options.configs.length ? options.configs : [options.file ?? "."];
  if (options.cache === false || !targets.every((t) => require("../lib/project/bundle-cache.js").hasBundleCache(t))) require("../lib/project/bundle.js").warmEsbuild({ oneShot: options.inspect === undefined });
  const { startDevServers } = require("../lib/project/multi.js");
  mark("cli: dev tooling loaded");
  let group;
  try {
    group = await startDevServers(options.configs.length ? options.configs : [options.file ?? "."], { port: options.port, host: options.host, env: options.env, vars: options.vars, persistTo: options.persistTo, watch: options.watch, migrate: options.migrate, inspect: options.inspect, verbose: options.verbose, cache: options.cache });
  } catch (error) {
    const { describeProblem } = require("../lib/project/report.js");
    const color = Boolean(process.stderr.isTTY) && !process.env.NO_COLOR;
    const text = error.name === "ConfigError" || error.name === "BuildError" ? `\n${describeProblem(error, { color })}` : error.code === "EADDRINUSE" ? error.message : error.stack ?? String(error);
    console.error(`workerbox dev: ${text}`);
    process.exit(1);
  }
  const server = group.primary;
  const { project } = server;
  for (const other of group.servers.slice(1)) console.log(`workerbox dev: ${other.project.name} from ${path.relative(process.cwd(), other.project.configFile) || other.project.configFile} on ${other.url} (bound to by name)`);
  console.log(`workerbox dev: ${project.name ?? path.basename(project.root)} from ${path.relative(process.cwd(), project.configFile) || project.configFile}${project.env ? ` (env ${project.env})` : ""}`);
  const names = Object.keys(project.bindings);
  if (names.length) console.log(`  bindings: ${names.join(", ")}`);
  if (project.assets) console.log(`  assets: ${path.relative(process.cwd(), project.assets.directory) || "."} (${project.assets.size} files)`);
  if (project.crons.length) console.log(`  crons: ${project.crons.join(", ")} — run one with ${server.url}__scheduled?cron=${encodeURIComponent(project.crons[0])}`);
  if (project.stateDir) console.log(`  state: ${path.relative(process.cwd(), project.stateDir) || project.stateDir} (wrangler's local state: D1, KV, R2 and Durable Objects shared with wrangler dev)`);
  console.log(`ready on ${server.url}`);
  onSignals(() => group.close());
}

/** `workerbox d1 migrations list|apply <database> …` */
async function d1(argv) {
  const [group, action, ...rest] = argv;
  if (group !== "migrations" || (action !== "list" && action !== "apply")) fail(`d1: expected "execute <database>", "migrations list <database>" or "migrations apply <database>"`);
  const options = { database: undefined, config: ".", env: undefined, persistTo: undefined };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const value = () => (i + 1 < rest.length ? rest[++i] : fail(`${arg} needs a value`));
    if (arg === "--config" || arg === "-c") options.config = value();
    else if (arg === "--env" || arg === "-e") options.env = value();
    else if (arg === "--persist-to") options.persistTo = value();
    else if (arg === "--local" || arg === "--preview") continue;
    else if (arg === "--remote") fail("d1: --remote is not available: workerbox has only the local database");
    else if (arg.startsWith("-")) fail(`d1: unknown option "${arg}"`);
    else if (options.database === undefined) options.database = arg;
    else fail(`d1: unexpected argument "${arg}"`);
  }
  if (options.database === undefined) fail(`d1 migrations ${action} needs a database (its binding name or database_name)`);
  const { listMigrations, applyMigrations } = require("../lib/project/migrations.js");
  try {
    const run = action === "list" ? listMigrations : applyMigrations;
    const result = await run(options.config, options.database, { env: options.env, persistTo: options.persistTo });
    const where = path.relative(process.cwd(), result.dir) || result.dir;
    if (action === "apply") {
      if (result.appliedNow.length === 0) console.log(`No migrations to apply for ${result.database} (${where}).`);
      else for (const name of result.appliedNow) console.log(`applied ${name}`);
      console.log(`${result.database}: ${result.applied.length} applied, ${result.pending.length} pending (table ${result.table}).`);
    } else {
      for (const name of result.applied) console.log(`applied  ${name}`);
      for (const name of result.pending) console.log(`pending  ${name}`);
      console.log(result.pending.length === 0 ? `No migrations to apply for ${result.database} (${where}).` : `${result.pending.length} migration(s) to apply for ${result.database} (${where}).`);
    }
    process.exit(0);
  } catch (error) {
    console.error(`workerbox d1: ${error.message}`);
    process.exit(1);
  }
}

/** `workerbox d1 execute …`, `kv key …`, `r2 object …` (lib/project/state-cli.js). */
async function stateCommand(group, argv) {
  const { run, UsageError } = require("../lib/project/state-cli.js");
  try {
    if (!(await run(group, argv))) fail(group === "kv" ? `kv: expected "key get|put|list|delete"` : `r2: expected "object get|put|delete <bucket>/<key>"`);
    process.exit(0);
  } catch (error) {
    if (error instanceof UsageError) fail(`${group}: ${error.message}`);
    // As wrangler's --json: the error as JSON on stdout.
    if (group === "d1" && argv.includes("--json")) console.log(JSON.stringify({ error: { text: error.message } }, null, 2));
    else console.error(`workerbox ${group}: ${error.message}`);
    process.exit(1);
  }
}

if (process.argv[2] === "d1" && process.argv[3] === "execute") stateCommand("d1", process.argv.slice(3));
else if (process.argv[2] === "kv" || process.argv[2] === "r2") stateCommand(process.argv[2], process.argv.slice(3));
else if (process.argv[2] === "d1") d1(process.argv.slice(3));
else {
  const options = parseArgs(process.argv.slice(2));
  (options.command === "serve" ? serve : dev)(options);
}
