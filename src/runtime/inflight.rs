//! [`Inflight`]: the replies of the events a worker has accepted, answerable from outside the
//! isolate thread.
//!
//! Normally the isolate thread answers every event. But JS that ignores termination (a builtin
//! that never checks for it, running past the grace period) keeps that thread, and the replies
//! it holds, forever. Each reply is therefore wrapped so that whoever comes first answers it,
//! exactly once: the isolate thread with the outcome, or [`Inflight::fail_all`] — called when
//! the worker is marked failed, and by `dispose()` of a failed worker — with an error. The host
//! is never left waiting, and Node (whose reply channel is referenced only while replies are
//! pending) can exit.

use super::types::WorkerError;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

type Reply<T> = Box<dyn FnOnce(Result<T, WorkerError>) + Send>;
type Failer = Box<dyn FnOnce(WorkerError) + Send>;

#[derive(Default)]
pub(crate) struct Inflight {
  next: AtomicU64,
  failers: Mutex<HashMap<u64, Failer>>,
}

impl Inflight {
  /// Wraps `reply`: the wrapper answers it unless `fail_all` already has (and vice versa).
  pub fn guard<T: Send + 'static>(self: &Arc<Self>, reply: Reply<T>) -> Reply<T> {
    let id = self.next.fetch_add(1, Ordering::Relaxed);
    let slot = Arc::new(Mutex::new(Some(reply)));
    let failer_slot = slot.clone();
    let failer: Failer = Box::new(move |error| {
      let reply = failer_slot.lock().unwrap().take();
      if let Some(reply) = reply {
        reply(Err(error));
      }
    });
    self.failers.lock().unwrap().insert(id, failer);
    let registry = self.clone();
    Box::new(move |result| {
      registry.failers.lock().unwrap().remove(&id);
      let reply = slot.lock().unwrap().take();
      if let Some(reply) = reply {
        reply(result);
      }
    })
  }

  /// Answers every reply still waiting with `error()`.
  pub fn fail_all(&self, error: impl Fn() -> WorkerError) {
    let failers: Vec<Failer> = self.failers.lock().unwrap().drain().map(|(_, f)| f).collect();
    for failer in failers {
      failer(error());
    }
  }

  /// Replies still waiting.
  #[cfg(test)]
  pub fn len(&self) -> usize {
    self.failers.lock().unwrap().len()
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::sync::mpsc::channel;

  #[test]
  fn each_reply_is_answered_exactly_once_by_whoever_comes_first() {
    let inflight = Arc::new(Inflight::default());
    let (tx, rx) = channel();
    let answered = {
      let tx = tx.clone();
      inflight.guard::<u32>(Box::new(move |r| tx.send(r.map_err(|e| e.to_string())).unwrap()))
    };
    let stuck = inflight.guard::<u32>(Box::new(move |r| tx.send(r.map_err(|e| e.to_string())).unwrap()));
    answered(Ok(7));
    assert_eq!(rx.recv().unwrap(), Ok(7));
    assert_eq!(inflight.len(), 1);
    inflight.fail_all(|| WorkerError::runtime("ERR_WORKER_FAILED", "stuck"));
    assert!(rx.recv().unwrap().unwrap_err().contains("stuck"));
    // The isolate thread answering late changes nothing.
    stuck(Ok(8));
    assert!(rx.try_recv().is_err());
    assert_eq!(inflight.len(), 0);
  }
}
