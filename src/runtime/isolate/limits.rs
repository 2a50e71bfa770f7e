//! Limits on running JS: how a stopped pass ends (`PumpExit`), the errors and log lines for a
//! CPU, wall-clock or memory stop, V8's near-heap-limit hook, and the per-request CPU
//! accounting around each stretch of JS (`begin_turn`/`end_turn`).

use super::*;

/// How a pass of the message loop ended.
pub(super) enum PumpExit {
  /// Dispose, or the host went away.
  Shutdown,
  /// A limit stopped the script; `culprit` is the request whose JS was running, if known.
  Recycle { reason: StopReason, culprit: Option<u32> },
  /// Per-request mode: the isolate served its share of contexts, or saw an error, and no
  /// event is running; continue in a fresh isolate.
  Renew,
}

pub(super) fn limit_text(reason: StopReason, limits: &Limits) -> String {
  match reason {
    StopReason::Cpu => format!("A request exceeded its CPU time limit of {} ms (limits.cpuMs) and was stopped.", limits.cpu_ms),
    StopReason::Wall => format!("A request exceeded its wall-clock limit of {} ms (limits.wallMs) while running JavaScript and was stopped.", limits.wall_ms),
    StopReason::Memory => format!("The worker exceeded its memory limit of {} MB (limits.memoryMb) and was stopped.", limits.memory_mb),
    StopReason::Dispose => "The worker was disposed.".into(),
  }
}

/// The error for a request that was in the isolate when a limit stopped it: the limit's own
/// code for the request that hit it, `ERR_WORKER_RECYCLED` for the others.
pub(super) fn limit_error(reason: StopReason, limits: &Limits, culprit: bool) -> WorkerError {
  let code = match reason {
    StopReason::Cpu => "ERR_CPU_LIMIT",
    StopReason::Wall => "ERR_WALL_LIMIT",
    StopReason::Memory => "ERR_MEMORY_LIMIT",
    StopReason::Dispose => return WorkerError::Disposed("the worker was disposed before it responded".into()),
  };
  if culprit {
    WorkerError::runtime(code, limit_text(reason, limits))
  } else {
    WorkerError::runtime(
      "ERR_WORKER_RECYCLED",
      format!("This request was cancelled because the worker restarted: {}", limit_text(reason, limits)),
    )
  }
}

pub(super) extern "C" fn near_heap_limit(data: *mut c_void, current: usize, initial: usize) -> usize {
  // SAFETY: `data` is the worker's Monitor, kept alive by the isolate thread beyond the isolate.
  let monitor = unsafe { &*(data as *const Monitor) };
  // V8 also calls this before the last-resort GC it runs for an ArrayBuffer the allocator
  // refused (over the budget, or past what it could ever hold): the heap is not at its limit
  // then, and the allocation fails with a RangeError the script can catch, as in workerd. A
  // heap really over `memoryMb` is still stopped after that GC (`after_full_gc`). The first
  // hit's headroom is granted all the same (once: V8's limit does not creep up with every
  // refusal), so that a mark a refusal left without V8 retrying cannot leave a real hit
  // without room, where V8 would abort the process.
  if allocator::take_refusal() {
    return if current > initial { current } else { heap_headroom(1, current) };
  }
  monitor.terminate(StopReason::Memory);
  heap_headroom(monitor.note_heap_limit_hit(), current)
}

/// How far above `memoryMb` V8's own heap limit is set. V8 checks its limit before each
/// allocation, and an allocation that does not fit even after its last-resort GC aborts the
/// process without calling any embedder callback (`CALL_AND_RETRY_LAST`): a dictionary that
/// doubles from 40 to 80 MB under a 64 MB limit does that. With this much room above the
/// worker's limit, such an allocation succeeds, and the worker's own limit is enforced after
/// each full GC ([`after_full_gc`]), when the heap's size is what is really alive.
pub(crate) const HARD_LIMIT_EXTRA: usize = 1 << 30;

/// After a mark-compact GC: a heap still above the worker's limit stops the script.
pub(super) extern "C" fn after_full_gc(isolate: v8::UnsafeRawIsolatePtr, _type: v8::GCType, _flags: v8::GCCallbackFlags, data: *mut c_void) {
  // SAFETY: V8 calls this on the isolate thread during GC; `data` is the worker's Monitor,
  // kept alive by that thread beyond the isolate.
  let monitor = unsafe { &*(data as *const Monitor) };
  monitor.full_gc_done();
  let mut isolate = unsafe { v8::Isolate::from_raw_isolate_ptr(isolate) };
  let used = isolate.get_heap_statistics().used_heap_size();
  if used > monitor.heap_soft_limit() {
    monitor.terminate(StopReason::Memory);
  }
}

/// After a young-generation GC: a heap over the worker's limit (old-generation garbage
/// included) asks for a full GC at the next interrupt check, whose epilogue decides with what
/// is really alive. Without it, the next full GC waits until the old generation reaches a
/// multiple of what the last one left (V8 grows that threshold up to 4×), and a script piling
/// up small objects under `memoryMb: 64` took the host's RSS up by about 250 MB before it was
/// stopped.
pub(super) extern "C" fn after_young_gc(isolate: v8::UnsafeRawIsolatePtr, _type: v8::GCType, _flags: v8::GCCallbackFlags, data: *mut c_void) {
  // SAFETY: as in `after_full_gc`.
  let monitor = unsafe { &*(data as *const Monitor) };
  let mut isolate = unsafe { v8::Isolate::from_raw_isolate_ptr(isolate) };
  if isolate.get_heap_statistics().used_heap_size() > monitor.heap_soft_limit() && monitor.ask_full_gc() {
    isolate.thread_safe_handle().request_interrupt(collect_fully, data);
  }
}

/// Runs a full GC now (an interrupt: the isolate thread, outside any GC, no JS on top). The
/// critical memory-pressure level makes V8 collect everything it can at once, and V8 resets the
/// level itself afterwards.
unsafe extern "C" fn collect_fully(isolate: v8::UnsafeRawIsolatePtr, _data: *mut c_void) {
  // SAFETY: V8 calls interrupt callbacks on the isolate's own thread.
  let mut isolate = unsafe { v8::Isolate::from_raw_isolate_ptr(isolate) };
  isolate.memory_pressure_notification(v8::MemoryPressureLevel::Critical);
}

/// The heap limit to grant when the isolate reaches `current` for the `hit`-th time (1-based).
///
/// Past its limit V8 either gets more room or aborts the whole process (a fatal "out of
/// memory" that no embedder callback can turn into an exception). The first time, the script
/// is terminated and 32 MB is enough to unwind. But a builtin that never checks for
/// termination — `new Array(1e8).fill(0)` allocating an 800 MB backing store in one go, or
/// filling a dictionary array element by element — keeps allocating until it returns, so each
/// later hit at least doubles the limit (V8 caps it at its allocator limit); the isolate is
/// then discarded as soon as the builtin returns. The host's memory can spike meanwhile, but
/// the process survives.
pub(super) fn heap_headroom(hit: u32, current: usize) -> usize {
  const FIRST: usize = 32 << 20;
  const LATER_MIN: usize = 1 << 30;
  if hit <= 1 {
    current + FIRST
  } else {
    current.saturating_add(current.max(LATER_MIN))
  }
}

/// How the loop ends when a limit (or dispose) terminated the running JS.
pub(super) fn stopped(monitor: &Monitor, culprit: Option<u32>) -> Option<PumpExit> {
  match monitor.take_stop()? {
    StopReason::Dispose => Some(PumpExit::Shutdown),
    reason => Some(PumpExit::Recycle { reason, culprit }),
  }
}

/// Marks the start of a stretch of JS run for `owner` (a request id, if known): the CPU
/// watchdog may let it use what that request has left of `limits.cpuMs`.
pub(super) fn begin_turn(state: &StateRef, owner: Option<u32>) {
  let mut s = state.borrow_mut();
  s.current_owner = owner;
  let budget = (s.limits.cpu_ms > 0).then(|| {
    let limit = Duration::from_millis(s.limits.cpu_ms);
    let used = owner.and_then(|id| s.cpu_used.get(&id).copied()).unwrap_or_default();
    limit.saturating_sub(used)
  });
  // Events whose wall-clock deadline the scheduler does not have yet: the watchdog stops
  // this turn if it runs past the earliest of them.
  let wall = (s.limits.wall_ms > 0).then(|| s.unarmed_deadlines.first().map(|&(_, started)| started + Duration::from_millis(s.limits.wall_ms))).flatten();
  if s.monitor.begin_turn(budget, wall) {
    let _ = s.scheduler.send(SchedulerMessage::ArmWatchdog);
  }
}

/// Ends a stretch of JS and charges its CPU time to its request. A request whose stretches add
/// up past `limits.cpuMs` is stopped like one that ran over in a single stretch.
pub(super) fn end_turn(state: &StateRef) {
  let mut s = state.borrow_mut();
  let used = s.monitor.end_turn();
  let owner = s.current_owner.take();
  if s.monitor.stop_pending() && s.cpu_culprit.is_none() {
    // The watchdog stopped this stretch: its request is the one that hit the limit.
    s.cpu_culprit = owner;
  }
  let Some(id) = owner.filter(|id| s.pending.contains_key(id)) else { return };
  let limit = s.limits.cpu_ms;
  let total = {
    let entry = s.cpu_used.entry(id).or_default();
    *entry += used;
    *entry
  };
  if limit > 0 && total >= Duration::from_millis(limit) {
    s.cpu_culprit = Some(id);
    s.monitor.mark_stop(StopReason::Cpu);
  }
}

#[cfg(test)]
mod tests {
  use super::heap_headroom;

  #[test]
  fn the_first_heap_limit_hit_grants_a_little_and_later_ones_at_least_double() {
    let mb = 1 << 20;
    assert_eq!(heap_headroom(1, 64 * mb), 96 * mb);
    assert_eq!(heap_headroom(2, 96 * mb), 96 * mb + (1 << 30));
    let big = 3usize << 30;
    assert_eq!(heap_headroom(5, big), 2 * big);
    assert_eq!(heap_headroom(9, usize::MAX - 1), usize::MAX);
  }
}
