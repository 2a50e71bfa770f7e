//! `ops.rttiIntrospect(date, flags, specifiers)` for `workerd:rtti` (src/js/89_rtti.js): the API
//! surface a worker with that compatibility date and those flags has, found by asking one. A
//! worker of its own is started (its own isolate and threads, by the runner the runtime sets:
//! `set_probe_runner`) with src/js/rtti/probe.js as its
//! script and the built-in module specifiers to try in front of it; its one response is the
//! description, as JSON, which the calling worker encodes. The caller's isolate thread waits
//! meanwhile, as workerd's exportTypes is synchronous too.

use super::OpFn;
use crate::runtime::types::resolve_compat_json;
use std::sync::OnceLock;
use v8::MapFnTo;

const PROBE: &str = include_str!("../../js/rtti/probe.js");

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("rttiIntrospect", op_rtti_introspect.map_fn_to());
}

/// `ops.rttiIntrospect(date, flags, specifiers) -> string`: the probe's JSON; a TypeError for a
/// bad date or flag, an Error when the probe worker fails.
fn op_rtti_introspect<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let date = super::arg_string(scope, &args, 0);
  let Some(flags) = super::read_string_array(scope, args.get(1)) else {
    return super::throw_type_error(scope, "exportTypes: the compatibility flags must be an array of strings");
  };
  let mut specifiers: Vec<String> = super::read_string_array(scope, args.get(2)).unwrap_or_default();
  specifiers.extend(crate::runtime::sources::node_module_names().map(|name| format!("node:{name}")));
  let compat = match resolve_compat_json(Some(&date), &flags) {
    Ok(json) => json,
    Err(message) => return super::throw_type_error(scope, &format!("exportTypes: {message}")),
  };
  match describe(compat, &specifiers) {
    Ok(json) => rv.set(super::new_string(scope, &json).into()),
    Err(message) => {
      let message = super::new_string(scope, &format!("exportTypes: {message}"));
      let error = v8::Exception::error(scope, message);
      scope.throw_exception(error);
    }
  }
}

/// Runs a module script once in a worker of its own, with the given compatibility JSON, and
/// returns the text of its answer to one GET (an Err says why not). The runtime above ops sets it
/// (`Worker`'s start-up, src/runtime/worker.rs), so that ops need not refer up to `Worker`.
pub(crate) type ProbeRunner = fn(script: String, filename: &str, compat_json: String) -> Result<String, String>;

static PROBE_RUNNER: OnceLock<ProbeRunner> = OnceLock::new();

/// Sets how a probe worker is run (the first call wins; later ones are the same function).
pub(crate) fn set_probe_runner(runner: ProbeRunner) {
  let _ = PROBE_RUNNER.set(runner);
}

/// Starts the probe worker with `compat_json`, asks it once and stops it.
fn describe(compat_json: String, specifiers: &[String]) -> Result<String, String> {
  let list = serde_json::to_string(specifiers).map_err(|e| e.to_string())?;
  let run = PROBE_RUNNER.get().ok_or("no probe worker can be started in this process")?;
  run(format!("const CANDIDATES = {list};\n{PROBE}"), "workerd-rtti-probe.js", compat_json)
}

#[cfg(test)]
mod tests {
  use crate::runtime::types::resolve_compat_json;

  fn enabled(date: &str, flags: &[&str]) -> Vec<String> {
    let flags: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    let json: serde_json::Value = serde_json::from_str(&resolve_compat_json(Some(date), &flags).unwrap()).unwrap();
    json["enabled"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
  }

  #[test]
  fn exporttypes_resolves_dates_and_flags_as_lib_compat_js_does() {
    // By date, and nodejs_compat's implied-by rule from 2024-09-23 (as lib/compat.js).
    assert!(enabled("2022-03-21", &[]).contains(&"global_navigator".to_owned()));
    assert!(!enabled("2022-03-20", &[]).contains(&"global_navigator".to_owned()));
    assert!(enabled("2024-09-23", &["nodejs_compat"]).contains(&"nodejs_compat_v2".to_owned()));
    assert!(!enabled("2024-09-22", &["nodejs_compat"]).contains(&"nodejs_compat_v2".to_owned()));
    assert!(!enabled("2024-09-23", &["nodejs_compat", "no_nodejs_compat_v2"]).contains(&"nodejs_compat_v2".to_owned()));
    // nodejs_compat_v2 by name brings nodejs_compat; an experimental flag is on only when given.
    assert!(enabled("2023-01-01", &["nodejs_compat_v2"]).contains(&"nodejs_compat".to_owned()));
    assert!(enabled("2023-01-01", &["rtti_api"]).contains(&"rtti_api".to_owned()));
    assert!(!enabled("2023-01-01", &[]).contains(&"rtti_api".to_owned()));
    let bad = |date: &str, flags: &[&str]| resolve_compat_json(Some(date), &flags.iter().map(|f| f.to_string()).collect::<Vec<_>>()).unwrap_err();
    assert_eq!(bad("2023-1-01", &[]), "compatibility date \"2023-1-01\" is not a date in the form YYYY-MM-DD");
    assert_eq!(bad("2023-01-01", &["nope"]), "unknown compatibility flag \"nope\"");
    assert_eq!(bad("2023-01-01", &["nodejs_compat_v2", "no_nodejs_compat_v2"]), "compatibility flags \"nodejs_compat_v2\" and \"no_nodejs_compat_v2\" contradict each other");
  }
}
