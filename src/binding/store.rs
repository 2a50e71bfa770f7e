//! `NativeStore`: an embedded store (`kv()`, `storage()`, `d1()`, the default Cache API store)
//! as a JS object, and its Node-side calls, run off Node's thread.

use super::NativeHostAnswer;
use crate::runtime::{HostCall, HostResult, JsErrorInfo, Store, StoreKind};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Result, Task};
use napi_derive::napi;

/// An embedded store (`kv()`, `storage()`, `d1()`, the default Cache API store), answered in
/// Rust. The JS object is the handle: every worker given it shares the one store, and Node
/// reaches the same store through `call`.
#[napi]
pub struct NativeStore {
  pub(super) store: Store,
  /// Set by `close()`: Node's calls and new workers are refused.
  closed: std::sync::atomic::AtomicBool,
}

impl NativeStore {
  /// The store, unless `close()` was called (then an error naming `what` was refused).
  pub(super) fn open_store(&self, what: &str) -> Result<&Store> {
    if self.closed.load(std::sync::atomic::Ordering::Acquire) {
      return Err(napi::Error::new(napi::Status::InvalidArg, format!("{what}: this {} store was closed (close() was called on it)", self.store.kind().api())));
    }
    Ok(&self.store)
  }
}

#[napi]
impl NativeStore {
  /// `kind` is "kv", "storage", "cache" or "d1"; `dir` (absolute) keeps it in a SQLite file
  /// there, otherwise it lives in memory. `timeout_ms` bounds each call of a "d1" store.
  /// Throws naming the path and SQLite's error if it cannot open.
  #[napi(constructor)]
  pub fn new(kind: String, dir: Option<String>, timeout_ms: Option<f64>) -> Result<Self> {
    let kind = StoreKind::parse(&kind).ok_or_else(|| napi::Error::new(napi::Status::InvalidArg, format!("unknown store kind {kind:?}")))?;
    let dir = dir.as_deref().map(std::path::Path::new);
    let store = match (kind, timeout_ms) {
      (StoreKind::D1, Some(ms)) if ms.is_finite() && ms > 0.0 => Store::d1(dir, std::time::Duration::from_secs_f64(ms / 1000.0)),
      _ => Store::open(kind, dir),
    };
    Ok(Self { store: store.map_err(napi::Error::from_reason)?, closed: Default::default() })
  }

  /// A test checkpoint of an in-memory KV, R2-style or D1 store (workerbox/vitest's
  /// isolatedStorage): `action` "open" starts one, "rollback" undoes what was written since the
  /// latest and keeps it open, "release" closes it keeping the writes. Throws for a store on a
  /// file.
  #[napi]
  pub fn checkpoint(&self, action: String) -> Result<()> {
    let Some(action) = crate::runtime::store::Checkpoint::parse(&action) else {
      return Err(napi::Error::new(napi::Status::InvalidArg, format!("checkpoint: unknown action {action:?} (\"open\", \"rollback\" or \"release\")")));
    };
    self.open_store("checkpoint")?.checkpoint(action).map_err(napi::Error::from_reason)
  }

  /// Releases the store now instead of when this object is garbage-collected: an in-memory
  /// store's database is closed and its memory given back, and every later call to it (from
  /// Node, or from a worker still bound to it) fails saying it was closed; a store on a file is
  /// only let go by this handle (its file stays open for the other stores on it). Returns
  /// whether an in-memory database was closed; closing twice does nothing.
  #[napi]
  pub fn close(&self) -> bool {
    if self.closed.swap(true, std::sync::atomic::Ordering::AcqRel) {
      return false;
    }
    self.store.close()
  }

  /// Answers one call from Node, as a worker's binding call to this store is answered, on
  /// libuv's thread pool (SQLite blocks). Resolves to `{ json, bytes }` or
  /// `{ errorName, errorMessage }`; `now` is the host's `Date.now()`.
  #[napi(ts_return_type = "Promise<NativeHostAnswer>")]
  pub fn call(&self, method: String, args: String, bytes: Option<Buffer>, now: f64) -> Result<AsyncTask<StoreCallTask>> {
    let store = self.open_store(&method)?.clone();
    let call = HostCall { binding: String::new(), method, args, bytes: bytes.map(|b| bytes::Bytes::from(Vec::from(b))) };
    Ok(AsyncTask::new(StoreCallTask { store, call: Some(call), now_ms: now }))
  }
}

/// One `NativeStore.call`, run off Node's thread.
pub struct StoreCallTask {
  pub(super) store: Store,
  call: Option<HostCall>,
  now_ms: f64,
}

impl Task for StoreCallTask {
  type Output = std::result::Result<HostResult, JsErrorInfo>;
  type JsValue = NativeHostAnswer;

  fn compute(&mut self) -> Result<Self::Output> {
    let call = self.call.take().ok_or_else(|| napi::Error::from_reason("the store call ran twice"))?;
    Ok(self.store.call(call, self.now_ms))
  }

  fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
    Ok(match output {
      Ok(result) => NativeHostAnswer { json: Some(result.json), bytes: result.bytes.map(|b| Buffer::from(Vec::from(b))), error_name: None, error_message: None },
      Err(error) => NativeHostAnswer { json: None, bytes: None, error_name: Some(error.name), error_message: Some(error.message) },
    })
  }
}
