//! The process-wide pieces of the napi layer: the code cache's counters, the warm pool's
//! settings, statistics and teardown (one cleanup hook per Node environment), and the malloc
//! setting of a process that makes and disposes many workers.

use crate::runtime::pool::{self, PoolConfig};
use napi::bindgen_prelude::Object;
use napi::{Env, Result};
use napi_derive::napi;
use std::cell::Cell;

/// Process-wide code cache counters.
#[napi(object)]
pub struct NativeCodeCacheStats {
  pub hits: f64,
  pub misses: f64,
  pub rejected: f64,
  pub stored: f64,
}

/// How the code cache has fared in this process so far.
#[napi]
pub fn code_cache_stats() -> NativeCodeCacheStats {
  let s = crate::runtime::code_cache_stats();
  NativeCodeCacheStats { hits: s.hits as f64, misses: s.misses as f64, rejected: s.rejected as f64, stored: s.stored as f64 }
}

/// From now on, glibc gives freed memory at the top of a thread's arena back to the OS promptly
/// (see `runtime::trim_freed_memory_eagerly`); false where that does not apply (not glibc).
#[napi]
pub fn trim_freed_memory_eagerly() -> bool {
  crate::runtime::trim_freed_memory_eagerly()
}

/// The warm pool's settings, as `index.js` validated them.
#[napi(object)]
pub struct NativePoolConfig {
  pub spares: u32,
  pub idle_ms: f64,
  pub max_total: u32,
}

/// What the warm pool holds and has done in this process.
#[napi(object)]
pub struct NativePoolStats {
  pub ready: f64,
  pub booting: f64,
  pub hits: f64,
  pub misses: f64,
  pub reclaimed: f64,
  pub evicted: f64,
  pub failed: f64,
}

/// Changes the warm pool's settings; absent fields keep their current value.
#[napi]
pub fn configure_pool(spares: Option<u32>, idle_ms: Option<f64>, max_total: Option<u32>) -> NativePoolConfig {
  let current = pool::config();
  let config = PoolConfig {
    spares: spares.unwrap_or(current.spares),
    idle_ms: idle_ms.map_or(current.idle_ms, |ms| ms as u64),
    max_total: max_total.unwrap_or(current.max_total),
  };
  pool::configure(config);
  NativePoolConfig { spares: config.spares, idle_ms: config.idle_ms as f64, max_total: config.max_total }
}

#[napi]
pub fn pool_stats() -> NativePoolStats {
  let s = pool::stats();
  NativePoolStats {
    ready: s.ready as f64,
    booting: s.booting as f64,
    hits: s.hits as f64,
    misses: s.misses as f64,
    reclaimed: s.reclaimed as f64,
    evicted: s.evicted as f64,
    failed: s.failed as f64,
  }
}

/// Disposes every spare in the pool, off Node's thread; resolves once their threads are joined.
#[napi(ts_return_type = "Promise<void>")]
pub fn clear_pool(env: &Env) -> Result<Object<'_>> {
  let (deferred, promise) = env.create_deferred()?;
  std::thread::Builder::new()
    .name("wb-pool-clear".into())
    .spawn(move || {
      pool::clear();
      deferred.resolve(|_env: Env| Ok(()));
    })
    .map_err(|e| napi::Error::from_reason(format!("could not start the pool-clearing thread: {e}")))?;
  Ok(promise)
}

thread_local! {
  /// Whether this thread's Node environment has the hook that empties the pool at teardown.
  static POOL_TEARDOWN: Cell<bool> = const { Cell::new(false) };
}

/// Makes sure no spare isolate is still running when this environment is torn down (a V8
/// isolate running during process teardown can crash it): one cleanup hook per environment.
pub(super) fn ensure_pool_teardown(env: &Env) -> Result<()> {
  if POOL_TEARDOWN.get() {
    return Ok(());
  }
  env.add_env_cleanup_hook((), |()| {
    pool::clear();
    POOL_TEARDOWN.set(false);
  })?;
  POOL_TEARDOWN.set(true);
  Ok(())
}
