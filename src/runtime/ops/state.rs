//! The per-isolate state the ops share, kept in the isolate's slot (`ops::state`): the events
//! running and their replies, timers, binding calls, CPU accounting, and the objects JS holds by
//! id (codecs, decoders, URLPatterns, hashers, rewriters); and the per-context counts of work
//! under way (`ContextHolds`). The isolate thread (`isolate/`) makes it for each isolate and
//! tears it down; it sits here, below the isolate, because the ops it serves do.

use crate::runtime::allocator;
use crate::runtime::code_cache;
use crate::runtime::messages::{DispatchReply, ScheduledReply, SchedulerMessage, SettledReply};
use crate::runtime::monitor::Monitor;
use crate::runtime::types::{Limits, LogSink, WorkerError};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;

pub(crate) type StateRef = Rc<RefCell<IsolateState>>;

/// A live timer: its JS callback, its period if it repeats, and the request that set it.
pub(crate) struct Timer {
  pub callback: v8::Global<v8::Function>,
  pub repeat: Option<Duration>,
  pub owner: Option<u32>,
  /// The runtime's own timer (a `waitUntil` deadline): it settles nothing the script waits
  /// for, so it does not count as work that could still make progress.
  pub internal: bool,
  /// Its share of the worker's memory budget, given back when the timer goes.
  pub _charge: allocator::Charge,
}

/// A running event's reply, waiting for the JS side to finish.
pub(crate) enum Pending {
  Fetch(DispatchReply),
  Scheduled(ScheduledReply),
  Queue(crate::runtime::queue::QueueReply),
  Rpc(crate::runtime::rpc::RpcReply),
}

impl Pending {
  pub fn fail(self, error: WorkerError) {
    match self {
      Pending::Fetch(reply) => reply(Err(error)),
      Pending::Scheduled(reply) => reply(Err(error)),
      Pending::Queue(reply) => reply(Err(error)),
      Pending::Rpc(reply) => reply(Err(error)),
    }
  }
}

/// How long a running event may go without its wall-clock deadline being armed while the
/// isolate thread stays busy (see [`IsolateState::arm_deadlines`]).
pub(crate) const ARM_DEADLINES_AFTER: Duration = Duration::from_millis(1);

/// Per-isolate state that ops reach through the isolate's slot.
pub(crate) struct IsolateState {
  pub log: LogSink,
  pub monitor: Arc<Monitor>,
  pub scheduler: UnboundedSender<SchedulerMessage>,
  pub limits: Limits,
  /// Events running in the isolate, waiting for their outcome, by request id.
  pub pending: HashMap<u32, Pending>,
  /// Running events whose wall-clock deadline the scheduler has not been given yet, with when
  /// they started. Most events finish within the turn that starts them; only those still
  /// running when the thread goes idle (or after [`ARM_DEADLINES_AFTER`]) cost a message to
  /// the scheduler, and a second one to cancel it.
  pub unarmed_deadlines: Vec<(u32, Instant)>,
  /// `waitUntil` promises not yet settled, and who waits for them all to settle.
  pub background: u32,
  pub settled_waiters: Vec<SettledReply>,
  pub timers: HashMap<u32, Timer>,
  /// The last id handed out to a timer, I/O call, codec, URLPattern or rewriter; it keeps counting
  /// across isolates, so a stale message about an old isolate's id matches nothing.
  pub last_id: u32,
  /// Binding calls waiting for the host, by id, with the request that made them.
  /// Each holds its charge on the worker's memory budget until answered.
  pub host_calls: HashMap<u32, (v8::Global<v8::PromiseResolver>, Option<u32>, crate::runtime::allocator::Charge)>,
  /// The request the running JS works for: the one dispatched, or the one that set the timer
  /// or made the binding call whose result is being delivered. CPU time is charged to it.
  pub current_owner: Option<u32>,
  /// CPU time each running request has used so far.
  pub cpu_used: HashMap<u32, Duration>,
  /// The worker's embedded stores and their clock: in-memory KV, R2-style and cache stores are
  /// answered right here on the isolate thread (`ops.storeCallSync`), without a thread hop.
  pub stores: crate::runtime::store::Stores,
  pub store_clock: Arc<crate::runtime::store::Clock>,
  /// The request that used up its CPU time between stretches of JS.
  pub cpu_culprit: Option<u32>,
  /// Open CompressionStream/DecompressionStream codecs, by id.
  pub codecs: HashMap<u32, super::Codec>,
  /// node:zlib's native handles (ops/zlib.rs), by id.
  pub zlib_handles: HashMap<u32, super::ZlibHandle>,
  /// TextDecoders in the middle of a streaming decode, by id.
  pub text_decoders: HashMap<u32, encoding_rs::Decoder>,
  /// The same for CJK encodings decoded with ICU (before text_decoder_cjk_decoder), with the encoding.
  pub icu_decoders: HashMap<u32, (String, super::IcuDecoder)>,
  /// Compiled URLPatterns, by id.
  pub url_patterns: HashMap<u32, super::UrlPatternState>,
  /// Open DigestStream hashers, by id.
  pub hashers: HashMap<u32, Box<dyn digest::DynDigest>>,
  /// node:crypto Hash and Hmac objects in progress, by id.
  pub node_hashes: HashMap<u32, super::NodeHash>,
  /// HTMLRewriter transforms in progress, by id; dropping one ends its coroutine.
  pub rewriters: HashMap<u32, super::Rewriter>,
  /// When the isolate started: `performance.now()`'s zero.
  pub started: std::time::Instant,
  /// Promises rejected with no handler since the last checkpoint.
  pub unhandled: Vec<(v8::Global<v8::Promise>, v8::Global<v8::Value>)>,
  /// Promises that got a handler after their rejection was already reported (a
  /// `rejectionhandled` event is due if an `unhandledrejection` event was dispatched for them).
  pub handled_late: Vec<v8::Global<v8::Promise>>,
  /// Without unhandled_rejection_after_microtask_checkpoint (before 2026-03-03): rejections are
  /// reported from a microtask queued at the first one, as workerd did, rather than after the
  /// checkpoint. `Some(queued)` in that mode.
  pub early_rejections: Option<bool>,
  /// A request failed or an error went uncaught in this isolate: in per-request mode, the
  /// isolate is replaced once its running requests are done.
  pub tainted: bool,
  /// `node:` imports are on (decided once per worker from its compatibility settings).
  pub nodejs_compat: NodeCompat,
  /// What the worker may make the host hold outside the V8 heap (ArrayBuffers, timers).
  pub budget: Arc<allocator::BufferBudget>,
  /// The script's code-cache digest, made once per worker (`None`: code cache off).
  pub source_digest: Option<code_cache::SourceDigest>,
  /// The user's script is running its top level: timers and I/O are refused, as in workerd
  /// (`super::refuse_at_global_scope`).
  pub global_scope: bool,
  /// V8's inspector, when the worker has one (`inspector.rs`).
  pub inspector: Option<Rc<crate::runtime::inspector::WorkerInspector>>,
}

impl IsolateState {
  /// A fresh id for a timer, I/O call, codec, URLPattern, hasher or rewriter (never 0).
  pub fn next_id(&mut self) -> u32 {
    self.last_id = self.last_id.wrapping_add(1).max(1);
    self.last_id
  }

  /// Takes a running event's reply (and drops its wall-clock deadline).
  pub fn take_pending(&mut self, id: u32) -> Option<Pending> {
    let pending = self.pending.remove(&id)?;
    self.cpu_used.remove(&id);
    if self.limits.wall_ms > 0 {
      match self.unarmed_deadlines.iter().position(|&(event, _)| event == id) {
        Some(at) => {
          self.unarmed_deadlines.remove(at);
        }
        None => {
          let _ = self.scheduler.send(SchedulerMessage::CancelDeadline { id });
        }
      }
    }
    Some(pending)
  }

  /// Gives the scheduler the wall-clock deadlines of running events that do not have one yet:
  /// all of them when `idle` (the thread is about to wait), else those started more than
  /// [`ARM_DEADLINES_AFTER`] ago (a busy thread may not go idle for a while).
  pub fn arm_deadlines(&mut self, idle: bool) {
    let Some(&(_, oldest)) = self.unarmed_deadlines.first() else { return };
    if !idle && oldest.elapsed() < ARM_DEADLINES_AFTER {
      return;
    }
    let wall = Duration::from_millis(self.limits.wall_ms);
    for (id, started) in std::mem::take(&mut self.unarmed_deadlines) {
      if self.pending.contains_key(&id) {
        let _ = self.scheduler.send(SchedulerMessage::StartDeadline { id, after: wall.saturating_sub(started.elapsed()) });
      }
    }
  }

  /// Whether a timer of the script's is pending (one that could still settle its promises).
  pub fn user_timers_pending(&self) -> bool {
    self.timers.values().any(|t| !t.internal)
  }

  /// No timer of the script's and no binding call is left: nothing in the isolate can settle a
  /// promise or produce a chunk any more (queued events aside, which the caller checks).
  pub fn nothing_pending(&self) -> bool {
    !self.user_timers_pending() && self.host_calls.is_empty()
  }

  /// Cancels the timers event `id` set (directly or from its own callbacks) that are still
  /// pending: the event is over, or its context is gone.
  pub fn drop_timers_of(&mut self, id: u32) {
    let stale: Vec<u32> = self.timers.iter().filter(|(_, t)| t.owner == Some(id)).map(|(timer, _)| *timer).collect();
    for timer in stale {
      self.timers.remove(&timer);
      let _ = self.scheduler.send(SchedulerMessage::CancelTimer { id: timer });
    }
  }

  /// Releases whoever waits for background work, once none is left.
  pub fn settled_waiters_if_idle(&mut self) -> Vec<SettledReply> {
    if self.background == 0 {
      std::mem::take(&mut self.settled_waiters)
    } else {
      Vec::new()
    }
  }
}

/// Work a request's context still has under way after its response went out: `waitUntil`
/// promises and response bodies being written to the host. Kept in the context's slot, where
/// the ops find it; in per-request mode the context is retired once both are zero.
#[derive(Default)]
pub(crate) struct ContextHolds {
  pub waits: Cell<u32>,
  pub pumps: Cell<u32>,
  /// `internals.promiseRejection(type, promise, reason)`: dispatches the context's
  /// `unhandledrejection` / `rejectionhandled` event; returns whether to log the rejection.
  pub rejection_hook: RefCell<Option<v8::Global<v8::Function>>>,
  /// `internals.formatStack(error, callSites)`: the context's error stacks (see `isolate/boot.rs`).
  pub stack_formatter: RefCell<Option<v8::Global<v8::Function>>>,
}

impl ContextHolds {
  pub(crate) fn idle(&self) -> bool {
    self.waits.get() == 0 && self.pumps.get() == 0
  }
}

/// What the compatibility settings turn on of nodejs_compat: `node:` imports, with
/// nodejs_compat_v2 also the `Buffer`/`process`/`global` globals, and with nodejs_als alone only
/// `node:async_hooks`. `enabled` is every feature that is on (lib/compat.js has applied the
/// implied-after-date rules), for the modules workerd puts behind a flag of their own.
pub(crate) fn nodejs_compat(compat_json: &str) -> NodeCompat {
  let enabled: Vec<String> = serde_json::from_str::<serde_json::Value>(compat_json)
    .ok()
    .and_then(|c| c.get("enabled")?.as_array().map(|e| e.iter().filter_map(|f| f.as_str().map(str::to_owned)).collect()))
    .unwrap_or_default();
  let on = |name: &str| enabled.iter().any(|f| f == name);
  let modules = on("nodejs_compat");
  let trusted_loader = serde_json::from_str::<serde_json::Value>(compat_json).ok().and_then(|c| c.get("trustLoadedModules")?.as_bool()).unwrap_or(false);
  let main_module = serde_json::from_str::<serde_json::Value>(compat_json).ok().and_then(|c| Some(c.get("mainModule")?.as_str()?.to_owned()));
  NodeCompat { modules, globals: modules && on("nodejs_compat_v2"), als: on("nodejs_als"), enabled, trusted_loader, main_module }
}

/// See [`nodejs_compat`].
#[derive(Clone, Default)]
pub(crate) struct NodeCompat {
  pub modules: bool,
  pub globals: bool,
  pub als: bool,
  pub enabled: Vec<String>,
  /// The modules the host's loader gives are the host's own code (`trustLoadedModules`, the
  /// Vitest runner's): they import every `node:` module, whatever the flags; the worker's own
  /// code still sees only what its flags allow.
  pub trusted_loader: bool,
  /// `mainModule`: the module of `modules` that counts as the main one too (`import.meta.main`),
  /// when the script only wraps it.
  pub main_module: Option<String>,
}
