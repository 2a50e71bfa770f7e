//! [`Monitor`]: what the watchdog (on the scheduler thread) and the host need to see of a
//! running isolate — whether JS is running, since when (on the isolate thread's own CPU
//! clock), and a way to stop it — plus why it was stopped.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use super::inflight::Inflight;
use super::types::WorkerError;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Why the isolate's JS was terminated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum StopReason {
  Cpu = 1,
  Wall = 2,
  Memory = 3,
  Dispose = 4,
}

impl StopReason {
  fn from_u8(n: u8) -> Option<Self> {
    match n {
      1 => Some(Self::Cpu),
      2 => Some(Self::Wall),
      3 => Some(Self::Memory),
      4 => Some(Self::Dispose),
      _ => None,
    }
  }
}

#[derive(Default)]
pub(crate) struct Monitor {
  handle: Mutex<Option<v8::IsolateHandle>>,
  /// The isolate thread's CPU clock, readable from other threads.
  cpu_clock: OnceLock<ThreadCpuClock>,
  running: AtomicBool,
  /// Counts JS turns; lets the watchdog tell one long turn from many short ones.
  turn: AtomicU64,
  turn_cpu_start_ns: AtomicU64,
  /// CPU the current turn may use (what its request has left), in ns; `u64::MAX`: no limit.
  turn_budget_ns: AtomicU64,
  /// When the current turn passes the wall-clock limit of an event whose deadline the
  /// scheduler has not been given (see `ops::IsolateState::arm_deadlines`), as [`since_base`] + 1;
  /// 0: none.
  turn_wall_deadline: AtomicU64,
  /// Whether the watchdog has a check scheduled (so the isolate asks for one only when idle).
  pub watchdog_armed: AtomicBool,
  stop: AtomicU8,
  /// How often the current isolate reached its heap limit (see `near_heap_limit`).
  heap_limit_hits: AtomicU32,
  /// The worker's heap limit (`memoryMb`), checked after each full GC.
  heap_soft_limit: AtomicU64,
  /// A full GC was asked for because a young-generation GC found the heap over the limit.
  full_gc_asked: AtomicBool,
  /// Set when terminated JS did not stop within the grace period.
  pub failed: AtomicBool,
  /// A debugger has attached (`inspector.rs`): pauses are wall time, so wall-clock limits no
  /// longer stop the worker's JS (CPU limits still do: a paused thread uses no CPU).
  pub debugging: AtomicBool,
  /// Replies of accepted events, answerable even if the isolate thread never returns.
  pub inflight: Arc<Inflight>,
  /// The host's latest fetch was sent while others were on their way (`handoff.rs`): the
  /// isolate thread then sleeps as soon as it is idle rather than polling its inbox.
  pub concurrent_callers: AtomicBool,
  /// Wakes the isolate thread while it blocks outside JS (waiting for a module the host loads,
  /// see `module_loader.rs`), so that a stop is not left waiting behind it.
  waker: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

/// The process's reference point for instants kept in atomics.
fn base() -> Instant {
  static BASE: OnceLock<Instant> = OnceLock::new();
  *BASE.get_or_init(Instant::now)
}

/// `at` in nanoseconds after [`base`] (0 for instants before it).
fn since_base(at: Instant) -> u64 {
  at.saturating_duration_since(base()).as_nanos() as u64
}

/// One thread's CPU time (user + system), readable from any thread of the process: the
/// watchdog reads the isolate thread's clock from its own thread.
struct ThreadCpuClock {
  #[cfg(all(unix, not(target_vendor = "apple")))]
  clock: libc::clockid_t,
  /// The thread's Mach port name (valid while the thread lives; a read after it ended fails).
  #[cfg(target_vendor = "apple")]
  port: libc::mach_port_t,
  /// A real handle (not the pseudo-handle of `GetCurrentThread`), closed on drop.
  #[cfg(windows)]
  handle: windows_sys::Win32::Foundation::HANDLE,
}

// SAFETY: the Windows handle is a kernel object usable from any thread; the others are plain ids.
unsafe impl Send for ThreadCpuClock {}
unsafe impl Sync for ThreadCpuClock {}

impl ThreadCpuClock {
  /// The calling thread's clock.
  #[cfg(all(unix, not(target_vendor = "apple")))]
  fn current() -> Option<Self> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_self() is this thread; `clock` is a valid out-pointer.
    (unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } == 0).then_some(Self { clock })
  }

  #[cfg(all(unix, not(target_vendor = "apple")))]
  fn read_ns(&self) -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; an invalid clock id only makes the call fail.
    let rc = unsafe { libc::clock_gettime(self.clock, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
  }

  /// macOS has no per-thread POSIX CPU clock of another thread: Mach's thread_info does it.
  #[cfg(target_vendor = "apple")]
  fn current() -> Option<Self> {
    // SAFETY: pthread_self() is this thread; the port name is not a new reference.
    let port = unsafe { libc::pthread_mach_thread_np(libc::pthread_self()) };
    (port != 0).then_some(Self { port })
  }

  #[cfg(target_vendor = "apple")]
  #[allow(deprecated)] // libc's Mach items point at the mach2 crate; these few are stable ABI.
  fn read_ns(&self) -> Option<u64> {
    // SAFETY: thread_basic_info is plain data; all-zero is a valid value.
    let mut info: libc::thread_basic_info = unsafe { std::mem::zeroed() };
    let mut count = libc::THREAD_BASIC_INFO_COUNT;
    // SAFETY: `info` has room for THREAD_BASIC_INFO_COUNT integers; a dead port only fails.
    let rc = unsafe { libc::thread_info(self.port, libc::THREAD_BASIC_INFO as _, &mut info as *mut _ as libc::thread_info_t, &mut count) };
    let us = |t: libc::time_value_t| t.seconds as u64 * 1_000_000 + t.microseconds as u64;
    (rc == 0).then(|| (us(info.user_time) + us(info.system_time)) * 1_000)
  }

  #[cfg(windows)]
  fn current() -> Option<Self> {
    use windows_sys::Win32::System::Threading::{GetCurrentThreadId, OpenThread, THREAD_QUERY_LIMITED_INFORMATION};
    // SAFETY: opens this thread by its id for reading its times; null on failure.
    let handle = unsafe { OpenThread(THREAD_QUERY_LIMITED_INFORMATION, 0, GetCurrentThreadId()) };
    (!handle.is_null()).then_some(Self { handle })
  }

  #[cfg(windows)]
  fn read_ns(&self) -> Option<u64> {
    use windows_sys::Win32::Foundation::FILETIME;
    let zero = || FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
    let (mut created, mut exited, mut kernel, mut user) = (zero(), zero(), zero(), zero());
    // SAFETY: a handle this value owns and four valid out-pointers.
    let ok = unsafe { windows_sys::Win32::System::Threading::GetThreadTimes(self.handle, &mut created, &mut exited, &mut kernel, &mut user) };
    // FILETIME counts 100 ns units.
    let ticks = |t: FILETIME| (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    (ok != 0).then(|| (ticks(kernel) + ticks(user)) * 100)
  }
}

#[cfg(windows)]
impl Drop for ThreadCpuClock {
  fn drop(&mut self) {
    // SAFETY: the handle was opened by `current` and is closed once.
    unsafe { windows_sys::Win32::Foundation::CloseHandle(self.handle) };
  }
}

impl Monitor {
  /// Called on the isolate thread once, before any JS runs.
  pub fn attach_isolate_thread(&self) {
    if let Some(clock) = ThreadCpuClock::current() {
      let _ = self.cpu_clock.set(clock);
    }
  }

  pub fn set_handle(&self, handle: Option<v8::IsolateHandle>) {
    *self.handle.lock().unwrap() = handle;
  }

  /// A new isolate takes over: forget the old one's heap-limit hits, and any CPU, wall or
  /// memory stop recorded after its pass ended (V8 may call the near-heap-limit callback again
  /// while the terminated isolate unwinds or is torn down; that must not stop the next one).
  /// A dispose stays pending.
  pub fn begin_isolate(&self) {
    self.heap_limit_hits.store(0, Ordering::SeqCst);
    self.full_gc_asked.store(false, Ordering::Release);
    for stale in [StopReason::Cpu, StopReason::Wall, StopReason::Memory] {
      let _ = self.stop.compare_exchange(stale as u8, 0, Ordering::AcqRel, Ordering::Acquire);
    }
  }

  pub fn set_heap_soft_limit(&self, bytes: usize) {
    self.heap_soft_limit.store(bytes as u64, Ordering::Relaxed);
  }

  pub fn heap_soft_limit(&self) -> usize {
    match self.heap_soft_limit.load(Ordering::Relaxed) {
      0 => usize::MAX,
      n => n as usize,
    }
  }

  /// Records that a full GC is being asked for; false if one already is (until it has run).
  pub fn ask_full_gc(&self) -> bool {
    !self.full_gc_asked.swap(true, Ordering::AcqRel)
  }

  /// A full GC ran: a later young-generation GC may ask for another.
  pub fn full_gc_done(&self) {
    self.full_gc_asked.store(false, Ordering::Release);
  }

  /// Counts a heap-limit hit of the current isolate; returns how many there have been.
  pub fn note_heap_limit_hit(&self) -> u32 {
    self.heap_limit_hits.fetch_add(1, Ordering::SeqCst) + 1
  }

  /// A JS turn that may use `budget` of CPU, and must end by `wall_deadline`, starts (isolate
  /// thread). Returns whether the watchdog needs arming.
  pub fn begin_turn(&self, budget: Option<Duration>, wall_deadline: Option<Instant>) -> bool {
    let now = self.cpu_clock.get().and_then(ThreadCpuClock::read_ns).unwrap_or(0);
    self.turn_cpu_start_ns.store(now, Ordering::Relaxed);
    self.turn_budget_ns.store(budget.map_or(u64::MAX, |b| b.as_nanos() as u64), Ordering::Relaxed);
    self.turn_wall_deadline.store(wall_deadline.map_or(0, |at| since_base(at) + 1), Ordering::Relaxed);
    self.turn.fetch_add(1, Ordering::SeqCst);
    self.running.store(true, Ordering::SeqCst);
    (budget.is_some() || wall_deadline.is_some()) && !self.watchdog_armed.swap(true, Ordering::SeqCst)
  }

  /// The wall-clock deadline of the turn running now, if it has one.
  pub fn turn_wall_deadline(&self) -> Option<Instant> {
    match self.turn_wall_deadline.load(Ordering::Relaxed) {
      0 => None,
      n => Some(base() + Duration::from_nanos(n - 1)),
    }
  }

  /// The turn ended (isolate thread); returns the CPU time it used.
  pub fn end_turn(&self) -> Duration {
    self.running.store(false, Ordering::SeqCst);
    let now = self.cpu_clock.get().and_then(ThreadCpuClock::read_ns).unwrap_or(0);
    Duration::from_nanos(now.saturating_sub(self.turn_cpu_start_ns.load(Ordering::Relaxed)))
  }

  /// The current turn's number, the CPU time it has used and may use, if JS is running.
  pub fn current_turn(&self) -> Option<(u64, Duration, Duration)> {
    if !self.running.load(Ordering::SeqCst) {
      return None;
    }
    let turn = self.turn.load(Ordering::SeqCst);
    let now = self.cpu_clock.get().and_then(ThreadCpuClock::read_ns)?;
    let used = now.saturating_sub(self.turn_cpu_start_ns.load(Ordering::Relaxed));
    let budget = self.turn_budget_ns.load(Ordering::Relaxed);
    Some((turn, Duration::from_nanos(used), Duration::from_nanos(budget)))
  }

  /// Records that a limit was exceeded when no JS is running (nothing to terminate).
  pub fn mark_stop(&self, reason: StopReason) {
    let _ = self.stop.compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
  }

  /// Stops the running JS for `reason` (the first reason wins until it is taken).
  pub fn terminate(&self, reason: StopReason) {
    let _ = self.stop.compare_exchange(0, reason as u8, Ordering::AcqRel, Ordering::Acquire);
    if let Some(handle) = self.handle.lock().unwrap().as_ref() {
      handle.terminate_execution();
    }
    if let Some(wake) = self.waker.lock().unwrap().take() {
      wake();
    }
  }

  /// Sets (or with `None` clears) what [`Monitor::terminate`] calls to wake the isolate thread
  /// from a blocking wait.
  pub fn set_waker(&self, waker: Option<Box<dyn FnOnce() + Send>>) {
    *self.waker.lock().unwrap() = waker;
  }

  /// Terminated JS did not stop within the grace period: the isolate thread may never come
  /// back, so every event it holds is answered now, and later ones are refused.
  pub fn mark_failed(&self) {
    self.failed.store(true, Ordering::Release);
    self.inflight.fail_all(|| {
      WorkerError::runtime(
        "ERR_WORKER_FAILED",
        "The worker failed: its JavaScript did not stop after being terminated for exceeding a limit. Dispose it and create a new one.",
      )
    });
  }

  /// Whether JS was stopped and the loop has not yet taken the reason.
  pub fn stop_pending(&self) -> bool {
    self.stop.load(Ordering::Acquire) != 0
  }

  /// The reason JS was stopped, if it was; resets it.
  pub fn take_stop(&self) -> Option<StopReason> {
    StopReason::from_u8(self.stop.swap(0, Ordering::AcqRel))
  }
}
