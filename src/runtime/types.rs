//! Plain data that crosses between the host and a worker: limits, modules, requests, responses,
//! errors (the options that gather them are `options.rs`'s). Nothing here knows about V8 handles,
//! napi or any other runtime module, so any host (napi, `cargo test`) and every module can use it.

use bytes::Bytes;
use std::fmt;
use std::sync::Arc;

/// How the worker's script is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptFormat {
  /// `export default { fetch(request, env, ctx) { … } }`
  Module,
  /// `addEventListener("fetch", event => event.respondWith(…))`
  ServiceWorker,
}

impl ScriptFormat {
  pub fn parse(name: &str) -> Option<Self> {
    match name {
      "module" | "modules" | "esm" => Some(Self::Module),
      "service-worker" => Some(Self::ServiceWorker),
      _ => None,
    }
  }
}

/// Log levels a worker's `console` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLevel {
  Debug,
  Log,
  Info,
  Warn,
  Error,
}

impl LogLevel {
  pub fn parse(name: &str) -> Self {
    match name {
      "debug" => Self::Debug,
      "info" => Self::Info,
      "warn" => Self::Warn,
      "error" => Self::Error,
      _ => Self::Log,
    }
  }

  pub fn as_str(self) -> &'static str {
    match self {
      Self::Debug => "debug",
      Self::Log => "log",
      Self::Info => "info",
      Self::Warn => "warn",
      Self::Error => "error",
    }
  }
}

/// Where a worker's log lines go. Called on the worker's isolate thread: must not block.
pub type LogSink = Arc<dyn Fn(LogLevel, String) + Send + Sync>;

/// Resource limits for one worker. Every field has a default; see `Limits::default`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
  /// Requests (fetch and scheduled events) running at once in the isolate; more wait in a queue.
  pub max_in_flight: u32,
  /// Requests allowed to wait for a free slot; beyond this `dispatch` fails with `ERR_OVERLOADED`.
  pub max_queued: u32,
  /// Wall-clock bound on one request, from the moment it starts running. `0` means none.
  pub wall_ms: u64,
  /// CPU time (the isolate thread's own clock) one request may use, summed over the stretches
  /// of JS run for it (its handler, its timers' callbacks, its binding results). `0`: none.
  pub cpu_ms: u64,
  /// V8 heap limit, and separately the cap on ArrayBuffer memory, in MB.
  pub memory_mb: u32,
  /// How long one binding call may wait for the host's handler. `0` means forever.
  pub binding_ms: u64,
  /// How long an event's `waitUntil` work may run after its response before it is given up
  /// on (production: 30 s). `0` means no bound.
  pub wait_until_ms: u64,
}

impl Default for Limits {
  fn default() -> Self {
    Self { max_in_flight: 1_000, max_queued: 10_000, wall_ms: 30_000, cpu_ms: 30_000, memory_mb: 128, binding_ms: 30_000, wait_until_ms: 30_000 }
  }
}

/// What an extra module is, which decides what importing it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleKind {
  /// JavaScript ES module.
  EsModule,
  /// WebAssembly: the default export is a `WebAssembly.Module`.
  Wasm,
  /// The default export is the content as a string.
  Text,
  /// The default export is the content as an ArrayBuffer.
  Data,
  /// The default export is the parsed JSON.
  Json,
  /// CommonJS (`require`, `module`, `exports`): the default export is `module.exports`, and its
  /// own properties are named exports too (or the names given, `ExtraModule::named_exports`).
  CommonJs,
}

/// A module the worker's script can import, by name.
#[derive(Clone, Debug)]
pub struct ExtraModule {
  pub name: String,
  pub kind: ModuleKind,
  pub content: Bytes,
  /// A CommonJS module's named exports as given (workerd's `namedExports`): exactly these, rather
  /// than the own properties of its `module.exports` (src/runtime/modules/exports.rs).
  pub named_exports: Option<Vec<String>>,
}

/// An outbound HTTP request from the worker's `fetch()`.
#[derive(Clone, Debug)]
pub struct FetchRequest {
  pub method: String,
  pub url: String,
  pub headers: Vec<(String, String)>,
  pub body: Option<Bytes>,
  /// The body streams in through `SchedulerMessage::FetchWrite`s (and `body` is `None`).
  pub body_stream: bool,
  /// `follow`, `manual` or `error`.
  pub redirect: String,
  /// Refuse loopback, private, link-local and other non-public addresses (after DNS).
  pub public_only: bool,
  /// A WebSocket handshake (src/runtime/websocket_client.rs); `body_stream` then carries frames.
  pub websocket: bool,
}

/// A binding operation the worker asks the host to perform, e.g. `env.CACHE.get("k")`.
#[derive(Clone, Debug)]
pub struct HostCall {
  /// The binding's name in `env`.
  pub binding: String,
  /// The operation, e.g. `get`, `put`, `fetch`.
  pub method: String,
  /// The operation's arguments as JSON.
  pub args: String,
  /// A binary payload (a value to store, a request body), if any.
  pub bytes: Option<Bytes>,
}

/// The host's answer to a [`HostCall`]: a JSON result and an optional binary payload.
#[derive(Clone, Debug, Default)]
pub struct HostResult {
  pub json: String,
  pub bytes: Option<Bytes>,
}

/// Called once with the host's answer; callable from any thread.
pub type HostReply = Box<dyn FnOnce(Result<HostResult, JsErrorInfo>) + Send>;

/// Performs binding operations for a worker (in Node: calls the user's handlers).
pub trait Host: Send + Sync {
  /// Starts `call`; `reply` must be called exactly once, from any thread, at any later time.
  fn call(&self, call: HostCall, reply: HostReply);
}

/// How requests relate to the script's global scope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isolation {
  /// Production semantics: one context; concurrent requests share module globals.
  Shared,
  /// Every request (and cron event) runs in a fresh context with the script evaluated anew, so
  /// no state leaks between requests. The isolate stays warm and is replaced after a request
  /// fails or after `max_reuse` contexts.
  PerRequest { max_reuse: u32 },
}

impl Isolation {
  /// How many request contexts one isolate serves in per-request mode before it is replaced.
  pub const DEFAULT_MAX_REUSE: u32 = 1000;
}

/// The compatibility settings of a worker created without any (from `cargo test`): what
/// `lib/compat.js`'s `resolveCompat` gives with no date and no flags (see [`resolve_compat_json`]):
/// every feature on by the table's newest date, then the implied-by rules once, in table order.
/// `index.js` always passes its own.
pub fn default_compat_json() -> &'static str {
  static JSON: std::sync::OnceLock<String> = std::sync::OnceLock::new();
  JSON.get_or_init(|| resolve_compat_json(None, &[]).expect("the table's newest date and no flags"))
}

/// `lib/compat.js`'s `resolveCompat` for a date (the table's newest when `None`) and flags given
/// inside a worker (`workerd:rtti`'s exportTypes), from the same table (`lib/compat-flags.json`),
/// experimental flags accepted: `{ date, flags, enabled, off }` as JSON, or what is wrong with
/// the date or a flag. A feature is on from its date or by its enable flag, off by its disable
/// flag; the implied-by rules then apply once, in table order; an experimental feature is there
/// only when its flag is given.
pub fn resolve_compat_json(date: Option<&str>, flags: &[String]) -> Result<String, String> {
  // Parsed once per process (each exportTypes call resolves again).
  static TABLE: std::sync::OnceLock<serde_json::Value> = std::sync::OnceLock::new();
  let table = TABLE.get_or_init(|| serde_json::from_str(include_str!("../../lib/compat-flags.json")).expect("lib/compat-flags.json is JSON"));
  let date = match date {
    None => table["latestDate"].as_str().expect("latestDate").to_owned(),
    Some(d) if d.len() == 10 && d.bytes().enumerate().all(|(i, b)| if i == 4 || i == 7 { b == b'-' } else { b.is_ascii_digit() }) => d.to_owned(),
    Some(d) => return Err(format!("compatibility date {d:?} is not a date in the form YYYY-MM-DD")),
  };
  let features = table["flags"].as_array().expect("flags");
  let mut given: Vec<&str> = Vec::new();
  let mut chosen: Vec<Option<bool>> = vec![None; features.len()];
  for flag in flags {
    if given.contains(&flag.as_str()) {
      continue;
    }
    given.push(flag);
    let found = features.iter().enumerate().find_map(|(i, f)| if f["enable"] == flag.as_str() { Some((i, true)) } else if f["disable"] == flag.as_str() { Some((i, false)) } else { None });
    let Some((i, enables)) = found else { return Err(format!("unknown compatibility flag {flag:?}")) };
    if chosen[i].is_some_and(|c| c != enables) {
      return Err(format!("compatibility flags {} and {} contradict each other", features[i]["enable"], features[i]["disable"]));
    }
    chosen[i] = Some(enables);
  }
  // (index in the table, enable flag, on?) for each feature there is.
  let mut on: Vec<(usize, &str, bool)> = Vec::new();
  for (i, feature) in features.iter().enumerate() {
    let Some(name) = feature["enable"].as_str() else { continue };
    if feature["experimental"].as_bool().unwrap_or(false) && chosen[i].is_none() {
      continue;
    }
    let by_date = feature["date"].as_str().is_some_and(|d| date.as_str() >= d);
    on.push((i, name, chosen[i].unwrap_or(by_date)));
  }
  for k in 0..on.len() {
    let (i, _, _) = on[k];
    let rule = &features[i]["impliedBy"];
    if rule.is_null() || chosen[i] == Some(false) || rule["date"].as_str().is_some_and(|d| date.as_str() < d) {
      continue;
    }
    let implied = rule["flags"].as_array().into_iter().flatten().filter_map(|f| f.as_str()).any(|flag| on.iter().any(|&(_, name, value)| value && name == flag));
    if implied {
      on[k].2 = true;
    }
  }
  let mut enabled: Vec<&str> = on.iter().filter(|f| f.2).map(|f| f.1).collect();
  // Asking for nodejs_compat_v2 by name implies nodejs_compat; v2 on by date alone does not.
  if given.contains(&"nodejs_compat_v2") && !enabled.contains(&"nodejs_compat") {
    enabled.push("nodejs_compat");
  }
  let off: Vec<&str> = on.iter().filter(|f| !f.2 && !enabled.contains(&f.1)).map(|f| f.1).collect();
  Ok(serde_json::json!({ "date": date, "flags": given, "enabled": enabled, "off": off }).to_string())
}

/// A request or response body crossing between the host and a worker.
#[derive(Clone, Debug, Default)]
pub enum Body {
  #[default]
  Empty,
  /// The whole body, known up front.
  Bytes(Bytes),
  /// A body streamed chunk by chunk through the host's `#body` calls (see [`BODY_BINDING`]).
  /// On a request, the host made the id and the worker pulls chunks (`read`, `cancel`); on a
  /// response, the worker made it and pushes them (`write`, `close`, `error`), each `write`
  /// answered only when the host wants more, which is the backpressure.
  Stream(u32),
}

/// The reserved binding name of body-stream calls between a worker and its host.
pub const BODY_BINDING: &str = "#body";

/// The reserved binding name of the Cache API's calls (`caches.default`, `caches.open()`).
pub const CACHE_BINDING: &str = "#cache";

impl Body {
  /// The bytes of a whole body; `None` for an empty or streamed one.
  pub fn into_bytes(self) -> Option<Bytes> {
    match self {
      Body::Bytes(b) => Some(b),
      Body::Empty | Body::Stream(_) => None,
    }
  }

  /// The id of a streamed body.
  pub fn stream_id(&self) -> Option<u32> {
    match self {
      Body::Stream(id) => Some(*id),
      _ => None,
    }
  }
}

/// An HTTP request handed to a worker.
#[derive(Clone, Debug)]
pub struct RequestData {
  pub method: String,
  pub url: String,
  /// Header pairs in order, duplicates kept.
  pub headers: Vec<(String, String)>,
  pub body: Body,
  /// `request.cf` as JSON, when the host supplies it (otherwise the worker's default).
  pub cf: Option<String>,
}

impl RequestData {
  pub fn get(url: impl Into<String>) -> Self {
    Self { method: "GET".into(), url: url.into(), headers: Vec::new(), body: Body::Empty, cf: None }
  }
}

/// A `scheduled` (cron) event for the worker's `scheduled()` handler.
#[derive(Clone, Debug)]
pub struct ScheduledEvent {
  pub cron: String,
  /// Milliseconds since the Unix epoch.
  pub scheduled_time: f64,
}

/// How a scheduled event ended.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledOutcome {
  /// `"ok"` or `"exception"`.
  pub outcome: String,
  /// Whether the handler called `controller.noRetry()`.
  pub no_retry: bool,
  /// The handler's error when `outcome` is `"exception"`.
  pub error: Option<JsErrorInfo>,
}

/// The response a worker produced.
#[derive(Clone, Debug)]
pub struct ResponseData {
  pub status: u16,
  pub status_text: String,
  /// Header pairs in the worker's header-list order, duplicates (e.g. `set-cookie`) kept.
  pub headers: Vec<(String, String)>,
  pub body: Body,
  /// CPU time the event had used on the isolate thread when it responded, in milliseconds (a
  /// tail consumer's `cpuTime`).
  pub cpu_ms: f64,
}

/// A JavaScript error as the worker saw it, plus where it happened when V8 knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsErrorInfo {
  pub name: String,
  pub message: String,
  pub stack: String,
  pub file: Option<String>,
  pub line: Option<u32>,
  pub column: Option<u32>,
}

impl JsErrorInfo {
  pub fn new(name: &str, message: impl Into<String>) -> Self {
    let message = message.into();
    Self {
      stack: format!("{name}: {message}"),
      name: name.into(),
      message,
      file: None,
      line: None,
      column: None,
    }
  }
}

/// Why a worker could not start or a dispatch failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkerError {
  /// The script threw or failed to compile; keeps the JS error's name, message and stack.
  Js(JsErrorInfo),
  /// The worker was disposed (or failed) before it could answer.
  Disposed(String),
  /// A runtime-level failure with a stable code, e.g. `ERR_NO_HANDLER`.
  Runtime { code: &'static str, message: String },
}

impl WorkerError {
  pub fn runtime(code: &'static str, message: impl Into<String>) -> Self {
    Self::Runtime { code, message: message.into() }
  }
}

impl fmt::Display for WorkerError {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match self {
      WorkerError::Js(e) => write!(f, "{}: {}", e.name, e.message),
      WorkerError::Disposed(m) => write!(f, "{m}"),
      WorkerError::Runtime { code, message } => write!(f, "{message} ({code})"),
    }
  }
}

impl std::error::Error for WorkerError {}
