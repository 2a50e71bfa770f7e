// Hyperdrive from every place a worker runs — createWorker, `workerbox dev` (startDevServer),
// getPlatformProxy, workerbox/test's useProject and workerbox/vitest — each pointed at a database
// of its own on one real PostgreSQL server (Debian's postgresql package: a cluster made with
// initdb in a temp dir, on a free loopback port, as the `postgres` user when run as root, stopped
// and removed after the last test). The worker's driver is `pg` (pg-cloudflare: connect() from
// cloudflare:sockets); each test checks which database answered. Without the server binaries the
// tests are skipped, saying so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { loadProject, startDevServer, getPlatformProxy } from "workerbox/project";
import { useProject } from "workerbox/test";
import { dispatch, createWorker, hyperdrive } from "workerbox";
import { runVitest } from "./helpers.mjs";
import { POSTGRES_MISSING, startPostgres } from "../scripts/postgres-server.mjs";

import { scaled } from "./child-node.mjs";
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

const SKIP = POSTGRES_MISSING;
if (SKIP) console.log(`# skipped: ${SKIP}`);

let base; // postgresql://postgres@127.0.0.1:<port>
const cleanups = [];
before(async () => {
  if (SKIP) return;
  const server = await startPostgres();
  cleanups.push(server.stop);
  base = server.base;
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A database of the test's own (made from Node with pg); returns its connection string. */
async function ownDatabase(name) {
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return `${base}/${name}`;
}

const WORKER = `import pg from "pg";
export default {
  async fetch(request, env) {
    const client = new pg.Client({ connectionString: env.DB.connectionString });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT current_database() AS database, $1::int + 1 AS answer", [41]);
      return Response.json(rows[0]);
    } finally {
      await client.end();
    }
  },
};
`;

/** A temp project around WORKER in examples/ (git-ignored there; node_modules: this repository's) whose DB points at `url`. */
function project(t, url, files = {}) {
  const dir = fs.mkdtempSync(path.join(ROOT, "examples", ".tmp-vitest-hyperdrive-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER);
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "hyperdrive-app", main: "src/index.js", compatibility_date: "2025-01-01", compatibility_flags: ["nodejs_compat"], hyperdrive: [{ binding: "DB", id: "0123456789abcdef", localConnectionString: url }] }));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

test("createWorker: hyperdrive(url) in bindings, the bundled pg queries that database", { skip: SKIP, timeout: scaled(60_000) }, async (t) => {
  const url = await ownDatabase("from_create_worker");
  const loaded = await loadProject(project(t, `${base}/postgres`), { persistTo: false });
  const worker = await createWorker({ ...loaded.options, bindings: { ...loaded.options.bindings, DB: hyperdrive(url) }, onLog() {} });
  t.after(() => worker.dispose());
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { database: "from_create_worker", answer: 42 });
});

test("workerbox dev: the wrangler file's hyperdrive entry, over HTTP", { skip: SKIP, timeout: scaled(60_000) }, async (t) => {
  const url = await ownDatabase("from_dev");
  const server = await startDevServer(project(t, url), { port: 0, persistTo: false, color: false, log() {} });
  t.after(() => server.close());
  const response = await fetch(server.url);
  assert.deepEqual(await response.json(), { database: "from_dev", answer: 42 });
});

test("getPlatformProxy: env.DB has the connection's parts, and Node's pg connects with them", { skip: SKIP, timeout: scaled(60_000) }, async (t) => {
  const url = await ownDatabase("from_proxy");
  const proxy = await getPlatformProxy({ configPath: project(t, url), persist: false });
  t.after(() => proxy.dispose());
  const { connectionString, host, port, user, database } = proxy.env.DB;
  assert.deepEqual({ connectionString, host, user, database }, { connectionString: url, host: "127.0.0.1", user: "postgres", database: "from_proxy" });
  const client = new pg.Client({ host, port, user, database });
  await client.connect();
  t.after(() => client.end());
  assert.equal((await client.query("SELECT current_database() AS d")).rows[0].d, "from_proxy");
});

test("workerbox/test: useProject points Hyperdrive at the test's own database (vars over the wrangler file's entry)", { skip: SKIP, timeout: scaled(60_000) }, async (t) => {
  const url = await ownDatabase("from_use_project");
  const app = await useProject(t, project(t, `${base}/postgres`), { vars: { DB: hyperdrive(url) } });
  assert.deepEqual(await (await app.fetch("/")).json(), { database: "from_use_project", answer: 42 });
  assert.equal(app.env.DB.database, "from_use_project");
});

test("workerbox/vitest: a test file queries through env.DB from the wrangler file, and through SELF", { skip: SKIP, timeout: scaled(240_000) }, async (t) => {
  const url = await ownDatabase("from_vitest");
  const dir = project(t, url, {
    "vitest.config.mjs": `import { cloudflareTest } from "workerbox/vitest";\nexport default { plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.jsonc" } })] };\n`,
    "test/db.test.js": [
      `import { env, SELF } from "cloudflare:test";`,
      `import { it, expect } from "vitest";`,
      `import pg from "pg";`,
      `it("queries env.DB", async () => {`,
      `  const client = new pg.Client({ connectionString: env.DB.connectionString });`,
      `  await client.connect();`,
      `  const { rows } = await client.query("SELECT current_database() AS d");`,
      `  await new Promise((resolve) => setTimeout(resolve, 10));`,
      `  const again = await client.query("SELECT 2 AS two");`,
      `  await client.end();`,
      `  expect([rows[0].d, again.rows[0].two]).toEqual(["from_vitest", 2]);`,
      `});`,
      `it("queries through the worker", async () => {`,
      `  expect(await (await SELF.fetch("http://localhost/")).json()).toEqual({ database: "from_vitest", answer: 42 });`,
      `});`,
    ].join("\n"),
  });
  const { code, report, output } = await runVitest(dir);
  assert.equal(code, 0, output);
  assert.equal(report.numPassedTests, 2, output);
});
