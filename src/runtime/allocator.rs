//! The ArrayBuffer allocator: the system allocator with a per-isolate cap, so that ArrayBuffer
//! memory (which lives outside V8's heap and its heap limit) cannot grow without bound. An
//! allocation over the cap fails, which V8 reports to JS as a RangeError.
//!
//! The same [`BufferBudget`] counts what else the host holds outside the heap on the worker's
//! behalf (pending timers, binding calls and fetches, see [`Charge`]; bytes handed to the worker
//! as ArrayBuffers, see [`HeldBytes`]): everything a worker makes the host keep is bounded by
//! `limits.memoryMb`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Bytes of ArrayBuffer memory in use, and the most allowed.
pub(crate) struct BufferBudget {
  used: AtomicUsize,
  cap: usize,
}

impl BufferBudget {
  /// Takes `len` bytes from the budget; false (and nothing taken) when that would pass the cap.
  pub(crate) fn reserve(&self, len: usize) -> bool {
    let mut used = self.used.load(Ordering::Relaxed);
    loop {
      let Some(next) = used.checked_add(len).filter(|&n| n <= self.cap) else { return false };
      match self.used.compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Relaxed) {
        Ok(_) => return true,
        Err(actual) => used = actual,
      }
    }
  }

  pub(crate) fn release(&self, len: usize) {
    self.used.fetch_sub(len, Ordering::AcqRel);
  }
}

thread_local! {
  /// The last ArrayBuffer allocation on this thread was refused for the budget (see
  /// [`take_refusal`]).
  static REFUSED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the last ArrayBuffer allocation on this (the isolate's) thread was refused because
/// it did not fit the budget; clears the mark. V8 answers a refused allocation with GCs, the
/// last of which calls the near-heap-limit callback even though the heap is nowhere near its
/// limit: that callback asks here, so the allocation fails with a RangeError the script can
/// catch, as in workerd, instead of stopping the worker (`isolate::limits::near_heap_limit`).
pub(crate) fn take_refusal() -> bool {
  REFUSED.with(|refused| refused.replace(false))
}

fn note_refusal(refused: bool) {
  REFUSED.with(|mark| mark.set(refused));
}

unsafe extern "C" fn allocate(budget: &BufferBudget, len: usize) -> *mut c_void {
  if !budget.reserve(len) {
    note_refusal(true);
    return std::ptr::null_mut();
  }
  note_refusal(false);
  let data = libc::calloc(len.max(1), 1);
  if data.is_null() {
    budget.release(len);
  }
  data
}

unsafe extern "C" fn allocate_uninitialized(budget: &BufferBudget, len: usize) -> *mut c_void {
  if !budget.reserve(len) {
    note_refusal(true);
    return std::ptr::null_mut();
  }
  note_refusal(false);
  let data = libc::malloc(len.max(1));
  if data.is_null() {
    budget.release(len);
  }
  data
}

unsafe extern "C" fn free(budget: &BufferBudget, data: *mut c_void, len: usize) {
  libc::free(data);
  budget.release(len);
}

unsafe extern "C" fn drop_budget(budget: *const BufferBudget) {
  drop(Arc::from_raw(budget));
}

/// An allocator for one isolate whose ArrayBuffers may use at most `cap` bytes, and the budget it
/// draws on (shared with other memory held for the worker outside the heap).
pub(crate) fn capped(cap: usize) -> (v8::UniqueRef<v8::Allocator>, Arc<BufferBudget>) {
  static VTABLE: v8::RustAllocatorVtable<BufferBudget> = v8::RustAllocatorVtable {
    allocate,
    allocate_uninitialized,
    free,
    drop: drop_budget,
  };
  let budget = Arc::new(BufferBudget { used: AtomicUsize::new(0), cap });
  // SAFETY: the vtable functions match the allocator contract; V8 calls `drop` once, which
  // releases the Arc handed over here.
  let allocator = unsafe { v8::new_rust_allocator(Arc::into_raw(budget.clone()), &VTABLE) };
  (allocator, budget)
}

/// Bytes taken from a worker's budget for something the host keeps for it; given back on drop.
pub(crate) struct Charge {
  budget: Arc<BufferBudget>,
  bytes: usize,
}

impl Charge {
  /// Takes `bytes` from `budget`, or `None` when the worker is out of memory.
  pub(crate) fn take(budget: &Arc<BufferBudget>, bytes: usize) -> Option<Self> {
    budget.reserve(bytes).then(|| Charge { budget: budget.clone(), bytes })
  }
}

impl Drop for Charge {
  fn drop(&mut self) {
    self.budget.release(self.bytes);
  }
}

/// An isolate slot: what bytes the engine hands a worker (fetch and KV bodies, codec output,
/// binding answers, as ArrayBuffers over host memory) are charged to, and who stops a worker
/// that has used up its budget.
pub(crate) struct HeldBytes {
  pub budget: Arc<BufferBudget>,
  pub monitor: Arc<super::monitor::Monitor>,
}

impl HeldBytes {
  /// Charges `len` bytes. Over the cap it first has V8 collect garbage (dropped buffers give
  /// their bytes back), as V8 does before an ArrayBuffer allocation fails; if that is not
  /// enough, the bytes are charged anyway (they exist already) and the worker is stopped with
  /// ERR_MEMORY_LIMIT, so the host holds at most `memoryMb` plus this one buffer.
  /// `None` when the isolate has no such slot (nothing to charge to).
  pub(crate) fn charge(isolate: &mut v8::Isolate, len: usize) -> Option<Charge> {
    let (budget, monitor) = {
      let held = isolate.get_slot::<HeldBytes>()?;
      (held.budget.clone(), held.monitor.clone())
    };
    if let Some(charge) = Charge::take(&budget, len) {
      return Some(charge);
    }
    isolate.low_memory_notification();
    if let Some(charge) = Charge::take(&budget, len) {
      return Some(charge);
    }
    monitor.terminate(super::monitor::StopReason::Memory);
    budget.used.fetch_add(len, Ordering::AcqRel);
    Some(Charge { budget, bytes: len })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_budget_refuses_past_its_cap_and_recovers_on_release() {
    let budget = BufferBudget { used: AtomicUsize::new(0), cap: 100 };
    assert!(budget.reserve(60));
    assert!(!budget.reserve(50));
    budget.release(60);
    assert!(budget.reserve(100));
    assert!(!budget.reserve(1));
  }

  #[test]
  fn a_charge_is_given_back_when_dropped() {
    let budget = Arc::new(BufferBudget { used: AtomicUsize::new(0), cap: 1000 });
    let first = Charge::take(&budget, 600).expect("fits");
    assert!(Charge::take(&budget, 600).is_none());
    drop(first);
    assert!(Charge::take(&budget, 600).is_some());
  }
}
