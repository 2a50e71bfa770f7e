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
// usage: node scripts/check-platforms.mjs [target…]   (default: all seven)
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync, chmodSync } from "node:fs";
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

const wanted = process.argv.slice(2);
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
for (const target of targets) {
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

console.log("\ntarget                        result  (seconds)");
for (const { target, result, seconds } of rows) console.log(`${target.padEnd(30)}${result}  (${seconds})`);
process.exit(rows.every((r) => r.result === "ok") ? 0 : 1);
