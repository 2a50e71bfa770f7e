//! The napi-rs side of queues: `NativeQueueStore`, the on-disk backlog of a `queue({ dir })`
//! binding (`src/runtime/store/queue.rs`), for `lib/queues/`. Reads are synchronous (once,
//! when a queue opens); writes run on libuv's thread pool and resolve once committed and
//! fsynced. `NativeWorker.queue()` (running a batch in a worker) lives in `binding.rs`.

use crate::runtime::store::{QueueChanges, QueueStore, StoredMessage};
use napi::bindgen_prelude::{AsyncTask, Buffer};
use napi::{Env, Result, Task};
use napi_derive::napi;
use std::sync::Arc;

/// One kept message, as `lib/queues/` reads and writes it.
#[napi(object)]
pub struct NativeQueueMessage {
  pub id: String,
  /// When it was sent, ms since the epoch.
  pub timestamp: f64,
  pub content_type: String,
  pub body: Buffer,
  /// Failed deliveries so far.
  pub attempts: u32,
  /// Not delivered before this time, ms since the epoch.
  pub due: f64,
}

/// A message going back into the queue after a failed delivery.
#[napi(object)]
pub struct NativeQueueRetry {
  pub id: String,
  pub attempts: u32,
  pub due: f64,
}

#[napi]
pub struct NativeQueueStore {
  store: Arc<QueueStore>,
}

/// One write, done off Node's thread.
pub struct QueueWrite {
  store: Arc<QueueStore>,
  queue: String,
  changes: QueueChanges,
}

impl Task for QueueWrite {
  type Output = ();
  type JsValue = ();
  fn compute(&mut self) -> Result<()> {
    self.store.write(&self.queue, &self.changes).map_err(|e| napi::Error::from_reason(e.to_string()))
  }
  fn resolve(&mut self, _env: Env, _output: ()) -> Result<()> {
    Ok(())
  }
}

#[napi]
impl NativeQueueStore {
  /// Opens (or makes) `<dir>/queues.sqlite3`; `dir` is absolute. Throws naming the path and
  /// SQLite's error when it cannot.
  #[napi(constructor)]
  pub fn new(dir: String) -> Result<Self> {
    let store = QueueStore::open(std::path::Path::new(&dir)).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    Ok(Self { store: Arc::new(store) })
  }

  /// Every message kept for `queue`, in the order they were sent.
  #[napi]
  pub fn load(&self, queue: String) -> Result<Vec<NativeQueueMessage>> {
    let kept = self.store.load(&queue).map_err(|e| napi::Error::from_reason(e.to_string()))?;
    Ok(kept
      .into_iter()
      .map(|m| NativeQueueMessage { id: m.id, timestamp: m.timestamp, content_type: m.content_type, body: m.body.into(), attempts: m.attempts, due: m.due })
      .collect())
  }

  /// Adds, reschedules and removes messages of `queue` in one transaction; resolves once it is
  /// durable.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn write(&self, queue: String, add: Vec<NativeQueueMessage>, retry: Vec<NativeQueueRetry>, remove: Vec<String>) -> AsyncTask<QueueWrite> {
    let changes = QueueChanges {
      add: add
        .into_iter()
        .map(|m| StoredMessage { id: m.id, timestamp: m.timestamp, content_type: m.content_type, body: m.body.to_vec(), attempts: m.attempts, due: m.due })
        .collect(),
      retry: retry.into_iter().map(|r| (r.id, r.attempts, r.due)).collect(),
      remove,
    };
    AsyncTask::new(QueueWrite { store: self.store.clone(), queue, changes })
  }
}
