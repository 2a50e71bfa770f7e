//! How the JS side of an event hands its outcome back to the host waiting on the request id:
//! `ops.respond`, `ops.respondError`, `ops.respondScheduled`; and the `waitUntil` bookkeeping
//! (`ops.backgroundStart` / `ops.backgroundDone`) behind `worker.waitUntilSettled()`; ids for
//! response bodies streamed to the host (`ops.bodyStreamId`); and the count of work a request's
//! context still has under way (`ContextHolds`), which per-request mode waits for. And
//! `ops.exitRequest` (node:process's exit()): one request's JavaScript is stopped, not the isolate.

use super::{arg_string, read_string_array, state, view_bytes, OpFn};
use super::{ContextHolds, Pending};
use crate::runtime::types::{Body, JsErrorInfo, ResponseData, ScheduledOutcome, WorkerError};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("respond", op_respond.map_fn_to());
  install("respondError", op_respond_error.map_fn_to());
  install("respondScheduled", op_respond_scheduled.map_fn_to());
  install("backgroundStart", op_background_start.map_fn_to());
  install("backgroundDone", op_background_done.map_fn_to());
  install("eventDone", op_event_done.map_fn_to());
  install("currentEvent", op_current_event.map_fn_to());
  install("runAsEvent", op_run_as_event.map_fn_to());
  install("contextPump", op_context_pump.map_fn_to());
  install("bodyStreamId", op_body_stream_id.map_fn_to());
  install("exitRequest", op_exit_request.map_fn_to());
}

thread_local! {
  /// Set by `ops.exitRequest`: the running JS was terminated to end one request (see [`take_exit`]).
  static EXITING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether `ops.exitRequest` terminated the JS since the last call: the macrotask that ran it
/// then cancels the termination once the stack has unwound, and the isolate goes on serving
/// (src/runtime/isolate/pump.rs, `run_macrotask`).
pub(crate) fn take_exit() -> bool {
  EXITING.with(|exiting| exiting.replace(false))
}

/// `ops.exitRequest(id, message)`: workerd's process.exit() in a request. The request fails with
/// `message` (an Error), its timers are dropped, and the running JavaScript is terminated (no
/// `finally` runs; the caller spins until V8 takes the termination at its next interrupt check).
fn op_exit_request<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let message = arg_string(scope, &args, 1);
  let state = state(scope);
  let pending = {
    let mut s = state.borrow_mut();
    s.drop_timers_of(id);
    s.take_pending(id)
  };
  if let Some(pending) = pending {
    let stack = format!("Error: {message}");
    pending.fail(WorkerError::Js(JsErrorInfo { name: "Error".into(), message, stack, file: None, line: None, column: None }));
  }
  EXITING.with(|exiting| exiting.set(true));
  scope.terminate_execution();
}

/// `ops.bodyStreamId()`: a new id for a response body streamed to the host. Unique in the
/// process, so ids from an isolate that was replaced never collide with the new one's.
fn op_body_stream_id(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue) {
  static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
  let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
  rv.set(v8::Integer::new_from_unsigned(scope, id).into());
}

fn take(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments) -> Option<Pending> {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = state(scope);
  let pending = state.borrow_mut().take_pending(id);
  pending
}

fn error_from_args(scope: &mut v8::PinScope, args: &v8::FunctionCallbackArguments, first: i32) -> JsErrorInfo {
  JsErrorInfo {
    name: arg_string(scope, args, first),
    message: arg_string(scope, args, first + 1),
    stack: arg_string(scope, args, first + 2),
    file: None,
    line: None,
    column: None,
  }
}

/// `ops.respond(id, status, statusText, flatHeaders, body: Uint8Array | streamId | null)`
fn op_respond<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let cpu_ms = event_cpu_ms(scope, args.get(0).uint32_value(scope).unwrap_or(0));
  let Some(Pending::Fetch(reply)) = take(scope, &args) else { return };
  let status = args.get(1).uint32_value(scope).unwrap_or(500) as u16;
  let status_text = arg_string(scope, &args, 2);
  let flat = read_string_array(scope, args.get(3)).unwrap_or_default();
  let headers = flat.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect();
  let body = args.get(4);
  let body = if body.is_number() {
    Body::Stream(body.uint32_value(scope).unwrap_or(0))
  } else {
    view_bytes(body).map_or(Body::Empty, |bytes| Body::Bytes(bytes.into()))
  };
  reply(Ok(ResponseData { status, status_text, headers, body, cpu_ms }));
}

/// The CPU time event `id` has used so far: its finished turns, plus the running turn's when the
/// event owns it.
fn event_cpu_ms(scope: &mut v8::PinScope, id: u32) -> f64 {
  let state = state(scope);
  let s = state.borrow();
  let mut used = s.cpu_used.get(&id).copied().unwrap_or_default();
  if s.current_owner == Some(id) {
    if let Some((_, turn, _)) = s.monitor.current_turn() {
      used += turn;
    }
  }
  used.as_secs_f64() * 1000.0
}

/// `ops.respondError(id, name, message, stack)`
fn op_respond_error<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(pending) = take(scope, &args) else { return };
  let error = error_from_args(scope, &args, 1);
  state(scope).borrow_mut().tainted = true;
  pending.fail(WorkerError::Js(error));
}

/// `ops.respondScheduled(id, noRetry, errorName?, errorMessage?, errorStack?)`: no error name
/// means the handler succeeded.
fn op_respond_scheduled<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(pending) = take(scope, &args) else { return };
  let no_retry = args.get(1).is_true();
  let error = if args.get(2).is_undefined() { None } else { Some(error_from_args(scope, &args, 2)) };
  if error.is_some() {
    state(scope).borrow_mut().tainted = true;
  }
  let outcome = ScheduledOutcome { outcome: if error.is_some() { "exception" } else { "ok" }.into(), no_retry, error };
  match pending {
    Pending::Scheduled(reply) => reply(Ok(outcome)),
    other => other.fail(WorkerError::runtime("ERR_INTERNAL", "an event of another kind was answered as a scheduled one")),
  }
}

/// `ops.backgroundStart()`: a `waitUntil` promise was registered.
fn op_background_start(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue) {
  state(scope).borrow_mut().background += 1;
  adjust_holds(scope, |h| &h.waits, 1);
}

/// Counts work under way in the calling context (see [`ContextHolds`]).
fn adjust_holds(scope: &mut v8::PinScope, which: fn(&ContextHolds) -> &std::cell::Cell<u32>, delta: i32) {
  let context = scope.get_current_context();
  if let Some(holds) = context.get_slot::<ContextHolds>() {
    let cell = which(&holds);
    cell.set(cell.get().saturating_add_signed(delta));
  }
}

/// `ops.contextPump(delta)`: a response body started (+1) or stopped (-1) being written to
/// the host from this context.
fn op_context_pump<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let delta = if args.get(0).is_true() { 1 } else { -1 };
  adjust_holds(scope, |h| &h.pumps, delta);
}

/// `ops.backgroundDone()`: a `waitUntil` promise settled.
fn op_background_done(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue) {
  adjust_holds(scope, |h| &h.waits, -1);
  let state = state(scope);
  let waiters = {
    let mut s = state.borrow_mut();
    s.background = s.background.saturating_sub(1);
    s.settled_waiters_if_idle()
  };
  waiters.into_iter().for_each(|w| w());
}

/// `ops.eventDone(id)`: event `id` is over — its response is out, its body written and its
/// `waitUntil` work settled or given up on. The timers it left behind will never fire: they
/// belonged to it (production ends a request's timers with its I/O context).
fn op_event_done<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(id) = args.get(0).uint32_value(scope) else { return };
  state(scope).borrow_mut().drop_timers_of(id);
}

/// `ops.currentEvent()`: the id of the event whose JS is running (timers and I/O made now
/// belong to it), or undefined — also while the startup snapshot is made (no state yet: the
/// warm-up makes bodies and streams, which ask who owns them, src/js/52_io_owner.js).
fn op_current_event<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(state) = scope.get_slot::<super::StateRef>().cloned() else { return };
  let owner = state.borrow().current_owner;
  if let Some(id) = owner {
    rv.set_uint32(id);
  }
}

/// `ops.runAsEvent(id, fn)`: calls `fn` with event `id` as the owner of what it starts (a
/// WebSocket's events belong to the request that made the socket, as in workerd), then puts
/// the running event back, also when `fn` throws.
fn op_run_as_event<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(function) = v8::Local::<v8::Function>::try_from(args.get(1)) else { return super::throw_type_error(scope, "runAsEvent: a function is required") };
  let owner = args.get(0).uint32_value(scope);
  let state = state(scope);
  let previous = std::mem::replace(&mut state.borrow_mut().current_owner, owner);
  let receiver = v8::undefined(scope).into();
  let result = function.call(scope, receiver, &[]);
  state.borrow_mut().current_owner = previous;
  if let Some(result) = result {
    rv.set(result);
  }
}
