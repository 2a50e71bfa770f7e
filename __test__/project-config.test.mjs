// Project configuration: wrangler.toml / .json / .jsonc with every key workerbox reads, env
// sections, .dev.vars and .env secrets, bad files (each error names file, line and key),
// warnings for unknown and unsupported keys, and loadProject()'s createWorker options.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readConfig, loadProject, ConfigError } from "workerbox/project";
import { createWorker, dispatch } from "workerbox";
import { scaled } from "./child-node.mjs";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "config");
const FORMATS = { "full-toml": "wrangler.toml", "full-jsonc": "wrangler.jsonc", "full-json": "wrangler.json" };

/** A copy of a fixture folder in a temporary folder, removed after the test. */
function copy(t, name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-config-"));
  fs.cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The normalised config without what depends on the file's name and place. */
function comparable(config) {
  const { file, root, warnings, notes, mainFile, secretFiles, ...rest } = config;
  return JSON.parse(JSON.stringify(rest).replaceAll(root, "<root>"));
}

for (const [folder, file] of Object.entries(FORMATS)) {
  test(`${file}: every supported key is read`, () => {
    const config = readConfig(path.join(FIXTURES, folder));
    const root = path.join(FIXTURES, folder);
    assert.equal(config.file, path.join(root, file));
    assert.equal(config.name, "full");
    assert.equal(config.main, "src/index.js");
    assert.equal(config.mainFile, path.join(root, "src", "index.js"));
    assert.equal(config.compatibilityDate, "2025-01-01");
    assert.deepEqual(config.compatibilityFlags, ["nodejs_compat"]);
    assert.equal(config.minify, false);
    assert.equal(config.noBundle, false);
    assert.equal(config.cpuMs, 50);
    assert.deepEqual(config.bindings.vars, { GREETING: "hello", COUNT: 3, NESTED: { a: [1, 2] } });
    assert.deepEqual(config.bindings.kv, [{ binding: "KV", id: "kv-preview", localId: "kv-id" }]);
    assert.deepEqual(config.bindings.r2, [{ binding: "BUCKET", bucket: "files", localBucket: "files" }]);
    assert.deepEqual(config.bindings.d1, [{ binding: "DB", databaseName: "main-db", databaseId: "db-id", localId: "db-id", migrationsDir: path.join(root, "migrations"), migrationsTable: "d1_migrations" }]);
    assert.deepEqual(config.bindings.durableObjects, [{ binding: "COUNTER", className: "Counter", scriptName: undefined }]);
    assert.deepEqual(config.migrations, [{ tag: "v1", newClasses: [], newSqliteClasses: ["Counter"], deletedClasses: [], renamedClasses: [] }]);
    assert.deepEqual(config.bindings.queues.producers, [{ binding: "JOBS", queue: "jobs", deliveryDelay: undefined }]);
    assert.deepEqual(config.bindings.queues.consumers, [{ queue: "jobs", deadLetterQueue: undefined, maxBatchSize: 10 }]);
    assert.deepEqual(config.bindings.services, [{ binding: "AUTH", service: "auth-worker", environment: undefined, entrypoint: undefined }]);
    assert.deepEqual(config.assets, { directory: path.join(root, "public"), binding: "ASSETS", htmlHandling: "drop-trailing-slash", notFoundHandling: "single-page-application", runWorkerFirst: ["/api/*", "!/api/static/*"] });
    assert.deepEqual(config.crons, ["*/5 * * * *", "0 0 * * 1"]);
    assert.deepEqual(config.rules, [{ type: "Text", globs: ["**/*.md"], fallthrough: true }]);
    assert.deepEqual(config.define, { VERSION: '"1.0.0"' });
    assert.deepEqual(config.alias, { "old-lib": path.join(root, "src", "new-lib.js") });
    assert.deepEqual(config.dev, { port: 9999, ip: "127.0.0.1" });
    assert.deepEqual(config.secrets, { SECRET: "from-dev-vars" });
    // account_id is deploy-only: read, named in a note (shown by --verbose) with its line, not used, no warning.
    assert.equal(config.warnings.length, 0, config.warnings.map((w) => w.text).join("\n"));
    assert.equal(config.notes.length, 1);
    assert.match(config.notes[0].text, new RegExp(`${file}:\\d+:\\d+: account_id: used only when deploying`));
  });
}

test("the three formats describe the same project identically", () => {
  const [toml, jsonc, json] = Object.keys(FORMATS).map((folder) => comparable(readConfig(path.join(FIXTURES, folder))));
  assert.deepEqual(jsonc, toml);
  assert.deepEqual(json, toml);
});

test("env sections: inherited keys, own bindings, env secrets, warnings for what is not inherited", () => {
  for (const folder of Object.keys(FORMATS)) {
    const config = readConfig(path.join(FIXTURES, folder), { env: "staging" });
    assert.equal(config.env, "staging");
    assert.equal(config.name, "full-staging");
    assert.equal(config.main, "src/index.js"); // inherited
    assert.equal(config.compatibilityDate, "2025-01-01"); // inherited
    assert.deepEqual(config.crons, ["*/5 * * * *", "0 0 * * 1"]); // inherited
    assert.deepEqual(config.bindings.vars, { GREETING: "hi from staging" });
    assert.deepEqual(config.bindings.kv, [{ binding: "KV", id: "staging-kv", localId: "staging-kv" }]);
    assert.deepEqual(config.bindings.r2, []); // bindings are not inherited
    assert.deepEqual(config.secrets, { SECRET: "staging-secret" }); // .dev.vars.staging
    const notInherited = config.warnings.filter((w) => /not inherited/.test(w.message)).map((w) => w.key).sort();
    assert.deepEqual(notInherited, ["d1_databases", "define", "durable_objects", "queues", "r2_buckets", "services"]);
    for (const w of config.warnings) assert.ok(w.line > 0, `warning without a line: ${w.text}`);
  }
  assert.throws(() => readConfig(path.join(FIXTURES, "full-toml"), { env: "prod" }), (error) => {
    assert.ok(error instanceof ConfigError);
    assert.match(error.message, /wrangler\.toml:\d+:\d+: env: no environment named "prod" \(defined: staging\)/);
    return true;
  });
});

test(".env files are read when there is no .dev.vars: .env, .env.<env>, .env.local, .env.<env>.local", (t) => {
  const dir = copy(t, "full-toml");
  fs.rmSync(path.join(dir, ".dev.vars"));
  fs.rmSync(path.join(dir, ".dev.vars.staging"));
  fs.writeFileSync(path.join(dir, ".env"), "A=1\nB=1\nC=1\n# comment\nD=\"quoted value\"\n");
  fs.writeFileSync(path.join(dir, ".env.staging"), "B=2\n");
  fs.writeFileSync(path.join(dir, ".env.local"), "C=3\n");
  assert.deepEqual(readConfig(dir).secrets, { A: "1", B: "1", C: "3", D: "quoted value" });
  assert.deepEqual(readConfig(dir, { env: "staging" }).secrets, { A: "1", B: "2", C: "3", D: "quoted value" });
});

const BAD = [
  ["syntax.toml", /syntax\.toml:4:\d+: invalid TOML/],
  ["syntax.jsonc", /syntax\.jsonc:4:\d+: invalid JSON: CommaExpected/],
  ["missing-main.toml", /missing-main\.toml:2:\d+: main: .*src[/\\]nope\.ts does not exist/],
  ["bad-date.jsonc", /bad-date\.jsonc:3:\d+: compatibility_date: "2025-13-45" is not a valid date/],
  ["bad-flag.toml", /bad-flag\.toml:3:\d+: compatibility_flags: unknown compatibility flag "no_such_flag"/],
  ["kv-no-binding.toml", /kv-no-binding\.toml:8:\d+: kv_namespaces\[1\]\.binding: is required/],
  ["duplicate-binding.jsonc", /duplicate-binding\.jsonc:6:\d+: r2_buckets\[0\]\.binding: binding name "STORE" is already used by vars\.STORE/],
  ["assets-bad.toml", /assets-bad\.toml:6:\d+: assets\.html_handling: must be one of .*got "sometimes"\n.*assets-bad\.toml:8:\d+: assets\.run_worker_first\[0\]: route "api\/\*" must start with "\/"/],
  ["assets-missing-dir.jsonc", /assets-missing-dir\.jsonc:4:\d+: assets\.directory: .*no-such-folder is not a folder/],
  ["crons-bad.toml", /crons-bad\.toml:5:\d+: triggers\.crons\[0\]: "every minute" is not a cron expression/],
  ["rules-bad.toml", /rules-bad\.toml:5:\d+: rules\[0\]\.type: must be one of "ESModule", "CommonJS", "Text", "Data", "CompiledWasm", got "Yaml"/],
  ["define-bad.jsonc", /define-bad\.jsonc:5:\d+: define\.DEBUG: must be a string holding a JavaScript expression/],
  ["vars-bad.toml", /vars-bad\.toml:3:\d+: vars: must be a table\/object, got string/],
  ["do-bad.toml", /do-bad\.toml:5:\d+: durable_objects\.bindings\[0\]\.class_name: is required/],
  ["services-bad.jsonc", /services-bad\.jsonc:5:\d+: services\[0\]\.service: is required/],
  ["d1-bad.toml", /d1-bad\.toml:5:\d+: d1_databases\[0\]\.binding: "1DB" is not a valid binding name/],
  ["queues-bad.toml", /queues-bad\.toml:4:\d+: queues\.producers\[0\]\.queue: is required/],
  ["limits-bad.jsonc", /limits-bad\.jsonc:4:\d+: limits\.cpu_ms: must be a number of milliseconds, got -5\n.*limits-bad\.jsonc:5:\d+: dev\.port: must be a port number/],
];

for (const [file, expected] of BAD) {
  test(`bad config ${file}: a ConfigError naming file, line and key`, () => {
    assert.throws(() => readConfig(path.join(FIXTURES, "bad", file)), (error) => {
      assert.ok(error instanceof ConfigError, `not a ConfigError: ${error.stack}`);
      assert.match(error.message, expected);
      assert.equal(error.file, path.join(FIXTURES, "bad", file));
      assert.ok(error.line > 0);
      return true;
    });
  });
}

test("nested env sections are an error when that env is used", () => {
  assert.throws(() => readConfig(path.join(FIXTURES, "bad", "env-nested.toml"), { env: "prod" }), /env-nested\.toml:7:\d+: env\.prod\.env: environments cannot be nested/);
});

test("no config file: the error names the folder and the files looked for", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-empty-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  assert.throws(() => readConfig(dir), new RegExp(`${dir.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&")}: no configuration file here \\(looked for wrangler\\.jsonc, wrangler\\.json, wrangler\\.toml\\)`));
});

test("unknown and unsupported keys each get a warning with file, line, column and key; deploy-only keys a note", () => {
  const config = readConfig(path.join(FIXTURES, "bad", "warnings.toml"));
  const byKey = Object.fromEntries(config.warnings.map((w) => [w.key, w]));
  assert.deepEqual(Object.keys(byKey).sort(), ["kv_namespaces[0].colour", "shiny_new_feature", "vectorize"]);
  assert.deepEqual(config.notes.map((n) => n.key), ["workers_dev"]);
  assert.match(config.notes[0].text, /warnings\.toml:3:1: workers_dev: used only when deploying/);
  assert.match(byKey.shiny_new_feature.text, /warnings\.toml:4:1: shiny_new_feature: unknown configuration key/);
  assert.match(byKey["kv_namespaces[0].colour"].text, /warnings\.toml:9:1: kv_namespaces\[0\]\.colour: unknown key/);
  assert.match(byKey.vectorize.text, /warnings\.toml:11:1: vectorize: not supported by workerbox/);
});

test("positions: syntax errors and keys in JSONC and TOML name the line and the column", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-positions-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name, text) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const jsonc = write("a.jsonc", '{\n  "name": "x",\n  "main": "i.js"\n  "compatibility_date": "2025-01-01"\n}\n');
  assert.throws(() => readConfig(jsonc), (error) => error.message === `${jsonc}:4:3: invalid JSON: CommaExpected` && error.line === 4 && error.column === 3);
  const toml = write("b.toml", 'name = "x"\nmain = "i.js"\nvars = { A = }\n');
  assert.throws(() => readConfig(toml), (error) => error.message.startsWith(`${toml}:3:14: invalid TOML: `) && error.column === 14);
  const key = write("c.jsonc", '{\n  "name": "x",\n  "main": "i.js",\n  "compatibility_date": "2025-01-01",\n  "limits": {   "cpu_ms": -5 }\n}\n');
  fs.writeFileSync(path.join(dir, "i.js"), "export default {};\n");
  assert.throws(() => readConfig(key), (error) => error.message === `${key}:5:17: limits.cpu_ms: must be a number of milliseconds, got -5`);
});

test("two config files in one folder: the first of jsonc, json, toml wins, with a warning", (t) => {
  const dir = copy(t, "full-toml");
  fs.writeFileSync(path.join(dir, "wrangler.json"), JSON.stringify({ name: "from-json", main: "src/index.js", compatibility_date: "2025-01-01" }));
  const config = readConfig(dir);
  assert.equal(config.name, "from-json");
  assert.ok(config.warnings.some((w) => /wrangler\.toml is also present and is ignored/.test(w.text)));
});

test("loadProject: createWorker options with embedded bindings (D1 migrated, the queue it consumes, the Durable Object namespace)", async (t) => {
  const dir = copy(t, "full-toml");
  const project = await loadProject(dir, { persistTo: false });
  assert.deepEqual(project.unsupported, []);
  assert.equal(project.bindings.COUNTER.className, "Counter");
  assert.ok(project.warnings.some((w) => /services: AUTH: no worker named "auth-worker"/.test(w)));
  assert.deepEqual(Object.keys(project.bindings).sort(), ["ASSETS", "AUTH", "BUCKET", "COUNT", "COUNTER", "DB", "GREETING", "JOBS", "KV", "NESTED", "SECRET"]);
  // The D1 database's migrations_dir was applied in order and recorded.
  assert.deepEqual(project.migrations.map((m) => [m.binding, m.applied]), [["DB", ["0001_init.sql", "0002_done.sql"]]]);
  const db = project.bindings.DB.database();
  assert.deepEqual((await db.prepare("SELECT text, done FROM notes").all()).results, [{ text: "first", done: 0 }]);
  assert.deepEqual((await db.prepare("SELECT name FROM d1_migrations ORDER BY id").raw()).flat(), ["0001_init.sql", "0002_done.sql"]);
  const again = await loadProject(dir, { persistTo: false, migrate: false });
  assert.deepEqual(again.migrations, []);
  assert.equal(project.options.compatibilityDate, "2025-01-01");
  assert.deepEqual(project.options.compatibilityFlags, ["nodejs_compat"]);
  assert.deepEqual(project.options.limits, { cpuMs: 50 });
  assert.deepEqual(project.crons, ["*/5 * * * *", "0 0 * * 1"]);

  // The config's 50 ms of CPU, ten times longer under an emulator (the first request's bundle start alone passes 50 ms there).
  const worker = await createWorker({ ...project.options, limits: { cpuMs: scaled(project.options.limits.cpuMs) }, onLog() {} });
  t.after(() => worker.dispose());
  const body = await (await dispatch(worker, "http://localhost/")).json();
  // alias (old-lib -> src/new-lib.js), define (VERSION), the Text rule for .md, vars, secrets, KV.
  assert.deepEqual(body, { lib: "new", version: "1.0.0", notes: "# Notes", greeting: "hello", count: 3, nested: { a: [1, 2] }, secret: "from-dev-vars", kv: "yes" });
});

test("loadProject: KV state persists under .wrangler/state/v3 and the service stub answers 503", async (t) => {
  const dir = copy(t, "full-jsonc");
  const first = await loadProject(dir);
  assert.equal(first.stateDir, path.join(dir, ".wrangler", "state", "v3"));
  const worker = await createWorker({ ...first.options, onLog() {} });
  await dispatch(worker, "http://localhost/");
  const auth = await createWorker({ script: "export default { fetch(r, env) { return env.AUTH.fetch('http://auth/') } }", bindings: { AUTH: first.bindings.AUTH }, onLog() {} });
  const stub = await dispatch(auth, "http://localhost/");
  assert.equal(stub.status, 503);
  assert.match(await stub.text(), /service "auth-worker" \(binding AUTH\) is not running locally/);
  await Promise.all([worker.dispose(), auth.dispose()]);
  // The namespace wrangler dev uses locally (the id, not the preview_id), in wrangler's layout.
  assert.ok(fs.existsSync(path.join(dir, ".wrangler", "state", "v3", "kv", "kv-id", "blobs")));

  const second = await loadProject(dir);
  const reader = await createWorker({ script: "export default { async fetch(r, env) { return new Response(await env.KV.get('seen')) } }", bindings: { KV: second.bindings.KV }, onLog() {} });
  t.after(() => reader.dispose());
  assert.equal(await (await dispatch(reader, "http://localhost/")).text(), "yes");
});

test("loadProject: services given by name are bound to that worker or handler", async (t) => {
  const dir = copy(t, "full-json");
  const project = await loadProject(dir, { persistTo: false, services: { "auth-worker": (request) => new Response(`auth saw ${new URL(request.url).pathname}`) } });
  assert.ok(!project.warnings.some((w) => /auth-worker/.test(w)));
  const worker = await createWorker({ script: "export default { fetch(r, env) { return env.AUTH.fetch('http://auth/check') } }", bindings: { AUTH: project.bindings.AUTH }, onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "auth saw /check");
});
