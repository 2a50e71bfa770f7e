//! The startup snapshot: the JS bootstrap (every Web API class, the streams implementation)
//! run once in a snapshot-creating isolate and serialized, so that each new isolate
//! deserializes a ready context instead of re-running the bootstrap.
//!
//! It is made lazily, on the first worker's isolate thread, rather than at build time: the
//! snapshot must come from exactly this V8 with exactly these flags, and making it at run time
//! guarantees that without a build step that runs V8. It costs one bootstrap (tens of ms) once
//! per process. Set `WORKERBOX_NO_SNAPSHOT=1` to boot every isolate from source instead.
//!
//! The snapshot is kept on disk and later processes load it instead of making their own: in the
//! first worker's `cacheDir`, else in the per-user cache ([`user_cache_dir`]:
//! `$WORKERBOX_CACHE_DIR`, `$XDG_CACHE_HOME/workerbox` or `~/.cache/workerbox`; set
//! `WORKERBOX_CACHE_DIR` to an empty string to keep nothing on disk). That matters beyond the tens of ms:
//! V8's code cache is tied to the snapshot it was made with, so cached code on disk is only
//! usable by processes that share one snapshot. The file is named by a hash of everything the
//! snapshot depends on (V8 version and flags, CPU architecture and OS, bootstrap sources, the op table, the Rust sources
//! under `src/runtime/`) and carries a
//! CRC-32 of its contents, checked before V8 sees it (it guards against torn or damaged files,
//! and takes about a tenth of the time a SHA-256 of the 1.4 MB blob took on the first create).
//! Writing one removes all but the three newest files of other builds from its folder. When the
//! addon loads, a thread of its own starts V8 and reads and checks the per-user file
//! ([`prewarm`], [`preload`]), so the first worker does not wait for the disk.

use super::{call_internal, install_runtime};
use crate::runtime::code_cache::{hex, write_atomically, KeyHash};
use crate::runtime::ops;
use crate::runtime::sources::{BOOTSTRAP_FILES, EAGER_FILES, STREAMS_PONYFILL};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the `internals` object sits in the snapshot's context data.
pub(crate) const INTERNALS_INDEX: usize = 0;

/// The first bytes of a saved snapshot file; the blob's CRC-32 (4 bytes, little-endian) follows.
const MAGIC: &[u8; 8] = b"WBSNAP02";
const HEADER: usize = MAGIC.len() + 4;

static SNAPSHOT: OnceLock<Option<&'static [u8]>> = OnceLock::new();

/// The per-user cache's snapshot file as [`preload`] read it ahead of the first worker: its
/// path and blob (`None` when it was missing or damaged).
static PRELOADED: OnceLock<(PathBuf, Option<&'static [u8]>)> = OnceLock::new();

/// Starts V8 and reads the saved startup snapshot on a thread of their own, so that the first
/// `createWorker` of the process does not wait for them (the addon calls this when it loads,
/// while Node goes on loading the JS API). Returns at once; a create that comes first simply
/// waits for the initialisation it needs, as it would have done it itself.
pub fn prewarm() {
  let _ = std::thread::Builder::new().name("wb-prewarm".into()).spawn(|| {
    crate::runtime::platform::init_v8();
    preload();
  });
}

/// Reads and checks the per-user cache's snapshot file ahead of need (called off Node's thread
/// when the addon loads, see [`prewarm`]), so that the first `createWorker` finds it in
/// memory. Which snapshot a process uses is still decided by its first worker (its `cacheDir`
/// comes first); this only saves the read when that is the per-user one.
pub(crate) fn preload() {
  if disabled() || SNAPSHOT.get().is_some() {
    return;
  }
  if let Some(dir) = user_cache_dir() {
    let file = snapshot_file(&dir);
    PRELOADED.get_or_init(|| {
      let blob = read(&file);
      (file, blob)
    });
  }
}

/// Whether `WORKERBOX_NO_SNAPSHOT` asks for every isolate to boot from source.
fn disabled() -> bool {
  std::env::var_os("WORKERBOX_NO_SNAPSHOT").is_some_and(|v| v != "0")
}

/// The per-user folder the snapshot is kept in when the first worker has no `cacheDir`, or
/// `None` when `WORKERBOX_CACHE_DIR` is set to an empty string or no home folder is known.
fn user_cache_dir() -> Option<PathBuf> {
  if let Some(dir) = std::env::var_os("WORKERBOX_CACHE_DIR") {
    return (!dir.is_empty()).then(|| PathBuf::from(dir));
  }
  let base = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
  Some(base.join("workerbox"))
}

/// The startup snapshot this process's isolates start from, once the first worker settled it:
/// `None` before that, `Some(None)` when they boot from source.
pub(crate) fn settled_startup_snapshot() -> Option<Option<&'static [u8]>> {
  SNAPSHOT.get().copied()
}

/// `params` starting from `blob` (the process's startup snapshot, with the ops it refers to), or
/// from V8's own snapshot when there is none. Every isolate of the process is made through this:
/// V8 shares one read-only heap among them, made from the snapshot of the first.
pub(crate) fn starting_from(params: v8::CreateParams, blob: Option<&'static [u8]>) -> v8::CreateParams {
  match blob {
    Some(blob) => params.snapshot_blob(v8::StartupData::from(blob)).external_references(ops::external_references()),
    None => params,
  }
}

/// The snapshot blob, loaded from `dir` or else the per-user cache, or made, on first use; `None`
/// when disabled or when making it failed (then isolates boot from source, which is slower but
/// equivalent).
pub(crate) fn startup_snapshot(dir: Option<&Path>) -> Option<&'static [u8]> {
  *SNAPSHOT.get_or_init(|| {
    if disabled() {
      return None;
    }
    // The given directory first, then the per-user cache (so that a new cache directory does
    // not cost a snapshot while the user's cache has one); a new snapshot goes to the first.
    // The given directory then gets a copy, so that it holds what its code cache was made with.
    let files: Vec<_> = dir.map(Path::to_path_buf).into_iter().chain(user_cache_dir()).map(|dir| snapshot_file(&dir)).collect();
    if let Some((index, blob)) = files.iter().enumerate().find_map(|(i, file)| load(file).map(|blob| (i, blob))) {
      if index > 0 {
        save(&files[0], blob);
      }
      return Some(blob);
    }
    let file = files.into_iter().next();
    match create() {
      Ok(blob) => {
        if let Some(file) = &file {
          save(file, &blob);
        }
        Some(Box::leak(blob))
      }
      Err(message) => {
        eprintln!("workerbox: could not make the startup snapshot ({message}); isolates will boot from source");
        None
      }
    }
  })
}

/// Writes a snapshot file: the magic, the blob's digest, the blob.
fn save(file: &Path, blob: &[u8]) {
  let mut contents = Vec::with_capacity(HEADER + blob.len());
  contents.extend_from_slice(MAGIC);
  contents.extend_from_slice(&crc32fast::hash(blob).to_le_bytes());
  contents.extend_from_slice(blob);
  write_atomically(file, &contents);
  prune(file);
}

/// Snapshots of other builds kept beside a new one (most recently written first).
const KEEP_OTHERS: usize = 3;

/// Removes the oldest snapshot files of other builds from `file`'s folder, keeping
/// [`KEEP_OTHERS`]: every upgrade of workerbox (or of the V8 flags) writes a new file, and
/// nothing else would ever remove the old ones.
fn prune(file: &Path) {
  let (Some(dir), Some(own)) = (file.parent(), file.file_name()) else { return };
  let Ok(entries) = std::fs::read_dir(dir) else { return };
  let mut others: Vec<(std::time::SystemTime, PathBuf)> = entries
    .filter_map(Result::ok)
    .filter(|e| e.file_name() != own && e.file_name().to_str().is_some_and(|n| n.starts_with("snapshot-") && n.ends_with(".bin")))
    .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
    .collect();
  others.sort_by(|a, b| b.0.cmp(&a.0));
  for (_, old) in others.into_iter().skip(KEEP_OTHERS) {
    let _ = std::fs::remove_file(old);
  }
}

/// The snapshot this process uses, once `startup_snapshot` has run.
pub(crate) fn current() -> Option<&'static [u8]> {
  SNAPSHOT.get().copied().flatten()
}

/// `<dir>/snapshot-<hash of what the snapshot depends on>.bin`
fn snapshot_file(dir: &Path) -> PathBuf {
  dir.join(format!("snapshot-{}.bin", snapshot_key()))
}

/// The hash of what the snapshot depends on, computed once per process (it reads every
/// bootstrap source, and both the preload and the first worker name the file).
fn snapshot_key() -> &'static str {
  static KEY: OnceLock<String> = OnceLock::new();
  KEY.get_or_init(|| {
    let mut hash = KeyHash::new();
    hash
      .part(v8::V8::get_version().as_bytes())
      .part(&v8::script_compiler::cached_data_version_tag().to_le_bytes())
      .part(crate::runtime::platform::V8_FLAGS.as_bytes())
      // The machine it was made for: a snapshot holds V8's heap as this architecture lays it
      // out, and nothing in it says so. An x64 one read by an arm64 build (a home folder
      // shared by both, x64 Node under Rosetta beside arm64 Node) crashed V8 while it
      // deserialized the read-only space.
      .part(std::env::consts::ARCH.as_bytes())
      .part(std::env::consts::OS.as_bytes())
      .part(env!("CARGO_PKG_VERSION").as_bytes());
    for name in ops::names() {
      hash.part(name.as_bytes());
    }
    hash.part(STREAMS_PONYFILL.as_bytes());
    // The Rust code that compiles and runs the bootstrap (build.rs hashes src/runtime/).
    hash.part(env!("WORKERBOX_RUNTIME_SOURCES").as_bytes());
    for (name, source) in BOOTSTRAP_FILES {
      hash.part(name.as_bytes()).part(source.as_bytes());
    }
    // Which of them are compiled whole (what the snapshot keeps compiled).
    for name in EAGER_FILES {
      hash.part(b"eager").part(name.as_bytes());
    }
    hex(&hash.finish()[..16])
  })
}

/// A saved snapshot whose checksum matches, or `None` (missing, truncated or corrupt files
/// are ignored and replaced).
/// The blob is kept where it was read (it lives as long as the process), not copied.
fn load(file: &Path) -> Option<&'static [u8]> {
  match PRELOADED.get() {
    Some((preloaded, blob)) if preloaded == file => *blob,
    _ => read(file),
  }
}

/// Reads a snapshot file and checks its magic and checksum.
fn read(file: &Path) -> Option<&'static [u8]> {
  let contents = std::fs::read(file).ok()?;
  if contents.len() < HEADER || !contents.starts_with(MAGIC) {
    return None;
  }
  let crc = u32::from_le_bytes(contents[MAGIC.len()..HEADER].try_into().unwrap());
  if crc32fast::hash(&contents[HEADER..]) != crc {
    return None;
  }
  Some(&Box::leak(contents.into_boxed_slice())[HEADER..])
}

fn create() -> Result<Box<[u8]>, String> {
  let mut creator = v8::Isolate::snapshot_creator(Some(ops::external_references()), None);
  let prepared = (|| {
    v8::scope!(let scope, &mut creator);
    let context = v8::Context::new(scope, Default::default());
    let scope = &mut v8::ContextScope::new(scope, context);
    let internals = install_runtime(scope).map_err(|e| e.to_string())?;
    warm_up(scope, internals)?;
    let index = scope.add_context_data(context, internals);
    if index != INTERNALS_INDEX {
      return Err(format!("internals landed at context data index {index}"));
    }
    scope.set_default_context(context);
    Ok(())
  })();
  // A snapshot-creator isolate must be consumed by `create_blob`, even when preparing failed
  // (dropping it otherwise panics), and `create_blob` needs a default context.
  if prepared.is_err() {
    v8::scope!(let scope, &mut creator);
    let context = v8::Context::new(scope, Default::default());
    scope.set_default_context(context);
  }
  let blob = creator.create_blob(v8::FunctionCodeHandling::Keep);
  prepared?;
  let blob = blob.ok_or("V8 could not serialize the context")?;
  Ok(blob.to_vec().into_boxed_slice())
}

/// Runs `internals.warmUp()` (the common request path, in JS) so the functions it uses are
/// compiled, and kept compiled in the snapshot: a worker's first request then runs at once
/// instead of compiling them.
fn warm_up(scope: &mut v8::PinScope, internals: v8::Local<v8::Object>) -> Result<(), String> {
  let result = call_internal(scope, internals, "warmUp", &[]).map_err(|e| format!("the warm-up failed: {}", e.stack))?;
  match v8::Local::<v8::Promise>::try_from(result).map(|p| (p.state(), p)) {
    Ok((v8::PromiseState::Fulfilled, _)) => Ok(()),
    Ok((v8::PromiseState::Rejected, p)) => {
      let reason = p.result(scope);
      Err(format!("the warm-up failed: {}", reason.to_rust_string_lossy(scope)))
    }
    _ => Err("the warm-up did not finish".into()),
  }
}
