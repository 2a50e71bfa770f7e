//! Build script: napi-rs link settings, the list of JS bootstrap files in `src/js/` (embedded
//! in load order, which is their file-name order), and the WHATWG streams implementation
//! embedded from the `web-streams-polyfill` npm package (installed by `npm ci`).

use std::{env, fs, path::PathBuf};

fn main() {
  #[cfg(feature = "node")]
  napi_build::setup();

  let js_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("src/js");
  println!("cargo:rerun-if-changed={}", js_dir.display());
  let mut files: Vec<PathBuf> = fs::read_dir(&js_dir)
    .expect("src/js")
    .map(|e| e.unwrap().path())
    .filter(|p| p.extension().is_some_and(|e| e == "js"))
    .collect();
  files.sort();
  let mut out = String::from("/// JS bootstrap files as (name, source), in load order.\npub const BOOTSTRAP_FILES: &[(&str, &str)] = &[\n");
  for path in files {
    println!("cargo:rerun-if-changed={}", path.display());
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    out.push_str(&format!("  ({name:?}, include_str!({:?})),\n", path.display().to_string()));
  }
  out.push_str("];\n");

  // `node:` modules for `nodejs_compat` (src/js/node/<name>.js), compiled only when imported.
  let node_dir = js_dir.join("node");
  println!("cargo:rerun-if-changed={}", node_dir.display());
  let mut node_files: Vec<PathBuf> = fs::read_dir(&node_dir)
    .map(|dir| dir.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "js")).collect())
    .unwrap_or_default();
  node_files.sort();
  out.push_str("/// `node:` modules as (name without `node:`, source), for `nodejs_compat`.\npub const NODE_MODULES: &[(&str, &str)] = &[\n");
  for path in node_files {
    println!("cargo:rerun-if-changed={}", path.display());
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    out.push_str(&format!("  ({name:?}, include_str!({:?})),\n", path.display().to_string()));
  }
  out.push_str("];\n");

  let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
  let streams = manifest.join("node_modules/web-streams-polyfill/dist/ponyfill.js");
  println!("cargo:rerun-if-changed={}", streams.display());
  if !streams.exists() {
    panic!(
      "{} is missing: workerbox embeds the web-streams-polyfill npm package as the isolate's WHATWG streams. Run `npm ci` first.",
      streams.display()
    );
  }
  out.push_str(&format!(
    "/// web-streams-polyfill's UMD build (`exports.ReadableStream`, …).\npub const STREAMS_PONYFILL: &str = include_str!({:?});\n",
    streams.display().to_string()
  ));
  fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("bootstrap_files.rs"), out).unwrap();
}
