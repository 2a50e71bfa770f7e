//! Short, adaptive waits that save thread wake-ups on quick answers.
//!
//! A dispatch crosses two threads: Node's thread hands the request to the isolate thread, and
//! the answer comes back through Node's event loop. When both threads sleep between the two
//! steps, each crossing is a futex or eventfd wake-up, which on a virtual machine costs tens of
//! microseconds, more than a small handler takes to run. Two waits avoid them when an answer is
//! expected soon:
//!
//! * [`Handoff`]: the caller's thread may wait a bounded time for the answer of the event it
//!   just sent and take it directly ([`Handoff::wait`]); an answer that comes later goes the usual
//!   way. [`WaitPolicy`] decides per worker whether waiting is worth it: only on a machine with
//!   more than one core, only when neither the worker nor the caller (`index.js` counts its
//!   dispatches in progress) has anything else in flight, and only while its recent answers
//!   came well within the budget.
//! * [`IdleSpin`]: the isolate thread, once idle, polls its inbox for a short time before it
//!   sleeps, as long as recent messages have arrived within that time of it going idle, and not
//!   while the host sends requests concurrently: then Node's thread is the busy one, and a
//!   polling thread would take the second core from it and from V8's helper threads (measured
//!   on 2 cores: 64 concurrent requests went from about 40,000 to 55,000–65,000 a second).
//!
//! Both are bounded (a few hundred microseconds of one core at most per event) and turn
//! themselves off for workers whose answers or messages do not come that quickly.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, RecvError, TryRecvError};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a caller waits for an answer at most.
pub const WAIT_BUDGET: Duration = Duration::from_micros(400);
/// A worker whose recent answers took longer than this (a moving average) is not waited for.
const WAIT_WORTH: Duration = Duration::from_micros(250);
/// How long an idle isolate thread polls its inbox before it sleeps.
const IDLE_SPIN: Duration = Duration::from_micros(100);

/// Whether this process may use more than one core: waiting on one core only delays the thread
/// that would answer.
fn multicore() -> bool {
  static MULTICORE: OnceLock<bool> = OnceLock::new();
  *MULTICORE.get_or_init(|| std::thread::available_parallelism().map(|n| n.get() > 1).unwrap_or(false))
}

const WAITING: u8 = 0;
const READY: u8 = 1;
const GAVE_UP: u8 = 2;

/// One answer, offered by the answering thread to a caller that may be waiting for it.
pub struct Handoff<T> {
  state: AtomicU8,
  slot: Mutex<Option<T>>,
}

impl<T> Default for Handoff<T> {
  fn default() -> Self {
    Self { state: AtomicU8::new(WAITING), slot: Mutex::new(None) }
  }
}

impl<T> Handoff<T> {
  /// Gives `value` to the waiting caller; returns it when the caller has stopped waiting, so
  /// that it goes the usual way.
  pub fn offer(&self, value: T) -> Result<(), T> {
    if self.state.load(Ordering::Acquire) != WAITING {
      return Err(value);
    }
    *self.slot.lock().unwrap() = Some(value);
    match self.state.compare_exchange(WAITING, READY, Ordering::AcqRel, Ordering::Acquire) {
      Ok(_) => Ok(()),
      // The caller gave up in between: take the value back.
      Err(_) => Err(self.slot.lock().unwrap().take().expect("the value was just stored")),
    }
  }

  /// Waits up to `budget` for the answer. `None`: none came in time, and none will be taken
  /// from here on (a later [`Handoff::offer`] gets its value back).
  pub fn wait(&self, budget: Duration) -> Option<T> {
    let deadline = Instant::now() + budget;
    let mut polls: u32 = 0;
    loop {
      if self.state.load(Ordering::Acquire) == READY {
        return self.slot.lock().unwrap().take();
      }
      polls = polls.wrapping_add(1);
      if polls % 256 == 0 {
        // Let the answering thread have this core if it is waiting for one.
        std::thread::yield_now();
        if Instant::now() >= deadline {
          return match self.state.compare_exchange(WAITING, GAVE_UP, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => None,
            Err(_) => self.slot.lock().unwrap().take(),
          };
        }
      }
      std::hint::spin_loop();
    }
  }
}

/// Per worker: whether a caller should wait for the answer of the event it sends.
#[derive(Default)]
pub struct WaitPolicy {
  /// Events sent and not yet answered.
  in_flight: AtomicU32,
  /// A moving average of the time from sending an event to its answer, in nanoseconds.
  recent_ns: AtomicU64,
  /// Events still to send without waiting, after waits that came to nothing.
  skip: AtomicU32,
  /// The current length of that pause: doubled by each wait in vain, cleared by one that pays.
  backoff: AtomicU32,
}

/// What [`WaitPolicy::begin`] decided for one event.
pub struct Begin {
  /// The caller should wait for the answer.
  pub wait: bool,
  /// Other events are on their way too: the caller serves requests concurrently.
  pub concurrent: bool,
}

/// The longest pause in waiting, in events.
const MAX_BACKOFF: u32 = 1024;

impl WaitPolicy {
  /// Counts an event being sent. `may_wait`: the caller has nothing else to do meanwhile.
  pub fn begin(&self, may_wait: bool) -> Begin {
    let alone = self.in_flight.fetch_add(1, Ordering::AcqRel) == 0;
    let concurrent = !alone || !may_wait;
    if concurrent || !multicore() || self.recent_ns.load(Ordering::Relaxed) >= WAIT_WORTH.as_nanos() as u64 {
      return Begin { wait: false, concurrent };
    }
    // Only the sending thread reads and writes the pause.
    let skip = self.skip.load(Ordering::Relaxed);
    if skip > 0 {
      self.skip.store(skip - 1, Ordering::Relaxed);
      return Begin { wait: false, concurrent };
    }
    Begin { wait: true, concurrent }
  }

  /// Records whether a wait got its answer. On a loaded machine the answering thread may not
  /// get a core while the caller waits; waits then stop for a while, longer each time.
  pub fn waited(&self, answered: bool) {
    let backoff = if answered { 0 } else { (self.backoff.load(Ordering::Relaxed) * 2).clamp(1, MAX_BACKOFF) };
    self.backoff.store(backoff, Ordering::Relaxed);
    self.skip.store(backoff, Ordering::Relaxed);
  }

  /// Counts an event answered, `took` after it was sent.
  pub fn end(&self, took: Duration) {
    self.in_flight.fetch_sub(1, Ordering::AcqRel);
    let sample = took.as_nanos().min(u64::MAX as u128 / 8) as u64;
    let old = self.recent_ns.load(Ordering::Relaxed);
    // Races between answers only blur the average; it stays a plausible value.
    self.recent_ns.store(old - old / 8 + sample / 8, Ordering::Relaxed);
  }
}

/// The isolate thread's wait for its next message: a short poll, while it pays off, then sleep.
pub struct IdleSpin {
  /// Messages have not lately come soon after the thread went idle.
  off: bool,
}

impl Default for IdleSpin {
  /// Off until a message comes that soon: a worker just booted (a thousand made in a loop) does
  /// not poll before its first request.
  fn default() -> Self {
    Self { off: true }
  }
}

impl IdleSpin {
  /// The next message. `may_poll`: false when the callers serve requests concurrently, so that
  /// the core polling would take is left to them (and to V8's helper threads).
  pub fn recv<T>(&mut self, inbox: &Receiver<T>, may_poll: bool) -> Result<T, RecvError> {
    if !self.off && may_poll {
      if let Some(message) = poll(inbox, IDLE_SPIN)? {
        return Ok(message);
      }
    }
    let asleep = Instant::now();
    let message = inbox.recv()?;
    // Poll next time only if this message would have been caught by polling.
    self.off = asleep.elapsed() > IDLE_SPIN;
    Ok(message)
  }
}

/// Polls `rx` for up to `time` (on a machine with more than one core); `None` if nothing came.
fn poll<T>(rx: &Receiver<T>, time: Duration) -> Result<Option<T>, RecvError> {
  if !multicore() {
    return Ok(None);
  }
  let start = Instant::now();
  let mut polls: u32 = 0;
  loop {
    match rx.try_recv() {
      Ok(message) => return Ok(Some(message)),
      Err(TryRecvError::Disconnected) => return Err(RecvError),
      Err(TryRecvError::Empty) => {}
    }
    polls = polls.wrapping_add(1);
    if polls % 64 != 0 {
      std::hint::spin_loop();
      continue;
    }
    if start.elapsed() >= time {
      return Ok(None);
    }
    // Give the core away if another thread is waiting for it (the sender, on a busy machine).
    std::thread::yield_now();
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::sync::Arc;

  #[test]
  fn an_answer_offered_in_time_is_taken_and_a_late_one_is_given_back() {
    let handoff = Arc::new(Handoff::default());
    let other = handoff.clone();
    let thread = std::thread::spawn(move || other.offer(7u32));
    assert_eq!(handoff.wait(Duration::from_secs(5)), Some(7));
    assert_eq!(thread.join().unwrap(), Ok(()));

    let late = Handoff::default();
    assert_eq!(late.wait(Duration::from_micros(10)), None);
    assert_eq!(late.offer(8u32), Err(8));
  }

  #[test]
  fn a_busy_or_slow_worker_is_not_waited_for() {
    let policy = WaitPolicy::default();
    let first = policy.begin(true).wait;
    assert_eq!(first, multicore());
    assert!(!policy.begin(true).wait, "a second event in flight");
    policy.end(Duration::from_micros(20));
    policy.end(Duration::from_micros(20));
    for _ in 0..20 {
      policy.begin(true).wait;
      policy.end(Duration::from_millis(5));
    }
    assert!(!policy.begin(true).wait, "answers take 5 ms");
    policy.end(Duration::from_millis(5));
  }

  #[test]
  fn a_caller_with_other_requests_on_the_way_is_concurrent_and_does_not_wait() {
    let policy = WaitPolicy::default();
    let busy_caller = policy.begin(false);
    assert!(!busy_caller.wait && busy_caller.concurrent);
    let second = policy.begin(true);
    assert!(!second.wait && second.concurrent, "another event is in flight");
    policy.end(Duration::from_micros(20));
    policy.end(Duration::from_micros(20));
    assert!(!policy.begin(true).concurrent, "alone again");
    policy.end(Duration::from_micros(20));
  }

  #[test]
  fn waits_in_vain_pause_waiting_for_longer_each_time() {
    let policy = WaitPolicy::default();
    let quick = |policy: &WaitPolicy| {
      let wait = policy.begin(true).wait;
      policy.end(Duration::from_micros(10));
      wait
    };
    if !multicore() {
      return assert!(!quick(&policy));
    }
    assert!(quick(&policy));
    policy.waited(false);
    assert!(!quick(&policy), "one event without waiting");
    assert!(quick(&policy));
    policy.waited(false);
    assert!(!quick(&policy) && !quick(&policy), "then two");
    assert!(quick(&policy));
    policy.waited(true);
    assert!(quick(&policy), "an answered wait ends the pause");
  }
}
