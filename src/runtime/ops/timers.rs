//! Timer ops. JS hands a callback to `ops.timerStart`; the callback is kept here as a
//! `v8::Global` keyed by the timer id while the scheduler thread keeps the deadline.

use super::{state, OpFn};
use v8::MapFnTo;
use super::Timer;
use crate::runtime::messages::SchedulerMessage;
use std::time::Duration;

/// What the host holds for one pending timer (its entry here, the V8 global handle, the
/// scheduler's deadline), charged to the worker's memory budget: a million timers would
/// otherwise grow the host by ~500 MB outside any limit.
const TIMER_COST: usize = 512;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("timerStart", op_timer_start.map_fn_to());
  install("timerCancel", op_timer_cancel.map_fn_to());
  install("queueMicrotask", op_queue_microtask.map_fn_to());
  install("now", op_now.map_fn_to());
}

/// HTML's rule: a delay that is negative, NaN or missing means 0.
fn delay_of(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> Duration {
  let ms = value.number_value(scope).unwrap_or(0.0);
  if ms.is_finite() && ms > 0.0 {
    Duration::from_secs_f64(ms.min(2_147_483_647.0) / 1000.0)
  } else {
    Duration::ZERO
  }
}

/// `ops.timerStart(callback, delayMs, repeat, internal) -> id` (`internal`: the runtime's own)
fn op_timer_start<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(callback) = v8::Local::<v8::Function>::try_from(args.get(0)) else {
    return super::throw_type_error(scope, "timer callback must be a function");
  };
  let delay = delay_of(scope, args.get(1));
  let repeat = args.get(2).is_true();
  let internal = args.get(3).is_true();
  if !internal && super::refuse_at_global_scope(scope) {
    return;
  }
  // Out of memory: the worker is stopped like any other memory bomb.
  let Some(charge) = super::charge_or_stop(scope, TIMER_COST, "setTimeout: the worker has used up its memory limit (limits.memoryMb) with pending timers") else { return };
  let state = state(scope);
  let callback = v8::Global::new(scope, callback);
  let mut state = state.borrow_mut();
  let id = state.next_id();
  let owner = state.current_owner;
  state.timers.insert(id, Timer { callback, repeat: repeat.then_some(delay), owner, internal, _charge: charge });
  let _ = state.scheduler.send(SchedulerMessage::StartTimer { id, delay });
  rv.set_uint32(id);
}

/// `ops.timerCancel(id)`
fn op_timer_cancel<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(id) = args.get(0).uint32_value(scope) else { return };
  let state = state(scope);
  let mut state = state.borrow_mut();
  if state.timers.remove(&id).is_some() {
    let _ = state.scheduler.send(SchedulerMessage::CancelTimer { id });
  }
}

/// `ops.queueMicrotask(callback)`
fn op_queue_microtask<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  match v8::Local::<v8::Function>::try_from(args.get(0)) {
    Ok(callback) => scope.enqueue_microtask(callback),
    Err(_) => super::throw_type_error(scope, "queueMicrotask: argument must be a function"),
  }
}

/// `ops.now()`: milliseconds since the isolate started, for `performance.now()`.
fn op_now(scope: &mut v8::PinScope, _args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue) {
  let started = state(scope).borrow().started;
  rv.set_double(started.elapsed().as_secs_f64() * 1000.0);
}
