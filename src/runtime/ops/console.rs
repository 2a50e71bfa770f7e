//! `ops.log(level, text)`: the end of `console.*`, handing a formatted line to the host's sink.

use super::{arg_string, state, OpFn};
use v8::MapFnTo;
use crate::runtime::types::LogLevel;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("log", op_log.map_fn_to());
}

fn op_log<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let level = LogLevel::parse(&arg_string(scope, &args, 0));
  let text = arg_string(scope, &args, 1);
  let sink = state(scope).borrow().log.clone();
  sink(level, text);
}
