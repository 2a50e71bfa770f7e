//! The startup snapshot: the JS bootstrap (every Web API class, the streams implementation)
//! run once per process in a snapshot-creating isolate and serialized, so that each new
//! isolate deserializes a ready context instead of re-running the bootstrap.
//!
//! It is made lazily, on the first worker's isolate thread, rather than at build time: the
//! snapshot must come from exactly this V8 with exactly these flags, and making it at run time
//! guarantees that without a build step that runs V8. It costs one bootstrap (tens of ms) once
//! per process. Set `WORKERBOX_NO_SNAPSHOT=1` to boot every isolate from source instead.

use super::isolate::install_runtime;
use super::ops;
use std::sync::OnceLock;

/// Where the `internals` object sits in the snapshot's context data.
pub(crate) const INTERNALS_INDEX: usize = 0;

/// The snapshot blob, or `None` when disabled or when making it failed (then isolates boot
/// from source, which is slower but equivalent).
pub(crate) fn startup_snapshot() -> Option<&'static [u8]> {
  static SNAPSHOT: OnceLock<Option<&'static [u8]>> = OnceLock::new();
  *SNAPSHOT.get_or_init(|| {
    if std::env::var_os("WORKERBOX_NO_SNAPSHOT").is_some_and(|v| v != "0") {
      return None;
    }
    match create() {
      Ok(blob) => Some(Box::leak(blob)),
      Err(message) => {
        eprintln!("workerbox: could not make the startup snapshot ({message}); isolates will boot from source");
        None
      }
    }
  })
}

fn create() -> Result<Box<[u8]>, String> {
  let mut creator = v8::Isolate::snapshot_creator(Some(ops::external_references()), None);
  {
    let scope = &mut v8::HandleScope::new(&mut creator);
    let context = v8::Context::new(scope, Default::default());
    let scope = &mut v8::ContextScope::new(scope, context);
    let internals = install_runtime(scope).map_err(|e| e.to_string())?;
    let index = scope.add_context_data(context, internals);
    if index != INTERNALS_INDEX {
      return Err(format!("internals landed at context data index {index}"));
    }
    scope.set_default_context(context);
  }
  let blob = creator.create_blob(v8::FunctionCodeHandling::Keep).ok_or("V8 could not serialize the context")?;
  Ok(blob.to_vec().into_boxed_slice())
}
