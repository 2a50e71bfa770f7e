// mysql2 in a worker (bundled by workerbox/project, nodejs_compat) against a real MariaDB started
// here from Debian's mariadb-server package: mysql2 talks through node:net, which runs on
// cloudflare:sockets (and, with `ssl`, node:tls's upgrade of it). The test makes a data directory
// with mariadb-install-db in a temp dir, starts mariadbd on a free loopback port (TLS with the
// test certificate on offer), and stops it and removes the directory afterwards. Without the
// server binaries the tests are skipped, saying so.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { loadProject, startWorker } from "workerbox/project";
import { dispatch } from "workerbox";
import { freePort } from "./helpers.mjs";
import { trustTestCertificate } from "./socket-servers.mjs";

import { scaled } from "./child-node.mjs";
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const FIXTURES = path.join(ROOT, "__test__", "fixtures", "sockets");
const require = createRequire(import.meta.url);

/** The path of `name` on PATH (or in /usr/sbin, where Debian puts mariadbd), or null. */
function binary(name) {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin"]) {
    if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}
const MARIADBD = binary("mariadbd");
const INSTALL_DB = binary("mariadb-install-db");
const SKIP = MARIADBD && INSTALL_DB ? false : "MariaDB server binaries (mariadbd, mariadb-install-db) not found (apt-get install -y mariadb-server)";
if (SKIP) console.log(`# skipped: ${SKIP}`);

/** A running server until the returned stop() runs: `{ port, stop }`. */
async function startMariaDB() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-mariadb-"));
  const data = path.join(dir, "data");
  // mariadbd refuses to run as root unless told to.
  const user = process.getuid?.() === 0 ? ["--user=root"] : [];
  try {
    execFileSync(INSTALL_DB, ["--no-defaults", `--datadir=${data}`, ...user, "--auth-root-authentication-method=normal", "--skip-test-db"], { stdio: "ignore", timeout: 60_000 });
  } catch (error) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const port = await freePort();
  // TLS with the self-signed test certificate, for clients that ask for it.
  const tls = [`--ssl-cert=${path.join(FIXTURES, "cert.pem")}`, `--ssl-key=${path.join(FIXTURES, "key.pem")}`];
  const server = spawn(MARIADBD, ["--no-defaults", ...tls, `--datadir=${data}`, ...user, `--port=${port}`, "--bind-address=127.0.0.1", `--socket=${path.join(dir, "sock")}`, `--pid-file=${path.join(dir, "pid")}`, "--skip-name-resolve", "--skip-log-bin", "--innodb-buffer-pool-size=16M"], { stdio: ["ignore", "ignore", "pipe"] });
  const exited = new Promise((resolve) => server.on("exit", resolve));
  const stop = async () => {
    server.kill("SIGTERM");
    const timer = setTimeout(() => server.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
    server.stderr.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  let log = "";
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`mariadbd did not start in 30 s:\n${log}`)), 30_000);
      server.stderr.on("data", (chunk) => {
        log += chunk;
        if (log.includes("ready for connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.on("exit", (code) => reject(new Error(`mariadbd exited (${code}):\n${log}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

const WORKER = `import mysql from "mysql2/promise";
export default {
  async fetch(request, env) {
    const { host, port, user, password, database } = env.DB;
    // disableEval: mysql2 builds its row parsers with new Function() otherwise, which Workers forbid.
    const ssl = env.SSL ? {} : undefined;
    const pool = mysql.createPool({ host, port, user, password, database, connectionLimit: 2, disableEval: true, ssl });
    try {
      const out = {};
      await pool.query("DROP TABLE IF EXISTS items");
      await pool.query("CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) UNIQUE NOT NULL, qty INT)");
      await pool.query("INSERT INTO items (name, qty) VALUES (?, ?), (?, ?)", ["apple", 3, "pear", 5]);
      // A prepared statement (COM_STMT_PREPARE / EXECUTE), run twice.
      out.selected = (await pool.execute("SELECT name, qty FROM items WHERE qty > ? ORDER BY name", [1]))[0];
      out.again = (await pool.execute("SELECT name, qty FROM items WHERE qty > ? ORDER BY name", [4]))[0];
      // The pool's two connections at once.
      const both = await Promise.all([0, 1].map(() => pool.query("SELECT SLEEP(0.2) AS s, CONNECTION_ID() AS id")));
      out.connections = new Set(both.map(([rows]) => rows[0].id)).size;
      const conn = await pool.getConnection();
      await conn.beginTransaction();
      await conn.execute("INSERT INTO items (name, qty) VALUES (?, ?)", ["plum", 9]);
      await conn.rollback();
      conn.release();
      out.afterRollback = (await pool.query("SELECT COUNT(*) AS n FROM items"))[0][0].n;
      try {
        await pool.execute("INSERT INTO items (name, qty) VALUES (?, ?)", ["apple", 1]);
      } catch (error) {
        out.error = { code: error.code, errno: error.errno, message: error.message };
      }
      out.bigLength = (await pool.query("SELECT REPEAT('x', 2000000) AS s"))[0][0].s.length;
      out.version = (await pool.query("SELECT VERSION() AS v"))[0][0].v;
      out.tls = (await pool.query("SHOW SESSION STATUS LIKE 'Ssl_version'"))[0][0]?.Value ?? "";
      return Response.json(out);
    } finally {
      await pool.end();
    }
  },
};
`;

let server;
before(async () => {
  if (!SKIP) server = await startMariaDB();
});
after(async () => {
  await server?.stop();
});

/** Runs WORKER against the server's database `app` through a Hyperdrive binding; returns its output. */
async function runWorker(t, vars = {}, { expectError = null } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-mysql-app-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER);
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "junction");
  const hyperdrive = [{ binding: "DB", id: "0123456789abcdef", localConnectionString: `mysql://root@127.0.0.1:${server.port}/app` }];
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "mysql-app", main: "src/index.js", compatibility_date: "2025-01-01", compatibility_flags: ["nodejs_compat"], hyperdrive, vars }));
  const loaded = await loadProject(dir, { persistTo: false });
  const logs = [];
  const worker = await startWorker(loaded, { onLog: (entry) => logs.push(entry) });
  t.after(() => worker.dispose());
  if (expectError) {
    // The worker does not catch it: dispatch() rejects with the worker's error.
    await assert.rejects(dispatch(worker, "http://localhost/"), expectError);
    return null;
  }
  const response = await dispatch(worker, "http://localhost/");
  const body = await response.text();
  assert.equal(response.status, 200, `${body}\n${JSON.stringify(logs)}`);
  const out = JSON.parse(body);
  assert.deepEqual(out.selected, [{ name: "apple", qty: 3 }, { name: "pear", qty: 5 }]);
  assert.deepEqual(out.again, [{ name: "pear", qty: 5 }]);
  assert.equal(out.connections, 2);
  assert.equal(out.afterRollback, 2);
  assert.equal(out.error.code, "ER_DUP_ENTRY");
  assert.equal(out.error.errno, 1062);
  assert.match(out.error.message, /Duplicate entry 'apple'/);
  assert.equal(out.bigLength, 2_000_000);
  assert.match(out.version, /MariaDB/);
  return out;
}

test("mysql2 in a worker, through Hyperdrive's env.DB: a pool (two connections at once), a prepared statement, a rolled-back transaction, a duplicate key's error, a 2 MB value", { skip: SKIP, timeout: scaled(120_000) }, async (t) => {
  // A fresh database for the worker, made from the host.
  const mysql = require("mysql2/promise");
  const admin = await mysql.createConnection({ host: "127.0.0.1", port: server.port, user: "root" });
  await admin.query("CREATE DATABASE app");
  await admin.end();
  const out = await runWorker(t);
  assert.equal(out.tls, "", "no TLS unless asked for");
});

test("mysql2 with ssl upgrades its connections with tls.connect({ socket }) and verifies the server against NODE_EXTRA_CA_CERTS", { skip: SKIP, timeout: scaled(120_000) }, async (t) => {
  trustTestCertificate(t, false);
  await runWorker(t, { SSL: "1" }, { expectError: /invalid peer certificate: UnknownIssuer/ });
  process.env.NODE_EXTRA_CA_CERTS = path.join(FIXTURES, "cert.pem");
  const out = await runWorker(t, { SSL: "1" });
  assert.match(out.tls, /^TLSv1\.[23]$/);
});
