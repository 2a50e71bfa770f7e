//! The process-wide warm pool: *spare* workers that have booted (isolate made, the user's script
//! loaded and its top level run) but never received a request, kept ready so that creating a
//! worker for a script seen before is a hand-off instead of a boot.
//!
//! This module owns:
//! - the spares, keyed by a SHA-256 over every [`WorkerOptions`] field that affects the worker
//!   except `log` and `host` (see [`key`]);
//! - the swappable sinks a spare is started with ([`Handoff`]): until hand-off its log lines are
//!   buffered (at most [`BUFFERED_LINES`], oldest dropped) and its binding calls fail; at
//!   hand-off the caller's log sink, host and embedded stores are bound and the buffered lines
//!   flushed in order;
//! - one lazily started manager thread (`wb-pool`) that boots replacement spares, disposes
//!   spares that idled past `idle_ms` (it sleeps on a condition variable until the earliest
//!   expiry, never polls) or were evicted by the `max_total` cap (least recently used key first),
//!   and exits when the pool is empty;
//! - the counters behind [`stats`].
//!
//! Workers are only ever disposed outside the pool's lock, and never on their own isolate
//! thread (a spare whose boot failed is handed to the manager to dispose).

use super::types::{ExtraModule, Host, HostCall, HostReply, HostResult, Isolation, JsErrorInfo, Limits, LogLevel, LogSink, ModuleKind, ScriptFormat, WorkerError, BODY_BINDING};
use super::options::WorkerOptions;
use super::store::Stores;
use super::worker::Worker;
use super::code_cache::KeyHash;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Log lines a spare keeps before hand-off; beyond this the oldest are dropped (and counted).
pub const BUFFERED_LINES: usize = 1_000;

/// How the pool behaves; see [`configure`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolConfig {
  /// Spares kept ready per known script. `0` turns pooling off (and disposes every spare).
  pub spares: u32,
  /// A spare not handed out within this many milliseconds is disposed. `0`: never.
  pub idle_ms: u64,
  /// Spares (ready and booting) across all scripts; over it the least recently used go first.
  pub max_total: u32,
}

impl Default for PoolConfig {
  fn default() -> Self {
    Self { spares: 1, idle_ms: 10_000, max_total: 16 }
  }
}

/// What the pool holds and has done, process-wide.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
  /// Spares booted and waiting for a hand-off.
  pub ready: u64,
  /// Spares booting or about to.
  pub booting: u64,
  /// Creates answered by a ready spare.
  pub hits: u64,
  /// Creates (with pooling on) that found no ready spare and started cold.
  pub misses: u64,
  /// Spares disposed after idling past `idle_ms`.
  pub reclaimed: u64,
  /// Spares disposed to stay within `max_total`, or because pooling was turned down.
  pub evicted: u64,
  /// Spares whose boot failed (they are dropped; the cold path reports script errors).
  pub failed: u64,
}

type Key = [u8; 32];

/// The pool key of `options`: a SHA-256 over everything that shapes the worker except its log
/// sink, host and stores, which are bound at hand-off. Destructured exhaustively, so a new field is a
/// compile error here until it is either hashed or explicitly ignored.
pub fn key(options: &WorkerOptions) -> Key {
  let WorkerOptions {
    script,
    filename,
    format,
    env_json,
    bindings_json,
    compat_json,
    allow_eval,
    limits,
    log: _,
    host: _,
    stores: _,
    public_network_only,
    modules,
    code_cache,
    code_cache_dir,
    isolation,
    module_loader,
    inspector,
  } = options;
  let Limits { max_in_flight, max_queued, wall_ms, cpu_ms, memory_mb, binding_ms, wait_until_ms } = limits;
  let mut hash = KeyHash::new();
  let mut field = |bytes: &[u8]| {
    hash.part(bytes);
  };
  field(script.as_bytes());
  field(filename.as_bytes());
  field(match format {
    None => b"detect",
    Some(ScriptFormat::Module) => b"module",
    Some(ScriptFormat::ServiceWorker) => b"service-worker",
  });
  field(env_json.as_bytes());
  field(bindings_json.as_bytes());
  field(compat_json.as_bytes());
  field(&[*allow_eval as u8, *public_network_only as u8, *code_cache as u8, *module_loader as u8, inspector.is_some() as u8]);
  for number in [*max_in_flight as u64, *max_queued as u64, *wall_ms, *cpu_ms, *memory_mb as u64, *binding_ms, *wait_until_ms] {
    field(&number.to_le_bytes());
  }
  match isolation {
    Isolation::Shared => field(b"shared"),
    Isolation::PerRequest { max_reuse } => {
      field(b"per-request");
      field(&max_reuse.to_le_bytes());
    }
  }
  match code_cache_dir {
    None => field(b"no-cache-dir"),
    Some(dir) => field(dir.as_os_str().as_encoded_bytes()),
  }
  field(&(modules.len() as u64).to_le_bytes());
  for ExtraModule { name, kind, content, named_exports } in modules {
    field(name.as_bytes());
    field(match kind {
      ModuleKind::EsModule => b"esm",
      ModuleKind::Wasm => b"wasm",
      ModuleKind::Text => b"text",
      ModuleKind::Data => b"data",
      ModuleKind::Json => b"json",
      ModuleKind::CommonJs => b"commonjs",
    });
    field(content);
    match named_exports {
      None => field(b"no-named-exports"),
      Some(names) => field(names.join("\0").as_bytes()),
    }
  }
  hash.finish()
}

/// The log sink, host and store table a spare is started with. They forward to whatever is
/// bound at hand-off; before that, log lines wait in a bounded buffer and binding calls fail.
pub struct Handoff {
  target: Mutex<Target>,
  /// The spare's (empty) table of embedded stores; the caller's are put in it at hand-off.
  stores: Stores,
}

enum Target {
  Waiting { lines: VecDeque<(LogLevel, String)>, dropped: usize },
  Bound { log: LogSink, host: Option<Arc<dyn Host>> },
}

impl Handoff {
  fn new() -> Arc<Self> {
    Arc::new(Self { target: Mutex::new(Target::Waiting { lines: VecDeque::new(), dropped: 0 }), stores: Stores::default() })
  }

  fn log(&self, level: LogLevel, text: String) {
    let mut target = self.target.lock().unwrap();
    match &mut *target {
      Target::Waiting { lines, dropped } => {
        if lines.len() == BUFFERED_LINES {
          lines.pop_front();
          *dropped += 1;
        }
        lines.push_back((level, text));
      }
      Target::Bound { log, .. } => {
        let log = log.clone();
        drop(target);
        log(level, text);
      }
    }
  }

  /// Binds the caller's sink and host, flushing the buffered lines first (under the lock, so a
  /// line logged meanwhile by the spare cannot overtake them).
  fn bind(&self, log: LogSink, host: Option<Arc<dyn Host>>, stores: &Stores) {
    self.stores.replace_with(stores);
    let mut target = self.target.lock().unwrap();
    if let Target::Waiting { lines, dropped } = &mut *target {
      if *dropped > 0 {
        log(LogLevel::Warn, format!("workerbox: {dropped} log lines from the script's start-up were dropped (a pooled worker keeps at most {BUFFERED_LINES} until it is handed out)"));
      }
      for (level, text) in lines.drain(..) {
        log(level, text);
      }
    }
    *target = Target::Bound { log, host };
  }

  fn sink(self: &Arc<Self>) -> LogSink {
    let this = self.clone();
    Arc::new(move |level, text| this.log(level, text))
  }
}

struct ForwardHost(Arc<Handoff>);

impl Host for ForwardHost {
  fn call(&self, call: HostCall, reply: HostReply) {
    let target = self.0.target.lock().unwrap();
    let host = match &*target {
      Target::Bound { host, .. } => host.clone(),
      Target::Waiting { .. } => {
        drop(target);
        // The isolate tells its host to end body streams when it stops; a spare has none.
        if call.binding == BODY_BINDING {
          return reply(Ok(HostResult::default()));
        }
        return reply(Err(JsErrorInfo::new(
          "Error",
          format!("env.{} was called before this pooled worker was handed out; bindings cannot be used at the script's top level", call.binding),
        )));
      }
    };
    drop(target);
    match host {
      Some(host) => host.call(call, reply),
      None if call.binding == BODY_BINDING => reply(Ok(HostResult::default())),
      None => reply(Err(JsErrorInfo::new("Error", format!("env.{} has no host handler (the worker was created without bindings support)", call.binding)))),
    }
  }
}

struct Spare {
  worker: Worker,
  format: ScriptFormat,
  handoff: Arc<Handoff>,
  ready_at: Instant,
}

/// A spare between "decided to boot" and "booted": the worker once `Worker::spawn` returned,
/// the boot's outcome once `on_ready` ran; whichever comes second finishes it.
struct Booting {
  key: Key,
  worker: Option<Worker>,
  outcome: Option<Result<ScriptFormat, WorkerError>>,
  handoff: Arc<Handoff>,
}

/// The spares of one key.
struct Slot {
  ready: VecDeque<Spare>,
  /// Spares booting (including those not yet spawned).
  booting: usize,
  /// Boots asked for and not yet started by the manager.
  queued: usize,
  /// When this key was last created (a tick of `State::clock`), for LRU eviction.
  touched: u64,
  /// The options spares are booted from, with a no-op log sink and no host.
  template: Arc<WorkerOptions>,
}

impl Slot {
  fn is_empty(&self) -> bool {
    self.ready.is_empty() && self.booting == 0 && self.queued == 0
  }
}

#[derive(Default)]
struct State {
  config: PoolConfig,
  slots: HashMap<Key, Slot>,
  /// Keys with queued boots, in order.
  boots: VecDeque<Key>,
  booting: HashMap<u64, Booting>,
  next_boot: u64,
  /// Workers to dispose on the manager thread.
  doomed: Vec<Worker>,
  clock: u64,
  manager_running: bool,
  /// Boots being spawned and workers being disposed by the manager right now.
  busy: usize,
  stats: PoolStats,
  /// When the last cold start of a script the pool had not seen began: spares boot only once
  /// such creates pause (see [`BOOT_QUIET`]).
  last_cold: Option<Instant>,
}

/// Spares boot only after this long without a cold start of a new script. A burst of creates of
/// new scripts (a thousand workers made in a loop) then does not also boot a spare for each of
/// them on the same cores; the spares follow once it is over.
const BOOT_QUIET: Duration = Duration::from_millis(25);

struct Pool {
  state: Mutex<State>,
  /// Wakes the manager (new work, new expiry) and `clear` (the manager finished something).
  changed: Condvar,
}

fn pool() -> &'static Pool {
  static POOL: OnceLock<Pool> = OnceLock::new();
  POOL.get_or_init(|| Pool { state: Mutex::new(State::default()), changed: Condvar::new() })
}

fn lock() -> MutexGuard<'static, State> {
  pool().state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
  fn ready_total(&self) -> usize {
    self.slots.values().map(|s| s.ready.len()).sum()
  }

  fn spare_total(&self) -> usize {
    self.slots.values().map(|s| s.ready.len() + s.booting + s.queued).sum()
  }

  /// Moves spares that idled too long to `doomed`; returns the next expiry still ahead.
  fn expire(&mut self, now: Instant) -> Option<Instant> {
    let idle = self.config.idle_ms;
    if idle == 0 {
      return None;
    }
    let mut next: Option<Instant> = None;
    let mut reclaimed = 0;
    for slot in self.slots.values_mut() {
      while let Some(spare) = slot.ready.front() {
        let at = spare.ready_at + Duration::from_millis(idle);
        if at > now {
          next = Some(next.map_or(at, |n| n.min(at)));
          break;
        }
        let spare = slot.ready.pop_front().unwrap();
        self.doomed.push(spare.worker);
        reclaimed += 1;
      }
    }
    self.stats.reclaimed += reclaimed;
    self.slots.retain(|_, slot| !slot.is_empty());
    next
  }

  /// Evicts one ready spare of the least recently used key other than `except`, if that key was
  /// touched before `before`. Returns whether one was evicted.
  fn evict_one(&mut self, except: Option<&Key>, before: u64) -> bool {
    let victim = self
      .slots
      .iter()
      .filter(|(k, s)| Some(*k) != except && !s.ready.is_empty() && s.touched < before)
      .min_by_key(|(_, s)| s.touched)
      .map(|(k, _)| *k);
    let Some(victim) = victim else { return false };
    let slot = self.slots.get_mut(&victim).unwrap();
    let spare = slot.ready.pop_front().unwrap();
    if slot.is_empty() {
      self.slots.remove(&victim);
    }
    self.doomed.push(spare.worker);
    self.stats.evicted += 1;
    true
  }

  /// Drops queued boots and ready spares beyond the current config.
  fn shrink(&mut self) {
    let per_key = self.config.spares as usize;
    let mut evicted = 0;
    for slot in self.slots.values_mut() {
      let dropped_boots = slot.queued.min((slot.ready.len() + slot.booting + slot.queued).saturating_sub(per_key));
      slot.queued -= dropped_boots;
      while slot.ready.len() + slot.booting + slot.queued > per_key && !slot.ready.is_empty() {
        self.doomed.push(slot.ready.pop_front().unwrap().worker);
        evicted += 1;
      }
    }
    self.stats.evicted += evicted;
    while self.spare_total() > self.config.max_total as usize {
      // Queued boots go first, then ready spares of the least recently used keys.
      if let Some(slot) = self.slots.values_mut().filter(|s| s.queued > 0).min_by_key(|s| s.touched) {
        slot.queued -= 1;
        continue;
      }
      if !self.evict_one(None, u64::MAX) {
        break;
      }
    }
    let slots = &self.slots;
    self.boots.retain(|k| slots.get(k).is_some_and(|s| s.queued > 0));
    // A key may be listed more times than it has queued boots now; `next_boot` skips those.
    self.slots.retain(|_, slot| !slot.is_empty());
  }

  /// Queues boots so that `key` has `config.spares` spares ready or on the way.
  fn top_up(&mut self, key: Key, template: impl FnOnce() -> Arc<WorkerOptions>) {
    let want = self.config.spares as usize;
    if want == 0 {
      return;
    }
    self.clock += 1;
    let clock = self.clock;
    let slot = self.slots.entry(key).or_insert_with(|| Slot { ready: VecDeque::new(), booting: 0, queued: 0, touched: clock, template: template() });
    slot.touched = clock;
    let have = slot.ready.len() + slot.booting + slot.queued;
    for _ in have..want {
      self.slots.get_mut(&key).unwrap().queued += 1;
      self.boots.push_back(key);
    }
    self.slots.retain(|_, slot| !slot.is_empty());
  }

  /// The next boot the manager should start, making room under `max_total` first. `None` when
  /// there is none (or no room: every other spare belongs to a key used more recently).
  fn next_boot(&mut self) -> Option<(u64, Key, Arc<WorkerOptions>, Arc<Handoff>)> {
    while let Some(key) = self.boots.pop_front() {
      let Some(slot) = self.slots.get(&key) else { continue };
      if slot.queued == 0 {
        continue;
      }
      let touched = slot.touched;
      let in_use = self.spare_total() - self.slots.values().map(|s| s.queued).sum::<usize>();
      if in_use >= self.config.max_total as usize && !self.evict_one(Some(&key), touched) {
        let slot = self.slots.get_mut(&key).unwrap();
        slot.queued -= 1;
        if slot.is_empty() {
          self.slots.remove(&key);
        }
        continue;
      }
      let slot = self.slots.get_mut(&key).unwrap();
      slot.queued -= 1;
      slot.booting += 1;
      let template = slot.template.clone();
      let id = self.next_boot;
      self.next_boot += 1;
      let handoff = Handoff::new();
      self.booting.insert(id, Booting { key, worker: None, outcome: None, handoff: handoff.clone() });
      return Some((id, key, template, handoff));
    }
    None
  }

  /// Settles boot `id` once both its worker and its outcome are known.
  fn finish_boot(&mut self, id: u64) {
    let Some(entry) = self.booting.get(&id) else { return };
    if entry.worker.is_none() || entry.outcome.is_none() {
      return;
    }
    let Booting { key, worker, outcome, handoff } = self.booting.remove(&id).unwrap();
    let worker = worker.unwrap();
    let per_key = self.config.spares as usize;
    let Some(slot) = self.slots.get_mut(&key) else {
      // Cleared or evicted meanwhile.
      return self.doomed.push(worker);
    };
    slot.booting -= 1;
    match outcome.unwrap() {
      // Not wanted any more if pooling was turned down while it booted.
      Ok(_) if slot.ready.len() + slot.booting + slot.queued >= per_key => {
        self.stats.evicted += 1;
        self.doomed.push(worker);
      }
      Ok(format) => slot.ready.push_back(Spare { worker, format, handoff, ready_at: Instant::now() }),
      Err(_) => {
        self.stats.failed += 1;
        self.doomed.push(worker);
      }
    }
    if self.slots.get(&key).is_some_and(Slot::is_empty) {
      self.slots.remove(&key);
    }
  }
}

/// Starts the manager thread if it is not running. Called with the lock held.
fn wake_manager(state: &mut State) {
  if !state.manager_running {
    let spawned = std::thread::Builder::new().name("wb-pool".into()).spawn(manage);
    state.manager_running = spawned.is_ok();
  }
  pool().changed.notify_all();
}

enum Job {
  Boot(u64, Key, Arc<WorkerOptions>, Arc<Handoff>),
  Dispose(Vec<Worker>),
}

/// The manager thread: boots queued spares, disposes doomed and expired ones, sleeps until
/// the earliest expiry or new work, and ends when the pool has nothing left.
fn manage() {
  let pool = pool();
  let mut state = lock();
  loop {
    let next_expiry = state.expire(Instant::now());
    let quiet_from = state.last_cold.map(|at| at + BOOT_QUIET).filter(|&at| at > Instant::now());
    let job = if !state.doomed.is_empty() {
      Some(Job::Dispose(std::mem::take(&mut state.doomed)))
    } else if let (Some(at), false) = (quiet_from, state.boots.is_empty()) {
      // Creates are under way: boot once they pause.
      let wait = next_expiry.map_or(at, |expiry| expiry.min(at)).saturating_duration_since(Instant::now());
      state = pool.changed.wait_timeout(state, wait).unwrap_or_else(|p| p.into_inner()).0;
      continue;
    } else {
      state.next_boot().map(|(id, key, template, handoff)| Job::Boot(id, key, template, handoff))
    };
    let Some(job) = job else {
      if state.slots.is_empty() && state.booting.is_empty() {
        state.manager_running = false;
        pool.changed.notify_all();
        return;
      }
      state = match next_expiry {
        Some(at) => pool.changed.wait_timeout(state, at.saturating_duration_since(Instant::now())).unwrap_or_else(|p| p.into_inner()).0,
        None => pool.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
      };
      continue;
    };
    state.busy += 1;
    drop(state);
    match job {
      Job::Dispose(workers) => drop(workers),
      Job::Boot(id, _key, template, handoff) => boot(id, &template, handoff),
    }
    state = lock();
    state.busy -= 1;
    pool.changed.notify_all();
  }
}

/// Spawns spare `id` (outside the lock) and records its worker.
fn boot(id: u64, template: &WorkerOptions, handoff: Arc<Handoff>) {
  let mut options = template.clone();
  options.log = handoff.sink();
  options.stores = handoff.stores.clone();
  options.host = Some(Arc::new(ForwardHost(handoff)));
  let on_ready = Box::new(move |outcome: Result<ScriptFormat, WorkerError>| {
    // On the spare's isolate thread: record the outcome; never dispose here.
    let mut state = lock();
    if let Some(entry) = state.booting.get_mut(&id) {
      entry.outcome = Some(outcome);
      state.finish_boot(id);
      pool().changed.notify_all();
    }
  });
  let spawned = Worker::spawn(options, on_ready);
  let mut state = lock();
  match spawned {
    Ok(worker) => match state.booting.get_mut(&id) {
      Some(entry) => {
        entry.worker = Some(worker);
        state.finish_boot(id);
      }
      // Cleared meanwhile.
      None => state.doomed.push(worker),
    },
    Err(_) => {
      if let Some(entry) = state.booting.remove(&id) {
        if let Some(slot) = state.slots.get_mut(&entry.key) {
          slot.booting -= 1;
          if slot.is_empty() {
            state.slots.remove(&entry.key);
          }
        }
        state.stats.failed += 1;
      }
    }
  }
}

/// The options spares of `options`' key boot from: the same, minus the caller's sinks (a spare
/// must not keep one caller's log function or host alive).
fn template_of(options: &WorkerOptions) -> Arc<WorkerOptions> {
  let mut template = options.clone();
  template.log = Arc::new(|_, _| {});
  template.host = None;
  template.stores = Stores::default();
  Arc::new(template)
}

/// Boots spares for a script once its cold start has succeeded (a script that fails to load
/// gets none). Dropping it without calling [`Refill::start`] does nothing.
pub struct Refill {
  key: Key,
  template: Arc<WorkerOptions>,
}

impl Refill {
  pub fn start(self) {
    let mut state = lock();
    let template = self.template;
    state.top_up(self.key, move || template);
    if !state.boots.is_empty() {
      wake_manager(&mut state);
    }
  }
}

/// What [`acquire`] found.
pub enum Acquired {
  /// A ready spare, already bound to the caller's log sink and host.
  Warm(Worker, ScriptFormat),
  /// No spare: start the worker from these options as usual, and call `refill.start()` once
  /// it has loaded, so the next create of this script finds a spare.
  Cold(WorkerOptions, Option<Refill>),
}

/// Takes a ready spare for `options` if there is one (binding `options.log` and `options.host`
/// to it) and queues a replacement; otherwise hands the options back for a cold start. With
/// `pooled` false, or pooling off, it always answers `Cold` and touches nothing.
pub fn acquire(options: WorkerOptions, pooled: bool) -> Acquired {
  if !pooled {
    return Acquired::Cold(options, None);
  }
  let key = key(&options);
  let mut state = lock();
  if state.config.spares == 0 {
    return Acquired::Cold(options, None);
  }
  let spare = state.slots.get_mut(&key).and_then(|slot| slot.ready.pop_front());
  let Some(spare) = spare else {
    state.stats.misses += 1;
    // Only scripts not seen before make a burst that holds spares back (BOOT_QUIET): a script
    // created again gets its spare as soon as it is booted.
    if !state.slots.contains_key(&key) {
      state.last_cold = Some(Instant::now());
    }
    // Keep the key fresh for LRU even before its first spare exists.
    let clock = state.clock + 1;
    if let Some(slot) = state.slots.get_mut(&key) {
      slot.touched = clock;
      state.clock = clock;
    }
    drop(state);
    let template = template_of(&options);
    return Acquired::Cold(options, Some(Refill { key, template }));
  };
  state.stats.hits += 1;
  state.top_up(key, || template_of(&options));
  wake_manager(&mut state);
  drop(state);
  let WorkerOptions { log, host, stores, .. } = options;
  spare.handoff.bind(log, host, &stores);
  Acquired::Warm(spare.worker, spare.format)
}

/// [`acquire`], then a blocking cold start on a miss (for hosts without an event loop).
pub fn start_blocking(options: WorkerOptions, pooled: bool) -> Result<(Worker, ScriptFormat), WorkerError> {
  match acquire(options, pooled) {
    Acquired::Warm(worker, format) => Ok((worker, format)),
    Acquired::Cold(options, refill) => {
      let started = Worker::start_blocking(options)?;
      if let Some(refill) = refill {
        refill.start();
      }
      Ok(started)
    }
  }
}

/// Changes the pool's settings. Lowering them disposes the spares now beyond them (on the
/// manager thread); a new `idle_ms` applies to the spares already waiting too.
pub fn configure(config: PoolConfig) {
  let mut state = lock();
  state.config = config;
  state.shrink();
  if state.manager_running || !state.doomed.is_empty() {
    wake_manager(&mut state);
  }
}

pub fn config() -> PoolConfig {
  lock().config
}

pub fn stats() -> PoolStats {
  let state = lock();
  let mut stats = state.stats;
  stats.ready = state.ready_total() as u64;
  stats.booting = state.slots.values().map(|s| (s.booting + s.queued) as u64).sum();
  stats
}

/// Disposes every spare, ready or booting, and returns once their threads are joined (also
/// waiting for whatever the manager is disposing or spawning at this moment). The settings and
/// counters stay. Used at process exit (no isolate may run while Node tears down) and by tests.
pub fn clear() {
  let pool = pool();
  let mut state = lock();
  let mut workers: Vec<Worker> = std::mem::take(&mut state.doomed);
  for (_, slot) in state.slots.drain() {
    workers.extend(slot.ready.into_iter().map(|spare| spare.worker));
  }
  state.boots.clear();
  for (_, entry) in state.booting.drain() {
    workers.extend(entry.worker);
  }
  drop(state);
  // Spares still booting see their entry gone and stay with us: dispose stops their boot.
  drop(workers);
  let mut state = lock();
  while state.busy > 0 || !state.doomed.is_empty() {
    let doomed = std::mem::take(&mut state.doomed);
    if !doomed.is_empty() {
      drop(state);
      drop(doomed);
      state = lock();
      continue;
    }
    state = pool.changed.wait(state).unwrap_or_else(|p| p.into_inner());
  }
  pool.changed.notify_all();
}
