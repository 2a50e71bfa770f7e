//! Loading the user's script: format detection, compilation with its file name for stack
//! traces, and evaluation. Errors come back as [`JsErrorInfo`] with file, line and column.

use super::errors::{describe_compile_error, describe_exception};
use super::modules::{self, RegistryRef};
use super::types::{JsErrorInfo, ScriptFormat};

/// What a loaded script left behind: the module namespace for modules.
pub struct Loaded<'s> {
  pub format: ScriptFormat,
  pub namespace: Option<v8::Local<'s, v8::Object>>,
}

fn origin<'s>(scope: &mut v8::HandleScope<'s>, filename: &str, is_module: bool) -> v8::ScriptOrigin<'s> {
  let name = v8::String::new(scope, filename).unwrap();
  v8::ScriptOrigin::new(scope, name.into(), 0, 0, false, 0, None, false, false, is_module, None)
}

fn source_string<'s>(scope: &mut v8::HandleScope<'s>, source: &str) -> Result<v8::Local<'s, v8::String>, JsErrorInfo> {
  v8::String::new(scope, source).ok_or_else(|| JsErrorInfo::new("RangeError", "the script is larger than V8's maximum string length"))
}

fn compile_module<'s>(
  scope: &mut v8::HandleScope<'s>,
  source: &str,
  filename: &str,
) -> Result<v8::Local<'s, v8::Module>, JsErrorInfo> {
  let code = source_string(scope, source)?;
  let origin = origin(scope, filename, true);
  let tc = &mut v8::TryCatch::new(scope);
  let mut source = v8::script_compiler::Source::new(code, Some(&origin));
  v8::script_compiler::compile_module(tc, &mut source).ok_or_else(|| describe_compile_error(tc))
}

fn compile_classic<'s>(
  scope: &mut v8::HandleScope<'s>,
  source: &str,
  filename: &str,
) -> Result<v8::Local<'s, v8::Script>, JsErrorInfo> {
  let code = source_string(scope, source)?;
  let origin = origin(scope, filename, false);
  let tc = &mut v8::TryCatch::new(scope);
  v8::Script::compile(tc, code, Some(&origin)).ok_or_else(|| describe_compile_error(tc))
}

fn module_has_exports(scope: &mut v8::HandleScope, module: v8::Local<v8::Module>) -> bool {
  if module.get_module_requests().length() > 0 {
    return true;
  }
  let tc = &mut v8::TryCatch::new(scope);
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
  scope: &mut v8::HandleScope<'s>,
  source: &str,
  filename: &str,
  format: Option<ScriptFormat>,
) -> Result<Loaded<'s>, JsErrorInfo> {
  let module = match format {
    Some(ScriptFormat::ServiceWorker) => None,
    Some(ScriptFormat::Module) => Some(compile_module(scope, source, filename)?),
    // Detection: a script that compiles as a module and has imports or exports is a module;
    // one that only compiles as a classic script, or exports nothing, is a service worker.
    None => match compile_module(scope, source, filename) {
      Ok(module) => Some(module),
      Err(module_error) => match compile_classic(scope, source, filename) {
        Ok(_) => None,
        Err(_) => return Err(module_error),
      },
    },
  };

  if let Some(module) = module {
    let tc = &mut v8::TryCatch::new(scope);
    if let Some(registry) = tc.get_slot::<RegistryRef>().cloned() {
      registry.borrow_mut().name_main(module, filename);
    }
    if module.instantiate_module(tc, modules::resolve).is_none() {
      return Err(thrown(tc));
    }
    if format.is_some() || module_has_exports(tc, module) {
      return evaluate_module(tc, module).map(|namespace| Loaded { format: ScriptFormat::Module, namespace: Some(namespace) });
    }
  }

  let script = compile_classic(scope, source, filename)?;
  let tc = &mut v8::TryCatch::new(scope);
  if script.run(tc).is_none() {
    return Err(thrown(tc));
  }
  tc.perform_microtask_checkpoint();
  Ok(Loaded { format: ScriptFormat::ServiceWorker, namespace: None })
}

fn evaluate_module<'s>(
  tc: &mut v8::TryCatch<v8::HandleScope<'s>>,
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

/// The exception a `TryCatch` caught, or a termination notice.
pub fn thrown(tc: &mut v8::TryCatch<v8::HandleScope>) -> JsErrorInfo {
  if tc.has_terminated() {
    return JsErrorInfo::new("Error", "script execution was terminated");
  }
  match tc.exception() {
    Some(exception) => {
      let message = tc.message();
      describe_exception(tc, exception, message)
    }
    None => JsErrorInfo::new("Error", "the script failed without an exception"),
  }
}
