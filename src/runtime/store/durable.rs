//! Durable Object storage: one SQLite database per object (in memory, or the file
//! `<dir>/<class>/<id>.sqlite3`; or, for a class given as `workerd:<unique key>`, the file
//! `<dir>/<unique key>/<id>.sqlite` laid out as workerd keeps it under wrangler: see
//! [`Layout::Workerd`]). It holds the KV-style API's key/value pairs (table `_cf_KV`,
//! as in workerd), the object's alarm (`_cf_METADATA`), and the user's own tables made through
//! the SQL API (`durable_sql.rs`). Keys are strings stored as their UTF-8 bytes, so `list()`
//! orders them by UTF-8 bytes as workerd does; values are the V8-serialized bytes the worker
//! wrote. Every write call is one transaction, committed before it returns (or a savepoint
//! inside the object's open `transaction()`): the worker's JS sees storage calls complete
//! without yielding to other events, which is what gives a Durable Object workerd's input-gate
//! ordering.

use super::durable_sql;
use super::{prefix_end, Database, StoreError};
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, OptionalExtension};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS _cf_KV (
    key BLOB PRIMARY KEY NOT NULL,  -- the key's UTF-8 bytes
    value BLOB NOT NULL             -- V8-serialized
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS _cf_METADATA (
    key INTEGER PRIMARY KEY,        -- 1: the alarm
    value INTEGER NOT NULL          -- milliseconds since the epoch
  );
";

/// workerd's own schema (src/workerd/util/sqlite-kv.c++, sqlite-metadata.c++): keys are TEXT,
/// the alarm is nanoseconds since the epoch.
const WORKERD_SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS _cf_KV (
    key TEXT PRIMARY KEY,
    value BLOB
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS _cf_METADATA (
    key INTEGER PRIMARY KEY,
    value BLOB
  );
";

/// A namespace's alarm index under workerd (src/workerd/server/alarm-scheduler.c++): workerd
/// reads it when it starts, to know which objects' alarms to run. Made with the two columns the
/// workerd Miniflare 4 runs writes (`INSERT INTO _cf_ALARM VALUES (?, ?)`: a third column breaks
/// it); later workerds add `actor_name` themselves, and rows here name both columns they set.
const WORKERD_ALARMS: &str = "
  CREATE TABLE IF NOT EXISTS _cf_ALARM (
    actor_id TEXT PRIMARY KEY,
    scheduled_time INTEGER
  ) WITHOUT ROWID;
";

/// The `_cf_METADATA` row that holds the alarm's time.
const ALARM: i64 = 1;

/// The class argument that selects workerd's layout: `workerd:<unique key>`.
const WORKERD_PREFIX: &str = "workerd:";

/// How an object's database is laid out.
enum Layout {
  /// workerbox's own: `<class>/<id>.sqlite3`, keys as BLOBs of their UTF-8 bytes, the alarm in
  /// milliseconds.
  Workerbox,
  /// workerd's, as `wrangler dev` keeps it: `<unique key>/<id>.sqlite` (the unique key is
  /// Miniflare's `<script>-<Class>`), keys as TEXT, the alarm in nanoseconds in `_cf_METADATA`
  /// and in the namespace's `metadata.sqlite` (`_cf_ALARM`), so that workerd runs it too.
  Workerd { alarms: Arc<Database>, id: String },
}

/// The folder and file suffix of `class`'s objects under `dir`, and whether it is workerd's layout.
fn place(class: &str) -> (&str, &'static str, bool) {
  match class.strip_prefix(WORKERD_PREFIX) {
    Some(key) => (key, ".sqlite", true),
    None => (class, ".sqlite3", false),
  }
}

const NS_PER_MS: i64 = 1_000_000;

/// The bounds and order of a `list()`.
#[derive(Debug, Default)]
pub struct ListOptions {
  pub start: Option<String>,
  pub start_after: Option<String>,
  pub end: Option<String>,
  pub prefix: Option<String>,
  pub reverse: bool,
  pub limit: Option<u64>,
}

pub struct DurableStorage {
  db: Arc<Database>,
  layout: Layout,
}

impl DurableStorage {
  /// The storage of object `id` of class `class`: in memory without `dir`.
  pub fn open(dir: Option<&Path>, class: &str, id: &str) -> Result<DurableStorage, StoreError> {
    let (folder, suffix, workerd) = place(class);
    let schema = if workerd { WORKERD_SCHEMA } else { SCHEMA };
    let (db, layout) = match dir {
      None => (Database::memory_with(schema, durable_sql::setup), Layout::Workerbox),
      Some(dir) => {
        let db = Database::file(&dir.join(folder), &format!("{id}{suffix}"), schema, Some(durable_sql::setup))?;
        let layout = if workerd {
          Layout::Workerd { alarms: Database::file(&dir.join(folder), "metadata.sqlite", WORKERD_ALARMS, None)?, id: id.to_owned() }
        } else {
          Layout::Workerbox
        };
        (db, layout)
      }
    };
    Ok(DurableStorage { db, layout })
  }

  /// A key as this layout binds it: TEXT under workerd, else a BLOB of its UTF-8 bytes.
  fn key(&self, key: &str) -> Value {
    match self.layout {
      Layout::Workerd { .. } => Value::Text(key.to_owned()),
      Layout::Workerbox => Value::Blob(key.as_bytes().to_vec()),
    }
  }

  /// The ids of the objects of `class` that have a database file under `dir`.
  pub fn stored_ids(dir: &Path, class: &str) -> Vec<String> {
    let (folder, suffix, _) = place(class);
    let folder: PathBuf = dir.join(folder);
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    let mut ids: Vec<String> = entries
      .filter_map(|entry| entry.ok()?.file_name().to_str()?.strip_suffix(suffix).filter(|id| *id != "metadata").map(str::to_owned))
      .collect();
    ids.sort();
    ids
  }

  /// The alarms stored under `dir` for the objects of `class`: `(id, time)` pairs. Each file is
  /// opened only while it is read (a worker start may scan thousands of objects).
  pub fn stored_alarms(dir: &Path, class: &str) -> Vec<(String, i64)> {
    let mut alarms = Vec::new();
    for id in DurableStorage::stored_ids(dir, class) {
      let Ok(storage) = DurableStorage::open(Some(dir), class, &id) else { continue };
      if let Ok(Some(at)) = storage.alarm() {
        alarms.push((id, at));
      }
    }
    alarms
  }

  pub(super) fn database(&self) -> &Database {
    &self.db
  }

  /// A test checkpoint of an in-memory object's storage ([`Database::checkpoint`]).
  pub fn checkpoint(&self, action: super::Checkpoint) -> Result<(), StoreError> {
    self.db.checkpoint(action)
  }

  /// When the alarm is set for (milliseconds since the epoch), if it is.
  pub fn alarm(&self) -> Result<Option<i64>, StoreError> {
    // workerd leaves the row with a NULL value once an alarm is deleted or has run.
    let stored: Option<i64> = self.db.read(|c| c.query_row("SELECT value FROM _cf_METADATA WHERE key = ?1", params![ALARM], |row| row.get::<_, Option<i64>>(0)).optional())?.flatten();
    Ok(match self.layout {
      Layout::Workerd { .. } => stored.map(|ns| ns.div_euclid(NS_PER_MS)),
      Layout::Workerbox => stored,
    })
  }

  /// Sets the alarm for `at`, or removes it (`None`).
  pub fn set_alarm(&self, at: Option<i64>) -> Result<(), StoreError> {
    let stored = match self.layout {
      Layout::Workerd { .. } => at.map(|ms| ms.saturating_mul(NS_PER_MS)),
      Layout::Workerbox => at,
    };
    self.db.write(|c| {
      match stored {
        Some(at) => c.execute("INSERT INTO _cf_METADATA (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value", params![ALARM, at])?,
        None => c.execute("DELETE FROM _cf_METADATA WHERE key = ?1", params![ALARM])?,
      };
      Ok(())
    })?;
    // workerd's namespace index of alarms, which it reads when it starts.
    if let Layout::Workerd { alarms, id } = &self.layout {
      alarms.write(|c| {
        match stored {
          Some(at) => c.execute("INSERT INTO _cf_ALARM (actor_id, scheduled_time) VALUES (?1, ?2) ON CONFLICT (actor_id) DO UPDATE SET scheduled_time = excluded.scheduled_time", params![id, at])?,
          None => c.execute("DELETE FROM _cf_ALARM WHERE actor_id = ?1", params![id])?,
        };
        Ok(())
      })?;
    }
    Ok(())
  }

  /// Opens a transaction (a savepoint, so transactions nest): every storage call until its
  /// [`DurableStorage::commit`] or [`DurableStorage::rollback`] belongs to it.
  pub fn begin(&self) -> Result<(), StoreError> {
    self.db.outside_transaction(|c| c.execute_batch("SAVEPOINT workerbox_txn"))
  }

  /// Keeps what the innermost open transaction wrote.
  pub fn commit(&self) -> Result<(), StoreError> {
    self.db.outside_transaction(|c| c.execute_batch("RELEASE workerbox_txn"))
  }

  /// Undoes what the innermost open transaction wrote, and closes it.
  pub fn rollback(&self) -> Result<(), StoreError> {
    self.db.outside_transaction(|c| c.execute_batch("ROLLBACK TO workerbox_txn; RELEASE workerbox_txn"))
  }

  /// The values of `keys`, in order (`None`: not stored).
  pub fn get(&self, keys: &[String]) -> Result<Vec<Option<Vec<u8>>>, StoreError> {
    self.db.read(|c| {
      let mut statement = c.prepare_cached("SELECT value FROM _cf_KV WHERE key = ?1")?;
      keys
        .iter()
        .map(|key| {
          let mut rows = statement.query(params![self.key(key)])?;
          rows.next()?.map(|row| row.get::<_, Vec<u8>>(0)).transpose()
        })
        .collect()
    })
  }

  /// Writes `puts` and removes `deletes`, all in one transaction. Returns how many of the
  /// deleted keys existed.
  pub fn write(&self, puts: &[(String, Vec<u8>)], deletes: &[String]) -> Result<usize, StoreError> {
    self.db.write(|c| {
      let mut removed = 0;
      {
        let mut delete = c.prepare_cached("DELETE FROM _cf_KV WHERE key = ?1")?;
        for key in deletes {
          removed += delete.execute(params![self.key(key)])?;
        }
      }
      let mut put = c.prepare_cached("INSERT INTO _cf_KV (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value")?;
      for (key, value) in puts {
        put.execute(params![self.key(key), value])?;
      }
      Ok(removed)
    })
  }

  /// The pairs within `options`, in key order (or reversed).
  pub fn list(&self, options: &ListOptions) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let mut clauses: Vec<&str> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    if let Some(start) = &options.start {
      clauses.push("key >= ?");
      values.push(self.key(start));
    }
    if let Some(after) = &options.start_after {
      clauses.push("key > ?");
      values.push(self.key(after));
    }
    if let Some(end) = &options.end {
      clauses.push("key < ?");
      values.push(self.key(end));
    }
    if let Some(prefix) = options.prefix.as_deref().filter(|p| !p.is_empty()) {
      clauses.push("key >= ?");
      values.push(self.key(prefix));
      if let Some(end) = prefix_end(prefix.as_bytes()) {
        clauses.push(match self.layout {
          Layout::Workerd { .. } => "CAST(key AS BLOB) < ?",
          Layout::Workerbox => "key < ?",
        });
        // A TEXT bound must stay TEXT (TEXT sorts before every BLOB); the bytes past a prefix
        // need not be UTF-8, so they are compared as the keys' bytes cast to BLOB there.
        values.push(Value::Blob(end));
      }
    }
    let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let order = if options.reverse { "DESC" } else { "ASC" };
    let limit = options.limit.map_or(-1, |n| n.min(i64::MAX as u64) as i64);
    let sql = format!("SELECT key, value FROM _cf_KV {filter} ORDER BY key {order} LIMIT {limit}");
    self.db.read(|c| {
      let mut statement = c.prepare(&sql)?;
      let rows = statement.query_map(rusqlite::params_from_iter(values.iter()), |row| {
        let key = match row.get_ref(0)? {
          ValueRef::Text(bytes) | ValueRef::Blob(bytes) => String::from_utf8_lossy(bytes).into_owned(),
          _ => String::new(),
        };
        Ok((key, row.get::<_, Vec<u8>>(1)?))
      })?;
      rows.collect()
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn values_round_trip_and_list_follows_utf8_order_and_bounds() {
    let storage = DurableStorage::open(None, "Counter", "abc").unwrap();
    let keys = ["b", "a", "é", "ab", "c"];
    let puts: Vec<(String, Vec<u8>)> = keys.iter().map(|k| (k.to_string(), k.as_bytes().to_vec())).collect();
    storage.write(&puts, &[]).unwrap();
    assert_eq!(storage.get(&["a".into(), "zz".into()]).unwrap(), vec![Some(b"a".to_vec()), None]);
    let names = |o: &ListOptions| storage.list(o).unwrap().into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(names(&ListOptions::default()), ["a", "ab", "b", "c", "é"]);
    assert_eq!(names(&ListOptions { prefix: Some("a".into()), ..Default::default() }), ["a", "ab"]);
    assert_eq!(names(&ListOptions { start: Some("ab".into()), end: Some("c".into()), ..Default::default() }), ["ab", "b"]);
    assert_eq!(names(&ListOptions { reverse: true, limit: Some(2), ..Default::default() }), ["é", "c"]);
    assert_eq!(names(&ListOptions { start_after: Some("b".into()), ..Default::default() }), ["c", "é"]);
    assert_eq!(storage.write(&[], &["a".into(), "nope".into()]).unwrap(), 1);
    storage.delete_all().unwrap();
    assert!(names(&ListOptions::default()).is_empty());
  }

  #[test]
  fn workerds_layout_keeps_text_keys_nanosecond_alarms_and_the_alarm_index() {
    let dir = std::env::temp_dir().join(format!("wb-durable-workerd-{}", std::process::id()));
    let storage = DurableStorage::open(Some(&dir), "workerd:app-Room", "00ff").unwrap();
    let puts: Vec<(String, Vec<u8>)> = ["a", "ab", "b", "é"].iter().map(|k| (k.to_string(), vec![1])).collect();
    storage.write(&puts, &[]).unwrap();
    let names = |o: &ListOptions| storage.list(o).unwrap().into_iter().map(|(k, _)| k).collect::<Vec<_>>();
    assert_eq!(names(&ListOptions { prefix: Some("a".into()), ..Default::default() }), ["a", "ab"]);
    assert_eq!(names(&ListOptions { start: Some("ab".into()), end: Some("é".into()), ..Default::default() }), ["ab", "b"]);
    storage.set_alarm(Some(1_800_000_000_000)).unwrap();
    assert_eq!(storage.alarm().unwrap(), Some(1_800_000_000_000));
    let file = dir.join("app-Room").join("00ff.sqlite");
    let c = rusqlite::Connection::open(&file).unwrap();
    assert_eq!(c.query_row("SELECT typeof(key) FROM _cf_KV LIMIT 1", [], |r| r.get::<_, String>(0)).unwrap(), "text");
    assert_eq!(c.query_row("SELECT value FROM _cf_METADATA WHERE key = 1", [], |r| r.get::<_, i64>(0)).unwrap(), 1_800_000_000_000_000_000);
    let index = rusqlite::Connection::open(dir.join("app-Room").join("metadata.sqlite")).unwrap();
    assert_eq!(index.query_row("SELECT actor_id, scheduled_time FROM _cf_ALARM", [], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).unwrap(), ("00ff".to_owned(), 1_800_000_000_000_000_000));
    assert_eq!(DurableStorage::stored_ids(&dir, "workerd:app-Room"), ["00ff"]);
    storage.set_alarm(None).unwrap();
    assert_eq!(index.query_row("SELECT count(*) FROM _cf_ALARM", [], |r| r.get::<_, i64>(0)).unwrap(), 0);
    let _ = std::fs::remove_dir_all(&dir);
  }

  #[test]
  fn a_file_per_object_keeps_its_data_across_opens() {
    let dir = std::env::temp_dir().join(format!("wb-durable-{}", std::process::id()));
    {
      let storage = DurableStorage::open(Some(&dir), "Room", "0123").unwrap();
      storage.write(&[("k".into(), vec![1, 2])], &[]).unwrap();
    }
    let again = DurableStorage::open(Some(&dir), "Room", "0123").unwrap();
    assert_eq!(again.get(&["k".into()]).unwrap(), vec![Some(vec![1, 2])]);
    again.set_alarm(Some(42)).unwrap();
    DurableStorage::open(Some(&dir), "Room", "0456").unwrap();
    assert_eq!(DurableStorage::stored_ids(&dir, "Room"), ["0123", "0456"]);
    assert_eq!(DurableStorage::stored_alarms(&dir, "Room"), vec![("0123".to_owned(), 42)]);
    assert!(dir.join("Room").join("0123.sqlite3").exists());
    let _ = std::fs::remove_dir_all(&dir);
  }
}
