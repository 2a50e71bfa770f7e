//! The isolate thread: owns one V8 isolate and the state its ops share (`ops::IsolateState`,
//! made here for each isolate and kept in its slot), and runs passes of boot → pump → teardown
//! until the worker is disposed (a limit that stops the script starts a fresh isolate with the
//! same script and bindings). Only the worker's handle (`worker.rs`) sits above it; it uses the
//! ops, the module registry and the script loader, and none of them refers back to it.
//!
//! The seams: `boot` (isolate creation, bootstrap, script loading), `pump` (the message loop),
//! `contexts` (home and per-request contexts), `limits` (CPU/wall/memory stops) and `snapshot`
//! (the startup snapshot). The thread blocks on its inbox between messages, so an idle worker
//! uses no CPU.

use super::allocator;
use super::code_cache;
use super::errors::{describe_exception, thrown};
use super::monitor::{Monitor, StopReason};
use super::modules;
use super::messages::{CallbackMessage, Event, IsolateMessage, SchedulerMessage};
use super::ops;
use super::ops::{ContextHolds, IsolateState, Pending, StateRef};
use super::platform;
use super::scheduler::{Answerers, Scheduler};
use super::store::Clock;
use super::script;
use super::types::{Body, HostCall, BODY_BINDING, Isolation, JsErrorInfo, Limits, LogLevel, RequestData, ScheduledEvent, ScriptFormat, WorkerError};
use super::options::WorkerOptions;
use std::collections::VecDeque;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod boot;
mod contexts;
mod limits;
mod pump;
mod snapshot;

use boot::*;
pub(crate) use boot::{call_internal, install_runtime};
use contexts::*;
use limits::*;
use pump::*;
pub use snapshot::prewarm;

use super::sources::{latin1, BOOTSTRAP_FILES, EAGER_FILES, INTERNAL_SCRIPT_PREFIX, STREAMS_PONYFILL};

/// Called once when the worker has started (or failed to).
pub type ReadyCallback = Box<dyn FnOnce(Result<ScriptFormat, WorkerError>) + Send>;

/// What the isolate thread needs to start.
pub(crate) struct Startup {
  /// The worker's number, used in thread names.
  pub worker: u64,
  pub options: WorkerOptions,
  pub inbox: Receiver<IsolateMessage>,
  pub inbox_sender: Sender<IsolateMessage>,
  pub monitor: Arc<Monitor>,
  /// The time the worker's embedded stores go by.
  pub clock: Arc<Clock>,
  pub on_ready: ReadyCallback,
}

/// Body of the isolate thread.
pub(crate) fn run(startup: Startup) {
  let Startup { worker, options, inbox, inbox_sender, monitor, clock, on_ready } = startup;
  monitor.attach_isolate_thread();
  let store_clock = clock.clone();
  let answerers = Answerers { host: options.host.clone(), stores: options.stores.clone(), clock };
  let mut scheduler = match Scheduler::spawn(worker, inbox_sender, monitor.clone(), options.limits.clone(), answerers, options.public_network_only) {
    Ok(s) => s,
    Err(e) => return on_ready(Err(WorkerError::runtime("ERR_THREAD", format!("could not start the scheduler thread: {e}")))),
  };
  let mut on_ready = Some(on_ready);
  let mut events = EventQueue::default();
  let mut last_id = 0;
  // Hashed once here rather than on every load (per-request mode loads for every request).
  let source_digest = options.code_cache.then(|| code_cache::SourceDigest::new(&options.filename, &options.script));
  let nodejs_compat = ops::nodejs_compat(&options.compat_json);
  // The host's inspector commands, taken over by each isolate of this worker in turn.
  let inspector_commands = options.inspector.as_ref().and_then(|channel| channel.take_receiver()).map(Rc::new);
  // Each pass runs one isolate; a limit that stops the script ends the pass and the next one
  // starts a fresh isolate with the same script and bindings.
  loop {
    let (mut isolate, budget) = new_isolate(&options, &monitor);
    let inspector = match (&options.inspector, &inspector_commands) {
      (Some(channel), Some(commands)) => Some(super::inspector::WorkerInspector::new(&mut isolate, channel.clone(), commands.clone(), monitor.clone())),
      _ => None,
    };
    let state: StateRef = Rc::new(RefCell::new(IsolateState {
      log: options.log.clone(),
      monitor: monitor.clone(),
      scheduler: scheduler.sender(),
      limits: options.limits.clone(),
      pending: HashMap::new(),
      unarmed_deadlines: Vec::new(),
      background: 0,
      settled_waiters: Vec::new(),
      timers: HashMap::new(),
      last_id,
      host_calls: HashMap::new(),
      current_owner: None,
      cpu_used: HashMap::new(),
      stores: options.stores.clone(),
      store_clock: store_clock.clone(),
      cpu_culprit: None,
      codecs: HashMap::new(),
      zlib_handles: HashMap::new(),
      text_decoders: HashMap::new(),
      icu_decoders: HashMap::new(),
      url_patterns: HashMap::new(),
      hashers: HashMap::new(),
      node_hashes: HashMap::new(),
      rewriters: HashMap::new(),
      started: std::time::Instant::now(),
      unhandled: Vec::new(),
      handled_late: Vec::new(),
      early_rejections: (!nodejs_compat.enabled.iter().any(|f| f == "unhandled_rejection_after_microtask_checkpoint")).then_some(false),
      tainted: false,
      source_digest,
      nodejs_compat: nodejs_compat.clone(),
      budget: budget.clone(),
      global_scope: false,
      inspector,
    }));
    isolate.set_slot(state.clone());
    // Bytes the engine hands the worker as ArrayBuffers are charged like its own (ops::uint8_array).
    isolate.set_slot(allocator::HeldBytes { budget, monitor: monitor.clone() });

    let exit = match boot(&mut isolate, &options, &state) {
      Ok((home, format)) => {
        if let Some(ready) = on_ready.take() {
          ready(Ok(format));
        }
        let per_request = match options.isolation {
          Isolation::Shared => None,
          Isolation::PerRequest { max_reuse } => Some(PerRequest {
            format,
            max_reuse: max_reuse.max(1),
            spare: None,
            spare_failed: false,
            live: HashMap::new(),
            served: 0,
          }),
        };
        let mut runtime = Runtime { home, per_request };
        let exit = pump(&mut isolate, &mut runtime, &options, &state, &inbox, &mut events, &monitor);
        if matches!(exit, PumpExit::Shutdown) {
          // The next worker of this process compiles less of the same modules.
          pump::with_registry(&mut isolate, &runtime, modules::refresh_code_caches);
        }
        drop(runtime);
        exit
      }
      Err(error) => match on_ready.take() {
        Some(ready) => {
          ready(Err(error));
          PumpExit::Shutdown
        }
        None => {
          // The script started before, so this is not the script's fault (e.g. the memory
          // limit hit again during start-up). Stop for good rather than loop. A dispose that
          // came while the fresh isolate started is no failure.
          if !matches!(error, WorkerError::Disposed(_)) {
            let sink = options.log.clone();
            sink(LogLevel::Error, format!("workerbox: the worker could not restart and is stopping: {error}"));
          }
          PumpExit::Shutdown
        }
      },
    };

    // Answer whatever is still waiting, then tear the isolate down.
    let (pending, waiters, timer_id) = {
      let mut s = state.borrow_mut();
      s.timers.clear();
      s.host_calls.clear();
      s.rewriters.clear();
      s.unhandled.clear();
      s.handled_late.clear();
      (s.pending.drain().collect::<Vec<_>>(), std::mem::take(&mut s.settled_waiters), s.last_id)
    };
    last_id = timer_id;
    for (id, event) in pending {
      event.fail(match &exit {
        PumpExit::Shutdown => WorkerError::Disposed("the worker was disposed before it responded".into()),
        PumpExit::Recycle { reason, culprit } => limit_error(*reason, &options.limits, *culprit == Some(id) || culprit.is_none()),
        // Renewal waits until no event is running, so nothing is pending here.
        PumpExit::Renew => WorkerError::runtime("ERR_INTERNAL", "a request was still running when the isolate was renewed"),
      });
    }
    for waiter in waiters {
      waiter();
    }
    // Body streams between the host and this isolate can make no more progress: tell the host
    // to end them (an error for the reader of a response body, a cancel for a request body).
    // A renewal happens only when no event is running, and bodies of queued requests must
    // survive it, so it resets nothing on the host.
    if let (Some(host), false) = (&options.host, matches!(exit, PumpExit::Renew)) {
      let reason = match &exit {
        PumpExit::Shutdown | PumpExit::Renew => "the worker was disposed".to_owned(),
        PumpExit::Recycle { reason, .. } => format!("{} The worker was restarted.", limit_text(*reason, &options.limits)),
      };
      let call = HostCall { binding: BODY_BINDING.into(), method: "reset".into(), args: serde_json::json!({ "reason": reason }).to_string(), bytes: None };
      host.call(call, Box::new(|_| {}));
    }
    drop(state);
    monitor.set_handle(None);
    drop(isolate);
    match exit {
      PumpExit::Shutdown => break,
      PumpExit::Renew => {
        let _ = scheduler.sender().send(SchedulerMessage::Reset);
      }
      PumpExit::Recycle { reason, .. } => {
        let _ = scheduler.sender().send(SchedulerMessage::Reset);
        let sink = options.log.clone();
        sink(LogLevel::Warn, format!("workerbox: {} The worker was restarted with a fresh isolate.", limit_text(reason, &options.limits)));
      }
    }
  }
  // `events` drops here, failing anything still queued.
  drop(events);
  scheduler.shutdown();
  release_freed_memory();
}

/// Makes glibc hand freed memory back to the OS promptly from then on, for a process that makes
/// and disposes many workers and then stays alive (a test run's Vitest process, measured while
/// Vitest's typecheck runs after the test files). glibc raises its trim threshold as the process
/// frees large blocks (up to 64 MB), and the free top of a thread's arena is only given back once
/// it passes that threshold; `malloc_trim` does not shrink those tops (only the main arena's), so
/// each arena the isolate and tokio threads used kept 0.5-3.5 MB resident after they ended
/// (13-14 MB in all on workers-qb's suite, 5-6 MB with this). A fixed threshold of 128 KiB (glibc's
/// starting value; setting it also stops the dynamic raise) trims a top on the next free that
/// passes it. Returns whether the setting was made (Linux with glibc only; a no-op elsewhere).
pub fn trim_freed_memory_eagerly() -> bool {
  #[cfg(all(target_os = "linux", target_env = "gnu"))]
  {
    // SAFETY: mallopt only changes the allocator's parameters; it takes the arenas' locks itself.
    unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10) == 1 }
  }
  #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
  {
    false
  }
}

/// V8 keeps the heap pages an isolate frees in a process-wide pool for the next allocation of any
/// isolate (a torn-down isolate's young generation among them), and gives pooled pages back to the
/// OS only from a delayed task (8-16 s) that it posts when pages are added and stops once the pool
/// is empty; pages pooled by a teardown after that task last ran stay until some isolate pools
/// more. After 200 workers ended, 510 MB of such pages stayed resident for as long as the warm
/// pool's spares lived; in a test run's Vitest process whose workers have all ended (while its
/// typecheck runs), 20-30 MB stayed through the typecheck. V8 empties the pool on memory pressure,
/// but only through an isolate, and by then there may be none: so the trimmer, once workers have
/// stopped ending, makes a bare isolate (no context), reports critical pressure to it, which
/// empties every isolate's share of the pool, and drops it. The next worker then faults its pages
/// in afresh; within a burst of creates and disposes the pool is untouched (turning the teardown
/// pooling off instead made `createWorker` 25-70% slower).
///
/// The bare isolate starts from the snapshot the workers start from: V8 shares one read-only heap
/// among the isolates of the process, made from the snapshot of an isolate that finds none, and a
/// worker from workerbox's snapshot made beside one from V8's own read the wrong heap (a libc++
/// bounds assertion in the deserializer, in `scripts/workerd-tests.mjs`).
pub(crate) fn release_pooled_pages() {
  let Some(blob) = snapshot::settled_startup_snapshot() else { return };
  let mut isolate = v8::Isolate::new(snapshot::starting_from(v8::CreateParams::default(), blob));
  isolate.memory_pressure_notification(v8::MemoryPressureLevel::Critical);
}

/// A disposed isolate frees tens of megabytes into this thread's malloc arena, where glibc keeps
/// them; hand the free pages back to the OS so a process that makes and drops many workers (a
/// test runner, a dev server reloading) does not grow by the arenas' high-water marks.
///
/// `malloc_trim` walks every arena of the process, each page it gives back costs a TLB flush on
/// every CPU, and the next worker then faults fresh pages in again: trimming after every ended
/// worker made a create that follows a dispose about 7% slower. So one thread trims, once no
/// worker has ended for `TRIM_AFTER_QUIET`: a burst of disposes (a test run's teardown, a
/// create-and-dispose loop) costs one trim at its end. That thread ("workerbox-trim") is the
/// process's, started by the first worker to end and kept for the life of the process (it
/// sleeps until a worker ends; not a `wb-` thread, which are each worker's own). It empties
/// V8's page pool first (`release_pooled_pages`), on every platform; the arena trim is glibc's.
fn release_freed_memory() {
  use std::sync::{Condvar, Mutex, OnceLock};
  use std::time::Instant;
  const TRIM_AFTER_QUIET: std::time::Duration = std::time::Duration::from_millis(250);
  /// When the trimmer should trim next (`None`: nothing to do), and its wake-up.
  static DUE: OnceLock<(Mutex<Option<Instant>>, Condvar)> = OnceLock::new();
  let mut started = false;
  let (due, wake) = DUE.get_or_init(|| {
    started = true;
    (Mutex::new(None), Condvar::new())
  });
  *due.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + TRIM_AFTER_QUIET);
  wake.notify_one();
  if !started {
    return;
  }
  let spawned = std::thread::Builder::new().name("workerbox-trim".into()).spawn(move || {
    let mut next = due.lock().unwrap_or_else(|e| e.into_inner());
    loop {
      match *next {
        None => next = wake.wait(next).unwrap_or_else(|e| e.into_inner()),
        Some(at) if Instant::now() < at => next = wake.wait_timeout(next, at - Instant::now()).unwrap_or_else(|e| e.into_inner()).0,
        Some(_) => {
          *next = None;
          drop(next);
          release_pooled_pages();
          trim_malloc_arenas();
          next = due.lock().unwrap_or_else(|e| e.into_inner());
        }
      }
    }
  });
  if spawned.is_err() {
    // No thread to trim later: trim now, as before.
    trim_malloc_arenas();
  }
}

/// Gives glibc's free arena pages back to the OS (elsewhere the allocator does its own keeping).
fn trim_malloc_arenas() {
  #[cfg(all(target_os = "linux", target_env = "gnu"))]
  // SAFETY: malloc_trim only returns free memory to the OS; it is thread-safe.
  unsafe {
    libc::malloc_trim(0);
  }
}
