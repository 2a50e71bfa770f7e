//! Ops behind nodejs_compat: the `node:` module factories (sources in `src/js/node/`), the
//! files of the npm packages they are built on (embedded by build.rs), and the
//! continuation-preserved embedder data that `AsyncLocalStorage` keeps its frame in.

use super::{arg_string, new_string, throw_type_error, OpFn};
use crate::runtime::sources::{NODE_MODULES, VENDOR_FILES, VENDOR_MAINS};
use crate::runtime::errors::thrown;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("nodeModuleFactory", op_node_module_factory.map_fn_to());
  install("nodeModuleExists", op_node_module_exists.map_fn_to());
  install("nodeModuleAllowed", op_node_module_allowed.map_fn_to());
  install("vendorFactory", op_vendor_factory.map_fn_to());
  install("vendorResolve", op_vendor_resolve.map_fn_to());
  install("valueIs", op_value_is.map_fn_to());
  install("userModule", op_user_module.map_fn_to());
  install("hostModule", op_host_module.map_fn_to());
  install("requireEsModule", op_require_es_module.map_fn_to());
  install("nodeModuleNamespace", op_node_module_namespace.map_fn_to());
  install("proxyDetails", op_proxy_details.map_fn_to());
  install("previewEntries", op_preview_entries.map_fn_to());
  install("constructorName", op_constructor_name.map_fn_to());
  install("runScript", op_run_script.map_fn_to());
  install("userModuleNames", op_user_module_names.map_fn_to());
  install("userModuleBytes", op_user_module_bytes.map_fn_to());
  install("evalAllowed", op_eval_allowed.map_fn_to());
  install("continuationGet", op_continuation_get.map_fn_to());
  install("continuationSet", op_continuation_set.map_fn_to());
}

/// Compiles `source` inside a function with `params` and returns the function; on a syntax
/// error throws a TypeError naming `resource` and returns None. The body starts on the
/// wrapper's first line, so stack line numbers match the file.
pub(super) fn compile_factory<'s>(scope: &mut v8::PinScope<'s, '_>, resource: &str, params: &str, source: &str) -> Option<v8::Local<'s, v8::Value>> {
  compile_factory_with(scope, resource, params, source, true)
}

/// `compile_factory`, through the worker's code cache when `cached` (the same source compiled
/// in an earlier worker of this process, or of an earlier one with a cache directory, is not
/// parsed again).
pub(super) fn compile_factory_with<'s>(scope: &mut v8::PinScope<'s, '_>, resource: &str, params: &str, source: &str, cached: bool) -> Option<v8::Local<'s, v8::Value>> {
  let wrapped = format!("(function ({params}) {{ {source}\n}})");
  v8::tc_scope!(let tc, scope);
  let script = match cached.then(|| crate::runtime::modules::compile_script_cached(tc, resource, &wrapped)).flatten() {
    Some(script) => Some(script),
    None => {
      // Without the cache, or to report the compile error as ever.
      tc.reset();
      let code = new_string(tc, &wrapped);
      let resource_name = new_string(tc, resource);
      let origin = v8::ScriptOrigin::new(tc, resource_name.into(), 0, 0, false, 0, None, false, false, false, None);
      v8::Script::compile(tc, code, Some(&origin))
    }
  };
  match script.and_then(|s| s.run(tc)) {
    Some(factory) => Some(factory),
    None => {
      // Terminated (disposed, or over a limit) while compiling or running the factory: leave
      // the termination to go on when `tc` ends. A TypeError thrown here would replace it, and
      // the caller would go on to call `undefined` and fail its request with that instead of
      // ERR_WORKER_DISPOSED.
      if tc.has_terminated() {
        return None;
      }
      let error = thrown(tc);
      throw_type_error(tc, &format!("{resource} could not be loaded: {}", error.stack));
      None
    }
  }
}

/// `ops.runScript(code, filename, lineOffset, columnOffset, force) -> value`: node:vm's
/// `runInThisContext`, for workers that allow code generation (`allowEval`); the script's
/// positions in stack traces are its own (its name and offsets). Otherwise it throws the
/// EvalError that `eval` would, unless `force` is true (the unsafe-eval binding, 89_unsafe.js).
/// Through the worker's code cache when it has one on: a test runner's module evaluator runs
/// the same modules in a new isolate for every test file (lib/vitest).
fn op_run_script<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let context = scope.get_current_context();
  if !args.get(4).is_true() && !context.is_code_generation_from_strings_allowed() {
    let message = new_string(scope, "Code generation from strings disallowed for this context");
    let error = v8::Exception::error(scope, message);
    let name_key = new_string(scope, "name");
    let name = new_string(scope, "EvalError");
    if let Ok(object) = v8::Local::<v8::Object>::try_from(error) {
      object.set(scope, name_key.into(), name.into());
    }
    scope.throw_exception(error);
    return;
  }
  let Ok(code) = v8::Local::<v8::String>::try_from(args.get(0)) else { return throw_type_error(scope, "The \"code\" argument must be of type string") };
  let filename = arg_string(scope, &args, 1);
  let line = args.get(2).int32_value(scope).unwrap_or(0);
  let column = args.get(3).int32_value(scope).unwrap_or(0);
  let script = match cached_script(scope, code, &filename, (line, column)) {
    Some(script) => Some(script),
    None => {
      let resource = new_string(scope, &filename);
      let origin = v8::ScriptOrigin::new(scope, resource.into(), line, column, false, 0, None, false, false, false, None);
      v8::Script::compile(scope, code, Some(&origin))
    }
  };
  if let Some(value) = script.and_then(|script| script.run(scope)) {
    rv.set(value);
  }
}

/// `code` compiled through the code cache, or None (no cache, or a compile error, which the
/// caller then reports by compiling it as ever).
fn cached_script<'s>(scope: &mut v8::PinScope<'s, '_>, code: v8::Local<'s, v8::String>, filename: &str, at: (i32, i32)) -> Option<v8::Local<'s, v8::Script>> {
  if !crate::runtime::modules::script_cache_open(scope) {
    return None;
  }
  let source = code.to_rust_string_lossy(scope);
  // A lone surrogate would not survive the round trip through Rust's string.
  if source.contains('\u{FFFD}') {
    return None;
  }
  v8::tc_scope!(let tc, scope);
  let script = crate::runtime::modules::compile_script_cached_at(tc, filename, code, &source, at);
  if script.is_none() && !tc.has_terminated() {
    tc.reset();
  }
  script
}

/// `ops.userModuleNames() -> string[]`: the modules given in `modules` and the main module of a
/// module-format worker (node:fs's /bundle).
fn op_user_module_names<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::RegistryRef;
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  let names = registry.borrow().bundle_names();
  let items: Vec<v8::Local<v8::Value>> = names.iter().map(|n| new_string(scope, n).into()).collect();
  rv.set(v8::Array::new_with_elements(scope, &items).into());
}

/// `ops.userModuleBytes(name) -> ArrayBuffer | undefined`: a /bundle module's source bytes as given.
fn op_user_module_bytes<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::RegistryRef;
  let name = arg_string(scope, &args, 0);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  let Some(content) = registry.borrow().bundle_bytes(&name) else { return };
  let store = v8::ArrayBuffer::new_backing_store_from_vec(content.to_vec()).make_shared();
  rv.set(v8::ArrayBuffer::with_backing_store(scope, &store).into());
}

/// `ops.evalAllowed() -> boolean`: whether the current context may compile code from strings.
fn op_eval_allowed<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  rv.set_bool(scope.get_current_context().is_code_generation_from_strings_allowed());
}

/// `ops.nodeModuleFactory(name) -> function (exports, require, module, ops, internals)`
fn op_node_module_factory<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  let Some((_, source)) = NODE_MODULES.iter().find(|(n, _)| *n == name) else {
    return throw_type_error(scope, &format!("No such module \"node:{name}\""));
  };
  if let Some(factory) = compile_factory(scope, &format!("node:{name}"), "exports, require, module, ops, internals", &crate::runtime::sources::latin1(&format!("\"use strict\"; {source}"))) {
    rv.set(factory);
  }
}

/// `ops.nodeModuleExists(name) -> boolean`, `internal/…` modules included.
fn op_node_module_exists<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  rv.set_bool(NODE_MODULES.iter().any(|(n, _)| *n == name));
}

/// `ops.nodeModuleAllowed(name) -> boolean`: whether the worker itself may import or require
/// `node:<name>` (its compatibility flags allow it; never an `internal/…` module).
fn op_node_module_allowed<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::RegistryRef;
  let name = arg_string(scope, &args, 0);
  let allowed = scope.get_slot::<RegistryRef>().is_some_and(|registry| registry.borrow().node_allows(&name));
  rv.set_bool(allowed);
}

/// `ops.vendorFactory(path, patches?) -> function (exports, require, module, __filename,
/// __dirname)` for the embedded npm file `path` (`<package>/<file>`). `patches`, when given, is
/// `[[text, replacement, every?], …]`: each text must occur exactly once in the file (with
/// `every` true: at least once, and every occurrence is replaced) and is replaced before the file
/// is compiled (src/js/94_node_streams.js: how workerd's node:stream differs from the vendored
/// package).
fn op_vendor_factory<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let path = arg_string(scope, &args, 0);
  let Some((_, source)) = VENDOR_FILES.iter().find(|(p, _)| *p == path) else {
    return throw_type_error(scope, &format!("no embedded file {path:?}"));
  };
  let mut patched = std::borrow::Cow::Borrowed(*source);
  if let Ok(patches) = v8::Local::<v8::Array>::try_from(args.get(1)) {
    for i in 0..patches.length() {
      let pair = patches.get_index(scope, i).and_then(|p| v8::Local::<v8::Array>::try_from(p).ok());
      let (Some(text), Some(replacement)) = (pair.and_then(|p| p.get_index(scope, 0)), pair.and_then(|p| p.get_index(scope, 1))) else {
        return throw_type_error(scope, &format!("patch {i} of {path} is not a [text, replacement] pair"));
      };
      let every = pair.and_then(|p| p.get_index(scope, 2)).is_some_and(|v| v.is_true());
      let (text, replacement) = (text.to_rust_string_lossy(scope), replacement.to_rust_string_lossy(scope));
      let count = patched.matches(text.as_str()).count();
      if count == 0 || (count > 1 && !every) {
        let expected = if every { "at least once" } else { "exactly once" };
        return throw_type_error(scope, &format!("patch {i} of {path} does not apply: its text does not occur {expected}"));
      }
      patched = std::borrow::Cow::Owned(patched.replace(text.as_str(), &replacement));
    }
  }
  if let Some(factory) = compile_factory(scope, &format!("workerbox:vendor/{path}"), "exports, require, module, __filename, __dirname", &patched) {
    rv.set(factory);
  }
}

/// `ops.vendorResolve(path) -> string | undefined`: `path` itself, `path.js` or
/// `path/index.js` if embedded, else a package's entry file when `path` names a package.
fn op_vendor_resolve<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let path = arg_string(scope, &args, 0);
  let path = path.trim_end_matches('/');
  let found = [path.to_owned(), format!("{path}.js"), format!("{path}/index.js")]
    .into_iter()
    .find(|candidate| VENDOR_FILES.iter().any(|(p, _)| p == candidate))
    .or_else(|| VENDOR_MAINS.iter().find(|(package, _)| *package == path).map(|(_, main)| (*main).to_owned()));
  if let Some(found) = found {
    rv.set(new_string(scope, &found).into());
  }
}

/// `ops.hostModule(specifier, referrer, referrerPath?) -> name | undefined`: asks the host's
/// `loadModule` for a module `require()`d by the module named `referrer` (src/js/96_commonjs.js;
/// `referrerPath` is its real path or URL, from createRequire); the module joins the worker's
/// modules under the returned name. Throws when the host's loader failed.
fn op_host_module<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::{load_from_host, RegistryRef};
  let specifier = arg_string(scope, &args, 0);
  let referrer = arg_string(scope, &args, 1);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  if args.get(2).is_string() {
    // createRequire(path): the module's real path, for the host to resolve against.
    let origin = arg_string(scope, &args, 2);
    registry.borrow_mut().remember_origin(&referrer, origin);
  }
  match load_from_host(&registry, &specifier, &referrer, "require") {
    Ok(Some(name)) => rv.set(new_string(scope, &name).into()),
    Ok(None) => {}
    Err(message) => {
      let message = new_string(scope, &format!("Cannot load module \"{specifier}\" required by \"{}\": {message}", registry.borrow().origin(&referrer)));
      let error = v8::Exception::error(scope, message);
      scope.throw_exception(error);
    }
  }
}

/// `ops.requireEsModule(name) -> namespace`: `require()` of an ES module (src/js/96_commonjs.js),
/// as workerd's require(esm): the module `name` (one of the worker's or the host's) is
/// instantiated and evaluated now and its namespace returned. Throws as the module does, or
/// workerd's error when the graph awaits at its top level (it cannot finish synchronously).
fn op_require_es_module<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::{module_named, resolve, RegistryRef};
  let name = arg_string(scope, &args, 0);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  let Some(module) = module_named(scope, &registry, &name) else { return };
  match module.get_status() {
    v8::ModuleStatus::Errored => {
      let exception = module.get_exception();
      scope.throw_exception(exception);
      return;
    }
    // Already run, or running (a cycle through require()): its namespace as it stands.
    v8::ModuleStatus::Evaluated | v8::ModuleStatus::Evaluating => return rv.set(module.get_module_namespace()),
    v8::ModuleStatus::Uninstantiated => {
      if module.instantiate_module2(scope, resolve, crate::runtime::modules::source::resolve_source).is_none() {
        return;
      }
    }
    _ => {}
  }
  let Some(evaluated) = module.evaluate(scope) else { return };
  if let Ok(promise) = v8::Local::<v8::Promise>::try_from(evaluated) {
    // The outcome is this call's (thrown here), not an unhandled rejection of the worker's.
    if promise.state() != v8::PromiseState::Fulfilled {
      promise.mark_as_handled();
    }
    match promise.state() {
      v8::PromiseState::Pending => {
        // Workerd's words, which its new module registry (new_module_registry) words otherwise.
        let text = if registry.borrow().new_registry {
          let url = crate::runtime::module_urls::module_url(&name).map_or(name.clone(), String::from);
          format!("Top-level await is not supported in this context for module: {url}")
        } else {
          "Top-level await in module is not permitted at this time.".to_owned()
        };
        let message = new_string(scope, &text);
        let error = v8::Exception::error(scope, message);
        scope.throw_exception(error);
        return;
      }
      v8::PromiseState::Rejected => {
        let exception = promise.result(scope);
        scope.throw_exception(exception);
        return;
      }
      v8::PromiseState::Fulfilled => {}
    }
  }
  rv.set(module.get_module_namespace());
}

/// `ops.proxyDetails(value) -> [target, handler] | null | undefined`: a proxy's target and handler
/// (util.inspect shows proxies without running their traps, as Node's getProxyDetails lets it),
/// null for a revoked proxy, undefined for any other value.
fn op_proxy_details<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(proxy) = v8::Local::<v8::Proxy>::try_from(args.get(0)) else { return };
  if proxy.is_revoked() {
    rv.set_null();
    return;
  }
  let parts = [proxy.get_target(scope), proxy.get_handler(scope)];
  rv.set(v8::Array::new_with_elements(scope, &parts).into());
}

/// `ops.previewEntries(value) -> [entries, isKeyValue] | undefined`: the entries of a Map or Set
/// iterator (from where it is, without advancing it) or of a WeakMap/WeakSet, as V8 previews them
/// (keys and values in turn when `isKeyValue`), for util.inspect as Node's previewEntries; undefined
/// for any other value.
fn op_preview_entries<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
  let (Some(entries), is_key_value) = object.preview_entries(scope) else { return };
  let flag = v8::Boolean::new(scope, is_key_value);
  rv.set(v8::Array::new_with_elements(scope, &[entries.into(), flag.into()]).into());
}

/// `ops.constructorName(object) -> string`: V8's own name for the object's constructor (what made
/// it, whatever its prototype is now), as Node's inspect names a null-prototype object.
fn op_constructor_name<'s>(_scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let Ok(object) = v8::Local::<v8::Object>::try_from(args.get(0)) else { return };
  rv.set(object.get_constructor_name().into());
}

/// `ops.nodeModuleNamespace(name) -> namespace`: the `node:` module `name` as `import` has it
/// (process.getBuiltinModule under new_module_registry). Throws when the worker may not import it.
fn op_node_module_namespace<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::{node_namespace, RegistryRef};
  let name = arg_string(scope, &args, 0);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  if let Some(namespace) = node_namespace(scope, &registry, &name) {
    rv.set(namespace);
  }
}

/// `ops.userModule(name) -> [kind, content, filename] | undefined`: a module given in `modules`
/// (or loaded by the host), for CommonJS `require()` (src/js/96_commonjs.js). `kind` is esm,
/// commonjs, text, json, data or wasm; `content` a string (a compiled factory for commonjs), or
/// an ArrayBuffer for data and wasm; `filename` the host's name for a module it loaded.
fn op_user_module<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  use crate::runtime::modules::RegistryRef;
  use crate::runtime::types::ModuleKind;
  let name = arg_string(scope, &args, 0);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  let Some(module) = registry.borrow().source(&name).cloned() else { return };
  let origin = registry.borrow().origin(&module.name).to_owned();
  let kind = match module.kind {
    ModuleKind::EsModule => "esm",
    ModuleKind::CommonJs => "commonjs",
    ModuleKind::Text => "text",
    ModuleKind::Json => "json",
    ModuleKind::Data => "data",
    ModuleKind::Wasm => "wasm",
  };
  let content: v8::Local<v8::Value> = match module.kind {
    ModuleKind::Data | ModuleKind::Wasm => {
      let store = v8::ArrayBuffer::new_backing_store_from_vec(module.content.to_vec()).make_shared();
      v8::ArrayBuffer::with_backing_store(scope, &store).into()
    }
    ModuleKind::CommonJs => {
      let text = String::from_utf8_lossy(&module.content).into_owned();
      let Some(factory) = compile_factory(scope, &origin, "exports, require, module, __filename, __dirname", &text) else { return };
      factory
    }
    _ => new_string(scope, &String::from_utf8_lossy(&module.content)).into(),
  };
  let kind = new_string(scope, kind).into();
  let filename = if origin != module.name { new_string(scope, &origin).into() } else { v8::undefined(scope).into() };
  rv.set(v8::Array::new_with_elements(scope, &[kind, content, filename]).into());
}

/// `ops.valueIs(kind, value) -> boolean`: V8's own type checks behind `util.types` (the ones
/// JavaScript cannot make unforgeably, such as proxies and iterators). An unknown kind is false.
fn op_value_is<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let kind = arg_string(scope, &args, 0);
  let v = args.get(1);
  rv.set_bool(match kind.as_str() {
    "Proxy" => v.is_proxy(),
    "External" => v.is_external(),
    "ModuleNamespaceObject" => v.is_module_namespace_object(),
    "ArgumentsObject" => v.is_arguments_object(),
    "GeneratorObject" => v.is_generator_object(),
    "GeneratorFunction" => v.is_generator_function(),
    "AsyncFunction" => v.is_async_function(),
    "MapIterator" => v.is_map_iterator(),
    "SetIterator" => v.is_set_iterator(),
    "NativeError" => v.is_native_error(),
    "NumberObject" => v.is_number_object(),
    "StringObject" => v.is_string_object(),
    "BooleanObject" => v.is_boolean_object(),
    "BigIntObject" => v.is_big_int_object(),
    "SymbolObject" => v.is_symbol_object(),
    "Promise" => v.is_promise(),
    "Date" => v.is_date(),
    "RegExp" => v.is_reg_exp(),
    "Map" => v.is_map(),
    "Set" => v.is_set(),
    "WeakMap" => v.is_weak_map(),
    "WeakSet" => v.is_weak_set(),
    "ArrayBuffer" => v.is_array_buffer(),
    "SharedArrayBuffer" => v.is_shared_array_buffer(),
    "DataView" => v.is_data_view(),
    "TypedArray" => v.is_typed_array(),
    _ => false,
  });
}

/// `ops.continuationGet() -> value` (undefined when none was set)
fn op_continuation_get<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  rv.set(scope.get_continuation_preserved_embedder_data());
}

/// `ops.continuationSet(value)`
fn op_continuation_set<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  scope.set_continuation_preserved_embedder_data(args.get(0));
}
