//! R2 multipart uploads on the embedded object store (`storage()`, `storage({ dir })`): an
//! upload's row (key, the create call's HTTP and custom metadata, its state), its parts' rows
//! (bytes, size, MD5, an opaque etag), and the answers to a worker's `createMultipartUpload`,
//! `uploadPart`, `completeMultipartUpload` and `abortMultipartUpload` calls with R2's checks
//! and errors (codes and messages as R2 gives them; workerd shows them as
//! `"<action>: <message> (<code>)"`).
//!
//! Completing an upload writes one ordinary row of `objects` holding the parts' bytes end to end
//! (so `get` and its ranges work as for any object) with R2's multipart etag, the hex MD5 of
//! the parts' MD5s followed by `-<part count>`, and drops the parts.

use super::calls::{json, Args, Failure, JsonObject};
use super::objects::{new_version, ObjectMeta, ObjectStore};
use crate::runtime::code_cache::hex;
use crate::runtime::types::{HostResult, JsErrorInfo};
use bytes::Bytes;
use md5::{Digest, Md5};
use rusqlite::{params, OptionalExtension};

// Its tables, `multipart_uploads` and `multipart_parts`, are made with the objects table
// (`objects.rs`'s schema).

/// Every part but the last must be at least this big (R2's limit).
pub const MIN_PART_SIZE: i64 = 5 * 1024 * 1024;

const IN_PROGRESS: i64 = 0;
const COMPLETED: i64 = 1;
const ABORTED: i64 = 2;

/// An error R2 answers a multipart call with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum R2Error {
  NoSuchUpload,
  InvalidPart,
  EntityTooSmall,
  BadUpload,
  Internal,
}

impl R2Error {
  pub fn code(self) -> u32 {
    match self {
      R2Error::NoSuchUpload => 10024,
      R2Error::InvalidPart => 10025,
      R2Error::EntityTooSmall => 10011,
      R2Error::BadUpload => 10048,
      R2Error::Internal => 10001,
    }
  }

  pub fn message(self) -> &'static str {
    match self {
      R2Error::NoSuchUpload => "The specified multipart upload does not exist.",
      R2Error::InvalidPart => "One or more of the specified parts could not be found.",
      R2Error::EntityTooSmall => "Your proposed upload is smaller than the minimum allowed object size.",
      R2Error::BadUpload => "There was a problem with the multipart upload.",
      R2Error::Internal => "We encountered an internal error. Please try again.",
    }
  }

  fn failure(self, action: &str) -> Failure {
    Failure::Js(JsErrorInfo::new("Error", format!("{action}: {} ({})", self.message(), self.code())))
  }
}

/// `bytes` random bytes in lowercase hex.
fn random_hex(bytes: usize) -> String {
  let mut buffer = vec![0u8; bytes];
  getrandom::fill(&mut buffer).expect("the system's random source");
  hex(&buffer)
}

/// R2's etag of a multipart object: the MD5 of the parts' MD5s (as bytes), then `-<count>`.
pub fn multipart_etag(part_md5s: &[String]) -> String {
  let mut hash = Md5::new();
  for md5 in part_md5s {
    let bytes: Vec<u8> = (0..md5.len() / 2).filter_map(|i| u8::from_str_radix(&md5[i * 2..i * 2 + 2], 16).ok()).collect();
    hash.update(&bytes);
  }
  format!("{}-{}", hex(&hash.finalize()), part_md5s.len())
}

/// An upload's state, HTTP and custom metadata, and extra (the object's storage class, SSE-C key MD5).
fn state_of(c: &rusqlite::Connection, key: &str, upload_id: &str) -> rusqlite::Result<Option<(i64, String, String, String)>> {
  c.prepare_cached("SELECT state, http_metadata, custom_metadata, extra FROM multipart_uploads WHERE upload_id = ?1 AND key = ?2")?
    .query_row(params![upload_id, key.as_bytes()], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))
    .optional()
}

impl ObjectStore {
  /// Starts an upload of `key`; its id.
  pub fn create_multipart(&self, key: &str, http_metadata: &str, custom_metadata: &str, extra: &str) -> Result<String, super::StoreError> {
    let upload_id = random_hex(32);
    self.database().write(|c| {
      c.prepare_cached("INSERT INTO multipart_uploads (upload_id, key, http_metadata, custom_metadata, extra, state) VALUES (?1, ?2, ?3, ?4, ?5, 0)")?
        .execute(params![upload_id, key.as_bytes(), http_metadata, custom_metadata, extra])?;
      Ok(())
    })?;
    Ok(upload_id)
  }

  /// Stores part `part_number` of an upload in progress (replacing one of that number); its etag.
  pub fn upload_part(&self, key: &str, upload_id: &str, part_number: i64, value: &[u8]) -> Result<Result<String, R2Error>, super::StoreError> {
    let etag = random_hex(16);
    let md5 = hex(&Md5::digest(value));
    self.database().write(|c| {
      if state_of(c, key, upload_id)?.map(|s| s.0) != Some(IN_PROGRESS) {
        return Ok(Err(R2Error::NoSuchUpload));
      }
      c.prepare_cached("INSERT OR REPLACE INTO multipart_parts (upload_id, part_number, value, size, etag, md5) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
        .execute(params![upload_id, part_number, value, value.len() as i64, etag, md5])?;
      Ok(Ok(etag.clone()))
    })
  }

  /// Makes the object of an upload in progress from the parts named (number and etag, in the
  /// order given), checked as R2 checks them; the new object.
  pub fn complete_multipart(&self, key: &str, upload_id: &str, selected: &[(i64, String)], now_ms: f64) -> Result<Result<ObjectMeta, R2Error>, super::StoreError> {
    self.database().write(|c| {
      let Some((state, http_metadata, custom_metadata, extra)) = state_of(c, key, upload_id)? else { return Ok(Err(R2Error::NoSuchUpload)) };
      if state != IN_PROGRESS {
        return Ok(Err(R2Error::NoSuchUpload));
      }
      let mut seen = std::collections::HashSet::new();
      if !selected.iter().all(|(number, _)| seen.insert(*number)) {
        return Ok(Err(R2Error::Internal));
      }
      // (part number, size, etag, md5) of every part uploaded.
      let mut uploaded = std::collections::HashMap::new();
      {
        let mut statement = c.prepare_cached("SELECT part_number, size, etag, md5 FROM multipart_parts WHERE upload_id = ?1")?;
        let mut rows = statement.query(params![upload_id])?;
        while let Some(row) = rows.next()? {
          let number: i64 = row.get(0)?;
          uploaded.insert(number, (row.get::<_, i64>(1)?, row.get::<_, String>(2)?, row.get::<_, String>(3)?));
        }
      }
      let mut parts = Vec::with_capacity(selected.len());
      for (number, etag) in selected {
        match uploaded.get(number) {
          Some((size, stored, md5)) if stored == etag => parts.push((*number, *size, md5.clone())),
          _ => return Ok(Err(R2Error::InvalidPart)),
        }
      }
      // Every part but the last as given is big enough; then, in part order, every part but
      // the last has one size and the last is no bigger.
      if parts.iter().rev().skip(1).any(|(_, size, _)| *size < MIN_PART_SIZE) {
        return Ok(Err(R2Error::EntityTooSmall));
      }
      parts.sort_by_key(|(number, _, _)| *number);
      if let Some(((_, last, _), others)) = parts.split_last() {
        let first = others.first().map_or(*last, |p| p.1);
        if others.iter().any(|(_, size, _)| *size != first || *size < MIN_PART_SIZE) || (!others.is_empty() && *last > first) {
          return Ok(Err(R2Error::BadUpload));
        }
      }
      let mut value = Vec::with_capacity(parts.iter().map(|p| p.1 as usize).sum());
      {
        let mut statement = c.prepare_cached("SELECT value FROM multipart_parts WHERE upload_id = ?1 AND part_number = ?2")?;
        for (number, _, _) in &parts {
          let bytes: Vec<u8> = statement.query_row(params![upload_id, number], |row| row.get(0))?;
          value.extend_from_slice(&bytes);
        }
      }
      let md5s: Vec<String> = parts.iter().map(|p| p.2.clone()).collect();
      let meta = ObjectMeta {
        key: key.to_owned(),
        size: value.len() as i64,
        etag: multipart_etag(&md5s),
        version: new_version(),
        uploaded: now_ms.floor() as i64,
        http_metadata,
        custom_metadata,
        extra,
      };
      meta.write(c, &value)?;
      c.prepare_cached("DELETE FROM multipart_parts WHERE upload_id = ?1")?.execute(params![upload_id])?;
      c.prepare_cached("UPDATE multipart_uploads SET state = ?2 WHERE upload_id = ?1")?.execute(params![upload_id, COMPLETED])?;
      Ok(Ok(meta))
    })
  }

  /// Drops an upload's parts; an upload already completed or aborted is left as it is.
  pub fn abort_multipart(&self, key: &str, upload_id: &str) -> Result<Result<(), R2Error>, super::StoreError> {
    self.database().write(|c| {
      match state_of(c, key, upload_id)? {
        None => return Ok(Err(R2Error::NoSuchUpload)),
        Some((state, ..)) if state != IN_PROGRESS => return Ok(Ok(())),
        Some(_) => {}
      }
      c.prepare_cached("DELETE FROM multipart_parts WHERE upload_id = ?1")?.execute(params![upload_id])?;
      c.prepare_cached("UPDATE multipart_uploads SET state = ?2 WHERE upload_id = ?1")?.execute(params![upload_id, ABORTED])?;
      Ok(Ok(()))
    })
  }

  /// Answers a multipart call, or `None` for a method that is not one.
  pub(crate) fn answer_multipart(&self, method: &str, args: &Args, bytes: &Bytes, now_ms: f64) -> Option<Result<HostResult, Failure>> {
    let answer = || -> Result<HostResult, Failure> {
      match method {
        "createMultipartUpload" => {
          let http = args.raw("httpMetadata").unwrap_or("{}");
          let custom = args.raw("customMetadata").unwrap_or("{}");
          let extra = args.raw("extra").unwrap_or("{}");
          let upload_id = self.create_multipart(&args.string("key")?, http, custom, extra)?;
          json(JsonObject::new().string("uploadId", &upload_id).finish())
        }
        "uploadPart" => {
          let part_number = args.opt_number("partNumber")?.unwrap_or(0.0) as i64;
          let etag = self.upload_part(&args.string("key")?, &args.string("uploadId")?, part_number, bytes)?.map_err(|e| e.failure("uploadPart"))?;
          json(JsonObject::new().number("partNumber", part_number as f64).string("etag", &etag).finish())
        }
        "completeMultipartUpload" => {
          let parts: Vec<serde_json::Value> = serde_json::from_str(args.raw("parts").unwrap_or("[]")).map_err(|e| super::calls::type_error(format!("\"completeMultipartUpload\": argument \"parts\" must be an array: {e}")))?;
          let selected: Vec<(i64, String)> =
            parts.iter().map(|p| (p["partNumber"].as_f64().unwrap_or(0.0) as i64, p["etag"].as_str().unwrap_or_default().to_owned())).collect();
          let meta = self.complete_multipart(&args.string("key")?, &args.string("uploadId")?, &selected, now_ms)?.map_err(|e| e.failure("completeMultipartUpload"))?;
          json(meta.json().finish())
        }
        "abortMultipartUpload" => {
          self.abort_multipart(&args.string("key")?, &args.string("uploadId")?)?.map_err(|e| e.failure("abortMultipartUpload"))?;
          json("null")
        }
        _ => unreachable!(),
      }
    };
    matches!(method, "createMultipartUpload" | "uploadPart" | "completeMultipartUpload" | "abortMultipartUpload").then(answer)
  }
}
