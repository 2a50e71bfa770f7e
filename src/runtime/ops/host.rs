//! `ops.hostCall(binding, method, argsJson, bytes) -> Promise<[json, bytes]>`: a binding
//! operation handed to the host (through the scheduler thread). The promise's resolver is kept
//! as a `v8::Global` keyed by call id until the answer comes back as a `CallbackMessage`.

use super::{arg_string, state, view_bytes, OpFn};
use crate::runtime::messages::SchedulerMessage;
use crate::runtime::types::HostCall;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("hostCall", op_host_call.map_fn_to());
}

fn op_host_call(scope: &mut v8::HandleScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue) {
  let call = HostCall {
    binding: arg_string(scope, &args, 0),
    method: arg_string(scope, &args, 1),
    args: arg_string(scope, &args, 2),
    bytes: view_bytes(args.get(3)).map(Into::into),
  };
  let Some(resolver) = v8::PromiseResolver::new(scope) else { return };
  let promise = resolver.get_promise(scope);
  let state = state(scope);
  let mut s = state.borrow_mut();
  s.next_timer_id = s.next_timer_id.wrapping_add(1).max(1);
  let id = s.next_timer_id;
  let owner = s.current_owner;
  s.host_calls.insert(id, (v8::Global::new(scope, resolver), owner));
  let _ = s.scheduler.send(SchedulerMessage::HostCall { id, call });
  rv.set(promise.into());
}
