// The Vitest pool of the integration (Vitest 4's PoolRunnerInitializer / PoolWorker API): each
// pool worker is one runner isolate (lib/vitest/runners.js starts them), and Vitest's messages
// cross one WebSocket to it. Vitest and Vite are the project's own.
"use strict";

const { startRunner, disposeRunner, recordStat } = require("./runners.js");
const { runnerFor, fileEnded } = require("./spare.js");
const { breaksAtStart, breakAtFiles } = require("./inspect.js");

const POOL_NAME = "workerbox";
/** Specifiers the engine answers itself; Vite must not try to load them. */
const BUILTIN = /^(?:cloudflare|workerd|node):/;

/** The pool options, resolved (they may be a function of Vitest's provided context). */
async function resolveOptions(poolOptions, project) {
  if (typeof poolOptions !== "function") return poolOptions ?? {};
  return (await poolOptions({ inject: (key) => project.getProvidedContext()[key] })) ?? {};
}

class WorkerboxPoolWorker {
  name = POOL_NAME;

  constructor(options, poolOptions) {
    this.options = options;
    this.poolOptions = poolOptions;
    this.runner = null;
    this.socket = null;
    this.listeners = { message: new Set(), error: new Set(), exit: new Set() };
    /** Messages held while --inspect-brk's breakpoints are set (sent in order after). */
    this.held = null;
    /** Closes --inspect-brk's session. */
    this.closeBreaks = null;
  }

  async start() {
    const started = performance.now();
    const { project } = this.options;
    this.codec = await import("./serialize.mjs");
    const begin = async () => startRunner(project, await resolveOptions(this.poolOptions, project), this.options.distPath);
    // The next file's runner starts while this one runs (lib/vitest/spare.js).
    const runner = await runnerFor(project, this.poolOptions, begin);
    this.counted = true;
    this.runner = runner;
    this.socket = runner.socket;
    this.socket.addEventListener("message", (event) => this.#received(event.data));
    this.socket.addEventListener("close", () => this.#emit("exit"));
    this.socket.addEventListener("error", (event) => this.#emit("error", event.error ?? new Error("the runner's connection failed")));
    this.socket.accept();
    // bench/vitest.mjs reads each pool worker's start-up here (isolate, runner, connection).
    recordStat({ startMs: performance.now() - started, startedAhead: runner.startedAhead === true, ...runner.phases });
  }

  #received(text) {
    let message;
    try {
      message = this.codec.deserialize(text);
    } catch (error) {
      return this.#emit("error", error);
    }
    if (message !== null && typeof message === "object" && message.poolCall !== undefined) return this.#answer(message);
    // Vitest asks Vite for every module the tests import; the engine's own (cloudflare:, node:)
    // are loaded natively instead, as Vite cannot.
    if (message && message.m === "fetch" && Array.isArray(message.a) && typeof message.a[0] === "string" && BUILTIN.test(message.a[0]) && message.a[0] !== "cloudflare:test") {
      this.socket.send(this.codec.serialize({ t: "s", i: message.i, r: { externalize: message.a[0], type: "builtin" } }));
      return;
    }
    this.#emit("message", message);
  }

  /** A call of the runner's (lib/vitest/runner.mjs callPool()): its answer goes back on the connection. */
  async #answer({ poolCall, method, args }) {
    let answer;
    try {
      const calls = this.runner?.calls;
      const call = calls && Object.hasOwn(calls, method) ? calls[method] : undefined;
      if (typeof call !== "function") throw new Error(`the pool has no call ${method}`);
      answer = { poolAnswer: poolCall, value: await call(...args) };
    } catch (error) {
      answer = { poolAnswer: poolCall, error: error instanceof Error ? error.message : String(error) };
    }
    this.socket?.send(this.codec.serialize(answer));
  }

  #emit(event, value) {
    for (const callback of this.listeners[event] ?? []) callback(value);
  }

  on(event, callback) {
    this.listeners[event]?.add(callback);
  }

  off(event, callback) {
    this.listeners[event]?.delete(callback);
  }

  send(message) {
    if (!this.socket) throw new Error("workerbox/vitest: a message was sent before the pool worker started");
    // --inspect-brk: the files stop at their first line; the breakpoints are set before they run.
    if (this.held === null && this.closeBreaks === null && message.type === "run" && breaksAtStart(this.options.project)) {
      const files = (message.context?.files ?? []).map((file) => (typeof file === "string" ? file : file.filepath)).filter(Boolean);
      this.held = breakAtFiles(this.runner.worker, files).then(
        (close) => (this.closeBreaks = close),
        (error) => this.#emit("error", error),
      );
    }
    if (this.held !== null) {
      this.held = this.held.then(() => this.socket && this.#send(message));
      return;
    }
    this.#send(message);
  }

  #send(message) {
    let outgoing = message;
    // Vitest's runtime in the isolate has no node:inspector: the pool serves the isolate through
    // the worker inspector instead (lib/vitest/inspect.js).
    if (message.type === "start") {
      outgoing = { ...message, context: { ...message.context, config: { ...message.context.config, inspector: { ...message.context.config.inspector, enabled: false } } } };
    }
    this.socket.send(this.codec.serialize(outgoing));
  }

  deserialize(data) {
    return data;
  }

  async stop() {
    this.closeBreaks?.();
    this.closeBreaks = null;
    try {
      this.socket?.close(1000, "stopped");
    } catch {}
    this.socket = null;
    const runner = this.runner;
    this.runner = null;
    if (this.counted) fileEnded(this.options.project, this.poolOptions);
    this.counted = false;
    if (runner) await disposeRunner(runner);
  }
}

/** The pool for Vitest's `poolRunner`. */
function cloudflarePool(poolOptions) {
  return { name: POOL_NAME, createPoolWorker: (options) => new WorkerboxPoolWorker(options, poolOptions) };
}

module.exports = { cloudflarePool };
