//! The workerbox runtime core: V8 isolates running worker scripts on their own threads.
//! It knows nothing about napi; `src/binding.rs` adapts it for Node.

mod allocator;
mod errors;
mod fetch;
pub mod handoff;
mod inflight;
mod isolate;
pub mod log_queue;
mod messages;
mod modules;
mod options;
pub mod inspector;
mod module_loader;
mod module_urls;
mod monitor;
mod ops;
mod platform;
pub mod pool;
pub mod queue;
pub mod rpc;
mod rewriter;
mod scheduler;
mod script;
mod code_cache;
mod sockets;
mod sources;
pub mod store;
mod types;
mod values;
mod wasm_memory;
mod webcrypto;
mod websocket_client;
mod websocket_handshake;
mod worker;

pub use code_cache::{stats as code_cache_stats, CodeCacheStats};
pub use isolate::ReadyCallback;
pub use isolate::prewarm;
pub use isolate::trim_freed_memory_eagerly;
pub use messages::{DispatchReply, ScheduledReply, SettledReply};
pub use queue::{QueueEvent, QueueOutcome, QueueReply};
pub use rpc::{RpcEvent, RpcOutcome, RpcReply};
pub use types::{
  Body, BODY_BINDING, CACHE_BINDING, ExtraModule, Host, HostCall, Isolation, ModuleKind, HostReply, HostResult, JsErrorInfo, Limits, LogLevel, LogSink, RequestData, ResponseData, ScheduledEvent, ScheduledOutcome, ScriptFormat, WorkerError,
  default_compat_json,
};
pub use options::WorkerOptions;
pub use store::{Clock, Store, StoreKind, Stores};
pub use worker::Worker;

#[cfg(test)]
mod tests;
