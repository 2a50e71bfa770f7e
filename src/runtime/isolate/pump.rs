//! The message loop of the isolate thread: admits events (FIFO, bounded), starts them, turns
//! scheduler results into JS calls, each followed by a microtask checkpoint, runs V8's posted
//! tasks, and answers work that can never finish.

use super::*;

/// The message loop. Returns on shutdown or when every sender is gone.
pub(super) fn pump(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  inbox: &Receiver<IsolateMessage>,
  events: &mut EventQueue,
  monitor: &Monitor,
) -> PumpExit {
  // Timers handed over slightly early, waiting for their exact deadline (in deadline order).
  let mut early: VecDeque<(u32, Instant)> = VecDeque::new();
  // Between bursts of messages the thread polls its inbox briefly before it sleeps.
  let mut idle = crate::runtime::handoff::IdleSpin::default();
  loop {
    state.borrow_mut().arm_deadlines(false);
    // `queued`: the message is a timer taken from `early`, already in its place.
    let (message, queued) = if let Some(&(id, due)) = early.front().filter(|&&(_, due)| due <= Instant::now()) {
      // A timer handed over early is due now (the thread may have woken late): it fires before
      // anything that arrived in the meantime, so timers never overtake each other.
      early.pop_front();
      (IsolateMessage::Callback(CallbackMessage::TimerFired { id, due }), true)
    } else if let Some(&(id, due)) = early.front() {
      // A timer is about to be due: wait for the next message, but no longer than that.
      state.borrow_mut().arm_deadlines(true);
      match inbox.recv_timeout(due.saturating_duration_since(Instant::now())) {
        Ok(message) => (message, false),
        Err(RecvTimeoutError::Timeout) => {
          early.pop_front();
          (IsolateMessage::Callback(CallbackMessage::TimerFired { id, due }), true)
        }
        Err(RecvTimeoutError::Disconnected) => return PumpExit::Shutdown,
      }
    } else {
      let message = match inbox.try_recv() {
        Ok(message) => message,
        Err(TryRecvError::Disconnected) => return PumpExit::Shutdown,
        Err(TryRecvError::Empty) => {
          // Nothing is queued. Per-request mode uses the pause to retire finished contexts,
          // renew the isolate when due, and build the next request's context ahead.
          // Response bodies that can never produce more error the host's read (first, before
          // per-request mode retires the contexts they belong to).
          if abort_stalled_bodies(isolate, runtime, state, events) {
            continue;
          }
          match idle_per_request(isolate, runtime, options, state, monitor) {
            Idle::Exit(exit) => return exit,
            // That took a while: look at the inbox again before sleeping.
            Idle::Worked => continue,
            Idle::Nothing => {}
          }
          // Before sleeping, fail what nothing can ever settle; wake up to look again when an
          // event that looks hung has looked so for long enough (timer id 0 is no timer).
          if let Some(at) = fail_hung_work(state, events) {
            let pos = early.partition_point(|&(_, d)| d <= at);
            early.insert(pos, (0, at));
            continue;
          }
          // A large main script's code cache entry, once the worker has been up a moment.
          let deferred = modules::deferred_entries_due(isolate);
          if deferred.is_some_and(|due| due <= Instant::now()) {
            with_registry(isolate, runtime, modules::store_deferred_entries);
            continue;
          }
          state.borrow_mut().arm_deadlines(true);
          let received = match deferred {
            Some(due) => match inbox.recv_timeout(due.saturating_duration_since(Instant::now())) {
              Err(RecvTimeoutError::Timeout) => continue,
              other => other.map_err(|_| ()),
            },
            None => idle.recv(inbox, !monitor.concurrent_callers.load(std::sync::atomic::Ordering::Relaxed)).map_err(|_| ()),
          };
          match received {
            Ok(message) => message,
            Err(()) => return PumpExit::Shutdown,
          }
        }
      };
      (message, false)
    };
    let message = match message {
      // Not yet due, or due after a timer still waiting here: keep deadline order (equal
      // deadlines stay in creation, that is arrival, order).
      IsolateMessage::Callback(CallbackMessage::TimerFired { id, due }) if !queued && (due > Instant::now() || early.front().is_some_and(|&(_, d)| d <= due)) => {
        let at = early.partition_point(|&(_, d)| d <= due);
        early.insert(at, (id, due));
        continue;
      }
      message => message,
    };
    match message {
      IsolateMessage::Shutdown => return PumpExit::Shutdown,
      IsolateMessage::Inspector => {
        let inspector = state.borrow().inspector.clone();
        if let Some(inspector) = inspector {
          // Protocol messages run in the worker's context, with microtasks after them
          // (Runtime.evaluate with awaitPromise, for one).
          v8::scope!(let scope, isolate);
          let context = v8::Local::new(scope, &runtime.home.context);
          let scope = &mut v8::ContextScope::new(scope, context);
          if inspector.drain() {
            scope.perform_microtask_checkpoint();
          }
        }
      }
      IsolateMessage::Dispatch(event) => events.admit(state, event),
      IsolateMessage::WhenSettled(reply) => {
        let mut s = state.borrow_mut();
        s.settled_waiters.push(reply);
        let ready = s.settled_waiters_if_idle();
        drop(s);
        ready.into_iter().for_each(|r| r());
      }
      IsolateMessage::Callback(CallbackMessage::DeadlineReached { id }) => {
        // Once a debugger has attached, pauses are wall time: the wall-clock limit no longer applies.
        let debugged = state.borrow().monitor.debugging.load(std::sync::atomic::Ordering::SeqCst);
        let pending = if debugged { None } else { state.borrow_mut().pending.remove(&id) };
        if let Some(pending) = pending {
          let ms = state.borrow().limits.wall_ms;
          pending.fail(WorkerError::runtime(
            "ERR_WALL_LIMIT",
            format!("The request exceeded its wall-clock limit of {ms} ms (limits.wallMs) without responding."),
          ));
        }
      }
      IsolateMessage::Callback(CallbackMessage::HostCallDone { id, result }) => {
        let call = state.borrow_mut().host_calls.remove(&id);
        if let Some((resolver, owner, _charge)) = call {
          let outcome = run_macrotask(isolate, runtime.context_for(owner), state, owner, |scope| {
            let resolver = v8::Local::new(scope, resolver);
            // The answer's arrays and errors belong to the context that made the call.
            let promise = resolver.get_promise(scope);
            let Some(context) = promise.get_creation_context(scope) else { return Some(()) };
            let scope = &mut v8::ContextScope::new(scope, context);
            match result {
              Ok(answer) => {
                let json = ops::new_string(scope, &answer.json).into();
                let bytes = match answer.bytes {
                  Some(bytes) => ops::uint8_array_from(scope, bytes).into(),
                  None => v8::null(scope).into(),
                };
                let value = v8::Array::new_with_elements(scope, &[json, bytes]);
                resolver.resolve(scope, value.into())
              }
              Err(error) => {
                let message = ops::new_string(scope, &error.message);
                let exception = match error.name.as_str() {
                  "TypeError" => v8::Exception::type_error(scope, message),
                  "RangeError" => v8::Exception::range_error(scope, message),
                  _ => v8::Exception::error(scope, message),
                };
                if let Ok(object) = v8::Local::<v8::Object>::try_from(exception) {
                  let key = ops::new_string(scope, "name");
                  let name = ops::new_string(scope, &error.name);
                  object.set(scope, key.into(), name.into());
                }
                resolver.reject(scope, exception)
              }
            }
            .map(|_| ())
          });
          if let Err(error) = outcome {
            log_uncaught(state, &error.stack);
          }
        }
      }
      IsolateMessage::Callback(CallbackMessage::TimerFired { id, .. }) => {
        let callback = {
          let mut s = state.borrow_mut();
          let rearm = s.timers.get(&id).and_then(|t| t.repeat);
          match rearm {
            Some(delay) => {
              let _ = s.scheduler.send(SchedulerMessage::StartTimer { id, delay });
              s.timers.get(&id).map(|t| (t.callback.clone(), t.owner))
            }
            None => s.timers.remove(&id).map(|t| (t.callback, t.owner)),
          }
        };
        if let Some((callback, owner)) = callback {
          let outcome = run_macrotask(isolate, runtime.context_for(owner), state, owner, |scope| {
            let f = v8::Local::new(scope, &callback);
            let recv = v8::undefined(scope).into();
            f.call(scope, recv, &[]).map(|_| ())
          });
          let stopped = state.borrow().monitor.stop_pending();
          if let (Err(error), false) = (outcome, stopped) {
            log_uncaught(state, &error.stack);
          }
        }
      }
    }
    if let Some(exit) = stopped(monitor, state.borrow_mut().cpu_culprit.take()) {
      return exit;
    }
    // Start whatever the limits allow, oldest first.
    while let Some(event) = events.next_startable(state) {
      let id = start_event(isolate, runtime, options, state, events, event);
      let culprit = state.borrow_mut().cpu_culprit.take().or(Some(id));
      if let Some(exit) = stopped(monitor, culprit) {
        return exit;
      }
    }
    run_platform_tasks(isolate, runtime, state);
    if let Some(exit) = stopped(monitor, state.borrow_mut().cpu_culprit.take()) {
      return exit;
    }
    if let Some(exit) = retire_contexts(runtime, state, false) {
      return exit;
    }
  }
}



/// Events waiting for a free slot (FIFO), and request ids.
#[derive(Default)]
pub(super) struct EventQueue {
  pub(super) waiting: VecDeque<Event>,
  pub(super) next_id: u32,
  /// Running events that hang on their own (see [`fail_hung_work`]): fetch events and calls into
  /// an entrypoint, not calls on an object passed by reference or into a Durable Object (whose
  /// work may be another event's, as it shares workerd's context with it). Pruned lazily.
  pub(super) hang_checked: std::collections::HashSet<u32>,
  /// Checked events found with nothing of their own left, since when (see [`HANG_GRACE`]).
  pub(super) hang_since: HashMap<u32, Instant>,
}

impl Drop for EventQueue {
  /// However the loop ends, nothing that was accepted goes unanswered.
  fn drop(&mut self) {
    for event in self.waiting.drain(..) {
      event.fail(WorkerError::Disposed("the worker was disposed before the request started".into()));
    }
  }
}

impl EventQueue {
  /// Queues an event, or fails it at once when the queue is full.
  fn admit(&mut self, state: &StateRef, event: Event) {
    let max_queued = state.borrow().limits.max_queued as usize;
    if self.waiting.len() >= max_queued {
      event.fail(WorkerError::runtime(
        "ERR_OVERLOADED",
        format!("The worker is overloaded: {max_queued} requests are already waiting (limits.maxQueued)."),
      ));
    } else {
      self.waiting.push_back(event);
    }
  }

  fn next_startable(&mut self, state: &StateRef) -> Option<Event> {
    let s = state.borrow();
    if s.pending.len() < s.limits.max_in_flight as usize {
      self.waiting.pop_front()
    } else {
      None
    }
  }
}

/// What a started event hands its JS entry point.
pub(super) enum EntryCall {
  Fetch(RequestData),
  Scheduled(ScheduledEvent),
  Queue(crate::runtime::queue::QueueEvent),
  Rpc(crate::runtime::rpc::RpcEvent),
}

/// Registers an event as running and calls its JS entry point. Returns the event's request id.
pub(super) fn start_event(
  isolate: &mut v8::OwnedIsolate,
  runtime: &mut Runtime,
  options: &WorkerOptions,
  state: &StateRef,
  events: &mut EventQueue,
  event: Event,
) -> u32 {
  events.next_id = events.next_id.wrapping_add(1).max(1);
  let id = events.next_id;
  let (checked, timed) = match &event {
    Event::Fetch { .. } => (true, true),
    Event::Rpc { event, .. } => rpc_event_kind(&event.call_json),
    _ => (false, true),
  };
  {
    let mut s = state.borrow_mut();
    if s.limits.wall_ms > 0 && timed {
      // Armed only if the event outlasts this turn (IsolateState::arm_deadlines).
      s.unarmed_deadlines.push((id, Instant::now()));
    }
  }
  if checked {
    events.hang_checked.insert(id);
  }
  let (pending, call) = match event {
    Event::Fetch { request, reply } => (Pending::Fetch(reply), EntryCall::Fetch(request)),
    Event::Scheduled { event, reply } => (Pending::Scheduled(reply), EntryCall::Scheduled(event)),
    Event::Queue { event, reply } => (Pending::Queue(reply), EntryCall::Queue(event)),
    Event::Rpc { event, reply } => (Pending::Rpc(reply), EntryCall::Rpc(event)),
  };
  state.borrow_mut().pending.insert(id, pending);
  // Per-request mode: the event gets the context built ahead, or one built now.
  if let Some(per_request) = runtime.per_request.as_mut() {
    let ctx = match per_request.spare.take() {
      Some(ctx) => Ok(ctx),
      None => {
        v8::scope!(let scope, &mut **isolate);
        load_context(scope, options, state, Some(per_request.format), Some(id)).map(|(ctx, _)| ctx)
      }
    };
    per_request.served += 1;
    per_request.spare_failed = false;
    match ctx {
      Ok(ctx) => {
        per_request.live.insert(id, ctx);
      }
      Err(error) => {
        // A limit stopped the script: the loop answers every request when it ends the isolate.
        if !state.borrow().monitor.stop_pending() {
          let pending = state.borrow_mut().take_pending(id);
          state.borrow_mut().tainted = true;
          if let Some(pending) = pending {
            pending.fail(error);
          }
        }
        return id;
      }
    }
  }
  let ctx = runtime.ctx_for(id);
  let outcome = run_macrotask(isolate, &ctx.context, state, Some(id), |scope| {
    let (entry, args) = match call {
      EntryCall::Fetch(request) => (&ctx.dispatch_fetch, request_args(scope, id, request).to_vec()),
      EntryCall::Scheduled(event) => (&ctx.dispatch_scheduled, scheduled_args(scope, id, event).to_vec()),
      EntryCall::Queue(event) => (&ctx.dispatch_queue, crate::runtime::ops::queue_args(scope, id, event).to_vec()),
      EntryCall::Rpc(event) => (&ctx.dispatch_rpc, crate::runtime::ops::rpc_args(scope, id, event).to_vec()),
    };
    let f = v8::Local::new(scope, entry);
    let recv = v8::undefined(scope).into();
    f.call(scope, recv, &args).map(|_| ())
  });
  // The JS entry points report handler errors themselves; an error escaping them (termination,
  // or a bug in the bootstrap) must still answer the event.
  if let Err(error) = outcome {
    // Stopped by a limit or dispose: the loop answers every request when it ends this isolate.
    if !state.borrow().monitor.stop_pending() {
      let pending = state.borrow_mut().take_pending(id);
      if let Some(pending) = pending {
        pending.fail(WorkerError::Js(error));
      }
    }
  }
  id
}

/// How long an event must have had nothing of its own left (while other running events had work)
/// before it is failed as hung: an answer on its way through the host (a call another request
/// made, whose result the event awaits) leaves the isolate idle for that long at most.
const HANG_GRACE: Duration = Duration::from_millis(500);

/// workerd's message for a request it canceled because nothing of its own was left to settle it.
const HUNG: &str = "The Workers runtime canceled this request because it detected that your Worker's code had hung and would never generate a response. Refer to: https://developers.cloudflare.com/workers/observability/errors/";

/// What an RPC event into this worker is: (whether its own pending work is tracked, whether
/// `limits.wallMs` bounds it). Tracked: a call, fetch or connect into an entrypoint, not a call
/// on an exported object, a Durable Object's event, or the host's own messages (WebSocket
/// events, body cancels, disposals). A connect event (a connect handler's connection) has no
/// wall-clock limit, as in workerd: it lasts as long as its connection (the CPU limit and the
/// hang check still apply).
fn rpc_event_kind(call_json: &str) -> (bool, bool) {
  let Ok(call) = serde_json::from_str::<serde_json::Value>(call_json) else { return (false, true) };
  let kind = call.get("kind").and_then(|k| k.as_str()).unwrap_or("");
  let own = matches!(kind, "call" | "get" | "fetch" | "connect") && call.get("stub").is_none() && call.get("durableObject").is_none();
  (own, kind != "connect")
}

/// Events whose handler promise is still pending while the worker has no timer or binding
/// call left that could settle it will never finish (production Workers says the
/// same). Answer them now instead of letting the host wait forever. Likewise release whoever
/// waits for `waitUntil` work that can no longer settle. While other work is still under way,
/// an event with none of its own left (no timer it set, no binding call, fetch or RPC call it
/// made) is canceled with workerd's "hung" error, as workerd does per request, once it has
/// been so for [`HANG_GRACE`]. Returns when to look again, if such an event is waiting for that.
pub(super) fn fail_hung_work(state: &StateRef, events: &mut EventQueue) -> Option<Instant> {
  if !events.waiting.is_empty() {
    return None;
  }
  if !state.borrow().nothing_pending() {
    return fail_hung_events(state, events);
  }
  let (hung, stuck_background, waiters) = {
    let mut s = state.borrow_mut();
    let hung: Vec<Pending> = s.pending.drain().map(|(_, p)| p).collect();
    let stuck = if s.background > 0 && !s.settled_waiters.is_empty() { std::mem::take(&mut s.background) } else { 0 };
    (hung, stuck, s.settled_waiters_if_idle())
  };
  events.hang_checked.clear();
  events.hang_since.clear();
  for pending in hung {
    pending.fail(WorkerError::runtime(
      "ERR_NEVER_RESPONDS",
      "The worker's handler will never respond: its promise is still pending, but no timer, I/O or binding call is left that could settle it.",
    ));
  }
  warn_unsettled(state, stuck_background);
  waiters.into_iter().for_each(|w| w());
  None
}

/// The per-event half of [`fail_hung_work`]: fails the checked events that own no pending
/// timer or I/O while only other running events do. Work of an event that has already answered
/// (its `waitUntil` work, a stream it handed out) or of no event may settle anyone's promise, as
/// workerd lets a request wait on another context's background work: then nothing is failed.
fn fail_hung_events(state: &StateRef, events: &mut EventQueue) -> Option<Instant> {
  let now = Instant::now();
  let mut again = None;
  let hung: Vec<Pending> = {
    let mut s = state.borrow_mut();
    events.hang_checked.retain(|id| s.pending.contains_key(id));
    if events.hang_checked.is_empty() {
      events.hang_since.clear();
      return None;
    }
    let owners = s.timers.values().filter(|t| !t.internal).map(|t| t.owner).chain(s.host_calls.values().map(|(_, owner, _)| *owner));
    let mut busy = std::collections::HashSet::new();
    for owner in owners {
      match owner {
        Some(id) if s.pending.contains_key(&id) => {
          busy.insert(id);
        }
        _ => {
          events.hang_since.clear();
          return None;
        }
      }
    }
    let candidates: Vec<u32> = events.hang_checked.iter().copied().filter(|id| !busy.contains(id)).collect();
    events.hang_since.retain(|id, _| candidates.contains(id));
    let mut hung = Vec::new();
    for id in candidates {
      let since = *events.hang_since.entry(id).or_insert(now);
      if now.duration_since(since) >= HANG_GRACE {
        events.hang_checked.remove(&id);
        events.hang_since.remove(&id);
        hung.extend(s.take_pending(id));
      } else {
        let at = since + HANG_GRACE;
        again = Some(again.map_or(at, |t: Instant| t.min(at)));
      }
    }
    hung
  };
  for pending in hung {
    pending.fail(WorkerError::runtime("ERR_NEVER_RESPONDS", HUNG));
  }
  again
}

/// Response bodies still being written to the host while the worker has no timer, binding call
/// or queued event left can never produce another chunk: error them (the host's reader gets
/// the error) instead of leaving the host's read hanging. Returns whether any was stopped.
pub(super) fn abort_stalled_bodies(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef, events: &EventQueue) -> bool {
  if !state.borrow().nothing_pending() || !events.waiting.is_empty() {
    return false;
  }
  let mut aborted = 0;
  for ctx in runtime.contexts().filter(|ctx| ctx.holds.pumps.get() > 0) {
    let outcome = run_macrotask(isolate, &ctx.context, state, None, |scope| {
      let f = v8::Local::new(scope, &ctx.abort_stalled);
      let recv = v8::undefined(scope).into();
      let count = f.call(scope, recv, &[])?;
      aborted += count.uint32_value(scope).unwrap_or(0);
      Some(())
    });
    if let Err(error) = outcome {
      log_uncaught(state, &error.stack);
    }
  }
  // Only a pump that was stopped has more to do now; otherwise sleep as usual.
  aborted > 0
}

/// Tells the host that `count` `waitUntil` promises were given up on.
pub(super) fn warn_unsettled(state: &StateRef, count: u32) {
  if count > 0 {
    let sink = state.borrow().log.clone();
    sink(LogLevel::Warn, format!("{count} ctx.waitUntil() promise(s) will never settle: nothing is left that could settle them."));
  }
}

/// Runs the tasks V8 posted for this isolate during the turn (FinalizationRegistry cleanup,
/// Atomics.waitAsync wake-ups, …) without blocking, then the microtasks they queued.
pub(super) fn run_platform_tasks(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, state: &StateRef) {
  let context = &runtime.home.context;
  let platform = platform::init_v8();
  let mut ran = false;
  while v8::Platform::pump_message_loop(platform, isolate, false) {
    ran = true;
  }
  if ran {
    let _ = run_macrotask(isolate, context, state, None, |_| Some(()));
  }
}

/// Runs one macrotask, then the microtask checkpoint, and logs unhandled rejections. Returns
/// what the task itself threw, if anything.
pub(super) fn run_macrotask(
  isolate: &mut v8::OwnedIsolate,
  context: &v8::Global<v8::Context>,
  state: &StateRef,
  owner: Option<u32>,
  task: impl FnOnce(&mut v8::PinScope) -> Option<()>,
) -> Result<(), JsErrorInfo> {
  begin_turn(state, owner);
  v8::scope_with_context!(let scope, isolate, context);
  // Every macrotask starts with no AsyncLocalStorage frame; timers restore their own.
  let none = v8::undefined(scope).into();
  scope.set_continuation_preserved_embedder_data(none);
  v8::tc_scope!(let tc, scope);
  let mut outcome = match task(tc) {
    Some(()) => Ok(()),
    None => Err(thrown(tc)),
  };
  // process.exit() (ops.exitRequest) ended one request's JS: the termination is cancelled once
  // the stack has unwound (it is no uncaught error: the request has its answer), and the rest of
  // the turn's microtasks run.
  if ops::take_exit() {
    tc.cancel_terminate_execution();
    outcome = Ok(());
  }
  tc.perform_microtask_checkpoint();
  if ops::take_exit() {
    tc.cancel_terminate_execution();
    tc.perform_microtask_checkpoint();
  }
  report_rejections(tc, state);
  end_turn(state);
  outcome
}

/// Reports the promises rejected with no handler during the turn: an `unhandledrejection`
/// event at the global scope of the promise's context, then "Uncaught (in promise) …" unless a
/// handler called preventDefault(); and a `rejectionhandled` event for a reported promise that
/// got a handler since. The handlers' own microtasks run in between, and may reject more
/// promises: those are reported in the next round (a bounded number of rounds; after that,
/// rejections are only logged).
pub(super) fn report_rejections(scope: &mut v8::PinScope, state: &StateRef) {
  const ROUNDS: usize = 8;
  for round in 0.. {
    let (unhandled, late) = {
      let mut s = state.borrow_mut();
      (std::mem::take(&mut s.unhandled), std::mem::take(&mut s.handled_late))
    };
    if unhandled.is_empty() && late.is_empty() {
      return;
    }
    let events = round < ROUNDS && !scope.is_execution_terminating() && !state.borrow().monitor.stop_pending();
    for (promise, reason) in unhandled {
      let promise = v8::Local::new(scope, promise);
      let reason = v8::Local::new(scope, reason);
      if !events || rejection_event(scope, "unhandledrejection", promise, reason) {
        let error = describe_exception(scope, reason, None);
        log_uncaught(state, &format!("(in promise) {}", error.stack));
      }
    }
    if events {
      for promise in late {
        let promise = v8::Local::new(scope, promise);
        let reason = v8::undefined(scope).into();
        rejection_event(scope, "rejectionhandled", promise, reason);
      }
      scope.perform_microtask_checkpoint();
    }
  }
}

/// Calls the rejection hook of `promise`'s context. Returns whether the rejection is to be
/// logged: true unless the hook ran and a handler called preventDefault().
fn rejection_event(scope: &mut v8::PinScope, kind: &str, promise: v8::Local<v8::Promise>, reason: v8::Local<v8::Value>) -> bool {
  let Some(context) = promise.get_creation_context(scope) else { return true };
  let Some(holds) = context.get_slot::<ContextHolds>() else { return true };
  let Some(hook) = holds.rejection_hook.borrow().clone() else { return true };
  let scope = &mut v8::ContextScope::new(scope, context);
  v8::tc_scope!(let tc, scope);
  let hook = v8::Local::new(tc, hook);
  let recv = v8::undefined(tc).into();
  let kind = ops::new_string(tc, kind).into();
  match hook.call(tc, recv, &[kind, promise.into(), reason]) {
    Some(log) => log.boolean_value(tc),
    None => true,
  }
}

pub(super) fn log_uncaught(state: &StateRef, text: &str) {
  let sink = {
    let mut s = state.borrow_mut();
    s.tainted = true;
    s.log.clone()
  };
  sink(LogLevel::Error, format!("Uncaught {text}"));
}

/// `internals.dispatchScheduled(id, cron, scheduledTime)` arguments.
pub(super) fn scheduled_args<'s>(scope: &mut v8::PinScope<'s, '_>, id: u32, event: ScheduledEvent) -> [v8::Local<'s, v8::Value>; 3] {
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    ops::new_string(scope, &event.cron).into(),
    v8::Number::new(scope, event.scheduled_time).into(),
  ]
}

/// `internals.dispatchFetch(id, method, url, flatHeaders, body, cfJson)` arguments; `body` is
/// null, a Uint8Array, or the id of a host body stream; `cfJson` is the host's `request.cf` as
/// JSON, or undefined.
pub(super) fn request_args<'s>(scope: &mut v8::PinScope<'s, '_>, id: u32, request: RequestData) -> [v8::Local<'s, v8::Value>; 6] {
  let flat: Vec<&str> = request.headers.iter().flat_map(|(k, v)| [k.as_str(), v.as_str()]).collect();
  let headers = ops::string_array(scope, &flat);
  let body: v8::Local<v8::Value> = match request.body {
    Body::Empty => v8::null(scope).into(),
    Body::Bytes(bytes) => ops::uint8_array_from(scope, bytes).into(),
    // A streamed body arrives as its id; the JS side pulls it from the host.
    Body::Stream(stream) => v8::Integer::new_from_unsigned(scope, stream).into(),
  };
  let cf: v8::Local<v8::Value> = match &request.cf {
    Some(json) => ops::new_string(scope, json).into(),
    None => v8::undefined(scope).into(),
  };
  [
    v8::Integer::new_from_unsigned(scope, id).into(),
    ops::new_string(scope, &request.method).into(),
    ops::new_string(scope, &request.url).into(),
    headers.into(),
    body,
    cf,
  ]
}

/// Runs `make` (which makes code cache entries: `modules::store_deferred_entries`, or
/// `modules::refresh_code_caches` at shutdown) in the worker's home context, with its registry.
pub(super) fn with_registry(isolate: &mut v8::OwnedIsolate, runtime: &Runtime, make: impl FnOnce(&mut v8::PinScope, &modules::RegistryRef)) {
  v8::scope!(let scope, &mut **isolate);
  let context = v8::Local::new(scope, &runtime.home.context);
  let scope = &mut v8::ContextScope::new(scope, context);
  if let Some(registry) = scope.get_slot::<modules::RegistryRef>().cloned() {
    make(scope, &registry);
  }
}
