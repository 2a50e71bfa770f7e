//! What every store that runs a user's SQL shares (D1 and Durable Object SQL): running a query
//! of one or more statements under workerd's rule for parameters (only the last statement may
//! have them), and SQLite's errors in workerd's words:
//! `<SQLite's message>[ at offset N]: <CODE>[ (extended: <EXTENDED CODE>)]`.

use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::limits::Limit;
use rusqlite::types::Value;
use rusqlite::{ffi, Batch, Connection, Statement};
use std::fmt::Write;

/// Why a user's query failed: SQLite's error, or a rule of ours (in its final wording).
pub(crate) enum SqlFailure {
  Sqlite(rusqlite::Error),
  Message(String),
}

impl From<rusqlite::Error> for SqlFailure {
  fn from(error: rusqlite::Error) -> Self {
    SqlFailure::Sqlite(error)
  }
}

/// The settings of a connection that runs a user's SQL: D1's documented limits (2 MB rows,
/// strings and blobs; 100 KB statements; 100 columns and 100 bound parameters; no attached
/// databases), which workerd also gives Durable Objects' SQL, defensive mode (no writes to the
/// schema table or other ways to corrupt the file), and foreign keys enforced.
pub(crate) fn untrusted_settings(c: &Connection) -> rusqlite::Result<()> {
  for (limit, value) in [
    (Limit::SQLITE_LIMIT_LENGTH, 2_000_000),
    (Limit::SQLITE_LIMIT_SQL_LENGTH, 100_000),
    (Limit::SQLITE_LIMIT_COLUMN, 100),
    (Limit::SQLITE_LIMIT_VARIABLE_NUMBER, 100),
    (Limit::SQLITE_LIMIT_EXPR_DEPTH, 100),
    (Limit::SQLITE_LIMIT_ATTACHED, 0),
    (Limit::SQLITE_LIMIT_TRIGGER_DEPTH, 10),
  ] {
    c.set_limit(limit, value)?;
  }
  c.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
  c.pragma_update(None, "foreign_keys", true)
}

/// Whether `sql` is surely one statement (no `;` but a final one, no comments), which may then
/// be prepared once and cached; anything else is split statement by statement.
fn single_statement(sql: &str) -> bool {
  let body = sql.trim_end().trim_end_matches(';');
  !body.contains(';') && !body.contains("--") && !body.contains("/*") && !body.trim().is_empty()
}

/// Runs the statements of `sql` in order with `run(statement, params)`: the statement that has
/// parameters gets `params` and must be the last; what the last statement gave is returned.
pub(crate) fn run_statements<T>(c: &Connection, sql: &str, params: &[Value], mut run: impl FnMut(&mut Statement<'_>, Option<&[Value]>) -> Result<T, SqlFailure>) -> Result<T, SqlFailure> {
  if single_statement(sql) {
    let mut statement = c.prepare_cached(sql)?;
    return run(&mut statement, Some(params));
  }
  let mut batch = Batch::new(c, sql);
  let mut last = None;
  let mut bound = false;
  while let Some(mut statement) = batch.next()? {
    if bound {
      return Err(SqlFailure::Message("When executing multiple SQL statements in a single call, only the last statement can have parameters.".into()));
    }
    let given = if statement.parameter_count() > 0 {
      bound = true;
      Some(params)
    } else {
      None
    };
    last = Some(run(&mut statement, given)?);
  }
  if !bound && !params.is_empty() {
    return Err(SqlFailure::Message("Wrong number of parameter bindings for SQL query.".into()));
  }
  last.ok_or_else(|| SqlFailure::Message("SQL code did not contain a statement.".into()))
}

/// Binds `params` (all of the statement's parameters, in order) to `statement`.
pub(crate) fn bind(statement: &mut Statement<'_>, params: Option<&[Value]>) -> Result<(), SqlFailure> {
  let params = params.unwrap_or(&[]);
  if statement.parameter_count() != params.len() {
    return Err(SqlFailure::Message("Wrong number of parameter bindings for SQL query.".into()));
  }
  for (i, value) in params.iter().enumerate() {
    statement.raw_bind_parameter(i + 1, value)?;
  }
  Ok(())
}

/// The failure code and SQLite's message of `error` (with the offset of a syntax error), or, for
/// an error that is not SQLite's own, the whole message to give.
pub(crate) fn parts(error: &rusqlite::Error) -> Result<(ffi::Error, String), String> {
  match error {
    rusqlite::Error::SqliteFailure(code, message) => Ok((*code, message.clone().unwrap_or_else(|| code.to_string()))),
    rusqlite::Error::SqlInputError { error, msg, offset, .. } => Ok((*error, format!("{msg} at offset {offset}"))),
    rusqlite::Error::ToSqlConversionFailure(e) => Err(format!("a parameter could not be bound: {e}")),
    other => Err(other.to_string()),
  }
}

/// `SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)`: the primary code's name, and the
/// extended code's when it says more.
pub(crate) fn code_names(code: &ffi::Error) -> String {
  let primary = code.extended_code & 0xff;
  let mut out = primary_name(primary);
  if code.extended_code != primary {
    if let Some(name) = extended_name(code.extended_code) {
      let _ = write!(out, " (extended: {name})");
    }
  }
  out
}

/// A whole error as workerd words it.
pub(crate) fn message(error: &rusqlite::Error) -> String {
  match parts(error) {
    Ok((code, text)) => format!("{text}: {}", code_names(&code)),
    Err(message) => message,
  }
}

fn primary_name(code: i32) -> String {
  let name = match code {
    ffi::SQLITE_ERROR => "SQLITE_ERROR",
    ffi::SQLITE_INTERNAL => "SQLITE_INTERNAL",
    ffi::SQLITE_PERM => "SQLITE_PERM",
    ffi::SQLITE_ABORT => "SQLITE_ABORT",
    ffi::SQLITE_BUSY => "SQLITE_BUSY",
    ffi::SQLITE_LOCKED => "SQLITE_LOCKED",
    ffi::SQLITE_NOMEM => "SQLITE_NOMEM",
    ffi::SQLITE_READONLY => "SQLITE_READONLY",
    ffi::SQLITE_INTERRUPT => "SQLITE_INTERRUPT",
    ffi::SQLITE_IOERR => "SQLITE_IOERR",
    ffi::SQLITE_CORRUPT => "SQLITE_CORRUPT",
    ffi::SQLITE_NOTFOUND => "SQLITE_NOTFOUND",
    ffi::SQLITE_FULL => "SQLITE_FULL",
    ffi::SQLITE_CANTOPEN => "SQLITE_CANTOPEN",
    ffi::SQLITE_PROTOCOL => "SQLITE_PROTOCOL",
    ffi::SQLITE_EMPTY => "SQLITE_EMPTY",
    ffi::SQLITE_SCHEMA => "SQLITE_SCHEMA",
    ffi::SQLITE_TOOBIG => "SQLITE_TOOBIG",
    ffi::SQLITE_CONSTRAINT => "SQLITE_CONSTRAINT",
    ffi::SQLITE_MISMATCH => "SQLITE_MISMATCH",
    ffi::SQLITE_MISUSE => "SQLITE_MISUSE",
    ffi::SQLITE_NOLFS => "SQLITE_NOLFS",
    ffi::SQLITE_AUTH => "SQLITE_AUTH",
    ffi::SQLITE_FORMAT => "SQLITE_FORMAT",
    ffi::SQLITE_RANGE => "SQLITE_RANGE",
    ffi::SQLITE_NOTADB => "SQLITE_NOTADB",
    other => return format!("SQLITE_UNKNOWN_ERROR_CODE({other})"),
  };
  name.to_owned()
}

/// The extended codes a user's SQL commonly meets (constraints, mostly).
fn extended_name(code: i32) -> Option<&'static str> {
  Some(match code {
    ffi::SQLITE_CONSTRAINT_CHECK => "SQLITE_CONSTRAINT_CHECK",
    ffi::SQLITE_CONSTRAINT_COMMITHOOK => "SQLITE_CONSTRAINT_COMMITHOOK",
    ffi::SQLITE_CONSTRAINT_DATATYPE => "SQLITE_CONSTRAINT_DATATYPE",
    ffi::SQLITE_CONSTRAINT_FOREIGNKEY => "SQLITE_CONSTRAINT_FOREIGNKEY",
    ffi::SQLITE_CONSTRAINT_FUNCTION => "SQLITE_CONSTRAINT_FUNCTION",
    ffi::SQLITE_CONSTRAINT_NOTNULL => "SQLITE_CONSTRAINT_NOTNULL",
    ffi::SQLITE_CONSTRAINT_PINNED => "SQLITE_CONSTRAINT_PINNED",
    ffi::SQLITE_CONSTRAINT_PRIMARYKEY => "SQLITE_CONSTRAINT_PRIMARYKEY",
    ffi::SQLITE_CONSTRAINT_ROWID => "SQLITE_CONSTRAINT_ROWID",
    ffi::SQLITE_CONSTRAINT_TRIGGER => "SQLITE_CONSTRAINT_TRIGGER",
    ffi::SQLITE_CONSTRAINT_UNIQUE => "SQLITE_CONSTRAINT_UNIQUE",
    ffi::SQLITE_CONSTRAINT_VTAB => "SQLITE_CONSTRAINT_VTAB",
    ffi::SQLITE_ERROR_MISSING_COLLSEQ => "SQLITE_ERROR_MISSING_COLLSEQ",
    ffi::SQLITE_ERROR_RETRY => "SQLITE_ERROR_RETRY",
    ffi::SQLITE_BUSY_TIMEOUT => "SQLITE_BUSY_TIMEOUT",
    ffi::SQLITE_BUSY_SNAPSHOT => "SQLITE_BUSY_SNAPSHOT",
    ffi::SQLITE_ABORT_ROLLBACK => "SQLITE_ABORT_ROLLBACK",
    _ => return None,
  })
}

