//! Source phase imports (the TC39 proposal V8 runs behind `--js-source-phase-imports`, set in
//! platform.rs): `import source m from "x.wasm"` and `import.source("x.wasm")` give a Wasm
//! module's `WebAssembly.Module` without instantiating it, as in workerd; any other module is
//! workerd's SyntaxError, `Source phase import not available for module: <name>`.

use super::RegistryRef;
use crate::runtime::modules;
use crate::runtime::types::ModuleKind;
use crate::runtime::values;

/// V8's source callback for a static `import source`: resolves like any import, then gives the
/// module's source object.
pub(crate) fn resolve_source<'a>(
  context: v8::Local<'a, v8::Context>,
  specifier: v8::Local<'a, v8::String>,
  attributes: v8::Local<'a, v8::FixedArray>,
  referrer: v8::Local<'a, v8::Module>,
) -> Option<v8::Local<'a, v8::Object>> {
  let module = modules::resolve(context, specifier, attributes, referrer)?;
  // SAFETY: V8 calls this synchronously inside `instantiate_module2`, with `context` entered.
  v8::callback_scope!(unsafe let scope, context);
  // A static import's error names the module as its specifier does, as workerd's.
  let written = specifier.to_rust_string_lossy(scope);
  source_of(scope, module, Some(written))
}

/// V8's callback for a dynamic import with a phase: for `import.source(specifier)`, a promise of
/// the module's source object, rejected with the error when there is none; a plain `import()`
/// (which V8 15.2 sends here too once this callback is set) goes to modules::import_dynamically.
pub(crate) fn import_source_dynamically<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  host_defined_options: v8::Local<'s, v8::Data>,
  resource_name: v8::Local<'s, v8::Value>,
  specifier: v8::Local<'s, v8::String>,
  phase: v8::ModuleImportPhase,
  attributes: v8::Local<'s, v8::FixedArray>,
) -> Option<v8::Local<'s, v8::Promise>> {
  if phase != v8::ModuleImportPhase::kSource {
    return modules::import_dynamically(scope, host_defined_options, resource_name, specifier, attributes);
  }
  let specifier = specifier.to_rust_string_lossy(scope);
  let referrer = resource_name.to_rust_string_lossy(scope);
  v8::tc_scope!(let tc, scope);
  let registry = tc.get_slot::<RegistryRef>().cloned()?;
  let outcome = modules::resolve_import(tc, &registry, &specifier, &referrer, attributes).and_then(|module| source_of(tc, module, None));
  let resolver = v8::PromiseResolver::new(tc)?;
  match outcome {
    Some(source) => {
      resolver.resolve(tc, source.into());
    }
    None => {
      if tc.has_terminated() || !tc.has_caught() {
        return None;
      }
      let exception = tc.exception()?;
      resolver.reject(tc, exception);
    }
  }
  Some(resolver.get_promise(tc))
}

/// The source object of a resolved module: a Wasm module's compiled `WebAssembly.Module`; for
/// any other, a SyntaxError naming it as `written`, else by its URL (its name without
/// new_module_registry).
fn source_of<'a>(scope: &mut v8::PinScope<'a, '_>, module: v8::Local<'a, v8::Module>, written: Option<String>) -> Option<v8::Local<'a, v8::Object>> {
  let registry = scope.get_slot::<RegistryRef>()?.clone();
  let (key, source, new_registry) = {
    let r = registry.borrow();
    let key = r.names.get(&module.get_identity_hash().get()).cloned().unwrap_or_default();
    let source = r.source(&key).cloned();
    (key, source, r.new_registry)
  };
  if let Some(source) = source.filter(|s| s.kind == ModuleKind::Wasm) {
    return modules::compile_wasm(scope, &registry, &source).map(Into::into);
  }
  let shown = if let Some(written) = written {
    written
  } else if new_registry { crate::runtime::module_urls::module_url(&key).map_or(key, String::from) } else { key };
  let message = values::new_string(scope, &format!("Source phase import not available for module: {shown}"));
  let error = v8::Exception::syntax_error(scope, message);
  scope.throw_exception(error);
  None
}
