//! Workers RPC events: a call from the host into one of the worker's entrypoints (the default
//! export or a named `WorkerEntrypoint` class) or into an object it handed out by reference
//! (an `RpcTarget` or a function). The call's target and arguments arrive as V8-serialized
//! bytes plus a JSON description; the JS entry point (`internals.dispatchRpc` in
//! `src/js/84_rpc.js`) runs the method and answers with the serialized result or the error.
//! Routing between workers is the host's business (`lib/rpc.js`).

use super::types::JsErrorInfo;
use bytes::Bytes;

/// One RPC call into the worker.
#[derive(Clone, Debug)]
pub struct RpcEvent {
  /// `{ entrypoint?, stub?, path: [names…], stubs: [ids…] }` as JSON: what is called, and the
  /// host's ids of the stubs the arguments carry (in the order they appear).
  pub call_json: String,
  /// The arguments, V8-serialized (an array).
  pub args: Bytes,
}

/// How an RPC call ended: the result (V8-serialized, with its stubs' ids as JSON) or the
/// error the method threw.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcOutcome {
  pub result: Option<Bytes>,
  /// `{ stubs: [local ids…] }` for the result, as JSON.
  pub result_json: String,
  pub error: Option<JsErrorInfo>,
}

/// Called once with an RPC call's outcome, on the isolate thread.
pub type RpcReply = Box<dyn FnOnce(Result<RpcOutcome, super::types::WorkerError>) + Send>;
