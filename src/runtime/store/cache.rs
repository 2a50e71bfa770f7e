//! The Cache API's default store (`caches.default`, `caches.open(name)` when createWorker has
//! no `cache` handler): one table of responses keyed by cache name and URL, each with the time
//! it may be served until, and the answers to the worker's `match`, `put` and `delete` calls.
//!
//! Each worker gets its own in-memory store, as it had its own JS map before. An entry is the
//! response's head (status, statusText, headers, expires, as JSON) and its body; an expired one
//! is never served, and is purged by later writes.

use super::calls::{json, type_error, Args, Failure, JsonObject};
use super::{Database, StoreError};
use crate::runtime::types::HostResult;
use bytes::Bytes;
use rusqlite::{params, OptionalExtension};
use std::path::Path;
use std::sync::Arc;

const SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS responses (
    cache BLOB NOT NULL,    -- the cache's name, UTF-8
    url BLOB NOT NULL,      -- the request URL, UTF-8
    head TEXT NOT NULL,     -- JSON: status, statusText, headers, expires, as the worker sent them
    body BLOB NOT NULL,
    expires REAL NOT NULL,  -- milliseconds since the epoch
    PRIMARY KEY (cache, url)
  );
";

pub struct CacheStore {
  db: Arc<Database>,
}

impl CacheStore {
  /// Its database (to close it, [`super::Database::close`]).
  pub(crate) fn database(&self) -> &super::Database {
    &self.db
  }

  /// Where the store's database is (in memory, or its file).
  pub(crate) fn location(&self) -> &super::Location {
    self.db.location()
  }

  /// In memory, or in `cache.sqlite3` under `dir`.
  pub fn open(dir: Option<&Path>) -> Result<CacheStore, StoreError> {
    Ok(CacheStore { db: Database::open(dir, super::StoreKind::Cache, SCHEMA)? })
  }

  /// The head and body stored for `url` in `cache`, unless it expired by `now_ms`.
  pub fn lookup(&self, cache: &str, url: &str, now_ms: f64) -> Result<Option<(String, Vec<u8>)>, StoreError> {
    self.db.read(|c| {
      c.prepare_cached("SELECT head, body FROM responses WHERE cache = ?1 AND url = ?2 AND expires > ?3")?
        .query_row(params![cache.as_bytes(), url.as_bytes(), now_ms], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()
    })
  }

  /// Stores a response, replacing the one there; purges entries expired by `now_ms`.
  pub fn store(&self, cache: &str, url: &str, head: &str, body: &[u8], expires: f64, now_ms: f64) -> Result<(), StoreError> {
    self.db.write(|c| {
      c.prepare_cached("DELETE FROM responses WHERE expires <= ?1")?.execute(params![now_ms])?;
      c.prepare_cached("INSERT OR REPLACE INTO responses (cache, url, head, body, expires) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![cache.as_bytes(), url.as_bytes(), head, body, expires])?;
      Ok(())
    })
  }

  /// Removes the entry; whether there was one (expired or not, as the JS map answered).
  pub fn remove(&self, cache: &str, url: &str) -> Result<bool, StoreError> {
    self.db.write(|c| Ok(c.prepare_cached("DELETE FROM responses WHERE cache = ?1 AND url = ?2")?.execute(params![cache.as_bytes(), url.as_bytes()])? > 0))
  }

  /// Answers the worker's call `method` as `lib/bindings.js` answers it for a handler.
  pub(crate) fn answer(&self, method: &str, args: &Args, bytes: Bytes, now_ms: f64) -> Result<HostResult, Failure> {
    let (cache, url) = (args.string("cache")?, args.string("url")?);
    match method {
      "match" => match self.lookup(&cache, &url, now_ms)? {
        Some((head, body)) => Ok(HostResult { json: head, bytes: Some(Bytes::from(body)) }),
        None => json("null"),
      },
      "put" => {
        // A response not to be kept (`expires: null`: a cache service is sent it all the same).
        if args.others(&[]).iter().any(|&(name, raw)| name == "expires" && raw == "null") {
          return json("null");
        }
        let mut head = JsonObject::new();
        for (name, value) in args.others(&["cache", "url"]) {
          head.raw(name, value);
        }
        // An entry without a lifetime is kept as the JS store kept it: until deleted.
        let expires = args.opt_number("expires")?.unwrap_or(f64::INFINITY);
        self.store(&cache, &url, &head.finish(), &bytes, expires, now_ms)?;
        json("null")
      }
      "delete" => json(if self.remove(&cache, &url)? { "true" } else { "false" }),
      _ => Err(type_error(format!("unknown cache operation \"{method}\""))),
    }
  }
}
