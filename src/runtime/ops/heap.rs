//! The ops of the stepped built-ins (src/js/03_long_builtins.js): `ops.heapCheck()` lets their
//! long loops see the worker's heap limit while they run, and `ops.isProxy(value)` tells them,
//! without running a trap, which receivers to leave to V8's built-ins (as `ops.valueIs("Proxy",
//! …)` does, without its string argument: these are called on every `fill` and `Array.from`).
//!
//! The limit is checked after each full GC (`isolate::limits::after_full_gc`). A built-in that
//! grows a table in the old generation (a dictionary array's) triggers no young-generation GC,
//! and the incremental marking V8 starts at its allocation limit advances only as the loop
//! allocates, so the full GC that would stop the worker could come hundreds of megabytes late.
//! This op, called between steps, runs that GC at once when the heap is over `memoryMb`.
//!
//! `ops.gc()` is the `globalThis.gc()` of a worker created with `unsafeExposeGc` (V8's
//! `--expose-gc` is process-wide and would reach every isolate): a full collection.

use super::{state, OpFn};
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("heapCheck", op_heap_check.map_fn_to());
  install("isProxy", op_is_proxy.map_fn_to());
  install("gc", op_gc.map_fn_to());
}

/// `ops.gc()`: a full garbage collection now (V8's low-memory notification collects everything
/// it can, as `--expose-gc`'s `gc()` does).
fn op_gc<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  scope.low_memory_notification();
}

/// `ops.isProxy(value) -> boolean`
fn op_is_proxy<'s>(_scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  rv.set_bool(args.get(0).is_proxy());
}

/// `ops.heapCheck()`: a full GC now if the heap is over the worker's limit (its epilogue stops
/// the worker if it still is; the caller's next loop iteration then ends).
fn op_heap_check<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let monitor = state(scope).borrow().monitor.clone();
  if scope.get_heap_statistics().used_heap_size() > monitor.heap_soft_limit() {
    scope.memory_pressure_notification(v8::MemoryPressureLevel::Critical);
  }
}
