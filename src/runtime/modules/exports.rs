//! Synthetic modules over an exports value: what a `node:` module, a `cloudflare:`/`workerd:`
//! module and a CommonJS module from `modules` are to an `import`. `default` is the value itself;
//! the named exports are the object's own properties when the module is made, or, for a CommonJS
//! module given with `namedExports` (workerd's config field), exactly those names (one the object
//! lacks is `undefined`), as workerd derives a CommonJS module's named exports.

use super::{call_loader, RegistryRef};
use crate::runtime::values;

/// A CommonJS module from `modules`: `internals.loadCommonJs(name, nodeEnabled)` runs it (once
/// per context) and its `module.exports` becomes a synthetic module.
pub(crate) fn resolve_commonjs<'a>(scope: &mut v8::PinScope<'a, '_>, registry: &RegistryRef, name: &str) -> Option<v8::Local<'a, v8::Module>> {
  let loader = v8::Local::new(scope, registry.borrow().commonjs_loader.as_ref()?);
  let (node_enabled, trusted) = (registry.borrow().node_enabled(), registry.borrow().is_trusted(name));
  let declared = registry.borrow().source(name).and_then(|m| m.named_exports.clone());
  // A trusted host module's require() reaches every node: module ("trusted", 96_commonjs.js).
  let flag: v8::Local<v8::Value> = if trusted { values::new_string(scope, "trusted").into() } else { v8::Boolean::new(scope, node_enabled).into() };
  let args = [values::new_string(scope, name).into(), flag];
  let exports = call_loader(scope, loader, &args)?;
  exports_module(scope, registry, name.to_owned(), exports, declared.as_deref())
}

/// A synthetic module over `exports`, under registry key `key`: `default` is the value, and the
/// named exports are `declared`, or else each own property of an object.
pub(crate) fn exports_module<'a>(
  scope: &mut v8::PinScope<'a, '_>,
  registry: &RegistryRef,
  key: String,
  exports: v8::Local<'a, v8::Value>,
  declared: Option<&[String]>,
) -> Option<v8::Local<'a, v8::Module>> {
  let mut named: Vec<String> = Vec::new();
  match (declared, v8::Local::<v8::Object>::try_from(exports)) {
    (Some(declared), _) => named.extend(declared.iter().cloned()),
    (None, Ok(object)) => {
      let keys = object.get_own_property_names(scope, v8::GetPropertyNamesArgs::default())?;
      for i in 0..keys.length() {
        named.push(keys.get_index(scope, i)?.to_rust_string_lossy(scope));
      }
    }
    (None, Err(_)) => {}
  }
  let mut seen = std::collections::HashSet::new();
  named.retain(|name| name != "default" && seen.insert(name.clone()));
  let mut names = vec![values::new_string(scope, "default")];
  names.extend(named.iter().map(|name| values::new_string(scope, name)));
  let resource = values::new_string(scope, &key);
  let module = v8::Module::create_synthetic_module(scope, resource, &names, evaluate_exports);
  let hash = module.get_identity_hash().get();
  let mut registry = registry.borrow_mut();
  registry.node_exports.insert(hash, v8::Global::new(scope, exports));
  registry.export_names.insert(hash, named);
  registry.names.insert(hash, key.clone());
  registry.compiled.insert(key, v8::Global::new(scope, module));
  Some(module)
}

/// Sets a synthetic module's exports from its exports value: each name it was made with, read
/// from the value now.
fn evaluate_exports<'a>(context: v8::Local<'a, v8::Context>, module: v8::Local<'a, v8::Module>) -> Option<v8::Local<'a, v8::Value>> {
  // SAFETY: V8 calls this synchronously while evaluating the module, with `context` entered.
  v8::callback_scope!(unsafe let scope, context);
  let registry = scope.get_slot::<RegistryRef>()?.clone();
  let hash = module.get_identity_hash().get();
  let exports = v8::Local::new(scope, registry.borrow().node_exports.get(&hash)?);
  let named = registry.borrow().export_names.get(&hash).cloned().unwrap_or_default();
  let default = values::new_string(scope, "default");
  module.set_synthetic_module_export(scope, default, exports)?;
  let object = v8::Local::<v8::Object>::try_from(exports).ok();
  for name in named {
    let key = values::new_string(scope, &name);
    let value = match object {
      Some(object) => object.get(scope, key.into())?,
      None => v8::undefined(scope).into(),
    };
    module.set_synthetic_module_export(scope, key, value)?;
  }
  Some(v8::undefined(scope).into())
}
