//! The KV store behind `kv()` and `kv({ dir })`: one table of key, value, expiration and
//! metadata, and the answers to a worker's `get`, `put`, `delete` and `list` calls.
//!
//! Keys are stored as BLOBs of their UTF-8 bytes, so any string (NUL, `__proto__`, emoji) is a
//! key like any other, and `list` orders them by UTF-8 bytes, as production KV does. Expired
//! entries are never returned and are purged by later writes. Metadata is kept as the JSON text
//! the worker sent, so it comes back exactly as given.

use super::calls::{cursor_for, cursor_key, json, number, type_error, Args, Failure, JsonObject};
use super::{Database, KeyRange, StoreError};
use crate::runtime::types::HostResult;
use bytes::Bytes;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{params, OptionalExtension};
use std::path::Path;
use std::sync::Arc;

const SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS kv (
    key BLOB PRIMARY KEY NOT NULL,  -- the key's UTF-8 bytes
    value BLOB NOT NULL,
    expiration NUMERIC,             -- seconds since the epoch; NULL: never expires
    metadata TEXT                   -- JSON as the worker sent it; NULL: none
  );
  CREATE INDEX IF NOT EXISTS kv_expiration ON kv (expiration) WHERE expiration IS NOT NULL;
";

/// One stored value.
#[derive(Debug, PartialEq)]
pub struct KvEntry {
  pub value: Vec<u8>,
  /// Seconds since the epoch.
  pub expiration: Option<f64>,
  /// JSON text.
  pub metadata: Option<String>,
}

/// One key of a `list` page.
#[derive(Debug, PartialEq)]
pub struct KvListed {
  pub name: String,
  pub expiration: Option<f64>,
  pub metadata: Option<String>,
}

/// A page of keys; `complete` when no live key follows it.
#[derive(Debug, PartialEq)]
pub struct KvPage {
  pub keys: Vec<KvListed>,
  pub complete: bool,
}

pub struct KvStore {
  db: Arc<Database>,
}

fn number_of(value: ValueRef<'_>) -> Option<f64> {
  match value {
    ValueRef::Integer(n) => Some(n as f64),
    ValueRef::Real(n) => Some(n),
    _ => None,
  }
}

/// Seconds as SQLite stores them: whole seconds as integers.
fn seconds_value(seconds: f64) -> Value {
  if seconds.fract() == 0.0 && seconds.abs() < 9.0e15 {
    Value::Integer(seconds as i64)
  } else {
    Value::Real(seconds)
  }
}

impl KvStore {
  /// Its database (for test checkpoints, [`super::Database::checkpoint`]).
  pub(crate) fn database(&self) -> &super::Database {
    &self.db
  }

  /// Where the store's database is (in memory, or its file).
  pub(crate) fn location(&self) -> &super::Location {
    self.db.location()
  }

  /// In memory, or in `kv.sqlite3` under `dir`.
  pub fn open(dir: Option<&Path>) -> Result<KvStore, StoreError> {
    Ok(KvStore { db: Database::open(dir, super::StoreKind::Kv, SCHEMA)? })
  }

  /// The live entry of `key` at `now` (seconds since the epoch).
  pub fn get(&self, key: &str, now: f64) -> Result<Option<KvEntry>, StoreError> {
    self.db.read(|c| {
      c.prepare_cached("SELECT value, expiration, metadata FROM kv WHERE key = ?1 AND (expiration IS NULL OR expiration > ?2)")?
        .query_row(params![key.as_bytes(), now], |row| Ok(KvEntry { value: row.get(0)?, expiration: number_of(row.get_ref(1)?), metadata: row.get(2)? }))
        .optional()
    })
  }

  /// Stores `value` under `key`, replacing what was there; also purges entries expired by `now`.
  pub fn put(&self, key: &str, value: &[u8], expiration: Option<f64>, metadata: Option<&str>, now: f64) -> Result<(), StoreError> {
    self.db.write(|c| {
      c.prepare_cached("DELETE FROM kv WHERE expiration IS NOT NULL AND expiration <= ?1")?.execute(params![now])?;
      c.prepare_cached("INSERT OR REPLACE INTO kv (key, value, expiration, metadata) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![key.as_bytes(), value, expiration.map(seconds_value), metadata])?;
      Ok(())
    })
  }

  pub fn delete(&self, key: &str) -> Result<(), StoreError> {
    self.db.write(|c| c.prepare_cached("DELETE FROM kv WHERE key = ?1")?.execute(params![key.as_bytes()]).map(drop))
  }

  /// Up to `limit` live keys starting with `prefix` and sorting after `after`, in UTF-8 byte order.
  pub fn list(&self, prefix: &str, limit: usize, after: Option<&[u8]>, now: f64) -> Result<KvPage, StoreError> {
    let range = KeyRange::new(prefix.as_bytes(), after);
    let sql = format!("SELECT key, expiration, metadata FROM kv WHERE {} AND (expiration IS NULL OR expiration > ?3) ORDER BY key LIMIT ?4", range.condition());
    self.db.read(|c| {
      let mut statement = c.prepare_cached(&sql)?;
      let mut rows = statement.query(params![range.low, range.high, now, limit as i64 + 1])?;
      let mut keys = Vec::new();
      while let Some(row) = rows.next()? {
        if keys.len() == limit {
          return Ok(KvPage { keys, complete: false });
        }
        let name: Vec<u8> = row.get(0)?;
        keys.push(KvListed { name: String::from_utf8_lossy(&name).into_owned(), expiration: number_of(row.get_ref(1)?), metadata: row.get(2)? });
      }
      Ok(KvPage { keys, complete: true })
    })
  }

  /// Answers the worker's call `method` as `lib/bindings.js` answers it for a handler.
  pub(crate) fn answer(&self, method: &str, args: &Args, bytes: Bytes, now_ms: f64) -> Result<HostResult, Failure> {
    let now = now_ms / 1000.0;
    match method {
      "get" => {
        let Some(entry) = self.get(&args.string("key")?, now)? else { return json("null") };
        let head = JsonObject::new()
          .raw("metadata", entry.metadata.as_deref().unwrap_or("null"))
          .raw("expiration", &entry.expiration.map_or_else(|| "null".into(), number))
          .finish();
        Ok(HostResult { json: head, bytes: Some(Bytes::from(entry.value)) })
      }
      "put" => {
        self.put(&args.string("key")?, &bytes, args.opt_number("expiration")?, args.raw("metadata"), now)?;
        json("null")
      }
      "delete" => {
        self.delete(&args.string("key")?)?;
        json("null")
      }
      "list" => {
        let prefix = args.opt_string("prefix")?.unwrap_or_default();
        let limit = args.opt_number("limit")?.unwrap_or(1000.0).max(1.0) as usize;
        let after = args.opt_string("cursor")?.filter(|c| !c.is_empty()).map(|c| cursor_key(&c, "KV list")).transpose()?;
        let page = self.list(&prefix, limit, after.as_deref(), now)?;
        let keys: Vec<String> = page
          .keys
          .iter()
          .map(|k| {
            let mut key = JsonObject::new();
            key.string("name", &k.name);
            if let Some(expiration) = k.expiration {
              key.number("expiration", expiration);
            }
            if let Some(metadata) = &k.metadata {
              key.raw("metadata", metadata);
            }
            key.finish()
          })
          .collect();
        let mut out = JsonObject::new();
        out.raw("keys", &format!("[{}]", keys.join(","))).bool("list_complete", page.complete);
        if !page.complete {
          let last = page.keys.last().map_or(&[][..], |k| k.name.as_bytes());
          out.string("cursor", &cursor_for(last));
        }
        json(out.finish())
      }
      _ => Err(type_error(format!("unknown KV operation \"{method}\""))),
    }
  }
}
