//! The R2-style object store behind `storage()` and `storage({ dir })`: one table of objects
//! (value, size, MD5 etag, version, upload time, HTTP and custom metadata, and `extra`: the
//! other checksums, storage class and SSE-C key MD5 as JSON), and the answers to
//! a worker's `head`, `get` (ranges, `onlyIf` conditionals), `put` (conditional puts are checked
//! and done in one transaction), `delete` and `list` (prefix, delimiter, cursor, startAfter)
//! calls, with the fields and semantics `lib/bindings.js` gives a handler-backed bucket.
//! Multipart uploads (their tables are made here) are `multipart.rs`'s.
//!
//! Keys are BLOBs of their UTF-8 bytes (any string, the empty one included); `list` orders them
//! by those bytes, as R2 does.

use super::calls::{cursor_for, cursor_key, json, type_error, Args, Failure, JsonObject};
use super::{Database, KeyRange, StoreError};
use crate::runtime::code_cache::hex;
use crate::runtime::types::HostResult;
use bytes::Bytes;
use md5::{Digest, Md5};
use rusqlite::{params, OptionalExtension, Row};
use std::path::Path;
use std::sync::Arc;

const SCHEMA: &str = "
  CREATE TABLE IF NOT EXISTS objects (
    key BLOB PRIMARY KEY NOT NULL,  -- the key's UTF-8 bytes
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,             -- hex MD5 of the value
    version TEXT NOT NULL,
    uploaded INTEGER NOT NULL,      -- milliseconds since the epoch
    http_metadata TEXT NOT NULL,    -- JSON object as the worker sent it
    custom_metadata TEXT NOT NULL,  -- JSON object as the worker sent it
    extra TEXT NOT NULL DEFAULT '{}' -- JSON: { checksums: { sha1…sha512 hex }, storageClass, ssecKeyMd5 }
  );
  -- Multipart uploads (multipart.rs): an upload, and the parts uploaded so far.
  CREATE TABLE IF NOT EXISTS multipart_uploads (
    upload_id TEXT PRIMARY KEY NOT NULL,
    key BLOB NOT NULL,              -- the key's UTF-8 bytes
    http_metadata TEXT NOT NULL,
    custom_metadata TEXT NOT NULL,
    state INTEGER NOT NULL DEFAULT 0,  -- 0 in progress, 1 completed, 2 aborted
    extra TEXT NOT NULL DEFAULT '{}'  -- the object's extra (storage class, SSE-C key MD5)
  );
  CREATE TABLE IF NOT EXISTS multipart_parts (
    upload_id TEXT NOT NULL REFERENCES multipart_uploads(upload_id),
    part_number INTEGER NOT NULL,
    value BLOB NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,             -- opaque, given back by uploadPart
    md5 TEXT NOT NULL,              -- hex MD5 of the value
    PRIMARY KEY (upload_id, part_number)
  );
";

const META_COLUMNS: &str = "key, size, etag, version, uploaded, http_metadata, custom_metadata, extra";

/// Gives a database made before the `extra` columns (of objects and of multipart uploads) those
/// columns (run when a file is opened, before the schema; a database without the tables yet
/// gets them from the schema).
fn add_extra_column(c: &rusqlite::Connection) -> rusqlite::Result<()> {
  for table in ["objects", "multipart_uploads"] {
    let columns: Vec<String> = c.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?.query_map([], |row| row.get(0))?.collect::<Result<_, _>>()?;
    if columns.is_empty() || columns.iter().any(|name| name == "extra") {
      continue;
    }
    match c.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN extra TEXT NOT NULL DEFAULT '{{}}'")) {
      // Another process added it in the meantime.
      Err(e) if e.to_string().contains("duplicate column") => {}
      other => other?,
    }
  }
  Ok(())
}

/// What is known about an object without its value.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectMeta {
  pub key: String,
  pub size: i64,
  pub etag: String,
  pub version: String,
  /// Milliseconds since the epoch.
  pub uploaded: i64,
  pub http_metadata: String,
  pub custom_metadata: String,
  /// JSON object: the checksums besides MD5, the storage class, the SSE-C key's MD5.
  pub extra: String,
}

impl ObjectMeta {
  fn from_row(row: &Row<'_>) -> rusqlite::Result<ObjectMeta> {
    let key: Vec<u8> = row.get(0)?;
    Ok(ObjectMeta {
      key: String::from_utf8_lossy(&key).into_owned(),
      size: row.get(1)?,
      etag: row.get(2)?,
      version: row.get(3)?,
      uploaded: row.get(4)?,
      http_metadata: row.get(5)?,
      custom_metadata: row.get(6)?,
      extra: row.get(7)?,
    })
  }

  /// Stores the object as `value` with these fields (replacing what `key` held).
  pub(super) fn write(&self, c: &rusqlite::Connection, value: &[u8]) -> rusqlite::Result<()> {
    c.prepare_cached("INSERT OR REPLACE INTO objects (key, value, size, etag, version, uploaded, http_metadata, custom_metadata, extra) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?
      .execute(params![self.key.as_bytes(), value, self.size, self.etag, self.version, self.uploaded, self.http_metadata, self.custom_metadata, self.extra])?;
    Ok(())
  }

  /// The object's fields as the worker's R2Object reads them, in `lib/bindings.js`'s order.
  pub(super) fn json(&self) -> JsonObject {
    let mut out = JsonObject::new();
    out
      .string("key", &self.key)
      .string("version", &self.version)
      .number("size", self.size as f64)
      .string("etag", &self.etag)
      .number("uploaded", self.uploaded as f64)
      .raw("httpMetadata", &self.http_metadata)
      .raw("customMetadata", &self.custom_metadata)
      .raw("extra", &self.extra);
    out
  }
}

/// R2's `onlyIf`, checked as R2 (and Miniflare) check it: `etagMatches` lists the strong etags
/// (and `*`) only, as If-Match compares strongly; upload times in milliseconds, or at one-second
/// precision with `secondsGranularity` (conditions given as Headers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conditions {
  pub etag_matches: Option<Vec<String>>,
  pub etag_does_not_match: Option<Vec<String>>,
  /// Milliseconds since the epoch.
  pub uploaded_before: Option<f64>,
  pub uploaded_after: Option<f64>,
  pub seconds_granularity: bool,
}

impl Conditions {
  fn read(args: &Args) -> Result<Option<Conditions>, Failure> {
    let Some(only_if) = args.opt_object("onlyIf")? else { return Ok(None) };
    // A date that did not parse arrives as null (JSON's NaN); the JS handlers read it as 0.
    let time = |name| if only_if.has(name) { only_if.opt_number(name).map(|n| Some(n.unwrap_or(0.0))) } else { Ok(None) };
    Ok(Some(Conditions {
      etag_matches: only_if.opt_strings("etagMatches")?,
      etag_does_not_match: only_if.opt_strings("etagDoesNotMatch")?,
      uploaded_before: time("uploadedBefore")?,
      uploaded_after: time("uploadedAfter")?,
      seconds_granularity: only_if.raw("secondsGranularity") == Some("true"),
    }))
  }

  /// Whether the conditions hold for an object (`None`: it does not exist), as RFC 7232 and R2
  /// have it: If-Modified-Since is passed by a passing If-None-Match, If-Unmodified-Since by a
  /// passing If-Match.
  pub fn hold(&self, meta: Option<&ObjectMeta>) -> bool {
    let Some(meta) = meta else { return self.etag_matches.is_none() && self.uploaded_after.is_none() };
    let includes = |list: &Vec<String>| list.iter().any(|etag| etag == "*" || *etag == meta.etag);
    let truncate = |ms: f64| if self.seconds_granularity { (ms / 1000.0).floor() * 1000.0 } else { ms };
    let uploaded = truncate(meta.uploaded as f64);
    let if_match = self.etag_matches.as_ref().is_none_or(includes);
    let if_none_match = !self.etag_does_not_match.as_ref().is_some_and(includes);
    let if_modified_since = self.uploaded_after.is_none_or(|after| truncate(after) < uploaded || (self.etag_does_not_match.is_some() && if_none_match));
    let if_unmodified_since = self.uploaded_before.is_none_or(|before| uploaded < truncate(before) || (self.etag_matches.is_some() && if_match));
    if_match && if_none_match && if_modified_since && if_unmodified_since
  }
}

/// A byte range as the worker asks for it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Range {
  pub offset: Option<i64>,
  pub length: Option<i64>,
  pub suffix: Option<i64>,
}

impl Range {
  fn read(args: &Args) -> Result<Option<Range>, Failure> {
    let Some(range) = args.opt_object("range")? else { return Ok(None) };
    let field = |name| range.opt_number(name).map(|n| n.map(|n| n as i64));
    Ok(Some(Range { offset: field("offset")?, length: field("length")?, suffix: field("suffix")? }))
  }

  /// `(offset, length)` within an object of `size` bytes; the length may come out negative
  /// (a Range header `bytes=5-2`), which selects nothing.
  fn resolve(self, size: i64) -> (i64, i64) {
    match self.suffix {
      Some(suffix) => {
        let length = suffix.min(size);
        (size - length, length)
      }
      None => {
        let offset = self.offset.unwrap_or(0).min(size);
        (offset, self.length.unwrap_or(size - offset).min(size - offset))
      }
    }
  }
}

/// What `get` found: the object's fields and, if the conditions held, (part of) its value.
pub struct Found {
  pub meta: ObjectMeta,
  /// `None`: the conditions did not hold, so no body.
  pub body: Option<Vec<u8>>,
  /// The range served, when one was asked for.
  pub range: Option<(i64, i64)>,
}

/// A page of a listing.
#[derive(Debug, Default, PartialEq)]
pub struct ObjectPage {
  pub objects: Vec<ObjectMeta>,
  pub delimited_prefixes: Vec<String>,
  pub truncated: bool,
  /// The last key the page covered (an object's, or one inside a delimited prefix).
  pub last: Option<String>,
}

pub struct ObjectStore {
  db: Arc<Database>,
}

/// A new object version: 32 random hex digits (a v4 UUID without its dashes).
pub(super) fn new_version() -> String {
  let mut bytes = [0u8; 16];
  getrandom::fill(&mut bytes).expect("the system's random source");
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  hex(&bytes)
}

impl ObjectStore {
  /// Its database (for test checkpoints, [`super::Database::checkpoint`]).
  pub(crate) fn database(&self) -> &super::Database {
    &self.db
  }

  /// Where the store's database is (in memory, or its file).
  pub(crate) fn location(&self) -> &super::Location {
    self.db.location()
  }

  /// In memory, or in `storage.sqlite3` under `dir`.
  pub fn open(dir: Option<&Path>) -> Result<ObjectStore, StoreError> {
    Ok(ObjectStore { db: Database::open_with(dir, super::StoreKind::Objects, SCHEMA, Some(add_extra_column))? })
  }

  fn meta_in(c: &rusqlite::Connection, key: &str) -> rusqlite::Result<Option<ObjectMeta>> {
    c.prepare_cached(&format!("SELECT {META_COLUMNS} FROM objects WHERE key = ?1"))?.query_row(params![key.as_bytes()], ObjectMeta::from_row).optional()
  }

  pub fn head(&self, key: &str) -> Result<Option<ObjectMeta>, StoreError> {
    self.db.read(|c| Self::meta_in(c, key))
  }

  /// The object under `key`, with the part of its value `range` selects when `conditions` hold.
  pub fn get(&self, key: &str, range: Option<Range>, conditions: Option<&Conditions>) -> Result<Option<Found>, StoreError> {
    self.db.read(|c| {
      let Some(meta) = Self::meta_in(c, key)? else { return Ok(None) };
      if conditions.is_some_and(|conditions| !conditions.hold(Some(&meta))) {
        return Ok(Some(Found { meta, body: None, range: None }));
      }
      let (offset, length) = range.map_or((0, meta.size), |range| range.resolve(meta.size));
      let body = if length > 0 {
        c.prepare_cached("SELECT substr(value, ?2, ?3) FROM objects WHERE key = ?1")?.query_row(params![key.as_bytes(), offset + 1, length], |row| row.get(0))?
      } else {
        Vec::new()
      };
      Ok(Some(Found { meta, body: Some(body), range: range.map(|_| (offset, length)) }))
    })
  }

  /// Stores an object if `conditions` hold for what is there now (checked in the same
  /// transaction); `None` when they did not.
  #[allow(clippy::too_many_arguments)]
  pub fn put(&self, key: &str, value: &[u8], http_metadata: &str, custom_metadata: &str, extra: &str, conditions: Option<&Conditions>, now_ms: f64) -> Result<Option<ObjectMeta>, StoreError> {
    let meta = ObjectMeta {
      key: key.to_owned(),
      size: value.len() as i64,
      etag: hex(&Md5::digest(value)),
      version: new_version(),
      uploaded: now_ms.floor() as i64,
      http_metadata: http_metadata.to_owned(),
      custom_metadata: custom_metadata.to_owned(),
      extra: extra.to_owned(),
    };
    self.db.write(|c| {
      if let Some(conditions) = conditions {
        if !conditions.hold(Self::meta_in(c, key)?.as_ref()) {
          return Ok(None);
        }
      }
      meta.write(c, value)?;
      Ok(Some(meta))
    })
  }

  /// Deletes every key given, in one transaction.
  pub fn delete(&self, keys: &[String]) -> Result<(), StoreError> {
    self.db.write(|c| {
      let mut statement = c.prepare_cached("DELETE FROM objects WHERE key = ?1")?;
      for key in keys {
        statement.execute(params![key.as_bytes()])?;
      }
      Ok(())
    })
  }

  /// Objects whose keys start with `prefix` and sort after `after`, keys sharing a part up to
  /// `delimiter` rolled into one delimited prefix; `limit` counts objects and prefixes together.
  pub fn list(&self, prefix: &str, delimiter: Option<&str>, after: Option<&[u8]>, limit: usize) -> Result<ObjectPage, StoreError> {
    let range = KeyRange::new(prefix.as_bytes(), after);
    let sql = format!("SELECT {META_COLUMNS} FROM objects WHERE {} ORDER BY key", range.condition());
    let delimiter = delimiter.filter(|d| !d.is_empty());
    self.db.read(|c| {
      let mut statement = c.prepare_cached(&sql)?;
      let mut rows = statement.query(params![range.low, range.high])?;
      let mut page = ObjectPage::default();
      while let Some(row) = rows.next()? {
        if page.objects.len() + page.delimited_prefixes.len() >= limit {
          page.truncated = true;
          break;
        }
        let meta = ObjectMeta::from_row(row)?;
        let rest = &meta.key[prefix.len()..];
        match delimiter.and_then(|d| rest.find(d).map(|cut| cut + d.len())) {
          Some(cut) => {
            let rolled = format!("{prefix}{}", &rest[..cut]);
            if page.delimited_prefixes.last() != Some(&rolled) {
              page.delimited_prefixes.push(rolled);
            }
            page.last = Some(meta.key);
          }
          None => {
            page.last = Some(meta.key.clone());
            page.objects.push(meta);
          }
        }
      }
      Ok(page)
    })
  }

  /// Answers the worker's call `method` as `lib/bindings.js` answers it for a handler.
  pub(crate) fn answer(&self, method: &str, args: &Args, bytes: Bytes, now_ms: f64) -> Result<HostResult, Failure> {
    if let Some(answer) = self.answer_multipart(method, args, &bytes, now_ms) {
      return answer;
    }
    match method {
      "head" => match self.head(&args.string("key")?)? {
        Some(meta) => json(meta.json().finish()),
        None => json("null"),
      },
      "get" => {
        let conditions = Conditions::read(args)?;
        let Some(found) = self.get(&args.string("key")?, Range::read(args)?, conditions.as_ref())? else { return json("null") };
        let mut out = found.meta.json();
        if let Some((offset, length)) = found.range {
          out.raw("range", &JsonObject::new().number("offset", offset as f64).number("length", length as f64).finish());
        }
        out.bool("bodyIncluded", found.body.is_some());
        Ok(HostResult { json: out.finish(), bytes: found.body.map(Bytes::from) })
      }
      "put" => {
        let conditions = Conditions::read(args)?;
        let http = args.raw("httpMetadata").unwrap_or("{}");
        let custom = args.raw("customMetadata").unwrap_or("{}");
        let extra = args.raw("extra").unwrap_or("{}");
        match self.put(&args.string("key")?, &bytes, http, custom, extra, conditions.as_ref(), now_ms)? {
          Some(meta) => json(meta.json().finish()),
          None => json("null"),
        }
      }
      "delete" => {
        self.delete(&args.opt_strings("keys")?.unwrap_or_default())?;
        json("null")
      }
      "list" => {
        let prefix = args.opt_string("prefix")?.unwrap_or_default();
        let after = match args.opt_string("cursor")?.filter(|c| !c.is_empty()) {
          Some(cursor) => Some(cursor_key(&cursor, "R2 list")?),
          None => args.opt_string("startAfter")?.map(String::into_bytes),
        };
        let limit = args.opt_number("limit")?.unwrap_or(1000.0).max(0.0) as usize;
        let page = self.list(&prefix, args.opt_string("delimiter")?.as_deref(), after.as_deref(), limit)?;
        let objects: Vec<String> = page.objects.iter().map(|meta| meta.json().finish()).collect();
        let prefixes: Vec<String> = page.delimited_prefixes.iter().map(|p| super::calls::quote(p)).collect();
        let mut out = JsonObject::new();
        out.raw("objects", &format!("[{}]", objects.join(","))).bool("truncated", page.truncated).raw("delimitedPrefixes", &format!("[{}]", prefixes.join(",")));
        if page.truncated {
          out.string("cursor", &cursor_for(page.last.as_deref().unwrap_or_default().as_bytes()));
        }
        json(out.finish())
      }
      _ => Err(type_error(format!("unknown storage operation \"{method}\""))),
    }
  }
}
