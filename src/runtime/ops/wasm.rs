//! `ops.wasmCapMemories(bytes)`: a module's bytes with the memories it declares capped at the
//! worker's `memoryMb` (see `runtime/wasm_memory.rs`), for `src/js/30_wasm.js`.

use super::{state, view_bytes, OpFn};
use crate::runtime::wasm_memory::cap_declared_memories;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("wasmCapMemories", op_wasm_cap_memories.map_fn_to());
}

/// The largest Wasm memory this worker may have, in 64 KiB pages.
fn max_pages(scope: &mut v8::PinScope) -> u64 {
  crate::runtime::wasm_memory::max_pages(state(scope).borrow().limits.memory_mb)
}

/// `ops.wasmCapMemories(view) -> Uint8Array | undefined` (undefined: use the bytes as they are)
fn op_wasm_cap_memories<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Some(bytes) = view_bytes(args.get(0)) else { return };
  let max = max_pages(scope);
  if let Some(capped) = cap_declared_memories(&bytes, max) {
    let array = super::uint8_array(scope, capped);
    rv.set(array.into());
  }
}
