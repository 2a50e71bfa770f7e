// D1 (`d1()`): the worker API and its result shapes, type mapping both ways, D1's error
// messages, batch/exec atomicity, files under `dir` across dispose, two bindings on one dir, the
// Node-side database(), migrations (readD1Migrations/applyD1Migrations), host handlers, limits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyD1Migrations, d1, dispatch, readD1Migrations } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

function tempDir(t, name) {
  const dir = mkdtempSync(path.join(tmpdir(), `workerbox-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `body` in a worker with `env.DB` bound to `db`; its JSON result. */
const inWorker = (t, db, body) => evalInWorker(t, body, { bindings: { DB: db } });

/** Runs `body` in a worker and returns the error it threw, as { name, message, cause }. */
const errorInWorker = (t, db, body) =>
  inWorker(t, db, `try { ${body}; return { threw: false }; } catch (e) { return { name: e.name, message: e.message, cause: e.cause?.message ?? null }; }`);

const META_KEYS = ["changed_db", "changes", "duration", "last_row_id", "rows_read", "rows_written", "size_after"];

test("prepare/bind/all/first/raw/run and batch give D1's result shapes", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const db = env.DB;
    const created = await db.prepare("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER)").run();
    const insert = db.prepare("INSERT INTO users (name, age) VALUES (?1, ?2)");
    const ran = await insert.bind("ada", 36).run();
    const batch = await db.batch([insert.bind("bob", 20), insert.bind("cy", null), db.prepare("SELECT count(*) AS n FROM users")]);
    const all = await db.prepare("SELECT id, name, age FROM users ORDER BY id").all();
    return {
      created: { success: created.success, results: created.results, changed_db: created.meta.changed_db },
      ran: { success: ran.success, results: ran.results, meta: ran.meta },
      batch: batch.map((r) => ({ success: r.success, results: r.results, changes: r.meta.changes, last_row_id: r.meta.last_row_id })),
      all: { results: all.results, metaKeys: Object.keys(all.meta), rows_read: all.meta.rows_read },
      first: await db.prepare("SELECT * FROM users WHERE id = ?").bind(2).first(),
      firstCol: await db.prepare("SELECT name FROM users ORDER BY id").first("name"),
      firstNone: await db.prepare("SELECT * FROM users WHERE id = 99").first(),
      firstNoneCol: await db.prepare("SELECT * FROM users WHERE id = 99").first("name"),
      raw: await db.prepare("SELECT id, name FROM users ORDER BY id").raw(),
      rawCols: await db.prepare("SELECT id, name FROM users ORDER BY id LIMIT 1").raw({ columnNames: true }),
      rawEmptyCols: await db.prepare("SELECT id, name FROM users WHERE 0").raw({ columnNames: true }),
      statement: insert.statement,
      params: insert.bind(1, "x").params,
      tags: [String(db), String(insert)],
    };`,
  );
  assert.deepEqual(out.created, { success: true, results: [], changed_db: true });
  assert.equal(out.ran.success, true);
  assert.deepEqual(out.ran.results, []);
  for (const key of META_KEYS) assert.ok(key in out.ran.meta, `meta has ${key}`);
  assert.equal(out.ran.meta.changes, 1);
  assert.equal(out.ran.meta.last_row_id, 1);
  assert.equal(out.ran.meta.rows_written, 1);
  assert.equal(out.ran.meta.changed_db, true);
  assert.ok(out.ran.meta.size_after > 0 && typeof out.ran.meta.duration === "number");
  assert.deepEqual(out.batch, [
    { success: true, results: [], changes: 1, last_row_id: 2 },
    { success: true, results: [], changes: 1, last_row_id: 3 },
    { success: true, results: [{ n: 3 }], changes: 0, last_row_id: 3 },
  ]);
  assert.deepEqual(out.all.results, [
    { id: 1, name: "ada", age: 36 },
    { id: 2, name: "bob", age: 20 },
    { id: 3, name: "cy", age: null },
  ]);
  for (const key of META_KEYS) assert.ok(out.all.metaKeys.includes(key), `meta has ${key}`);
  assert.ok(out.all.rows_read >= 3);
  assert.deepEqual(out.first, { id: 2, name: "bob", age: 20 });
  assert.equal(out.firstCol, "ada");
  assert.equal(out.firstNone, null);
  assert.equal(out.firstNoneCol, null);
  assert.deepEqual(out.raw, [[1, "ada"], [2, "bob"], [3, "cy"]]);
  assert.deepEqual(out.rawCols, [["id", "name"], [1, "ada"]]);
  assert.deepEqual(out.rawEmptyCols, [["id", "name"]]);
  assert.equal(out.statement, "INSERT INTO users (name, age) VALUES (?1, ?2)");
  assert.deepEqual(out.params, [1, "x"]);
  assert.deepEqual(out.tags, ["[object D1Database]", "[object D1PreparedStatement]"]);
});

test("values map both ways as D1 maps them: numbers, text, blobs as byte arrays, booleans as 1/0, null", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const db = env.DB;
    await db.exec("CREATE TABLE v (k TEXT, x)");
    const put = (k, x) => db.prepare("INSERT INTO v VALUES (?, ?)").bind(k, x).run();
    await put("int", 42);
    await put("neg", -7);
    await put("real", 1.25);
    await put("text", "héllo \\u{1F600}");
    await put("empty", "");
    await put("true", true);
    await put("false", false);
    await put("null", null);
    await put("ab", new Uint8Array([1, 2, 255]).buffer);
    await put("u8", new Uint8Array([9, 8]));
    await put("view", new Uint8Array([0, 1, 2, 3]).subarray(1, 3));
    await put("bytes", [0, 128, 255]);
    await put("big", 2 ** 53);
    const rows = (await db.prepare("SELECT k, x, typeof(x) AS t FROM v").all()).results;
    const out = {};
    for (const r of rows) out[r.k] = [r.x, r.t];
    out.largeLiteral = await db.prepare("SELECT 9007199254740993 AS n").first("n");
    out.maxInt = await db.prepare("SELECT 9223372036854775807 AS n").first("n");
    out.sqlBlob = await db.prepare("SELECT x'00ff' AS b, zeroblob(0) AS z").first();
    out.isArray = Array.isArray(await db.prepare("SELECT x'01' AS b").first("b"));
    return out;`,
  );
  assert.deepEqual(out.int, [42, "integer"]);
  assert.deepEqual(out.neg, [-7, "integer"]);
  assert.deepEqual(out.real, [1.25, "real"]);
  assert.deepEqual(out.text, ["héllo \u{1F600}", "text"]);
  assert.deepEqual(out.empty, ["", "text"]);
  assert.deepEqual(out.true, [1, "integer"]);
  assert.deepEqual(out.false, [0, "integer"]);
  assert.deepEqual(out.null, [null, "null"]);
  assert.deepEqual(out.ab, [[1, 2, 255], "blob"]);
  assert.deepEqual(out.u8, [[9, 8], "blob"]);
  assert.deepEqual(out.view, [[1, 2], "blob"]);
  assert.deepEqual(out.bytes, [[0, 128, 255], "blob"]);
  assert.deepEqual(out.big, [2 ** 53, "integer"]);
  // Integers beyond 2^53 come back as the nearest double, as D1's JSON does.
  assert.equal(out.largeLiteral, 9007199254740992);
  assert.equal(out.maxInt, 9223372036854775807);
  assert.deepEqual(out.sqlBlob, { b: [0, 255], z: [] });
  assert.equal(out.isArray, true);
});

test("bind() rejects unsupported types with D1_TYPE_ERROR, naming type and value", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const stmt = env.DB.prepare("SELECT ?");
    const tryBind = (v) => { try { stmt.bind(v); return null; } catch (e) { return [e.message, e.cause?.message]; } };
    return { bigint: tryBind(10n), undef: tryBind(undefined), object: tryBind({ a: 1 }), fn: tryBind(() => 1), badBytes: tryBind([1, 300]), symbol: tryBind(Symbol("s")) };`,
  );
  assert.deepEqual(out.bigint, ["D1_TYPE_ERROR: Type 'bigint' not supported for value '10'", "Type 'bigint' not supported for value '10'"]);
  assert.deepEqual(out.undef, ["D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'", "Type 'undefined' not supported for value 'undefined'"]);
  assert.equal(out.object[0], "D1_TYPE_ERROR: Type 'object' not supported for value '[object Object]'");
  assert.match(out.fn[0], /^D1_TYPE_ERROR: Type 'function' not supported/);
  assert.equal(out.badBytes[0], "D1_TYPE_ERROR: Type 'object' not supported for value '1,300'");
  assert.equal(out.symbol[0], "D1_TYPE_ERROR: Type 'symbol' not supported for value 'Symbol(s)'");
});

test("bad SQL, wrong parameter counts and missing columns give D1's errors with SQLite's message", async (t) => {
  const db = d1();
  const out = await inWorker(
    t,
    db,
    `
    const db = env.DB;
    await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY)");
    const err = async (p) => { try { await p; return null; } catch (e) { return [e.name, e.message, e.cause?.message ?? null]; } };
    return {
      noTable: await err(db.prepare("SELECT * FROM nope").all()),
      syntax: await err(db.prepare("SELEC 1").run()),
      tooFew: await err(db.prepare("SELECT ?, ?").bind(1).all()),
      tooMany: await err(db.prepare("SELECT 1").bind(1).all()),
      unique: await err(db.batch([db.prepare("INSERT INTO t VALUES (1)"), db.prepare("INSERT INTO t VALUES (1)")])),
      column: await err(db.prepare("SELECT 1 AS a").first("b")),
      empty: await err(db.prepare("  ").all()),
      emptyBatch: await err(db.batch([])),
      notStatement: await err(db.batch(["SELECT 1"])),
      transaction: await err(db.prepare("BEGIN TRANSACTION").run()),
      pragma: await err(db.prepare("PRAGMA journal_mode = DELETE").run()),
      attach: await err(db.prepare("ATTACH DATABASE '/tmp/x.db' AS x").run()),
      readPragma: await db.prepare("PRAGMA table_info(t)").all().then((r) => r.results.map((c) => c.name)),
    };`,
  );
  assert.deepEqual(out.noTable, ["Error", "D1_ERROR: no such table: nope: SQLITE_ERROR", "no such table: nope: SQLITE_ERROR"]);
  assert.deepEqual(out.syntax.slice(0, 2), ["Error", 'D1_ERROR: near "SELEC": syntax error at offset 0: SQLITE_ERROR']);
  assert.equal(out.tooFew[1], "D1_ERROR: Wrong number of parameter bindings for SQL query.");
  assert.equal(out.tooMany[1], "D1_ERROR: Wrong number of parameter bindings for SQL query.");
  assert.equal(out.unique[1], "D1_ERROR: UNIQUE constraint failed: t.id: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)");
  assert.deepEqual(out.column, ["Error", "D1_COLUMN_NOTFOUND: Column not found (b)", "Column not found (b)"]);
  assert.equal(out.empty[1], "D1_ERROR: No SQL statements detected.");
  assert.equal(out.emptyBatch[1], "D1_ERROR: No SQL statements detected.");
  assert.deepEqual(out.notStatement.slice(0, 2), ["TypeError", "D1Database.batch(): item 0 is not a D1PreparedStatement (make it with db.prepare(sql))"]);
  assert.match(out.transaction[1], /^D1_ERROR: D1 runs each query, batch\(\) and exec\(\) in a transaction of its own/);
  assert.match(out.pragma[1], /^D1_ERROR: PRAGMA journal_mode is not allowed in D1/);
  assert.match(out.attach[1], /^D1_ERROR: ATTACH is not allowed in D1/);
  assert.deepEqual(out.readPragma, ["id"]);
});

test("DELETE and UPDATE with ORDER BY and LIMIT run as on D1 (chanfana's generated endpoints issue them)", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const db = env.DB;
    await db.exec("CREATE TABLE tasks (id INTEGER PRIMARY KEY, done INTEGER, rank INTEGER)");
    await db.batch([1, 2, 3, 4, 5, 6].map((i) => db.prepare("INSERT INTO tasks VALUES (?, ?, ?)").bind(i, i % 2, 10 - i)));
    const ids = async () => (await db.prepare("SELECT id, done FROM tasks ORDER BY id").raw()).map((r) => r.join(":")).join(",");
    const deleted = await db.prepare("DELETE FROM tasks WHERE done = ? ORDER BY rank LIMIT ?").bind(1, 2).run();
    const afterDelete = await ids();
    const updated = await db.prepare("UPDATE tasks SET done = ?1 WHERE done = 0 RETURNING id ORDER BY id DESC LIMIT 2").bind(7).all();
    const afterUpdate = await ids();
    await db.exec("DELETE FROM tasks LIMIT 1");
    const afterExec = await ids();
    const [batched] = await db.batch([db.prepare("UPDATE tasks SET done = 9 ORDER BY id LIMIT 1 OFFSET 1")]);
    return { deleted: deleted.meta.changes, afterDelete, updated: updated.results.map((r) => r.id).sort(), afterUpdate, afterExec, batched: batched.meta.changes, final: await ids() };`,
  );
  // done = 1 are ids 1, 3, 5 with ranks 9, 7, 5: the two lowest ranks go (5 and 3).
  assert.deepEqual(out, {
    deleted: 2,
    afterDelete: "1:1,2:0,4:0,6:0",
    updated: [4, 6],
    afterUpdate: "1:1,2:0,4:7,6:7",
    afterExec: "2:0,4:7,6:7",
    batched: 1,
    final: "2:0,4:9,6:7",
  });
});

test("a D1 error thrown out of fetch reaches the host with its name, message and stack", async (t) => {
  const worker = await useWorker(t, {
    filename: "d1-throws.js",
    bindings: { DB: d1() },
    script: `export default { async fetch(request, env) {
      return Response.json(await env.DB.prepare("SELECT * FROM missing_table").all());
    } }`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/"), (error) => {
    assert.equal(error.name, "Error");
    assert.equal(error.message, "D1_ERROR: no such table: missing_table: SQLITE_ERROR");
    assert.match(error.stack, /D1_ERROR: no such table/);
    assert.match(error.stack, /d1-throws\.js/);
    return true;
  });
});

test("batch() is atomic: a failing statement rolls back the ones before it", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const db = env.DB;
    await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    await db.prepare("INSERT INTO t VALUES (1, 'keep')").run();
    let message;
    try {
      await db.batch([
        db.prepare("UPDATE t SET v = 'changed' WHERE id = 1"),
        db.prepare("INSERT INTO t VALUES (2, 'two')"),
        db.prepare("INSERT INTO t VALUES (3, NULL)"),
      ]);
    } catch (e) { message = e.message; }
    return { message, rows: (await db.prepare("SELECT * FROM t").all()).results };`,
  );
  assert.equal(out.message, "D1_ERROR: NOT NULL constraint failed: t.v: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_NOTNULL)");
  assert.deepEqual(out.rows, [{ id: 1, v: "keep" }]);
});

test("exec() runs one statement per line (several per line allowed), counts them, and fails whole with D1_EXEC_ERROR", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const db = env.DB;
    const ok = await db.exec("CREATE TABLE a (x);\\n\\n-- a comment line\\nINSERT INTO a VALUES (1); INSERT INTO a VALUES (2);\\nCREATE TABLE b (y);");
    let failed;
    try {
      await db.exec("INSERT INTO a VALUES (3);\\nINSERT INTO nope VALUES (4);\\nINSERT INTO a VALUES (5);");
    } catch (e) { failed = [e.message, e.cause?.message]; }
    let empty;
    try { await db.exec("   "); } catch (e) { empty = e.message; }
    const rows = await db.prepare("SELECT x FROM a ORDER BY x").raw();
    const tables = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").raw();
    return { count: ok.count, durationType: typeof ok.duration, failed, empty, rows, tables };`,
  );
  assert.equal(out.count, 3);
  assert.equal(out.durationType, "number");
  assert.deepEqual(out.failed, [
    "D1_EXEC_ERROR: Error in line 2: INSERT INTO nope VALUES (4);: no such table: nope: SQLITE_ERROR",
    "Error in line 2: INSERT INTO nope VALUES (4);: no such table: nope: SQLITE_ERROR",
  ]);
  assert.match(out.empty, /^D1_EXEC_ERROR: /);
  // The failed exec changed nothing (row 3 was rolled back with it).
  assert.deepEqual(out.rows, [[1], [2]]);
  assert.deepEqual(out.tables, [["a"], ["b"]]);
});

test("withSession() gives a session with prepare and batch; getBookmark() is null for a constraint until a query answers, then the latest commit's bookmark (as Miniflare's local D1 gives one with every answer)", async (t) => {
  const out = await inWorker(
    t,
    d1(),
    `
    const session = env.DB.withSession("first-primary");
    const before = session.getBookmark();
    await session.batch([session.prepare("CREATE TABLE s (x)"), session.prepare("INSERT INTO s VALUES (?)").bind(7)]);
    const afterBatch = session.getBookmark();
    const value = await session.prepare("SELECT x FROM s").first("x");
    const afterSelect = session.getBookmark();
    const failed = await session.prepare("SELECT nope FROM s").first().catch((e) => e.message);
    return {
      value, before, failed,
      bookmarks: [typeof afterBatch, typeof afterSelect, afterBatch.localeCompare(afterSelect) < 0, session.getBookmark() === afterSelect],
      unconstrained: env.DB.withSession().getBookmark(),
      bookmark: env.DB.withSession("00000001-abc").getBookmark(),
      tag: String(session),
    };`,
  );
  assert.deepEqual(out, { value: 7, before: null, failed: "D1_ERROR: no such column: nope at offset 7: SQLITE_ERROR", bookmarks: ["string", "string", true, true], unconstrained: null, bookmark: "00000001-abc", tag: "[object D1DatabaseSession]" });
});

test("d1({ dir }) keeps data across dispose and recreate; two bindings on one dir share it; database() in Node sees it", async (t) => {
  const dir = tempDir(t, "d1-dir");
  const script = `export default { async fetch(request, env) {
    const { sql, params } = await request.json();
    return Response.json(await env.DB.prepare(sql).bind(...params).all());
  } }`;
  const query = async (worker, sql, params = []) => {
    const response = await dispatch(worker, { url: "http://localhost/", method: "POST", body: JSON.stringify({ sql, params }) });
    return (await response.json()).results;
  };
  const first = await useWorker(t, { script, bindings: { DB: d1({ dir }) } });
  await query(first, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)");
  await query(first, "INSERT INTO notes (body) VALUES (?)", ["kept"]);
  await first.dispose();

  const second = await useWorker(t, { script, bindings: { DB: d1({ dir }) } });
  assert.deepEqual(await query(second, "SELECT * FROM notes"), [{ id: 1, body: "kept" }]);

  // A second binding on the same folder, in another worker, sees the same rows at once.
  const other = d1({ dir });
  const third = await useWorker(t, { script, bindings: { DB: other } });
  await query(third, "INSERT INTO notes (body) VALUES (?)", ["from third"]);
  assert.deepEqual(await query(second, "SELECT body FROM notes ORDER BY id"), [{ body: "kept" }, { body: "from third" }]);

  // And so does Node, through the binding's database().
  const db = other.database();
  assert.deepEqual((await db.prepare("SELECT count(*) AS n FROM notes").all()).results, [{ n: 2 }]);
  await db.prepare("INSERT INTO notes (body) VALUES (?)").bind("from node").run();
  assert.deepEqual(await query(third, "SELECT body FROM notes WHERE id = 3"), [{ body: "from node" }]);
  assert.equal(db, other.database());
});

test("database() in Node is the full D1 API on the binding's own in-memory database", async (t) => {
  const binding = d1();
  const db = binding.database();
  await db.exec("CREATE TABLE k (v)");
  await db.batch([db.prepare("INSERT INTO k VALUES (?)").bind(new Uint8Array([1, 2])), db.prepare("INSERT INTO k VALUES (?)").bind(true)]);
  assert.deepEqual(await db.prepare("SELECT v FROM k").raw(), [[[1, 2]], [1]]);
  await assert.rejects(db.prepare("SELECT * FROM nope").all(), { message: "D1_ERROR: no such table: nope: SQLITE_ERROR" });
  assert.throws(() => db.prepare("SELECT ?").bind(1n), { message: "D1_TYPE_ERROR: Type 'bigint' not supported for value '1'" });
  // A worker given the binding sees the rows Node wrote.
  const out = await inWorker(t, binding, `return await env.DB.prepare("SELECT count(*) AS n FROM k").first("n");`);
  assert.equal(out, 2);
});

test("the embedded store's close() frees an in-memory database at once: later calls from a worker, from Node and a new createWorker fail saying it was closed", async (t) => {
  const binding = d1();
  const db = binding.database();
  await db.exec("CREATE TABLE k (v)");
  const script = `export default { async fetch(request, env) {
    try { return Response.json(await env.DB.prepare("SELECT count(*) AS n FROM k").first("n")); }
    catch (e) { return Response.json({ error: e.message }); }
  } }`;
  const worker = await useWorker(t, { script, bindings: { DB: binding } });
  assert.equal(await (await dispatch(worker, "http://localhost/")).json(), 0);
  // workerbox/vitest closes the stores a test file made when its runner ends (lib/vitest/runners.js).
  assert.equal(binding.store.close(), true);
  assert.equal(binding.store.close(), false, "closing twice does nothing");
  assert.match((await (await dispatch(worker, "http://localhost/")).json()).error, /the store was closed/);
  await assert.rejects(db.prepare("SELECT 1").all(), /store was closed \(close\(\) was called on it\)/);
  await assert.rejects(useWorker(t, { script, bindings: { DB: binding } }), /createWorker: this d1\(\) store was closed/);
  // A store on a file is only let go by that handle: another binding on the folder keeps it open.
  const dir = tempDir(t, "d1-close");
  const onFile = d1({ dir });
  const other = d1({ dir });
  await onFile.database().exec("CREATE TABLE f (v); INSERT INTO f VALUES (1)");
  assert.equal(onFile.store.close(), false);
  assert.equal(await other.database().prepare("SELECT count(*) AS n FROM f").first("n"), 1);
});

test("readD1Migrations reads .sql files in name order and splits them; applyD1Migrations applies the pending ones once, recorded in d1_migrations", async (t) => {
  const dir = tempDir(t, "d1-migrations");
  const migrations = path.join(dir, "migrations");
  mkdirSync(migrations);
  writeFileSync(path.join(migrations, "0001_users.sql"), "-- users\nCREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT);\nINSERT INTO users (name) VALUES ('semi;colon');\n");
  writeFileSync(
    path.join(migrations, "0002_audit.sql"),
    "CREATE TABLE audit (name TEXT);\n/* a trigger: its body has semicolons */\nCREATE TRIGGER users_audit AFTER INSERT ON users BEGIN\n  INSERT INTO audit VALUES (new.name);\n  SELECT CASE WHEN new.name = '' THEN RAISE(ABORT, 'empty') END;\nEND;\n",
  );
  writeFileSync(path.join(migrations, "0000_first.sql"), "CREATE TABLE meta (k TEXT)");
  writeFileSync(path.join(migrations, "notes.txt"), "not a migration");

  const read = await readD1Migrations(migrations);
  assert.deepEqual(read.map((m) => m.name), ["0000_first.sql", "0001_users.sql", "0002_audit.sql"]);
  assert.equal(read[1].queries.length, 2);
  assert.match(read[1].queries[1], /'semi;colon'/);
  assert.equal(read[2].queries.length, 2);
  assert.match(read[2].queries[1], /^\/\* a trigger[\s\S]*END;$/);

  const binding = d1({ dir: path.join(dir, "db") });
  assert.deepEqual(await applyD1Migrations(binding.database(), read), ["0000_first.sql", "0001_users.sql", "0002_audit.sql"]);
  // Applying again does nothing; a new migration is applied alone.
  assert.deepEqual(await applyD1Migrations(binding.database(), read), []);
  writeFileSync(path.join(migrations, "0003_more.sql"), "ALTER TABLE users ADD COLUMN email TEXT;");
  assert.deepEqual(await applyD1Migrations(binding, await readD1Migrations(migrations)), ["0003_more.sql"]);

  const recorded = await binding.database().prepare("SELECT id, name, applied_at FROM d1_migrations ORDER BY id").all();
  assert.deepEqual(recorded.results.map((r) => [r.id, r.name]), [[1, "0000_first.sql"], [2, "0001_users.sql"], [3, "0002_audit.sql"], [4, "0003_more.sql"]]);
  assert.match(recorded.results[0].applied_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

  // The worker starts from the migrated schema (the trigger, made after 0001's row, works too).
  const out = await inWorker(
    t,
    binding,
    `await env.DB.prepare("INSERT INTO users (name, email) VALUES ('ada', 'a@x')").run();
     return await env.DB.prepare("SELECT name FROM audit ORDER BY rowid").raw();`,
  );
  assert.deepEqual(out, [["ada"]]);

  // A failing migration is applied not at all and not recorded; a custom table name works.
  writeFileSync(path.join(migrations, "0004_bad.sql"), "CREATE TABLE half (x);\nINSERT INTO nowhere VALUES (1);");
  await assert.rejects(applyD1Migrations(binding, await readD1Migrations(migrations)), {
    message: "D1 migration 0004_bad.sql failed and was not applied: D1_ERROR: no such table: nowhere: SQLITE_ERROR",
  });
  assert.equal(await binding.database().prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half'").first("n"), 0);
  assert.equal(await binding.database().prepare("SELECT count(*) AS n FROM d1_migrations").first("n"), 4);
  const fresh = d1();
  assert.deepEqual(await applyD1Migrations(fresh, read, "my_migrations"), ["0000_first.sql", "0001_users.sql", "0002_audit.sql"]);
  assert.equal(await fresh.database().prepare("SELECT count(*) AS n FROM my_migrations").first("n"), 3);
  await assert.rejects(applyD1Migrations(fresh, read, "bad name;"), { name: "TypeError" });
  await assert.rejects(applyD1Migrations(fresh, [{ name: 1 }]), { name: "TypeError" });
  await assert.rejects(readD1Migrations(path.join(dir, "missing")), /cannot read the migrations folder/);
});

test("d1({ query }) answers the worker's queries with a host handler", async (t) => {
  const seen = [];
  const binding = d1({
    query(statements) {
      seen.push(statements);
      if (statements.some((s) => s.sql.includes("fail"))) {
        const error = new Error("handler says no");
        error.index = 1;
        throw error;
      }
      return statements.map((s) => ({ columns: ["sql", "p"], rows: [[s.sql, s.params[0] ?? null], ["blob", new Uint8Array([7])]], meta: { changes: 2 } }));
    },
  });
  const out = await inWorker(
    t,
    binding,
    `
    const db = env.DB;
    const all = await db.prepare("SELECT ?").bind(true).all();
    const batch = await db.batch([db.prepare("A"), db.prepare("B").bind(new Uint8Array([1]))]);
    let failed;
    try { await db.exec("ok\\nfail"); } catch (e) { failed = e.message; }
    return { all, batch: batch.map((r) => r.results), failed };`,
  );
  assert.deepEqual(out.all.results, [{ sql: "SELECT ?", p: 1 }, { sql: "blob", p: [7] }]);
  assert.equal(out.all.meta.changes, 2);
  assert.equal(out.all.meta.rows_read, 0);
  assert.deepEqual(out.batch[1][0], { sql: "B", p: [1] });
  assert.equal(out.failed, "D1_EXEC_ERROR: Error in line 2: fail: handler says no");
  assert.deepEqual(seen[0], [{ sql: "SELECT ?", params: [1] }]);
  assert.deepEqual(seen[2], [{ sql: "ok", params: [] }, { sql: "fail", params: [] }]);
  // Node's database() goes through the same handler.
  assert.deepEqual((await binding.database().prepare("X").all()).results[0], { sql: "X", p: null });

  const broken = d1({ query: () => [{ rows: "nope" }] });
  const error = await errorInWorker(t, broken, `await env.DB.prepare("SELECT 1").all()`);
  assert.match(error.message, /^D1_ERROR: the D1 query handler's result 0 must be \{ columns: string\[\], rows: unknown\[\]\[\], meta\? \}/);
});

test("d1() validates its options, and a runaway query is interrupted after timeoutMs", async (t) => {
  assert.throws(() => d1(null), { name: "TypeError" });
  assert.throws(() => d1({ dir: "" }), { message: "d1(): options.dir must be a folder path" });
  assert.throws(() => d1({ query: 1 }), /handler "query" must be a function/);
  assert.throws(() => d1({ timeoutMs: -1 }), /timeoutMs must be a positive number/);
  assert.throws(() => d1({ bogus: 1 }), /unknown option "bogus"/);
  assert.throws(() => d1({ query() {}, dir: "x" }), /cannot be combined/);
  const binding = d1({ timeoutMs: 200 });
  const started = Date.now();
  const error = await errorInWorker(t, binding, `await env.DB.prepare("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n").all()`);
  assert.equal(error.message, "D1_ERROR: the query ran longer than its limit of 200 ms and was interrupted: SQLITE_INTERRUPT");
  assert.ok(Date.now() - started < 10_000);
  // The database still answers.
  assert.equal(await binding.database().prepare("SELECT 1 AS one").first("one"), 1);
});
