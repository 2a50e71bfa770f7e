//! The scheduler thread: one per worker, running its own single-threaded tokio runtime.
//!
//! It owns everything asynchronous that JS asks for (timers, binding calls to the host, outbound
//! fetches and their streamed bodies) and reports results to the
//! isolate thread as [`CallbackMessage`]s. Timers live in one ordered queue keyed by
//! (deadline, creation order), so timers due at the same instant fire in the order they were
//! created, and a single sleep covers the earliest one. Nothing here polls: the loop waits on
//! either a new message or the next deadline.
//!
//! tokio's timers have millisecond resolution and round up, which would make a 1 ms timer fire
//! after about 2 ms. So timers are handed over up to [`EARLY`] before they are due, with their
//! exact deadline, and the isolate thread waits the remainder on its inbox (`recv_timeout`).
//!
//! Binding calls for a binding backed by an embedded store (`kv()`, `storage()`, the default
//! Cache API store) never reach the host: they go, in the order JS made them, to this worker's
//! store thread (`wb-store-N`, started on the first such call), which runs them against SQLite
//! and posts each answer back into this loop as the host's answers come. The loop itself never
//! waits on a store. A dedicated thread rather than tokio's blocking pool keeps one worker's calls
//! in order (a put then a get of one key sees the put) and keeps slow DNS lookups, which use that
//! pool, from queueing ahead of them.
//!
//! It is also the worker's watchdog. While JS runs, one check is scheduled for when the running
//! stretch could at the earliest have used up its CPU budget (CPU time never runs ahead of wall
//! time); the check reads the isolate thread's CPU clock and either stops the JS or re-arms for
//! the remainder. A stretch's budget is what its request has left of `limits.cpuMs`. When a
//! request's wall-clock limit passes while JS is running (so the isolate cannot take the
//! message), the same stretch is stopped shortly after. A request that has not yet given this
//! thread its deadline (most finish within the stretch that starts them, and never do; see
//! `IsolateState::arm_deadlines`) is covered by the same check: the stretch carries the
//! earliest such deadline.

use super::messages::{CallbackMessage, IsolateMessage, SchedulerMessage};
use super::monitor::{Monitor, StopReason};
use super::store::{Clock, Store, Stores};
use super::types::{Host, HostCall, HostResult, JsErrorInfo, Limits};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::collections::{BTreeMap, HashMap, HashSet};
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

/// Who answers a worker's binding calls: an embedded store for the bindings in `stores`, the
/// host for every other one. `clock` is the time the stores go by.
pub struct Answerers {
  pub host: Option<Arc<dyn Host>>,
  pub stores: Stores,
  pub clock: Arc<Clock>,
}

impl Scheduler {
  /// Starts the thread for worker number `worker`. `to_isolate` is where results go.
  pub fn spawn(
    worker: u64,
    to_isolate: Sender<IsolateMessage>,
    monitor: Arc<Monitor>,
    limits: Limits,
    answerers: Answerers,
    public_network_only: bool,
  ) -> std::io::Result<Self> {
    let (tx, rx) = unbounded_channel();
    let replies = tx.clone();
    let Answerers { host, stores, clock } = answerers;
    let thread = std::thread::Builder::new()
      .name(format!("wb-sched-{worker}"))
      .spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
          .enable_all()
          .build()
          .expect("tokio runtime for the scheduler thread");
        let store_calls = StoreCalls { worker, stores, clock, queue: None, thread: None };
        let io = Io { host, store_calls, fetches: HashMap::new(), replies, binding_ms: limits.binding_ms, public_network_only };
        runtime.block_on(run(rx, to_isolate, Watchdog { monitor, stopping: std::cell::Cell::new(None) }, io));
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
  /// The CPU watchdog's next look at the running JS.
  CpuCheck,
  /// Stop JS turn N if it is still running (a request's wall-clock limit passed during it).
  WallCheck(u64),
  /// JS turn N was told to stop; if it still runs now, the worker has failed.
  Grace(u64),
  /// Binding call N has waited `limits.bindingMs` for the host.
  HostCall(u32),
}

/// Binding calls (who answers them, how long they may take) and outbound requests in flight.
struct Io {
  host: Option<Arc<dyn Host>>,
  store_calls: StoreCalls,
  fetches: HashMap<u32, InFlight>,
  /// Where the host's replies come back in (this thread's own inbox).
  replies: UnboundedSender<SchedulerMessage>,
  binding_ms: u64,
  public_network_only: bool,
}

/// One binding call for the store thread, and the time it was made at (the host's clock).
struct StoreJob {
  id: u32,
  store: Store,
  call: HostCall,
  now_ms: f64,
}

/// This worker's embedded stores and the thread that runs their calls, in order.
struct StoreCalls {
  worker: u64,
  stores: Stores,
  clock: Arc<Clock>,
  /// The store thread's queue and the thread, once it has started.
  queue: Option<std::sync::mpsc::Sender<StoreJob>>,
  thread: Option<JoinHandle<()>>,
}

impl Drop for StoreCalls {
  /// When the scheduler stops: the store thread finishes the calls already queued (writes the
  /// worker made are done, not dropped half-way; their answers go nowhere) and is joined.
  fn drop(&mut self) {
    self.queue = None;
    if let Some(thread) = self.thread.take() {
      let _ = thread.join();
    }
  }
}

impl StoreCalls {
  /// Queues `job` for the store thread (starting it if needed); its answer comes back into the
  /// loop as a `HostReplied`. Fails only if the thread cannot be started.
  fn send(&mut self, id: u32, store: Store, call: HostCall, replies: &UnboundedSender<SchedulerMessage>) -> Result<(), JsErrorInfo> {
    if self.queue.is_none() {
      let (queue, jobs) = std::sync::mpsc::channel::<StoreJob>();
      let replies = replies.clone();
      let thread = std::thread::Builder::new()
        .name(format!("wb-store-{}", self.worker))
        .spawn(move || {
          for StoreJob { id, store, call, now_ms } in jobs {
            let result = store.call(call, now_ms);
            if replies.send(SchedulerMessage::HostReplied { id, result }).is_err() {
              return;
            }
          }
        })
        .map_err(|e| JsErrorInfo::new("Error", format!("could not start the thread for the worker's embedded stores: {e}")))?;
      self.queue = Some(queue);
      self.thread = Some(thread);
    }
    let queue = self.queue.as_ref().expect("started above");
    let job = StoreJob { id, store, call, now_ms: self.clock.now_ms() };
    queue.send(job).map_err(|_| JsErrorInfo::new("Error", "the worker's store thread has stopped"))
  }
}

/// An outbound request from start until its response body has been read (or it failed).
struct InFlight {
  task: tokio::task::AbortHandle,
  /// The head has not been answered yet.
  head_pending: bool,
  /// Body read requests for the task.
  reads: UnboundedSender<u32>,
  /// The streamed request body, until JS ends it.
  upload: Option<tokio::sync::mpsc::Sender<super::fetch::UploadChunk>>,
  /// Body reads and writes not answered yet.
  waiting: HashSet<u32>,
  /// A `cloudflare:sockets` socket (src/runtime/sockets/), counted against MAX_SOCKETS.
  socket: bool,
}

fn aborted() -> JsErrorInfo {
  JsErrorInfo::new("AbortError", "The fetch was aborted")
}

fn gone() -> JsErrorInfo {
  JsErrorInfo::new("TypeError", "This fetch's body is no longer available (it was cancelled, aborted or already finished).")
}

impl Io {
  fn start(&mut self, id: u32, call: HostCall, untimed: bool, timers: &mut TimerQueue<Due>) -> Option<CallbackMessage> {
    let binding_ms = if untimed { 0 } else { self.binding_ms };
    if let Some(store) = self.store_calls.stores.get(&call.binding) {
      if let Err(error) = self.store_calls.send(id, store, call, &self.replies) {
        return Some(CallbackMessage::HostCallDone { id, result: Err(error) });
      }
      if binding_ms > 0 {
        timers.insert(Due::HostCall(id), Instant::now() + Duration::from_millis(binding_ms));
      }
      return None;
    }
    let Some(host) = &self.host else {
      let error = JsErrorInfo::new("Error", format!("env.{} has no host handler (the worker was created without bindings support)", call.binding));
      return Some(CallbackMessage::HostCallDone { id, result: Err(error) });
    };
    // Body-stream calls wait on purpose (a `write` waits for a slow reader): no time limit.
    if binding_ms > 0 && call.binding != super::types::BODY_BINDING {
      timers.insert(Due::HostCall(id), Instant::now() + Duration::from_millis(binding_ms));
    }
    let replies = self.replies.clone();
    host.call(call, Box::new(move |result| drop(replies.send(SchedulerMessage::HostReplied { id, result }))));
    None
  }

  /// Starts outbound request `id` as a task on this runtime.
  fn fetch(&mut self, id: u32, mut request: super::types::FetchRequest) {
    request.public_only = self.public_network_only;
    let (upload, chunks) = if request.body_stream {
      // One chunk in the channel at a time: JS's next write waits until this one is taken.
      let (tx, rx) = tokio::sync::mpsc::channel(1);
      (Some(tx), Some(rx))
    } else {
      (None, None)
    };
    let (reads, read_requests) = unbounded_channel();
    let socket = request.method == super::sockets::METHOD;
    let too_many = socket && self.fetches.values().filter(|f| f.socket).count() >= super::sockets::MAX_SOCKETS;
    let task = match (request.websocket, chunks) {
      _ if too_many => tokio::spawn(super::sockets::refuse(id, self.replies.clone())),
      (false, Some(writes)) if socket => tokio::spawn(super::sockets::run(id, request, writes, read_requests, self.replies.clone())),
      (true, Some(frames)) => tokio::spawn(super::websocket_client::run(id, request, frames, read_requests, self.replies.clone())),
      (_, chunks) => tokio::spawn(super::fetch::run(id, request, chunks, read_requests, self.replies.clone())),
    };
    self.fetches.insert(id, InFlight { task: task.abort_handle(), head_pending: true, reads, upload, waiting: HashSet::new(), socket });
  }

  /// Asks for the next chunk of request `id`'s response body; an answer is returned if the
  /// body is gone.
  fn read(&mut self, id: u32, read: u32) -> Option<CallbackMessage> {
    match self.fetches.get_mut(&id) {
      Some(fetch) if !fetch.head_pending && fetch.reads.send(read).is_ok() => {
        fetch.waiting.insert(read);
        None
      }
      _ => Some(CallbackMessage::HostCallDone { id: read, result: Err(gone()) }),
    }
  }

  /// Passes one chunk of request `id`'s streamed body on (or ends or fails the body).
  fn write(&mut self, id: u32, write: u32, chunk: Option<Result<bytes::Bytes, String>>) -> Option<CallbackMessage> {
    let done = |result| Some(CallbackMessage::HostCallDone { id: write, result });
    let Some(fetch) = self.fetches.get_mut(&id) else { return done(Err(gone())) };
    let Some(upload) = fetch.upload.clone() else { return done(Err(gone())) };
    match chunk {
      None => {
        fetch.upload = None;
        done(Ok(HostResult::default()))
      }
      Some(Err(reason)) => {
        fetch.upload = None;
        tokio::spawn(async move { upload.send(Err(std::io::Error::other(reason))).await });
        done(Ok(HostResult::default()))
      }
      Some(Ok(bytes)) => {
        fetch.waiting.insert(write);
        let replies = self.replies.clone();
        tokio::spawn(async move {
          let result = match upload.send(Ok(bytes)).await {
            Ok(()) => Ok(HostResult::default()),
            Err(_) => Err(JsErrorInfo::new("TypeError", "The request body could not be sent: the connection no longer reads it.")),
          };
          let _ = replies.send(SchedulerMessage::FetchChunk { id, call: write, result });
        });
        None
      }
    }
  }

  /// Aborts outbound request `id`; returns the answers owed to calls still waiting on it.
  fn cancel(&mut self, id: u32) -> Vec<CallbackMessage> {
    let Some(fetch) = self.fetches.remove(&id) else { return Vec::new() };
    fetch.task.abort();
    let head = fetch.head_pending.then_some(id);
    head.into_iter().chain(fetch.waiting).map(|call| CallbackMessage::HostCallDone { id: call, result: Err(aborted()) }).collect()
  }
}

/// How often the watchdog looks at a turn that has neither a CPU budget nor a wall-clock
/// deadline of its own (`cpuMs: 0`, its request's deadline already with this thread), rather
/// than disarming while it runs: disarming could miss the next turn, which finds the watchdog
/// still armed and asks for nothing.
const UNLIMITED_POLL: Duration = Duration::from_millis(100);
/// How long a turn may keep running after a request's wall-clock limit passed during it.
const WALL_GRACE: Duration = Duration::from_millis(10);
/// How much CPU time terminated JS may use before it actually stops, before the worker is
/// declared failed. CPU time, not wall time: on a loaded machine a thread that gets no CPU
/// cannot stop either, and is not stuck.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// However little CPU it gets, terminated JS that has not stopped after this long has failed.
const STOP_GRACE_WALL: Duration = Duration::from_secs(20);

struct Watchdog {
  monitor: Arc<Monitor>,
  /// The turn told to stop: its number, its CPU time then, and when.
  stopping: std::cell::Cell<Option<(u64, Duration, Instant)>>,
}

impl Watchdog {
  /// When to look at the running turn next: when its CPU budget runs out, or shortly after its
  /// wall-clock deadline, whichever comes first ([`UNLIMITED_POLL`] from now if it has
  /// neither); `None` if no turn is running. A deadline is never taken from a turn that has
  /// ended: a check scheduled for the last turn's wall-clock deadline (30 s away by default)
  /// would leave the watchdog armed with nothing to look at the next turn in time, and that turn
  /// (finding it armed) would ask for nothing.
  fn next_check(&self, now: Instant) -> Option<Instant> {
    let (_, used, budget) = self.monitor.current_turn()?;
    let cpu = (budget != Duration::from_nanos(u64::MAX)).then(|| now + budget.saturating_sub(used));
    let wall = self.monitor.turn_wall_deadline().map(|at| Instant::from_std(at + WALL_GRACE));
    Some(match (cpu, wall) {
      (Some(a), Some(b)) => a.min(b),
      (a, b) => a.or(b).unwrap_or(now + UNLIMITED_POLL),
    })
  }

  /// Disarms the watchdog (no check is scheduled), then re-checks: a turn that started
  /// meanwhile either saw the watchdog disarmed and asks for a check itself, or is seen running
  /// here and gets one now (both flags are SeqCst, so one of the two always happens).
  fn rearm_if_running(&self, timers: &mut TimerQueue<Due>) {
    timers.remove(Due::CpuCheck);
    self.monitor.watchdog_armed.store(false, Ordering::SeqCst);
    if self.monitor.current_turn().is_some() && !self.monitor.watchdog_armed.swap(true, Ordering::SeqCst) {
      // A turn that ended in between is looked at again at once (and found idle).
      let now = Instant::now();
      timers.insert(Due::CpuCheck, self.next_check(now).unwrap_or(now));
    }
  }

  /// Handles a watchdog deadline; may schedule the next one.
  fn check(&self, what: Due, timers: &mut TimerQueue<Due>) {
    let now = Instant::now();
    match what {
      Due::CpuCheck => {
        let past_wall = self.monitor.turn_wall_deadline().is_some_and(|at| Instant::from_std(at + WALL_GRACE) <= now) && !self.monitor.debugging.load(Ordering::SeqCst);
        match self.monitor.current_turn() {
          Some((turn, used, budget)) if used >= budget || past_wall => {
            self.monitor.terminate(if used >= budget { StopReason::Cpu } else { StopReason::Wall });
            self.stopping.set(Some((turn, used, now)));
            timers.insert(Due::Grace(turn), now + STOP_GRACE);
            self.monitor.watchdog_armed.store(false, Ordering::SeqCst);
          }
          // Not yet: look again when it could be (the turn may have ended just now).
          Some(_) => match self.next_check(now) {
            Some(at) => timers.insert(Due::CpuCheck, at),
            None => self.rearm_if_running(timers),
          },
          // Idle: sleep until the next turn asks again.
          None => self.rearm_if_running(timers),
        }
      }
      Due::WallCheck(turn) => {
        if self.monitor.debugging.load(Ordering::SeqCst) {
          return;
        }
        if let Some((_, used, _)) = self.monitor.current_turn().filter(|(t, _, _)| *t == turn) {
          self.monitor.terminate(StopReason::Wall);
          self.stopping.set(Some((turn, used, now)));
          timers.insert(Due::Grace(turn), now + STOP_GRACE);
        }
      }
      Due::Grace(turn) => {
        let Some((_, used, _)) = self.monitor.current_turn().filter(|(t, _, _)| *t == turn) else { return };
        let (at_stop, since) = self.stopping.get().filter(|(t, _, _)| *t == turn).map_or((used, now), |(_, cpu, at)| (cpu, at));
        let spent = used.saturating_sub(at_stop);
        if spent >= STOP_GRACE || now.duration_since(since) >= STOP_GRACE_WALL {
          self.monitor.mark_failed();
        } else {
          timers.insert(Due::Grace(turn), now + (STOP_GRACE - spent));
        }
      }
      Due::Timer(_) | Due::Request(_) | Due::HostCall(_) => {}
    }
  }
}

/// How far ahead of its deadline a timer is handed to the isolate thread.
const EARLY: Duration = Duration::from_millis(1);

impl Due {
  fn message(self, due: Instant) -> CallbackMessage {
    match self {
      Due::Timer(id) => CallbackMessage::TimerFired { id, due: due.into_std() },
      Due::Request(id) => CallbackMessage::DeadlineReached { id },
      Due::HostCall(id) => CallbackMessage::HostCallDone {
        id,
        result: Err(JsErrorInfo::new("Error", "The binding call timed out: the host's handler did not settle within limits.bindingMs")),
      },
      Due::CpuCheck | Due::WallCheck(_) | Due::Grace(_) => unreachable!("watchdog deadlines stay on the scheduler thread"),
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

async fn run(mut rx: UnboundedReceiver<SchedulerMessage>, to_isolate: Sender<IsolateMessage>, watchdog: Watchdog, mut io: Io) {
  let mut timers = TimerQueue::<Due>::default();
  loop {
    let next = timers.next_deadline().map(|deadline| deadline.checked_sub(EARLY).unwrap_or(deadline));
    let message = tokio::select! {
      message = rx.recv() => message,
      _ = sleep_until_or_forever(next) => {
        for (what, deadline) in timers.take_due(Instant::now() + EARLY) {
          match what {
            Due::Timer(_) | Due::Request(_) | Due::HostCall(_) => {
              if let Due::Request(_) = what {
                // If JS is running, the isolate cannot take the message: stop that stretch
                // unless it ends on its own very soon.
                if let Some((turn, _, _)) = watchdog.monitor.current_turn() {
                  timers.insert(Due::WallCheck(turn), deadline + WALL_GRACE);
                }
              }
              if to_isolate.send(IsolateMessage::Callback(what.message(deadline))).is_err() {
                return;
              }
            }
            _ => watchdog.check(what, &mut timers),
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
      Some(SchedulerMessage::ArmWatchdog) => {
        let now = Instant::now();
        timers.insert(Due::CpuCheck, watchdog.next_check(now).unwrap_or(now));
      }
      Some(SchedulerMessage::HostCall { id, call, untimed }) => {
        if let Some(message) = io.start(id, call, untimed, &mut timers) {
          if to_isolate.send(IsolateMessage::Callback(message)).is_err() {
            return;
          }
        }
      }
      Some(SchedulerMessage::HostReplied { id, result }) => {
        timers.remove(Due::HostCall(id));
        if to_isolate.send(IsolateMessage::Callback(CallbackMessage::HostCallDone { id, result })).is_err() {
          return;
        }
      }
      Some(SchedulerMessage::Fetch { id, request }) => io.fetch(id, request),
      Some(SchedulerMessage::FetchRead { id, read }) => {
        if let Some(answer) = io.read(id, read) {
          if to_isolate.send(IsolateMessage::Callback(answer)).is_err() {
            return;
          }
        }
      }
      Some(SchedulerMessage::FetchWrite { id, write, chunk }) => {
        if let Some(answer) = io.write(id, write, chunk) {
          if to_isolate.send(IsolateMessage::Callback(answer)).is_err() {
            return;
          }
        }
      }
      Some(SchedulerMessage::CancelFetch { id }) => {
        for answer in io.cancel(id) {
          if to_isolate.send(IsolateMessage::Callback(answer)).is_err() {
            return;
          }
        }
      }
      Some(SchedulerMessage::FetchFinished { id, result, streaming }) => {
        let Some(fetch) = io.fetches.get_mut(&id) else { continue };
        fetch.head_pending = false;
        if !streaming {
          io.fetches.remove(&id);
        }
        if to_isolate.send(IsolateMessage::Callback(CallbackMessage::HostCallDone { id, result })).is_err() {
          return;
        }
      }
      Some(SchedulerMessage::FetchChunk { id, call, result }) => {
        // Only calls still owed an answer get one (a cancel may have answered them already).
        let owed = io.fetches.get_mut(&id).is_some_and(|fetch| fetch.waiting.remove(&call));
        if owed && to_isolate.send(IsolateMessage::Callback(CallbackMessage::HostCallDone { id: call, result })).is_err() {
          return;
        }
      }
      Some(SchedulerMessage::FetchBodyEnded { id }) => {
        io.fetches.remove(&id);
      }
      Some(SchedulerMessage::Reset) => {
        for (_, fetch) in io.fetches.drain() {
          fetch.task.abort();
        }
        timers = TimerQueue::default();
        // The isolate thread sent this before it started the next isolate, but on a busy
        // machine this thread may take it only after that isolate is already running JS: a
        // turn that found the watchdog armed (by a check of the old isolate's that was still
        // pending) asked for nothing, and the check it relied on was just dropped. Disarm,
        // then look again as an idle check does, so such a turn is watched.
        watchdog.rearm_if_running(&mut timers);
      }
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
