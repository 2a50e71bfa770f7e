// A real PostgreSQL server (Debian's postgresql package) driven by `pg` and by `postgres`
// (postgres.js) inside a worker bundled by workerbox/project: pg picks pg-cloudflare and
// postgres.js its Workers build under the `workerd` condition, both talking through connect()
// (and startTls()) from cloudflare:sockets. The test makes a cluster with initdb in a temp dir, starts it
// on a free loopback port (as the `postgres` user when run as root: postgres refuses root), and
// stops and removes it afterwards. Without the server binaries the tests are skipped, saying so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadProject, startWorker } from "workerbox/project";
import { dispatch, createWorker, hyperdrive } from "workerbox";
import { POSTGRES_MISSING, startPostgres as startServer } from "../scripts/postgres-server.mjs";

import { scaled } from "./child-node.mjs";
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");

const SKIP = POSTGRES_MISSING;
if (SKIP) console.log(`# skipped: ${SKIP}`);

/** A running cluster (TLS with the self-signed test certificate) until `after` hooks run. */
async function startPostgres({ after }) {
  const tls = { cert: path.join(ROOT, "__test__", "fixtures", "sockets", "cert.pem"), key: path.join(ROOT, "__test__", "fixtures", "sockets", "key.pem") };
  const server = await startServer({ tls });
  after(server.stop);
  return server;
}

const WORKER = `import pg from "pg";
export default {
  async fetch(request, env) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const out = {};
      await client.query("CREATE TABLE items (id serial PRIMARY KEY, name text UNIQUE NOT NULL, qty int)");
      await client.query("INSERT INTO items (name, qty) VALUES ($1, $2), ($3, $4)", ["apple", 3, "pear", 5]);
      out.selected = (await client.query("SELECT name, qty FROM items WHERE qty > $1 ORDER BY name", [1])).rows;
      await client.query("BEGIN");
      await client.query("INSERT INTO items (name, qty) VALUES ($1, $2)", ["plum", 9]);
      await client.query("ROLLBACK");
      out.afterRollback = (await client.query("SELECT count(*)::int AS n FROM items")).rows[0].n;
      try {
        await client.query("INSERT INTO items (name, qty) VALUES ($1, $2)", ["apple", 1]);
      } catch (error) {
        out.error = { code: error.code, constraint: error.constraint, message: error.message };
      }
      const big = (await client.query("SELECT string_agg(md5(i::text), '') AS s FROM generate_series(1, 20000) AS i")).rows[0].s;
      out.bigLength = big.length;
      out.version = (await client.query("SHOW server_version")).rows[0].server_version;
      // LISTEN / NOTIFY: the notification arrives on the same connection between queries.
      const heard = new Promise((resolve) => client.once("notification", (message) => resolve(message.channel + ":" + message.payload)));
      await client.query("LISTEN pg_channel");
      await client.query("SELECT pg_notify('pg_channel', $1)", ["ping"]);
      out.heard = await Promise.race([heard, new Promise((resolve) => setTimeout(() => resolve("nothing in 5 s"), 5000))]);
      out.ssl = (await client.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")).rows[0].ssl;
      return Response.json(out);
    } finally {
      await client.end();
    }
  },
};
`;

// One cluster for the file, stopped and removed after the last test.
let server;
const cleanups = [];
before(async () => {
  if (!SKIP) server = await startPostgres({ after: (fn) => cleanups.push(fn) });
});
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A temp project around WORKER whose node_modules is this repository's; returns its folder. */
function project(t, config) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-pg-app-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER);
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "junction");
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "pg-app", main: "src/index.js", compatibility_date: "2025-01-01", compatibility_flags: ["nodejs_compat"], ...config }));
  return dir;
}

/** Loads the project, runs WORKER once and checks what it did against the server. */
async function runQueries(t, dir, { ssl = false } = {}) {
  const loaded = await loadProject(dir, { persistTo: false });
  assert.match(loaded.options.script, /from "cloudflare:sockets"|import\("cloudflare:sockets"\)/, "pg-cloudflare (not its empty stub) is bundled");
  const logs = [];
  const worker = await startWorker(loaded, { onLog: (entry) => logs.push(entry) });
  t.after(() => worker.dispose());
  const response = await dispatch(worker, "http://localhost/");
  const body = await response.text();
  assert.equal(response.status, 200, `${body}\n${JSON.stringify(logs)}`);
  const out = JSON.parse(body);
  assert.deepEqual(out.selected, [{ name: "apple", qty: 3 }, { name: "pear", qty: 5 }]);
  assert.equal(out.afterRollback, 2);
  assert.equal(out.error.code, "23505");
  assert.equal(out.error.constraint, "items_name_key");
  assert.match(out.error.message, /duplicate key value violates unique constraint "items_name_key"/);
  assert.equal(out.bigLength, 20000 * 32);
  assert.match(out.version, /^\d+/);
  assert.equal(out.heard, "pg_channel:ping");
  assert.equal(out.ssl, ssl);
  return loaded;
}

test("pg in a worker runs queries against a real PostgreSQL through cloudflare:sockets", { skip: SKIP }, async (t) => {
  await runQueries(t, project(t, { vars: { DATABASE_URL: server.url } }));
});

test("Hyperdrive: localConnectionString, and CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_<BINDING> over it, give env.DB's parts; pg connects with env.DB.connectionString", { skip: SKIP }, async (t) => {
  const worker = WORKER.replace("env.DATABASE_URL", "env.DB.connectionString").replace("CREATE TABLE items", "DROP TABLE IF EXISTS items; CREATE TABLE items");
  const dir = project(t, { hyperdrive: [{ binding: "DB", id: "0123456789abcdef", localConnectionString: "postgres://nobody:secret@127.0.0.1:1/missing" }] });
  fs.writeFileSync(path.join(dir, "src", "index.js"), worker);
  const variable = "CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_DB";
  t.after(() => delete process.env[variable]);
  const fromConfig = await loadProject(dir, { persistTo: false });
  assert.deepEqual({ ...fromConfig.options.bindings?.DB }, { connectionString: "postgres://nobody:secret@127.0.0.1:1/missing", host: "127.0.0.1", port: 1, user: "nobody", password: "secret", database: "missing" });
  process.env[variable] = server.url;
  await runQueries(t, dir);
});

test("Hyperdrive in createWorker: hyperdrive(url) in bindings gives env.DB's parts as in production", { skip: SKIP }, async (t) => {
  const worker = await createWorker({ script: "export default { fetch: (request, env) => Response.json(env.DB) }", bindings: { DB: hyperdrive(`${server.url}?sslmode=disable`) }, onLog() {} });
  t.after(() => worker.dispose());
  const db = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(db, { connectionString: `${server.url}?sslmode=disable`, host: "127.0.0.1", port: server.port, user: "postgres", password: "", database: "postgres" });
  assert.throws(() => hyperdrive("redis://127.0.0.1"), /"redis:" is not a Hyperdrive scheme/);
});

test("pg with sslmode=require upgrades with startTls() and verifies the server against NODE_EXTRA_CA_CERTS; untrusted, the error reaches the worker", { skip: SKIP }, async (t) => {
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  t.after(() => (previous === undefined ? delete process.env.NODE_EXTRA_CA_CERTS : (process.env.NODE_EXTRA_CA_CERTS = previous)));
  const dir = project(t, { vars: { DATABASE_URL: `${server.url}?sslmode=require` } });
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER.replace("CREATE TABLE items", "DROP TABLE IF EXISTS items; CREATE TABLE items"));
  delete process.env.NODE_EXTRA_CA_CERTS;
  const loaded = await loadProject(dir, { persistTo: false });
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  // The worker does not catch it: dispatch() rejects with the worker's error.
  await assert.rejects(dispatch(worker, "http://localhost/"), /the TLS handshake with 127\.0\.0\.1 failed: invalid peer certificate: UnknownIssuer/);
  process.env.NODE_EXTRA_CA_CERTS = path.join(ROOT, "__test__", "fixtures", "sockets", "cert.pem");
  await runQueries(t, dir, { ssl: true });
});

// postgres.js (the `postgres` package) picks its Workers build under the `workerd` condition,
// which talks through connect() and startTls() from cloudflare:sockets.
const POSTGRES_JS_WORKER = `import postgres from "postgres";
export default {
  async fetch(request, env) {
    const sql = postgres(env.DB.connectionString, { max: 2, fetch_types: false, onnotice() {} });
    try {
      const out = {};
      await sql\`DROP TABLE IF EXISTS pjs_items\`;
      await sql\`CREATE TABLE pjs_items (id serial PRIMARY KEY, name text UNIQUE NOT NULL, qty int)\`;
      await sql\`INSERT INTO pjs_items \${sql([{ name: "apple", qty: 3 }, { name: "pear", qty: 5 }])}\`;
      out.selected = [...(await sql\`SELECT name, qty FROM pjs_items WHERE qty > \${1} ORDER BY name\`)];
      out.rolledBack = await sql.begin(async (tx) => {
        await tx\`INSERT INTO pjs_items (name, qty) VALUES (\${"plum"}, \${9})\`;
        throw new Error("undo");
      }).catch((error) => error.message);
      out.afterRollback = (await sql\`SELECT count(*)::int AS n FROM pjs_items\`)[0].n;
      try {
        await sql\`INSERT INTO pjs_items (name, qty) VALUES (\${"apple"}, \${1})\`;
      } catch (error) {
        out.error = { code: error.code, constraint: error.constraint_name, message: error.message };
      }
      // A cursor: rows come in batches of 100 while the query runs.
      out.batches = [];
      for await (const rows of sql\`SELECT i FROM generate_series(1, 1000) AS i\`.cursor(100)) out.batches.push(rows.length);
      // LISTEN / NOTIFY on a second connection.
      let heard;
      const listening = new Promise((resolve) => sql.listen("pjs_channel", (payload) => resolve((heard = payload))));
      await new Promise((resolve) => setTimeout(resolve, 100));
      await sql.notify("pjs_channel", "hello there");
      await Promise.race([listening, new Promise((resolve) => setTimeout(resolve, 5000))]);
      out.heard = heard;
      out.ssl = (await sql\`SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()\`)[0].ssl;
      return Response.json(out);
    } finally {
      await sql.end({ timeout: 5 });
    }
  },
};
`;

/** Runs POSTGRES_JS_WORKER against `connectionString` through a Hyperdrive binding and checks it. */
async function runPostgresJs(t, connectionString, { ssl }) {
  const dir = project(t, { hyperdrive: [{ binding: "DB", id: "0123456789abcdef", localConnectionString: connectionString }] });
  fs.writeFileSync(path.join(dir, "src", "index.js"), POSTGRES_JS_WORKER);
  const loaded = await loadProject(dir, { persistTo: false });
  assert.match(loaded.options.script, /cloudflare:sockets/, "postgres.js's Workers build is bundled");
  const logs = [];
  const worker = await startWorker(loaded, { onLog: (entry) => logs.push(entry) });
  t.after(() => worker.dispose());
  const response = await dispatch(worker, "http://localhost/");
  const body = await response.text();
  assert.equal(response.status, 200, `${body}\n${JSON.stringify(logs)}`);
  const out = JSON.parse(body);
  assert.deepEqual(out.selected, [{ name: "apple", qty: 3 }, { name: "pear", qty: 5 }]);
  assert.equal(out.rolledBack, "undo");
  assert.equal(out.afterRollback, 2);
  assert.deepEqual(out.error, { code: "23505", constraint: "pjs_items_name_key", message: 'duplicate key value violates unique constraint "pjs_items_name_key"' });
  assert.deepEqual(out.batches, Array(10).fill(100));
  assert.equal(out.heard, "hello there");
  assert.equal(out.ssl, ssl);
}

test("postgres.js in a worker through Hyperdrive: parameters, a rolled-back transaction, a unique violation's code, a cursor, LISTEN/NOTIFY", { skip: SKIP, timeout: scaled(120_000) }, async (t) => {
  await runPostgresJs(t, server.url, { ssl: false });
});

test("postgres.js with sslmode=require upgrades to TLS and trusts the test CA from NODE_EXTRA_CA_CERTS", { skip: SKIP, timeout: scaled(120_000) }, async (t) => {
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  t.after(() => (previous === undefined ? delete process.env.NODE_EXTRA_CA_CERTS : (process.env.NODE_EXTRA_CA_CERTS = previous)));
  process.env.NODE_EXTRA_CA_CERTS = path.join(ROOT, "__test__", "fixtures", "sockets", "cert.pem");
  await runPostgresJs(t, `${server.url}?sslmode=require`, { ssl: true });
});

test("pg over node:net (a net.Socket given as its stream) runs the same queries", { skip: SKIP, timeout: scaled(120_000) }, async (t) => {
  // pg picks pg-cloudflare in a worker; its `stream` option makes it use node:net instead (plain
  // only: pg upgrades a non-Cloudflare stream in a worker with pg-cloudflare's startTls()).
  const worker = `import net from "node:net";\n${WORKER}`
    .replace("new pg.Client({ connectionString: env.DATABASE_URL })", "new pg.Client({ connectionString: env.DATABASE_URL, stream: () => new net.Socket() })")
    .replace("CREATE TABLE items", "DROP TABLE IF EXISTS items; CREATE TABLE items");
  const dir = project(t, { vars: { DATABASE_URL: server.url } });
  fs.writeFileSync(path.join(dir, "src", "index.js"), worker);
  await runQueries(t, dir);
});
