//! The isolate thread: owns one V8 isolate and its context, boots the JS runtime, loads the
//! user's script, and then pumps messages — dispatches from the host, results from the
//! scheduler — turning each into a JS call followed by a microtask checkpoint.
//!
//! The thread blocks on its inbox between messages, so an idle worker uses no CPU.

use super::allocator;
use super::code_cache;
use super::errors::describe_exception;
use super::monitor::{Monitor, StopReason};
use super::modules;
use super::messages::{CallbackMessage, DispatchReply, Event, IsolateMessage, ScheduledReply, SchedulerMessage, SettledReply};
use super::ops;
use super::platform;
use super::scheduler::Scheduler;
use super::script::{self, thrown};
use super::snapshot;
use super::types::{Body, HostCall, BODY_BINDING, Isolation, JsErrorInfo, Limits, LogLevel, LogSink, RequestData, ScheduledEvent, ScriptFormat, WorkerError, WorkerOptions};
use std::collections::VecDeque;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

include!(concat!(env!("OUT_DIR"), "/bootstrap_files.rs"));

pub(crate) type StateRef = Rc<RefCell<IsolateState>>;

/// A live timer: its JS callback, its period if it repeats, and the request that set it.
pub(crate) struct Timer {
  pub callback: v8::Global<v8::Function>,
  pub repeat: Option<Duration>,
  pub owner: Option<u32>,
}

/// A running event's reply, waiting for the JS side to finish.
pub(crate) enum Pending {
  Fetch(DispatchReply),
  Scheduled(ScheduledReply),
}

impl Pending {
  pub fn fail(self, error: WorkerError) {
    match self {
      Pending::Fetch(reply) => reply(Err(error)),
      Pending::Scheduled(reply) => reply(Err(error)),
    }
  }
}

/// Per-isolate state that ops reach through the isolate's slot.
pub(crate) struct IsolateState {
  pub log: LogSink,
  pub monitor: Arc<Monitor>,
  pub scheduler: UnboundedSender<SchedulerMessage>,
  pub limits: Limits,
  /// Events running in the isolate, waiting for their outcome, by request id.
  pub pending: HashMap<u32, Pending>,
  /// `waitUntil` promises not yet settled, and who waits for them all to settle.
  pub background: u32,
  pub settled_waiters: Vec<SettledReply>,
  pub timers: HashMap<u32, Timer>,
  /// The last id handed out to a timer, I/O call, codec, URLPattern or rewriter; it keeps counting
  /// across isolates, so a stale message about an old isolate's id matches nothing.
  pub last_id: u32,
  /// Binding calls waiting for the host, by id, with the request that made them.
  pub host_calls: HashMap<u32, (v8::Global<v8::PromiseResolver>, Option<u32>)>,
  /// The request the running JS works for: the one dispatched, or the one that set the timer
  /// or made the binding call whose result is being delivered. CPU time is charged to it.
  pub current_owner: Option<u32>,
  /// CPU time each running request has used so far.
  pub cpu_used: HashMap<u32, Duration>,
  /// The request that used up its CPU time between stretches of JS.
  pub cpu_culprit: Option<u32>,
  /// Open CompressionStream/DecompressionStream codecs, by id.
  pub codecs: HashMap<u32, ops::Codec>,
  /// Compiled URLPatterns, by id.
  pub url_patterns: HashMap<u32, ops::UrlPatternState>,
  /// Open DigestStream hashers, by id.
  pub hashers: HashMap<u32, Box<dyn digest::DynDigest>>,
  /// HTMLRewriter transforms in progress, by id; dropping one ends its thread.
  pub rewriters: HashMap<u32, ops::Rewriter>,
  /// When the isolate started: `performance.now()`'s zero.
  pub started: std::time::Instant,
  /// Promises rejected with no handler since the last checkpoint.
  pub unhandled: Vec<(v8::Global<v8::Promise>, v8::Global<v8::Value>)>,
  /// A request failed or an error went uncaught in this isolate: in per-request mode, the
  /// isolate is replaced once its running requests are done.
  pub tainted: bool,
  /// The script's code-cache digest, made once per worker (`None`: code cache off).
  pub source_digest: Option<code_cache::SourceDigest>,
}

impl IsolateState {
  /// A fresh id for a timer, I/O call, codec, URLPattern, hasher or rewriter (never 0).
  pub fn next_id(&mut self) -> u32 {
    self.last_id = self.last_id.wrapping_add(1).max(1);
    self.last_id
  }

  /// Takes a running event's reply (and drops its wall-clock deadline).
  pub fn take_pending(&mut self, id: u32) -> Option<Pending> {
    let pending = self.pending.remove(&id)?;
    self.cpu_used.remove(&id);
    if self.limits.wall_ms > 0 {
      let _ = self.scheduler.send(SchedulerMessage::CancelDeadline { id });
    }
    Some(pending)
  }

  /// Releases whoever waits for background work, once none is left.
  pub fn settled_waiters_if_idle(&mut self) -> Vec<SettledReply> {
    if self.background == 0 {
      std::mem::take(&mut self.settled_waiters)
    } else {
      Vec::new()
    }
  }
}

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
  pub on_ready: ReadyCallback,
}

/// Work a request's context still has under way after its response went out: `waitUntil`
/// promises and response bodies being written to the host. Kept in the context's slot, where
/// the ops find it; in per-request mode the context is retired once both are zero.
#[derive(Default)]
pub(crate) struct ContextHolds {
  pub waits: Cell<u32>,
  pub pumps: Cell<u32>,
}

impl ContextHolds {
  fn idle(&self) -> bool {
    self.waits.get() == 0 && self.pumps.get() == 0
  }
}

/// One context with the user's script loaded, and the JS entry points the pump calls.
struct Ctx {
  context: v8::Global<v8::Context>,
  dispatch_fetch: v8::Global<v8::Function>,
  dispatch_scheduled: v8::Global<v8::Function>,
  holds: Rc<ContextHolds>,
}

/// The contexts of one isolate.
struct Runtime {
  /// The context the script was first loaded in. In shared mode every request runs here; in
  /// per-request mode it serves no request and is only entered for work that belongs to none.
  home: Ctx,
  per_request: Option<PerRequest>,
}

/// Per-request mode: a fresh context for each event, built ahead while the worker is idle.
struct PerRequest {
  format: ScriptFormat,
  max_reuse: u32,
  /// The context for the next event, built while nothing else was waiting.
  spare: Option<Ctx>,
  /// Building the spare failed; the next event builds its own (and reports the error).
  spare_failed: bool,
  /// Contexts of started events not yet retired, by request id.
  live: HashMap<u32, Ctx>,
  /// Contexts this isolate has handed to events.
  served: u32,
}

impl Runtime {
  /// The context an event runs in: its own in per-request mode, else the home context.
  fn ctx_for(&self, id: u32) -> &Ctx {
    self.per_request.as_ref().and_then(|p| p.live.get(&id)).unwrap_or(&self.home)
  }

  /// The context to enter for work done for `owner`.
  fn context_for(&self, owner: Option<u32>) -> &v8::Global<v8::Context> {
    &owner.map_or(&self.home, |id| self.ctx_for(id)).context
  }
}

/// Body of the isolate thread.
pub(crate) fn run(startup: Startup) {
  let Startup { worker, options, inbox, inbox_sender, monitor, on_ready } = startup;
  monitor.attach_isolate_thread();
  let mut scheduler = match Scheduler::spawn(worker, inbox_sender, monitor.clone(), options.limits.clone(), options.host.clone(), options.public_network_only) {
    Ok(s) => s,
    Err(e) => return on_ready(Err(WorkerError::runtime("ERR_THREAD", format!("could not start the scheduler thread: {e}")))),
  };
  let mut on_ready = Some(on_ready);
  let mut events = EventQueue::default();
  let mut last_id = 0;
  // Hashed once here rather than on every load (per-request mode loads for every request).
  let source_digest = options.code_cache.then(|| code_cache::SourceDigest::new(&options.filename, &options.script));
  // Each pass runs one isolate; a limit that stops the script ends the pass and the next one
  // starts a fresh isolate with the same script and bindings.
  loop {
    let mut isolate = new_isolate(&options, &monitor);
    let state: StateRef = Rc::new(RefCell::new(IsolateState {
      log: options.log.clone(),
      monitor: monitor.clone(),
      scheduler: scheduler.sender(),
      limits: options.limits.clone(),
      pending: HashMap::new(),
      background: 0,
      settled_waiters: Vec::new(),
      timers: HashMap::new(),
      last_id,
      host_calls: HashMap::new(),
      current_owner: None,
      cpu_used: HashMap::new(),
      cpu_culprit: None,
      codecs: HashMap::new(),
      url_patterns: HashMap::new(),
      hashers: HashMap::new(),
      rewriters: HashMap::new(),
      started: std::time::Instant::now(),
      unhandled: Vec::new(),
      tainted: false,
      source_digest,
    }));
    isolate.set_slot(state.clone());

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
          // limit hit again during start-up). Stop for good rather than loop.
          let sink = options.log.clone();
          sink(LogLevel::Error, format!("workerbox: the worker could not restart and is stopping: {error}"));
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
}

/// Creates an isolate with the worker's heap and ArrayBuffer limits and our callbacks.
fn new_isolate(options: &WorkerOptions, monitor: &Arc<Monitor>) -> v8::OwnedIsolate {
  let bytes = options.limits.memory_mb as usize * 1024 * 1024;
  let mut params = v8::CreateParams::default()
    .heap_limits(0, bytes)
    .array_buffer_allocator(allocator::capped(bytes).make_shared());
  if let Some(blob) = snapshot::startup_snapshot(options.code_cache_dir.as_deref().filter(|_| options.code_cache)) {
    params = params.snapshot_blob(blob).external_references(&**ops::external_references());
  }
  let mut isolate = v8::Isolate::new(params);
  monitor.set_handle(Some(isolate.thread_safe_handle()));
  // Near the heap limit V8 would abort the whole process; stop the script instead and give the
  // heap a little room to unwind. The monitor (an Arc held by this thread) outlives the isolate.
  isolate.add_near_heap_limit_callback(near_heap_limit, Arc::as_ptr(monitor) as *mut c_void);
  isolate.set_microtasks_policy(v8::MicrotasksPolicy::Explicit);
  isolate.set_promise_reject_callback(on_promise_reject);
  isolate.set_capture_stack_trace_for_uncaught_exceptions(true, 16);
  isolate
}

/// How a pass of the message loop ended.
enum PumpExit {
  /// Dispose, or the host went away.
  Shutdown,
  /// A limit stopped the script; `culprit` is the request whose JS was running, if known.
  Recycle { reason: StopReason, culprit: Option<u32> },
  /// Per-request mode: the isolate served its share of contexts, or saw an error, and no
  /// event is running; continue in a fresh isolate.
  Renew,
}

fn limit_text(reason: StopReason, limits: &Limits) -> String {
  match reason {
    StopReason::Cpu => format!("A request exceeded its CPU time limit of {} ms (limits.cpuMs) and was stopped.", limits.cpu_ms),
    StopReason::Wall => format!("A request exceeded its wall-clock limit of {} ms (limits.wallMs) while running JavaScript and was stopped.", limits.wall_ms),
    StopReason::Memory => format!("The worker exceeded its memory limit of {} MB (limits.memoryMb) and was stopped.", limits.memory_mb),
    StopReason::Dispose => "The worker was disposed.".into(),
  }
}

/// The error for a request that was in the isolate when a limit stopped it: the limit's own
/// code for the request that hit it, `ERR_WORKER_RECYCLED` for the others.
fn limit_error(reason: StopReason, limits: &Limits, culprit: bool) -> WorkerError {
  let code = match reason {
    StopReason::Cpu => "ERR_CPU_LIMIT",
    StopReason::Wall => "ERR_WALL_LIMIT",
    StopReason::Memory => "ERR_MEMORY_LIMIT",
    StopReason::Dispose => return WorkerError::Disposed("the worker was disposed before it responded".into()),
  };
  if culprit {
    WorkerError::runtime(code, limit_text(reason, limits))
  } else {
    WorkerError::runtime(
      "ERR_WORKER_RECYCLED",
      format!("This request was cancelled because the worker restarted: {}", limit_text(reason, limits)),
    )
  }
}

extern "C" fn near_heap_limit(data: *mut c_void, current: usize, _initial: usize) -> usize {
  // SAFETY: `data` is the worker's Monitor, kept alive by the isolate thread beyond the isolate.
  let monitor = unsafe { &*(data as *const Monitor) };
  monitor.terminate(StopReason::Memory);
  current + (32 << 20)
}

extern "C" fn on_promise_reject(message: v8::PromiseRejectMessage) {
  // SAFETY: V8 calls this synchronously on the isolate thread with a context entered.
  let scope = &mut unsafe { v8::CallbackScope::new(&message) };
  let promise = message.get_promise();
  let state = ops::state(scope);
  match message.get_event() {
    v8::PromiseRejectEvent::PromiseRejectWithNoHandler => {
      let reason = message.get_value().unwrap_or_else(|| v8::undefined(scope).into());
      let entry = (v8::Global::new(scope, promise), v8::Global::new(scope, reason));
      state.borrow_mut().unhandled.push(entry);
    }
    v8::PromiseRejectEvent::PromiseHandlerAddedAfterReject => {
      let promise = v8::Global::new(scope, promise);
      state.borrow_mut().unhandled.retain(|(p, _)| *p != promise);
    }
    _ => {}
  }
}

/// Loads the user's script in the isolate's first context (its home) and finds the entry points.
fn boot(isolate: &mut v8::OwnedIsolate, options: &WorkerOptions, state: &StateRef) -> Result<(Ctx, ScriptFormat), WorkerError> {
  let scope = &mut v8::HandleScope::new(isolate);
  let loaded = load_context(scope, options, state, options.format, None);
  let stop = state.borrow().monitor.take_stop();
  if let Some(reason) = stop.filter(|r| *r != StopReason::Dispose) {
    return Err(limit_error(reason, &options.limits, true));
  }
  loaded
}

/// Creates a context (from the startup snapshot, or by running the bootstrap), runs the user's
/// script in it, hands it the bindings, and finds its entry points. The script's top level runs
/// under the CPU watchdog, charged to `owner`.
fn load_context(
  scope: &mut v8::HandleScope<()>,
  options: &WorkerOptions,
  state: &StateRef,
  format: Option<ScriptFormat>,
  owner: Option<u32>,
) -> Result<(Ctx, ScriptFormat), WorkerError> {
  let context = v8::Context::new(scope, Default::default());
  let scope = &mut v8::ContextScope::new(scope, context);
  context.set_allow_generation_from_strings(options.allow_eval);
  let holds = Rc::new(ContextHolds::default());
  context.set_slot(holds.clone());

  // From the startup snapshot, the context already holds the Web APIs; otherwise run the
  // bootstrap now.
  let internals = match snapshot::current() {
    Some(_) => scope
      .get_context_data_from_snapshot_once::<v8::Object>(snapshot::INTERNALS_INDEX)
      .map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", format!("the startup snapshot has no internals object: {e:?}")))?,
    None => install_runtime(scope)?,
  };

  // Modules the script may import (compiled anew for each context).
  scope.set_slot(Rc::new(RefCell::new(modules::Registry::new(&options.modules))));
  begin_turn(state, owner);
  let digest = state.borrow().source_digest;
  let cache = digest.map_or(script::CacheUse::Off, |digest| script::CacheUse::On(digest, options.code_cache_dir.as_deref()));
  let loaded = script::load(scope, &options.script, &options.filename, format, cache);
  end_turn(state);
  if state.borrow().monitor.stop_pending() {
    return Err(WorkerError::runtime("ERR_STOPPED", "the script was stopped while it loaded"));
  }
  let loaded = loaded.map_err(WorkerError::Js)?;
  let format_name = match loaded.format {
    ScriptFormat::Module => "module",
    ScriptFormat::ServiceWorker => "service-worker",
  };
  let namespace: v8::Local<v8::Value> = match loaded.namespace {
    Some(ns) => ns.into(),
    None => v8::undefined(scope).into(),
  };
  let args = [
    ops::new_string(scope, &options.env_json).into(),
    ops::new_string(scope, format_name).into(),
    namespace,
    ops::new_string(scope, &options.bindings_json).into(),
  ];
  call_internal(scope, internals, "start", &args).map_err(WorkerError::Js)?;
  let dispatch_fetch = internal_function(scope, internals, "dispatchFetch")?;
  let dispatch_scheduled = internal_function(scope, internals, "dispatchScheduled")?;
  let ctx = Ctx {
    context: v8::Global::new(scope, context),
    dispatch_fetch: v8::Global::new(scope, dispatch_fetch),
    dispatch_scheduled: v8::Global::new(scope, dispatch_scheduled),
    holds,
  };
  Ok((ctx, loaded.format))
}

/// Runs the JS bootstrap in the current context: the streams implementation, then every file
/// in `src/js/`. Returns the `internals` object the files share with the native side.
pub(crate) fn install_runtime<'s>(scope: &mut v8::HandleScope<'s>) -> Result<v8::Local<'s, v8::Object>, WorkerError> {
  let ops = ops::build_ops_object(scope);
  let internals = v8::Object::new(scope);
  load_streams(scope, internals)?;
  for (name, source) in BOOTSTRAP_FILES {
    run_bootstrap_file(scope, name, source, ops, internals)?;
  }
  Ok(internals)
}

/// Evaluates the embedded streams implementation as a CommonJS module and hands its exports to
/// the bootstrap as `internals.streams` (`src/js/50_streams.js` makes the globals).
fn load_streams(scope: &mut v8::HandleScope, internals: v8::Local<v8::Object>) -> Result<(), WorkerError> {
  let exports = v8::Object::new(scope);
  let module = v8::Object::new(scope);
  let key = ops::new_string(scope, "exports");
  module.set(scope, key.into(), exports.into());
  run_wrapped(scope, "web-streams-polyfill.js", "exports, module", STREAMS_PONYFILL, &[exports.into(), module.into()])?;
  let key = ops::new_string(scope, "streams");
  internals.set(scope, key.into(), exports.into());
  Ok(())
}

fn run_bootstrap_file(
  scope: &mut v8::HandleScope,
  name: &str,
  source: &str,
  ops: v8::Local<v8::Object>,
  internals: v8::Local<v8::Object>,
) -> Result<(), WorkerError> {
  let strict = format!("\"use strict\"; {source}");
  run_wrapped(scope, name, "ops, internals", &strict, &[ops.into(), internals.into()])
}

/// Runs an internal script as the body of `function (<params>) { … }` called with `args`.
/// The body starts on the wrapper's first line, so line numbers in stacks match the file.
fn run_wrapped(
  scope: &mut v8::HandleScope,
  name: &str,
  params: &str,
  body: &str,
  args: &[v8::Local<v8::Value>],
) -> Result<(), WorkerError> {
  let fail = |e: JsErrorInfo| WorkerError::runtime("ERR_BOOTSTRAP", format!("{name}: {}", e.stack));
  let wrapped = format!("(function ({params}) {{ {body}\n}})");
  let code = ops::new_string(scope, &wrapped);
  let resource = ops::new_string(scope, &format!("workerbox:internal/{name}"));
  let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
  let tc = &mut v8::TryCatch::new(scope);
  let function = v8::Script::compile(tc, code, Some(&origin)).and_then(|s| s.run(tc));
  let Some(function) = function.and_then(|f| v8::Local::<v8::Function>::try_from(f).ok()) else {
    return Err(fail(thrown(tc)));
  };
  let recv = v8::undefined(tc).into();
  if function.call(tc, recv, args).is_none() {
    return Err(fail(thrown(tc)));
  }
  Ok(())
}

fn internal_function<'s>(
  scope: &mut v8::HandleScope<'s>,
  internals: v8::Local<v8::Object>,
  name: &str,
) -> Result<v8::Local<'s, v8::Function>, WorkerError> {
  let key = ops::new_string(scope, name);
  internals
    .get(scope, key.into())
    .and_then(|f| v8::Local::<v8::Function>::try_from(f).ok())
    .ok_or_else(|| WorkerError::runtime("ERR_BOOTSTRAP", format!("the bootstrap did not define internals.{name}")))
}

pub(crate) fn call_internal<'s>(
  scope: &mut v8::HandleScope<'s>,
  internals: v8::Local<v8::Object>,
  name: &str,
  args: &[v8::Local<v8::Value>],
) -> Result<v8::Local<'s, v8::Value>, JsErrorInfo> {
  let function = internal_function(scope, internals, name).map_err(|e| JsErrorInfo::new("Error", e.to_string()))?;
  let tc = &mut v8::TryCatch::new(scope);
  let recv = v8::undefined(tc).into();
  let result = function.call(tc, recv, args);
  tc.perform_microtask_checkpoint();
  match result {
    Some(value) => Ok(value),
    None => Err(thrown(tc)),
  }
}

/// The message loop. Returns on shutdown or when every sender is gone.
fn pump(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  inbox: &Receiver<IsolateMessage>,
  events: &mut EventQueue,
  monitor: &Monitor,
) -> PumpExit {
  // Timers handed over slightly early, waiting for their exact deadline (in deadline order).
  let mut early: VecDeque<(u32, Instant)> = VecDeque::new();
  loop {
    let message = if let Some(&(id, due)) = early.front() {
      // A timer is about to be due: wait for the next message, but no longer than that.
      match inbox.recv_timeout(due.saturating_duration_since(Instant::now())) {
        Ok(message) => message,
        Err(RecvTimeoutError::Timeout) => {
          early.pop_front();
          IsolateMessage::Callback(CallbackMessage::TimerFired { id, due })
        }
        Err(RecvTimeoutError::Disconnected) => return PumpExit::Shutdown,
      }
    } else {
      match inbox.try_recv() {
        Ok(message) => message,
        Err(TryRecvError::Disconnected) => return PumpExit::Shutdown,
        Err(TryRecvError::Empty) => {
          // Nothing is queued. Per-request mode uses the pause to retire finished contexts,
          // renew the isolate when due, and build the next request's context ahead.
          match idle_per_request(isolate, runtime, options, state, monitor) {
            Idle::Exit(exit) => return exit,
            // That took a while: look at the inbox again before sleeping.
            Idle::Worked => continue,
            Idle::Nothing => {}
          }
          // Before sleeping, fail what nothing can ever settle.
          fail_hung_work(state, events);
          match inbox.recv() {
            Ok(message) => message,
            Err(_) => return PumpExit::Shutdown,
          }
        }
      }
    };
    let message = match message {
      IsolateMessage::Callback(CallbackMessage::TimerFired { id, due }) if due > Instant::now() => {
        // Keep deadline order; equal deadlines stay in creation (arrival) order.
        let at = early.partition_point(|&(_, d)| d <= due);
        early.insert(at, (id, due));
        continue;
      }
      message => message,
    };
    match message {
      IsolateMessage::Shutdown => return PumpExit::Shutdown,
      IsolateMessage::Dispatch(event) => events.admit(state, event),
      IsolateMessage::WhenSettled(reply) => {
        let mut s = state.borrow_mut();
        s.settled_waiters.push(reply);
        let ready = s.settled_waiters_if_idle();
        drop(s);
        ready.into_iter().for_each(|r| r());
      }
      IsolateMessage::Callback(CallbackMessage::DeadlineReached { id }) => {
        let pending = state.borrow_mut().pending.remove(&id);
        if let Some(pending) = pending {
          let ms = state.borrow().limits.wall_ms;
          pending.fail(WorkerError::runtime(
            "ERR_WALL_LIMIT",
            format!("The request exceeded its wall-clock limit of {ms} ms (limits.wallMs) without responding."),
          ));
        }
      }
      IsolateMessage::Callback(CallbackMessage::HostCallDone { id, result }) => {
        let call = state.borrow_mut().host_calls.remove(&id);
        if let Some((resolver, owner)) = call {
          let outcome = run_macrotask(isolate, runtime.context_for(owner), state, owner, |scope| {
            let resolver = v8::Local::new(scope, resolver);
            // The answer's arrays and errors belong to the context that made the call.
            let promise = resolver.get_promise(scope);
            let Some(context) = promise.get_creation_context(scope) else { return Some(()) };
            let scope = &mut v8::ContextScope::new(scope, context);
            match result {
              Ok(answer) => {
                let json = ops::new_string(scope, &answer.json).into();
                let bytes = match answer.bytes {
                  Some(bytes) => ops::uint8_array_from(scope, bytes).into(),
                  None => v8::null(scope).into(),
                };
                let value = v8::Array::new_with_elements(scope, &[json, bytes]);
                resolver.resolve(scope, value.into())
              }
              Err(error) => {
                let message = ops::new_string(scope, &error.message);
                let exception = match error.name.as_str() {
                  "TypeError" => v8::Exception::type_error(scope, message),
                  "RangeError" => v8::Exception::range_error(scope, message),
                  _ => v8::Exception::error(scope, message),
                };
                if let Ok(object) = v8::Local::<v8::Object>::try_from(exception) {
                  let key = ops::new_string(scope, "name");
                  let name = ops::new_string(scope, &error.name);
                  object.set(scope, key.into(), name.into());
                }
                resolver.reject(scope, exception)
              }
            }
            .map(|_| ())
          });
          if let Err(error) = outcome {
            log_uncaught(state, &error.stack);
          }
        }
      }
      IsolateMessage::Callback(CallbackMessage::TimerFired { id, .. }) => {
        let callback = {
          let mut s = state.borrow_mut();
          let rearm = s.timers.get(&id).and_then(|t| t.repeat);
          match rearm {
            Some(delay) => {
              let _ = s.scheduler.send(SchedulerMessage::StartTimer { id, delay });
              s.timers.get(&id).map(|t| (t.callback.clone(), t.owner))
            }
            None => s.timers.remove(&id).map(|t| (t.callback, t.owner)),
          }
        };
        if let Some((callback, owner)) = callback {
          let outcome = run_macrotask(isolate, runtime.context_for(owner), state, owner, |scope| {
            let f = v8::Local::new(scope, &callback);
            let recv = v8::undefined(scope).into();
            f.call(scope, recv, &[]).map(|_| ())
          });
          let stopped = state.borrow().monitor.stop_pending();
          if let (Err(error), false) = (outcome, stopped) {
            log_uncaught(state, &error.stack);
          }
        }
      }
    }
    if let Some(exit) = stopped(monitor, state.borrow_mut().cpu_culprit.take()) {
      return exit;
    }
    // Start whatever the limits allow, oldest first.
    while let Some(event) = events.next_startable(state) {
      let id = start_event(isolate, runtime, options, state, events, event);
      let culprit = state.borrow_mut().cpu_culprit.take().or(Some(id));
      if let Some(exit) = stopped(monitor, culprit) {
        return exit;
      }
    }
    run_platform_tasks(isolate, runtime, state);
    if let Some(exit) = stopped(monitor, state.borrow_mut().cpu_culprit.take()) {
      return exit;
    }
    if let Some(exit) = retire_contexts(runtime, state, false) {
      return exit;
    }
  }
}



/// How the loop ends when a limit (or dispose) terminated the running JS.
fn stopped(monitor: &Monitor, culprit: Option<u32>) -> Option<PumpExit> {
  match monitor.take_stop()? {
    StopReason::Dispose => Some(PumpExit::Shutdown),
    reason => Some(PumpExit::Recycle { reason, culprit }),
  }
}

/// Events waiting for a free slot (FIFO), and request ids.
#[derive(Default)]
struct EventQueue {
  waiting: VecDeque<Event>,
  next_id: u32,
}

impl Drop for EventQueue {
  /// However the loop ends, nothing that was accepted goes unanswered.
  fn drop(&mut self) {
    for event in self.waiting.drain(..) {
      event.fail(WorkerError::Disposed("the worker was disposed before the request started".into()));
    }
  }
}

impl EventQueue {
  /// Queues an event, or fails it at once when the queue is full.
  fn admit(&mut self, state: &StateRef, event: Event) {
    let max_queued = state.borrow().limits.max_queued as usize;
    if self.waiting.len() >= max_queued {
      event.fail(WorkerError::runtime(
        "ERR_OVERLOADED",
        format!("The worker is overloaded: {max_queued} requests are already waiting (limits.maxQueued)."),
      ));
    } else {
      self.waiting.push_back(event);
    }
  }

  fn next_startable(&mut self, state: &StateRef) -> Option<Event> {
    let s = state.borrow();
    if s.pending.len() < s.limits.max_in_flight as usize {
      self.waiting.pop_front()
    } else {
      None
    }
  }
}

/// Registers an event as running and calls its JS entry point.
/// What a started event hands its JS entry point.
enum EntryCall {
  Fetch(RequestData),
  Scheduled(ScheduledEvent),
}

/// Returns the event's request id.
fn start_event(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  events: &mut EventQueue,
  event: Event,
) -> u32 {
  events.next_id = events.next_id.wrapping_add(1).max(1);
  let id = events.next_id;
  {
    let s = state.borrow();
    if s.limits.wall_ms > 0 {
      let _ = s.scheduler.send(SchedulerMessage::StartDeadline { id, after: Duration::from_millis(s.limits.wall_ms) });
    }
  }
  let (pending, call) = match event {
    Event::Fetch { request, reply } => (Pending::Fetch(reply), EntryCall::Fetch(request)),
    Event::Scheduled { event, reply } => (Pending::Scheduled(reply), EntryCall::Scheduled(event)),
  };
  state.borrow_mut().pending.insert(id, pending);
  // Per-request mode: the event gets the context built ahead, or one built now.
  if let Some(per_request) = runtime.per_request.as_mut() {
    let ctx = match per_request.spare.take() {
      Some(ctx) => Ok(ctx),
      None => {
        let scope = &mut v8::HandleScope::new(&mut **isolate);
        load_context(scope, options, state, Some(per_request.format), Some(id)).map(|(ctx, _)| ctx)
      }
    };
    per_request.served += 1;
    per_request.spare_failed = false;
    match ctx {
      Ok(ctx) => {
        per_request.live.insert(id, ctx);
      }
      Err(error) => {
        // A limit stopped the script: the loop answers every request when it ends the isolate.
        if !state.borrow().monitor.stop_pending() {
          let pending = state.borrow_mut().take_pending(id);
          state.borrow_mut().tainted = true;
          if let Some(pending) = pending {
            pending.fail(error);
          }
        }
        return id;
      }
    }
  }
  let ctx = runtime.ctx_for(id);
  let outcome = run_macrotask(isolate, &ctx.context, state, Some(id), |scope| {
    let (entry, args) = match call {
      EntryCall::Fetch(request) => (&ctx.dispatch_fetch, request_args(scope, id, request).to_vec()),
      EntryCall::Scheduled(event) => (&ctx.dispatch_scheduled, scheduled_args(scope, id, event).to_vec()),
    };
    let f = v8::Local::new(scope, entry);
    let recv = v8::undefined(scope).into();
    f.call(scope, recv, &args).map(|_| ())
  });
  // The JS entry points report handler errors themselves; an error escaping them (termination,
  // or a bug in the bootstrap) must still answer the event.
  if let Err(error) = outcome {
    // Stopped by a limit or dispose: the loop answers every request when it ends this isolate.
    if !state.borrow().monitor.stop_pending() {
      let pending = state.borrow_mut().take_pending(id);
      if let Some(pending) = pending {
        pending.fail(WorkerError::Js(error));
      }
    }
  }
  id
}

/// Events whose handler promise is still pending while the worker has no timer or binding
/// call left that could settle it will never finish (production Workers says the
/// same). Answer them now instead of letting the host wait forever. Likewise release whoever
/// waits for `waitUntil` work that can no longer settle.
fn fail_hung_work(state: &StateRef, events: &EventQueue) {
  let (hung, stuck_background, waiters) = {
    let mut s = state.borrow_mut();
    if !s.timers.is_empty() || !s.host_calls.is_empty() || !events.waiting.is_empty() {
      return;
    }
    let hung: Vec<Pending> = s.pending.drain().map(|(_, p)| p).collect();
    let stuck = if s.background > 0 && !s.settled_waiters.is_empty() { std::mem::take(&mut s.background) } else { 0 };
    (hung, stuck, s.settled_waiters_if_idle())
  };
  for pending in hung {
    pending.fail(WorkerError::runtime(
      "ERR_NEVER_RESPONDS",
      "The worker's handler will never respond: its promise is still pending, but no timer, I/O or binding call is left that could settle it.",
    ));
  }
  warn_unsettled(state, stuck_background);
  waiters.into_iter().for_each(|w| w());
}

/// Tells the host that `count` `waitUntil` promises were given up on.
fn warn_unsettled(state: &StateRef, count: u32) {
  if count > 0 {
    let sink = state.borrow().log.clone();
    sink(LogLevel::Warn, format!("{count} ctx.waitUntil() promise(s) will never settle: nothing is left that could settle them."));
  }
}

/// What the pump did with a pause in per-request mode.
enum Idle {
  Exit(PumpExit),
  Worked,
  Nothing,
}

/// Per-request mode, when the inbox is empty: retire contexts whose work can no longer make
/// progress, renew the isolate when it is due and nothing runs, or build the next context.
fn idle_per_request(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  monitor: &Monitor,
) -> Idle {
  let Some(per_request) = runtime.per_request.as_ref() else { return Idle::Nothing };
  // With no timer and no I/O left anywhere, nothing can settle a finished request's
  // `waitUntil` promises or body: retire those contexts too.
  let stuck = {
    let s = state.borrow();
    s.timers.is_empty() && s.host_calls.is_empty()
  };
  if stuck && per_request.live.keys().any(|id| !state.borrow().pending.contains_key(id)) {
    if let Some(exit) = retire_contexts(runtime, state, true) {
      return Idle::Exit(exit);
    }
  }
  let Some(per_request) = runtime.per_request.as_mut() else { return Idle::Nothing };
  if per_request.served > 0 && per_request.live.is_empty() && renewal_due(per_request, state) {
    // Due and nothing runs (say, an error went uncaught in a timer of the script's top level).
    // An isolate that has served nothing is not renewed: if its own start-up tainted it, so
    // would the next one's, and renewing would only loop.
    return Idle::Exit(PumpExit::Renew);
  }
  if per_request.spare.is_some() || per_request.spare_failed || renewal_due(per_request, state) {
    return Idle::Nothing;
  }
  let scope = &mut v8::HandleScope::new(&mut **isolate);
  match load_context(scope, options, state, Some(per_request.format), None) {
    Ok((ctx, _)) => per_request.spare = Some(ctx),
    Err(_) => per_request.spare_failed = true,
  }
  match stopped(monitor, None) {
    Some(exit) => Idle::Exit(exit),
    None => Idle::Worked,
  }
}

/// The isolate has served its share of contexts, or seen an error.
fn renewal_due(per_request: &PerRequest, state: &StateRef) -> bool {
  per_request.served >= per_request.max_reuse || state.borrow().tainted
}

/// Per-request mode: drops the contexts of events that are over — answered, with no
/// `waitUntil` promise, body or binding call of theirs still under way (with `force`, even if
/// some `waitUntil` promise or body never finished) — and clears the timers they left behind.
/// Asks for a renewal once nothing runs and the isolate is due for one.
fn retire_contexts(runtime: &mut Runtime, state: &StateRef, force: bool) -> Option<PumpExit> {
  let per_request = runtime.per_request.as_mut()?;
  if per_request.live.is_empty() {
    return None;
  }
  let (waiters, stuck) = {
    let mut s = state.borrow_mut();
    let over: Vec<u32> = per_request
      .live
      .iter()
      .filter(|(id, ctx)| {
        !s.pending.contains_key(id) && (force || (ctx.holds.idle() && !s.host_calls.values().any(|(_, owner)| *owner == Some(**id))))
      })
      .map(|(id, _)| *id)
      .collect();
    let mut stuck = 0;
    for id in over {
      let Some(ctx) = per_request.live.remove(&id) else { continue };
      let stale: Vec<u32> = s.timers.iter().filter(|(_, t)| t.owner == Some(id)).map(|(timer, _)| *timer).collect();
      for timer in stale {
        s.timers.remove(&timer);
        let _ = s.scheduler.send(SchedulerMessage::CancelTimer { id: timer });
      }
      s.host_calls.retain(|_, (_, owner)| *owner != Some(id));
      // `waitUntil` promises of a dropped context will never report back.
      let waits = ctx.holds.waits.get();
      s.background = s.background.saturating_sub(waits);
      stuck += waits;
    }
    (s.settled_waiters_if_idle(), stuck)
  };
  warn_unsettled(state, stuck);
  waiters.into_iter().for_each(|w| w());
  let per_request = runtime.per_request.as_ref()?;
  (per_request.live.is_empty() && renewal_due(per_request, state)).then_some(PumpExit::Renew)
}

/// Runs the tasks V8 posted for this isolate during the turn (FinalizationRegistry cleanup,
/// Atomics.waitAsync wake-ups, …) without blocking, then the microtasks they queued.
fn run_platform_tasks(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef) {
  let context = &runtime.home.context;
  let platform = platform::init_v8();
  let mut ran = false;
  while v8::Platform::pump_message_loop(platform, isolate, false) {
    ran = true;
  }
  if ran {
    let _ = run_macrotask(isolate, context, state, None, |_| Some(()));
  }
}

/// Runs one macrotask, then the microtask checkpoint, and logs unhandled rejections. Returns
/// what the task itself threw, if anything.
fn run_macrotask(
  isolate: &mut v8::OwnedIsolate,
  context: &v8::Global<v8::Context>,
  state: &StateRef,
  owner: Option<u32>,
  task: impl FnOnce(&mut v8::HandleScope) -> Option<()>,
) -> Result<(), JsErrorInfo> {
  begin_turn(state, owner);
  let scope = &mut v8::HandleScope::with_context(isolate, context);
  let tc = &mut v8::TryCatch::new(scope);
  let outcome = match task(tc) {
    Some(()) => Ok(()),
    None => Err(thrown(tc)),
  };
  tc.perform_microtask_checkpoint();
  end_turn(state);
  let unhandled: Vec<_> = std::mem::take(&mut state.borrow_mut().unhandled);
  for (_, reason) in unhandled {
    let reason = v8::Local::new(tc, reason);
    let error = describe_exception(tc, reason, None);
    log_uncaught(state, &format!("(in promise) {}", error.stack));
  }
  outcome
}

/// Marks the start of a stretch of JS run for `owner` (a request id, if known): the CPU
/// watchdog may let it use what that request has left of `limits.cpuMs`.
fn begin_turn(state: &StateRef, owner: Option<u32>) {
  let mut s = state.borrow_mut();
  s.current_owner = owner;
  let budget = (s.limits.cpu_ms > 0).then(|| {
    let limit = Duration::from_millis(s.limits.cpu_ms);
    let used = owner.and_then(|id| s.cpu_used.get(&id).copied()).unwrap_or_default();
    limit.saturating_sub(used)
  });
  if s.monitor.begin_turn(budget) && budget.is_some() {
    let _ = s.scheduler.send(SchedulerMessage::ArmWatchdog);
  }
}

/// Ends a stretch of JS and charges its CPU time to its request. A request whose stretches add
/// up past `limits.cpuMs` is stopped like one that ran over in a single stretch.
fn end_turn(state: &StateRef) {
  let mut s = state.borrow_mut();
  let used = s.monitor.end_turn();
  let owner = s.current_owner.take();
  if s.monitor.stop_pending() && s.cpu_culprit.is_none() {
    // The watchdog stopped this stretch: its request is the one that hit the limit.
    s.cpu_culprit = owner;
  }
  let Some(id) = owner.filter(|id| s.pending.contains_key(id)) else { return };
  let limit = s.limits.cpu_ms;
  let total = {
    let entry = s.cpu_used.entry(id).or_default();
    *entry += used;
    *entry
  };
  if limit > 0 && total >= Duration::from_millis(limit) {
    s.cpu_culprit = Some(id);
    s.monitor.mark_stop(StopReason::Cpu);
  }
}

fn log_uncaught(state: &StateRef, text: &str) {
  let sink = {
    let mut s = state.borrow_mut();
    s.tainted = true;
    s.log.clone()
  };
  sink(LogLevel::Error, format!("Uncaught {text}"));
}

/// `internals.dispatchScheduled(id, cron, scheduledTime)` arguments.
fn scheduled_args<'s>(scope: &mut v8::HandleScope<'s>, id: u32, event: ScheduledEvent) -> [v8::Local<'s, v8::Value>; 3] {
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    ops::new_string(scope, &event.cron).into(),
    v8::Number::new(scope, event.scheduled_time).into(),
  ]
}

/// `internals.dispatchFetch(id, method, url, flatHeaders, body)` arguments; `body` is null,
/// a Uint8Array, or the id of a host body stream.
fn request_args<'s>(scope: &mut v8::HandleScope<'s>, id: u32, request: RequestData) -> [v8::Local<'s, v8::Value>; 5] {
  let flat: Vec<&str> = request.headers.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]).collect();
  let headers = ops::string_array(scope, &flat);
  let body: v8::Local<v8::Value> = match request.body {
    Body::Empty => v8::null(scope).into(),
    Body::Bytes(bytes) => ops::uint8_array_from(scope, bytes).into(),
    // A streamed body arrives as its id; the JS side pulls it from the host.
    Body::Stream(stream) => v8::Integer::new_from_unsigned(scope, stream).into(),
  };
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    ops::new_string(scope, &request.method).into(),
    ops::new_string(scope, &request.url).into(),
    headers.into(),
    body,
  ]
}

