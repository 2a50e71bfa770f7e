// Projects that a build makes: a configuration redirected by .wrangler/deploy/config.json (as
// Cloudflare's Vite plugin writes it), a custom build (build.command / cwd / watch_dir) run by
// workerbox dev before serving and on changes, and `workerbox d1 migrations list|apply`.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadProject, startDevServer, readConfig, ConfigError } from "../lib/project/index.js";
import { createWorker, dispatch, d1 } from "../index.js";
import { execNode } from "./child-node.mjs";

const BIN = fileURLToPath(new URL("../bin/workerbox.js", import.meta.url));

function project(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-build-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), typeof text === "string" ? text : JSON.stringify(text));
  }
  return dir;
}

async function until(check, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${check}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const VITE_LIKE = {
  "package.json": { name: "vite-like", private: true, scripts: { build: "vite build" } },
  // The source config names a module only the build tool resolves.
  "wrangler.jsonc": { name: "vite-like", main: "virtual:my-framework/server", compatibility_date: "2025-06-01" },
  ".dev.vars": "SECRET=from-project-dev-vars\n",
};
const BUILT = {
  ".wrangler/deploy/config.json": { configPath: "../../dist/vite_like/wrangler.json" },
  "dist/vite_like/wrangler.json": { name: "vite-like", main: "index.js", compatibility_date: "2025-06-01", no_bundle: true, assets: { directory: "../client" }, vars: { BUILT: "yes" } },
  "dist/vite_like/index.js": `export default { fetch(request, env) { return new Response("built worker " + env.BUILT + " " + env.SECRET); } };`,
  "dist/client/logo.txt": "an asset",
};

test("a build's configuration, pointed to by .wrangler/deploy/config.json, is the one served", async (t) => {
  const dir = project(t, { ...VITE_LIKE, ...BUILT });
  const loaded = await loadProject(dir, { persistTo: false });
  assert.equal(loaded.configFile, path.join(dir, "dist", "vite_like", "wrangler.json"));
  assert.equal(loaded.redirectedFrom, path.join(dir, "wrangler.jsonc"));
  assert.equal(loaded.projectRoot, dir);
  const worker = await createWorker({ ...loaded.options, onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "built worker yes from-project-dev-vars");
  // State stays with the project, not in the build output.
  const persisted = await loadProject(dir);
  assert.equal(persisted.stateDir, path.join(dir, ".wrangler", "state", "v3"));

  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, persistTo: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.ok(lines.some((line) => line.includes("using the configuration the build wrote: ") && line.includes(path.join("dist", "vite_like", "wrangler.json"))), lines.join("\n"));
  assert.equal(await (await fetch(new URL("/logo.txt", server.url))).text(), "an asset");
  assert.equal(await (await fetch(server.url)).text(), "built worker yes from-project-dev-vars");
});

test("a build's configuration lists every key wrangler knows: the empty and default ones are not warned about", async (t) => {
  // As Cloudflare's Vite plugin writes it: bookkeeping, empty collections, wrangler's defaults.
  const written = {
    configPath: "/elsewhere/wrangler.jsonc", userConfigPath: "/elsewhere/wrangler.jsonc", topLevelName: "vite-like", definedEnvironments: [],
    ...BUILT["dist/vite_like/wrangler.json"],
    compatibility_flags: [], jsx_factory: "React.createElement", jsx_fragment: "React.Fragment", rules: [{ type: "ESModule", globs: ["**/*.js", "**/*.mjs"] }],
    triggers: {}, durable_objects: { bindings: [] }, workflows: [], migrations: [], queues: { producers: [], consumers: [] }, hyperdrive: [], vectorize: [],
    logfwdr: { bindings: [] }, python_modules: { exclude: ["**/*.pyc"] }, upload_source_maps: true,
    dev: { ip: "localhost", local_protocol: "http", upstream_protocol: "http", enable_containers: true, generate_types: false },
    // What the project did set still counts.
    ai: { binding: "AI" },
    some_new_key: 1,
  };
  const dir = project(t, { ...VITE_LIKE, ...BUILT, "dist/vite_like/wrangler.json": written });
  const config = readConfig(dir);
  assert.deepEqual(config.warnings.map((w) => w.text.replace(/^.*wrangler\.json:\d+:\d+: /, "")), ["ai: not supported by workerbox; ignored", "some_new_key: unknown configuration key; ignored"]);
  assert.equal(config.dev.ip, "localhost");
  // The user's own configuration is checked in full.
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "x", main: "dist/vite_like/index.js", compatibility_date: "2025-06-01", vectorize: [] }));
  assert.match(readConfig(dir, { redirect: false }).warnings.map((w) => w.text).join("\n"), /vectorize: not supported/);
});

test("without the build's output: a clear error naming the missing file and `npm run build`", async (t) => {
  const dir = project(t, { ...VITE_LIKE, ".wrangler/deploy/config.json": { configPath: "../../dist/vite_like/wrangler.json" } });
  let error;
  try {
    readConfig(dir);
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof ConfigError);
  assert.match(error.message, /virtual:my-framework\/server does not exist; if a build tool \(such as @cloudflare\/vite-plugin\) makes it, run the build \(e\.g\. `npm run build`\) first/);
  // A source config that works alone is used, with a warning naming the missing build output.
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "x", main: "src/index.js", compatibility_date: "2025-06-01" }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), "export default { fetch() { return new Response('source') } }");
  const config = readConfig(dir);
  assert.equal(config.file, path.join(dir, "wrangler.jsonc"));
  assert.ok(config.warnings.some((w) => w.text.includes(path.join("dist", "vite_like", "wrangler.json")) && w.text.includes("which does not exist: run the project's build")), JSON.stringify(config.warnings));
});

const BUILD_SCRIPT = `
const fs = require("node:fs");
const text = fs.readFileSync("src/message.txt", "utf8").trim();
console.log("building with " + JSON.stringify(text));
if (text === "FAIL") { console.error("the build says no"); process.exit(3); }
fs.mkdirSync("out", { recursive: true });
fs.writeFileSync("out/worker.js", "export default { fetch() { return new Response(" + JSON.stringify(text) + "); } };");
`;

test("build.command runs before serving and again on changes under watch_dir; a failing build keeps the old worker", async (t) => {
  const dir = project(t, {
    "wrangler.jsonc": { name: "custom", main: "out/worker.js", compatibility_date: "2025-06-01", build: { command: "node build.cjs", watch_dir: "src" } },
    "build.cjs": BUILD_SCRIPT,
    "src/message.txt": "first build",
  });
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  const text = async () => (await fetch(server.url)).text();
  assert.equal(await text(), "first build");
  assert.ok(lines.includes('[build] building with "first build"'), lines.join("\n"));
  assert.ok(lines.some((line) => line.startsWith("⎔ running the custom build: node build.cjs")));

  fs.writeFileSync(path.join(dir, "src", "message.txt"), "second build");
  await until(async () => (await text()) === "second build");

  fs.writeFileSync(path.join(dir, "src", "message.txt"), "FAIL");
  await until(() => lines.some((line) => line.includes("✘ the custom build failed (exit code 3): node build.cjs")));
  assert.ok(lines.includes("[build] the build says no"));
  assert.equal(await text(), "second build", "the old worker keeps serving");
});

test("workerbox d1 migrations list and apply, on the local database workerbox dev uses", async (t) => {
  const dir = project(t, {
    "wrangler.jsonc": { name: "d1-app", main: "src/index.js", compatibility_date: "2025-06-01", d1_databases: [{ binding: "DB", database_name: "app-db", database_id: "x" }] },
    "src/index.js": "export default { async fetch(r, env) { return Response.json((await env.DB.prepare('SELECT name FROM notes').all()).results); } }",
    "migrations/0001_notes.sql": "CREATE TABLE notes (name TEXT);",
    "migrations/0002_seed.sql": "INSERT INTO notes VALUES ('seeded');",
  });
  const cli = (...args) => execNode([BIN, "d1", "migrations", ...args, "--config", dir], { encoding: "utf8" });
  assert.match(cli("list", "DB"), /pending {2}0001_notes\.sql\npending {2}0002_seed\.sql\n2 migration\(s\) to apply for app-db/);
  assert.match(cli("apply", "app-db", "--local"), /applied 0001_notes\.sql\napplied 0002_seed\.sql\napp-db: 2 applied, 0 pending \(table d1_migrations\)\./);
  assert.match(cli("list", "DB"), /applied {2}0001_notes\.sql\napplied {2}0002_seed\.sql\nNo migrations to apply for app-db/);
  let failure;
  try {
    cli("list", "NOPE");
  } catch (error) {
    failure = error;
  }
  assert.equal(failure.status, 1);
  assert.match(failure.stderr, /d1_databases has no database bound or named "NOPE" \(it has: DB \(app-db\)\)/);
  // The dev server's database is that one: nothing left to apply, the seeded row is there.
  const lines = [];
  const server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.ok(!lines.some((line) => line.startsWith("D1 DB: applied")), lines.join("\n"));
  assert.deepEqual(await (await fetch(server.url)).json(), [{ name: "seeded" }]);
});
