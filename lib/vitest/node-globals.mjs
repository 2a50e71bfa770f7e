// Node's globals for the Vitest runner's own modules (lib/vitest/runner.mjs and Vitest's runtime,
// which the host loader gives as trusted modules): the worker under test may lack nodejs_compat,
// or have a date before its globals, and then has no `process`, `Buffer`, `global` or
// `setImmediate` — the runner's modules get them from here instead (lib/vitest/loader.js adds
// the import to each module that uses one, and points their `node:process` imports here), so
// the user's code sees exactly what its own flags give.
import workerProcess from "node:process";
import { Buffer } from "node:buffer";
import { EventEmitter } from "node:events";
import { setImmediate, clearImmediate } from "node:timers";

const global = globalThis;

/**
 * The `process` Vitest's runtime uses: the worker's own when it is the fuller one
 * (enable_nodejs_process_v2), else one of the runner's own with what Vitest reads of it, sharing
 * the worker's `env` (Vitest sets variables there that import.meta.env shows the tests).
 */
function runnerProcess() {
  if (workerProcess.versions !== undefined) return workerProcess;
  const started = performance.now();
  const own = new EventEmitter();
  let cwd = "/";
  Object.assign(own, {
    env: workerProcess.env,
    nextTick: workerProcess.nextTick,
    platform: workerProcess.platform,
    features: workerProcess.features,
    getBuiltinModule: workerProcess.getBuiltinModule,
    exit: workerProcess.exit,
    version: "v22.19.0",
    versions: { node: "22.19.0" },
    release: { name: "node" },
    title: "workerd",
    argv: ["node"],
    execArgv: [],
    pid: 1,
    ppid: 0,
    arch: "x64",
    exitCode: undefined,
    noDeprecation: false,
    sourceMapsEnabled: false,
    setSourceMapsEnabled() {},
    cwd: () => cwd,
    chdir: (directory) => void (cwd = String(directory)),
    uptime: () => (performance.now() - started) / 1000,
    memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
    emitWarning(warning, type) {
      const error = typeof warning === "string" ? Object.assign(new Error(warning), { name: typeof type === "string" ? type : "Warning" }) : warning;
      queueMicrotask(() => own.emit("warning", error));
    },
  });
  own.hrtime = function hrtime(previous) {
    const now = performance.now();
    let seconds = Math.floor(now / 1000);
    let nanoseconds = Math.floor((now % 1000) * 1e6);
    if (previous) {
      seconds -= previous[0];
      nanoseconds -= previous[1];
      if (nanoseconds < 0) {
        seconds--;
        nanoseconds += 1e9;
      }
    }
    return [seconds, nanoseconds];
  };
  own.hrtime.bigint = () => BigInt(Math.floor(performance.now() * 1e6));
  Object.defineProperty(own, Symbol.toStringTag, { value: "process", configurable: true });
  return own;
}

const process = runnerProcess();

export default process;
export { process, Buffer, global, setImmediate, clearImmediate };
