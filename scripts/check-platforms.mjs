#!/usr/bin/env node
// `npm run check:platforms`: proves that the crate compiles, warning-free, for every target the
// release workflow publishes (issue 39), from this one Linux x86_64 machine. It owns nothing but
// that check: it builds no addon and links nothing.
//
// For each target it adds the Rust target with rustup if missing, then runs
// `cargo check --features node --target <t>` in its own target dir (target/platforms, so the
// main build is neither locked nor evicted), with:
// - a C/C++ cross toolchain for the build scripts that compile C (sqlite, ring, …): zig, through
//   `cargo zigbuild` (pip install ziglang cargo-zigbuild), for macOS and Linux targets; for
//   windows-msvc zig has no MSVC headers, so `zig cc -target x86_64-windows-gnu` is given as CC
//   (enough to compile the C of a check; a real msvc link needs the Windows SDK and MSVC);
// - RUSTY_V8_SKIP_DOWNLOAD=1: the v8 crate's build script then wants no V8 archive (a check
//   links nothing) and takes the Rust bindings it ships for the target in its own gen/ folder.
// Any error or warning in workerbox itself fails the target (read from cargo's JSON messages;
// warnings of dependencies are not ours to fix). A per-target table with times ends the run.
//
// Then the exports (the addon must export napi's entry points only; see build.rs and
// scripts/link-napi-only.sh): every addon linked on this machine (./workerbox.linux-x64-gnu.node
// from `npm run build`, ./workerbox.linux-arm64-gnu.node from `npm run test:arm64`) is read with
// llvm-nm, and any other exported symbol fails the check. The other targets' addons are not
// linked here (no V8 archive for them), so for those a probe cdylib with one napi entry point and
// one `v8__`-style symbol is linked as the release workflow links the addon: musl with
// cargo-zigbuild and the version script workerbox's build.rs emits (read from the build
// script's output of the check above), its exports read with llvm-nm; macOS through
// scripts/link-napi-only.sh, where what is checked is the export list handed to the linker (zig's
// Mach-O linker ignores `-exported_symbols_list`; Apple's ld, in the workflow, applies it).
// windows-msvc is not linked (no MSVC linker here) and says so.
//
// usage: node scripts/check-platforms.mjs [--exports-only] [target…]   (default: all seven)
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-unknown-linux-musl",
  "aarch64-unknown-linux-musl",
  "aarch64-apple-darwin",
  "x86_64-apple-darwin",
  "x86_64-pc-windows-msvc",
];

const exportsOnly = process.argv.includes("--exports-only");
const wanted = process.argv.slice(2).filter((a) => a !== "--exports-only");
for (const t of wanted) if (!TARGETS.includes(t)) {
  console.error(`unknown target ${t}; known: ${TARGETS.join(", ")}`);
  process.exit(2);
}
const targets = wanted.length ? wanted : TARGETS;
const targetDir = resolve(root, "target", "platforms");

function run(cmd, args, opts = {}) {
  return spawnSync(cmd, args, { cwd: root, encoding: "utf8", maxBuffer: 1 << 30, ...opts });
}

function need(cmd, args, hint) {
  const r = run(cmd, args);
  if (r.error || r.status !== 0) {
    console.error(`${cmd} is needed: ${hint}`);
    process.exit(1);
  }
}
need("rustup", ["--version"], "install Rust with rustup");
need("cargo-zigbuild", ["--version"], "pip install ziglang cargo-zigbuild");

const installed = new Set(run("rustup", ["target", "list", "--installed"]).stdout.split("\n").filter(Boolean));

// windows-msvc: a CC wrapper running zig's clang for x86_64-windows-gnu.
function windowsCc() {
  const dir = resolve(targetDir, "zig-windows");
  mkdirSync(dir, { recursive: true });
  const zig = run("python3", ["-c", "import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"]).stdout.trim();
  const wrappers = {};
  for (const [name, sub] of [["cc", "cc"], ["c++", "c++"], ["ar", "lib"]]) {
    const file = resolve(dir, name);
    const extra = sub === "lib" ? "" : " -target x86_64-windows-gnu";
    // cc-rs passes --target=x86_64-pc-windows-msvc, which zig does not know: drop it.
    const drop = 'for a; do shift; case "$a" in --target=*) ;; *) set -- "$@" "$a" ;; esac; done\n';
    writeFileSync(file, `#!/bin/sh\n${drop}exec "${zig}" ${sub}${extra} "$@"\n`);
    chmodSync(file, 0o755);
    wrappers[name] = file;
  }
  return wrappers;
}

const rows = [];
for (const target of exportsOnly ? [] : targets) {
  const started = Date.now();
  if (!installed.has(target)) {
    const add = run("rustup", ["target", "add", target], { stdio: "inherit" });
    if (add.status !== 0) {
      rows.push({ target, result: "rustup target add failed", seconds: 0 });
      continue;
    }
  }
  const env = { ...process.env, CARGO_TARGET_DIR: targetDir, RUSTY_V8_SKIP_DOWNLOAD: "1" };
  delete env.RUSTY_V8_ARCHIVE;
  // musl links statically by default and then cannot make a cdylib (rustc warns that it drops
  // it); napi-rs builds musl addons with crt-static off, so the check does too.
  if (target.endsWith("-musl")) env.RUSTFLAGS = [process.env.RUSTFLAGS, "-C target-feature=-crt-static"].filter(Boolean).join(" ");
  // `cargo-zigbuild check`: cargo check with zig as the targets' C compiler.
  let cmd = "cargo-zigbuild";
  let args = ["check"];
  if (target.endsWith("windows-msvc")) {
    const cc = windowsCc();
    const key = target.replaceAll("-", "_");
    Object.assign(env, { [`CC_${key}`]: cc.cc, [`CXX_${key}`]: cc["c++"], [`AR_${key}`]: cc.ar });
    cmd = "cargo";
    args = ["check"];
  }
  args.push("--features", "node", "--target", target, "--message-format", "json-diagnostic-rendered-ansi");
  console.log(`== ${target}: ${cmd} ${args.join(" ")}`);
  const r = run(cmd, args, { env, stdio: ["ignore", "pipe", "inherit"] });
  const ours = [];
  for (const line of (r.stdout || "").split("\n")) {
    if (!line.startsWith("{")) continue;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg.reason !== "compiler-message") continue;
    if (!msg.package_id?.includes("workerbox")) continue;
    const level = msg.message?.level;
    if (level === "warning" || level === "error") {
      ours.push(level);
      process.stdout.write(msg.message.rendered ?? msg.message.message);
    }
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  const errors = ours.filter((l) => l === "error").length;
  const warnings = ours.filter((l) => l === "warning").length;
  let result;
  if (r.status !== 0 && !errors) result = `cargo failed (exit ${r.status ?? r.signal}; a dependency?)`;
  else if (errors || warnings) result = `${errors} errors, ${warnings} warnings`;
  else result = "ok";
  rows.push({ target, result, seconds });
}

if (rows.length) {
  console.log("\ntarget                        result  (seconds)");
  for (const { target, result, seconds } of rows) console.log(`${target.padEnd(30)}${result}  (${seconds})`);
}

// Exports.
const napiName = (name) => /^_?(napi_|node_api_)\w+$/.test(name);
function exported(file) {
  const r = run("llvm-nm", ["--dynamic", "--defined-only", "--just-symbol-name", file]);
  if (r.error || r.status !== 0) return { error: `llvm-nm ${file}: ${r.error?.message ?? r.stderr.trim()}` };
  return { names: r.stdout.split("\n").filter(Boolean) };
}
function judge(names) {
  const other = names.filter((n) => !napiName(n));
  if (other.length) return `${other.length} non-napi exports (${other.slice(0, 5).join(", ")}${other.length > 5 ? ", …" : ""})`;
  if (!names.some((n) => /^_?napi_register_module_v1$/.test(n))) return "napi_register_module_v1 is not exported";
  return "ok";
}
const exportRows = [];
for (const [target, file] of [["x86_64-unknown-linux-gnu", "workerbox.linux-x64-gnu.node"], ["aarch64-unknown-linux-gnu", "workerbox.linux-arm64-gnu.node"]]) {
  if (!targets.includes(target)) continue;
  if (!existsSync(resolve(root, file))) {
    exportRows.push({ target, what: file, result: "not built here (npm run build / npm run test:arm64), not checked", ok: true });
    continue;
  }
  const e = exported(resolve(root, file));
  exportRows.push({ target, what: file, result: e.error ?? judge(e.names), ok: !e.error && judge(e.names) === "ok" });
}
exportRows.push(...probeExports(targets.filter((t) => !t.endsWith("-gnu"))));
console.log("\nexports (napi entry points only)");
for (const { target, what, result } of exportRows) console.log(`${target.padEnd(30)}${what}: ${result}`);
process.exit(rows.every((r) => r.result === "ok") && exportRows.every((r) => r.ok) ? 0 : 1);

/** The probe cdylib for targets whose addon is not linked here (see the head of this file). */
function probeExports(probeTargets) {
  const out = [];
  const dir = resolve(targetDir, "exports-probe");
  mkdirSync(resolve(dir, "src"), { recursive: true });
  // Named workerbox so that its output is libworkerbox.so/.dylib, as scripts/link-napi-only.sh expects.
  writeFileSync(resolve(dir, "Cargo.toml"), '[package]\nname = "workerbox"\nversion = "0.0.0"\nedition = "2021"\n\n[lib]\ncrate-type = ["cdylib"]\n\n[workspace]\n');
  writeFileSync(resolve(dir, "src", "lib.rs"), '#[no_mangle]\npub extern "C" fn napi_register_module_v1() -> usize { 1 }\n#[no_mangle]\npub extern "C" fn v8__Probe() -> usize { 2 }\n');
  const zig = run("python3", ["-c", "import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), 'zig'))"]).stdout.trim();
  for (const target of probeTargets) {
    const started = Date.now();
    const key = target.replaceAll("-", "_").toUpperCase();
    const env = { ...process.env, CARGO_TARGET_DIR: resolve(dir, "target") };
    delete env.RUSTFLAGS;
    if (target.endsWith("-musl")) {
      // The version script workerbox's build script emitted in the check above.
      const builds = resolve(targetDir, target, "debug", "build");
      const outputs = existsSync(builds) ? readdirSync(builds).filter((d) => d.startsWith("workerbox-")).map((d) => resolve(builds, d, "output")).filter(existsSync) : [];
      const arg = outputs.map((f) => readFileSync(f, "utf8").match(/^cargo:rustc-cdylib-link-arg=(-Wl,--version-script=.*)$/m)?.[1]).find(Boolean);
      if (!arg) {
        out.push({ target, what: "probe", result: `workerbox's build script gave no version script for ${target} (run the check of ${target} first)`, ok: false });
        continue;
      }
      env.RUSTFLAGS = `-C target-feature=-crt-static -C link-arg=${arg}`;
      const r = run("cargo-zigbuild", ["build", "--release", "--quiet", "--target", target], { cwd: dir, env });
      const lib = resolve(dir, "target", target, "release", "libworkerbox.so");
      if (r.status !== 0) {
        out.push({ target, what: "probe", result: `link failed: ${r.stderr.trim().split("\n").slice(-3).join(" ")}`, ok: false });
        continue;
      }
      const e = exported(lib);
      const result = e.error ?? judge(e.names);
      out.push({ target, what: `probe linked by cargo-zigbuild (${Math.round((Date.now() - started) / 1000)} s)`, result, ok: result === "ok" });
    } else if (target.endsWith("-apple-darwin")) {
      // zig cc as the driver behind the wrapper, keeping a copy of the export list it was handed.
      const record = resolve(dir, `${target}.list`);
      const cc = resolve(dir, `${target}-cc`);
      const zigTarget = target.startsWith("aarch64") ? "aarch64-macos" : "x86_64-macos";
      writeFileSync(cc, `#!/bin/sh\nprev=""\nfor a; do [ "$prev" = "-Wl,-exported_symbols_list" ] && cp "\${a#-Wl,}" "${record}"; case "$a" in -Wl,-exported_symbols_list,*) cp "\${a#-Wl,-exported_symbols_list,}" "${record}";; esac; prev="$a"; done\nexec "${zig}" cc -target ${zigTarget} "$@"\n`);
      chmodSync(cc, 0o755);
      writeFileSync(record, "");
      Object.assign(env, { [`CARGO_TARGET_${key}_LINKER`]: resolve(root, "scripts", "link-napi-only.sh"), WORKERBOX_CC: cc, SDKROOT: dir });
      const r = run("cargo", ["build", "--release", "--quiet", "--target", target], { cwd: dir, env });
      if (r.status !== 0) {
        out.push({ target, what: "probe", result: `link failed: ${r.stderr.trim().split("\n").slice(-3).join(" ")}`, ok: false });
        continue;
      }
      const names = readFileSync(record, "utf8").split("\n").filter(Boolean);
      const result = names.length ? judge(names) : "the linker was handed no -exported_symbols_list";
      out.push({ target, what: `probe's export list through link-napi-only.sh (${Math.round((Date.now() - started) / 1000)} s)`, result, ok: result === "ok" });
    } else {
      out.push({ target, what: "not linked", result: "no MSVC linker here (link.exe and the Windows SDK); the release workflow links it on Windows", ok: true });
    }
  }
  return out;
}
