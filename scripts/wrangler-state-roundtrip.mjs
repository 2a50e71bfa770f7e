#!/usr/bin/env node
// Round trip of local state between wrangler and workerbox on one project: wrangler writes D1,
// KV and R2 with `--local` and workerbox reads them (D1 and KV from wrangler's own files, R2
// imported on the first start), then workerbox writes D1 rows, applies a migration and writes KV
// keys, and wrangler reads them back. Prints every command and its output; exits 1 on the first mismatch.
//   node scripts/wrangler-state-roundtrip.mjs [--node=/path/to/node22] [--wrangler=path/to/wrangler.js]
// wrangler comes from bench/.tools (bench/lib.mjs installs it from npm on first use) and needs
// Node 22.12+: --node names one when this Node is older. The project is a temporary folder.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { wranglerPath, benchNode, devEnv } from "../bench/lib.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const workerbox = path.join(root, "bin", "workerbox.js");
const wrangler = wranglerPath();
const node = benchNode();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-roundtrip-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
fs.mkdirSync(path.join(dir, "src"));
fs.writeFileSync(path.join(dir, "src", "index.js"), "export default { fetch() { return new Response('ok') } }\n");
fs.writeFileSync(
  path.join(dir, "wrangler.json"),
  JSON.stringify({
    name: "roundtrip",
    main: "src/index.js",
    compatibility_date: "2025-01-01",
    d1_databases: [{ binding: "DB", database_name: "my-db", database_id: "my-d1-id" }],
    kv_namespaces: [{ binding: "KV", id: "kv-ns-id" }],
    r2_buckets: [{ binding: "R2", bucket_name: "bucket1" }],
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
console.log("\nround trip ok");
