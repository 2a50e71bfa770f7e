//! Modules the host loads on demand (`createWorker({ loadModule })`). An import that the
//! worker's own modules cannot answer is asked of the host as a `#module` call, and the isolate
//! thread waits for the answer: V8 resolves static imports synchronously, and CommonJS
//! `require()` is synchronous too, so the wait is the only way to answer them (workerd's
//! module fallback service is called the same way). The wait is bounded by `limits.bindingMs`
//! and ends at once when the worker is stopped (disposed, or over a limit).

use super::monitor::Monitor;
use super::types::{Host, HostCall, JsErrorInfo, ModuleKind};
use bytes::Bytes;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

/// The binding name of module loads in the host's dispatcher (`lib/bindings.js`).
pub(crate) const MODULE_BINDING: &str = "#module";

/// A module the host found: its canonical name (a path or URL, which relative imports inside
/// it resolve against), its kind and its content; and what the host resolved ahead for it.
pub(crate) struct HostModule {
  pub name: String,
  pub kind: ModuleKind,
  pub content: Bytes,
  /// Imports the host resolved ahead (the module's static import graph), so that linking it
  /// needs no further round trip: each says which module imports what under which name, with
  /// the content unless the host sent that module before.
  pub dependencies: Vec<Dependency>,
}

pub(crate) struct Dependency {
  pub referrer: String,
  pub specifier: String,
  pub name: String,
  pub module: Option<(ModuleKind, Bytes)>,
}

/// `esm`, `commonjs`, … (the `type` of `createWorker`'s `modules` entries) as a [`ModuleKind`].
fn kind_of(name: &str) -> Option<ModuleKind> {
  Some(match name {
    "esm" => ModuleKind::EsModule,
    "commonjs" => ModuleKind::CommonJs,
    "wasm" => ModuleKind::Wasm,
    "text" => ModuleKind::Text,
    "data" => ModuleKind::Data,
    "json" => ModuleKind::Json,
    _ => return None,
  })
}

/// Asks the host for `specifier` imported (or required) by the module named `referrer`; `None`
/// when the host has no such module. Blocks the isolate thread until the host answers.
pub(crate) fn load(
  host: &Arc<dyn Host>,
  monitor: &Monitor,
  timeout_ms: u64,
  specifier: &str,
  referrer: &str,
  kind: &str,
) -> Result<Option<HostModule>, JsErrorInfo> {
  let (sender, receiver) = mpsc::channel::<Result<super::types::HostResult, JsErrorInfo>>();
  let stopped = sender.clone();
  monitor.set_waker(Some(Box::new(move || {
    let _ = stopped.send(Err(JsErrorInfo::new("Error", "the worker was stopped while it waited for a module from the host")));
  })));
  if monitor.stop_pending() {
    monitor.set_waker(None);
    return Err(JsErrorInfo::new("Error", "the worker was stopped while it waited for a module from the host"));
  }
  let args = serde_json::json!({ "specifier": specifier, "referrer": referrer, "kind": kind }).to_string();
  let call = HostCall { binding: MODULE_BINDING.to_owned(), method: "load".to_owned(), args, bytes: None };
  host.call(call, Box::new(move |result| drop(sender.send(result))));
  let answer = if timeout_ms > 0 {
    receiver.recv_timeout(Duration::from_millis(timeout_ms)).unwrap_or_else(|_| {
      Err(JsErrorInfo::new("Error", format!("loading \"{specifier}\" timed out: the host's loadModule did not settle within limits.bindingMs")))
    })
  } else {
    receiver.recv().unwrap_or_else(|_| Err(JsErrorInfo::new("Error", "the host went away while loading a module")))
  };
  monitor.set_waker(None);
  let answer = answer?;
  let head: serde_json::Value = serde_json::from_str(&answer.json)
    .map_err(|e| JsErrorInfo::new("Error", format!("the host's answer for module \"{specifier}\" is not JSON: {e}")))?;
  if head.get("found").and_then(|f| f.as_bool()) == Some(false) {
    return Ok(None);
  }
  let name = head.get("name").and_then(|n| n.as_str()).unwrap_or(specifier).to_owned();
  let bytes = answer.bytes.unwrap_or_default();
  let type_of = |entry: &serde_json::Value, name: &str| -> Result<ModuleKind, JsErrorInfo> {
    let type_name = entry.get("type").and_then(|t| t.as_str()).unwrap_or("esm");
    kind_of(type_name).ok_or_else(|| JsErrorInfo::new("TypeError", format!("module \"{name}\" from loadModule has an unknown type \"{type_name}\"")))
  };
  let kind = type_of(&head, &name)?;
  // The payload holds the module's content, then each dependency's that has a size.
  let bad = || JsErrorInfo::new("Error", format!("the host's answer for module \"{specifier}\" does not match its payload"));
  let mut offset = head.get("size").and_then(|s| s.as_u64()).map_or(bytes.len(), |s| s as usize);
  if offset > bytes.len() {
    return Err(bad());
  }
  let content = bytes.slice(..offset);
  let mut dependencies = Vec::new();
  for entry in head.get("dependencies").and_then(|d| d.as_array()).into_iter().flatten() {
    let text = |key: &str| entry.get(key).and_then(|v| v.as_str()).map(str::to_owned).ok_or_else(bad);
    let (referrer, specifier, name) = (text("referrer")?, text("specifier")?, text("name")?);
    let module = match entry.get("size").and_then(|s| s.as_u64()) {
      Some(size) => {
        let end = offset.checked_add(size as usize).filter(|end| *end <= bytes.len()).ok_or_else(bad)?;
        let module = (type_of(entry, &name)?, bytes.slice(offset..end));
        offset = end;
        Some(module)
      }
      None => None,
    };
    dependencies.push(Dependency { referrer, specifier, name, module });
  }
  Ok(Some(HostModule { name, kind, content, dependencies }))
}
