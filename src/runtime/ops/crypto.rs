//! Ops behind `crypto.subtle` and `crypto.DigestStream` (see `src/js/79_subtle.js`): thin glue
//! between V8 values and the stateless `webcrypto` module. `subtleCall(op, params)` converts a
//! plain object of strings, numbers (booleans as 0/1) and Uint8Arrays into parameters and the result
//! back; failures throw an Error whose `name` is the WebCrypto DOMException name. DigestStream
//! hashers live in the isolate state by id.

use super::{arg_string, new_string, state, throw_type_error, uint8_array, view_bytes, OpFn};
use crate::runtime::webcrypto::{self, Out, Params, Value};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("subtleCall", op_subtle_call.map_fn_to());
  install("digestCreate", op_digest_create.map_fn_to());
  install("digestUpdate", op_digest_update.map_fn_to());
  install("digestFinish", op_digest_finish.map_fn_to());
  install("digestDrop", op_digest_drop.map_fn_to());
}

/// Throws an Error named after the WebCrypto failure (the JS side turns it into a DOMException).
pub(super) fn throw_crypto_error(scope: &mut v8::PinScope, error: &webcrypto::Error) {
  let message = new_string(scope, error.message());
  let exception = v8::Exception::error(scope, message);
  if let Ok(object) = v8::Local::<v8::Object>::try_from(exception) {
    let key = new_string(scope, "name");
    let name = new_string(scope, error.name());
    object.set(scope, key.into(), name.into());
  }
  scope.throw_exception(exception);
}

pub(super) fn read_params(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> Option<Params> {
  let object = v8::Local::<v8::Object>::try_from(value).ok()?;
  let names = object.get_own_property_names(scope, v8::GetPropertyNamesArgs::default())?;
  let mut params = Params::default();
  for i in 0..names.length() {
    let key = names.get_index(scope, i)?;
    let value = object.get(scope, key)?;
    let value = if value.is_null_or_undefined() {
      Value::Null
    } else if value.is_boolean() {
      Value::Num(if value.is_true() { 1.0 } else { 0.0 })
    } else if value.is_number() {
      Value::Num(value.number_value(scope)?)
    } else if value.is_string() {
      Value::Str(value.to_rust_string_lossy(scope))
    } else {
      Value::Bytes(view_bytes(value)?)
    };
    params.set(&key.to_rust_string_lossy(scope), value);
  }
  Some(params)
}

pub(super) fn write_out<'s>(scope: &mut v8::PinScope<'s, '_>, out: Out) -> v8::Local<'s, v8::Value> {
  match out {
    Out::Bytes(bytes) => uint8_array(scope, bytes).into(),
    Out::Bool(b) => v8::Boolean::new(scope, b).into(),
    Out::Num(n) => v8::Number::new(scope, n).into(),
    Out::Str(s) => new_string(scope, &s).into(),
    Out::List(items) => {
      let items: Vec<v8::Local<v8::Value>> = items.into_iter().map(|item| write_out(scope, item)).collect();
      v8::Array::new_with_elements(scope, &items).into()
    }
  }
}

/// `ops.subtleCall(op, params) -> Uint8Array | boolean | number | string | Array`
fn op_subtle_call<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let op = arg_string(scope, &args, 0);
  let Some(params) = read_params(scope, args.get(1)) else {
    return throw_type_error(scope, "subtleCall: parameters must be strings, numbers, booleans or Uint8Arrays");
  };
  // Long operations (RSA key generation) stop when a limit or dispose stops the worker's JS.
  let monitor = state(scope).borrow().monitor.clone();
  match webcrypto::with_cancel(move || monitor.stop_pending(), || webcrypto::call(&op, &params)) {
    Ok(out) => {
      let value = write_out(scope, out);
      rv.set(value);
    }
    Err(error) => throw_crypto_error(scope, &error),
  }
}

/// `ops.digestCreate(hashName) -> id`
fn op_digest_create<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  match webcrypto::new_hasher(&name) {
    Ok(hasher) => {
      let state = state(scope);
      let mut s = state.borrow_mut();
      let id = s.next_id();
      s.hashers.insert(id, hasher);
      rv.set_uint32(id);
    }
    Err(error) => throw_crypto_error(scope, &error),
  }
}

/// `ops.digestUpdate(id, bytes)`
fn op_digest_update<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let Some(bytes) = view_bytes(args.get(1)) else {
    return throw_type_error(scope, "DigestStream: chunks must be ArrayBuffers or ArrayBufferViews");
  };
  let state = state(scope);
  let found = match state.borrow_mut().hashers.get_mut(&id) {
    Some(hasher) => {
      hasher.update(&bytes);
      true
    }
    None => false,
  };
  if !found {
    throw_type_error(scope, "The DigestStream is closed.");
  }
}

/// `ops.digestFinish(id) -> Uint8Array`
fn op_digest_finish<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  let hasher = state(scope).borrow_mut().hashers.remove(&id);
  match hasher {
    Some(hasher) => {
      let digest = uint8_array(scope, hasher.finalize().into_vec());
      rv.set(digest.into());
    }
    None => throw_type_error(scope, "The DigestStream is closed."),
  }
}

/// `ops.digestDrop(id)`: the stream was aborted.
fn op_digest_drop<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let id = args.get(0).uint32_value(scope).unwrap_or(0);
  state(scope).borrow_mut().hashers.remove(&id);
}
