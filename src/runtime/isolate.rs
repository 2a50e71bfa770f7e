//! The isolate thread: owns one V8 isolate and its context, boots the JS runtime, loads the
//! user's script, and then pumps messages — dispatches from the host, results from the
//! scheduler — turning each into a JS call followed by a microtask checkpoint.
//!
//! The thread blocks on its inbox between messages, so an idle worker uses no CPU.

use super::errors::describe_exception;
use super::messages::{CallbackMessage, DispatchReply, Event, IsolateMessage, ScheduledReply, SchedulerMessage, SettledReply};
use super::ops;
use super::platform;
use super::scheduler::Scheduler;
use super::script::{self, thrown};
use super::types::{Body, JsErrorInfo, Limits, LogLevel, LogSink, RequestData, ScheduledEvent, ScriptFormat, WorkerError, WorkerOptions};
use std::collections::VecDeque;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

include!(concat!(env!("OUT_DIR"), "/bootstrap_files.rs"));

/// Default V8 heap limit, as production Workers has.
const HEAP_LIMIT_BYTES: usize = 128 << 20;

pub(crate) type StateRef = Rc<RefCell<IsolateState>>;

/// A live timer: its JS callback, and its period if it repeats.
pub(crate) struct Timer {
  pub callback: v8::Global<v8::Function>,
  pub repeat: Option<Duration>,
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
  pub scheduler: UnboundedSender<SchedulerMessage>,
  pub limits: Limits,
  /// Events running in the isolate, waiting for their outcome, by request id.
  pub pending: HashMap<u32, Pending>,
  /// `waitUntil` promises not yet settled, and who waits for them all to settle.
  pub background: u32,
  pub settled_waiters: Vec<SettledReply>,
  pub timers: HashMap<u32, Timer>,
  pub next_timer_id: u32,
  /// When the isolate started: `performance.now()`'s zero.
  pub started: std::time::Instant,
  /// Promises rejected with no handler since the last checkpoint.
  pub unhandled: Vec<(v8::Global<v8::Promise>, v8::Global<v8::Value>)>,
}

impl IsolateState {
  /// Takes a running event's reply (and drops its wall-clock deadline).
  pub fn take_pending(&mut self, id: u32) -> Option<Pending> {
    let pending = self.pending.remove(&id)?;
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
  pub isolate_handle: Arc<Mutex<Option<v8::IsolateHandle>>>,
  pub on_ready: ReadyCallback,
}

/// The JS entry points the pump calls, captured once after boot.
struct Runtime {
  context: v8::Global<v8::Context>,
  dispatch_fetch: v8::Global<v8::Function>,
  dispatch_scheduled: v8::Global<v8::Function>,
}

/// Body of the isolate thread.
pub(crate) fn run(startup: Startup) {
  let Startup { worker, options, inbox, inbox_sender, isolate_handle, on_ready } = startup;
  let mut scheduler = match Scheduler::spawn(worker, inbox_sender) {
    Ok(s) => s,
    Err(e) => return on_ready(Err(WorkerError::runtime("ERR_THREAD", format!("could not start the scheduler thread: {e}")))),
  };

  let params = v8::CreateParams::default().heap_limits(0, HEAP_LIMIT_BYTES);
  let mut isolate = v8::Isolate::new(params);
  let handle = isolate.thread_safe_handle();
  *isolate_handle.lock().unwrap() = Some(handle.clone());
  // Near the heap limit V8 would abort the whole process; stop the script instead and give the
  // heap a little room to unwind. The boxed handle outlives the isolate (dropped at the end).
  let heap_guard = Box::into_raw(Box::new(handle));
  isolate.add_near_heap_limit_callback(near_heap_limit, heap_guard as *mut c_void);
  isolate.set_microtasks_policy(v8::MicrotasksPolicy::Explicit);
  isolate.set_promise_reject_callback(on_promise_reject);
  isolate.set_capture_stack_trace_for_uncaught_exceptions(true, 16);

  let state: StateRef = Rc::new(RefCell::new(IsolateState {
    log: options.log.clone(),
    scheduler: scheduler.sender(),
    limits: options.limits.clone(),
    pending: HashMap::new(),
    background: 0,
    settled_waiters: Vec::new(),
    timers: HashMap::new(),
    next_timer_id: 0,
    started: std::time::Instant::now(),
    unhandled: Vec::new(),
  }));
  isolate.set_slot(state.clone());

  match boot(&mut isolate, &options) {
    Ok((runtime, format)) => {
      on_ready(Ok(format));
      pump(&mut isolate, &runtime, &state, &inbox);
    }
    Err(error) => on_ready(Err(error)),
  }

  // Answer whatever is still waiting, then tear down in order: JS state, isolate, scheduler.
  let (pending, waiters) = {
    let mut s = state.borrow_mut();
    s.timers.clear();
    s.unhandled.clear();
    (s.pending.drain().map(|(_, p)| p).collect::<Vec<_>>(), std::mem::take(&mut s.settled_waiters))
  };
  for event in pending {
    event.fail(WorkerError::Disposed("the worker was disposed before it responded".into()));
  }
  for waiter in waiters {
    waiter();
  }
  drop(state);
  *isolate_handle.lock().unwrap() = None;
  drop(isolate);
  // SAFETY: the isolate that could call `near_heap_limit` with this pointer is gone.
  drop(unsafe { Box::from_raw(heap_guard) });
  scheduler.shutdown();
}

extern "C" fn near_heap_limit(data: *mut c_void, current: usize, _initial: usize) -> usize {
  // SAFETY: `data` is the boxed IsolateHandle installed in `run`, alive as long as the isolate.
  let handle = unsafe { &*(data as *const v8::IsolateHandle) };
  handle.terminate_execution();
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

/// Creates the context, runs the bootstrap and the user's script, and finds the entry points.
fn boot(isolate: &mut v8::OwnedIsolate, options: &WorkerOptions) -> Result<(Runtime, ScriptFormat), WorkerError> {
  let scope = &mut v8::HandleScope::new(isolate);
  let context = v8::Context::new(scope, Default::default());
  let scope = &mut v8::ContextScope::new(scope, context);
  context.set_allow_generation_from_strings(options.allow_eval);

  let ops = ops::build_ops_object(scope);
  let internals = v8::Object::new(scope);
  load_streams(scope, internals)?;
  for (name, source) in BOOTSTRAP_FILES {
    run_bootstrap_file(scope, name, source, ops, internals)?;
  }

  let loaded = script::load(scope, &options.script, &options.filename, options.format).map_err(WorkerError::Js)?;
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
  ];
  call_internal(scope, internals, "start", &args).map_err(WorkerError::Js)?;
  let dispatch_fetch = internal_function(scope, internals, "dispatchFetch")?;
  let dispatch_scheduled = internal_function(scope, internals, "dispatchScheduled")?;
  let runtime = Runtime {
    context: v8::Global::new(scope, context),
    dispatch_fetch: v8::Global::new(scope, dispatch_fetch),
    dispatch_scheduled: v8::Global::new(scope, dispatch_scheduled),
  };
  Ok((runtime, loaded.format))
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

fn call_internal<'s>(
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
fn pump(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef, inbox: &Receiver<IsolateMessage>) {
  let mut events = EventQueue::default();
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
        Err(RecvTimeoutError::Disconnected) => return,
      }
    } else {
      match inbox.try_recv() {
        Ok(message) => message,
        Err(TryRecvError::Disconnected) => return,
        Err(TryRecvError::Empty) => {
          // Nothing is queued: before sleeping, fail what nothing can ever settle.
          fail_hung_work(state, &events);
          match inbox.recv() {
            Ok(message) => message,
            Err(_) => return,
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
      IsolateMessage::Shutdown => return,
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
      IsolateMessage::Callback(CallbackMessage::TimerFired { id, .. }) => {
        let callback = {
          let mut s = state.borrow_mut();
          let rearm = s.timers.get(&id).and_then(|t| t.repeat);
          match rearm {
            Some(delay) => {
              let _ = s.scheduler.send(SchedulerMessage::StartTimer { id, delay });
              s.timers.get(&id).map(|t| t.callback.clone())
            }
            None => s.timers.remove(&id).map(|t| t.callback),
          }
        };
        if let Some(callback) = callback {
          let outcome = run_macrotask(isolate, runtime, state, |scope| {
            let f = v8::Local::new(scope, &callback);
            let recv = v8::undefined(scope).into();
            f.call(scope, recv, &[]).map(|_| ())
          });
          if let Err(error) = outcome {
            log_uncaught(state, &error.stack);
          }
        }
      }
    }
    // Start whatever the limits allow, oldest first.
    while let Some(event) = events.next_startable(state) {
      start_event(isolate, runtime, state, &mut events, event);
    }
    run_platform_tasks(isolate, runtime, state);
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
fn start_event(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef, events: &mut EventQueue, event: Event) {
  events.next_id = events.next_id.wrapping_add(1).max(1);
  let id = events.next_id;
  {
    let s = state.borrow();
    if s.limits.wall_ms > 0 {
      let _ = s.scheduler.send(SchedulerMessage::StartDeadline { id, after: Duration::from_millis(s.limits.wall_ms) });
    }
  }
  let outcome = match event {
    Event::Fetch { request, reply } => {
      state.borrow_mut().pending.insert(id, Pending::Fetch(reply));
      run_macrotask(isolate, runtime, state, |scope| {
        let args = request_args(scope, id, request);
        let f = v8::Local::new(scope, &runtime.dispatch_fetch);
        let recv = v8::undefined(scope).into();
        f.call(scope, recv, &args).map(|_| ())
      })
    }
    Event::Scheduled { event, reply } => {
      state.borrow_mut().pending.insert(id, Pending::Scheduled(reply));
      run_macrotask(isolate, runtime, state, |scope| {
        let args = scheduled_args(scope, id, event);
        let f = v8::Local::new(scope, &runtime.dispatch_scheduled);
        let recv = v8::undefined(scope).into();
        f.call(scope, recv, &args).map(|_| ())
      })
    }
  };
  // The JS entry points report handler errors themselves; an error escaping them (termination,
  // or a bug in the bootstrap) must still answer the event.
  if let Err(error) = outcome {
    let pending = state.borrow_mut().take_pending(id);
    if let Some(pending) = pending {
      pending.fail(WorkerError::Js(error));
    }
  }
}

/// Events whose handler promise is still pending while the worker has no timer, I/O or
/// binding call left that could settle it will never finish (production Workers says the
/// same). Answer them now instead of letting the host wait forever. Likewise release whoever
/// waits for `waitUntil` work that can no longer settle.
fn fail_hung_work(state: &StateRef, events: &EventQueue) {
  let (hung, stuck_background, waiters) = {
    let mut s = state.borrow_mut();
    if !s.timers.is_empty() || !events.waiting.is_empty() {
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
  if stuck_background > 0 {
    let sink = state.borrow().log.clone();
    sink(LogLevel::Warn, format!("{stuck_background} ctx.waitUntil() promise(s) will never settle: nothing is left that could settle them."));
  }
  waiters.into_iter().for_each(|w| w());
}

/// Runs the tasks V8 posted for this isolate during the turn (FinalizationRegistry cleanup,
/// Atomics.waitAsync wake-ups, …) without blocking, then the microtasks they queued.
fn run_platform_tasks(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef) {
  let platform = platform::init_v8();
  let mut ran = false;
  while v8::Platform::pump_message_loop(platform, isolate, false) {
    ran = true;
  }
  if ran {
    let _ = run_macrotask(isolate, runtime, state, |_| Some(()));
  }
}

/// Runs one macrotask, then the microtask checkpoint, and logs unhandled rejections. Returns
/// what the task itself threw, if anything.
fn run_macrotask(
  isolate: &mut v8::OwnedIsolate,
  runtime: &Runtime,
  state: &StateRef,
  task: impl FnOnce(&mut v8::HandleScope) -> Option<()>,
) -> Result<(), JsErrorInfo> {
  let scope = &mut v8::HandleScope::with_context(isolate, &runtime.context);
  let tc = &mut v8::TryCatch::new(scope);
  let outcome = match task(tc) {
    Some(()) => Ok(()),
    None => Err(thrown(tc)),
  };
  tc.perform_microtask_checkpoint();
  let unhandled: Vec<_> = std::mem::take(&mut state.borrow_mut().unhandled);
  for (_, reason) in unhandled {
    let reason = v8::Local::new(tc, reason);
    let error = describe_exception(tc, reason, None);
    log_uncaught(state, &format!("(in promise) {}", error.stack));
  }
  outcome
}

fn log_uncaught(state: &StateRef, text: &str) {
  let sink = state.borrow().log.clone();
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

/// `internals.dispatchFetch(id, method, url, flatHeaders, body)` arguments.
fn request_args<'s>(scope: &mut v8::HandleScope<'s>, id: u32, request: RequestData) -> [v8::Local<'s, v8::Value>; 5] {
  let flat: Vec<&str> = request.headers.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]).collect();
  let headers = ops::string_array(scope, &flat);
  let body: v8::Local<v8::Value> = match request.body {
    Body::Empty => v8::null(scope).into(),
    Body::Bytes(bytes) => ops::uint8_array(scope, bytes.to_vec()).into(),
  };
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    ops::new_string(scope, &request.method).into(),
    ops::new_string(scope, &request.url).into(),
    headers.into(),
    body,
  ]
}
