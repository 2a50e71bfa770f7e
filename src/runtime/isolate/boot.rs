//! Booting an isolate: creating it with the worker's limits and callbacks, running the JS
//! bootstrap (or taking it from the startup snapshot), and loading the user's script into a
//! context whose entry points the pump calls.

use super::*;

/// Creates an isolate with the worker's heap and ArrayBuffer limits and our callbacks.
pub(super) fn new_isolate(options: &WorkerOptions, monitor: &Arc<Monitor>) -> (v8::OwnedIsolate, Arc<allocator::BufferBudget>) {
  let bytes = options.limits.memory_mb as usize * 1024 * 1024;
  let (buffers, budget) = allocator::capped(bytes);
  let params = v8::CreateParams::default()
    // V8's own limit sits well above `memoryMb`: a single allocation that does not fit under
    // V8's limit aborts the process with no callback (see `limits::HARD_LIMIT_EXTRA`); the
    // worker's limit is enforced after each full GC instead (`limits::after_full_gc`).
    .heap_limits(0, bytes + HARD_LIMIT_EXTRA)
    // V8's first full GC comes when the old generation reaches this size (by default a quarter
    // of that limit, 256 MB or more). Memory a built-in allocates straight into the old
    // generation (a dictionary array's table growing) triggers no young-generation GC either,
    // so the worker's limit (checked after each full GC) was only seen near there:
    // `new Array(1e9).fill(0)` under memoryMb 64 grew the host by about 580 MB before it was
    // stopped. From `memoryMb` on, the first full GC finds the heap over the limit.
    .set_initial_old_generation_size_in_bytes(bytes)
    .array_buffer_allocator(buffers.make_shared());
  let params = snapshot::starting_from(params, snapshot::startup_snapshot(options.code_cache_dir.as_deref().filter(|_| options.code_cache)));
  monitor.begin_isolate();
  let mut isolate = v8::Isolate::new(params);
  monitor.set_handle(Some(isolate.thread_safe_handle()));
  // Near the heap limit V8 would abort the whole process; stop the script instead and give the
  // heap a little room to unwind. The monitor (an Arc held by this thread) outlives the isolate.
  isolate.add_near_heap_limit_callback(near_heap_limit, Arc::as_ptr(monitor) as *mut c_void);
  monitor.set_heap_soft_limit(bytes);
  isolate.add_gc_epilogue_callback(after_full_gc, Arc::as_ptr(monitor) as *mut c_void, v8::GCType::kGCTypeMarkSweepCompact);
  isolate.add_gc_epilogue_callback(after_young_gc, Arc::as_ptr(monitor) as *mut c_void, v8::GCType::kGCTypeScavenge | v8::GCType::kGCTypeMinorMarkSweep);
  isolate.set_microtasks_policy(v8::MicrotasksPolicy::Explicit);
  // The isolate thread serves every request of the worker: blocking it is refused, as in
  // production (`Atomics.wait` throws a TypeError; `Atomics.waitAsync` still works).
  isolate.set_allow_atomics_wait(false);
  isolate.set_promise_reject_callback(on_promise_reject);
  isolate.set_prepare_stack_trace_callback(prepare_stack_trace);
  // No detailed stack trace is captured for every error made: that costs source positions of each
  // function on the stack, and V8 reparses a function to collect them (the whole 2 MB module
  // body of a bundle whose top level makes and catches one error: about a third of Remix's
  // cold start). `.stack` is still captured and formatted when read; V8's inspector turns
  // detailed capture on for its own sessions. workerd likewise keeps it off after start-up
  // without an inspector.
  isolate.set_capture_stack_trace_for_uncaught_exceptions(false, 0);
  isolate.set_host_import_module_dynamically_callback(modules::import_dynamically);
  isolate.set_host_initialize_import_meta_object_callback(modules::init_import_meta);
  isolate.set_host_import_module_with_phase_dynamically_callback(crate::runtime::modules::source::import_source_dynamically);
  isolate.set_modify_code_generation_from_strings_callback(code_from_strings);
  (isolate, budget)
}

/// What `new Function()` with no arguments compiles (V8's CreateDynamicFunction): no code of the caller's.
const EMPTY_FUNCTION_SOURCE: &str = "(function anonymous(\n) {\n\n})";

/// V8 asks this when a context that disallows code generation compiles a string, and for any
/// eval/Function source that is not a string. As workerd: `new Function()` (and a class extending
/// Function, constructed with no arguments) is allowed, since it holds no code of the caller's
/// (V8 calls that source "code like": it had no argument that is not); other strings, that same
/// text given to eval included, are refused (V8 then throws its EvalError). So is a source that is
/// not a string (`eval(5)`, as workerd refuses it) other than undefined (`eval()`, which workerd
/// answers with undefined), unless the context allows code generation: then it goes back
/// unchanged, as eval gives it.
fn code_from_strings<'s>(scope: &mut v8::PinScope<'s, '_>, source: v8::Local<'s, v8::Value>, is_code_like: bool) -> v8::ModifyCodeGenerationFromStringsResult<'s> {
  let allowed = source.is_undefined()
    || scope.get_current_context().is_code_generation_from_strings_allowed()
    || (is_code_like && source.is_string() && source.to_rust_string_lossy(scope) == EMPTY_FUNCTION_SOURCE);
  v8::ModifyCodeGenerationFromStringsResult { codegen_allowed: allowed, modified_source: None }
}

/// Formats an error's stack through its context's `internals.formatStack` (src/js/04_stack_traces.js),
/// which leaves the runtime's own frames out. An exception it throws (a script's own
/// `Error.prepareStackTrace` may) stays pending, and V8 then ignores the value returned here.
fn prepare_stack_trace<'s>(scope: &mut v8::PinScope<'s, '_>, error: v8::Local<'s, v8::Value>, sites: v8::Local<'s, v8::Array>) -> v8::Local<'s, v8::Value> {
  let context = scope.get_current_context();
  let formatter = context.get_slot::<ContextHolds>().and_then(|holds| holds.stack_formatter.borrow().clone());
  let Some(formatter) = formatter else {
    // A context without the bootstrap's formatter (none is made so today): the header alone.
    return error.to_string(scope).map_or_else(|| v8::undefined(scope).into(), Into::into);
  };
  let formatter = v8::Local::new(scope, formatter);
  let recv = v8::undefined(scope).into();
  formatter.call(scope, recv, &[error, sites.into()]).unwrap_or_else(|| v8::undefined(scope).into())
}

pub(super) extern "C" fn on_promise_reject(message: v8::PromiseRejectMessage) {
  // SAFETY: V8 calls this synchronously on the isolate thread with a context entered.
  v8::callback_scope!(unsafe let scope, &message);
  let promise = message.get_promise();
  let state = ops::state(scope);
  match message.get_event() {
    v8::PromiseRejectEvent::PromiseRejectWithNoHandler => {
      let reason = message.get_value().unwrap_or_else(|| v8::undefined(scope).into());
      let entry = (v8::Global::new(scope, promise), v8::Global::new(scope, reason));
      state.borrow_mut().unhandled.push(entry);
      // Before unhandled_rejection_after_microtask_checkpoint: report from a microtask.
      let queue = state.borrow().early_rejections == Some(false);
      if queue {
        if let Some(report) = v8::Function::new(scope, report_from_microtask) {
          state.borrow_mut().early_rejections = Some(true);
          scope.enqueue_microtask(report);
        }
      }
    }
    v8::PromiseRejectEvent::PromiseHandlerAddedAfterReject => {
      let promise = v8::Global::new(scope, promise);
      let mut s = state.borrow_mut();
      let before = s.unhandled.len();
      s.unhandled.retain(|(p, _)| *p != promise);
      // Not waiting to be reported: it may have been reported already (rejectionhandled).
      if s.unhandled.len() == before {
        s.handled_late.push(promise);
      }
    }
    _ => {}
  }
}

/// The microtask that reports rejections early (see `IsolateState::early_rejections`).
fn report_from_microtask<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  let state = ops::state(scope);
  state.borrow_mut().early_rejections = Some(false);
  super::pump::report_rejections(scope, &state);
}

/// Loads the user's script in the isolate's first context (its home) and finds the entry points.
pub(super) fn boot(isolate: &mut v8::OwnedIsolate, options: &WorkerOptions, state: &StateRef) -> Result<(Ctx, ScriptFormat), WorkerError> {
  v8::scope!(let scope, isolate);
  let loaded = load_context(scope, options, state, options.format, None);
  match state.borrow().monitor.take_stop() {
    Some(StopReason::Dispose) => Err(WorkerError::Disposed("the worker was disposed while its script loaded".into())),
    Some(reason) => Err(limit_error(reason, &options.limits, true)),
    None => loaded,
  }
}

/// Creates a context (from the startup snapshot, or by running the bootstrap), runs the user's
/// script in it, hands it the bindings, and finds its entry points. The script's top level runs
/// under the CPU watchdog, charged to `owner`.
pub(super) fn load_context(
  scope: &mut v8::PinScope<'_, '_, ()>,
  options: &WorkerOptions,
  state: &StateRef,
  format: Option<ScriptFormat>,
  owner: Option<u32>,
) -> Result<(Ctx, ScriptFormat), WorkerError> {
  let context = v8::Context::new(scope, Default::default());
  let scope = &mut v8::ContextScope::new(scope, context);
  context.set_allow_generation_from_strings(options.allow_eval);
  let holds = Rc::new(ContextHolds::default());
  context.set_slot(holds.clone());
  // The inspector learns of the context first, so that breakpoints bind in the script's top level.
  let inspector = state.borrow().inspector.clone();
  if let Some(inspector) = &inspector {
    inspector.context_created(scope, context);
  }

  // From the startup snapshot, the context already holds the Web APIs; otherwise run the
  // bootstrap now.
  let internals = match snapshot::current() {
    Some(_) => scope
      .get_context_data_from_snapshot_once::<v8::Object>(snapshot::INTERNALS_INDEX)
      .map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", format!("the startup snapshot has no internals object: {e:?}")))?,
    None => {
      // The bootstrap makes a few functions from strings (src/js/97_compat.js), as it does
      // when the snapshot is made.
      context.set_allow_generation_from_strings(true);
      let installed = install_runtime(scope);
      context.set_allow_generation_from_strings(options.allow_eval);
      installed?
    }
  };

  // Per-context set-up that a snapshot cannot hold (see `src/js/30_wasm.js`).
  let memory_mb = v8::Number::new(scope, options.limits.memory_mb as f64).into();
  let compat = ops::new_string(scope, &options.compat_json).into();
  call_internal(scope, internals, "prepareContext", &[memory_mb, compat]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  ops::remember_error_prototypes(scope, context);
  if inspector.is_some() {
    call_internal(scope, internals, "attachV8Console", &[]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  }
  // Unhandled rejections in this context are reported through its global scope's events.
  let hook = internal_function(scope, internals, "promiseRejection")?;
  *holds.rejection_hook.borrow_mut() = Some(v8::Global::new(scope, hook));
  let formatter = internal_function(scope, internals, "formatStack")?;
  *holds.stack_formatter.borrow_mut() = Some(v8::Global::new(scope, formatter));

  // Modules the script may import (compiled anew for each context).
  let mut registry = modules::Registry::new(&options.modules, &options.limits);
  if state.borrow().nodejs_compat.enabled.iter().any(|f| f == "throw_on_unrecognized_import_assertion") {
    registry.refuse_import_attributes();
  }
  if state.borrow().nodejs_compat.enabled.iter().any(|f| f == "new_module_registry") {
    registry.use_new_registry();
  }
  registry.set_global_scope_switch(|scope, on| std::mem::replace(&mut ops::state(scope).borrow_mut().global_scope, on));
  if let Some(name) = state.borrow().nodejs_compat.main_module.as_deref() {
    registry.set_wrapped_main(name);
  }
  let commonjs = internal_function(scope, internals, "loadCommonJs")?;
  registry.enable_commonjs(v8::Global::new(scope, commonjs));
  let cloudflare = internal_function(scope, internals, "loadCloudflareModule")?;
  registry.enable_cloudflare(v8::Global::new(scope, cloudflare));
  let node = state.borrow().nodejs_compat.clone();
  if node.modules || node.als || node.trusted_loader {
    let loader = internal_function(scope, internals, "loadNodeModule")?;
    let bare = node.enabled.iter().any(|f| f == "nodejs_compat_v2");
    let gate = modules::NodeGate { enabled: node.enabled.clone(), als_only: !node.modules, bare, none: !(node.modules || node.als) };
    registry.enable_node(v8::Global::new(scope, loader), gate);
  }
  if node.trusted_loader {
    registry.trust_loaded_modules();
  }
  if node.globals {
    call_internal(scope, internals, "installNodeGlobals", &[]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  }
  if node.enabled.iter().any(|f| f == "enable_global_performance_classes" || f == "enable_nodejs_perf_hooks_module") {
    call_internal(scope, internals, "installPerformanceClasses", &[]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  }
  if node.enabled.iter().any(|f| f == "enable_nodejs_global_timers") {
    call_internal(scope, internals, "installNodeTimers", &[]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  }
  if options.code_cache {
    registry.enable_code_cache(options.code_cache_dir.clone());
  }
  if let (true, Some(host)) = (options.module_loader, options.host.clone()) {
    registry.enable_loader(host, state.borrow().monitor.clone());
  }
  scope.set_slot(Rc::new(RefCell::new(registry)));
  // With waitForDebugger, the script's top level waits for a client (the worker's first context).
  if let Some(inspector) = &inspector {
    inspector.wait_for_debugger();
    if state.borrow().monitor.stop_pending() {
      return Err(WorkerError::runtime("ERR_STOPPED", "the worker was stopped while it waited for a debugger"));
    }
  }
  // The plain env values exist while the top level runs, as in workerd (`env` of
  // cloudflare:workers, and process.env with nodejs_compat_populate_process_env).
  let env_json = ops::new_string(scope, &options.env_json).into();
  let bindings_json = ops::new_string(scope, &options.bindings_json).into();
  call_internal(scope, internals, "preloadEnv", &[env_json, bindings_json]).map_err(|e| WorkerError::runtime("ERR_BOOTSTRAP", e.stack))?;
  begin_turn(state, owner);
  let digest = state.borrow().source_digest;
  let cache = digest.map_or(script::CacheUse::Off, |digest| script::CacheUse::On(digest, options.code_cache_dir.as_deref()));
  state.borrow_mut().global_scope = true;
  // allow_eval_during_startup (2025-06-01): eval and new Function work while the script's top
  // level runs, as in workerd; afterwards only with allowEval.
  // allow_insecure_inefficient_logged_eval (experimental): eval works throughout, as allowEval.
  let (startup_eval, logged_eval) = {
    let flags = &state.borrow().nodejs_compat.enabled;
    (flags.iter().any(|f| f == "allow_eval_during_startup"), flags.iter().any(|f| f == "allow_insecure_inefficient_logged_eval"))
  };
  let eval_allowed = options.allow_eval || logged_eval;
  if startup_eval || eval_allowed {
    context.set_allow_generation_from_strings(true);
  }
  let loaded = script::load(scope, &options.script, &options.filename, format, cache);
  context.set_allow_generation_from_strings(eval_allowed);
  state.borrow_mut().global_scope = false;
  end_turn(state);
  if state.borrow().monitor.stop_pending() {
    return Err(WorkerError::runtime("ERR_STOPPED", "the script was stopped while it loaded"));
  }
  let loaded = loaded.map_err(WorkerError::Js)?;
  let format_name = match loaded.format {
    ScriptFormat::Module => "module",
    ScriptFormat::ServiceWorker => "service-worker",
  };
  let namespace: v8::Local<v8::Value> = match loaded.namespace {
    Some(ns) => ns.into(),
    None => v8::undefined(scope).into(),
  };
  // `waitUntil` work after the response gets `waitUntilMs`, and never more than `wallMs`: a
  // worker limited to `wallMs` has no work of its own outlive that (0 is no bound for either).
  let limits = &options.limits;
  let (wait_until_ms, wait_until_limit) = match (limits.wait_until_ms, limits.wall_ms) {
    (0, wall) => (wall, "limits.wallMs"),
    (wait, wall) if wall > 0 && wall < wait => (wall, "limits.wallMs"),
    (wait, _) => (wait, "limits.waitUntilMs"),
  };
  let args = [
    ops::new_string(scope, &options.env_json).into(),
    ops::new_string(scope, format_name).into(),
    namespace,
    ops::new_string(scope, &options.bindings_json).into(),
    v8::Number::new(scope, wait_until_ms as f64).into(),
    ops::new_string(scope, &options.compat_json).into(),
    ops::new_string(scope, wait_until_limit).into(),
  ];
  call_internal(scope, internals, "start", &args).map_err(WorkerError::Js)?;
  let dispatch_fetch = internal_function(scope, internals, "dispatchFetch")?;
  let dispatch_scheduled = internal_function(scope, internals, "dispatchScheduled")?;
  let dispatch_queue = internal_function(scope, internals, "dispatchQueue")?;
  let dispatch_rpc = internal_function(scope, internals, "dispatchRpc")?;
  let abort_stalled = internal_function(scope, internals, "abortStalledBodies")?;
  let ctx = Ctx {
    context: v8::Global::new(scope, context),
    dispatch_fetch: v8::Global::new(scope, dispatch_fetch),
    dispatch_scheduled: v8::Global::new(scope, dispatch_scheduled),
    dispatch_queue: v8::Global::new(scope, dispatch_queue),
    dispatch_rpc: v8::Global::new(scope, dispatch_rpc),
    abort_stalled: v8::Global::new(scope, abort_stalled),
    holds,
  };
  Ok((ctx, loaded.format))
}

/// Runs the JS bootstrap in the current context: the streams implementation, then every file
/// in `src/js/`. Returns the `internals` object the files share with the native side.
pub(crate) fn install_runtime<'s>(scope: &mut v8::PinScope<'s, '_>) -> Result<v8::Local<'s, v8::Object>, WorkerError> {
  let ops = ops::build_ops_object(scope);
  let internals = v8::Object::new(scope);
  load_streams(scope, internals)?;
  for (name, source) in BOOTSTRAP_FILES {
    run_bootstrap_file(scope, name, source, ops, internals)?;
  }
  Ok(internals)
}

/// Evaluates the embedded streams implementation as a CommonJS module and hands its exports to
/// the bootstrap as `internals.streams` (`src/js/50_streams.js` makes the globals).
pub(super) fn load_streams(scope: &mut v8::PinScope, internals: v8::Local<v8::Object>) -> Result<(), WorkerError> {
  let exports = v8::Object::new(scope);
  let module = v8::Object::new(scope);
  let key = ops::new_string(scope, "exports");
  module.set(scope, key.into(), exports.into());
  run_wrapped(scope, "web-streams-polyfill.js", "exports, module", STREAMS_PONYFILL, &[exports.into(), module.into()])?;
  let key = ops::new_string(scope, "streams");
  internals.set(scope, key.into(), exports.into());
  Ok(())
}

pub(super) fn run_bootstrap_file(
  scope: &mut v8::PinScope,
  name: &str,
  source: &str,
  ops: v8::Local<v8::Object>,
  internals: v8::Local<v8::Object>,
) -> Result<(), WorkerError> {
  let strict = format!("\"use strict\"; {source}");
  run_wrapped(scope, name, "ops, internals", &strict, &[ops.into(), internals.into()])
}

/// Runs an internal script as the body of `function (<params>) { … }` called with `args`.
/// The body starts on the wrapper's first line, so line numbers in stacks match the file.
pub(super) fn run_wrapped(
  scope: &mut v8::PinScope,
  name: &str,
  params: &str,
  body: &str,
  args: &[v8::Local<v8::Value>],
) -> Result<(), WorkerError> {
  let fail = |e: JsErrorInfo| WorkerError::runtime("ERR_BOOTSTRAP", format!("{name}: {}", e.stack));
  let wrapped = format!("(function ({params}) {{ {body}\n}})");
  let code = ops::new_string(scope, &latin1(&wrapped));
  let resource = ops::new_string(scope, &format!("{INTERNAL_SCRIPT_PREFIX}{name}"));
  let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
  v8::tc_scope!(let tc, scope);
  let options = if EAGER_FILES.contains(&name) { v8::script_compiler::CompileOptions::EagerCompile } else { v8::script_compiler::CompileOptions::NoCompileOptions };
  let mut source = v8::script_compiler::Source::new(code, Some(&origin));
  let function = v8::script_compiler::compile(tc, &mut source, options, v8::script_compiler::NoCacheReason::NoReason).and_then(|s| s.run(tc));
  let Some(function) = function.and_then(|f| v8::Local::<v8::Function>::try_from(f).ok()) else {
    return Err(fail(thrown(tc)));
  };
  let recv = v8::undefined(tc).into();
  if function.call(tc, recv, args).is_none() {
    return Err(fail(thrown(tc)));
  }
  Ok(())
}

pub(super) fn internal_function<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  internals: v8::Local<v8::Object>,
  name: &str,
) -> Result<v8::Local<'s, v8::Function>, WorkerError> {
  let key = ops::new_string(scope, name);
  internals
    .get(scope, key.into())
    .and_then(|f| v8::Local::<v8::Function>::try_from(f).ok())
    .ok_or_else(|| WorkerError::runtime("ERR_BOOTSTRAP", format!("the bootstrap did not define internals.{name}")))
}

pub(crate) fn call_internal<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  internals: v8::Local<v8::Object>,
  name: &str,
  args: &[v8::Local<v8::Value>],
) -> Result<v8::Local<'s, v8::Value>, JsErrorInfo> {
  let function = internal_function(scope, internals, name).map_err(|e| JsErrorInfo::new("Error", e.to_string()))?;
  v8::tc_scope!(let tc, scope);
  let recv = v8::undefined(tc).into();
  let result = function.call(tc, recv, args);
  tc.perform_microtask_checkpoint();
  match result {
    Some(value) => Ok(value),
    None => Err(thrown(tc)),
  }
}
