"use strict";
// D1 on the host side: `d1()` (the binding factory: an embedded SQLite database in memory or
// under `dir`, or your `query` handler), `binding.database()` (the same database as a
// D1Database in Node), and the migrations helpers `readD1Migrations(dir)` and
// `applyD1Migrations(db, migrations, table?)`. The D1 API itself (prepare, bind, batch, exec, …)
// is src/js/87_d1.js, the file workers use, evaluated here once so Node gets the same code.

const fs = require("node:fs");
const path = require("node:path");
const { NativeStore } = require("../native.js");
const { Binding } = require("./bindings.js");

/** The D1 API from src/js/87_d1.js: makeD1Database(send) and applyD1Migrations(); compiled on first use. */
let compiledApi = null;
const api = () => (compiledApi ??= (() => {
  const file = path.join(__dirname, "../src/js/87_d1.js");
  const internals = {};
  // The file is the body of `function (ops, internals)`, as the worker's bootstrap runs it.
  new Function("ops", "internals", `"use strict";\n${fs.readFileSync(file, "utf8")}\n//# sourceURL=${file}`)(null, internals);
  return internals;
})());

const OPTION_NAMES = new Set(["dir", "timeoutMs", "query"]);

/** A row value as D1's wire carries it: blobs (Uint8Array, ArrayBuffer, Buffer) as arrays of bytes. */
function wireCell(value) {
  if (value instanceof ArrayBuffer) return Array.from(new Uint8Array(value));
  if (ArrayBuffer.isView(value)) return Array.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  if (typeof value === "bigint") return Number(value);
  if (value === undefined) return null;
  return value;
}

const META_DEFAULTS = { duration: 0, changes: 0, last_row_id: 0, changed_db: false, size_after: 0, rows_read: 0, rows_written: 0 };

/**
 * Answers one `query` call with a `query(statements)` handler: its results must be one
 * `{ columns, rows, meta? }` per statement. A throw becomes D1_ERROR with its message (and its
 * numeric `index`, if it has one, naming the statement that failed).
 */
async function answerWithHandler(handler, queries) {
  let results;
  try {
    results = await handler.query(queries.map((q) => ({ sql: q.sql, params: q.params ?? [] })));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { error: message, index: Number.isInteger(error?.index) ? error.index : 0 };
  }
  if (!Array.isArray(results) || results.length !== queries.length) {
    throw new TypeError(`the D1 query handler must return an array with one { columns, rows, meta? } per statement (${queries.length}), got ${Array.isArray(results) ? `${results.length} items` : typeof results}`);
  }
  return {
    results: results.map((result, i) => {
      if (result === null || typeof result !== "object" || !Array.isArray(result.columns) || !Array.isArray(result.rows) || result.rows.some((row) => !Array.isArray(row))) {
        throw new TypeError(`the D1 query handler's result ${i} must be { columns: string[], rows: unknown[][], meta? }`);
      }
      return { columns: result.columns.map(String), rows: result.rows.map((row) => row.map(wireCell)), meta: { ...META_DEFAULTS, ...(result.meta ?? {}) } };
    }),
  };
}

/** A D1 binding definition; `database()` is the same database as a D1Database in Node. */
class D1Binding extends Binding {
  #database = null;

  /** Answers a worker's call when a handler backs this binding (the dispatcher calls this). */
  async answer(method, args) {
    if (method !== "query") throw new TypeError(`unknown D1 operation "${method}"`);
    return { json: JSON.stringify(await answerWithHandler(this.handler, args.queries)) };
  }

  /** A D1Database on this binding's database, for Node: the one the workers given it see. */
  database() {
    this.#database ??= api().makeD1Database(async (queries) => {
      if (this.store === null) return JSON.parse(JSON.stringify(await answerWithHandler(this.handler, queries)));
      const answer = await this.store.call("query", JSON.stringify({ queries }), null, Date.now());
      if (answer.errorMessage !== undefined && answer.errorMessage !== null) throw new Error(answer.errorMessage);
      return JSON.parse(answer.json);
    });
    return this.#database;
  }
}

/**
 * A D1 database binding. `d1()` keeps it in memory, `d1({ dir })` in `dir/d1.sqlite3` (shared
 * with every binding on that dir, in this process or another) or, when `dir` names an existing
 * file, in that file (wrangler's local D1 databases), `d1({ query })` calls your
 * handler. `timeoutMs` bounds each call to the embedded database (default 30000).
 */
function d1(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("d1(): options must be an object: d1(), d1({ dir }) or d1({ query })");
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name)) throw new TypeError(`d1(): unknown option "${name}" (options are dir, timeoutMs, or a query handler)`);
  }
  if ("query" in options) {
    if (typeof options.query !== "function") throw new TypeError("d1(): handler \"query\" must be a function (statements) => [{ columns, rows, meta? }]");
    if (options.dir !== undefined || options.timeoutMs !== undefined) throw new TypeError("d1(): a query handler cannot be combined with dir or timeoutMs");
    return new D1Binding("d1", options);
  }
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) throw new TypeError("d1(): options.dir must be a folder path");
  const { timeoutMs } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new TypeError(`d1(): options.timeoutMs must be a positive number of milliseconds, got ${String(timeoutMs)}`);
  }
  const store = new NativeStore("d1", options.dir === undefined ? undefined : path.resolve(options.dir), timeoutMs);
  return new D1Binding("d1", null, store);
}

/** Splits one SQL file into statements at `;`, outside strings, comments and trigger bodies. */
function splitSql(sql) {
  const statements = [];
  let start = 0;
  let depth = 0; // BEGIN…END of a trigger, CASE…END
  let word = "";
  let i = 0;
  const endWord = () => {
    const upper = word.toUpperCase();
    if (upper === "CASE" || (upper === "BEGIN" && /^\s*CREATE\s+(TEMP\s+|TEMPORARY\s+)?TRIGGER\b/i.test(stripComments(sql.slice(start, i))))) depth++;
    else if (upper === "END" && depth > 0) depth--;
    word = "";
  };
  while (i < sql.length) {
    const c = sql[i];
    if (/[A-Za-z0-9_]/.test(c)) {
      word += c;
      i++;
      continue;
    }
    if (word) endWord();
    if (c === "'" || c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c;
      i++;
      while (i < sql.length) {
        if (sql[i] === close) {
          if (close !== "]" && sql[i + 1] === close) {
            i += 2;
            continue;
          }
          break;
        }
        i++;
      }
      i++;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end === -1 ? sql.length : end + 2;
    } else if (c === ";" && depth === 0) {
      statements.push(sql.slice(start, i + 1));
      start = i + 1;
      i++;
    } else {
      i++;
    }
  }
  if (word) endWord();
  statements.push(sql.slice(start));
  return statements.map((s) => s.trim()).filter((s) => stripComments(s).replace(/;/g, "").trim() !== "");
}

function stripComments(sql) {
  return sql.replace(/--[^\n]*/g, "").replace(/\/\*[\s\S]*?(\*\/|$)/g, "");
}

/**
 * The migrations in folder `dir`: its `.sql` files in name order (`0000_init.sql`, …), each as
 * `{ name, queries }` with its statements split at `;`. As Cloudflare's Vitest integration's.
 */
async function readD1Migrations(dir) {
  if (typeof dir !== "string" || dir === "") throw new TypeError("readD1Migrations(dir): dir must be a folder path");
  let names;
  try {
    names = await fs.promises.readdir(dir);
  } catch (cause) {
    throw new Error(`readD1Migrations: cannot read the migrations folder ${path.resolve(dir)}: ${cause.message}`, { cause });
  }
  names = names.filter((name) => name.endsWith(".sql")).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(names.map(async (name) => ({ name, queries: splitSql(await fs.promises.readFile(path.join(dir, name), "utf8")) })));
}

/** Applies the pending migrations to `db` in order and records them in `table` (default `d1_migrations`). */
function applyD1Migrations(db, migrations, table = "d1_migrations") {
  if (db instanceof D1Binding) db = db.database();
  return api().applyD1Migrations(db, migrations, table);
}

module.exports = { d1, D1Binding, readD1Migrations, applyD1Migrations, splitSql };
