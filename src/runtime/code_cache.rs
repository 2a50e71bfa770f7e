//! V8 code cache for user scripts and modules (and the function wrappers of CommonJS modules,
//! `node:` modules and embedded npm files), shared by every worker in the process and optionally
//! kept on disk (`WorkerOptions::code_cache_dir`), so loading a script that was loaded before
//! skips parsing and compiling what was compiled then.
//!
//! An entry is keyed by a SHA-256 over V8's cached-data version tag (which changes with the V8
//! version and the flags that affect code), the V8 version string, the script's kind (module or
//! classic) and its [`SourceDigest`] (file name and source, hashed once per worker rather than
//! on every load). Entries are made after the script has run its top
//! level, so functions compiled during start-up are in them too (a large main script's once
//! the worker has been up for a moment, off its start: `Registry::defer_entry`). V8 checks an entry again when
//! it consumes it; a rejected one (a stale or corrupt file) is dropped and made anew.
//!
//! The in-memory store keeps at most [`MEMORY_LIMIT_BYTES`], dropping the oldest entries first.
//!
//! Compiling through it ([`compile_cached`], then `modules::store_entries` once the code has run) is here
//! too, shared by `script.rs` (the user's script) and `modules.rs` (modules and wrappers).
//!
//! V8 ties cached data to the snapshot the isolate came from, so disk entries serve later
//! processes because the startup snapshot is kept in the same directory (see `isolate/snapshot.rs`).

use super::errors::describe_compile_error;
use super::types::JsErrorInfo;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

const MEMORY_LIMIT_BYTES: usize = 64 << 20;

/// How a script's code cache fared, counted process-wide (for tests and benchmarks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodeCacheStats {
  /// Loads that used an entry (from memory or disk).
  pub hits: u64,
  /// Loads that found no entry.
  pub misses: u64,
  /// Entries V8 refused (stale or corrupt); the script compiled from source instead.
  pub rejected: u64,
  /// Entries made.
  pub stored: u64,
}

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);
static STORED: AtomicU64 = AtomicU64::new(0);

pub fn stats() -> CodeCacheStats {
  CodeCacheStats {
    hits: HITS.load(Ordering::Relaxed),
    misses: MISSES.load(Ordering::Relaxed),
    rejected: REJECTED.load(Ordering::Relaxed),
    stored: STORED.load(Ordering::Relaxed),
  }
}

#[derive(Default)]
struct Memory {
  entries: HashMap<String, Arc<Vec<u8>>>,
  order: VecDeque<String>,
  bytes: usize,
}

impl Memory {
  fn insert(&mut self, key: String, data: Arc<Vec<u8>>) {
    if let Some(old) = self.entries.insert(key.clone(), data.clone()) {
      self.bytes -= old.len();
      self.order.retain(|k| k != &key);
    }
    self.bytes += data.len();
    self.order.push_back(key);
    while self.bytes > MEMORY_LIMIT_BYTES {
      let Some(oldest) = self.order.pop_front() else { break };
      if let Some(old) = self.entries.remove(&oldest) {
        self.bytes -= old.len();
      }
    }
  }

  fn remove(&mut self, key: &str) {
    if let Some(old) = self.entries.remove(key) {
      self.bytes -= old.len();
      self.order.retain(|k| k != key);
    }
  }
}

fn memory() -> &'static Mutex<Memory> {
  static MEMORY: OnceLock<Mutex<Memory>> = OnceLock::new();
  MEMORY.get_or_init(Default::default)
}

/// A SHA-256 over length-prefixed parts, so that different lists of parts never hash alike.
/// The one way cache keys are made here (code cache, saved snapshot, warm pool).
pub(crate) struct KeyHash(Sha256);

impl KeyHash {
  pub fn new() -> Self {
    Self(Sha256::new())
  }

  pub fn part(&mut self, bytes: &[u8]) -> &mut Self {
    self.0.update((bytes.len() as u64).to_le_bytes());
    self.0.update(bytes);
    self
  }

  pub fn finish(self) -> [u8; 32] {
    self.0.finalize().into()
  }
}

/// Lower-case hex of `bytes`, for file names.
pub(crate) fn hex(bytes: &[u8]) -> String {
  bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A script's file name and source, hashed once; what its code-cache entries are made from.
#[derive(Clone, Copy)]
pub struct SourceDigest([u8; 32]);

impl SourceDigest {
  pub fn new(filename: &str, source: &str) -> Self {
    let mut hash = KeyHash::new();
    hash.part(filename.as_bytes()).part(source.as_bytes());
    Self(hash.finish())
  }
}

/// Where one script's entry lives: its key and, when a cache directory is set, its file.
#[derive(Clone)]
pub struct Entry {
  key: String,
  file: Option<PathBuf>,
}

impl Entry {
  /// The entry for a script of `kind` ("module" or "classic").
  pub fn new(kind: &str, source: SourceDigest, dir: Option<&Path>) -> Self {
    let mut hash = KeyHash::new();
    hash
      .part(&v8::script_compiler::cached_data_version_tag().to_le_bytes())
      .part(v8::V8::get_version().as_bytes())
      // Cached code is made against this architecture's snapshot (see isolate/snapshot.rs).
      .part(std::env::consts::ARCH.as_bytes())
      .part(kind.as_bytes())
      .part(&source.0);
    let key = hex(&hash.finish());
    let file = dir.map(|dir| dir.join(format!("{key}.v8cache")));
    Self { key, file }
  }

  /// The cached data, from memory or else from disk; counts a hit or a miss.
  pub fn lookup(&self) -> Option<Arc<Vec<u8>>> {
    let in_memory = memory().lock().unwrap().entries.get(&self.key).cloned();
    let found = in_memory.or_else(|| {
      let data = Arc::new(std::fs::read(self.file.as_ref()?).ok()?);
      memory().lock().unwrap().insert(self.key.clone(), data.clone());
      Some(data)
    });
    let counter = if found.is_some() { &HITS } else { &MISSES };
    counter.fetch_add(1, Ordering::Relaxed);
    found
  }

  /// V8 refused the data: forget it everywhere.
  pub fn reject(&self) {
    REJECTED.fetch_add(1, Ordering::Relaxed);
    HITS.fetch_sub(1, Ordering::Relaxed);
    MISSES.fetch_add(1, Ordering::Relaxed);
    memory().lock().unwrap().remove(&self.key);
    if let Some(file) = &self.file {
      let _ = std::fs::remove_file(file);
    }
  }

  /// Keeps freshly made data in memory and, when there is a directory, on disk. Disk writes
  /// go through a temporary file and a rename, so a reader never sees half an entry; a write
  /// that fails (read-only directory, full disk) only costs the next process a compile.
  pub fn store(&self, data: Vec<u8>) {
    STORED.fetch_add(1, Ordering::Relaxed);
    let data = Arc::new(data);
    memory().lock().unwrap().insert(self.key.clone(), data.clone());
    if let Some(file) = &self.file {
      write_atomically(file, data.as_slice());
    }
  }
}

/// Writes `file` through a temporary file and a rename (creating its folder), so a reader never
/// sees half of it. Failure (read-only folder, full disk) is silent: a cache write is optional.
pub(crate) fn write_atomically(file: &Path, parts: &[u8]) {
  let temporary = file.with_extension(format!("tmp{}", std::process::id()));
  let written = file.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|_| std::fs::write(&temporary, parts));
  if written.and_then(|_| std::fs::rename(&temporary, file)).is_err() {
    let _ = std::fs::remove_file(&temporary);
  }
}

/// A compiled script or module and its code-cache entry, when caching is on.
pub(crate) struct Compiled<'s, T> {
  pub value: v8::Local<'s, T>,
  pub cache: Option<Entry>,
  /// The entry was used (so there is nothing to store afterwards).
  pub cache_hit: bool,
}

/// Compiles with the cached data for `entry` when there is some; says whether it was used.
pub(crate) fn compile_cached<'s, T>(
  scope: &mut v8::PinScope<'s, '_>,
  code: v8::Local<'s, v8::String>,
  origin: &v8::ScriptOrigin<'s>,
  entry: Option<Entry>,
  compile: impl FnOnce(&mut v8::PinScope<'s, '_>, &mut v8::script_compiler::Source, v8::script_compiler::CompileOptions) -> Option<v8::Local<'s, T>>,
) -> Result<Compiled<'s, T>, JsErrorInfo> {
  let data = entry.as_ref().and_then(Entry::lookup);
  let (mut source, options) = match &data {
    Some(bytes) => (
      v8::script_compiler::Source::new_with_cached_data(code, Some(origin), v8::script_compiler::CachedData::new(bytes)),
      v8::script_compiler::CompileOptions::ConsumeCodeCache,
    ),
    None => (v8::script_compiler::Source::new(code, Some(origin)), v8::script_compiler::CompileOptions::NoCompileOptions),
  };
  v8::tc_scope!(let tc, scope);
  let value = compile(tc, &mut source, options).ok_or_else(|| describe_compile_error(tc))?;
  let rejected = data.is_some() && source.get_cached_data().is_some_and(|c| c.rejected());
  if rejected {
    if let Some(entry) = &entry {
      entry.reject();
    }
  }
  Ok(Compiled { value, cache: entry, cache_hit: data.is_some() && !rejected })
}
