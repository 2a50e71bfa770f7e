//! `ops.log(level, text)`: the end of `console.*`, handing a formatted line to the host's sink.
//! `ops.logUncaught(text)`: logs "Uncaught <text>" as an error nobody caught (which marks the
//! isolate for renewal in per-request mode, as the native side's own uncaught errors do).
//! `ops.errorMessage(value)`: what V8's message for `value` as an uncaught exception says:
//! `[message, resourceName, line, column]` (an ErrorEvent's fields, as workerd fills them).
//! `ops.promiseState(promise)`: `[state]` or `[state, value]`, for console.log's `Promise { … }`
//! (and do_not_capture_async_api_throws' check for an already rejected promise).

use super::{arg_string, state, OpFn};
use v8::MapFnTo;
use crate::runtime::types::LogLevel;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("log", op_log.map_fn_to());
  install("logUncaught", op_log_uncaught.map_fn_to());
  install("errorMessage", op_error_message.map_fn_to());
  install("promiseState", op_promise_state.map_fn_to());
}

/// `["pending"]`, `["fulfilled", value]` or `["rejected", reason]` for a promise (without
/// marking a rejection handled); undefined for anything else.
fn op_promise_state<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(promise) = v8::Local::<v8::Promise>::try_from(args.get(0)) else {
    return;
  };
  let state = match promise.state() {
    v8::PromiseState::Pending => "pending",
    v8::PromiseState::Fulfilled => "fulfilled",
    v8::PromiseState::Rejected => "rejected",
  };
  let name = super::new_string(scope, state).into();
  let result = if promise.state() == v8::PromiseState::Pending {
    v8::Array::new_with_elements(scope, &[name])
  } else {
    let value = promise.result(scope);
    v8::Array::new_with_elements(scope, &[name, value])
  };
  rv.set(result.into());
}

fn op_log_uncaught<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let text = arg_string(scope, &args, 0);
  let sink = {
    let state = state(scope);
    let mut s = state.borrow_mut();
    s.tainted = true;
    s.log.clone()
  };
  sink(LogLevel::Error, format!("Uncaught {text}"));
}

fn op_error_message<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let message = v8::Exception::create_message(scope, args.get(0));
  let text: v8::Local<v8::Value> = message.get(scope).into();
  let resource = message.get_script_resource_name(scope).filter(|name| name.is_string());
  let resource = resource.unwrap_or_else(|| super::new_string(scope, "").into());
  let line = message.get_line_number(scope).unwrap_or(0);
  let column = message.get_start_column();
  let line = v8::Number::new(scope, line as f64).into();
  let column = v8::Number::new(scope, column as f64).into();
  let result = v8::Array::new_with_elements(scope, &[text, resource, line, column]);
  rv.set(result.into());
}

fn op_log<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let level = LogLevel::parse(&arg_string(scope, &args, 0));
  let text = arg_string(scope, &args, 1);
  let sink = state(scope).borrow().log.clone();
  sink(level, text);
}
