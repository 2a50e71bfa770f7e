//! `ops.fillRandom(view)`: fills a typed array with bytes from the operating system's CSPRNG
//! (through `getrandom`), for `crypto.getRandomValues` and `crypto.randomUUID` — not while the
//! script's top level runs, where workerd refuses random values too.

use super::{throw_type_error, OpFn};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("fillRandom", op_fill_random.map_fn_to());
}

fn op_fill_random<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  // workerd refuses random values while the script's top level runs, as it refuses I/O there;
  // `ops.fillRandom(view, true)` is the runtime's own use (a multipart boundary), always allowed.
  if !args.get(1).is_true() && super::refuse_at_global_scope(scope) {
    return;
  }
  let Ok(view) = v8::Local::<v8::ArrayBufferView>::try_from(args.get(0)) else {
    return throw_type_error(scope, "fillRandom: argument must be an ArrayBufferView");
  };
  let len = view.byte_length();
  if len == 0 {
    return;
  }
  let mut bytes = vec![0u8; len];
  if let Err(error) = getrandom::fill(&mut bytes) {
    return throw_type_error(scope, &format!("the operating system's random source failed: {error}"));
  }
  let offset = view.byte_offset();
  let store = view.buffer(scope).map(|b| b.get_backing_store());
  if let Some(data) = store.as_ref().and_then(|s| s.data()) {
    // SAFETY: [offset, offset + len) lies inside the view's buffer, kept alive by `store`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (data.as_ptr() as *mut u8).add(offset), len) };
  }
}
