//! The built-in modules a worker imports by name: `node:` modules (which of them the
//! compatibility flags allow, `NodeGate`; their exports from `internals.loadNodeModule` as
//! synthetic modules) and `cloudflare:`/`workerd:` modules (from
//! `internals.loadCloudflareModule`), and their namespaces for `process.getBuiltinModule`.

use super::{call_loader, exports, resolve, source, sources, throw_no_such_module, values, RegistryRef, DYNAMIC_IMPORT};

/// Which `node:` modules a worker may import: with nodejs_compat all of workerbox's, except those
/// workerd puts behind a flag of their own (`enable_nodejs_fs_module`, …) while that flag is off;
/// with nodejs_als alone, only `async_hooks` (as workerd registers it then).
#[derive(Default, Clone)]
pub(crate) struct NodeGate {
  /// Every compatibility feature that is on.
  pub enabled: Vec<String>,
  pub als_only: bool,
  /// Whether bare names (`"buffer"`) reach `node:` modules (nodejs_compat_v2, as in workerd).
  pub bare: bool,
  /// Neither nodejs_compat nor nodejs_als: the worker's own code imports no `node:` module (the
  /// loader is there for trusted host modules only).
  pub none: bool,
}

impl NodeGate {
  /// Whether the worker may import `node:<name>`.
  pub fn allows(&self, name: &str) -> bool {
    if self.none || !sources::has_node_module(name) {
      return false;
    }
    if self.als_only {
      return name == "async_hooks";
    }
    match sources::node_module_flag(name) {
      Some(flag) => self.enabled.iter().any(|f| f == flag),
      None => true,
    }
  }
}

/// With nodejs_compat, the `node:` module `specifier` names: `node:<name>`, or with
/// nodejs_compat_v2 a bare `<name>` of a module the worker may import (as workerd accepts; never
/// with nodejs_als alone). An unknown
/// `node:<name>` is returned too, so that its import fails with workerd's message.
pub(super) fn node_specifier<'a>(specifier: &'a str, registry: &RegistryRef) -> Option<&'a str> {
  let registry = registry.borrow();
  registry.node_loader.as_ref()?;
  match specifier.strip_prefix("node:") {
    Some(name) => Some(name),
    None => (registry.node_gate.bare && !registry.node_gate.als_only && registry.node_gate.allows(specifier)).then_some(specifier),
  }
}

/// A `node:` module: its exports (from `internals.loadNodeModule`) as a synthetic module with
/// one named export per property and the exports object as `default`.
pub(super) fn resolve_node<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, specifier: &str, name: &str, trusted: bool) -> Option<v8::Local<'a, v8::Module>> {
  // Beside a bundle module of the same name (resolve_from), the built-in has a key of its own.
  let key = if registry.borrow().sources.contains_key(&format!("node:{name}")) { format!("node:{name} (built-in)") } else { format!("node:{name}") };
  // Checked before the compiled module is reused: a trusted module may have imported it first.
  let allowed = if trusted { sources::has_node_module(name) } else { registry.borrow().node_allows(name) };
  if allowed {
    if let Some(module) = registry.borrow().compiled.get(&key) {
      return Some(v8::Local::new(scope, module));
    }
  }
  if !allowed {
    if DYNAMIC_IMPORT.get() {
      // What a script may catch and compare is workerd's message; a static import (the worker
      // does not start) gets a second sentence, naming what may be imported.
      throw_no_such_module(scope, specifier, "");
      return None;
    }
    let gate = registry.borrow().node_gate.clone();
    let mut known: Vec<String> = sources::node_module_names().filter(|n| gate.allows(n)).map(|n| format!("node:{n}")).collect();
    known.sort();
    let why = match sources::node_module_flag(name) {
      Some(flag) if sources::has_node_module(name) && !gate.als_only => format!("It needs the {flag} compatibility flag, or nodejs_compat with a later compatibility date. "),
      _ => String::new(),
    };
    throw_no_such_module(scope, specifier, &format!("{why}The worker may import {}.", known.join(", ")));
    return None;
  }
  let loader = v8::Local::new(scope, registry.borrow().node_loader.as_ref()?);
  let arg = values::new_string(scope, name).into();
  let exports = call_loader(scope, loader, &[arg]).and_then(|v| v8::Local::<v8::Object>::try_from(v).ok())?;
  exports::exports_module(scope, registry, key, exports.into(), None)
}

/// The namespace of the `node:` module `name` (or the `cloudflare:`/`workerd:` module so named), instantiated and evaluated now (a synthetic module
/// evaluates synchronously): what process.getBuiltinModule answers under new_module_registry,
/// as in workerd. `None` with an exception thrown when the worker may not import it.
pub(crate) fn node_namespace<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, name: &str) -> Option<v8::Local<'a, v8::Value>> {
  // cloudflare: and workerd: modules too (workerd's getBuiltinModule gives their namespaces).
  let module = match name.split_once(':') {
    Some(("cloudflare", rest)) => resolve_cloudflare(scope, registry, name, rest)?,
    Some(("workerd", _)) => resolve_cloudflare(scope, registry, name, name)?,
    _ => resolve_node(scope, registry, &format!("node:{name}"), name, false)?,
  };
  if module.get_status() == v8::ModuleStatus::Uninstantiated {
    module.instantiate_module2(scope, resolve, source::resolve_source)?;
  }
  if module.get_status() != v8::ModuleStatus::Evaluated {
    module.evaluate(scope)?;
  }
  Some(module.get_module_namespace())
}

/// A `cloudflare:` module (`cloudflare:workers`): its exports from
/// `internals.loadCloudflareModule(name)`, which throws for a module workerbox does not have.
pub(super) fn resolve_cloudflare<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, specifier: &str, name: &str) -> Option<v8::Local<'a, v8::Module>> {
  if let Some(module) = registry.borrow().compiled.get(specifier) {
    return Some(v8::Local::new(scope, module));
  }
  let loader = v8::Local::new(scope, registry.borrow().cloudflare_loader.as_ref()?);
  let arg = values::new_string(scope, name).into();
  // Whether a dynamic import() asks: its error for a module not there is workerd's message alone.
  let dynamic = v8::Boolean::new(scope, DYNAMIC_IMPORT.get()).into();
  let exports = call_loader(scope, loader, &[arg, dynamic])?;
  exports::exports_module(scope, registry, specifier.to_owned(), exports, None)
}
