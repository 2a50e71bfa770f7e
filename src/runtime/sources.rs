//! The JavaScript the runtime embeds, as build.rs lists it: the bootstrap files, the lazily
//! compiled ones, the `node:` modules (sources in `src/js/node/`) with the compatibility flags
//! they sit behind, the npm files those are built on, and the streams ponyfill. Plain data at
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
