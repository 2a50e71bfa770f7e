//! The napi-rs layer: converts between napi values and the runtime core's plain types, and
//! settles promises from worker threads through napi deferreds (the warm pool's and code cache's
//! functions are in `binding/warm_pool.rs`, embedded stores' `NativeStore` in `binding/store.rs`).
//! `index.js` wraps these functions in the public API; nothing here is meant to be called by
//! users directly.
//!
//! No V8 handle of the worker's isolate ever reaches Node: only strings and bytes cross.

use crate::runtime::handoff::{self, Handoff, WaitPolicy};
use crate::runtime::log_queue::{dropped_notice, Admit, LogQueue};
use crate::runtime::pool::{self, Acquired};
use crate::runtime::{
  Body, CACHE_BINDING, ExtraModule, QueueEvent, QueueOutcome, RpcEvent, RpcOutcome, Host, Isolation, ModuleKind, HostCall, HostReply, HostResult, JsErrorInfo, Limits, LogLevel, RequestData, ResponseData, ScheduledEvent, ScheduledOutcome, ScriptFormat, Store, StoreKind, Stores,
  Worker, WorkerError, WorkerOptions, default_compat_json,
};
use napi::bindgen_prelude::{Buffer, ClassInstance, Either, Either3, FnArgs, Function, Object, PromiseRaw};
use std::collections::HashMap;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{CleanupEnvHook, Env, Result};
use napi_derive::napi;
use std::sync::{Arc, Mutex, OnceLock, Weak};

mod store;
mod warm_pool;
use warm_pool::ensure_pool_teardown;
use store::NativeStore;

#[napi(object)]
pub struct NativeWorkerOptions {
  pub script: String,
  pub filename: String,
  /// "module", "service-worker", or absent to detect.
  pub format: Option<String>,
  /// The plain-value `env` bindings, as one JSON object.
  pub env_json: String,
  /// The other bindings as `{ NAME: kind }` JSON; their calls go to the host dispatcher, except
  /// those of bindings in `createWorker`'s `stores`, which their embedded store answers.
  pub bindings_json: String,
  /// `{ date, flags, enabled }` from `lib/compat.js`.
  pub compat_json: Option<String>,
  pub allow_eval: bool,
  /// `fetch()` may reach only public addresses.
  pub public_network_only: bool,
  /// Modules the script may import.
  pub modules: Option<Vec<NativeModule>>,
  /// Validated by `index.js`; absent fields take the defaults.
  pub limits: Option<NativeLimits>,
  /// Reuse compiled code of scripts loaded before (default true).
  pub code_cache: Option<bool>,
  /// Keep the code cache in this directory too.
  pub cache_dir: Option<String>,
  /// "shared" (default) or "per-request".
  pub isolation: Option<String>,
  /// Per-request mode: contexts one isolate serves before it is replaced.
  pub max_reuse: Option<u32>,
  /// Take a warm spare from the process-wide pool when one is ready, and keep one ready for
  /// next time (default true).
  pub pool: Option<bool>,
  /// Give the worker its own in-memory Cache API store, answered natively (true when there is
  /// no `cache` handler); otherwise its `#cache` calls go to the host.
  pub private_cache: Option<bool>,
  /// Imports the worker's modules cannot answer go to the host's `#module` binding.
  pub module_loader: Option<bool>,
}

/// A module the script can import; `kind` is "esm", "wasm", "text", "data" or "json".
#[napi(object)]
pub struct NativeModule {
  pub name: String,
  pub kind: String,
  pub content: Buffer,
  /// A CommonJS module's named exports, when given (`{ type: "commonjs", namedExports }`).
  pub named_exports: Option<Vec<String>>,
}

#[napi(object)]
pub struct NativeLimits {
  pub max_in_flight: Option<u32>,
  pub max_queued: Option<u32>,
  pub wall_ms: Option<f64>,
  pub cpu_ms: Option<f64>,
  pub memory_mb: Option<u32>,
  pub binding_ms: Option<f64>,
  pub wait_until_ms: Option<f64>,
}

/// What `index.js`'s binding dispatcher resolves to: a JSON result and bytes, or an error.
#[napi(object)]
pub struct NativeHostAnswer {
  pub json: Option<String>,
  pub bytes: Option<Buffer>,
  pub error_name: Option<String>,
  pub error_message: Option<String>,
}

type HostArgs = FnArgs<(String, String, String, Option<Buffer>)>;
type HostFunction = ThreadsafeFunction<HostArgs, PromiseRaw<'static, NativeHostAnswer>, HostArgs, napi::Status, false, true>;

/// Answers a worker's binding calls by calling `index.js`'s dispatcher on Node's thread.
struct NodeHost {
  dispatcher: HostFunction,
}

fn host_error(message: impl Into<String>) -> JsErrorInfo {
  JsErrorInfo::new("Error", message)
}

impl Host for NodeHost {
  fn call(&self, call: HostCall, reply: HostReply) {
    let reply = std::sync::Arc::new(Mutex::new(Some(reply)));
    let settle = {
      let reply = reply.clone();
      move |result: std::result::Result<HostResult, JsErrorInfo>| {
        if let Some(reply) = reply.lock().unwrap().take() {
          reply(result);
        }
      }
    };
    let on_failure = settle.clone();
    let args = FnArgs::from((call.binding, call.method, call.args, call.bytes.map(|b| Buffer::from(Vec::from(b)))));
    let status = self.dispatcher.call_with_return_value(args, ThreadsafeFunctionCallMode::NonBlocking, move |returned, _env| {
      let promise = match returned {
        Ok(promise) => promise,
        Err(error) => {
          settle(Err(host_error(format!("the binding dispatcher failed: {error}"))));
          return Ok(());
        }
      };
      let on_reject = settle.clone();
      promise.then(move |ctx| {
        let answer: NativeHostAnswer = ctx.value;
        settle(match answer.error_message {
          Some(message) => Err(JsErrorInfo::new(answer.error_name.as_deref().unwrap_or("Error"), message)),
          None => Ok(HostResult { json: answer.json.unwrap_or_else(|| "null".into()), bytes: answer.bytes.map(|b| bytes::Bytes::from(Vec::from(b))) }),
        });
        Ok(())
      })?;
      // The dispatcher never rejects; if it somehow did, still answer the worker.
      let _ = on_reject;
      Ok(())
    });
    if status != napi::Status::Ok {
      on_failure(Err(host_error("the host is shutting down; the binding call was not made")));
    }
  }
}

impl NativeLimits {
  fn into_limits(self) -> Limits {
    let defaults = Limits::default();
    Limits {
      max_in_flight: self.max_in_flight.unwrap_or(defaults.max_in_flight),
      max_queued: self.max_queued.unwrap_or(defaults.max_queued),
      wall_ms: self.wall_ms.map_or(defaults.wall_ms, |ms| ms as u64),
      binding_ms: self.binding_ms.map_or(defaults.binding_ms, |ms| ms as u64),
      wait_until_ms: self.wait_until_ms.map_or(defaults.wait_until_ms, |ms| ms as u64),
      cpu_ms: self.cpu_ms.map_or(defaults.cpu_ms, |ms| ms as u64),
      memory_mb: self.memory_mb.unwrap_or(defaults.memory_mb),
    }
  }
}

#[napi(object)]
pub struct NativeScheduledOutcome {
  /// "ok" or "exception".
  pub outcome: String,
  pub no_retry: bool,
  pub error: Option<NativeError>,
}

/// How a queue batch ended: `result_json` holds what the handler acked and retried.
#[napi(object)]
pub struct NativeQueueOutcome {
  /// "ok" or "exception".
  pub outcome: String,
  pub result_json: String,
  pub error: Option<NativeError>,
}

/// How an RPC call ended: the V8-serialized `result` with `result_json` (`{ stubs }`), or the
/// `error` the method threw.
#[napi(object)]
pub struct NativeRpcOutcome {
  pub result: Option<Buffer>,
  pub result_json: String,
  pub error: Option<NativeError>,
}

/// An error from the worker, for `index.js` to rebuild as a real `Error`.
#[napi(object)]
pub struct NativeError {
  pub name: String,
  pub message: String,
  pub stack: String,
  pub code: Option<String>,
  pub file: Option<String>,
  pub line: Option<u32>,
  pub column: Option<u32>,
}

#[napi(object)]
pub struct NativeResponse {
  pub status: u32,
  pub status_text: String,
  /// `[name, value, name, value, …]` in the worker's order, duplicates kept.
  pub headers: Vec<String>,
  pub body: Option<crate::binding_bytes::BodyBytes>,
  /// Set when the body streams: its chunks arrive through the dispatcher's `#body` calls.
  pub body_stream: Option<u32>,
  /// CPU time the event had used when it responded, in milliseconds.
  pub cpu_ms: f64,
}

/// The env-teardown hook that disposes a worker. Created and consumed on Node's thread only;
/// it merely rides along (untouched) inside the start-up callback, which crosses threads.
struct TeardownHook(CleanupEnvHook<Weak<Worker>>);
// SAFETY: see above; the hook is never used off Node's thread.
unsafe impl Send for TeardownHook {}

type LogFunction = ThreadsafeFunction<FnArgs<(String, String)>, (), FnArgs<(String, String)>, napi::Status, false, true>;

/// How dispatch outcomes reach `index.js`: one function serves every request of every worker,
/// instead of a napi deferred per request (each of which would set up and tear down a
/// thread-safe function of its own, a large share of a request's cost). Outcomes wait in
/// [`Settled`]; the first one into an empty queue asks Node's thread for one call, which takes
/// every outcome queued by then as `[id, outcome, id, outcome, …]`. Under concurrent load one
/// call then settles many requests, with one microtask checkpoint after them all.
type SettledBatch = Vec<Either3<u32, NativeResponse, NativeError>>;
type SettledFunction = ThreadsafeFunction<(), (), SettledBatch, napi::Status, false, true>;

/// The outcomes on their way to Node's thread, and the function that takes them there.
struct Settled {
  queue: Arc<Mutex<Vec<(u32, Either<NativeResponse, NativeError>)>>>,
  function: SettledFunction,
}

impl Settled {
  /// Queues one outcome (from any thread).
  fn send(&self, id: u32, outcome: Either<NativeResponse, NativeError>) {
    let first = {
      let mut queue = self.queue.lock().unwrap();
      queue.push((id, outcome));
      queue.len() == 1
    };
    if first {
      self.function.call((), ThreadsafeFunctionCallMode::NonBlocking);
    }
  }
}

type InspectorFunction = ThreadsafeFunction<FnArgs<(u32, String)>, (), FnArgs<(u32, String)>, napi::Status, false, true>;

/// A worker's inspector as `lib/inspector.js` drives it: sessions connect, send protocol
/// messages and disconnect; V8's messages come back through `on_message(session, message)`.
#[napi]
pub struct NativeInspector {
  channel: Arc<crate::runtime::inspector::InspectorChannel>,
}

#[napi]
impl NativeInspector {
  #[napi(constructor)]
  pub fn new(name: String, wait_for_debugger: bool, on_message: Function<FnArgs<(u32, String)>, ()>) -> Result<Self> {
    let function: InspectorFunction = on_message.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?;
    let outbound: crate::runtime::inspector::Outbound = Arc::new(move |session: u32, message: String| {
      function.call(FnArgs::from((session, message)), ThreadsafeFunctionCallMode::NonBlocking);
    });
    Ok(Self { channel: crate::runtime::inspector::InspectorChannel::new(name, wait_for_debugger, outbound) })
  }

  #[napi]
  pub fn connect(&self, session: u32) {
    self.channel.send(crate::runtime::inspector::InspectorCommand::Connect(session));
  }

  #[napi]
  pub fn send(&self, session: u32, message: String) {
    self.channel.send(crate::runtime::inspector::InspectorCommand::Message(session, message));
  }

  #[napi]
  pub fn disconnect(&self, session: u32) {
    self.channel.send(crate::runtime::inspector::InspectorCommand::Disconnect(session));
  }
}

/// The way back for dispatch outcomes: `index.js` makes one per Node environment.
#[napi]
pub struct NativeChannel {
  settled: Arc<Settled>,
}

#[napi]
impl NativeChannel {
  /// `on_settled([id, outcome, id, outcome, …])` receives every dispatch's outcome.
  #[napi(constructor, ts_args_type = "onSettled: (batch: Array<number | NativeResponse | NativeError>) => void")]
  pub fn new(on_settled: Function<SettledBatch, ()>) -> Result<Self> {
    let queue: Arc<Mutex<Vec<(u32, Either<NativeResponse, NativeError>)>>> = Arc::default();
    let taken = queue.clone();
    // Weak: `index.js` holds Node's event loop open (`keepAlive`) only while requests are pending.
    let function = on_settled.build_threadsafe_function::<()>().weak::<true>().callee_handled::<false>().build_callback(move |_| {
      let batch = std::mem::take(&mut *taken.lock().unwrap());
      let mut flat = Vec::with_capacity(batch.len() * 2);
      for (id, outcome) in batch {
        flat.push(Either3::A(id));
        flat.push(match outcome {
          Either::A(response) => Either3::B(response),
          Either::B(error) => Either3::C(error),
        });
      }
      Ok(flat)
    })?;
    Ok(Self { settled: Arc::new(Settled { queue, function }) })
  }

  /// Holds Node's event loop open (or lets it go) while `index.js` has requests pending.
  #[napi]
  pub fn keep_alive(&self, env: &Env, on: bool) -> Result<()> {
    // SAFETY: called on Node's thread with its env; the function lives as long as `self`.
    let status = unsafe {
      if on {
        napi::sys::napi_ref_threadsafe_function(env.raw(), self.settled.function.raw())
      } else {
        napi::sys::napi_unref_threadsafe_function(env.raw(), self.settled.function.raw())
      }
    };
    if status == napi::sys::Status::napi_ok {
      Ok(())
    } else {
      Err(napi::Error::from_reason(format!("could not change the hold on Node's event loop (napi status {status})")))
    }
  }
}

/// A running worker, as `index.js` sees it.
#[napi]
pub struct NativeWorker {
  inner: Arc<Worker>,
  format: ScriptFormat,
  cleanup: Mutex<Option<TeardownHook>>,
  settled: Arc<Settled>,
  /// The worker's log lines in flight to `onLog`; answers wait behind them.
  logs: Arc<LogQueue>,
  /// Whether `dispatch` waits for a quick answer.
  waits: Arc<WaitPolicy>,
}

fn native_error(error: WorkerError) -> NativeError {
  match error {
    WorkerError::Js(JsErrorInfo { name, message, stack, file, line, column }) => {
      NativeError { name, message, stack, code: None, file, line, column }
    }
    WorkerError::Disposed(message) => NativeError {
      stack: format!("Error: {message}"),
      name: "Error".into(),
      message,
      code: Some("ERR_WORKER_DISPOSED".into()),
      file: None,
      line: None,
      column: None,
    },
    WorkerError::Runtime { code, message } => NativeError {
      stack: format!("Error: {message}"),
      name: "Error".into(),
      message,
      code: Some(code.into()),
      file: None,
      line: None,
      column: None,
    },
  }
}

/// A worker outcome as the value a promise resolves to: the converted result, or the error.
fn outcome<T, N>(result: std::result::Result<T, WorkerError>, convert: fn(T) -> N) -> Either<N, NativeError> {
  match result {
    Ok(value) => Either::A(convert(value)),
    Err(error) => Either::B(native_error(error)),
  }
}

fn native_js_error(e: JsErrorInfo) -> NativeError {
  native_error(WorkerError::Js(e))
}

fn native_scheduled(outcome: ScheduledOutcome) -> NativeScheduledOutcome {
  NativeScheduledOutcome { outcome: outcome.outcome, no_retry: outcome.no_retry, error: outcome.error.map(native_js_error) }
}

fn native_rpc(outcome: RpcOutcome) -> NativeRpcOutcome {
  NativeRpcOutcome { result: outcome.result.map(|b| Buffer::from(Vec::from(b))), result_json: outcome.result_json, error: outcome.error.map(native_js_error) }
}

fn native_queue(outcome: QueueOutcome) -> NativeQueueOutcome {
  NativeQueueOutcome { outcome: outcome.outcome, result_json: outcome.result_json, error: outcome.error.map(native_js_error) }
}

fn native_response(response: ResponseData) -> NativeResponse {
  NativeResponse {
    status: response.status as u32,
    status_text: response.status_text,
    headers: response.headers.into_iter().flat_map(|(k, v)| [k, v]).collect(),
    body_stream: response.body.stream_id(),
    cpu_ms: response.cpu_ms,
    body: response.body.into_bytes().map(crate::binding_bytes::BodyBytes),
  }
}

/// Starts V8 and reads the saved startup snapshot off Node's thread (index.js calls it when it
/// loads), so that the first worker of the process starts sooner.
#[napi]
pub fn prewarm() {
  crate::runtime::prewarm();
}

/// Starts a worker. Resolves to a `NativeWorker`, or to a `NativeError` if the script failed
/// to load (resolving rather than rejecting lets `index.js` build the right error class). A
/// warm spare from the pool is returned as it is, without a promise. `stores` maps binding
/// names to the embedded stores that answer them.
#[napi(ts_return_type = "Promise<NativeWorker | NativeError> | NativeWorker")]
pub fn create_worker<'env>(
  env: &'env Env,
  options: NativeWorkerOptions,
  on_log: Function<'env, FnArgs<(String, String)>, ()>,
  host_dispatcher: Function<'env, HostArgs, PromiseRaw<'static, NativeHostAnswer>>,
  channel: &NativeChannel,
  stores: HashMap<String, ClassInstance<'env, NativeStore>>,
  inspector: Option<ClassInstance<'env, NativeInspector>>,
) -> Result<Either<Object<'env>, NativeWorker>> {
  let settled = channel.settled.clone();
  let pooled = options.pool.unwrap_or(true);
  let format = match options.format.as_deref() {
    None => None,
    Some(name) => Some(ScriptFormat::parse(name).ok_or_else(|| napi::Error::new(napi::Status::InvalidArg, format!("unknown format {name:?}")))?),
  };
  let log: Arc<LogFunction> = Arc::new(on_log.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?);
  let logs = Arc::new(LogQueue::default());
  let queue = logs.clone();
  let sink = Arc::new(move |level: LogLevel, text: String| {
    let len = text.len();
    let Admit::Deliver { dropped_before } = queue.admit(len) else { return };
    if dropped_before > 0 {
      log.call(FnArgs::from((LogLevel::Warn.as_str().to_owned(), dropped_notice(dropped_before))), ThreadsafeFunctionCallMode::NonBlocking);
    }
    let release = queue.clone();
    let status = log.call_with_return_value(FnArgs::from((level.as_str().to_owned(), text)), ThreadsafeFunctionCallMode::NonBlocking, move |_, _| {
      release.delivered(len);
      Ok(())
    });
    if status != napi::Status::Ok {
      queue.delivered(len);
    }
  });
  let private_cache = match options.private_cache {
    Some(true) => Some((CACHE_BINDING.to_owned(), Store::open(StoreKind::Cache, None).map_err(napi::Error::from_reason)?)),
    _ => None,
  };
  let dispatcher: HostFunction = host_dispatcher.build_threadsafe_function().weak::<true>().callee_handled::<false>().build()?;
  let core_options = WorkerOptions {
    script: options.script,
    filename: options.filename,
    format,
    env_json: options.env_json,
    compat_json: options.compat_json.unwrap_or_else(|| default_compat_json().into()),
    bindings_json: options.bindings_json,
    allow_eval: options.allow_eval,
    module_loader: options.module_loader.unwrap_or(false),
    inspector: inspector.map(|i| i.channel.clone()),
    limits: options.limits.map(NativeLimits::into_limits).unwrap_or_default(),
    log: sink,
    host: Some(Arc::new(NodeHost { dispatcher })),
    stores: Stores::new(stores.into_iter().map(|(name, handle)| Ok((name, handle.open_store("createWorker")?.clone()))).collect::<Result<Vec<_>>>()?.into_iter().chain(private_cache)),
    public_network_only: options.public_network_only,
    code_cache: options.code_cache.unwrap_or(true),
    code_cache_dir: options.cache_dir.map(std::path::PathBuf::from),
    isolation: match options.isolation.as_deref() {
      None | Some("shared") => Isolation::Shared,
      Some("per-request") => Isolation::PerRequest { max_reuse: options.max_reuse.unwrap_or(Isolation::DEFAULT_MAX_REUSE) },
      Some(other) => return Err(napi::Error::new(napi::Status::InvalidArg, format!("unknown isolation {other:?}"))),
    },
    modules: options
      .modules
      .unwrap_or_default()
      .into_iter()
      .map(|m| {
        let kind = match m.kind.as_str() {
          "esm" => ModuleKind::EsModule,
          "wasm" => ModuleKind::Wasm,
          "text" => ModuleKind::Text,
          "json" => ModuleKind::Json,
          "commonjs" => ModuleKind::CommonJs,
          _ => ModuleKind::Data,
        };
        ExtraModule { name: m.name, kind, content: bytes::Bytes::from(Vec::from(m.content)), named_exports: m.named_exports }
      })
      .collect(),
  };

  ensure_pool_teardown(env)?;
  let (core_options, refill) = match pool::acquire(core_options, pooled) {
    Acquired::Warm(worker, format) => return hand_off(env, worker, format, settled, logs).map(Either::B),
    Acquired::Cold(core_options, refill) => (core_options, refill),
  };

  let (deferred, promise) = env.create_deferred()?;
  let slot: Arc<OnceLock<Arc<Worker>>> = Arc::new(OnceLock::new());
  let hook_slot: Arc<Mutex<Option<TeardownHook>>> = Arc::new(Mutex::new(None));
  let (worker_for_ready, hook_for_ready) = (slot.clone(), hook_slot.clone());
  let on_ready = Box::new(move |result: std::result::Result<ScriptFormat, WorkerError>| {
    // Runs on the isolate thread; the resolver below runs on Node's thread, after
    // `create_worker` has returned and filled the slots.
    if let (Some(refill), Ok(_)) = (refill, &result) {
      refill.start();
    }
    deferred.resolve(move |env: Env| {
      let inner = worker_for_ready.get().cloned().expect("worker slot filled before the promise settles");
      let hook = hook_for_ready.lock().unwrap().take();
      Ok(match result {
        Ok(format) => Either::A(NativeWorker { inner, format, cleanup: Mutex::new(hook), settled, logs, waits: Default::default() }),
        Err(error) => {
          if let Some(TeardownHook(hook)) = hook {
            let _ = env.remove_env_cleanup_hook(hook);
          }
          drop(inner);
          Either::B(native_error(error))
        }
      })
    });
  });
  let worker = Arc::new(Worker::spawn(core_options, on_ready).map_err(|e| napi::Error::from_reason(e.to_string()))?);
  *hook_slot.lock().unwrap() = Some(teardown_hook(env, &worker)?);
  let _ = slot.set(worker);
  Ok(Either::A(promise))
}

/// When Node tears the environment down (process exit), stop the worker's threads first.
fn teardown_hook(env: &Env, worker: &Arc<Worker>) -> Result<TeardownHook> {
  let hook = env.add_env_cleanup_hook(Arc::downgrade(worker), |weak| {
    if let Some(worker) = weak.upgrade() {
      worker.dispose();
    }
  })?;
  Ok(TeardownHook(hook))
}

/// A pool hit: the spare is booted and bound already, so it is the answer at once.
fn hand_off(env: &Env, worker: Worker, format: ScriptFormat, settled: Arc<Settled>, logs: Arc<LogQueue>) -> Result<NativeWorker> {
  let inner = Arc::new(worker);
  let hook = teardown_hook(env, &inner)?;
  Ok(NativeWorker { inner, format, cleanup: Mutex::new(Some(hook)), settled, logs, waits: Default::default() })
}

#[napi]
impl NativeWorker {
  /// "module" or "service-worker".
  #[napi(getter)]
  pub fn format(&self) -> &'static str {
    match self.format {
      ScriptFormat::Module => "module",
      ScriptFormat::ServiceWorker => "service-worker",
    }
  }

  /// Sends one request; its outcome (a `NativeResponse` or a `NativeError`) comes back as
  /// `onSettled(id, outcome)`. The body is whole bytes, or `body_stream`: the id of a stream the
  /// worker pulls through `#body` calls. `host_now` is the host's `Date.now()`, which the
  /// worker's embedded stores go by. `cf_json` is `request.cf` as JSON (an object); without it
  /// the worker gives the request its default `cf` (src/js/65_http.js).
  ///
  /// When the worker has nothing else in flight and has lately answered quickly, this waits a
  /// bounded time for the answer (src/runtime/handoff.rs) and returns it directly; otherwise, or
  /// when it does not come in time, it returns `null` and the answer goes through `onSettled`.
  #[napi(ts_return_type = "NativeResponse | NativeError | null")]
  #[allow(clippy::too_many_arguments)]
  pub fn dispatch(&self, id: u32, method: String, url: String, headers: Vec<String>, body: Option<Buffer>, body_stream: Option<u32>, host_now: Option<f64>, cf_json: Option<String>, may_wait: Option<bool>) -> Option<Either<NativeResponse, NativeError>> {
    if let Some(now) = host_now {
      self.inner.follow_host_clock(now);
    }
    let request = RequestData {
      method,
      url,
      headers: headers.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect(),
      body: match (body, body_stream) {
        (_, Some(stream)) => Body::Stream(stream),
        (Some(buffer), None) => Body::Bytes(bytes::Bytes::copy_from_slice(&buffer)),
        (None, None) => Body::Empty,
      },
      cf: cf_json,
    };
    let (settled, logs, policy) = (self.settled.clone(), self.logs.clone(), self.waits.clone());
    // A streamed request body is pulled from this thread, so its answer is never waited for.
    let begin = policy.begin(may_wait.unwrap_or(true));
    self.inner.note_callers(begin.concurrent);
    let handoff = (begin.wait && body_stream.is_none()).then(|| Arc::new(Handoff::default()));
    let offered = handoff.clone();
    let sent = std::time::Instant::now();
    self.inner.dispatch(
      request,
      Box::new(move |result| {
        logs.after_delivered(move || {
          policy.end(sent.elapsed());
          let result = match offered {
            Some(handoff) => match handoff.offer(result) {
              Ok(()) => return,
              Err(result) => result,
            },
            None => result,
          };
          settled.send(id, outcome(result, native_response));
        });
      }),
    );
    let result = handoff?.wait(handoff::WAIT_BUDGET);
    self.waits.waited(result.is_some());
    Some(outcome(result?, native_response))
  }

  /// Runs the `scheduled()` handler. Resolves to a `NativeScheduledOutcome` or a `NativeError`.
  #[napi(ts_return_type = "Promise<NativeScheduledOutcome | NativeError>")]
  pub fn scheduled<'env>(&self, env: &'env Env, cron: String, scheduled_time: f64, host_now: Option<f64>) -> Result<Object<'env>> {
    if let Some(now) = host_now {
      self.inner.follow_host_clock(now);
    }
    let (deferred, promise) = env.create_deferred()?;
    self.inner.scheduled(
      ScheduledEvent { cron, scheduled_time },
      {
        let logs = self.logs.clone();
        Box::new(move |result| logs.after_delivered(move || deferred.resolve(move |_env: Env| Ok(outcome(result, native_scheduled)))))
      },
    );
    Ok(promise)
  }

  /// Runs the `queue()` handler for one batch (`messages_json`: `{ messages: [{ id, timestamp,
  /// attempts, contentType }], metadata? }`, one message per body). Resolves to a `NativeQueueOutcome` or a `NativeError`.
  #[napi(ts_return_type = "Promise<NativeQueueOutcome | NativeError>")]
  pub fn queue<'env>(&self, env: &'env Env, queue: String, messages_json: String, bodies: Vec<Buffer>, host_now: Option<f64>) -> Result<Object<'env>> {
    if let Some(now) = host_now {
      self.inner.follow_host_clock(now);
    }
    let (deferred, promise) = env.create_deferred()?;
    let bodies = bodies.into_iter().map(|b| bytes::Bytes::from(b.to_vec())).collect();
    let logs = self.logs.clone();
    self.inner.queue(
      QueueEvent { queue, messages_json, bodies },
      Box::new(move |result| logs.after_delivered(move || deferred.resolve(move |_env: Env| Ok(outcome(result, native_queue))))),
    );
    Ok(promise)
  }

  /// Runs one Workers RPC call into the worker (`call_json`: `{ entrypoint?, stub?, path,
  /// stubs }`; `args`: the V8-serialized argument array). Resolves to a `NativeRpcOutcome` or a
  /// `NativeError` (the worker could not run the call at all).
  #[napi(ts_return_type = "Promise<NativeRpcOutcome | NativeError>")]
  pub fn rpc<'env>(&self, env: &'env Env, call_json: String, args: Buffer) -> Result<Object<'env>> {
    let (deferred, promise) = env.create_deferred()?;
    let logs = self.logs.clone();
    self.inner.rpc(
      RpcEvent { call_json, args: bytes::Bytes::from(Vec::from(args)) },
      Box::new(move |result| logs.after_delivered(move || deferred.resolve(move |_env: Env| Ok(outcome(result, native_rpc))))),
    );
    Ok(promise)
  }

  /// Resolves once every `ctx.waitUntil()` promise registered so far has settled.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn wait_until_settled<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
    let (deferred, promise) = env.create_deferred()?;
    let logs = self.logs.clone();
    self.inner.when_settled(Box::new(move || logs.after_delivered(move || deferred.resolve(|_env: Env| Ok(())))));
    Ok(promise)
  }

  #[napi(getter)]
  pub fn disposed(&self) -> bool {
    self.inner.is_disposed()
  }

  /// Stops the worker and joins its threads off Node's thread; resolves when they are gone.
  #[napi(ts_return_type = "Promise<void>")]
  pub fn dispose<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
    if let Some(TeardownHook(hook)) = self.cleanup.lock().unwrap().take() {
      let _ = env.remove_env_cleanup_hook(hook);
    }
    let (deferred, promise) = env.create_deferred()?;
    let inner = self.inner.clone();
    std::thread::Builder::new()
      .name("wb-dispose".into())
      .spawn(move || {
        inner.dispose();
        deferred.resolve(|_env: Env| Ok(()));
      })
      .map_err(|e| napi::Error::from_reason(format!("could not start the dispose thread: {e}")))?;
    Ok(promise)
  }
}
