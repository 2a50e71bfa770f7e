//! The messages that travel between a worker's threads.
//!
//! - The host sends [`IsolateMessage`]s to the isolate thread (dispatch a request, shut down).
//! - JS asks the scheduler thread for asynchronous work with [`SchedulerMessage`]s.
//! - The scheduler answers with [`CallbackMessage`]s, delivered to the isolate thread inside
//!   [`IsolateMessage::Callback`], where the pump turns them into JS calls.
//!
//! All three ride on channels whose receivers block (no polling); a send is the wake-up.

use super::types::{FetchRequest, HostCall, HostResult, JsErrorInfo, RequestData, ResponseData, ScheduledEvent, ScheduledOutcome, WorkerError};
use super::queue::{QueueEvent, QueueReply};
use super::rpc::{RpcEvent, RpcReply};
use bytes::Bytes;
use std::time::Duration;

/// Called once with a dispatch's outcome, on the isolate thread.
pub type DispatchReply = Box<dyn FnOnce(Result<ResponseData, WorkerError>) + Send>;

/// Called once with a scheduled event's outcome, on the isolate thread.
pub type ScheduledReply = Box<dyn FnOnce(Result<ScheduledOutcome, WorkerError>) + Send>;

/// Called once when the worker's background (`waitUntil`) work has settled.
pub type SettledReply = Box<dyn FnOnce() + Send>;

/// An event for the worker and where its outcome goes.
pub enum Event {
  Fetch { request: RequestData, reply: DispatchReply },
  Scheduled { event: ScheduledEvent, reply: ScheduledReply },
  Queue { event: QueueEvent, reply: QueueReply },
  Rpc { event: RpcEvent, reply: RpcReply },
}

impl Event {
  /// Answers the event with an error instead of running it.
  pub fn fail(self, error: WorkerError) {
    match self {
      Event::Fetch { reply, .. } => reply(Err(error)),
      Event::Scheduled { reply, .. } => reply(Err(error)),
      Event::Queue { reply, .. } => reply(Err(error)),
      Event::Rpc { reply, .. } => reply(Err(error)),
    }
  }
}

/// Work for the isolate thread.
pub enum IsolateMessage {
  /// Run the worker's handler for an event.
  Dispatch(Event),
  /// Call back once every `waitUntil` promise has settled.
  WhenSettled(SettledReply),
  /// A result from the scheduler thread.
  Callback(CallbackMessage),
  /// Stop: answer everything pending with an error and leave the thread.
  Shutdown,
  /// The inspector has commands waiting (see `inspector.rs`).
  Inspector,
}

/// Requests from JS (on the isolate thread) to the scheduler thread.
pub enum SchedulerMessage {
  /// Arm timer `id` to fire after `delay`.
  StartTimer { id: u32, delay: Duration },
  /// Disarm timer `id` if it has not fired yet.
  CancelTimer { id: u32 },
  /// Report when request `id` has run for `after` (its wall-clock limit).
  StartDeadline { id: u32, after: Duration },
  /// Request `id` finished: drop its deadline.
  CancelDeadline { id: u32 },
  /// JS started running while the CPU watchdog slept: watch it.
  ArmWatchdog,
  /// The isolate was replaced: forget every timer and deadline of the old one.
  Reset,
  /// Ask the host to perform binding call `id`; `untimed`: `limits.bindingMs` does not bound it
  /// (a read or write of a stream passed over RPC, a connect call: they wait on a peer).
  HostCall { id: u32, call: HostCall, untimed: bool },
  /// The host answered binding call `id` (sent by the host's reply, from any thread).
  HostReplied { id: u32, result: Result<HostResult, JsErrorInfo> },
  /// Make outbound HTTP request `id`; its result comes back like a binding call's.
  Fetch { id: u32, request: FetchRequest },
  /// Abort outbound request `id` if it is still in flight.
  CancelFetch { id: u32 },
  /// Outbound request `id` has its answer (sent by its task to the scheduler loop): the head
  /// and whole body, or, when `streaming`, the head only; its body is then read chunk by chunk.
  FetchFinished { id: u32, result: Result<HostResult, JsErrorInfo>, streaming: bool },
  /// Read the next chunk of outbound request `id`'s response body; answered as call `read`.
  FetchRead { id: u32, read: u32 },
  /// Send the next chunk of outbound request `id`'s streamed request body, answered as call
  /// `write` once the connection took it. `None` ends the body; `Some(Err(reason))` fails it.
  FetchWrite { id: u32, write: u32, chunk: Option<Result<Bytes, String>> },
  /// Call `call` (a body read or write of outbound request `id`) finished.
  FetchChunk { id: u32, call: u32, result: Result<HostResult, JsErrorInfo> },
  /// Outbound request `id` is over: its response body was read to the end or failed.
  FetchBodyEnded { id: u32 },
  /// Leave the scheduler loop.
  Shutdown,
}

/// Results from the scheduler thread for the isolate thread.
pub enum CallbackMessage {
  /// Timer `id` is due at `due`. The scheduler's clock has millisecond resolution, so it sends
  /// this up to a millisecond early and the isolate thread waits out the rest precisely.
  TimerFired { id: u32, due: std::time::Instant },
  /// Request `id` reached its wall-clock limit.
  DeadlineReached { id: u32 },
  /// Binding call `id` finished (or timed out).
  HostCallDone { id: u32, result: Result<HostResult, JsErrorInfo> },
}
