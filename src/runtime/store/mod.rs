//! The embedded SQLite storage layer: opening databases and running transactions on them.
//!
//! This module owns the part every embedded store shares (today KV, R2-style objects, the Cache
//! API and D1; later Durable Object storage): a [`Database`] is one SQLite connection,
//! either private and in memory or on a file, with the settings that make a file safe to share:
//!
//! - WAL journal: readers never wait for a writer, and a commit is one append to `<file>-wal`.
//! - `synchronous = FULL`: each commit is fsynced before it is acknowledged, so a write the
//!   worker saw succeed survives not only the process being killed but also an OS crash or a power
//!   cut. (`NORMAL` would survive `kill -9` too, but could lose the last commits on power loss.)
//! - A busy timeout ([`BUSY_TIMEOUT`]): a writer in another process makes this one wait, never
//!   fail, and writes start with `BEGIN IMMEDIATE`, so two writers queue on the write lock instead
//!   of deadlocking on an upgrade from a read.
//!
//! In one process each file is opened once (a registry of open files keyed by canonical path), and
//! every store bound to it shares that connection behind a mutex. The store families (`kv`,
//! `objects`, `cache`, `d1`) keep their tables and SQL to themselves; [`calls`] answers a worker's
//! binding calls from them.

mod cache;
mod calls;
mod d1;
mod durable;
mod durable_sql;
mod kv;
mod multipart;
mod objects;
mod queue;
mod update_delete_limit;
mod user_sql;
#[cfg(test)]
mod tests;

pub use calls::{Clock, Store, StoreKind, Stores};
pub use durable::{DurableStorage, ListOptions};
pub use durable_sql::SqlRows;
pub use queue::{QueueChanges, QueueStore, StoredMessage};

use rusqlite::{Connection, ErrorCode, TransactionBehavior};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long a write waits for another connection (another process) to release the database.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a database lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
  /// A private in-memory database; it ends with the last store that holds it.
  Memory,
  /// A file, shared with every other connection to it, in this process or another.
  File(PathBuf),
}

impl fmt::Display for Location {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match self {
      Location::Memory => write!(f, "(in memory)"),
      Location::File(path) => write!(f, "{}", path.display()),
    }
  }
}

/// A database that could not be opened, read or written: where, what failed ("opened",
/// "written", …), and SQLite's (or the file system's) own words.
#[derive(Debug)]
pub struct StoreError {
  pub location: Location,
  pub failed: &'static str,
  pub cause: String,
}

impl fmt::Display for StoreError {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match &self.location {
      Location::Memory => write!(f, "the in-memory SQLite database could not be {}: {}", self.failed, self.cause),
      Location::File(path) => write!(f, "the SQLite database {} could not be {}: {}", path.display(), self.failed, self.cause),
    }
  }
}

impl std::error::Error for StoreError {}

/// One SQLite connection and where it points. An in-memory database is made on first use, so a
/// store no call ever reaches (every worker has a Cache API store) costs nothing.
pub struct Database {
  location: Location,
  schema: &'static str,
  setup: Option<Setup>,
  connection: Mutex<Option<Connection>>,
  /// Set by [`Database::close`]: every later use fails instead of opening a new database.
  closed: AtomicBool,
}

/// Settings a store family gives each of its connections once, when it is opened (limits,
/// hooks), before its tables are made.
pub type Setup = fn(&Connection) -> rusqlite::Result<()>;

/// The files open in this process, so that two stores on one file share one connection.
fn open_files() -> MutexGuard<'static, HashMap<PathBuf, Weak<Database>>> {
  static FILES: OnceLock<Mutex<HashMap<PathBuf, Weak<Database>>>> = OnceLock::new();
  FILES.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Database {
  /// A new private in-memory database whose tables `schema` makes (on first use).
  pub fn memory(schema: &'static str) -> Arc<Database> {
    Arc::new(Database { location: Location::Memory, schema, setup: None, connection: Mutex::new(None), closed: AtomicBool::new(false) })
  }

  /// As [`Database::memory`], with `setup` run on the connection when it is made.
  pub fn memory_with(schema: &'static str, setup: Setup) -> Arc<Database> {
    Arc::new(Database { location: Location::Memory, schema, setup: Some(setup), connection: Mutex::new(None), closed: AtomicBool::new(false) })
  }

  /// A store family's database: in memory without `dir`, else its file (`kind`'s name) there.
  pub fn open(dir: Option<&Path>, kind: StoreKind, schema: &'static str) -> Result<Arc<Database>, StoreError> {
    Database::open_with(dir, kind, schema, None)
  }

  /// As [`Database::open`], with `setup` run on the connection when it is opened. Every store
  /// of one family passes the same `setup`, and a file holds one family, so a shared connection
  /// has its family's settings.
  pub fn open_with(dir: Option<&Path>, kind: StoreKind, schema: &'static str, setup: Option<Setup>) -> Result<Arc<Database>, StoreError> {
    match dir {
      None => Ok(Arc::new(Database { location: Location::Memory, schema, setup, connection: Mutex::new(None), closed: AtomicBool::new(false) })),
      Some(dir) => Database::file(dir, kind.file_name(), schema, setup),
    }
  }

  /// The database in file `name` of folder `dir` (both made if missing), with its tables made
  /// by `schema`. The same file opened twice in one process gives the same database.
  pub fn file(dir: &Path, name: &str, schema: &'static str, setup: Option<Setup>) -> Result<Arc<Database>, StoreError> {
    let wanted = Location::File(dir.join(name));
    let folder_error = |e: std::io::Error| StoreError { location: wanted.clone(), failed: "opened", cause: format!("its folder {} cannot be made or found: {e}", dir.display()) };
    std::fs::create_dir_all(dir).map_err(folder_error)?;
    let path = dir.canonicalize().map_err(folder_error)?.join(name);
    let mut files = open_files();
    if let Some(open) = files.get(&path).and_then(Weak::upgrade) {
      drop(files);
      if open.schema != schema {
        open.transaction(TransactionBehavior::Immediate, "given its tables", |c| c.execute_batch(schema))?;
      }
      return Ok(open);
    }
    let database = Arc::new(Database::open_file(path.clone(), schema, setup)?);
    files.retain(|_, open| open.strong_count() > 0);
    files.insert(path, Arc::downgrade(&database));
    Ok(database)
  }

  fn open_file(path: PathBuf, schema: &'static str, setup: Option<Setup>) -> Result<Database, StoreError> {
    let location = Location::File(path.clone());
    let fail = |failed| {
      let location = location.clone();
      move |e: rusqlite::Error| StoreError { location, failed, cause: e.to_string() }
    };
    let connection = Connection::open(&path).map_err(fail("opened"))?;
    connection.busy_timeout(BUSY_TIMEOUT).map_err(fail("configured"))?;
    // Switching to WAL takes a lock for a moment; another process opening the file at the same
    // time can make it answer "busy" without waiting, so it is retried up to the busy timeout.
    let started = Instant::now();
    let mode: String = loop {
      match connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)) {
        Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => std::thread::sleep(Duration::from_millis(5)),
        other => break other.map_err(fail("switched to WAL mode"))?,
      }
    };
    if !mode.eq_ignore_ascii_case("wal") {
      return Err(StoreError { location, failed: "switched to WAL mode", cause: format!("SQLite kept the journal mode \"{mode}\"") });
    }
    connection.pragma_update(None, "synchronous", "FULL").map_err(fail("configured"))?;
    if let Some(setup) = setup {
      setup(&connection).map_err(fail("configured"))?;
    }
    let database = Database { location, schema, setup, connection: Mutex::new(Some(connection)), closed: AtomicBool::new(false) };
    database.transaction(TransactionBehavior::Immediate, "given its tables", |c| c.execute_batch(schema))?;
    Ok(database)
  }

  /// Runs `work` in a transaction of `behavior` and commits it (an error rolls it back),
  /// first making the in-memory database if this is its first use. `failed` says what could not
  /// be done in the error.
  fn transaction<T>(&self, behavior: TransactionBehavior, failed: &'static str, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
    self.transaction_with(behavior, failed, |c| work(c).map_err(Failed::Sqlite)).map_err(|e| match e {
      Failed::Store(e) => e,
      Failed::Sqlite(e) => self.error(failed, e),
    })
  }

  /// As [`Database::transaction`], for work that fails with errors of its own: any `Err` of
  /// `work` rolls the transaction back and is returned as it is.
  fn transaction_with<T, E: From<StoreError>>(&self, behavior: TransactionBehavior, failed: &'static str, work: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E> {
    // A panic while holding the connection leaves no transaction open (rusqlite rolls back on
    // drop), so the connection is still usable.
    let mut slot = self.connection()?;
    let connection = slot.as_mut().expect("made by connection()");
    // Inside a transaction the store's user opened (a Durable Object's transaction()), the
    // work is a savepoint in it, kept or undone with it.
    if !connection.is_autocommit() {
      let savepoint = connection.savepoint().map_err(|e| self.error(failed, e))?;
      let value = work(&savepoint)?;
      savepoint.commit().map_err(|e| self.error(failed, e))?;
      return Ok(value);
    }
    let transaction = connection.transaction_with_behavior(behavior).map_err(|e| self.error(failed, e))?;
    let value = work(&transaction)?;
    transaction.commit().map_err(|e| self.error(failed, e))?;
    Ok(value)
  }

  /// The connection, made first if this is an in-memory database's first use.
  fn connection(&self) -> Result<MutexGuard<'_, Option<Connection>>, StoreError> {
    let mut slot = self.connection.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if self.closed.load(Ordering::Acquire) {
      return Err(StoreError { location: self.location.clone(), failed: "used", cause: "the store was closed (its binding's close() was called, or the test file that made it ended)".into() });
    }
    if slot.is_none() {
      let connection = Connection::open_in_memory().map_err(|e| self.error("opened", e))?;
      if let Some(setup) = self.setup {
        setup(&connection).map_err(|e| self.error("configured", e))?;
      }
      connection.execute_batch(self.schema).map_err(|e| self.error("given its tables", e))?;
      *slot = Some(connection);
    }
    Ok(slot)
  }

  /// Runs `work` on the connection as it is, in no transaction of ours: for statements that
  /// open or close the user's own transactions (savepoints).
  pub fn outside_transaction<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
    let slot = self.connection()?;
    work(slot.as_ref().expect("made by connection()")).map_err(|e| self.error("written", e))
  }

  /// Runs `work` in a write transaction and commits it, as [`Database::write`] does, for work
  /// whose errors are its own (an `Err` rolls back and is returned as it is).
  pub fn write_with<T, E: From<StoreError>>(&self, work: impl FnOnce(&Connection) -> Result<T, E>) -> Result<T, E> {
    self.transaction_with(TransactionBehavior::Immediate, "written", work)
  }

  /// A test checkpoint (`isolatedStorage` of workerbox/vitest): `Open` starts a savepoint that
  /// stays open, so every later write is nested in it; `Rollback` undoes what was written since
  /// the latest checkpoint and keeps it open; `Release` closes it, keeping the writes.
  /// Checkpoints nest (the latest one is meant). Only an in-memory database takes them: on a file
  /// the savepoint would hold the write lock other processes wait on.
  pub fn checkpoint(&self, action: Checkpoint) -> Result<(), StoreError> {
    if self.location != Location::Memory {
      return Err(StoreError { location: self.location.clone(), failed: "checkpointed", cause: "only an in-memory database takes checkpoints".into() });
    }
    let sql = match action {
      Checkpoint::Open => "SAVEPOINT workerbox_checkpoint",
      Checkpoint::Rollback => "ROLLBACK TO workerbox_checkpoint",
      Checkpoint::Release => "RELEASE workerbox_checkpoint",
    };
    let slot = self.connection()?;
    slot.as_ref().expect("made by connection()").execute_batch(sql).map_err(|e| self.error("checkpointed", e))
  }

  /// Closes an in-memory database now, giving its memory back, rather than when the last store
  /// holding it is dropped (a JS handle waits for Node's garbage collector, which does not know
  /// its size). Every later use fails with an error that says so. A database on a file is shared
  /// by every store on that file in this process, so it is left open (false).
  pub fn close(&self) -> bool {
    if self.location != Location::Memory {
      return false;
    }
    let mut slot = self.connection.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    self.closed.store(true, Ordering::Release);
    // Dropping the connection closes it (a transaction left open is rolled back).
    drop(slot.take());
    true
  }

  /// The database's location.
  pub fn location(&self) -> &Location {
    &self.location
  }

  /// Runs `work` in a read transaction: it sees one consistent state of the database.
  pub fn read<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
    self.transaction(TransactionBehavior::Deferred, "read", work)
  }

  /// Runs `work` in a write transaction (`BEGIN IMMEDIATE`, so it waits its turn behind other
  /// writers) and commits it; an error rolls everything back. Once this returns `Ok`, the
  /// change is durable.
  pub fn write<T>(&self, work: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
    self.transaction(TransactionBehavior::Immediate, "written", work)
  }

  fn error(&self, failed: &'static str, e: rusqlite::Error) -> StoreError {
    StoreError { location: self.location.clone(), failed, cause: e.to_string() }
  }
}

/// What [`Database::checkpoint`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checkpoint {
  Open,
  Rollback,
  Release,
}

impl Checkpoint {
  pub fn parse(name: &str) -> Option<Checkpoint> {
    match name {
      "open" => Some(Checkpoint::Open),
      "rollback" => Some(Checkpoint::Rollback),
      "release" => Some(Checkpoint::Release),
      _ => None,
    }
  }
}

/// Why a transaction failed: the database, or the work done in it.
enum Failed {
  Store(StoreError),
  Sqlite(rusqlite::Error),
}

impl From<StoreError> for Failed {
  fn from(error: StoreError) -> Self {
    Failed::Store(error)
  }
}

fn is_busy(error: &rusqlite::Error) -> bool {
  matches!(error.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// The first byte string after every string that starts with `prefix` (`None`: no such bound,
/// as for an empty prefix).
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
  let mut end = prefix.to_vec();
  while let Some(last) = end.pop() {
    if last < u8::MAX {
      end.push(last + 1);
      return Some(end);
    }
  }
  None
}

/// The keys (UTF-8 bytes, stored as BLOBs) that start with `prefix` and sort after `after`, as
/// one range the key's index can serve: `key > low` (or `key >= low` when `inclusive`) and
/// `key < high`. No UTF-8 string contains the byte 0xFF, so `X'FF'` is above every key.
pub(crate) struct KeyRange {
  pub low: Vec<u8>,
  pub inclusive: bool,
  pub high: Vec<u8>,
}

impl KeyRange {
  pub fn new(prefix: &[u8], after: Option<&[u8]>) -> KeyRange {
    let high = prefix_end(prefix).unwrap_or_else(|| vec![u8::MAX]);
    match after {
      // Every key after `after` that starts with `prefix` is at least `prefix`, and vice versa.
      Some(after) if after >= prefix => KeyRange { low: after.to_vec(), inclusive: false, high },
      _ => KeyRange { low: prefix.to_vec(), inclusive: true, high },
    }
  }

  /// The SQL condition on column `key`, with the bounds as parameters `?1` and `?2`.
  pub fn condition(&self) -> &'static str {
    if self.inclusive {
      "key >= ?1 AND key < ?2"
    } else {
      "key > ?1 AND key < ?2"
    }
  }
}
