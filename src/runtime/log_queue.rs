//! [`LogQueue`]: a bound on the log text a worker has handed the host that the host has not yet
//! delivered to `onLog`.
//!
//! `console.log` in a tight loop produces lines faster than Node's thread runs `onLog`; without a
//! bound the lines would pile up in the host's queue until the host ran out of memory. Lines past
//! [`LOG_QUEUE_BYTES`] are dropped and counted, and the next line that fits is preceded by a
//! `warn` line saying how many were lost.
//!
//! It is also the barrier that keeps a worker's answers behind its log lines: lines and answers
//! reach Node through different thread-safe functions, which Node drains in no fixed order, so an
//! answer ([`LogQueue::after_delivered`]) waits until every line handed over before it has been
//! delivered. A test that awaits `dispatch()` or `waitUntilSettled()` then sees every line the
//! worker wrote before.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Log text (bytes) one worker may have queued for the host at once.
pub const LOG_QUEUE_BYTES: usize = 8 << 20;

#[derive(Default)]
pub struct LogQueue {
  queued: AtomicUsize,
  dropped: AtomicUsize,
  lines: Mutex<Lines>,
}

/// Lines counted in and out, and the answers waiting for a count.
#[derive(Default)]
struct Lines {
  admitted: u64,
  delivered: u64,
  waiters: Vec<(u64, Waiter)>,
}

type Waiter = Box<dyn FnOnce() + Send>;

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
        Ok(_) => {
          self.lines.lock().unwrap().admitted += 1;
          return Admit::Deliver { dropped_before: self.dropped.swap(0, Ordering::AcqRel) };
        }
        Err(actual) => queued = actual,
      }
    }
  }

  /// A line of `len` bytes was delivered (or could not be queued after all).
  pub fn delivered(&self, len: usize) {
    self.queued.fetch_sub(len, Ordering::AcqRel);
    let ready = {
      let mut lines = self.lines.lock().unwrap();
      lines.delivered += 1;
      let delivered = lines.delivered;
      if lines.waiters.is_empty() {
        return;
      }
      let (ready, waiting) = std::mem::take(&mut lines.waiters).into_iter().partition::<Vec<_>, _>(|(target, _)| *target <= delivered);
      lines.waiters = waiting;
      ready
    };
    for (_, waiter) in ready {
      waiter();
    }
  }

  /// Runs `then` once every line admitted so far has been delivered: at once when none is
  /// outstanding, else on the thread that delivers the last of them.
  pub fn after_delivered(&self, then: impl FnOnce() + Send + 'static) {
    {
      let mut lines = self.lines.lock().unwrap();
      if lines.delivered < lines.admitted {
        let target = lines.admitted;
        lines.waiters.push((target, Box::new(then)));
        return;
      }
    }
    then();
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

  #[test]
  fn an_answer_waits_for_the_lines_written_before_it_and_not_for_later_ones() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let queue = LogQueue::default();
    let ran = || Arc::new(AtomicBool::new(false));
    let (now, later) = (ran(), ran());
    let flag = now.clone();
    queue.after_delivered(move || flag.store(true, Ordering::SeqCst));
    assert!(now.load(Ordering::SeqCst), "nothing outstanding: runs at once");
    queue.admit(5);
    queue.admit(5);
    let flag = later.clone();
    queue.after_delivered(move || flag.store(true, Ordering::SeqCst));
    queue.admit(5);
    queue.delivered(5);
    assert!(!later.load(Ordering::SeqCst));
    queue.delivered(5);
    assert!(later.load(Ordering::SeqCst), "the two earlier lines are out; the third does not hold it");
  }
}
