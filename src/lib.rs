//! workerbox: Cloudflare-Workers-style JavaScript in sandboxed V8 isolates, inside Node.
//!
//! - [`runtime`]: the engine (isolate and scheduler threads, ops, JS bootstrap), free of napi.
//! - `binding` (feature `node`): the thin napi-rs layer that `index.js` loads.

pub mod runtime;

#[cfg(feature = "node")]
mod binding;
#[cfg(feature = "node")]
mod binding_bytes;
#[cfg(feature = "node")]
mod binding_queue;
