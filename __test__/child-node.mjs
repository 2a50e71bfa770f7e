// How a test starts a child Node (process.execPath): directly, or through the command prefix that
// WORKERBOX_TEST_NODE_LAUNCHER names, as a JSON array of strings (scripts/arm64.mjs sets
// ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]: under qemu-user the arm64 Node cannot exec
// another arm64 binary itself, since nothing registers qemu with the kernel's binfmt_misc).
// WORKERBOX_TEST_TIME_SCALE (a number ≥ 1, default 1) multiplies the child's timeout, for an
// emulator that runs everything many times slower.
import { execFileSync } from "node:child_process";

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

/** `[file, args]` that run this Node with `args`, through the launcher if one is set. */
export function nodeCommand(args) {
  const [first, ...rest] = [...launcher(), process.execPath, ...args];
  return [first, rest];
}

/** execFileSync of this Node with `args`; `options.timeout` is scaled by WORKERBOX_TEST_TIME_SCALE. */
export function execNode(args, options = {}) {
  const [file, fileArgs] = nodeCommand(args);
  const scaled = options.timeout ? { ...options, timeout: options.timeout * timeScale() } : options;
  return execFileSync(file, fileArgs, scaled);
}
