// D1's API: D1Database (prepare, batch, exec, withSession, dump), D1DatabaseSession and
// D1PreparedStatement (bind, first, all, raw, run), with D1's bind rules, result shapes and
// error messages (`D1_ERROR: …`, `D1_TYPE_ERROR: …`, `D1_COLUMN_NOTFOUND: …`, `D1_EXEC_ERROR: …`).
//
// Every call becomes one `send(queries)`: `queries` is `[{ sql, params }]`, run in one
// transaction; it resolves to `{ results: [{ columns, rows, meta }] }` or `{ error, index }`.
// In a worker, `send` is a binding call (`query`), answered by the embedded store or a host
// handler. lib/d1.js also evaluates this file in Node (as the body of `function (ops,
// internals)`, with `ops` null) to give the host the same API on the same database, so nothing
// here may use `ops` outside `internals.makeD1Binding`, nor any global but standard JS.

const kConstruct = Symbol("construct");
const kSend = Symbol("send");

/** An Error as D1 throws them: `PREFIX: message`, with the bare message as its cause. */
function d1Error(prefix, message) {
  return new Error(`${prefix}: ${message}`, { cause: new Error(message) });
}

function show(value) {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A bound value as D1's wire carries it, or D1_TYPE_ERROR as D1's bind() throws it. */
function wireValue(value) {
  const type = typeof value;
  if (type === "number" || type === "string") return value;
  if (type === "boolean") return value ? 1 : 0;
  if (type === "object") {
    if (value === null) return null;
    if (Array.isArray(value) && value.every((b) => typeof b === "number" && b >= 0 && b < 256)) return value.map((b) => Math.trunc(b));
    if (value instanceof ArrayBuffer) return Array.from(new Uint8Array(value));
    if (ArrayBuffer.isView(value)) return Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  }
  throw d1Error("D1_TYPE_ERROR", `Type '${type}' not supported for value '${show(value)}'`);
}

/** Runs `queries`; resolves to their results, or throws D1_ERROR (the failing query's index in `.index`). */
async function runQueries(send, queries) {
  for (const query of queries) {
    if (query.sql.trim() === "") throw d1Error("D1_ERROR", "No SQL statements detected.");
  }
  let answer;
  try {
    answer = await send(queries);
  } catch (error) {
    const message = error instanceof Error ? error.message : show(error);
    throw d1Error("D1_ERROR", message.startsWith("D1_ERROR: ") ? message.slice(10) : message);
  }
  if (answer.error !== undefined) {
    const error = d1Error("D1_ERROR", answer.error);
    error.index = answer.index ?? 0;
    throw error;
  }
  return answer.results;
}

/** A result as D1 gives it: `{ success, meta, results }`, rows as objects (later columns of the same name win). */
function toResult(result) {
  const { columns, rows, meta } = result;
  const results = rows.map((row) => {
    const object = {};
    for (let i = 0; i < columns.length; i++) object[columns[i]] = row[i];
    return object;
  });
  return { success: true, meta: { ...meta }, results };
}

function checkStatements(statements) {
  if (!Array.isArray(statements)) throw new TypeError("D1Database.batch(): expected an array of D1PreparedStatement");
  for (const [i, statement] of statements.entries()) {
    if (!(statement instanceof D1PreparedStatement)) throw new TypeError(`D1Database.batch(): item ${i} is not a D1PreparedStatement (make it with db.prepare(sql))`);
  }
  if (statements.length === 0) throw d1Error("D1_ERROR", "No SQL statements detected.");
  return statements.map((s) => ({ sql: s.statement, params: s.params }));
}

function checkSql(sql, what) {
  if (typeof sql !== "string") throw new TypeError(`${what}: the SQL must be a string, got ${sql === null ? "null" : typeof sql}`);
  return sql;
}

class D1PreparedStatement {
  #send;
  constructor(token, send, statement, params = []) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#send = send;
    this.statement = statement;
    this.params = params;
  }

  bind(...values) {
    return new D1PreparedStatement(kConstruct, this.#send, this.statement, values.map(wireValue));
  }

  async #run() {
    const [result] = await runQueries(this.#send, [{ sql: this.statement, params: this.params }]);
    return result;
  }

  async first(column) {
    const { results } = toResult(await this.#run());
    if (results.length === 0) return null;
    if (column === undefined) return results[0];
    if (results[0][column] === undefined) throw d1Error("D1_COLUMN_NOTFOUND", `Column not found (${column})`);
    return results[0][column];
  }

  async all() {
    return toResult(await this.#run());
  }

  async run() {
    return toResult(await this.#run());
  }

  async raw(options) {
    const { columns, rows } = await this.#run();
    return options?.columnNames ? [columns, ...rows] : rows;
  }

  get [Symbol.toStringTag]() {
    return "D1PreparedStatement";
  }
}

/**
 * A session's bookmark after a query: the database's commit count in the layout of the bookmarks
 * Miniflare's local D1 answers with (its Durable Object storage's current bookmark), so that
 * later ones sort after earlier ones.
 */
function bookmarkAt(commit) {
  return `00000000-${commit.toString(16).padStart(8, "0")}-00000000-${"0".repeat(32)}`;
}

class D1DatabaseSession {
  #send;
  #bookmark;
  constructor(token, send, constraintOrBookmark, commits) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#bookmark = constraintOrBookmark;
    // Each query answered moves the bookmark to the database's latest commit, if it is newer
    // (workerd's _updateBookmark).
    this.#send = async (queries) => {
      const answer = await send(queries);
      if (answer?.error === undefined) {
        const next = bookmarkAt(commits.next());
        const current = this.getBookmark();
        if (current === null || current.localeCompare(next) < 0) this.#bookmark = next;
      }
      return answer;
    };
  }

  prepare(sql) {
    return new D1PreparedStatement(kConstruct, this.#send, checkSql(sql, "D1DatabaseSession.prepare()"));
  }

  async batch(statements) {
    return (await runQueries(this.#send, checkStatements(statements))).map(toResult);
  }

  /** The latest bookmark of this session; null until one is known (a constraint is not a bookmark). */
  getBookmark() {
    const bookmark = this.#bookmark;
    return bookmark === "first-primary" || bookmark === "first-unconstrained" ? null : bookmark;
  }

  get [Symbol.toStringTag]() {
    return "D1DatabaseSession";
  }
}

class D1Database {
  #send;
  /** Queries answered for this database's sessions: their bookmarks' commit count. */
  #commits = { count: 0, next() { return ++this.count; } };
  constructor(token, send) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#send = send;
  }

  prepare(sql) {
    return new D1PreparedStatement(kConstruct, this.#send, checkSql(sql, "D1Database.prepare()"));
  }

  async batch(statements) {
    return (await runQueries(this.#send, checkStatements(statements))).map(toResult);
  }

  /**
   * Runs SQL without parameters, one line at a time as D1 does (a line may hold several
   * statements; a statement may not span lines), all in one transaction.
   */
  async exec(sql) {
    checkSql(sql, "D1Database.exec()");
    const lines = sql
      .trim()
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trim().startsWith("--"));
    if (lines.length === 0) throw d1Error("D1_EXEC_ERROR", "Error in line 1: : No SQL statements detected.");
    let results;
    try {
      results = await runQueries(this.#send, lines.map((line) => ({ sql: line, params: [] })));
    } catch (error) {
      const index = error.index ?? 0;
      const message = error.message.replace(/^D1_ERROR: /, "");
      throw d1Error("D1_EXEC_ERROR", `Error in line ${index + 1}: ${lines[index]}: ${message}`);
    }
    return { count: results.length, duration: results.reduce((sum, r) => sum + (r.meta?.duration ?? 0), 0) };
  }

  withSession(constraintOrBookmark) {
    let value = constraintOrBookmark === undefined || constraintOrBookmark === null ? "" : String(constraintOrBookmark).trim();
    if (value === "") value = "first-unconstrained";
    return new D1DatabaseSession(kConstruct, this.#send, value, this.#commits);
  }

  /** Deprecated in D1 (alpha databases only) and not supported here. */
  async dump() {
    throw d1Error("D1_DUMP_ERROR", "dump() is deprecated and not supported; read the SQLite file d1.sqlite3 under the binding's dir instead");
  }

  get [Symbol.toStringTag]() {
    return "D1Database";
  }
}

const MIGRATIONS_TABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Applies the migrations (`[{ name, queries }]`, in order) that `db` has not recorded yet in
 * `table` (wrangler's `d1_migrations`: id, name, applied_at): each migration's queries and its
 * record in one batch, so a migration is applied whole or not at all. Uses only the D1 API, so
 * any D1Database works. Resolves to the names it applied.
 */
internals.applyD1Migrations = async function applyD1Migrations(db, migrations, table = "d1_migrations") {
  if (db === null || typeof db !== "object" || typeof db.prepare !== "function" || typeof db.batch !== "function") {
    throw new TypeError("applyD1Migrations(db, migrations): db must be a D1Database");
  }
  if (!Array.isArray(migrations) || migrations.some((m) => m === null || typeof m !== "object" || typeof m.name !== "string" || !Array.isArray(m.queries) || m.queries.some((q) => typeof q !== "string"))) {
    throw new TypeError("applyD1Migrations(db, migrations): migrations must be an array of { name: string, queries: string[] } (readD1Migrations(dir) makes it)");
  }
  if (typeof table !== "string" || !MIGRATIONS_TABLE.test(table)) throw new TypeError(`applyD1Migrations(): the migrations table name must be an SQL identifier (letters, digits, _), got ${show(table)}`);
  await db
    .prepare(`CREATE TABLE IF NOT EXISTS "${table}" (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`)
    .run();
  const { results } = await db.prepare(`SELECT name FROM "${table}"`).all();
  const applied = new Set(results.map((row) => row.name));
  const done = [];
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    const statements = migration.queries.filter((q) => q.trim() !== "").map((q) => db.prepare(q));
    statements.push(db.prepare(`INSERT INTO "${table}" (name) VALUES (?)`).bind(migration.name));
    try {
      await db.batch(statements);
    } catch (error) {
      throw new Error(`D1 migration ${migration.name} failed and was not applied: ${error.message}`, { cause: error });
    }
    applied.add(migration.name);
    done.push(migration.name);
  }
  return done;
};

/** A D1Database whose queries `send(queries)` answers (Node's side uses this). */
internals.makeD1Database = (send) => new D1Database(kConstruct, send);

/** The worker's `env.NAME` for a D1 binding: its queries are calls to binding `name`. */
internals.makeD1Binding = (name) =>
  new D1Database(kConstruct, async (queries) => {
    const [json] = await ops.hostCall(name, "query", JSON.stringify({ queries }), null);
    return JSON.parse(json);
  });

// Their promise-returning methods throw synchronously before capture_async_api_throws (97_compat.js).
internals.asyncApiPrototypes?.push(D1PreparedStatement.prototype, D1DatabaseSession.prototype, D1Database.prototype);
