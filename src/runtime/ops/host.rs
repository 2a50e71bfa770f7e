//! Asynchronous I/O ops answered through the scheduler thread: `ops.hostCall(binding, method,
//! argsJson, bytes, untimed)` (a binding operation for the host's handler) and `ops.fetch(…)` (an
//! outbound HTTP request, whose bodies may stream: `ops.fetchRead`, `ops.fetchWrite`). All return a promise of `[json, bytes]` whose resolver is kept as a
//! `v8::Global` keyed by id until the answer comes back as a `CallbackMessage`.

use super::{arg_string, state, view_bytes, OpFn};
use crate::runtime::messages::SchedulerMessage;
use crate::runtime::types::{FetchRequest, HostCall};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("hostCall", op_host_call.map_fn_to());
  install("storeCallSync", op_store_call_sync.map_fn_to());
  install("fetch", op_fetch.map_fn_to());
  install("fetchCancel", op_fetch_cancel.map_fn_to());
  install("fetchRead", op_fetch_read.map_fn_to());
  install("fetchWrite", op_fetch_write.map_fn_to());
}

/// What one pending binding call, fetch or body chunk costs the host beyond its payload bytes
/// (the message, the resolver, the host's queue entry, a connection's state for a fetch).
const CALL_COST: usize = 512;
const FETCH_COST: usize = 4096;

/// Registers a promise for a new I/O id (charged to the running request) and sends the
/// scheduler the message `make(id)` builds. The host holds `bytes` for the call until it is
/// answered: they are taken from the worker's memory budget (`memoryMb`, shared with its
/// ArrayBuffers and timers), and a worker that has used it up is stopped like any memory bomb
/// (a million un-awaited binding calls used to grow the host by about 1 GB).
fn pending_io<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  bytes: usize,
  make: impl FnOnce(u32) -> SchedulerMessage,
) -> Option<(u32, v8::Local<'s, v8::Promise>)> {
  if super::refuse_at_global_scope(scope) {
    return None;
  }
  let charge = super::charge_or_stop(scope, bytes, "The worker has used up its memory limit (limits.memoryMb) with pending binding calls and fetches")?;
  let state = state(scope);
  let resolver = v8::PromiseResolver::new(scope)?;
  let promise = resolver.get_promise(scope);
  let mut s = state.borrow_mut();
  let id = s.next_id();
  let owner = s.current_owner;
  s.host_calls.insert(id, (v8::Global::new(scope, resolver), owner, charge));
  let _ = s.scheduler.send(make(id));
  Some((id, promise))
}

fn op_host_call<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let call = HostCall {
    binding: arg_string(scope, &args, 0),
    method: arg_string(scope, &args, 1),
    args: arg_string(scope, &args, 2),
    bytes: view_bytes(args.get(3)).map(Into::into),
  };
  // A fifth argument `true`: the call waits on a peer (a stream's next chunk, a connect
  // handler's end), not on a handler, so `limits.bindingMs` does not bound it.
  let untimed = args.get(4).is_true();
  let cost = CALL_COST + call.binding.len() + call.method.len() + call.args.len() + call.bytes.as_ref().map_or(0, |b| b.len());
  if let Some((_, promise)) = pending_io(scope, cost, |id| SchedulerMessage::HostCall { id, call, untimed }) {
    rv.set(promise.into());
  }
}

/// `ops.storeCallSync(binding, method, argsJson, bytes) -> [json, bytes] | undefined`: a binding
/// call answered at once, here, by an in-memory embedded store (no thread hop); undefined when
/// the binding's calls go through the scheduler (the host, a file, D1). A failure throws the
/// error the asynchronous call would have rejected with.
fn op_store_call_sync<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let binding = arg_string(scope, &args, 0);
  let (store, clock) = {
    let state = state(scope);
    let s = state.borrow();
    (s.stores.get(&binding).filter(|store| store.answers_inline()), s.store_clock.clone())
  };
  let Some(store) = store else { return };
  if super::refuse_at_global_scope(scope) {
    return;
  }
  let call = HostCall { binding, method: arg_string(scope, &args, 1), args: arg_string(scope, &args, 2), bytes: view_bytes(args.get(3)).map(Into::into) };
  match store.call(call, clock.now_ms()) {
    Ok(result) => {
      let json = super::new_string(scope, &result.json).into();
      let bytes: v8::Local<v8::Value> = match result.bytes {
        Some(bytes) => super::uint8_array(scope, bytes.to_vec()).into(),
        None => v8::null(scope).into(),
      };
      rv.set(v8::Array::new_with_elements(scope, &[json, bytes]).into());
    }
    Err(error) => {
      let message = super::new_string(scope, &error.message);
      let exception = if error.name == "TypeError" { v8::Exception::type_error(scope, message) } else { v8::Exception::error(scope, message) };
      if error.name != "TypeError" && error.name != "Error" {
        if let Ok(object) = v8::Local::<v8::Object>::try_from(exception) {
          let key = super::new_string(scope, "name").into();
          let name = super::new_string(scope, &error.name).into();
          object.set(scope, key, name);
        }
      }
      scope.throw_exception(exception);
    }
  }
}

/// `ops.fetch(method, url, flatHeaders, body, redirect, websocket) -> [id, Promise<[headJson, body]>]`;
/// `body` is a Uint8Array, null, or `true` when it will stream in through `ops.fetchWrite`
/// (for a WebSocket, `true`: its frames go that way).
fn op_fetch<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let flat = super::read_string_array(scope, args.get(2)).unwrap_or_default();
  let request = FetchRequest {
    method: arg_string(scope, &args, 0),
    url: arg_string(scope, &args, 1),
    headers: flat.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect(),
    body: view_bytes(args.get(3)).map(Into::into),
    body_stream: args.get(3).is_true(),
    redirect: arg_string(scope, &args, 4),
    // The scheduler applies the worker's network policy.
    public_only: false,
    websocket: args.get(5).is_true(),
  };
  let cost = FETCH_COST + request.url.len() + request.headers.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>() + request.body.as_ref().map_or(0, |b| b.len());
  let Some((id, promise)) = pending_io(scope, cost, |id| SchedulerMessage::Fetch { id, request }) else { return };
  let id = v8::Integer::new_from_unsigned(scope, id).into();
  rv.set(v8::Array::new_with_elements(scope, &[id, promise.into()]).into());
}

/// `ops.fetchCancel(id)`: aborts an outbound request still in flight.
fn op_fetch_cancel<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let Some(id) = args.get(0).uint32_value(scope) else { return };
  let _ = state(scope).borrow().scheduler.send(SchedulerMessage::CancelFetch { id });
}

/// `ops.fetchRead(id) -> Promise<[json, chunk]>`: the next chunk of a streamed response body;
/// `json` is `{"done":true}` (and `chunk` null) at the end.
fn op_fetch_read<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(id) = args.get(0).uint32_value(scope) else { return };
  if let Some((_, promise)) = pending_io(scope, CALL_COST, |read| SchedulerMessage::FetchRead { id, read }) {
    rv.set(promise.into());
  }
}

/// `ops.fetchWrite(id, chunk | null, errorReason?) -> Promise`: sends the next chunk of a
/// streamed request body; resolves once the connection took it. `null` ends the body, and an
/// error reason fails it.
fn op_fetch_write<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(id) = args.get(0).uint32_value(scope) else { return };
  let chunk = match view_bytes(args.get(1)) {
    Some(bytes) => Some(Ok(bytes.into())),
    None if args.get(2).is_string() => Some(Err(arg_string(scope, &args, 2))),
    None => None,
  };
  let cost = CALL_COST + chunk.as_ref().and_then(|c| c.as_ref().ok()).map_or(0, |b: &bytes::Bytes| b.len());
  if let Some((_, promise)) = pending_io(scope, cost, |write| SchedulerMessage::FetchWrite { id, write, chunk }) {
    rv.set(promise.into());
  }
}
