//! [`LogQueue`]: a bound on the log text a worker has handed the host that the host has not yet
//! delivered to `onLog`.
//!
//! `console.log` in a tight loop produces lines faster than Node's thread runs `onLog`; without a
//! bound the lines would pile up in the host's queue until the host ran out of memory. Lines past
//! [`LOG_QUEUE_BYTES`] are dropped and counted, and the next line that fits is preceded by a
//! `warn` line saying how many were lost.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Log text (bytes) one worker may have queued for the host at once.
pub const LOG_QUEUE_BYTES: usize = 8 << 20;

#[derive(Default)]
pub struct LogQueue {
  queued: AtomicUsize,
  dropped: AtomicUsize,
}

/// What to do with a line: deliver it (after a notice of `dropped_before` lost lines, if any), or
/// drop it.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
  Deliver { dropped_before: usize },
  Drop,
}

impl LogQueue {
  /// Accounts for a line of `len` bytes about to be queued.
  pub fn admit(&self, len: usize) -> Admit {
    let mut queued = self.queued.load(Ordering::Relaxed);
    loop {
      let next = queued.saturating_add(len);
      // One line alone may always go (a huge line is the script's own memory's business).
      if queued > 0 && next > LOG_QUEUE_BYTES {
        self.dropped.fetch_add(1, Ordering::Relaxed);
        return Admit::Drop;
      }
      match self.queued.compare_exchange_weak(queued, next, Ordering::AcqRel, Ordering::Relaxed) {
        Ok(_) => return Admit::Deliver { dropped_before: self.dropped.swap(0, Ordering::AcqRel) },
        Err(actual) => queued = actual,
      }
    }
  }

  /// A line of `len` bytes was delivered (or could not be queued after all).
  pub fn delivered(&self, len: usize) {
    self.queued.fetch_sub(len, Ordering::AcqRel);
  }
}

/// The notice that precedes the first line delivered after some were dropped.
pub fn dropped_notice(count: usize) -> String {
  format!(
    "workerbox: {count} log line(s) were dropped: the host was not reading them as fast as the worker wrote them ({} MB were queued).",
    LOG_QUEUE_BYTES >> 20
  )
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn lines_past_the_bound_are_dropped_and_counted_until_the_host_catches_up() {
    let queue = LogQueue::default();
    assert_eq!(queue.admit(LOG_QUEUE_BYTES - 10), Admit::Deliver { dropped_before: 0 });
    assert_eq!(queue.admit(100), Admit::Drop);
    assert_eq!(queue.admit(100), Admit::Drop);
    queue.delivered(LOG_QUEUE_BYTES - 10);
    assert_eq!(queue.admit(100), Admit::Deliver { dropped_before: 2 });
    assert_eq!(queue.admit(100), Admit::Deliver { dropped_before: 0 });
    // A single line larger than the bound still goes when nothing is queued.
    queue.delivered(200);
    assert_eq!(queue.admit(LOG_QUEUE_BYTES * 2), Admit::Deliver { dropped_before: 0 });
  }
}
