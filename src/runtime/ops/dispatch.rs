//! `ops.respond` / `ops.respondError`: how the JS side of a dispatch hands its outcome back to
//! the host that is waiting on the request id.

use super::{arg_string, read_string_array, state, view_bytes, OpFn};
use v8::MapFnTo;
use crate::runtime::types::{Body, JsErrorInfo, ResponseData, WorkerError};

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("respond", op_respond.map_fn_to());
  install("respondError", op_respond_error.map_fn_to());
}

fn request_id(scope: &mut v8::HandleScope, args: &v8::FunctionCallbackArguments) -> u32 {
  args.get(0).uint32_value(scope).unwrap_or(0)
}

/// `ops.respond(id, status, statusText, flatHeaders, body: Uint8Array | null)`
fn op_respond(scope: &mut v8::HandleScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue) {
  let id = request_id(scope, &args);
  let status = args.get(1).uint32_value(scope).unwrap_or(500) as u16;
  let status_text = arg_string(scope, &args, 2);
  let flat = read_string_array(scope, args.get(3)).unwrap_or_default();
  let headers = flat.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect();
  let body = match view_bytes(args.get(4)) {
    Some(bytes) => Body::Bytes(bytes.into()),
    None => Body::Empty,
  };
  let reply = state(scope).borrow_mut().pending.remove(&id);
  if let Some(reply) = reply {
    reply(Ok(ResponseData { status, status_text, headers, body }));
  }
}

/// `ops.respondError(id, name, message, stack)`
fn op_respond_error(scope: &mut v8::HandleScope, args: v8::FunctionCallbackArguments, _rv: v8::ReturnValue) {
  let id = request_id(scope, &args);
  let error = JsErrorInfo {
    name: arg_string(scope, &args, 1),
    message: arg_string(scope, &args, 2),
    stack: arg_string(scope, &args, 3),
    file: None,
    line: None,
    column: None,
  };
  let reply = state(scope).borrow_mut().pending.remove(&id);
  if let Some(reply) = reply {
    reply(Err(WorkerError::Js(error)));
  }
}
