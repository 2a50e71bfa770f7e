//! Extra modules a worker can import (`modules` option): more ES modules, CommonJS modules (run
//! by `internals.loadCommonJs` in src/js/96_commonjs.js), WebAssembly (default export: a
//! `WebAssembly.Module`), text, binary data and JSON, as Workers' module rules have them.
//! Specifiers resolve like paths relative to the importing module's name; what the modules do
//! not answer goes to the host's `loadModule` when there is one (`module_loader.rs`). Static
//! imports, dynamic `import()` and `import.meta` (`url`, `main`) are answered here; the registry
//! lives in a context slot so V8's callbacks can reach it. With new_module_registry, specifiers
//! are URLs instead (`module_urls.rs`).

use super::code_cache;
use super::sources;
use super::values;
use super::module_loader;
use super::module_urls;
use super::monitor::Monitor;
use super::types::{ExtraModule, Host, Limits, ModuleKind};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

mod builtins;
mod exports;
pub(crate) mod source;

pub(crate) use builtins::{node_namespace, NodeGate};
use builtins::{node_specifier, resolve_cloudflare, resolve_node};

/// Modules by name, compiled ones by name, and names by V8 module identity hash; with
/// nodejs_compat, the loader of `node:` modules and their exports by module identity hash.
#[derive(Default)]
pub(crate) struct Registry {
  sources: HashMap<String, ExtraModule>,
  pub(super) compiled: HashMap<String, v8::Global<v8::Module>>,
  pub(super) names: HashMap<i32, String>,
  node_loader: Option<v8::Global<v8::Function>>,
  /// Which `node:` modules the worker may import.
  node_gate: NodeGate,
  /// `internals.loadCommonJs`.
  pub(super) commonjs_loader: Option<v8::Global<v8::Function>>,
  /// `internals.loadCloudflareModule`, for `cloudflare:` modules (`cloudflare:workers`).
  cloudflare_loader: Option<v8::Global<v8::Function>>,
  /// The exports objects behind synthetic modules (node: and CommonJS), by identity hash, and
  /// the names each exports (exports.rs).
  pub(super) node_exports: HashMap<i32, v8::Global<v8::Value>>,
  pub(super) export_names: HashMap<i32, Vec<String>>,
  /// The host's module loader (`createWorker({ loadModule })`), and the worker's monitor that
  /// a load waits under (it is a binding call: `binding_ms` bounds it).
  loader: Option<(Arc<dyn Host>, Arc<Monitor>)>,
  /// The worker's time limit for a binding call (`Limits::binding_ms`).
  binding_ms: u64,
  /// The most 64 KiB pages a Wasm module's declared memories get: the worker's `memoryMb`.
  wasm_max_pages: u64,
  /// The names the host gave the modules it loaded (paths or URLs), by registry name: what
  /// their stack traces, `import.meta.url` and later loads from them show.
  origins: HashMap<String, String>,
  /// What the host resolved before: (importing module, specifier) → registry name.
  aliases: HashMap<(String, String), String>,
  /// Sets whether what runs now counts as the worker's global scope (timers, I/O and random
  /// values refused) and returns what it was: the isolate's flag, given by the isolate.
  global_scope: Option<fn(&mut v8::PinScope, bool) -> bool>,
  /// The main module's registry name, and the module the main one wraps (`mainModule`), which
  /// counts as main too.
  main: Option<String>,
  wrapped_main: Option<String>,
  /// Keep V8's compiled code of the modules (in this process's memory, by name and source, and
  /// in the directory when one is given).
  code_cache: bool,
  code_cache_dir: Option<std::path::PathBuf>,
  /// The normalized names of the modules given in `modules`.
  given: Vec<String>,
  /// The main module's normalized name and source, for node:fs's /bundle (as in workerd, where
  /// every module, the main one included, is a file there).
  main_source: Option<(String, bytes::Bytes)>,
  /// throw_on_unrecognized_import_assertion: an import with attributes (`with { … }`) fails,
  /// as in workerd's module registry; without it the attributes are ignored.
  refuse_attributes: bool,
  /// new_module_registry: specifiers are URLs (src/runtime/module_urls.rs).
  pub(super) new_registry: bool,
  /// Modules and scripts compiled without a cache entry, whose entries are made again when the
  /// worker is disposed, with every function that ran by then.
  uncached: Vec<(Uncached, code_cache::Entry)>,
  /// Entries of a large main script to make once the isolate is idle after `deferred_due`
  /// (for a 2 MB bundle that is ~35 ms the start and its first request then skip).
  deferred: Vec<(Uncached, code_cache::Entry)>,
  deferred_due: Option<std::time::Instant>,
  /// `trustLoadedModules`: the modules the host's loader gives import every `node:` module.
  trust_loaded: bool,
  /// The registry names of those modules.
  trusted: std::collections::HashSet<String>,
}

/// Code compiled without a cache entry: an ES module, or a classic script (the function
/// wrappers of `node:` modules, embedded npm files and host CommonJS, `ops/node.rs`; the
/// worker's main script, `script.rs`).
#[derive(Clone)]
pub(crate) enum Uncached {
  Module(v8::Global<v8::Module>),
  Script(v8::Global<v8::UnboundScript>),
}

/// The most scripts compiled without an entry that a worker keeps to make their entries again
/// when it is disposed (each is held alive until then).
const MAX_REFRESHED: usize = 4096;

/// Replaces the code cache entries of the modules compiled here without one by what V8 has
/// compiled of them by now (called when the worker is disposed, off the request path).
pub(crate) fn refresh_code_caches(scope: &mut v8::PinScope, registry: &RegistryRef) {
  // Entries still deferred are among these.
  let compiled = {
    let mut r = registry.borrow_mut();
    r.deferred.clear();
    r.deferred_due = None;
    std::mem::take(&mut r.uncached)
  };
  store_entries(scope, compiled);
}

/// Makes each entry from what V8 has compiled of its code by now.
pub(crate) fn store_entries(scope: &mut v8::PinScope, compiled: Vec<(Uncached, code_cache::Entry)>) {
  for (code, entry) in compiled {
    let data = match code {
      Uncached::Module(module) => v8::Local::new(scope, module).get_unbound_module_script(scope).create_code_cache(),
      Uncached::Script(script) => v8::Local::new(scope, script).create_code_cache(),
    };
    if let Some(data) = data {
      entry.store(data.to_vec());
    }
  }
}

/// A main script at least this large gets its code cache entry once the worker is up
/// (`Registry::defer_entry`) rather than on its start's path; a small one's costs well under
/// a millisecond.
pub(crate) const DEFERRED_ENTRY_BYTES: usize = 256 << 10;
/// How long after its start a worker makes its deferred entries (when its isolate is idle):
/// a development server's first request is answered by then.
const DEFER_ENTRY_FOR: std::time::Duration = std::time::Duration::from_millis(250);

/// When the isolate should make its deferred code cache entries, if it has any.
pub(crate) fn deferred_entries_due(isolate: &v8::Isolate) -> Option<std::time::Instant> {
  isolate.get_slot::<RegistryRef>().and_then(|registry| registry.borrow().deferred_due)
}

/// Makes the deferred code cache entries (`Registry::defer_entry`) now.
pub(crate) fn store_deferred_entries(scope: &mut v8::PinScope, registry: &RegistryRef) {
  let deferred = {
    let mut r = registry.borrow_mut();
    r.deferred_due = None;
    std::mem::take(&mut r.deferred)
  };
  store_entries(scope, deferred);
}

/// Compiles classic script `source` (named `resource`) through the code cache when the worker
/// has it on; `None` when caching is off, or when the script does not compile (the caller then
/// compiles it as before, to report the error). A script compiled without an entry gets one now
/// (its top level) and again when the worker is disposed (every function that ran by then).
pub(crate) fn compile_script_cached<'s>(scope: &mut v8::PinScope<'s, '_>, resource: &str, source: &str) -> Option<v8::Local<'s, v8::Script>> {
  let code = v8::String::new(scope, source)?;
  compile_script_cached_at(scope, resource, code, source, (0, 0))
}

/// Whether this worker compiles more scripts through the code cache (`compile_script_cached`):
/// it has the cache on, and has not yet compiled MAX_REFRESHED without an entry (code made anew
/// all the time, as node:vm with `allowEval` may run, would otherwise add an entry each time).
pub(crate) fn script_cache_open(scope: &mut v8::PinScope) -> bool {
  scope.get_slot::<RegistryRef>().is_some_and(|registry| {
    let r = registry.borrow();
    r.code_cache && r.uncached.len() < MAX_REFRESHED
  })
}

/// `compile_script_cached` for `code` (whose text is `source`, for the entry's key) when its
/// first line and column in its file are `at` (node:vm's `lineOffset`/`columnOffset`; the cache
/// entry is the same whatever they are).
pub(crate) fn compile_script_cached_at<'s>(scope: &mut v8::PinScope<'s, '_>, resource: &str, code: v8::Local<'s, v8::String>, source: &str, at: (i32, i32)) -> Option<v8::Local<'s, v8::Script>> {
  let registry = scope.get_slot::<RegistryRef>()?.clone();
  let entry = {
    let r = registry.borrow();
    if !r.code_cache {
      return None;
    }
    code_cache::Entry::new("classic", code_cache::SourceDigest::new(resource, source), r.code_cache_dir.as_deref())
  };
  let name = values::new_string(scope, resource);
  let origin = v8::ScriptOrigin::new(scope, name.into(), at.0, at.1, false, 0, None, false, false, false, None);
  let mut compiled = code_cache::compile_cached(scope, code, &origin, Some(entry), |scope, source, options| {
    v8::script_compiler::compile(scope, source, options, v8::script_compiler::NoCacheReason::NoReason)
  })
  .ok()?;
  if let (false, Some(entry)) = (compiled.cache_hit, compiled.cache.take()) {
    let unbound = compiled.value.get_unbound_script(scope);
    if let Some(data) = unbound.create_code_cache() {
      entry.store(data.to_vec());
    }
    // A worker that compiles new code all its life (node:vm with `allowEval`) keeps no more than
    // MAX_REFRESHED of them alive for that.
    let mut r = registry.borrow_mut();
    if r.uncached.len() < MAX_REFRESHED {
      r.uncached.push((Uncached::Script(v8::Global::new(scope, unbound)), entry));
    }
  }
  Some(compiled.value)
}

pub(crate) type RegistryRef = Rc<RefCell<Registry>>;

impl Registry {
  /// Makes `entry` again from `code` when the worker is disposed, with every function that ran
  /// by then (the main script: a restart's first request then compiles little).
  pub(crate) fn refresh_on_dispose(&mut self, code: Uncached, entry: code_cache::Entry) {
    self.uncached.push((code, entry));
  }

  /// Makes `entry` from `code` once the worker has been up for DEFER_ENTRY_FOR and its isolate
  /// is idle (the pump calls `store_deferred_entries`), or when it is disposed, whichever is
  /// first. Until then a second worker of the same script compiles it anew.
  pub(crate) fn defer_entry(&mut self, code: Uncached, entry: code_cache::Entry) {
    self.deferred.push((code, entry));
    self.deferred_due.get_or_insert_with(|| std::time::Instant::now() + DEFER_ENTRY_FOR);
  }

  pub fn new(modules: &[ExtraModule], limits: &Limits) -> Self {
    let sources = modules.iter().map(|m| (normalize(&m.name), m.clone())).collect();
    // Modules named by absolute path keep it for their stack traces and import.meta.url.
    let origins = modules.iter().filter(|m| m.name.starts_with('/')).map(|m| (normalize(&m.name), m.name.clone())).collect();
    let mut given: Vec<String> = modules.iter().map(|m| normalize(&m.name)).collect();
    given.sort();
    let (binding_ms, wasm_max_pages) = (limits.binding_ms, crate::runtime::wasm_memory::max_pages(limits.memory_mb));
    Self { sources, origins, given, binding_ms, wasm_max_pages, ..Default::default() }
  }

  /// Turns on `node:` imports (nodejs_compat): `loader` is `internals.loadNodeModule`.
  pub fn enable_node(&mut self, loader: v8::Global<v8::Function>, gate: NodeGate) {
    self.node_loader = Some(loader);
    self.node_gate = gate;
  }

  /// Whether the worker may import `node:<name>` (false without nodejs_compat or nodejs_als).
  pub fn node_allows(&self, name: &str) -> bool {
    self.node_loader.is_some() && self.node_gate.allows(name)
  }

  /// Sets the loader of CommonJS modules (`internals.loadCommonJs`).
  pub fn enable_commonjs(&mut self, loader: v8::Global<v8::Function>) {
    self.commonjs_loader = Some(loader);
  }

  /// Sets the loader of `cloudflare:` modules (`internals.loadCloudflareModule`).
  pub fn enable_cloudflare(&mut self, loader: v8::Global<v8::Function>) {
    self.cloudflare_loader = Some(loader);
  }

  /// Whether `node:` modules may be required (nodejs_compat, or nodejs_als for async_hooks).
  pub fn node_enabled(&self) -> bool {
    self.node_loader.is_some() && !self.node_gate.none
  }

  /// Makes the modules the host's loader gives from now on trusted (see `trust_loaded`).
  pub fn trust_loaded_modules(&mut self) {
    self.trust_loaded = true;
  }

  /// Whether module `name` (a registry name) is one of the host's trusted modules.
  pub fn is_trusted(&self, name: &str) -> bool {
    self.trust_loaded && self.trusted.contains(name)
  }

  /// The names of the modules given in `modules` (node:fs's `/bundle`), normalized; not those
  /// the host's loader gave.
  pub fn bundle_names(&self) -> Vec<String> {
    let mut names = self.given.clone();
    if let Some((main, _)) = &self.main_source {
      if !names.contains(main) {
        names.push(main.clone());
        names.sort();
      }
    }
    names
  }

  /// Makes imports with attributes fail (throw_on_unrecognized_import_assertion).
  pub fn refuse_import_attributes(&mut self) {
    self.refuse_attributes = true;
  }

  /// Resolves as workerd's new module registry does (new_module_registry).
  /// Makes the module `name` of `modules` count as the main one too (`import.meta.main`): the
  /// script only wraps it (createWorker's `mainModule`, for test runners).
  pub fn set_wrapped_main(&mut self, name: &str) {
    self.wrapped_main = Some(if self.new_registry { module_urls::bundle_module_name(name) } else { normalize(name) });
  }

  /// Gives the registry the isolate's global-scope switch (see `global_scope`).
  pub fn set_global_scope_switch(&mut self, switch: fn(&mut v8::PinScope, bool) -> bool) {
    self.global_scope = Some(switch);
  }

  pub fn use_new_registry(&mut self) {
    self.new_registry = true;
    // The given modules go by the names workerd's new registry gives them (module_urls.rs);
    // they are all inside the bundle, so none keeps an origin path of its own.
    let given = std::mem::take(&mut self.sources);
    for (key, mut module) in given {
      self.origins.remove(&key);
      module.name = module_urls::bundle_module_name(&module.name);
      self.sources.insert(module.name.clone(), module);
    }
    self.given = self.sources.keys().cloned().collect();
    self.given.sort();
  }

  /// Records the main module's source (a module-format worker) for /bundle.
  pub fn set_main_source(&mut self, name: &str, source: &str) {
    self.main_source = Some((normalize(name), bytes::Bytes::copy_from_slice(source.as_bytes())));
  }

  /// The bytes of the file /bundle shows for `name`: a module given in `modules`, or the main one.
  pub fn bundle_bytes(&self, name: &str) -> Option<bytes::Bytes> {
    let key = normalize(name);
    if let Some(module) = self.sources.get(&key) {
      return Some(module.content.clone());
    }
    self.main_source.as_ref().filter(|(main, _)| *main == key).map(|(_, bytes)| bytes.clone())
  }

  /// A module given in `modules`, by its normalized name.
  pub fn source(&self, name: &str) -> Option<&ExtraModule> {
    self.sources.get(&normalize(name))
  }

  /// Remembers the main module's name so that its relative imports resolve.
  pub fn name_main(&mut self, module: v8::Local<v8::Module>, name: &str) {
    let key = normalize(name);
    if key != name {
      // An absolute path (or URL): what the host's loader is told its imports come from.
      self.origins.insert(key.clone(), name.to_owned());
    }
    self.names.insert(module.get_identity_hash().get(), key.clone());
    self.main = Some(key);
  }

  /// Reuses compiled code of modules compiled before (in any worker of this process, and in
  /// earlier processes when there is a cache directory).
  pub fn enable_code_cache(&mut self, dir: Option<std::path::PathBuf>) {
    self.code_cache = true;
    self.code_cache_dir = dir;
  }

  /// Sends imports that the worker's modules cannot answer to the host's loader; `monitor` is
  /// the worker's, which a load waits under.
  pub fn enable_loader(&mut self, host: Arc<dyn Host>, monitor: Arc<Monitor>) {
    self.loader = Some((host, monitor));
  }

  /// Adds a module the host loaded (unless it is known) under the registry name of its host
  /// name, which it returns; `module` is None when the host sent it before.
  fn add_hosted(&mut self, host_name: String, module: Option<(ModuleKind, bytes::Bytes)>) -> String {
    let name = normalize(&host_name);
    if self.trust_loaded {
      self.trusted.insert(name.clone());
    }
    if let (false, Some((kind, content))) = (self.sources.contains_key(&name), module) {
      self.sources.insert(name.clone(), ExtraModule { name: name.clone(), kind, content, named_exports: None });
      self.origins.insert(name.clone(), host_name);
    }
    name
  }

  /// Records the real path (or URL) of module `key` unless it has one, e.g. the path given to
  /// node:module's createRequire, so the host's loader resolves against it.
  pub fn remember_origin(&mut self, key: &str, origin: String) {
    let origin = origin.strip_prefix("file://").map(str::to_owned).unwrap_or(origin);
    if normalize(&origin) == key && origin != key {
      self.origins.entry(key.to_owned()).or_insert(origin);
    }
  }

  /// The name to show for module `key`: the host's name for modules it loaded.
  pub fn origin<'a>(&'a self, key: &'a str) -> &'a str {
    self.origins.get(key).map_or(key, String::as_str)
  }
}

/// Asks the host's loader, if there is one, for `specifier` imported or required by the module
/// named `referrer` (a registry name); the module joins the registry and its name comes back.
/// `Err` carries the exception to throw (already a message for the user).
pub(crate) fn load_from_host(registry: &RegistryRef, specifier: &str, referrer: &str, kind: &str) -> Result<Option<String>, String> {
  let key = (referrer.to_owned(), specifier.to_owned());
  if let Some(name) = registry.borrow().aliases.get(&key) {
    return Ok(Some(name.clone()));
  }
  let Some((host, monitor)) = registry.borrow().loader.clone() else { return Ok(None) };
  let referrer_origin = registry.borrow().origin(referrer).to_owned();
  let timeout = registry.borrow().binding_ms;
  let found = module_loader::load(&host, &monitor, timeout, specifier, &referrer_origin, kind).map_err(|e| format!("{}: {}", e.name, e.message))?;
  let Some(found) = found else { return Ok(None) };
  let mut registry = registry.borrow_mut();
  let name = registry.add_hosted(found.name, Some((found.kind, found.content)));
  registry.aliases.insert(key, name.clone());
  // What the host resolved ahead: the module's imports, linked without asking again.
  for dependency in found.dependencies {
    let target = registry.add_hosted(dependency.name, dependency.module);
    registry.aliases.insert((normalize(&dependency.referrer), dependency.specifier), target);
  }
  Ok(Some(name))
}

/// `./a/../b.js` → `b.js`; leading `/` and `./` dropped.
fn normalize(path: &str) -> String {
  let mut parts: Vec<&str> = Vec::new();
  for part in path.split('/') {
    match part {
      "" | "." => {}
      ".." => {
        parts.pop();
      }
      part => parts.push(part),
    }
  }
  parts.join("/")
}

/// Resolves `specifier` imported by the module named `referrer`.
fn resolve_name(specifier: &str, referrer: &str) -> String {
  if specifier.starts_with("./") || specifier.starts_with("../") {
    let base = referrer.rsplit_once('/').map_or("", |(dir, _)| dir);
    normalize(&format!("{base}/{specifier}"))
  } else {
    normalize(specifier)
  }
}

/// Throws workerd's error for an import with attributes (throw_on_unrecognized_import_assertion).
fn refuse_attributes<T>(scope: &mut v8::PinScope) -> Option<T> {
  let message = values::new_string(scope, "Unrecognized import attributes specified (workerd's module registry takes no import attributes; the ignore_unrecognized_import_assertion compatibility flag ignores them)");
  let error = v8::Exception::error(scope, message);
  scope.throw_exception(error);
  None
}

thread_local! {
  /// Whether the resolution under way is a dynamic `import()` (whose failure the script can catch
  /// and read: it gets workerd's message alone, see resolve_node).
  pub(super) static DYNAMIC_IMPORT: Cell<bool> = const { Cell::new(false) };
}

pub(super) fn throw(scope: &mut v8::PinScope, message: &str) {
  let message = values::new_string(scope, message);
  let error = v8::Exception::type_error(scope, message);
  scope.throw_exception(error);
}

/// Throws workerd's `Error: No such module "<specifier>".` for a built-in the worker may not
/// import; a static import (the worker does not start) gets `hint` after it as a second
/// sentence, a dynamic `import()` (whose rejection a script may catch and compare) workerd's
/// message alone.
pub(super) fn throw_no_such_module(scope: &mut v8::PinScope, specifier: &str, hint: &str) {
  let text = if DYNAMIC_IMPORT.get() || hint.is_empty() { format!("No such module \"{specifier}\".") } else { format!("No such module \"{specifier}\". {hint}") };
  let message = values::new_string(scope, &text);
  let error = v8::Exception::error(scope, message);
  scope.throw_exception(error);
}

/// V8's resolve callback for every `import` in the worker's modules.
pub(crate) fn resolve<'a>(
  context: v8::Local<'a, v8::Context>,
  specifier: v8::Local<'a, v8::String>,
  attributes: v8::Local<'a, v8::FixedArray>,
  referrer: v8::Local<'a, v8::Module>,
) -> Option<v8::Local<'a, v8::Module>> {
  // SAFETY: V8 calls this synchronously inside `instantiate_module`, with `context` entered.
  v8::callback_scope!(unsafe let scope, context);
  let registry = scope.get_slot::<RegistryRef>()?.clone();
  let specifier = specifier.to_rust_string_lossy(scope);
  let referrer_name = registry.borrow().names.get(&referrer.get_identity_hash().get()).cloned().unwrap_or_default();
  if registry.borrow().new_registry {
    let attributes = module_urls::attribute_pairs(scope, attributes, 3);
    return resolve_new(scope, &registry, &specifier, &referrer_name, &attributes);
  }
  if attributes.length() > 0 && registry.borrow().refuse_attributes {
    return refuse_attributes(scope);
  }
  resolve_from(scope, &registry, &specifier, &referrer_name)
}

/// The module `specifier` names when imported by the module named `referrer_name`: a
/// `cloudflare:` or `node:` module, one of the worker's modules, or one the host loads.
/// `None` with an exception thrown when there is none.
fn resolve_from<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, specifier: &str, referrer_name: &str) -> Option<v8::Local<'a, v8::Module>> {
  if let Some(name) = specifier.strip_prefix("cloudflare:") {
    return resolve_cloudflare(scope, registry, specifier, name);
  }
  // workerd's own modules (workerd:unsafe) come from the same loader, by their whole specifier.
  if specifier.starts_with("workerd:") {
    return resolve_cloudflare(scope, registry, specifier, specifier);
  }
  let trusted = registry.borrow().is_trusted(referrer_name);
  let node_name = match specifier.strip_prefix("node:") {
    // A trusted host module (trustLoadedModules) imports any node: module, whatever the flags.
    Some(name) if trusted && registry.borrow().node_loader.is_some() => Some(name),
    _ => node_specifier(specifier, registry),
  };
  // A module of the bundle named like a built-in ("node:fs") stands in for it in imports, as
  // workerd lets a bundle alias node: modules (process.getBuiltinModule still gives the built-in).
  let bundled = specifier.starts_with("node:") && registry.borrow().sources.contains_key(specifier);
  if let Some(node_name) = node_name.filter(|_| !bundled) {
    // A node: module workerbox does not have may come from the host's loader (a shim).
    let hosted = registry.borrow().loader.is_some() && !sources::has_node_module(node_name);
    if !hosted {
      return resolve_node(scope, registry, specifier, node_name, trusted);
    }
  }
  let mut name = resolve_name(specifier, referrer_name);
  if let Some(module) = registry.borrow().compiled.get(&name) {
    return Some(v8::Local::new(scope, module));
  }
  if !registry.borrow().sources.contains_key(&name) {
    match load_from_host(registry, specifier, referrer_name, "import") {
      Ok(Some(found)) => name = found,
      Ok(None) => {}
      Err(message) => {
        throw(scope, &format!("Cannot load module \"{specifier}\" imported by \"{}\": {message}", registry.borrow().origin(referrer_name)));
        return None;
      }
    }
    if let Some(module) = registry.borrow().compiled.get(&name) {
      return Some(v8::Local::new(scope, module));
    }
  }
  let Some(source) = registry.borrow().sources.get(&name).cloned() else {
    let registry = registry.borrow();
    let referrer = registry.origin(referrer_name);
    // A node: module without nodejs_compat (or one neither workerbox nor the host's loader has):
    // workerd's error for a built-in it does not have.
    if specifier.starts_with("node:") {
      let hint = if registry.node_loader.is_none() {
        format!("node: modules need the nodejs_compat compatibility flag (or nodejs_als for node:async_hooks); imported by \"{referrer}\".")
      } else {
        format!("Imported by \"{referrer}\"; neither workerbox nor the host's loadModule has it.")
      };
      throw_no_such_module(scope, specifier, &hint);
      return None;
    }
    if registry.loader.is_some() {
      throw(scope, &format!("Cannot resolve module \"{specifier}\" imported by \"{referrer}\": it is not one of the worker's modules, and the host's loadModule did not find it"));
      return None;
    }
    let known: Vec<String> = registry.sources.keys().cloned().collect();
    let listed = if known.is_empty() { "none were given".to_owned() } else { known.join(", ") };
    throw(scope, &format!("Cannot resolve module \"{specifier}\" imported by \"{referrer}\": no module named \"{name}\" in the worker's modules ({listed}); bundle the worker or pass it in `modules`"));
    return None;
  };
  compile_source(scope, registry, source, name.clone(), &name)
}

/// Compiles (or, for text, data, JSON and Wasm, wraps) the module `name`'s `source` as the
/// module instance with registry key `key` (the name, or with new_module_registry the name with
/// a query or fragment).
fn compile_source<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, source: ExtraModule, key: String, name: &str) -> Option<v8::Local<'a, v8::Module>> {
  let resource_name = registry.borrow().origin(&key).to_owned();
  let module = match source.kind {
    ModuleKind::CommonJs => return exports::resolve_commonjs(scope, registry, name),
    ModuleKind::EsModule => {
      let text = String::from_utf8_lossy(&source.content).into_owned();
      let code = values::new_string(scope, &text);
      let resource = values::new_string(scope, &resource_name);
      let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, true, None);
      let entry = {
        let r = registry.borrow();
        r.code_cache.then(|| code_cache::Entry::new("module", code_cache::SourceDigest::new(&resource_name, &text), r.code_cache_dir.as_deref()))
      };
      let outcome = code_cache::compile_cached(scope, code, &origin, entry, |scope, source, options| {
        v8::script_compiler::compile_module2(scope, source, options, v8::script_compiler::NoCacheReason::NoReason)
      });
      match outcome {
        Ok(mut compiled) => {
          if let (false, Some(entry)) = (compiled.cache_hit, compiled.cache.take()) {
            // What V8 compiled eagerly (the top level) now; what ran by the time the worker
            // is disposed replaces it then (refresh_code_caches).
            if let Some(data) = compiled.value.get_unbound_module_script(scope).create_code_cache() {
              entry.store(data.to_vec());
            }
            registry.borrow_mut().uncached.push((Uncached::Module(v8::Global::new(scope, compiled.value)), entry));
          }
          compiled.value
        }
        Err(_) if scope.is_execution_terminating() => return None,
        Err(error) => {
          // A SyntaxError whose message names the module, line and column.
          let message = values::new_string(scope, &error.message);
          let exception = v8::Exception::syntax_error(scope, message);
          scope.throw_exception(exception);
          return None;
        }
      }
    }
    _ => {
      let export = values::new_string(scope, "default");
      let resource = values::new_string(scope, &resource_name);
      v8::Module::create_synthetic_module(scope, resource, &[export], evaluate_synthetic)
    }
  };
  let mut registry = registry.borrow_mut();
  registry.names.insert(module.get_identity_hash().get(), key.clone());
  registry.compiled.insert(key, v8::Global::new(scope, module));
  Some(module)
}

/// Resolution under new_module_registry (src/runtime/module_urls.rs): specifiers as URLs,
/// workerd's "Module not found" and attribute checks. Modules the host's loader named keep the
/// path rules, and what the bundle does not have still goes to the loader when there is one.
fn resolve_new<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, specifier: &str, referrer: &str, attributes: &[(String, String)]) -> Option<v8::Local<'a, v8::Module>> {
  let fail = |scope: &mut v8::PinScope<'a, '_>, message: String| {
    throw(scope, &message);
    None
  };
  let (hosted_referrer, has_loader) = {
    let r = registry.borrow();
    (r.origins.contains_key(referrer), r.loader.is_some())
  };
  if hosted_referrer {
    return resolve_from(scope, registry, specifier, referrer);
  }
  if specifier.starts_with("node:") && registry.borrow().sources.contains_key(specifier) {
    return resolve_from(scope, registry, specifier, referrer);
  }
  if specifier.starts_with("cloudflare:") || specifier.starts_with("workerd:") || specifier.starts_with("node:") || node_specifier(specifier, registry).is_some() {
    if let Err(message) = module_urls::check_attributes(specifier, attributes, None) {
      return fail(scope, message);
    }
    if let Some(name) = specifier.strip_prefix("node:") {
      if !registry.borrow().node_allows(name) && !(has_loader && !sources::has_node_module(name)) {
        return fail(scope, module_urls::not_found(specifier));
      }
    }
    return resolve_from(scope, registry, specifier, referrer);
  }
  let Some(url) = module_urls::resolve(specifier, referrer) else {
    return fail(scope, module_urls::not_found(specifier));
  };
  // A module named by a URL outside the bundle ("https://example.com/mod") is found by that URL.
  let named = || {
    let mut bare = url.clone();
    bare.set_query(None);
    bare.set_fragment(None);
    (url.to_string(), bare.to_string())
  };
  let found = module_urls::bundle_key(&url).or_else(|| Some(named())).and_then(|(key, name)| registry.borrow().sources.get(&name).cloned().map(|source| (key, name, source)));
  let Some((key, name, source)) = found else {
    if has_loader {
      return resolve_from(scope, registry, specifier, referrer);
    }
    return fail(scope, module_urls::not_found(url.as_str()));
  };
  if let Err(message) = module_urls::check_attributes(specifier, attributes, Some(&source.kind)) {
    return fail(scope, message);
  }
  if let Some(module) = registry.borrow().compiled.get(&key) {
    return Some(v8::Local::new(scope, module));
  }
  compile_source(scope, registry, source, key, &name)
}

/// The module `import(specifier)` (or `import.source`) in the script or module named `referrer`
/// (its resource name) finds, resolved like a static import from there; `attributes` are the
/// dynamic import's `with` pairs.
pub(crate) fn resolve_import<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, specifier: &str, referrer: &str, attributes: v8::Local<'a, v8::FixedArray>) -> Option<v8::Local<'a, v8::Module>> {
  if attributes.length() > 0 && registry.borrow().refuse_attributes && !registry.borrow().new_registry {
    return refuse_attributes(scope);
  }
  // The calling module's registry name (a module's name, normalized, whoever named it).
  let referrer_name = normalize(referrer);
  let before = DYNAMIC_IMPORT.replace(true);
  let resolved = if registry.borrow().new_registry {
    let attributes = module_urls::attribute_pairs(scope, attributes, 2);
    resolve_new(scope, registry, specifier, &referrer_name, &attributes)
  } else {
    resolve_from(scope, registry, specifier, &referrer_name)
  };
  DYNAMIC_IMPORT.set(before);
  resolved
}

/// V8's callback for `import()`: resolves like a static import from the calling script or
/// module, then instantiates and evaluates the module; the promise settles with its namespace
/// once its top-level await has.
pub(crate) fn import_dynamically<'s>(
  scope: &mut v8::PinScope<'s, '_>,
  _host_defined_options: v8::Local<'s, v8::Data>,
  resource_name: v8::Local<'s, v8::Value>,
  specifier: v8::Local<'s, v8::String>,
  attributes: v8::Local<'s, v8::FixedArray>,
) -> Option<v8::Local<'s, v8::Promise>> {
  let specifier = specifier.to_rust_string_lossy(scope);
  let referrer = resource_name.to_rust_string_lossy(scope);
  v8::tc_scope!(let tc, scope);
  let outcome = match tc.get_slot::<RegistryRef>().cloned() {
    None => None,
    Some(registry) => resolve_import(tc, &registry, &specifier, &referrer, attributes).and_then(|module| {
      if module.get_status() == v8::ModuleStatus::Uninstantiated && module.instantiate_module2(tc, resolve, source::resolve_source).is_none() {
        return None;
      }
      // Under new_module_registry the module's top level runs outside the request that imports
      // it, as in workerd: timers, I/O and random values there are refused as at startup.
      let outside = registry.borrow().global_scope.filter(|_| registry.borrow().new_registry);
      let before = outside.map(|set| set(tc, true));
      let evaluated = module.evaluate(tc);
      if let (Some(set), Some(before)) = (outside, before) {
        set(tc, before);
      }
      Some((module, evaluated?))
    }),
  };
  match outcome {
    Some((module, evaluated)) => {
      let namespace = module.get_module_namespace();
      // Synthetic modules (JSON, node:, …) evaluate to a value rather than a promise.
      let evaluated = match v8::Local::<v8::Promise>::try_from(evaluated) {
        Ok(promise) => promise,
        Err(_) => {
          let resolver = v8::PromiseResolver::new(tc)?;
          resolver.resolve(tc, evaluated);
          resolver.get_promise(tc)
        }
      };
      let give_namespace = v8::Function::builder(|_: &mut v8::PinScope, args: v8::FunctionCallbackArguments, mut rv: v8::ReturnValue| rv.set(args.data()))
        .data(namespace)
        .build(tc)?;
      evaluated.then(tc, give_namespace)
    }
    None => {
      if tc.has_terminated() || !tc.has_caught() {
        return None;
      }
      let exception = tc.exception()?;
      let resolver = v8::PromiseResolver::new(tc)?;
      resolver.reject(tc, exception);
      Some(resolver.get_promise(tc))
    }
  }
}

/// The module named `name` (one of the worker's or the host's, by registry name), compiled if it
/// was not yet: for `require()` of an ES module (ops/node.rs). `None` with an Error thrown when
/// there is none.
pub(crate) fn module_named<'s>(scope: &mut v8::PinScope<'s, '_>, registry: &RegistryRef, name: &str) -> Option<v8::Local<'s, v8::Module>> {
  if let Some(module) = registry.borrow().compiled.get(name) {
    return Some(v8::Local::new(scope, module));
  }
  let Some(source) = registry.borrow().sources.get(name).cloned() else {
    let message = values::new_string(scope, &format!("No such module \"{name}\"."));
    let error = v8::Exception::error(scope, message);
    scope.throw_exception(error);
    return None;
  };
  compile_source(scope, registry, source, name.to_owned(), name)
}

/// V8's callback the first time a module reads `import.meta`: `url` (`file:///bundle/<name>`
/// for the worker's modules, as workerd has it; the host's name, as a URL, for modules the host
/// loaded) and `main`.
pub(crate) extern "C" fn init_import_meta(context: v8::Local<v8::Context>, module: v8::Local<v8::Module>, meta: v8::Local<v8::Object>) {
  // SAFETY: V8 calls this synchronously with `context` entered.
  v8::callback_scope!(unsafe let scope, context);
  let Some(registry) = scope.get_slot::<RegistryRef>().cloned() else { return };
  let (url, main, new_registry) = {
    let r = registry.borrow();
    let Some(key) = r.names.get(&module.get_identity_hash().get()) else { return };
    let url = match r.origins.get(key) {
      Some(origin) => url::Url::from_file_path(origin).map_or_else(|_| origin.clone(), String::from),
      None => module_urls::module_url(key).map_or_else(|| format!("{}{key}", module_urls::BUNDLE), String::from),
    };
    let main = r.main.as_deref() == Some(key.as_str()) || r.wrapped_main.as_deref() == Some(key.as_str());
    (url, main, r.new_registry)
  };
  if new_registry {
    return module_urls::fill_import_meta(scope, meta, &url, main);
  }
  let url_key = values::new_string(scope, "url");
  let url = values::new_string(scope, &url);
  meta.create_data_property(scope, url_key.into(), url.into());
  let main_key = values::new_string(scope, "main");
  let main = v8::Boolean::new(scope, main);
  meta.create_data_property(scope, main_key.into(), main.into());
}


/// Calls one of the bootstrap's module loaders (`internals.loadNodeModule`, …) with `args`;
/// `None` when it threw, with its exception passed on to whoever resolves the import.
pub(crate) fn call_loader<'a>(scope: &mut v8::PinScope<'a, '_>, loader: v8::Local<'a, v8::Function>, args: &[v8::Local<'a, v8::Value>]) -> Option<v8::Local<'a, v8::Value>> {
  v8::tc_scope!(let tc, scope);
  let recv = v8::undefined(tc).into();
  let result = loader.call(tc, recv, args);
  if result.is_none() && tc.has_caught() {
    tc.rethrow();
  }
  result
}

/// A Wasm module's `WebAssembly.Module` (its default export, and its source for `import source`).
/// The memories the module declares get at most the worker's memoryMb (see wasm_memory.rs).
pub(crate) fn compile_wasm<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, source: &ExtraModule) -> Option<v8::Local<'a, v8::WasmModuleObject>> {
  let max_pages = registry.borrow().wasm_max_pages;
  let capped = crate::runtime::wasm_memory::cap_declared_memories(&source.content, max_pages);
  v8::tc_scope!(let tc, scope);
  let compiled = v8::WasmModuleObject::compile(tc, capped.as_deref().unwrap_or(&source.content));
  if compiled.is_none() {
    if tc.has_caught() {
      tc.rethrow();
    } else {
      throw(tc, &format!("\"{}\" is not a valid WebAssembly module", source.name));
    }
  }
  compiled
}

/// Sets a non-JS module's default export: WebAssembly.Module, string, ArrayBuffer or JSON.
fn evaluate_synthetic<'a>(context: v8::Local<'a, v8::Context>, module: v8::Local<'a, v8::Module>) -> Option<v8::Local<'a, v8::Value>> {
  // SAFETY: V8 calls this synchronously while evaluating the module, with `context` entered.
  v8::callback_scope!(unsafe let scope, context);
  let registry = scope.get_slot::<RegistryRef>()?.clone();
  let source = {
    let registry = registry.borrow();
    let name = registry.names.get(&module.get_identity_hash().get())?;
    registry.sources.get(name)?.clone()
  };
  let value: v8::Local<v8::Value> = match source.kind {
    ModuleKind::Wasm => compile_wasm(scope, &registry, &source)?.into(),
    ModuleKind::Text => values::new_string(scope, &String::from_utf8_lossy(&source.content)).into(),
    ModuleKind::Data => values::uint8_array(scope, source.content.to_vec()).buffer(scope)?.into(),
    ModuleKind::Json => {
      let text = values::new_string(scope, &String::from_utf8_lossy(&source.content));
      v8::json::parse(scope, text)?
    }
    // These are compiled or evaluated elsewhere, never as this kind of synthetic module.
    ModuleKind::EsModule | ModuleKind::CommonJs => return None,
  };
  let export = values::new_string(scope, "default");
  module.set_synthetic_module_export(scope, export, value)?;
  Some(v8::undefined(scope).into())
}

#[cfg(test)]
mod tests {
  use super::resolve_name;

  #[test]
  fn specifiers_resolve_like_paths() {
    assert_eq!(resolve_name("./lib/a.js", "src/main.js"), "src/lib/a.js");
    assert_eq!(resolve_name("../b.wasm", "src/lib/a.js"), "src/b.wasm");
    assert_eq!(resolve_name("add.wasm", "src/main.js"), "add.wasm");
    assert_eq!(resolve_name("./x.txt", "main.js"), "x.txt");
  }
}
