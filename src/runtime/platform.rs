//! Process-wide V8 set-up: ICU data, flags and the platform, done exactly once.
//!
//! V8 must be initialised once per process and before any isolate thread exists. We use the
//! *unprotected* default platform: workerbox shares the process with Node's own V8, and V8's
//! memory-protection-key support assumes it owns every thread that will ever touch JIT memory,
//! which is not true inside Node. We never call `V8::EnableWebAssemblyTrapHandler`, so this V8
//! installs no signal handlers of its own (Wasm bounds checks are explicit instead); Node's V8
//! keeps the process's SIGSEGV handling to itself.
//!
//! V8 tasks posted to an isolate's foreground runner are run at the end of every pump turn
//! (see `isolate.rs`); tasks posted from V8's own background threads while the isolate thread
//! sleeps would wait for the next message, which is why `WebAssembly.compile`/`instantiate` compile
//! on the isolate thread (`src/js/30_wasm.js`).

use std::sync::OnceLock;

static PLATFORM: OnceLock<v8::SharedRef<v8::Platform>> = OnceLock::new();

/// The V8 flags workerbox sets (a saved startup snapshot is only valid under the same ones).
///
/// `--no-turboshaft-loop-unrolling`: in V8 15.2, a loop that Turboshaft unrolls can lose its
/// interrupt check, so `TerminateExecution` never takes effect in it. `for (;;) { const a = new
/// Array(1000); a.fill(0) }` (once optimized) ignored every limit, and `for (;;) k.push(new
/// Array(1000))` grew the heap past 15 GB until V8 aborted the process. Without unrolling, both
/// stop at once (Node's V8 13/14 stop them too); loop-heavy code measured no slower.
///
/// `--js-source-phase-imports`: `import source m from "x.wasm"` and `import.source()`, as workerd
/// has them (src/runtime/modules/source.rs).
pub(crate) const V8_FLAGS: &str = "--no-turboshaft-loop-unrolling --js-source-phase-imports";

/// Initialises V8 for this process if that has not happened yet and returns its platform.
/// Cheap after the first call.
pub fn init_v8() -> &'static v8::SharedRef<v8::Platform> {
  PLATFORM.get_or_init(|| {
    // The ICU data must be in place before V8 initialises, or Intl has no locale data.
    v8::icu::set_common_data_78(deno_core_icudata::ICU_DATA).expect("ICU data rejected by V8");
    if !V8_FLAGS.is_empty() {
      v8::V8::set_flags_from_string(V8_FLAGS);
    }
    let platform = v8::new_unprotected_default_platform(0, false).make_shared();
    v8::V8::initialize_platform(platform.clone());
    v8::V8::initialize();
    platform
  })
}
