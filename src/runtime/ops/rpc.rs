//! `ops.respondRpc`: how the JS side of an RPC call (`internals.dispatchRpc` in
//! `src/js/84_rpc.js`) hands the method's result, or its error, back to the caller waiting on
//! the event.

use super::{arg_string, state, view_bytes, OpFn};
use super::Pending;
use crate::runtime::rpc::{RpcEvent, RpcOutcome};
use crate::runtime::types::{JsErrorInfo, WorkerError};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("respondRpc", op_respond_rpc.map_fn_to());
  install("markHandled", op_mark_handled.map_fn_to());
}

/// `ops.markHandled(promise)`: a rejection of `promise` (a call's result the caller may never
/// await) is not reported as unhandled, without adding a reaction to it, which would cut V8's
/// async stack traces through it (workerd's rejected calls show the caller's `at async` frames).
fn op_mark_handled<'s>(_scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  if let Ok(promise) = v8::Local::<v8::Promise>::try_from(args.get(0)) {
    promise.mark_as_handled();
  }
}

/// `ops.respondRpc(id, resultBytes, resultJson)` or `ops.respondRpc(id, undefined, undefined,
/// errorName, errorMessage, errorStack)`.
fn op_respond_rpc<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = state(scope);
  let Some(pending) = state.borrow_mut().take_pending(id) else { return };
  let outcome = if args.get(3).is_undefined() {
    RpcOutcome { result: view_bytes(args.get(1)).map(bytes::Bytes::from), result_json: arg_string(scope, &args, 2), error: None }
  } else {
    let error = JsErrorInfo { name: arg_string(scope, &args, 3), message: arg_string(scope, &args, 4), stack: arg_string(scope, &args, 5), file: None, line: None, column: None };
    RpcOutcome { result: None, result_json: "{}".into(), error: Some(error) }
  };
  match pending {
    Pending::Rpc(reply) => reply(Ok(outcome)),
    other => other.fail(WorkerError::runtime("ERR_INTERNAL", "an event of another kind was answered as an RPC call")),
  }
}

/// `internals.dispatchRpc(id, callJson, args)` arguments.
pub(crate) fn rpc_args<'s>(scope: &mut v8::PinScope<'s, '_>, id: u32, event: RpcEvent) -> [v8::Local<'s, v8::Value>; 3] {
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    super::new_string(scope, &event.call_json).into(),
    super::uint8_array_from(scope, event.args).into(),
  ]
}
