//! Build script: napi-rs link settings, the list of JS bootstrap files in `src/js/` (embedded
//! in load order, which is their file-name order), and the WHATWG streams implementation
//! embedded from the `web-streams-polyfill` npm package (installed by `npm ci`).

use std::{
  env, fs,
  path::{Path, PathBuf},
};

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

  // `node:` modules for `nodejs_compat` (src/js/node/<name>.js, subfolders for `stream/promises`
  // and the like), compiled only when imported.
  let node_dir = js_dir.join("node");
  println!("cargo:rerun-if-changed={}", node_dir.display());
  let mut node_files = Vec::new();
  collect_js(&node_dir, &node_dir, &mut node_files);
  out.push_str("/// `node:` modules as (name without `node:`, source), for `nodejs_compat`.\npub const NODE_MODULES: &[(&str, &str)] = &[\n");
  for (name, path) in node_files {
    println!("cargo:rerun-if-changed={}", path.display());
    out.push_str(&format!("  ({:?}, include_str!({:?})),\n", name.trim_end_matches(".js"), path.display().to_string()));
  }
  out.push_str("];\n");
  vendored(&mut out);

  let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
  let streams = manifest.join("node_modules/web-streams-polyfill/dist/ponyfill.js");
  println!("cargo:rerun-if-changed={}", streams.display());
  if !streams.exists() {
    panic!(
      "{} is missing: workerbox embeds the web-streams-polyfill npm package as the isolate's WHATWG streams. Run `npm ci` first.",
      streams.display()
    );
  }
  // One check is made to ask first: WritableStream's RangeError for an underlying sink's `type`
  // is pedantic_wpt's (workerd took any type without it); src/js/98_pedantic.js answers.
  let source = fs::read_to_string(&streams).unwrap();
  let check = r#"if(void 0!==o.type)throw new RangeError("Invalid type is specified")"#;
  assert_eq!(source.matches(check).count(), 1, "web-streams-polyfill: WritableStream's sink type check not found");
  let source = source.replacen(check, r#"if(void 0!==o.type&&exports.sinkTypeChecked())throw new RangeError("Invalid type is specified")"#, 1);
  let patched = PathBuf::from(env::var("OUT_DIR").unwrap()).join("web-streams-polyfill.js");
  fs::write(&patched, source).unwrap();
  out.push_str(&format!(
    "/// web-streams-polyfill's UMD build (`exports.ReadableStream`, …), with `exports.sinkTypeChecked()` asked before its sink type check.\npub const STREAMS_PONYFILL: &str = include_str!({:?});\n",
    patched.display().to_string()
  ));
  fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("bootstrap_files.rs"), out).unwrap();
}

/// The `.js` files under `dir` as (path relative to `root` with `/`, path), sorted.
fn collect_js(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
  let Ok(entries) = fs::read_dir(dir) else { return };
  let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
  paths.sort();
  for path in paths {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if path.is_dir() {
      if !matches!(name.as_str(), "node_modules" | "test" | "tests" | "bench" | "benchmarks" | "example" | "examples" | "build" | "dist" | ".github") {
        collect_js(root, &path, out);
      }
    } else if name.ends_with(".js") {
      let rel = path.strip_prefix(root).unwrap().components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
      out.push((rel, path));
    }
  }
}

/// npm packages the `node:` modules are built on, embedded file by file (CommonJS, loaded by
/// src/js/95_node.js): (package, entry file relative to the package).
const VENDORED: &[(&str, &str)] = &[
  ("buffer", "index.js"),
  ("base64-js", "index.js"),
  ("ieee754", "index.js"),
  ("events", "events.js"),
  ("readable-stream", "lib/ours/browser.js"),
  ("string_decoder", "lib/string_decoder.js"),
  ("safe-buffer", "index.js"),
  ("path-browserify", "index.js"),
  ("querystring-es3", "index.js"),
];

/// `VENDOR_FILES` (path `<package>/<file>`, source) and `VENDOR_MAINS` (package, entry path).
fn vendored(out: &mut String) {
  let modules = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("node_modules");
  out.push_str("/// Files of the npm packages behind the `node:` modules, as (`<package>/<file>`, source).\npub const VENDOR_FILES: &[(&str, &str)] = &[\n");
  for (package, main) in VENDORED {
    let dir = modules.join(package);
    println!("cargo:rerun-if-changed={}", dir.display());
    if !dir.join(main).exists() {
      panic!("{} is missing: workerbox embeds the npm package {package:?} for nodejs_compat. Run `npm ci` first.", dir.join(main).display());
    }
    let mut files = Vec::new();
    collect_js(&dir, &dir, &mut files);
    for (rel, path) in files {
      out.push_str(&format!("  (\"{package}/{rel}\", include_str!({:?})),\n", path.display().to_string()));
    }
  }
  out.push_str("];\n/// Each vendored package's entry file, as (package, `<package>/<file>`).\npub const VENDOR_MAINS: &[(&str, &str)] = &[\n");
  for (package, main) in VENDORED {
    out.push_str(&format!("  ({package:?}, \"{package}/{main}\"),\n"));
  }
  out.push_str("];\n");
}
