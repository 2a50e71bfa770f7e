//! Loading the user's script: format detection, compilation with its file name for stack
//! traces (through the code cache, see `code_cache.rs`), and evaluation. Errors come back as [`JsErrorInfo`] with file, line and column.

use super::code_cache;
use super::code_cache::{compile_cached, Compiled};
use super::errors::{describe_exception, thrown};
use super::modules::{self, RegistryRef};
use super::types::{JsErrorInfo, ScriptFormat};

/// What a loaded script left behind: the module namespace for modules.
pub struct Loaded<'s> {
  pub format: ScriptFormat,
  pub namespace: Option<v8::Local<'s, v8::Object>>,
}

fn origin<'s>(scope: &mut v8::PinScope<'s, '_>, filename: &str, is_module: bool) -> v8::ScriptOrigin<'s> {
  let name = v8::String::new(scope, filename).unwrap();
  v8::ScriptOrigin::new(scope, name.into(), 0, 0, false, 0, None, false, false, is_module, None)
}

fn source_string<'s>(scope: &mut v8::PinScope<'s, '_>, source: &str) -> Result<v8::Local<'s, v8::String>, JsErrorInfo> {
  v8::String::new(scope, source).ok_or_else(|| JsErrorInfo::new("RangeError", "the script is larger than V8's maximum string length"))
}

/// Where a script's code cache is kept, if anywhere.
#[derive(Clone, Copy)]
pub enum CacheUse<'a> {
  Off,
  /// In this process's memory, and in the directory when there is one; entries are found by
  /// the script's digest, made once per worker.
  On(code_cache::SourceDigest, Option<&'a std::path::Path>),
}

fn compile_module<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  source: &str,
  filename: &str,
  cache: CacheUse,
) -> Result<Compiled<'s, v8::Module>, JsErrorInfo> {
  let code = source_string(scope, source)?;
  let origin = origin(scope, filename, true);
  let entry = match cache {
    CacheUse::On(digest, dir) => Some(code_cache::Entry::new("module", digest, dir)),
    CacheUse::Off => None,
  };
  compile_cached(scope, code, &origin, entry, |scope, source, options| {
    v8::script_compiler::compile_module2(scope, source, options, v8::script_compiler::NoCacheReason::NoReason)
  })
}

fn compile_classic<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  source: &str,
  filename: &str,
  cache: CacheUse,
) -> Result<Compiled<'s, v8::Script>, JsErrorInfo> {
  let code = source_string(scope, source)?;
  let origin = origin(scope, filename, false);
  let entry = match cache {
    CacheUse::On(digest, dir) => Some(code_cache::Entry::new("classic", digest, dir)),
    CacheUse::Off => None,
  };
  compile_cached(scope, code, &origin, entry, |scope, source, options| {
    v8::script_compiler::compile(scope, source, options, v8::script_compiler::NoCacheReason::NoReason)
  })
}

fn module_has_exports(scope: &mut v8::PinScope, module: v8::Local<v8::Module>) -> bool {
  if module.get_module_requests().length() > 0 {
    return true;
  }
  v8::tc_scope!(let tc, scope);
  let Some(namespace) = module.get_module_namespace().to_object(tc) else { return true };
  let args = v8::GetPropertyNamesArgs {
    mode: v8::KeyCollectionMode::OwnOnly,
    property_filter: v8::PropertyFilter::ALL_PROPERTIES | v8::PropertyFilter::SKIP_SYMBOLS,
    index_filter: v8::IndexFilter::IncludeIndices,
    key_conversion: v8::KeyConversionMode::KeepNumbers,
  };
  namespace.get_own_property_names(tc, args).map_or(true, |names| names.length() > 0)
}

/// Compiles and runs the user script in the current context.
pub fn load<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  source: &str,
  filename: &str,
  format: Option<ScriptFormat>,
  cache: CacheUse,
) -> Result<Loaded<'s>, JsErrorInfo> {
  let module = match format {
    Some(ScriptFormat::ServiceWorker) => None,
    Some(ScriptFormat::Module) => Some(compile_module(scope, source, filename, cache)?),
    // Detection: a script that compiles as a module and has imports or exports is a module;
    // one that only compiles as a classic script, or exports nothing, is a service worker.
    None => match compile_module(scope, source, filename, cache) {
      Ok(module) => Some(module),
      Err(module_error) => match compile_classic(scope, source, filename, CacheUse::Off) {
        Ok(_) => None,
        Err(_) => return Err(module_error),
      },
    },
  };

  if let Some(compiled) = module {
    let module = compiled.value;
    v8::tc_scope!(let tc, scope);
    if let Some(registry) = tc.get_slot::<RegistryRef>().cloned() {
      let mut registry = registry.borrow_mut();
      registry.name_main(module, filename);
      registry.set_main_source(filename, source);
    }
    if module.instantiate_module2(tc, modules::resolve, crate::runtime::modules::source::resolve_source).is_none() {
      return Err(thrown(tc));
    }
    if format.is_some() || module_has_exports(tc, module) {
      let namespace = evaluate_module(tc, module)?;
      keep_main_entry(tc, compiled, source.len(), |scope| modules::Uncached::Module(v8::Global::new(scope, module)));
      return Ok(Loaded { format: ScriptFormat::Module, namespace: Some(namespace) });
    }
  }

  let compiled = compile_classic(scope, source, filename, cache)?;
  let script = compiled.value;
  v8::tc_scope!(let tc, scope);
  if script.run(tc).is_none() {
    return Err(thrown(tc));
  }
  tc.perform_microtask_checkpoint();
  keep_main_entry(tc, compiled, source.len(), |scope| modules::Uncached::Script(v8::Global::new(scope, script.get_unbound_script(scope))));
  Ok(Loaded { format: ScriptFormat::ServiceWorker, namespace: None })
}

/// The main script's code cache entry, after its top level ran (so the functions that compiled
/// are in it too): made now, or for a large script once the worker is up (`defer_entry`), and
/// again when the worker is disposed, with what its requests compiled. Nothing (not even the
/// handle `code` makes) when the entry was used, as on each per-request context's load.
fn keep_main_entry<T>(scope: &mut v8::PinScope, compiled: Compiled<T>, source_len: usize, code: impl FnOnce(&mut v8::PinScope) -> modules::Uncached) {
  let (false, Some(entry)) = (compiled.cache_hit, compiled.cache) else { return };
  let code = code(scope);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else {
    modules::store_entries(scope, vec![(code, entry)]);
    return;
  };
  if source_len >= modules::DEFERRED_ENTRY_BYTES {
    registry.borrow_mut().defer_entry(code.clone(), entry.clone());
  } else {
    modules::store_entries(scope, vec![(code.clone(), entry.clone())]);
  }
  registry.borrow_mut().refresh_on_dispose(code, entry);
}

fn evaluate_module<'s>(
  tc: &mut v8::PinnedRef<'_, v8::TryCatch<'_, 's, v8::HandleScope<'_>>>,
  module: v8::Local<'s, v8::Module>,
) -> Result<v8::Local<'s, v8::Object>, JsErrorInfo> {
  let Some(result) = module.evaluate(tc) else { return Err(thrown(tc)) };
  tc.perform_microtask_checkpoint();
  if let Ok(promise) = v8::Local::<v8::Promise>::try_from(result) {
    match promise.state() {
      v8::PromiseState::Rejected => {
        let reason = promise.result(tc);
        return Err(describe_exception(tc, reason, None));
      }
      v8::PromiseState::Pending => {
        return Err(JsErrorInfo::new(
          "Error",
          "the module's top-level await did not settle during start-up (workers cannot wait on I/O or timers at global scope)",
        ))
      }
      v8::PromiseState::Fulfilled => {}
    }
  }
  let namespace = module.get_module_namespace();
  Ok(namespace.to_object(tc).expect("module namespace object"))
}
