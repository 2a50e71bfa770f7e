// Benchmark: a `SELECT 1` round trip through node-postgres (`pg`) in a worker — its socket is
// connect() from cloudflare:sockets, bundled as `workerbox dev` bundles it (pg-cloudflare) — beside
// the same driver in Node on node:net, against the same PostgreSQL server in the same run. What
// the worker adds over Node is the hop between the isolate and the socket task on the worker's
// scheduler thread, each way. Also: a whole connection per request (connect, SELECT 1, end),
// as a worker without a pool does it. The server is started here from Debian's postgresql
// binaries (initdb in a temp dir, a free loopback port, as the `postgres` user when run as root)
// and removed afterwards. Prints one JSON object on stdout; progress on stderr.
//   node bench/sockets.mjs [--quick]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { postgresBin, startPostgres } from "../scripts/postgres-server.mjs";

const require = createRequire(import.meta.url);
const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 5;
const QUERIES = quick ? 500 : 2000; // per round and side
const CONNECTS = quick ? 20 : 100; // per round and side
const progress = (...parts) => console.error("[bench]", ...parts);
console.log = console.info = console.debug = console.error; // keep stdout for the JSON

/** ms samples → µs summary. */
function summary(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q) => s[Math.max(0, Math.ceil(q * s.length) - 1)];
  const us = (ms) => Math.round(ms * 10000) / 10;
  return { unit: "µs", n: s.length, p50: us(at(0.5)), p99: us(at(0.99)), mean: us(s.reduce((a, b) => a + b, 0) / s.length) };
}

// The worker times its own queries with performance.now(), as the Node side does, so neither
// side's number includes a dispatch; `/connects` times whole connections.
const WORKER = `import pg from "pg";
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n"));
    const samples = [];
    if (url.pathname === "/connects") {
      for (let i = 0; i < n; i++) {
        const start = performance.now();
        const client = new pg.Client({ connectionString: env.DB.connectionString });
        await client.connect();
        await client.query("SELECT 1");
        await client.end();
        samples.push(performance.now() - start);
      }
      return Response.json(samples);
    }
    const client = new pg.Client({ connectionString: env.DB.connectionString });
    await client.connect();
    try {
      for (let i = 0; i < 50; i++) await client.query("SELECT 1");
      for (let i = 0; i < n; i++) {
        const start = performance.now();
        const { rows } = await client.query("SELECT 1 AS one");
        samples.push(performance.now() - start);
        if (rows[0].one !== 1) throw new Error("unexpected answer " + JSON.stringify(rows));
      }
    } finally {
      await client.end();
    }
    return Response.json(samples);
  },
};
`;

async function nodeQueries(pg, url, n) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples = [];
  try {
    for (let i = 0; i < 50; i++) await client.query("SELECT 1");
    for (let i = 0; i < n; i++) {
      const start = performance.now();
      const { rows } = await client.query("SELECT 1 AS one");
      samples.push(performance.now() - start);
      if (rows[0].one !== 1) throw new Error(`unexpected answer ${JSON.stringify(rows)}`);
    }
  } finally {
    await client.end();
  }
  return samples;
}

async function nodeConnects(pg, url, n) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query("SELECT 1");
    await client.end();
    samples.push(performance.now() - start);
  }
  return samples;
}

const pgVersion = JSON.parse(fs.readFileSync(require.resolve("pg/package.json"), "utf8")).version;
const result = { machine: { node: process.version, cpus: os.cpus().length, platform: `${process.platform}-${process.arch}` }, quick, driver: `pg ${pgVersion}` };
const bin = postgresBin();
if (bin === null) {
  result.workerbox = { error: "PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install -y postgresql)" };
  result.node = result.workerbox;
  process.stdout.write(JSON.stringify(result, null, 2) + "\n");
  process.exit(0);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-bench-sockets-"));
let server;
let worker;
try {
  server = await startPostgres({ bin });
  result.server = `PostgreSQL ${server.version} on loopback, fsync off`;
  progress("postgres up", server.url);
  // The worker is bundled as `workerbox dev` would (pg picks pg-cloudflare, i.e. connect()).
  const app = path.join(dir, "app");
  fs.mkdirSync(path.join(app, "src"), { recursive: true });
  fs.writeFileSync(path.join(app, "src", "index.js"), WORKER);
  fs.symlinkSync(path.join(root, "node_modules"), path.join(app, "node_modules"), "junction");
  fs.writeFileSync(path.join(app, "wrangler.jsonc"), JSON.stringify({ name: "pg-bench", main: "src/index.js", compatibility_date: "2025-01-01", compatibility_flags: ["nodejs_compat"], hyperdrive: [{ binding: "DB", id: "bench", localConnectionString: server.url }] }));
  const { loadProject, startWorker } = require("../lib/project/index.js");
  const { dispatch } = require("..");
  const project = await loadProject(app, { persistTo: false, onLog() {} });
  worker = await startWorker(project, { pool: false, onLog() {} });
  const inWorker = async (pathname, n) => {
    const response = await dispatch(worker, `http://localhost${pathname}?n=${n}`);
    const body = await response.text();
    if (response.status !== 200) throw new Error(`the worker answered ${response.status}: ${body.slice(0, 300)}`);
    return JSON.parse(body);
  };
  const pg = require("pg");
  // Rounds alternate the sides so that both see the same machine load.
  const samples = { workerbox: [], node: [], workerboxConnect: [], nodeConnect: [] };
  for (let round = 0; round < ROUNDS; round++) {
    samples.workerbox.push(...(await inWorker("/", QUERIES)));
    samples.node.push(...(await nodeQueries(pg, server.url, QUERIES)));
    samples.workerboxConnect.push(...(await inWorker("/connects", CONNECTS)));
    samples.nodeConnect.push(...(await nodeConnects(pg, server.url, CONNECTS)));
    progress(`round ${round + 1}/${ROUNDS}`);
  }
  result.workerbox = { selectOne: summary(samples.workerbox), connectSelectEnd: summary(samples.workerboxConnect) };
  result.node = { selectOne: summary(samples.node), connectSelectEnd: summary(samples.nodeConnect) };
  result.overNode = { selectOneP50Us: Math.round((result.workerbox.selectOne.p50 - result.node.selectOne.p50) * 10) / 10 };
} catch (error) {
  result.workerbox ??= { error: String(error?.stack ?? error) };
} finally {
  await worker?.dispose();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(result, null, 2) + "\n");
