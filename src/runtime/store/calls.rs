//! Answering a worker's binding calls from an embedded store, in Rust.
//!
//! This file owns the seam between the scheduler and the store families: [`Store`] (one
//! embedded store, shared by every worker given the same binding), [`Stores`] (a worker's
//! stores by binding name), [`Clock`] (the time stores use, which follows the host's clock), and
//! the wire format the worker-side JS (`src/js/85_bindings.js`, `88_cache.js`) speaks: arguments
//! as a JSON object, results as JSON plus optional bytes, exactly as `lib/bindings.js` answers for
//! a handler. Everything here blocks (SQLite), so it runs on a store thread, never on the
//! scheduler's loop.

use super::cache::CacheStore;
use super::d1::D1Store;
use super::kv::KvStore;
use super::objects::ObjectStore;
use super::StoreError;
use crate::runtime::types::{HostCall, HostResult, JsErrorInfo};
use base64::Engine;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Which store family a store is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreKind {
  /// A KV namespace (`kv()`).
  Kv,
  /// An R2-style bucket (`storage()`).
  Objects,
  /// The Cache API's entries (`caches.default`, `caches.open()`).
  Cache,
  /// A D1 database (`d1()`).
  D1,
}

impl StoreKind {
  pub fn parse(name: &str) -> Option<StoreKind> {
    match name {
      "kv" => Some(StoreKind::Kv),
      "storage" => Some(StoreKind::Objects),
      "cache" => Some(StoreKind::Cache),
      "d1" => Some(StoreKind::D1),
      _ => None,
    }
  }

  /// The name of the store's database file in its folder.
  pub fn file_name(self) -> &'static str {
    match self {
      StoreKind::Kv => "kv.sqlite3",
      StoreKind::Objects => "storage.sqlite3",
      StoreKind::Cache => "cache.sqlite3",
      StoreKind::D1 => "d1.sqlite3",
    }
  }

  /// How errors name the store, as the JS API that made it.
  pub fn api(self) -> &'static str {
    match self {
      StoreKind::Kv => "kv()",
      StoreKind::Objects => "storage()",
      StoreKind::Cache => "the Cache API's store",
      StoreKind::D1 => "d1()",
    }
  }
}

/// One embedded store. Clones share it: a binding object given to several workers (or to a
/// worker that restarts) is one store.
#[derive(Clone)]
pub enum Store {
  Kv(Arc<KvStore>),
  Objects(Arc<ObjectStore>),
  Cache(Arc<CacheStore>),
  D1(Arc<D1Store>),
}

impl Store {
  /// Opens a store of `kind`: in memory, or in its file under `dir` (made if missing). The
  /// error names the path and what SQLite or the file system said.
  pub fn open(kind: StoreKind, dir: Option<&Path>) -> Result<Store, String> {
    let opened = match kind {
      StoreKind::Kv => KvStore::open(dir).map(|s| Store::Kv(Arc::new(s))),
      StoreKind::Objects => ObjectStore::open(dir).map(|s| Store::Objects(Arc::new(s))),
      StoreKind::Cache => CacheStore::open(dir).map(|s| Store::Cache(Arc::new(s))),
      StoreKind::D1 => D1Store::open(dir, D1Store::DEFAULT_TIMEOUT).map(|s| Store::D1(Arc::new(s))),
    };
    opened.map_err(|e| format!("{}: {e}", kind.api()))
  }

  /// A D1 database whose calls each may run for up to `timeout` before they are interrupted.
  pub fn d1(dir: Option<&Path>, timeout: std::time::Duration) -> Result<Store, String> {
    D1Store::open(dir, timeout).map(|s| Store::D1(Arc::new(s))).map_err(|e| format!("{}: {e}", StoreKind::D1.api()))
  }

  pub fn kind(&self) -> StoreKind {
    match self {
      Store::Kv(_) => StoreKind::Kv,
      Store::Objects(_) => StoreKind::Objects,
      Store::Cache(_) => StoreKind::Cache,
      Store::D1(_) => StoreKind::D1,
    }
  }

  /// Whether this store may answer on the worker's own thread: a KV, R2-style or cache store
  /// kept in memory, whose calls take microseconds (files are written with an fsync per
  /// commit, and D1 runs the user's SQL: those go to the store thread).
  pub fn answers_inline(&self) -> bool {
    let location = match self {
      Store::Kv(store) => store.location(),
      Store::Objects(store) => store.location(),
      Store::Cache(store) => store.location(),
      Store::D1(_) => return false,
    };
    *location == super::Location::Memory
  }

  /// Opens, rolls back to or releases a test checkpoint of the store's database (an in-memory
  /// KV, R2-style or D1 store; see [`super::Database::checkpoint`]).
  pub fn checkpoint(&self, action: super::Checkpoint) -> Result<(), String> {
    let done = match self {
      Store::Kv(store) => store.database().checkpoint(action),
      Store::Objects(store) => store.database().checkpoint(action),
      Store::D1(store) => store.database().checkpoint(action),
      Store::Cache(_) => return Err("the Cache API's store takes no checkpoints".into()),
    };
    done.map_err(|e| format!("{}: {e}", self.kind().api()))
  }

  /// Closes the store's database if it is in memory (see [`super::Database::close`]): its
  /// memory is given back now and every later call fails saying the store was closed. A store
  /// on a file stays open for the other stores on that file (false).
  pub fn close(&self) -> bool {
    match self {
      Store::Kv(store) => store.database().close(),
      Store::Objects(store) => store.database().close(),
      Store::Cache(store) => store.database().close(),
      Store::D1(store) => store.database().close(),
    }
  }

  /// Answers one binding call, blocking until the store has done it. `now_ms` is the time the
  /// call happens at (milliseconds since the epoch): expirations and upload times use it.
  pub fn call(&self, call: HostCall, now_ms: f64) -> Result<HostResult, JsErrorInfo> {
    let args = Args::parse(&call.args, &call.method)?;
    let bytes = call.bytes.unwrap_or_default();
    let answered = match self {
      Store::Kv(store) => store.answer(&call.method, &args, bytes, now_ms),
      Store::Objects(store) => store.answer(&call.method, &args, bytes, now_ms),
      Store::Cache(store) => store.answer(&call.method, &args, bytes, now_ms),
      Store::D1(store) => store.answer(&call.method, &args),
    };
    answered.map_err(|failure| match failure {
      Failure::Js(error) => error,
      Failure::Store(error) => JsErrorInfo::new("Error", format!("{}: {error}", self.kind().api())),
    })
  }
}

/// Why a call failed: the worker's mistake (as the JS error it sees), or the database's.
pub(crate) enum Failure {
  Js(JsErrorInfo),
  Store(StoreError),
}

impl From<StoreError> for Failure {
  fn from(error: StoreError) -> Self {
    Failure::Store(error)
  }
}

impl From<JsErrorInfo> for Failure {
  fn from(error: JsErrorInfo) -> Self {
    Failure::Js(error)
  }
}

pub(crate) fn type_error(message: impl Into<String>) -> Failure {
  Failure::Js(JsErrorInfo::new("TypeError", message))
}

/// A worker's stores by binding name. Clones share one table: a pooled spare starts with an
/// empty one, and the caller's stores are put in it when the spare is handed out.
#[derive(Clone, Default)]
pub struct Stores(Arc<RwLock<HashMap<String, Store>>>);

impl Stores {
  pub fn new(stores: impl IntoIterator<Item = (String, Store)>) -> Stores {
    Stores(Arc::new(RwLock::new(stores.into_iter().collect())))
  }

  /// The store answering binding `name`, if one does (otherwise the host answers it).
  pub fn get(&self, name: &str) -> Option<Store> {
    self.0.read().unwrap_or_else(|p| p.into_inner()).get(name).cloned()
  }

  /// Makes this table hold exactly the stores of `other`.
  pub fn replace_with(&self, other: &Stores) {
    if Arc::ptr_eq(&self.0, &other.0) {
      return;
    }
    let entries = other.0.read().unwrap_or_else(|p| p.into_inner()).clone();
    *self.0.write().unwrap_or_else(|p| p.into_inner()) = entries;
  }
}

/// The time embedded stores use: the system clock, moved by however far the host's clock was
/// from it at the latest dispatch. A host whose clock is faked (a test moving `Date.now()`
/// forward) sees KV entries and cached responses expire by its own clock, as it did when these
/// stores were JS objects in the host.
#[derive(Debug, Default)]
pub struct Clock {
  skew_ms: AtomicI64,
}

fn system_ms() -> f64 {
  SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

impl Clock {
  /// The host says it is `host_now_ms` (milliseconds since the epoch) now.
  pub fn follow(&self, host_now_ms: f64) {
    if host_now_ms.is_finite() {
      self.skew_ms.store((host_now_ms - system_ms()).round() as i64, Ordering::Relaxed);
    }
  }

  /// Milliseconds since the epoch, by the host's clock.
  pub fn now_ms(&self) -> f64 {
    system_ms() + self.skew_ms.load(Ordering::Relaxed) as f64
  }
}

/// A call's arguments: a JSON object whose fields are parsed when asked for. Absent fields and
/// `null` both read as `None`, as `undefined` fields vanish in `JSON.stringify`.
pub(crate) struct Args {
  fields: HashMap<String, Box<RawValue>>,
  method: String,
}

impl Args {
  fn parse(json: &str, method: &str) -> Result<Args, JsErrorInfo> {
    let fields = serde_json::from_str(json).map_err(|e| JsErrorInfo::new("TypeError", format!("the arguments of \"{method}\" are not a JSON object: {e}")))?;
    Ok(Args { fields, method: method.to_owned() })
  }

  fn bad(&self, name: &str, wanted: &str) -> Failure {
    type_error(format!("\"{}\": argument \"{name}\" must be {wanted}", self.method))
  }

  /// The field's JSON text, unless it is absent or `null`.
  pub fn raw(&self, name: &str) -> Option<&str> {
    self.fields.get(name).map(|raw| raw.get()).filter(|text| *text != "null")
  }

  /// Every field but `skip`, as JSON text, in name order.
  pub fn others(&self, skip: &[&str]) -> Vec<(&str, &str)> {
    let mut fields: Vec<(&str, &str)> = self.fields.iter().filter(|(name, _)| !skip.contains(&name.as_str())).map(|(name, raw)| (name.as_str(), raw.get())).collect();
    fields.sort_unstable();
    fields
  }

  pub fn string(&self, name: &str) -> Result<String, Failure> {
    self.opt_string(name)?.ok_or_else(|| self.bad(name, "a string"))
  }

  pub fn opt_string(&self, name: &str) -> Result<Option<String>, Failure> {
    let Some(text) = self.raw(name) else { return Ok(None) };
    match serde_json::from_str::<String>(text) {
      Ok(string) => Ok(Some(string)),
      // A JS string with a lone surrogate has no UTF-8 form, so the store cannot keep it.
      Err(e) if text.starts_with('"') => Err(type_error(format!("\"{}\": argument \"{name}\" is not valid Unicode, so it has no UTF-8 form to store ({e})", self.method))),
      Err(_) => Err(self.bad(name, "a string")),
    }
  }

  pub fn opt_number(&self, name: &str) -> Result<Option<f64>, Failure> {
    self.raw(name).map(|text| serde_json::from_str::<f64>(text).map_err(|_| self.bad(name, "a number"))).transpose()
  }

  pub fn opt_strings(&self, name: &str) -> Result<Option<Vec<String>>, Failure> {
    self.raw(name).map(|text| serde_json::from_str::<Vec<String>>(text).map_err(|_| self.bad(name, "an array of strings"))).transpose()
  }

  /// A nested object field, parsed as arguments of its own.
  pub fn opt_object(&self, name: &str) -> Result<Option<Args>, Failure> {
    let Some(text) = self.raw(name) else { return Ok(None) };
    let fields = serde_json::from_str(text).map_err(|_| self.bad(name, "an object"))?;
    Ok(Some(Args { fields, method: format!("{}\": \"{name}", self.method) }))
  }

  /// Whether the field is present, even as `null` (a JS value that is not `undefined`).
  pub fn has(&self, name: &str) -> bool {
    self.fields.contains_key(name)
  }
}

/// Writes a JSON object field by field, in the order given (the order `lib/bindings.js`'s
/// answers have), splicing in stored JSON text as it is.
pub(crate) struct JsonObject(String);

impl JsonObject {
  pub fn new() -> JsonObject {
    JsonObject(String::from("{"))
  }

  pub fn raw(&mut self, name: &str, json: &str) -> &mut Self {
    if self.0.len() > 1 {
      self.0.push(',');
    }
    self.0.push_str(&quote(name));
    self.0.push(':');
    self.0.push_str(json);
    self
  }

  pub fn string(&mut self, name: &str, value: &str) -> &mut Self {
    self.raw(name, &quote(value))
  }

  pub fn number(&mut self, name: &str, value: f64) -> &mut Self {
    self.raw(name, &number(value))
  }

  pub fn bool(&mut self, name: &str, value: bool) -> &mut Self {
    self.raw(name, if value { "true" } else { "false" })
  }

  pub fn finish(&mut self) -> String {
    let mut text = std::mem::take(&mut self.0);
    text.push('}');
    text
  }
}

/// A JSON string literal.
pub(crate) fn quote(text: &str) -> String {
  serde_json::to_string(text).expect("a string always serialises")
}

/// A number as `JSON.stringify` writes it (integers without a fraction; non-finite as null).
pub(crate) fn number(value: f64) -> String {
  if !value.is_finite() {
    "null".into()
  } else if value.fract() == 0.0 && value.abs() < 9.007_199_254_740_992e15 {
    format!("{}", value as i64)
  } else {
    serde_json::to_string(&value).unwrap_or_else(|_| "null".into())
  }
}

/// A list cursor for the key a page ended at: its UTF-8 bytes in unpadded base64url, as
/// `lib/bindings.js` made them.
pub(crate) fn cursor_for(key: &[u8]) -> String {
  base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key)
}

/// The key a cursor stands for.
pub(crate) fn cursor_key(cursor: &str, what: &str) -> Result<Vec<u8>, Failure> {
  let lenient = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new().with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent).with_decode_allow_trailing_bits(true),
  );
  lenient.decode(cursor.trim()).map_err(|_| type_error(format!("{what}: the cursor {} is not one this store returned", quote(cursor))))
}

/// A successful answer with JSON only.
pub(crate) fn json(text: impl Into<String>) -> Result<HostResult, Failure> {
  Ok(HostResult { json: text.into(), bytes: None })
}
