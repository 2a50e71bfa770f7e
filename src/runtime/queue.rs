//! Queue consumer events: the batch a host delivers to a worker's `queue(batch, env, ctx)`
//! handler, what the handler decided about each message, and the arguments the isolate's JS
//! entry point (`internals.dispatchQueue` in `src/js/89_queue.js`) receives. Batching, retries,
//! delays and dead-letter queues are the host's business (`lib/queues/`); the runtime only
//! runs one batch and reports the outcome.

use super::types::{JsErrorInfo, WorkerError};
use bytes::Bytes;

/// One batch for the worker's `queue()` handler.
#[derive(Clone, Debug)]
pub struct QueueEvent {
  /// The queue's name (`batch.queue`).
  pub queue: String,
  /// `{ messages: [{ id, timestamp, attempts, contentType }, …], metadata?: { metrics } }` as
  /// JSON, one message per body.
  pub messages_json: String,
  /// Each message's body as the producer encoded it (`contentType` says how).
  pub bodies: Vec<Bytes>,
}

/// How a queue event ended.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueOutcome {
  /// `"ok"` or `"exception"`.
  pub outcome: String,
  /// `{ ackAll, retryBatch: { retry, delaySeconds? }, explicitAcks, retryMessages }` as JSON.
  pub result_json: String,
  /// The handler's error when `outcome` is `"exception"`.
  pub error: Option<JsErrorInfo>,
}

/// Called once with a queue event's outcome, on the isolate thread.
pub type QueueReply = Box<dyn FnOnce(Result<QueueOutcome, WorkerError>) + Send>;
