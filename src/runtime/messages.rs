//! The messages that travel between a worker's threads.
//!
//! - The host sends [`IsolateMessage`]s to the isolate thread (dispatch a request, shut down).
//! - JS asks the scheduler thread for asynchronous work with [`SchedulerMessage`]s.
//! - The scheduler answers with [`CallbackMessage`]s, delivered to the isolate thread inside
//!   [`IsolateMessage::Callback`], where the pump turns them into JS calls.
//!
//! All three ride on channels whose receivers block (no polling); a send is the wake-up.

use super::types::{RequestData, ResponseData, WorkerError};
use std::time::Duration;

/// Called once with a dispatch's outcome, on the isolate thread.
pub type DispatchReply = Box<dyn FnOnce(Result<ResponseData, WorkerError>) + Send>;

/// Work for the isolate thread.
pub enum IsolateMessage {
  /// Run the worker's fetch handler for a request.
  Dispatch { request: RequestData, reply: DispatchReply },
  /// A result from the scheduler thread.
  Callback(CallbackMessage),
  /// Stop: answer everything pending with an error and leave the thread.
  Shutdown,
}

/// Requests from JS (on the isolate thread) to the scheduler thread.
#[derive(Debug)]
pub enum SchedulerMessage {
  /// Arm timer `id` to fire after `delay`.
  StartTimer { id: u32, delay: Duration },
  /// Disarm timer `id` if it has not fired yet.
  CancelTimer { id: u32 },
  /// Leave the scheduler loop.
  Shutdown,
}

/// Results from the scheduler thread for the isolate thread.
#[derive(Debug)]
pub enum CallbackMessage {
  /// Timer `id` is due.
  TimerFired { id: u32 },
}
