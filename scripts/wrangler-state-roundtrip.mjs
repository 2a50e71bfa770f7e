#!/usr/bin/env node
// Round trip of local state between wrangler and workerbox on one project: wrangler writes D1,
// KV and R2 with `--local` and workerbox reads them, then workerbox writes D1 rows, applies a
// migration, writes KV keys and R2 objects, and wrangler reads them back; then a Durable Object
// (KV and SQL storage, its alarm) is written under `wrangler dev`, read and written by the same
// worker under workerbox, and read again under `wrangler dev`. All on wrangler's own files
// (.wrangler/state/v3). Prints every command and its output; exits 1 on the first mismatch.
//   node scripts/wrangler-state-roundtrip.mjs [--node=/path/to/node22] [--wrangler=path/to/wrangler.js]
// wrangler comes from bench/.tools (bench/lib.mjs installs it from npm on first use) and needs
// Node 22.12+: --node names one when this Node is older. The project is a temporary folder.
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { wranglerPath, benchNode, devEnv, freePort } from "../bench/lib.mjs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { loadProject, createWorker, dispatch } = require("../index.js");

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const workerbox = path.join(root, "bin", "workerbox.js");
const wrangler = wranglerPath();
const node = benchNode();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-roundtrip-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
fs.mkdirSync(path.join(dir, "src"));
// A Durable Object whose storage the two tools take turns on.
fs.writeFileSync(
  path.join(dir, "src", "index.js"),
  `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    const s = this.ctx.storage;
    s.sql.exec("CREATE TABLE IF NOT EXISTS visits (who TEXT)");
    if (url.pathname === "/write") {
      const who = url.searchParams.get("who");
      await s.put("last", { who });
      s.sql.exec("INSERT INTO visits VALUES (?)", who);
      await s.setAlarm(Number(url.searchParams.get("alarm")));
    }
    return Response.json({ last: (await s.get("last")) ?? null, visits: s.sql.exec("SELECT who FROM visits ORDER BY rowid").toArray().map((r) => r.who), alarm: await s.getAlarm(), id: this.ctx.id.toString() });
  }
  alarm() {}
}
export default { fetch(request, env) { return env.NS.get(env.NS.idFromName("room")).fetch(request); } };
`,
);
fs.writeFileSync(
  path.join(dir, "wrangler.json"),
  JSON.stringify({
    name: "roundtrip",
    main: "src/index.js",
    compatibility_date: "2025-01-01",
    d1_databases: [{ binding: "DB", database_name: "my-db", database_id: "my-d1-id" }],
    kv_namespaces: [{ binding: "KV", id: "kv-ns-id" }],
    r2_buckets: [{ binding: "R2", bucket_name: "bucket1" }],
    durable_objects: { bindings: [{ name: "NS", class_name: "Counter" }] },
    migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }],
  }),
);

function run(tool, args, input) {
  const [program, script] = tool === "wrangler" ? [node, wrangler] : [process.execPath, workerbox];
  console.log(`\n$ ${tool} ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ")}`);
  const out = execFileSync(program, [script, ...args], { cwd: dir, env: devEnv(), encoding: "utf8", input: input ?? "", timeout: 120_000, stdio: ["pipe", "pipe", "pipe"] });
  console.log(out.trimEnd());
  return out;
}

function expect(what, actual, wanted) {
  if (JSON.stringify(actual) !== JSON.stringify(wanted)) {
    console.error(`\nMISMATCH (${what}): got ${JSON.stringify(actual)}, wanted ${JSON.stringify(wanted)}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

const rows = (out) => JSON.parse(out.slice(out.indexOf("["))).flatMap((r) => r.results);

// wrangler writes, workerbox reads.
run("wrangler", ["d1", "execute", "my-db", "--local", "--command", "CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'from wrangler')"]);
run("wrangler", ["kv", "key", "put", "--binding", "KV", "--local", "greeting", "hello from wrangler"]);
fs.writeFileSync(path.join(dir, "upload.txt"), "an object from wrangler");
run("wrangler", ["r2", "object", "put", "bucket1/docs/a.txt", "--local", "--file", "upload.txt"]);
expect("workerbox reads wrangler's D1 rows", rows(run("workerbox", ["d1", "execute", "my-db", "--local", "--json", "--command", "SELECT * FROM t"])), [{ a: 1, b: "from wrangler" }]);
expect("workerbox reads wrangler's KV value", run("workerbox", ["kv", "key", "get", "--binding", "KV", "--local", "greeting"]), "hello from wrangler");
expect("workerbox reads wrangler's R2 object", run("workerbox", ["r2", "object", "get", "bucket1/docs/a.txt", "--local", "--pipe"]), "an object from wrangler");

// workerbox writes, wrangler reads.
run("workerbox", ["d1", "execute", "DB", "--local", "--command", "INSERT INTO t VALUES (2, 'from workerbox')"]);
fs.mkdirSync(path.join(dir, "migrations"));
fs.writeFileSync(path.join(dir, "migrations", "0001_notes.sql"), "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);\nINSERT INTO notes (body) VALUES ('seeded by a workerbox migration');\n");
run("workerbox", ["d1", "migrations", "apply", "my-db", "--local"]);
expect("wrangler reads workerbox's D1 rows", rows(run("wrangler", ["d1", "execute", "my-db", "--local", "--json", "--command", "SELECT * FROM t ORDER BY a"])), [{ a: 1, b: "from wrangler" }, { a: 2, b: "from workerbox" }]);
expect("wrangler reads the migration workerbox applied", rows(run("wrangler", ["d1", "execute", "my-db", "--local", "--json", "--command", "SELECT body FROM notes"])), [{ body: "seeded by a workerbox migration" }]);
const listed = run("wrangler", ["d1", "migrations", "list", "my-db", "--local"]);
expect("wrangler sees no pending migration", /No migrations to apply/.test(listed), true);
run("workerbox", ["kv", "key", "put", "--binding", "KV", "--local", "greeting", "hello from workerbox"]);
run("workerbox", ["kv", "key", "put", "--binding", "KV", "--local", "with-meta", "v", "--metadata", '{"by":"workerbox"}']);
expect("wrangler reads workerbox's KV value", run("wrangler", ["kv", "key", "get", "--binding", "KV", "--local", "greeting"]), "hello from workerbox");
const keys = run("wrangler", ["kv", "key", "list", "--binding", "KV", "--local"]);
expect("wrangler lists workerbox's KV keys and metadata", JSON.parse(keys.slice(keys.indexOf("["))), [{ name: "greeting" }, { name: "with-meta", metadata: { by: "workerbox" } }]);
fs.writeFileSync(path.join(dir, "upload2.txt"), "an object from workerbox");
run("workerbox", ["r2", "object", "put", "bucket1/docs/b.txt", "--local", "--file", "upload2.txt", "--content-type", "text/x-workerbox"]);
run("workerbox", ["r2", "object", "put", "bucket1/docs/a.txt", "--local", "--pipe"], "replaced by workerbox");
expect("wrangler reads workerbox's R2 object", run("wrangler", ["r2", "object", "get", "bucket1/docs/b.txt", "--local", "--pipe"]), "an object from workerbox");
expect("wrangler reads the R2 object workerbox replaced", run("wrangler", ["r2", "object", "get", "bucket1/docs/a.txt", "--local", "--pipe"]), "replaced by workerbox");

/** Runs `wrangler dev` on a free port, fetches each of `paths` in turn, stops it; the answers. */
async function underWranglerDev(paths) {
  const port = await freePort();
  console.log(`\n$ wrangler dev --local --port ${port}`);
  const child = spawn(node, [wrangler, "dev", "--local", "--ip", "127.0.0.1", "--port", String(port)], { cwd: dir, env: devEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout.on("data", (chunk) => (log += chunk));
  child.stderr.on("data", (chunk) => (log += chunk));
  try {
    const deadline = Date.now() + 90_000;
    while (!/Ready on/.test(log)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const answers = [];
    for (const p of paths) {
      const answer = await (await fetch(`http://127.0.0.1:${port}${p}`)).json();
      console.log(`GET ${p} -> ${JSON.stringify(answer)}`);
      answers.push(answer);
    }
    return answers;
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid, "SIGINT");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, "SIGKILL");
  }
}

/** The same worker under workerbox (loadProject on the same project); the answers. */
async function underWorkerbox(paths) {
  console.log("\n(workerbox: loadProject + createWorker on the same project)");
  const project = await loadProject(dir);
  for (const note of project.stateNotes) console.log(note);
  const worker = await createWorker({ ...project.options, onLog() {} });
  try {
    const answers = [];
    for (const p of paths) {
      const answer = await (await dispatch(worker, `http://localhost${p}`)).json();
      console.log(`GET ${p} -> ${JSON.stringify(answer)}`);
      answers.push(answer);
    }
    return answers;
  } finally {
    await worker.dispose();
  }
}

const [byWrangler] = await underWranglerDev(["/write?who=wrangler&alarm=1800000000000"]);
const [seen, wrote] = await underWorkerbox(["/read", "/write?who=workerbox&alarm=1900000000000"]);
expect("workerbox's Durable Object id is wrangler's", seen.id, byWrangler.id);
expect("workerbox reads the Durable Object storage and alarm wrangler wrote", [seen.last, seen.visits, seen.alarm], [{ who: "wrangler" }, ["wrangler"], 1_800_000_000_000]);
expect("workerbox writes on top", [wrote.last, wrote.visits, wrote.alarm], [{ who: "workerbox" }, ["wrangler", "workerbox"], 1_900_000_000_000]);
const [again] = await underWranglerDev(["/read"]);
expect("wrangler reads the Durable Object storage and alarm workerbox wrote", [again.id, again.last, again.visits, again.alarm], [byWrangler.id, { who: "workerbox" }, ["wrangler", "workerbox"], 1_900_000_000_000]);
console.log("\nround trip ok");
process.exit(0);
