//! Cancelling long native crypto work (RSA key generation, scrypt) when the worker's limits stop its JS.
//!
//! Crypto runs synchronously on the isolate thread, where V8's `TerminateExecution` cannot reach
//! it: a CPU or wall limit, or `dispose()`, would wait until the Rust code returned (an
//! RSA-8192 key takes tens of seconds). The op installs a check for the duration of the call
//! ([`with_cancel`]); [`CancellableRng`], the random source of the long operations, consults it
//! on every draw and unwinds out of the operation when it says stop (scrypt's loop calls
//! [`check`] itself). The unwinding is caught in
//! `with_cancel` and becomes an error (JS never sees it: its execution is being terminated).

use super::{Error, Result};
use rand_core::{CryptoRng, OsRng, RngCore};
use std::cell::RefCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

thread_local! {
  static CHECK: RefCell<Option<Box<dyn Fn() -> bool>>> = const { RefCell::new(None) };
}

/// The payload of the unwinding that cancels an operation (not a panic: no hook runs).
struct Cancelled;

/// Runs `work` with `should_stop` as the cancellation check of this thread's crypto.
pub fn with_cancel<T>(should_stop: impl Fn() -> bool + 'static, work: impl FnOnce() -> Result<T>) -> Result<T> {
  let previous = CHECK.with(|c| c.borrow_mut().replace(Box::new(should_stop)));
  let outcome = catch_unwind(AssertUnwindSafe(work));
  CHECK.with(|c| *c.borrow_mut() = previous);
  match outcome {
    Ok(result) => result,
    Err(payload) if payload.is::<Cancelled>() => Err(Error::Operation("The operation was cancelled: the worker's JavaScript was stopped.".into())),
    Err(payload) => resume_unwind(payload),
  }
}

/// Unwinds out of the running operation if the installed check says stop.
pub(super) fn check() {
  let stop = CHECK.with(|c| c.borrow().as_ref().is_some_and(|f| f()));
  if stop {
    resume_unwind(Box::new(Cancelled));
  }
}

/// The OS's random source, checking for cancellation before every draw.
pub struct CancellableRng;

impl RngCore for CancellableRng {
  fn next_u32(&mut self) -> u32 {
    check();
    OsRng.next_u32()
  }
  fn next_u64(&mut self) -> u64 {
    check();
    OsRng.next_u64()
  }
  fn fill_bytes(&mut self, dest: &mut [u8]) {
    check();
    OsRng.fill_bytes(dest)
  }
  fn try_fill_bytes(&mut self, dest: &mut [u8]) -> std::result::Result<(), rand_core::Error> {
    check();
    OsRng.try_fill_bytes(dest)
  }
}

impl CryptoRng for CancellableRng {}

#[cfg(test)]
mod tests {
  use super::*;
  use std::cell::Cell;
  use std::rc::Rc;

  #[test]
  fn a_check_that_says_stop_cancels_rsa_generation_and_is_removed_afterwards() {
    let draws = Rc::new(Cell::new(0u32));
    let seen = draws.clone();
    let started = std::time::Instant::now();
    let outcome = with_cancel(
      move || {
        seen.set(seen.get() + 1);
        seen.get() > 3
      },
      || {
        rsa::RsaPrivateKey::new(&mut CancellableRng, 8192).map_err(|e| Error::Operation(e.to_string()))?;
        Ok(())
      },
    );
    assert!(matches!(outcome, Err(Error::Operation(m)) if m.contains("cancelled")));
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "stopped early, not after a full 8192-bit generation");
    assert_eq!(draws.get(), 4);
    // Outside `with_cancel` nothing is checked.
    let mut bytes = [0u8; 4];
    CancellableRng.fill_bytes(&mut bytes);
  }
}
