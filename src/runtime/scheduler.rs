//! The scheduler thread: one per worker, running its own single-threaded tokio runtime.
//!
//! It owns everything asynchronous that JS asks for (today: timers) and reports results to the
//! isolate thread as [`CallbackMessage`]s. Timers live in one ordered queue keyed by
//! (deadline, creation order), so timers due at the same instant fire in the order they were
//! created, and a single sleep covers the earliest one. Nothing here polls: the loop waits on
//! either a new message or the next deadline.
//!
//! tokio's timers have millisecond resolution and round up, which would make a 1 ms timer fire
//! after about 2 ms. So timers are handed over up to [`EARLY`] before they are due, with their
//! exact deadline, and the isolate thread waits the remainder on its inbox (`recv_timeout`).

use super::messages::{CallbackMessage, IsolateMessage, SchedulerMessage};
use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// Handle to a running scheduler thread.
pub struct Scheduler {
  tx: UnboundedSender<SchedulerMessage>,
  thread: Option<JoinHandle<()>>,
}

impl Scheduler {
  /// Starts the thread for worker number `worker`. `to_isolate` is where results go.
  pub fn spawn(worker: u64, to_isolate: Sender<IsolateMessage>) -> std::io::Result<Self> {
    let (tx, rx) = unbounded_channel();
    let thread = std::thread::Builder::new()
      .name(format!("wb-sched-{worker}"))
      .spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
          .enable_time()
          .build()
          .expect("tokio runtime for the scheduler thread");
        runtime.block_on(run(rx, to_isolate));
      })?;
    Ok(Self { tx, thread: Some(thread) })
  }

  /// A sender JS ops use to ask for work. Sending after shutdown is silently ignored.
  pub fn sender(&self) -> UnboundedSender<SchedulerMessage> {
    self.tx.clone()
  }

  /// Stops the loop and joins the thread.
  pub fn shutdown(&mut self) {
    let _ = self.tx.send(SchedulerMessage::Shutdown);
    if let Some(thread) = self.thread.take() {
      let _ = thread.join();
    }
  }
}

impl Drop for Scheduler {
  fn drop(&mut self) {
    self.shutdown();
  }
}

/// What a deadline in the queue is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Due {
  /// A JS timer.
  Timer(u32),
  /// A request's wall-clock limit.
  Request(u32),
}

/// How far ahead of its deadline a timer is handed to the isolate thread.
const EARLY: Duration = Duration::from_millis(1);

impl Due {
  fn message(self, due: Instant) -> CallbackMessage {
    match self {
      Due::Timer(id) => CallbackMessage::TimerFired { id, due: due.into_std() },
      Due::Request(id) => CallbackMessage::DeadlineReached { id },
    }
  }
}

struct TimerQueue<K> {
  next_seq: u64,
  by_deadline: BTreeMap<(Instant, u64), K>,
  by_id: HashMap<K, (Instant, u64)>,
}

impl<K> Default for TimerQueue<K> {
  fn default() -> Self {
    Self { next_seq: 0, by_deadline: BTreeMap::new(), by_id: HashMap::new() }
  }
}

impl<K: Copy + Eq + std::hash::Hash> TimerQueue<K> {
  fn insert(&mut self, id: K, deadline: Instant) {
    self.remove(id);
    let key = (deadline, self.next_seq);
    self.next_seq += 1;
    self.by_deadline.insert(key, id);
    self.by_id.insert(id, key);
  }

  fn remove(&mut self, id: K) {
    if let Some(key) = self.by_id.remove(&id) {
      self.by_deadline.remove(&key);
    }
  }

  fn next_deadline(&self) -> Option<Instant> {
    self.by_deadline.keys().next().map(|(deadline, _)| *deadline)
  }

  /// Removes and returns the ids (and deadlines) of all timers due by `now`, earliest first.
  fn take_due(&mut self, now: Instant) -> Vec<(K, Instant)> {
    let mut due = Vec::new();
    while let Some((&(deadline, seq), &id)) = self.by_deadline.iter().next() {
      if deadline > now {
        break;
      }
      self.by_deadline.remove(&(deadline, seq));
      self.by_id.remove(&id);
      due.push((id, deadline));
    }
    due
  }
}

async fn run(mut rx: UnboundedReceiver<SchedulerMessage>, to_isolate: Sender<IsolateMessage>) {
  let mut timers = TimerQueue::<Due>::default();
  loop {
    let next = timers.next_deadline().map(|deadline| deadline.checked_sub(EARLY).unwrap_or(deadline));
    let message = tokio::select! {
      message = rx.recv() => message,
      _ = sleep_until_or_forever(next) => {
        for (what, deadline) in timers.take_due(Instant::now() + EARLY) {
          if to_isolate.send(IsolateMessage::Callback(what.message(deadline))).is_err() {
            return;
          }
        }
        continue;
      }
    };
    match message {
      Some(SchedulerMessage::StartTimer { id, delay }) => timers.insert(Due::Timer(id), Instant::now() + delay),
      Some(SchedulerMessage::CancelTimer { id }) => timers.remove(Due::Timer(id)),
      Some(SchedulerMessage::StartDeadline { id, after }) => timers.insert(Due::Request(id), Instant::now() + after),
      Some(SchedulerMessage::CancelDeadline { id }) => timers.remove(Due::Request(id)),
      Some(SchedulerMessage::Shutdown) | None => return,
    }
  }
}

async fn sleep_until_or_forever(deadline: Option<Instant>) {
  match deadline {
    Some(deadline) => tokio::time::sleep_until(deadline).await,
    None => std::future::pending().await,
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn timers_due_together_fire_in_creation_order() {
    let mut q = TimerQueue::default();
    let t = Instant::now();
    q.insert(3, t + Duration::from_millis(5));
    q.insert(1, t);
    q.insert(2, t);
    q.insert(4, t + Duration::from_millis(50));
    q.remove(4);
    let due: Vec<u32> = q.take_due(t + Duration::from_millis(10)).into_iter().map(|(id, _)| id).collect();
    assert_eq!(due, vec![1, 2, 3]);
    assert_eq!(q.next_deadline(), None);
  }
}
