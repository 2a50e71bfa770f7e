//! D1 databases (`d1()`, `d1({ dir })`): the user's own SQL, run on the embedded store layer,
//! answering the worker's (and Node's) `query` calls with rows and D1's result metadata.
//!
//! One call is a list of queries (`prepare().all()` sends one, `batch()` and `exec()` several),
//! run in one write transaction: all of them take effect, or, when one fails, none does, and the
//! answer names the failing query. A query may hold several statements; those before the last
//! run first and may not have parameters, and the last one's rows are the result (workerd's
//! rules). The connection is set up as workerd sets up D1's: SQLite's limits for untrusted SQL,
//! defensive mode, foreign keys enforced, no ATTACH, no transaction statements (the call is the
//! transaction) and no pragmas that would change how the shared file is written. Each call may
//! run for a bounded time before SQLite interrupts it.
//!
//! Wire format (the JS in `src/js/87_d1.js` reads it; a host handler's answers are made into
//! it by `lib/d1.js`): arguments `{ queries: [{ sql, params }] }`, params as JSON (numbers,
//! strings, null, byte arrays for blobs); answer `{ results: [{ columns, rows, meta }] }`, or
//! `{ error, index }` naming the first query that failed and SQLite's message, formatted as
//! workerd formats it (`no such table: t: SQLITE_ERROR`).

use super::calls::{json, quote, type_error, Args, Failure};
use super::update_delete_limit;
use super::user_sql::{self, SqlFailure as QueryError};
use super::{Database, StoreError, StoreKind};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, StatementStatus};
use std::cell::{Cell, RefCell};
use std::fmt::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest answer (JSON text) one call may produce; a larger result is an error rather
/// than an allocation the worker would fail to parse.
pub const MAX_RESULT_BYTES: usize = 32 << 20;

/// Pragmas that would change how the shared file is kept or written, for every binding on it.
const DENIED_PRAGMAS: &[&str] = &[
  "journal_mode",
  "synchronous",
  "locking_mode",
  "writable_schema",
  "temp_store_directory",
  "data_store_directory",
  "mmap_size",
  "busy_timeout",
  "query_only",
  "wal_autocheckpoint",
  "journal_size_limit",
  "key",
  "rekey",
];

thread_local! {
  /// When the call running on this thread must stop (the progress handler checks it); set only
  /// while the user's SQL runs, which is also when the authorizer applies D1's rules (the store
  /// layer's own BEGIN and COMMIT run outside it).
  static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
  /// Why the authorizer last refused a statement on this thread.
  static DENIED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Gives a D1 connection workerd's settings for user SQL.
fn setup(c: &Connection) -> rusqlite::Result<()> {
  user_sql::untrusted_settings(c)?;
  c.authorizer(Some(authorize));
  c.progress_handler(10_000, Some(|| DEADLINE.with(|d| d.get().is_some_and(|at| Instant::now() >= at))));
  Ok(())
}

fn authorize(context: AuthContext<'_>) -> Authorization {
  if DEADLINE.with(|d| d.get()).is_none() {
    return Authorization::Allow;
  }
  let denied = match context.action {
    AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => Some(
      "D1 runs each query, batch() and exec() in a transaction of its own, so BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE are not allowed; use batch() to make statements atomic".to_owned(),
    ),
    AuthAction::Attach { .. } => Some("ATTACH is not allowed in D1".to_owned()),
    AuthAction::Pragma { pragma_name, .. } if DENIED_PRAGMAS.contains(&pragma_name.to_ascii_lowercase().as_str()) => Some(format!("PRAGMA {pragma_name} is not allowed in D1")),
    _ => None,
  };
  match denied {
    Some(reason) => {
      DENIED.with(|d| *d.borrow_mut() = Some(reason));
      Authorization::Deny
    }
    None => Authorization::Allow,
  }
}

/// One query: SQL text and its parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
  pub sql: String,
  pub params: Vec<Value>,
}

/// Why a call failed: a query's SQL (the `index`th query, in workerd's words), or the database.
#[derive(Debug)]
pub enum D1Failure {
  Query { index: usize, message: String },
  Store(StoreError),
}

impl From<StoreError> for D1Failure {
  fn from(error: StoreError) -> Self {
    D1Failure::Store(error)
  }
}

pub struct D1Store {
  db: Arc<Database>,
  timeout: Duration,
}

/// Clears the call's deadline however the call ends.
struct DeadlineGuard;

impl Drop for DeadlineGuard {
  fn drop(&mut self) {
    DEADLINE.with(|d| d.set(None));
  }
}

impl D1Store {
  /// Its database (for test checkpoints, [`super::Database::checkpoint`]).
  pub(crate) fn database(&self) -> &super::Database {
    &self.db
  }

  /// How long one call may run by default (a D1 query's own limit is 30 s).
  pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

  /// In memory, or in `d1.sqlite3` under `dir`; each call may run for up to `timeout`. A `dir`
  /// that names an existing file is that database itself (wrangler's local D1 databases are
  /// `.wrangler/state/v3/d1/miniflare-D1DatabaseObject/<id>.sqlite`; an empty file is an empty
  /// database), so a project's database can be shared with the tool that made it.
  pub fn open(dir: Option<&Path>, timeout: Duration) -> Result<D1Store, StoreError> {
    let db = match dir {
      Some(path) if path.is_file() => {
        let (Some(folder), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
          return Err(StoreError { location: super::Location::File(path.to_path_buf()), failed: "opened", cause: "the file name is not valid Unicode".into() });
        };
        Database::file(folder, name, "", Some(setup))?
      }
      _ => Database::open_with(dir, StoreKind::D1, "", Some(setup))?,
    };
    Ok(D1Store { db, timeout })
  }

  /// Runs `queries` in one transaction; the answer's JSON text (`{ results: […] }`).
  pub fn query(&self, queries: &[Query]) -> Result<String, D1Failure> {
    let timeout = self.timeout;
    self.db.write_with(|c| {
      DEADLINE.with(|d| d.set(Some(Instant::now() + timeout)));
      let _guard = DeadlineGuard;
      let mut out = String::from("{\"results\":[");
      for (index, query) in queries.iter().enumerate() {
        if index > 0 {
          out.push(',');
        }
        run_query(c, query, &mut out).map_err(|e| D1Failure::Query { index, message: failure_message(e, timeout) })?;
        if out.len() > MAX_RESULT_BYTES {
          return Err(D1Failure::Query { index, message: format!("the results are larger than {} MiB; select fewer rows or columns: SQLITE_TOOBIG", MAX_RESULT_BYTES >> 20) });
        }
      }
      out.push_str("]}");
      Ok(out)
    })
  }

  /// Answers the worker's call `method` (only `query`).
  pub(crate) fn answer(&self, method: &str, args: &Args) -> Result<crate::runtime::types::HostResult, Failure> {
    if method != "query" {
      return Err(type_error(format!("unknown D1 operation \"{method}\"")));
    }
    let queries = parse_queries(args.raw("queries"))?;
    match self.query(&queries) {
      Ok(text) => json(text),
      Err(D1Failure::Query { index, message }) => json(format!("{{\"error\":{},\"index\":{index}}}", quote(&message))),
      Err(D1Failure::Store(error)) => Err(Failure::Store(error)),
    }
  }
}

/// The `queries` argument: `[{ sql, params? }]`.
fn parse_queries(raw: Option<&str>) -> Result<Vec<Query>, Failure> {
  let bad = |what: String| type_error(format!("D1 \"query\": {what}"));
  let raw = raw.ok_or_else(|| bad("argument \"queries\" must be an array of { sql, params }".into()))?;
  let value: serde_json::Value = serde_json::from_str(raw).map_err(|e| bad(format!("the queries are not valid JSON (a string that is not valid Unicode?): {e}")))?;
  let serde_json::Value::Array(list) = value else { return Err(bad("argument \"queries\" must be an array".into())) };
  list
    .into_iter()
    .enumerate()
    .map(|(i, item)| {
      let serde_json::Value::Object(mut fields) = item else { return Err(bad(format!("query {i} must be an object {{ sql, params }}"))) };
      let Some(serde_json::Value::String(sql)) = fields.remove("sql") else { return Err(bad(format!("query {i}: \"sql\" must be a string"))) };
      let params = match fields.remove("params") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::Array(params)) => params.into_iter().enumerate().map(|(p, v)| param(v).map_err(|e| bad(format!("query {i}, parameter {}: {e}", p + 1)))).collect::<Result<_, _>>()?,
        Some(_) => return Err(bad(format!("query {i}: \"params\" must be an array"))),
      };
      Ok(Query { sql, params })
    })
    .collect()
}

/// A parameter as D1's wire carries it: number, string, null, or an array of bytes (a blob);
/// booleans become 1 and 0, as the worker's `bind()` makes them.
pub fn param(value: serde_json::Value) -> Result<Value, String> {
  use serde_json::Value as J;
  Ok(match value {
    J::Null => Value::Null,
    J::Bool(b) => Value::Integer(b as i64),
    J::Number(n) => match n.as_i64() {
      Some(i) => Value::Integer(i),
      None => Value::Real(n.as_f64().ok_or_else(|| format!("the number {n} cannot be stored"))?),
    },
    J::String(s) => Value::Text(s),
    J::Array(items) => Value::Blob(
      items
        .iter()
        .map(|b| b.as_u64().filter(|b| *b < 256).map(|b| b as u8).ok_or_else(|| format!("an array is a blob and must hold bytes (integers 0 to 255), found {b}")))
        .collect::<Result<_, _>>()?,
    ),
    J::Object(_) => return Err("objects are not supported; bind numbers, strings, booleans, null, or bytes".into()),
  })
}

/// A query's failure, as workerd words SQLite's errors (`<message>[ at offset N]: <CODE>`), with
/// D1's own reasons for refusing a statement or interrupting a query.
fn failure_message(failure: QueryError, timeout: Duration) -> String {
    let error = match failure {
      QueryError::Message(message) => return message,
      QueryError::Sqlite(error) => error,
    };
    let (code, text) = match user_sql::parts(&error) {
      Ok(parts) => parts,
      Err(message) => return message,
    };
    if code.code == rusqlite::ErrorCode::AuthorizationForStatementDenied {
      if let Some(reason) = DENIED.with(|d| d.borrow_mut().take()) {
        return format!("{reason}: SQLITE_AUTH");
      }
    }
    if code.code == rusqlite::ErrorCode::OperationInterrupted {
      return format!("the query ran longer than its limit of {} ms and was interrupted: SQLITE_INTERRUPT", timeout.as_millis());
    }
    format!("{text}: {}", user_sql::code_names(&code))
}

/// The size of the database in bytes.
fn size(c: &Connection) -> rusqlite::Result<i64> {
  c.prepare_cached("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")?.query_row([], |row| row.get(0))
}

/// What running one statement gave: its columns, its rows as JSON, and what it read.
struct Ran {
  columns: Vec<String>,
  rows: String,
  rows_returned: i64,
  scanned: i64,
}

/// Runs one statement (binding `params` if given, which must match its parameters).
fn run_statement(statement: &mut rusqlite::Statement<'_>, params: Option<&[Value]>) -> Result<Ran, QueryError> {
  user_sql::bind(statement, params)?;
  statement.reset_status(StatementStatus::FullscanStep);
  let columns: Vec<String> = statement.column_names().into_iter().map(str::to_owned).collect();
  let mut rows = String::from("[");
  let mut rows_returned = 0i64;
  {
    let mut cursor = statement.raw_query();
    while let Some(row) = cursor.next()? {
      if rows_returned > 0 {
        rows.push(',');
      }
      rows.push('[');
      for i in 0..columns.len() {
        if i > 0 {
          rows.push(',');
        }
        write_value(&mut rows, row.get_ref(i)?);
      }
      rows.push(']');
      rows_returned += 1;
      if rows.len() > MAX_RESULT_BYTES {
        return Err(QueryError::Message(format!("the results are larger than {} MiB; select fewer rows or columns: SQLITE_TOOBIG", MAX_RESULT_BYTES >> 20)));
      }
    }
  }
  rows.push(']');
  let scanned = statement.reset_status(StatementStatus::FullscanStep) as i64;
  Ok(Ran { columns, rows, rows_returned, scanned })
}

/// A SQLite value as D1 answers it: integers and reals as numbers, text as strings, blobs as
/// arrays of bytes.
fn write_value(out: &mut String, value: ValueRef<'_>) {
  match value {
    ValueRef::Null => out.push_str("null"),
    ValueRef::Integer(i) => {
      let _ = write!(out, "{i}");
    }
    ValueRef::Real(f) if f.is_finite() => out.push_str(&serde_json::to_string(&f).unwrap_or_else(|_| "null".into())),
    ValueRef::Real(_) => out.push_str("null"),
    ValueRef::Text(bytes) => out.push_str(&quote(&String::from_utf8_lossy(bytes))),
    ValueRef::Blob(bytes) => {
      out.push('[');
      for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
          out.push(',');
        }
        let _ = write!(out, "{b}");
      }
      out.push(']');
    }
  }
}

/// Runs one query, appending `{ columns, rows, meta }` to `out`.
fn run_query(c: &Connection, query: &Query, out: &mut String) -> Result<(), QueryError> {
  let started = Instant::now();
  let (changes_before, rowid_before, size_before) = (c.total_changes(), c.last_insert_rowid(), size(c)?);
  let ran = user_sql::run_statements(c, &update_delete_limit::rewrite(&query.sql), &query.params, run_statement)?;
  let duration = started.elapsed().as_secs_f64() * 1000.0;
  let changes = c.total_changes() - changes_before;
  let last_row_id = c.last_insert_rowid();
  let size_after = size(c)?;
  let changed_db = changes > 0 || last_row_id != rowid_before || size_after != size_before;
  let columns: Vec<String> = ran.columns.iter().map(|c| quote(c)).collect();
  let _ = write!(
    out,
    "{{\"columns\":[{}],\"rows\":{},\"meta\":{{\"served_by\":\"workerbox\",\"served_by_primary\":true,\"timings\":{{\"sql_duration_ms\":{duration}}},\"duration\":{duration},\"changes\":{changes},\"last_row_id\":{last_row_id},\"changed_db\":{changed_db},\"size_after\":{size_after},\"rows_read\":{},\"rows_written\":{changes}}}}}",
    columns.join(","),
    ran.rows,
    ran.rows_returned.max(ran.scanned),
  );
  Ok(())
}

#[cfg(test)]
mod tests {
  use super::*;

  fn q(sql: &str, params: Vec<Value>) -> Query {
    Query { sql: sql.into(), params }
  }

  fn results(store: &D1Store, queries: &[Query]) -> serde_json::Value {
    serde_json::from_str(&store.query(queries).unwrap()).unwrap()
  }

  fn error(store: &D1Store, queries: &[Query]) -> (usize, String) {
    match store.query(queries) {
      Err(D1Failure::Query { index, message }) => (index, message),
      other => panic!("expected a query error, got {other:?}"),
    }
  }

  #[test]
  fn rows_types_and_meta() {
    let store = D1Store::open(None, D1Store::DEFAULT_TIMEOUT).unwrap();
    let out = results(&store, &[
      q("CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB)", vec![]),
      q("INSERT INTO t (i, r, s, b) VALUES (?, ?, ?, ?)", vec![Value::Integer(1 << 60), Value::Real(1.5), Value::Text("é".into()), Value::Blob(vec![0, 255])]),
      q("SELECT i, r, s, b, NULL AS n FROM t", vec![]),
    ]);
    let insert = &out["results"][1]["meta"];
    assert_eq!(insert["changes"], 1);
    assert_eq!(insert["last_row_id"], 1);
    assert_eq!(insert["changed_db"], true);
    assert_eq!(insert["rows_written"], 1);
    let select = &out["results"][2];
    assert_eq!(select["columns"], serde_json::json!(["i", "r", "s", "b", "n"]));
    assert_eq!(select["rows"], serde_json::json!([[1i64 << 60, 1.5, "é", [0, 255], null]]));
    assert_eq!(select["meta"]["changes"], 0);
    assert_eq!(select["meta"]["changed_db"], false);
    assert!(select["meta"]["size_after"].as_i64().unwrap() > 0);
  }

  #[test]
  fn a_failing_query_rolls_back_the_call_and_is_named() {
    let store = D1Store::open(None, D1Store::DEFAULT_TIMEOUT).unwrap();
    store.query(&[q("CREATE TABLE t (id INTEGER PRIMARY KEY)", vec![])]).unwrap();
    let (index, message) = error(&store, &[q("INSERT INTO t VALUES (1)", vec![]), q("INSERT INTO t VALUES (1)", vec![])]);
    assert_eq!(index, 1);
    assert_eq!(message, "UNIQUE constraint failed: t.id: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)");
    let out = results(&store, &[q("SELECT count(*) AS n FROM t", vec![])]);
    assert_eq!(out["results"][0]["rows"], serde_json::json!([[0]]));
  }

  #[test]
  fn errors_in_workerds_words() {
    let store = D1Store::open(None, D1Store::DEFAULT_TIMEOUT).unwrap();
    assert_eq!(error(&store, &[q("SELECT * FROM nope", vec![])]).1, "no such table: nope: SQLITE_ERROR");
    assert_eq!(error(&store, &[q("SELEC 1", vec![])]).1, "near \"SELEC\": syntax error at offset 0: SQLITE_ERROR");
    assert_eq!(error(&store, &[q("SELECT ?", vec![])]).1, "Wrong number of parameter bindings for SQL query.");
    assert_eq!(error(&store, &[q("SELECT ?; SELECT 1", vec![Value::Integer(1)])]).1, "When executing multiple SQL statements in a single call, only the last statement can have parameters.");
    assert_eq!(error(&store, &[q("-- nothing", vec![])]).1, "SQL code did not contain a statement.");
    assert!(error(&store, &[q("BEGIN", vec![])]).1.contains("BEGIN, COMMIT, ROLLBACK"));
    assert!(error(&store, &[q("PRAGMA synchronous = OFF", vec![])]).1.starts_with("PRAGMA synchronous is not allowed"));
    assert!(error(&store, &[q("ATTACH 'x.db' AS x", vec![])]).1.contains("ATTACH"));
  }

  #[test]
  fn several_statements_in_one_query() {
    let store = D1Store::open(None, D1Store::DEFAULT_TIMEOUT).unwrap();
    let out = results(&store, &[q("CREATE TABLE t (a); INSERT INTO t VALUES (1); SELECT a + ? AS b FROM t;", vec![Value::Integer(2)])]);
    assert_eq!(out["results"][0]["rows"], serde_json::json!([[3]]));
  }

  #[test]
  fn a_runaway_query_is_interrupted() {
    let store = D1Store::open(None, Duration::from_millis(200)).unwrap();
    let started = Instant::now();
    let (_, message) = error(&store, &[q("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n", vec![])]);
    assert!(message.ends_with("SQLITE_INTERRUPT"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The connection works after.
    assert_eq!(results(&store, &[q("SELECT 1 AS one", vec![])])["results"][0]["rows"], serde_json::json!([[1]]));
  }
}
