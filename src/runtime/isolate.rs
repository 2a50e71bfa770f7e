//! The isolate thread: owns one V8 isolate and its context, boots the JS runtime, loads the
//! user's script, and then pumps messages — dispatches from the host, results from the
//! scheduler — turning each into a JS call followed by a microtask checkpoint.
//!
//! The thread blocks on its inbox between messages, so an idle worker uses no CPU.

use super::errors::describe_exception;
use super::messages::{CallbackMessage, DispatchReply, IsolateMessage, SchedulerMessage};
use super::ops;
use super::platform;
use super::scheduler::Scheduler;
use super::script::{self, thrown};
use super::types::{Body, JsErrorInfo, LogLevel, LogSink, RequestData, ScriptFormat, WorkerError, WorkerOptions};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::rc::Rc;
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;
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

/// Per-isolate state that ops reach through the isolate's slot.
pub(crate) struct IsolateState {
  pub log: LogSink,
  pub scheduler: UnboundedSender<SchedulerMessage>,
  /// Dispatches waiting for their Response, by request id.
  pub pending: HashMap<u32, DispatchReply>,
  pub timers: HashMap<u32, Timer>,
  pub next_timer_id: u32,
  /// Promises rejected with no handler since the last checkpoint.
  pub unhandled: Vec<(v8::Global<v8::Promise>, v8::Global<v8::Value>)>,
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
    pending: HashMap::new(),
    timers: HashMap::new(),
    next_timer_id: 0,
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
  let pending: Vec<DispatchReply> = state.borrow_mut().pending.drain().map(|(_, r)| r).collect();
  for reply in pending {
    reply(Err(WorkerError::Disposed("the worker was disposed before it responded".into())));
  }
  {
    let mut s = state.borrow_mut();
    s.timers.clear();
    s.unhandled.clear();
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
  let runtime = Runtime { context: v8::Global::new(scope, context), dispatch_fetch: v8::Global::new(scope, dispatch_fetch) };
  Ok((runtime, loaded.format))
}

fn run_bootstrap_file(
  scope: &mut v8::HandleScope,
  name: &str,
  source: &str,
  ops: v8::Local<v8::Object>,
  internals: v8::Local<v8::Object>,
) -> Result<(), WorkerError> {
  let fail = |e: super::types::JsErrorInfo| WorkerError::runtime("ERR_BOOTSTRAP", format!("{name}: {}", e.stack));
  // Wrapped on the first line so that line numbers in stacks match the file.
  let wrapped = format!("(function (ops, internals) {{ \"use strict\"; {source}\n}})");
  let code = ops::new_string(scope, &wrapped);
  let resource = ops::new_string(scope, &format!("workerbox:internal/{name}"));
  let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
  let tc = &mut v8::TryCatch::new(scope);
  let function = v8::Script::compile(tc, code, Some(&origin)).and_then(|s| s.run(tc));
  let Some(function) = function.and_then(|f| v8::Local::<v8::Function>::try_from(f).ok()) else {
    return Err(fail(thrown(tc)));
  };
  let recv = v8::undefined(tc).into();
  if function.call(tc, recv, &[ops.into(), internals.into()]).is_none() {
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
) -> Result<v8::Local<'s, v8::Value>, super::types::JsErrorInfo> {
  let function = internal_function(scope, internals, name).map_err(|e| super::types::JsErrorInfo::new("Error", e.to_string()))?;
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
  let mut next_request_id: u32 = 0;
  loop {
    let message = match inbox.try_recv() {
      Ok(message) => message,
      Err(TryRecvError::Disconnected) => return,
      Err(TryRecvError::Empty) => {
        // Nothing is queued: before sleeping, fail requests that nothing can ever settle.
        fail_hung_requests(state);
        match inbox.recv() {
          Ok(message) => message,
          Err(_) => return,
        }
      }
    };
    match message {
      IsolateMessage::Shutdown => return,
      IsolateMessage::Dispatch { request, reply } => {
        next_request_id = next_request_id.wrapping_add(1).max(1);
        let id = next_request_id;
        state.borrow_mut().pending.insert(id, reply);
        let outcome = run_macrotask(isolate, runtime, state, |scope| {
          let args = request_args(scope, id, request);
          let f = v8::Local::new(scope, &runtime.dispatch_fetch);
          let recv = v8::undefined(scope).into();
          f.call(scope, recv, &args).map(|_| ())
        });
        // `dispatchFetch` reports handler errors itself; an error escaping it (termination, or a
        // bug in the bootstrap) must still answer the request.
        if let Err(error) = outcome {
          if let Some(reply) = state.borrow_mut().pending.remove(&id) {
            reply(Err(WorkerError::Js(error)));
          }
        }
      }
      IsolateMessage::Callback(CallbackMessage::TimerFired { id }) => {
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
    platform_tasks(isolate);
  }
}

/// Requests whose handler promise is still pending while the worker has no timer, I/O or
/// binding call left that could settle it will never get a response (production Workers says
/// the same). Answer them now instead of letting the host wait forever.
fn fail_hung_requests(state: &StateRef) {
  let hung: Vec<DispatchReply> = {
    let mut s = state.borrow_mut();
    if s.pending.is_empty() || !s.timers.is_empty() {
      return;
    }
    s.pending.drain().map(|(_, reply)| reply).collect()
  };
  for reply in hung {
    reply(Err(WorkerError::runtime(
      "ERR_NEVER_RESPONDS",
      "The worker's fetch handler will never respond: its promise is still pending, but no timer, I/O or binding call is left that could settle it.",
    )));
  }
}

/// Runs V8's own queued tasks (e.g. finished background compilations) without blocking.
fn platform_tasks(isolate: &mut v8::OwnedIsolate) {
  let platform = platform::init_v8();
  while v8::Platform::pump_message_loop(platform, isolate, false) {}
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
