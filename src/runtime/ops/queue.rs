//! `ops.respondQueue`: how the JS side of a queue event (`internals.dispatchQueue` in
//! `src/js/89_queue.js`) hands the handler's decisions back to the host waiting on the event.

use super::{arg_string, state, OpFn};
use super::Pending;
use crate::runtime::queue::{QueueEvent, QueueOutcome};
use crate::runtime::types::{JsErrorInfo, WorkerError};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("respondQueue", op_respond_queue.map_fn_to());
}

/// `ops.respondQueue(id, resultJson, errorName?, errorMessage?, errorStack?)`: no error name
/// means the handler succeeded.
fn op_respond_queue<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let state = state(scope);
  let Some(pending) = state.borrow_mut().take_pending(id) else { return };
  let result_json = arg_string(scope, &args, 1);
  let error = if args.get(2).is_undefined() {
    None
  } else {
    state.borrow_mut().tainted = true;
    Some(JsErrorInfo { name: arg_string(scope, &args, 2), message: arg_string(scope, &args, 3), stack: arg_string(scope, &args, 4), file: None, line: None, column: None })
  };
  let outcome = QueueOutcome { outcome: if error.is_some() { "exception" } else { "ok" }.into(), result_json, error };
  match pending {
    Pending::Queue(reply) => reply(Ok(outcome)),
    other => other.fail(WorkerError::runtime("ERR_INTERNAL", "an event of another kind was answered as a queue event")),
  }
}

/// `internals.dispatchQueue(id, queueName, batchJson, bodies)` arguments.
pub(crate) fn queue_args<'s>(scope: &mut v8::PinScope<'s, '_>, id: u32, event: QueueEvent) -> [v8::Local<'s, v8::Value>; 4] {
  let bodies: Vec<v8::Local<v8::Value>> = event.bodies.into_iter().map(|b| super::uint8_array_from(scope, b).into()).collect();
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    super::new_string(scope, &event.queue).into(),
    super::new_string(scope, &event.messages_json).into(),
    v8::Array::new_with_elements(scope, &bodies).into(),
  ]
}
