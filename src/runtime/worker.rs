//! [`Worker`]: the host's handle to one running worker (an isolate thread plus a scheduler
//! thread). Every method is callable from any thread and never blocks on JS, except `dispose`,
//! which stops the script if needed and joins the threads.

use super::isolate::{self, ReadyCallback, Startup};
use super::monitor::{Monitor, StopReason};
use super::messages::{DispatchReply, Event, IsolateMessage, ScheduledReply, SettledReply};
use super::platform;
use super::store::Clock;
use super::types::{RequestData, ResponseData, ScheduledEvent, ScriptFormat, WorkerError};
use super::options::WorkerOptions;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Stack for the isolate thread: V8 keeps its own limit (about 1 MB) well inside this.
const ISOLATE_STACK_BYTES: usize = 8 << 20;

static NEXT_WORKER: AtomicU64 = AtomicU64::new(1);

pub struct Worker {
  inbox: Mutex<Sender<IsolateMessage>>,
  monitor: Arc<Monitor>,
  clock: Arc<Clock>,
  thread: Mutex<Option<JoinHandle<()>>>,
  disposed: AtomicBool,
}

impl Worker {
  /// Starts a worker. `on_ready` is called (on the isolate thread) once the script has loaded,
  /// with its detected format, or with the error that stopped it; after an error the worker's
  /// threads end by themselves and `dispose` is a formality.
  pub fn spawn(options: WorkerOptions, on_ready: ReadyCallback) -> Result<Worker, WorkerError> {
    platform::init_v8();
    super::ops::rtti::set_probe_runner(run_probe);
    let (tx, rx) = channel();
    if let Some(inspector) = &options.inspector {
      inspector.set_inbox(tx.clone());
    }
    let monitor = Arc::new(Monitor::default());
    let clock = Arc::new(Clock::default());
    let n = NEXT_WORKER.fetch_add(1, Ordering::Relaxed);
    let startup = Startup {
      worker: n,
      options,
      inbox: rx,
      inbox_sender: tx.clone(),
      monitor: monitor.clone(),
      clock: clock.clone(),
      on_ready,
    };
    let thread = std::thread::Builder::new()
      .name(format!("wb-isolate-{n}"))
      .stack_size(ISOLATE_STACK_BYTES)
      .spawn(move || isolate::run(startup))
      .map_err(|e| WorkerError::runtime("ERR_THREAD", format!("could not start the isolate thread: {e}")))?;
    Ok(Worker {
      inbox: Mutex::new(tx),
      monitor,
      clock,
      thread: Mutex::new(Some(thread)),
      disposed: AtomicBool::new(false),
    })
  }

  /// Starts a worker and waits until its script has loaded.
  pub fn start_blocking(options: WorkerOptions) -> Result<(Worker, ScriptFormat), WorkerError> {
    let (tx, rx) = channel();
    let worker = Worker::spawn(options, Box::new(move |result| drop(tx.send(result))))?;
    match rx.recv() {
      Ok(Ok(format)) => Ok((worker, format)),
      Ok(Err(e)) => Err(e),
      Err(_) => Err(WorkerError::Disposed("the worker stopped during start-up".into())),
    }
  }

  /// The host's clock reads `now_ms` (milliseconds since the epoch): the worker's embedded
  /// stores go by it from now on (KV and cache expirations, upload times), so a host that fakes
  /// its time moves theirs too. Hosts call it with each dispatch; without it they use the system
  /// clock.
  pub fn follow_host_clock(&self, now_ms: f64) {
    self.clock.follow(now_ms);
  }

  /// Sends a request to the worker; `reply` gets the outcome exactly once.
  pub fn dispatch(&self, request: RequestData, reply: DispatchReply) {
    let reply = self.monitor.inflight.guard(reply);
    self.send_event(Event::Fetch { request, reply });
  }

  /// Tells the isolate thread whether the host is sending requests concurrently.
  pub fn note_callers(&self, concurrent: bool) {
    self.monitor.concurrent_callers.store(concurrent, Ordering::Relaxed);
  }

  /// Runs the worker's `scheduled()` handler; `reply` gets the outcome exactly once.
  pub fn scheduled(&self, event: ScheduledEvent, reply: ScheduledReply) {
    let reply = self.monitor.inflight.guard(reply);
    self.send_event(Event::Scheduled { event, reply });
  }

  /// Runs the worker's `queue()` handler for one batch; `reply` gets the outcome exactly once.
  pub fn queue(&self, event: super::queue::QueueEvent, reply: super::queue::QueueReply) {
    let reply = self.monitor.inflight.guard(reply);
    self.send_event(Event::Queue { event, reply });
  }

  /// Runs one RPC call into the worker; `reply` gets the outcome exactly once.
  pub fn rpc(&self, event: super::rpc::RpcEvent, reply: super::rpc::RpcReply) {
    let reply = self.monitor.inflight.guard(reply);
    self.send_event(Event::Rpc { event, reply });
  }

  /// Calls `reply` once every `ctx.waitUntil()` promise registered so far has settled (or can
  /// no longer settle), or at once if there are none. Also called if the worker stops.
  pub fn when_settled(&self, reply: SettledReply) {
    if self.is_disposed() {
      return reply();
    }
    if let Err(std::sync::mpsc::SendError(IsolateMessage::WhenSettled(reply))) =
      self.inbox.lock().unwrap().send(IsolateMessage::WhenSettled(reply))
    {
      reply();
    }
  }

  fn send_event(&self, event: Event) {
    if self.is_disposed() {
      return event.fail(WorkerError::Disposed("the worker has been disposed".into()));
    }
    if self.monitor.failed.load(Ordering::Acquire) {
      return event.fail(WorkerError::runtime(
        "ERR_WORKER_FAILED",
        "The worker failed: its JavaScript did not stop after being terminated for exceeding a limit. Dispose it and create a new one.",
      ));
    }
    if let Err(std::sync::mpsc::SendError(IsolateMessage::Dispatch(event))) = self.inbox.lock().unwrap().send(IsolateMessage::Dispatch(event)) {
      event.fail(WorkerError::Disposed("the worker is no longer running".into()));
    }
  }

  /// Sends a request and waits for the response.
  pub fn dispatch_blocking(&self, request: RequestData) -> Result<ResponseData, WorkerError> {
    let (tx, rx) = channel();
    self.dispatch(request, Box::new(move |result| drop(tx.send(result))));
    rx.recv().unwrap_or_else(|_| Err(WorkerError::Disposed("the worker stopped".into())))
  }

  pub fn is_disposed(&self) -> bool {
    self.disposed.load(Ordering::Acquire)
  }

  /// Stops the worker: pending requests fail, running JS is terminated, both threads are joined.
  /// Calling it again does nothing.
  pub fn dispose(&self) {
    if self.disposed.swap(true, Ordering::AcqRel) {
      return;
    }
    let _ = self.inbox.lock().unwrap().send(IsolateMessage::Shutdown);
    self.monitor.terminate(StopReason::Dispose);
    if let Some(thread) = self.thread.lock().unwrap().take() {
      if self.monitor.failed.load(Ordering::Acquire) {
        // Its JS ignored termination: answer what it holds and leave the thread behind rather
        // than hang the host.
        self.monitor.inflight.fail_all(|| WorkerError::Disposed("the worker was disposed before it responded".into()));
        return;
      }
      let _ = thread.join();
    }
    // An event the isolate thread never took out of its inbox (sent while a limit was
    // restarting the isolate, say) was dropped with the thread: answer it, or its caller would
    // wait forever and Node could not exit.
    self.monitor.inflight.fail_all(|| WorkerError::Disposed("the worker was disposed before it responded".into()));
  }
}

impl Drop for Worker {
  fn drop(&mut self) {
    self.dispose();
  }
}

/// `workerd:rtti`'s probe (src/runtime/ops/rtti.rs): `script`, a module, runs in a worker of its
/// own with `compat_json`, whose answer to one GET is returned as text; the worker is then stopped.
fn run_probe(script: String, filename: &str, compat_json: String) -> Result<String, String> {
  use super::types::{Body, LogLevel};
  let mut options = WorkerOptions::new(script);
  options.filename = filename.into();
  options.format = Some(ScriptFormat::Module);
  options.compat_json = compat_json;
  options.code_cache = false;
  let log: Arc<dyn Fn(LogLevel, String) + Send + Sync> = Arc::new(|_, _| {});
  options.log = log;
  let (worker, _) = Worker::start_blocking(options).map_err(|e| format!("the probe worker did not start: {e}"))?;
  let response = worker.dispatch_blocking(RequestData::get("http://rtti.probe/"));
  worker.dispose();
  let response = response.map_err(|e| format!("the probe worker failed: {e}"))?;
  let bytes = match response.body {
    Body::Bytes(bytes) => bytes,
    Body::Empty => Default::default(),
    Body::Stream(_) => return Err("the probe worker streamed its answer".into()),
  };
  let text = String::from_utf8_lossy(&bytes).into_owned();
  if response.status != 200 {
    return Err(format!("the probe worker answered {}: {text}", response.status));
  }
  Ok(text)
}
