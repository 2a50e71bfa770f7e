//! Native functions ("ops") that the JS bootstrap calls through a private `ops` object.
//!
//! The object is handed only to the bootstrap files in `src/js/`; user code never sees it.
//! One file per API family, each exporting its ops through a `register` function.

mod clone;
mod compat;
mod compression;
mod console;
mod crypto;
mod dispatch;
mod encoding;
mod icu_decoder;
mod host;
mod heap;
mod html_rewriter;
mod node;
mod node_crypto;
mod queue;
mod rpc;
mod durable;
mod random;
pub(crate) mod rtti;
mod state;
mod timers;
mod url;
mod urlpattern;
mod wasm;
mod zlib;
mod zlib_api;

pub(crate) use state::{nodejs_compat, ContextHolds, IsolateState, Pending, StateRef, Timer};
pub(crate) use super::values::{arg_string, new_string, read_string_array, string_array, throw_type_error, uint8_array, uint8_array_from, view_bytes};
use std::sync::OnceLock;

pub(crate) use clone::remember_error_prototypes;
pub(crate) use dispatch::take_exit;
pub(crate) use compression::Codec;
pub(crate) use icu_decoder::IcuDecoder;
pub(crate) use html_rewriter::Rewriter;
pub(crate) use node_crypto::NodeHash;
pub(crate) use urlpattern::Pattern as UrlPatternState;
pub(crate) use queue::queue_args;
pub(crate) use rpc::rpc_args;
pub(crate) use zlib::ZlibHandle;

/// An op as V8 calls it (each `fn op_x(scope, args, rv)` converted with `map_fn_to`).
type OpFn = v8::FunctionCallback;

/// Every op, by name.
fn all_ops() -> &'static [(String, OpFn)] {
  static OPS: OnceLock<Vec<(String, OpFn)>> = OnceLock::new();
  OPS.get_or_init(|| {
    let mut ops = Vec::new();
    let mut install = |name: &str, f: OpFn| ops.push((name.to_owned(), f));
    clone::register(&mut install);
    compat::register(&mut install);
    compression::register(&mut install);
    console::register(&mut install);
    crypto::register(&mut install);
    dispatch::register(&mut install);
    encoding::register(&mut install);
    icu_decoder::register(&mut install);
    host::register(&mut install);
    heap::register(&mut install);
    html_rewriter::register(&mut install);
    node::register(&mut install);
    node_crypto::register(&mut install);
    queue::register(&mut install);
    rpc::register(&mut install);
    durable::register(&mut install);
    rtti::register(&mut install);
    random::register(&mut install);
    timers::register(&mut install);
    url::register(&mut install);
    urlpattern::register(&mut install);
    wasm::register(&mut install);
    zlib::register(&mut install);
    ops
  })
}

/// Every op's name, in external-reference order (a saved snapshot refers to ops by position).
pub fn names() -> impl Iterator<Item = &'static str> {
  all_ops().iter().map(|(name, _)| name.as_str())
}

/// The ops as V8 external references, so that a startup snapshot can refer to them.
pub fn external_references() -> std::borrow::Cow<'static, [v8::ExternalReference]> {
  /// The table holds only function pointers, which any thread may read.
  struct Table(Vec<v8::ExternalReference>);
  // SAFETY: the entries are `extern "C"` function pointers, immutable and valid for the
  // whole process.
  unsafe impl Sync for Table {}
  unsafe impl Send for Table {}
  static REFS: OnceLock<Table> = OnceLock::new();
  let table = REFS.get_or_init(|| Table(all_ops().iter().map(|(_, f)| v8::ExternalReference { function: *f }).collect()));
  std::borrow::Cow::Borrowed(&table.0)
}

/// Builds the `ops` object with every op installed.
pub fn build_ops_object<'s>(scope: &mut v8::PinScope<'s, '_>) -> v8::Local<'s, v8::Object> {
  let ops = v8::Object::new(scope);
  for (name, f) in all_ops() {
    let function = v8::Function::builder_raw(*f).build(scope).expect("op function");
    let key = v8::String::new(scope, name).unwrap();
    function.set_name(key);
    ops.set(scope, key.into(), function.into());
  }
  ops
}

/// The worker's per-isolate state.
pub(crate) fn state(scope: &mut v8::PinScope) -> StateRef {
  scope.get_slot::<StateRef>().expect("isolate state slot").clone()
}

/// workerd's error for timers and I/O started by a script's top level, word for word.
const GLOBAL_SCOPE_ERROR: &str = "Disallowed operation called within global scope. Asynchronous I/O (ex: fetch() or connect()), setting a timeout, and generating random values are not allowed within global scope. To fix this error, perform this operation within a handler. https://developers.cloudflare.com/workers/runtime-apis/handlers/";

/// Throws workerd's error and returns true while the user's script runs its top level: a timer
/// set there would belong to no event (a `setInterval` would run forever, charged to nothing),
/// and workerd refuses them, and I/O, at that point.
pub(crate) fn refuse_at_global_scope(scope: &mut v8::PinScope) -> bool {
  if !state(scope).borrow().global_scope {
    return false;
  }
  let message = v8::String::new(scope, GLOBAL_SCOPE_ERROR).unwrap();
  let error = v8::Exception::error(scope, message);
  scope.throw_exception(error);
  true
}

/// Takes `bytes` from the worker's memory budget for something the host keeps for it; when the
/// budget is used up, stops the worker like any memory bomb (ERR_MEMORY_LIMIT), throws a
/// RangeError with `message` into the running JS, and returns `None`.
pub(crate) fn charge_or_stop(scope: &mut v8::PinScope, bytes: usize, message: &str) -> Option<crate::runtime::allocator::Charge> {
  let state = state(scope);
  let charge = crate::runtime::allocator::Charge::take(&state.borrow().budget, bytes);
  if charge.is_none() {
    state.borrow().monitor.terminate(crate::runtime::monitor::StopReason::Memory);
    let message = v8::String::new(scope, message).unwrap();
    let error = v8::Exception::range_error(scope, message);
    scope.throw_exception(error);
  }
  charge
}
