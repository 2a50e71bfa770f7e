//! The contexts of one isolate: the home context the script first loads in, and, in
//! per-request mode, a fresh context per event (built ahead while idle, retired when its work is
//! over, the isolate renewed when due).

use super::*;

/// One context with the user's script loaded, and the JS entry points the pump calls.
pub(super) struct Ctx {
  pub(super) context: v8::Global<v8::Context>,
  pub(super) dispatch_fetch: v8::Global<v8::Function>,
  pub(super) dispatch_scheduled: v8::Global<v8::Function>,
  pub(super) dispatch_queue: v8::Global<v8::Function>,
  pub(super) dispatch_rpc: v8::Global<v8::Function>,
  /// `internals.abortStalledBodies()`: errors response bodies that can never produce more.
  pub(super) abort_stalled: v8::Global<v8::Function>,
  pub(super) holds: Rc<ContextHolds>,
}

/// The contexts of one isolate.
pub(super) struct Runtime {
  /// The context the script was first loaded in. In shared mode every request runs here; in
  /// per-request mode it serves no request and is only entered for work that belongs to none.
  pub(super) home: Ctx,
  pub(super) per_request: Option<PerRequest>,
}

/// Per-request mode: a fresh context for each event, built ahead while the worker is idle.
pub(super) struct PerRequest {
  pub(super) format: ScriptFormat,
  pub(super) max_reuse: u32,
  /// The context for the next event, built while nothing else was waiting.
  pub(super) spare: Option<Ctx>,
  /// Building the spare failed; the next event builds its own (and reports the error).
  pub(super) spare_failed: bool,
  /// Contexts of started events not yet retired, by request id.
  pub(super) live: HashMap<u32, Ctx>,
  /// Contexts this isolate has handed to events.
  pub(super) served: u32,
}

impl Runtime {
  /// Every context with its script loaded: home first, then live per-request ones.
  pub(super) fn contexts(&self) -> impl Iterator<Item = &Ctx> {
    std::iter::once(&self.home).chain(self.per_request.iter().flat_map(|p| p.live.values()))
  }

  /// The context an event runs in: its own in per-request mode, else the home context.
  pub(super) fn ctx_for(&self, id: u32) -> &Ctx {
    self.per_request.as_ref().and_then(|p| p.live.get(&id)).unwrap_or(&self.home)
  }

  /// The context to enter for work done for `owner`.
  pub(super) fn context_for(&self, owner: Option<u32>) -> &v8::Global<v8::Context> {
    &owner.map_or(&self.home, |id| self.ctx_for(id)).context
  }
}


/// What the pump did with a pause in per-request mode.
pub(super) enum Idle {
  Exit(PumpExit),
  Worked,
  Nothing,
}

/// Per-request mode, when the inbox is empty: retire contexts whose work can no longer make
/// progress, renew the isolate when it is due and nothing runs, or build the next context.
pub(super) fn idle_per_request(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  monitor: &Monitor,
) -> Idle {
  let Some(per_request) = runtime.per_request.as_ref() else { return Idle::Nothing };
  // With no timer and no I/O left anywhere, nothing can settle a finished request's
  // `waitUntil` promises or body: retire those contexts too.
  let stuck = state.borrow().nothing_pending();
  if stuck && per_request.live.keys().any(|id| !state.borrow().pending.contains_key(id)) {
    if let Some(exit) = retire_contexts(runtime, state, true) {
      return Idle::Exit(exit);
    }
  }
  let Some(per_request) = runtime.per_request.as_mut() else { return Idle::Nothing };
  if per_request.served > 0 && per_request.live.is_empty() && renewal_due(per_request, state) {
    // Due and nothing runs (say, an error went uncaught in a timer of the script's top level).
    // An isolate that has served nothing is not renewed: if its own start-up tainted it, so
    // would the next one's, and renewing would only loop.
    return Idle::Exit(PumpExit::Renew);
  }
  if per_request.spare.is_some() || per_request.spare_failed || renewal_due(per_request, state) {
    return Idle::Nothing;
  }
  v8::scope!(let scope, &mut **isolate);
  match load_context(scope, options, state, Some(per_request.format), None) {
    Ok((ctx, _)) => per_request.spare = Some(ctx),
    Err(_) => per_request.spare_failed = true,
  }
  match stopped(monitor, None) {
    Some(exit) => Idle::Exit(exit),
    None => Idle::Worked,
  }
}

/// The isolate has served its share of contexts, or seen an error.
pub(super) fn renewal_due(per_request: &PerRequest, state: &StateRef) -> bool {
  per_request.served >= per_request.max_reuse || state.borrow().tainted
}

/// Per-request mode: drops the contexts of events that are over — answered, with no
/// `waitUntil` promise, body or binding call of theirs still under way (with `force`, even if
/// some `waitUntil` promise or body never finished) — and clears the timers they left behind.
/// Asks for a renewal once nothing runs and the isolate is due for one.
pub(super) fn retire_contexts(runtime: &mut Runtime, state: &StateRef, force: bool) -> Option<PumpExit> {
  let per_request = runtime.per_request.as_mut()?;
  if per_request.live.is_empty() {
    return None;
  }
  let (waiters, stuck) = {
    let mut s = state.borrow_mut();
    let over: Vec<u32> = per_request
      .live
      .iter()
      .filter(|(id, ctx)| {
        !s.pending.contains_key(id) && (force || (ctx.holds.idle() && !s.host_calls.values().any(|(_, owner, _)| *owner == Some(**id))))
      })
      .map(|(id, _)| *id)
      .collect();
    let mut stuck = 0;
    for id in over {
      let Some(ctx) = per_request.live.remove(&id) else { continue };
      s.drop_timers_of(id);
      s.host_calls.retain(|_, (_, owner, _)| *owner != Some(id));
      // `waitUntil` promises of a dropped context will never report back.
      let waits = ctx.holds.waits.get();
      s.background = s.background.saturating_sub(waits);
      stuck += waits;
    }
    (s.settled_waiters_if_idle(), stuck)
  };
  warn_unsettled(state, stuck);
  waiters.into_iter().for_each(|w| w());
  let per_request = runtime.per_request.as_ref()?;
  (per_request.live.is_empty() && renewal_due(per_request, state)).then_some(PumpExit::Renew)
}
