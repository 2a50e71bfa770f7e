//! Ops for compatibility flags that need a look inside V8: `ops.rejectedWith(promise)` tells
//! whether a promise is already rejected (for do_not_capture_async_api_throws, src/js/97_compat.js).

use super::OpFn;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("rejectedWith", op_rejected_with.map_fn_to());
}

/// `[reason]` when the argument is a promise that is already rejected, otherwise undefined.
fn op_rejected_with<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(promise) = v8::Local::<v8::Promise>::try_from(args.get(0)) else {
    return;
  };
  if promise.state() != v8::PromiseState::Rejected {
    return;
  }
  let reason = promise.result(scope);
  let array = v8::Array::new_with_elements(scope, &[reason]);
  rv.set(array.into());
}
