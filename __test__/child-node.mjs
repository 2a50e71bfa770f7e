// How a test starts a child Node (process.execPath, the workerbox CLI, a tool's JS entry such as
// vitest or tsc): directly, or through the command prefix that WORKERBOX_TEST_NODE_LAUNCHER
// names, as a JSON array of strings (scripts/arm64.mjs sets ["qemu-aarch64", "-L",
// "/usr/aarch64-linux-gnu"]: under qemu-user the arm64 Node cannot exec another arm64 binary
// itself, since nothing registers qemu with the kernel's binfmt_misc). Every test in __test__/
// starts Node through here, so that the launcher applies everywhere; without it (x64, the default)
// each helper is the child_process call it wraps, unchanged.
// WORKERBOX_TEST_TIME_SCALE (a number ≥ 1, default 1) multiplies time bounds — a child's timeout
// here, and the per-test timeouts and polling deadlines that call scaled() — for an emulator that
// runs everything many times slower. A test that cannot work under the emulator at all says why
// through underEmulator().
import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The workerbox CLI's entry (bin/workerbox.js). */
export const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "bin", "workerbox.js");

function launcher() {
  const raw = process.env.WORKERBOX_TEST_NODE_LAUNCHER;
  if (!raw) return [];
  let prefix;
  try {
    prefix = JSON.parse(raw);
  } catch {
    prefix = undefined;
  }
  if (!Array.isArray(prefix) || !prefix.length || !prefix.every((p) => typeof p === "string" && p)) {
    throw new TypeError(`WORKERBOX_TEST_NODE_LAUNCHER must be a JSON array of non-empty strings (a command prefix such as ["qemu-aarch64","-L","/usr/aarch64-linux-gnu"]), not ${JSON.stringify(raw)}`);
  }
  return prefix;
}

/** The factor WORKERBOX_TEST_TIME_SCALE asks for (1 when unset). */
export function timeScale() {
  const raw = process.env.WORKERBOX_TEST_TIME_SCALE;
  if (raw === undefined || raw === "") return 1;
  const scale = Number(raw);
  if (!Number.isFinite(scale) || scale < 1) throw new TypeError(`WORKERBOX_TEST_TIME_SCALE must be a number ≥ 1, not ${JSON.stringify(raw)}`);
  return scale;
}

/** `ms` times WORKERBOX_TEST_TIME_SCALE: a test's own time bound, stretched under an emulator only. */
export const scaled = (ms) => ms * timeScale();

/**
 * Why a test cannot run here, when Node runs under a launcher (an emulator), else false: for
 * node:test's `skip` option, which prints the reason. Only for what the emulation itself lacks.
 */
export const underEmulator = (why) => (emulated() ? `under ${launcher()[0]}: ${why}` : false);

/** Whether Node runs under a launcher (an emulator such as qemu-aarch64). */
export const emulated = () => launcher().length > 0;

/** `[file, args]` that run this Node with `args`, through the launcher if one is set. */
export function nodeCommand(args) {
  const [first, ...rest] = [...launcher(), process.execPath, ...args];
  return [first, rest];
}

const scaleTimeout = (options) => (options?.timeout ? { ...options, timeout: scaled(options.timeout) } : options);

/** child_process.spawn of this Node with `args`. */
export function spawnNode(args, options = {}) {
  const [file, fileArgs] = nodeCommand(args);
  return spawn(file, fileArgs, scaleTimeout(options));
}

/** child_process.spawnSync of this Node with `args`; `options.timeout` is scaled. */
export function spawnNodeSync(args, options = {}) {
  const [file, fileArgs] = nodeCommand(args);
  return spawnSync(file, fileArgs, scaleTimeout(options));
}

/** execFileSync of this Node with `args`; `options.timeout` is scaled by WORKERBOX_TEST_TIME_SCALE. */
export function execNode(args, options = {}) {
  const [file, fileArgs] = nodeCommand(args);
  return execFileSync(file, fileArgs, scaleTimeout(options));
}

/** child_process.execFile of this Node with `args` (callback form); `options.timeout` is scaled. */
export function execNodeFile(args, options, callback) {
  const [file, fileArgs] = nodeCommand(args);
  return execFile(file, fileArgs, scaleTimeout(options), callback);
}
