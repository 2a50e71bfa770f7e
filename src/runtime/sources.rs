//! The JavaScript the runtime embeds, as build.rs lists it: the bootstrap files, the lazily
//! compiled ones, the `node:` modules (sources in `src/js/node/`) with the compatibility flags
//! they sit behind, the npm files those are built on, and the streams ponyfill; which files are
//! compiled eagerly, the internal scripts' name prefix, and how every source reaches V8 as
//! Latin-1 (`latin1`). Plain data at
//! the bottom of the runtime: the isolate boots from it, the ops and the module registry look
//! `node:` modules up in it.

include!(concat!(env!("OUT_DIR"), "/bootstrap_files.rs"));

/// Whether `name` (without `node:`) is a `node:` module a worker may import (`internal/…`
/// modules are only for the others).
pub(crate) fn has_node_module(name: &str) -> bool {
  !name.starts_with("internal/") && NODE_MODULES.iter().any(|(n, _)| *n == name)
}

/// The compatibility flag workerd puts `node:<name>` behind, beyond nodejs_compat (see
/// workerd's src/workerd/api/node/node.h); most modules have none. The table is
/// `lib/node-module-flags.json`, which the bundler reads too.
pub(crate) fn node_module_flag(name: &str) -> Option<&'static str> {
  static FLAGS: std::sync::OnceLock<Vec<(String, String)>> = std::sync::OnceLock::new();
  let flags = FLAGS.get_or_init(|| {
    let table: serde_json::Value = serde_json::from_str(include_str!("../../lib/node-module-flags.json")).expect("lib/node-module-flags.json is JSON");
    let modules = table["modules"].as_object().expect("lib/node-module-flags.json has a `modules` object");
    modules.iter().map(|(module, flag)| (module.clone(), flag.as_str().expect("a flag name").to_owned())).collect()
  });
  flags.iter().find(|(module, _)| module == name).map(|(_, flag)| flag.as_str())
}

/// The names of the `node:` modules a worker may import.
pub(crate) fn node_module_names() -> impl Iterator<Item = &'static str> {
  NODE_MODULES.iter().map(|(n, _)| *n).filter(|n| !n.starts_with("internal/"))
}

/// Bootstrap files compiled whole, so that the startup snapshot (which keeps compiled code)
/// holds all of their functions: the paths of every request, module load and WebSocket, which
/// each worker would otherwise compile again on first use.
pub(crate) const EAGER_FILES: &[&str] = &["75_events.js", "76_websocket.js", "80_timers.js", "84_rpc.js", "84_rpc_serve.js", "85_bindings.js", "90_entry.js", "95_node.js", "96_commonjs.js"];

/// The prefix of every internal script's resource name (the bootstrap files, the streams
/// implementation); `ops.runtimeFunction` goes by it, as `internals.isInternalScript` does in JS.
pub(crate) const INTERNAL_SCRIPT_PREFIX: &str = "workerbox:internal/";

/// `source` with every character beyond Latin-1 written as a `\u` escape. Each isolate keeps
/// the source of every bootstrap script in its heap (the startup snapshot carries them), at one
/// byte a character while all are Latin-1 and at two for the whole script once one is not. The
/// few such characters in our files (…, —, → in comments and messages) doubled the size of two
/// thirds of the bootstrap: about 330 KB more in every worker. The lazily compiled files and the
/// `node:` modules go through it too. Where our files use such characters (comments, string and
/// template literals; no raw template text, and none right after a backslash: see the test),
/// the escape stands for the same character.
pub(crate) fn latin1(source: &str) -> std::borrow::Cow<'_, str> {
  use std::fmt::Write;
  if source.chars().all(|c| (c as u32) <= 0xFF) {
    return std::borrow::Cow::Borrowed(source);
  }
  let mut out = String::with_capacity(source.len() + 64);
  let mut units = [0u16; 2];
  for c in source.chars() {
    if (c as u32) <= 0xFF {
      out.push(c);
    } else {
      for unit in c.encode_utf16(&mut units) {
        let _ = write!(out, "\\u{unit:04X}");
      }
    }
  }
  std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn bootstrap_sources_reach_v8_as_latin1_with_the_same_meaning() {
    assert_eq!(latin1("a → b"), "a \\u2192 b");
    assert_eq!(latin1("x 😀"), "x \\uD83D\\uDE00");
    assert!(matches!(latin1("plain é"), std::borrow::Cow::Borrowed(_)));
    // Our own files: the bootstrap, the lazily compiled ones and the `node:` modules (the npm
    // packages those are built on reach V8 as they are).
    let ours = BOOTSTRAP_FILES.iter().chain(LAZY_FILES).chain(NODE_MODULES).chain([&("web-streams-polyfill.js", STREAMS_PONYFILL)]);
    for (name, source) in ours {
      assert!(latin1(source).chars().all(|c| (c as u32) <= 0xFF), "{name}");
      // An escape after a backslash would read as an escaped backslash and the letters "u…".
      let chars: Vec<char> = source.chars().collect();
      for pair in chars.windows(2) {
        assert!(!(pair[0] == '\\' && (pair[1] as u32) > 0xFF), "{name}: a backslash before {:?}", pair[1]);
      }
      // Raw template text keeps escapes as written.
      assert!(!source.contains("String.raw"), "{name} uses String.raw");
    }
  }
}
