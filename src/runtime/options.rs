//! [`WorkerOptions`]: everything needed to start a worker, gathered from `types.rs`'s plain data
//! plus the handles a worker is started with (its embedded [`Stores`], its inspector channel).
//! It sits above `types.rs`, `store/` and `inspector.rs`, so those never refer back to it.

use super::inspector::InspectorChannel;
use super::store::Stores;
use super::types::{default_compat_json, ExtraModule, Host, Isolation, Limits, LogSink, ScriptFormat};
use std::sync::Arc;

/// Everything needed to start a worker.
#[derive(Clone)]
pub struct WorkerOptions {
  pub script: String,
  /// Name used in stack traces and error locations.
  pub filename: String,
  /// `None` detects the format from the script.
  pub format: Option<ScriptFormat>,
  /// Plain-value `env` bindings as one JSON object.
  pub env_json: String,
  /// The other bindings, as a JSON object of `NAME: kind` (`"kv"`, `"service"`, …); the
  /// worker's JS builds the binding objects, whose operations become [`HostCall`](super::HostCall)s.
  pub bindings_json: String,
  /// The compatibility date and flags, and the features they turn on, as JSON
  /// (`{ date, flags, enabled }`, worked out by `lib/compat.js`).
  pub compat_json: String,
  /// Allow `eval` and `new Function` inside the worker.
  pub allow_eval: bool,
  pub limits: Limits,
  pub log: LogSink,
  /// Answers binding calls; without one, every binding call fails.
  pub host: Option<Arc<dyn Host>>,
  /// Embedded stores that answer some bindings' calls in Rust instead of the host, by binding
  /// name ([`CACHE_BINDING`](super::CACHE_BINDING) for the Cache API's store).
  pub stores: Stores,
  /// `fetch()` may reach only public addresses (checked after DNS resolution).
  pub public_network_only: bool,
  /// Modules the script may import besides itself.
  pub modules: Vec<ExtraModule>,
  /// Reuse V8's compiled code for a script loaded before (kept in memory for the process).
  pub code_cache: bool,
  /// Also keep the code cache in this directory, for later processes.
  pub code_cache_dir: Option<std::path::PathBuf>,
  /// Whether requests share one global scope or each gets a fresh one.
  pub isolation: Isolation,
  /// Imports that `modules` cannot answer are asked of the host (binding `#module`, see
  /// `module_loader.rs`), which resolves and loads them on demand.
  pub module_loader: bool,
  /// V8's inspector for this worker, reached by the host through this channel.
  pub inspector: Option<Arc<InspectorChannel>>,
}

impl WorkerOptions {
  /// Options with defaults for everything but the script; logs go to stderr.
  pub fn new(script: impl Into<String>) -> Self {
    Self {
      script: script.into(),
      filename: "worker.js".into(),
      format: None,
      env_json: "{}".into(),
      compat_json: default_compat_json().into(),
      bindings_json: "{}".into(),
      allow_eval: false,
      limits: Limits::default(),
      host: None,
      stores: Default::default(),
      public_network_only: false,
      modules: Vec::new(),
      code_cache: true,
      code_cache_dir: None,
      isolation: Isolation::Shared,
      module_loader: false,
      inspector: None,
      log: Arc::new(|level, msg| eprintln!("[worker] {}: {}", level.as_str(), msg)),
    }
  }
}
