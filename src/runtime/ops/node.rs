//! Ops behind nodejs_compat: the `node:` module factories (sources in `src/js/node/`) and the
//! continuation-preserved embedder data that `AsyncLocalStorage` keeps its frame in.

use super::{arg_string, new_string, throw_type_error, OpFn};
use crate::runtime::isolate::NODE_MODULES;
use crate::runtime::script::thrown;
use v8::MapFnTo;

pub(super) fn register(install: &mut impl FnMut(&str, OpFn)) {
  install("nodeModuleFactory", op_node_module_factory.map_fn_to());
  install("continuationGet", op_continuation_get.map_fn_to());
  install("continuationSet", op_continuation_set.map_fn_to());
}

/// Whether `name` (without `node:`) is a `node:` module workerbox has.
pub(crate) fn has_node_module(name: &str) -> bool {
  NODE_MODULES.iter().any(|(n, _)| *n == name)
}

/// The names of the `node:` modules workerbox has.
pub(crate) fn node_module_names() -> impl Iterator<Item = &'static str> {
  NODE_MODULES.iter().map(|(n, _)| *n)
}

/// `ops.nodeModuleFactory(name) -> function (ops, internals, exports)`
fn op_node_module_factory<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  let name = arg_string(scope, &args, 0);
  let Some((_, source)) = NODE_MODULES.iter().find(|(n, _)| *n == name) else {
    return throw_type_error(scope, &format!("No such module \"node:{name}\""));
  };
  // The body starts on the wrapper's first line, so stack line numbers match the file.
  let wrapped = format!("(function (ops, internals, exports) {{ \"use strict\"; {source}\n}})");
  let code = new_string(scope, &wrapped);
  let resource = new_string(scope, &format!("node:{name}"));
  let origin = v8::ScriptOrigin::new(scope, resource.into(), 0, 0, false, 0, None, false, false, false, None);
  v8::tc_scope!(let tc, scope);
  match v8::Script::compile(tc, code, Some(&origin)).and_then(|s| s.run(tc)) {
    Some(factory) => rv.set(factory),
    None => {
      let error = thrown(tc);
      throw_type_error(tc, &format!("node:{name} could not be loaded: {}", error.stack));
    }
  }
}

/// `ops.continuationGet() -> value` (undefined when none was set)
fn op_continuation_get<'s>(scope: &mut v8::PinScope<'s, '_>, _args: v8::FunctionCallbackArguments<'s>, mut rv: v8::ReturnValue<'s>) {
  rv.set(scope.get_continuation_preserved_embedder_data());
}

/// `ops.continuationSet(value)`
fn op_continuation_set<'s>(scope: &mut v8::PinScope<'s, '_>, args: v8::FunctionCallbackArguments<'s>, _rv: v8::ReturnValue<'s>) {
  scope.set_continuation_preserved_embedder_data(args.get(0));
}
