//! The SQL API of a Durable Object's storage (`ctx.storage.sql.exec()`): the user's own SQL on
//! the object's database, under workerd's rules — the storage API's tables (`_cf_…`) are out of
//! reach, transaction statements are refused (the JS API's `transaction()` is the way), no
//! ATTACH, only the pragmas workerd allows, and D1's limits on sizes. A query runs to the end
//! when it is executed (its rows are kept for the cursor), stopping early when the worker's JS
//! is stopped (a limit or dispose) or its rows outgrow [`MAX_RESULT_BYTES`].

use super::durable::DurableStorage;
use super::user_sql::{self, SqlFailure};
use super::StoreError;
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, StatementStatus};
use std::cell::{Cell, RefCell};

/// The most one query's rows may hold; a larger result is an error, not an allocation.
pub const MAX_RESULT_BYTES: usize = 32 << 20;

thread_local! {
  /// Set while the user's SQL is being prepared and run on this thread: the authorizer applies
  /// workerd's rules only then (the storage API's own statements are trusted).
  static USER_SQL: Cell<bool> = const { Cell::new(false) };
  /// Whether the statement running on this thread must stop (the progress handler asks).
  static CANCEL: RefCell<Option<Box<dyn Fn() -> bool>>> = const { RefCell::new(None) };
  /// Why the authorizer last refused a statement on this thread.
  static DENIED: RefCell<Option<String>> = const { RefCell::new(None) };
}

const TRANSACTIONS_REFUSED: &str = "To execute a transaction, use the state.storage.transaction() or state.storage.transactionSync() APIs instead of the SQL BEGIN TRANSACTION or SAVEPOINT statements: they roll back when the closure throws";

/// Pragmas a user may run (workerd's list): reads, a few switches, and lookups of a named table
/// or index (`true`: the argument names an object, which must not be a reserved one).
const ALLOWED_PRAGMAS: &[(&str, bool)] = &[
  ("data_version", false),
  ("page_size", false),
  ("case_sensitive_like", false),
  ("foreign_keys", false),
  ("defer_foreign_keys", false),
  ("ignore_check_constraints", false),
  ("legacy_alter_table", false),
  ("recursive_triggers", false),
  ("reverse_unordered_selects", false),
  ("foreign_key_check", true),
  ("foreign_key_list", true),
  ("index_info", true),
  ("index_list", true),
  ("index_xinfo", true),
  ("table_info", true),
  ("table_xinfo", true),
  ("table_list", false),
  ("quick_check", false),
  ("optimize", false),
];

/// Gives a Durable Object's connection its settings: limits, defensive mode, foreign keys, the
/// authorizer and the progress handler. A database made before the storage API's table was
/// renamed to workerd's name (`_cf_KV`) gets the new name.
pub(super) fn setup(c: &Connection) -> rusqlite::Result<()> {
  let legacy: i64 = c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'durable_kv'", [], |row| row.get(0))?;
  if legacy > 0 {
    c.execute_batch("ALTER TABLE durable_kv RENAME TO _cf_KV")?;
  }
  user_sql::untrusted_settings(c)?;
  c.authorizer(Some(authorize));
  c.progress_handler(1_000, Some(|| CANCEL.with(|cancel| cancel.borrow().as_ref().is_some_and(|stop| stop()))));
  Ok(())
}

/// Whether `name` is one the storage API keeps for itself.
fn reserved(name: &str) -> bool {
  name.len() >= 4 && name[..4].eq_ignore_ascii_case("_cf_")
}

fn refuse(reason: String) -> Authorization {
  DENIED.with(|d| *d.borrow_mut() = Some(reason));
  Authorization::Deny
}

fn authorize(context: AuthContext<'_>) -> Authorization {
  if !USER_SQL.with(Cell::get) {
    return Authorization::Allow;
  }
  let names: Vec<&str> = match context.action {
    AuthAction::Transaction { .. } | AuthAction::Savepoint { .. } => return refuse(TRANSACTIONS_REFUSED.to_owned()),
    AuthAction::Attach { .. } | AuthAction::Detach { .. } => return refuse("not authorized: ATTACH and DETACH are not allowed".to_owned()),
    AuthAction::Pragma { pragma_name, pragma_value } => {
      let name = pragma_name.to_ascii_lowercase();
      let Some((_, names_object)) = ALLOWED_PRAGMAS.iter().find(|(allowed, _)| *allowed == name) else {
        return refuse(format!("not authorized: PRAGMA {pragma_name} is not allowed"));
      };
      if *names_object {
        pragma_value.into_iter().collect()
      } else {
        Vec::new()
      }
    }
    AuthAction::CreateIndex { index_name, table_name } | AuthAction::CreateTempIndex { index_name, table_name } | AuthAction::DropIndex { index_name, table_name } | AuthAction::DropTempIndex { index_name, table_name } => {
      vec![index_name, table_name]
    }
    AuthAction::CreateTrigger { trigger_name, table_name } | AuthAction::CreateTempTrigger { trigger_name, table_name } | AuthAction::DropTrigger { trigger_name, table_name } | AuthAction::DropTempTrigger { trigger_name, table_name } => {
      vec![trigger_name, table_name]
    }
    AuthAction::CreateTable { table_name }
    | AuthAction::CreateTempTable { table_name }
    | AuthAction::DropTable { table_name }
    | AuthAction::DropTempTable { table_name }
    | AuthAction::Delete { table_name }
    | AuthAction::Insert { table_name }
    | AuthAction::Read { table_name, .. }
    | AuthAction::Update { table_name, .. }
    | AuthAction::AlterTable { table_name, .. }
    | AuthAction::Analyze { table_name } => vec![table_name],
    AuthAction::CreateView { view_name } | AuthAction::CreateTempView { view_name } | AuthAction::DropView { view_name } | AuthAction::DropTempView { view_name } => vec![view_name],
    AuthAction::Reindex { index_name } => vec![index_name],
    _ => Vec::new(),
  };
  match names.into_iter().find(|name| reserved(name)) {
    Some(name) => refuse(format!("not authorized: access to {name} is prohibited (names starting with _cf_ are reserved for the storage API)")),
    None => Authorization::Allow,
  }
}

/// What one `exec()` gave: the last statement's columns and rows, and the rows it read and
/// (over all its statements) wrote.
#[derive(Debug, Default)]
pub struct SqlRows {
  pub columns: Vec<String>,
  pub rows: Vec<Vec<Value>>,
  pub rows_read: u64,
  pub rows_written: u64,
}

/// Why an `exec()` failed.
enum ExecError {
  Sql(SqlFailure),
  Store(StoreError),
}

impl From<StoreError> for ExecError {
  fn from(error: StoreError) -> Self {
    ExecError::Store(error)
  }
}

impl From<SqlFailure> for ExecError {
  fn from(error: SqlFailure) -> Self {
    ExecError::Sql(error)
  }
}

/// Marks the user's SQL as running on this thread (and how to stop it) until dropped.
struct UserSql;

impl UserSql {
  fn enter(cancel: Option<Box<dyn Fn() -> bool>>) -> UserSql {
    CANCEL.with(|c| *c.borrow_mut() = cancel);
    UserSql
  }

  /// Runs `work` with the authorizer applying the user's rules.
  fn checked<T>(work: impl FnOnce() -> T) -> T {
    USER_SQL.with(|u| u.set(true));
    let out = work();
    USER_SQL.with(|u| u.set(false));
    out
  }
}

impl Drop for UserSql {
  fn drop(&mut self) {
    USER_SQL.with(|u| u.set(false));
    CANCEL.with(|c| *c.borrow_mut() = None);
  }
}

fn value_size(value: &Value) -> usize {
  match value {
    Value::Text(text) => text.len() + 16,
    Value::Blob(bytes) => bytes.len() + 16,
    _ => 16,
  }
}

fn run_statement(statement: &mut rusqlite::Statement<'_>, params: Option<&[Value]>) -> Result<SqlRows, SqlFailure> {
  user_sql::bind(statement, params)?;
  statement.reset_status(StatementStatus::FullscanStep);
  let columns: Vec<String> = statement.column_names().into_iter().map(str::to_owned).collect();
  let mut rows = Vec::new();
  let mut bytes = 0usize;
  {
    let mut cursor = statement.raw_query();
    while let Some(row) = cursor.next()? {
      let mut values = Vec::with_capacity(columns.len());
      for i in 0..columns.len() {
        let value = Value::from(row.get_ref(i)?);
        bytes += value_size(&value);
        values.push(value);
      }
      rows.push(values);
      if bytes > MAX_RESULT_BYTES {
        return Err(SqlFailure::Message(format!(
          "SQL query result set is too large to fit in memory (over {} MiB): add a LIMIT clause or select fewer columns: SQLITE_TOOBIG",
          MAX_RESULT_BYTES >> 20
        )));
      }
    }
  }
  let scanned = statement.reset_status(StatementStatus::FullscanStep) as u64;
  let rows_read = (rows.len() as u64).max(scanned);
  Ok(SqlRows { columns, rows, rows_read, rows_written: 0 })
}

fn failure_message(error: ExecError) -> String {
  match error {
    ExecError::Store(error) => error.to_string(),
    ExecError::Sql(SqlFailure::Message(message)) => message,
    ExecError::Sql(SqlFailure::Sqlite(error)) => {
      let code = error.sqlite_error_code();
      if code == Some(ErrorCode::AuthorizationForStatementDenied) {
        if let Some(reason) = DENIED.with(|d| d.borrow_mut().take()) {
          return format!("{reason}: SQLITE_AUTH");
        }
      }
      if code == Some(ErrorCode::OperationInterrupted) {
        return "the SQL query was interrupted because the worker was stopped (a limit, or dispose): SQLITE_INTERRUPT".to_owned();
      }
      user_sql::message(&error)
    }
  }
}

impl DurableStorage {
  /// Runs the user's `sql` with `params` (bound to its last statement) as one transaction (or a
  /// savepoint of the open `transaction()`); `cancel` says when to stop a long query. The error
  /// is workerd's message.
  pub fn exec(&self, sql: &str, params: &[Value], cancel: Option<Box<dyn Fn() -> bool>>) -> Result<SqlRows, String> {
    let _user = UserSql::enter(cancel);
    self
      .database()
      .write_with(|c| {
        let before = c.total_changes();
        let mut rows = UserSql::checked(|| user_sql::run_statements(c, sql, params, run_statement))?;
        rows.rows_written = c.total_changes().saturating_sub(before);
        Ok::<_, ExecError>(rows)
      })
      .map_err(failure_message)
  }

  /// The database's size in bytes (`sql.databaseSize`). The storage API's own tables are made
  /// up front here but only on first use in workerd, so each that is still empty (one root page)
  /// is not counted: a fresh object is one page, as in workerd.
  pub fn size(&self) -> Result<u64, StoreError> {
    self.database().read(|c| {
      let (total, page): (i64, i64) = c.query_row("SELECT page_count * page_size, page_size FROM pragma_page_count(), pragma_page_size()", [], |row| Ok((row.get(0)?, row.get(1)?)))?;
      let mut unused = 0;
      for table in ["_cf_KV", "_cf_METADATA"] {
        let exists: i64 = c.query_row("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1", [table], |row| row.get(0))?;
        if exists > 0 && !c.query_row(&format!("SELECT EXISTS (SELECT 1 FROM {table})"), [], |row| row.get::<_, bool>(0))? {
          unused += page;
        }
      }
      Ok::<_, rusqlite::Error>((total - unused).max(page).max(0) as u64)
    })
  }

  /// `deleteAll()`: every table, view and trigger the user made, and every key of the KV API;
  /// the alarm stays, as in workerd.
  pub fn delete_all(&self) -> Result<(), StoreError> {
    self.database().write(|c| {
      let objects: Vec<(String, String)> = {
        let mut statement = c.prepare("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') AND substr(name, 1, 4) NOT IN ('_cf_', '_CF_') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
      };
      // Tables that refer to each other are dropped together: their checks wait for the commit.
      c.execute_batch("PRAGMA defer_foreign_keys = ON")?;
      for (kind, name) in objects {
        let quoted = name.replace('"', "\"\"");
        c.execute_batch(&format!("DROP {} IF EXISTS \"{quoted}\"", kind.to_ascii_uppercase()))?;
      }
      c.execute("DELETE FROM _cf_KV", []).map(|_| ())
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn storage() -> DurableStorage {
    DurableStorage::open(None, "Sql", "id").unwrap()
  }

  #[test]
  fn every_sqlite_type_round_trips() {
    let s = storage();
    s.exec("CREATE TABLE t (i INTEGER, r REAL, x TEXT, b BLOB, n)", &[], None).unwrap();
    let params = [Value::Real(42.0), Value::Real(1.5), Value::Text("héllo".into()), Value::Blob(vec![0, 255]), Value::Null];
    let written = s.exec("INSERT INTO t VALUES (?, ?, ?, ?, ?)", &params, None).unwrap();
    assert_eq!(written.rows_written, 1);
    let rows = s.exec("SELECT i, r, x, b, n, typeof(i) AS ti FROM t", &[], None).unwrap();
    assert_eq!(rows.columns, ["i", "r", "x", "b", "n", "ti"]);
    assert_eq!(
      rows.rows,
      vec![vec![Value::Integer(42), Value::Real(1.5), Value::Text("héllo".into()), Value::Blob(vec![0, 255]), Value::Null, Value::Text("integer".into())]]
    );
  }

  #[test]
  fn workerds_rules_and_wording() {
    let s = storage();
    let error = |sql: &str| s.exec(sql, &[], None).unwrap_err();
    assert_eq!(error("SELECT * FROM nope"), "no such table: nope: SQLITE_ERROR");
    assert!(error("BEGIN TRANSACTION").starts_with("To execute a transaction, use the state.storage.transaction()"), "{}", error("BEGIN"));
    assert!(error("SELECT * FROM _cf_KV").starts_with("not authorized: access to _cf_KV is prohibited"));
    assert!(error("PRAGMA journal_mode = DELETE").starts_with("not authorized: PRAGMA journal_mode"));
    assert!(s.exec("PRAGMA table_list", &[], None).is_ok());
    assert_eq!(
      s.exec("CREATE TABLE a (x); INSERT INTO a VALUES (?); SELECT 1", &[Value::Real(1.0)], None).unwrap_err(),
      "When executing multiple SQL statements in a single call, only the last statement can have parameters."
    );
    // That failing query made nothing: the whole exec() is one transaction.
    assert_eq!(error("SELECT * FROM a"), "no such table: a: SQLITE_ERROR");
    let last = s.exec("CREATE TABLE b (x); INSERT INTO b VALUES (1), (2); SELECT count(*) AS n FROM b WHERE x > ?", &[Value::Real(1.0)], None).unwrap();
    assert_eq!(last.rows, vec![vec![Value::Integer(1)]]);
    assert_eq!(last.rows_written, 2);
  }

  #[test]
  fn savepoints_undo_sql_and_kv_together_and_delete_all_keeps_the_alarm() {
    let s = storage();
    s.exec("CREATE TABLE t (x)", &[], None).unwrap();
    s.begin().unwrap();
    s.exec("INSERT INTO t VALUES (1)", &[], None).unwrap();
    s.write(&[("k".into(), vec![1])], &[]).unwrap();
    s.rollback().unwrap();
    assert!(s.exec("SELECT * FROM t", &[], None).unwrap().rows.is_empty());
    assert_eq!(s.get(&["k".into()]).unwrap(), vec![None]);
    s.begin().unwrap();
    s.exec("INSERT INTO t VALUES (2)", &[], None).unwrap();
    s.commit().unwrap();
    assert_eq!(s.exec("SELECT x FROM t", &[], None).unwrap().rows, vec![vec![Value::Integer(2)]]);
    s.set_alarm(Some(1234)).unwrap();
    s.write(&[("k".into(), vec![1])], &[]).unwrap();
    s.exec("CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p REFERENCES parent(id)); INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1)", &[], None).unwrap();
    s.delete_all().unwrap();
    let left = s.exec("SELECT count(*) FROM sqlite_master WHERE substr(name, 1, 4) <> '_cf_'", &[], None).unwrap();
    assert_eq!(left.rows, vec![vec![Value::Integer(0)]]);
    assert_eq!(s.get(&["k".into()]).unwrap(), vec![None]);
    assert_eq!(s.alarm().unwrap(), Some(1234));
    assert!(s.size().unwrap() > 0);
  }

  #[test]
  fn a_stopped_worker_interrupts_its_query() {
    let s = storage();
    let error = s.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n", &[], Some(Box::new(|| true))).unwrap_err();
    assert!(error.ends_with("SQLITE_INTERRUPT"), "{error}");
  }
}
