"use strict";
// Workflows, the binding: `workflow({ className, name?, dir?, worker?, clock? })` makes the
// binding workers get as `env.MY_WORKFLOW` (its calls arrive in answer(): create, createBatch,
// get, and the instance operations; and the step calls of runs, which go to the engine), with
// production's validation (instance ids, payload sizes); and the same API from Node (create(),
// createBatch(), get() with instance handles) plus what tests need: the clock (now(),
// advance(ms), timers(), nextTimer(), runNextTimer()) and waitForStatus(). The instances
// themselves are the engine's (engine.js).
//
// Workers are the API's (lib/api.js): it tells this file, through setWorkerAccess(), how to
// recognise a worker and write to its log, so nothing here imports the API.

const { Binding } = require("../bindings.js");
const rpc = require("../rpc.js");
const { Engine } = require("./engine.js");

const ID_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9-_]*$/;
const ID_LIMIT = 100;
const PAYLOAD_LIMIT = 1 << 20;
const BATCH_LIMIT = 100;
const CLASS_NAME = /^[A-Za-z_$][\w$]*$/;
const OPTIONS = ["className", "name", "dir", "worker", "clock"];

let isWorker = () => false;
let logTo = () => {};
function setWorkerAccess(access) {
  ({ isWorker, log: logTo } = access);
}

/** The workflow bindings each worker was created with, so that its dispose() can tell them. */
const bindingsOfWorker = new WeakMap();

function workerDisposed(worker) {
  for (const binding of bindingsOfWorker.get(worker) ?? []) binding._workerGone(worker);
  bindingsOfWorker.delete(worker);
}

const validId = (id) => typeof id === "string" && id.length <= ID_LIMIT && ID_PATTERN.test(id);

function checkPayload(bytes, what) {
  if (bytes !== null && bytes.byteLength > PAYLOAD_LIMIT) throw new RangeError(`${what} is ${bytes.byteLength} bytes; the limit is ${PAYLOAD_LIMIT} bytes (1 MiB)`);
  return bytes;
}

class Workflow extends Binding {
  #options;
  #engine = null;
  #bound = [];
  #names = new WeakMap();
  #bindingMs = new WeakMap();

  constructor(options) {
    super("workflow", null);
    this.#options = options;
    this.className = options.className;
    this.workflowName = options.name;
  }

  #engineFor() {
    this.#engine ??= new Engine({
      className: this.className,
      workflow: this.workflowName ?? this.className,
      dir: this.#options.dir,
      manualClock: this.#options.clock === "manual",
      log: (worker, level, message) => logTo(worker, level, message),
    });
    return this.#engine;
  }

  // ---- Binding plumbing (called by lib/api.js and lib/bindings.js) -----------------------------

  /** A worker was created with this binding under `name` (its limits.bindingMs bounds each step call's wait). */
  _bound(worker, name, bindingMs = 30_000) {
    this.workflowName ??= name;
    this.#bound.push(worker);
    this.#names.set(worker, name);
    this.#bindingMs.set(worker, bindingMs);
    let set = bindingsOfWorker.get(worker);
    if (set === undefined) bindingsOfWorker.set(worker, (set = new Set()));
    set.add(this);
    this.#pickHome();
  }

  _workerGone(worker) {
    this.#bound = this.#bound.filter((w) => w !== worker);
    this.#engine?.workerGone(worker);
    this.#pickHome();
  }

  /** The home worker: `options.worker`, else the first live worker given this binding. */
  #pickHome() {
    const home = this.#options.worker ?? this.#bound.find((w) => !w.disposed);
    if (home === undefined || home.disposed || !this.#names.has(home)) return;
    this.#engineFor()
      .setHome(home, this.#names.get(home), this.#bindingMs.get(home))
      .catch((error) => logTo(home, "error", `workflow "${this.workflowName}": the stored instances could not be resumed: ${error?.stack ?? error}`));
  }

  /** A worker's call: `env.WF.create()` & co., or a step of a run (`step.*`). */
  async answer(method, args, bytes) {
    const engine = this.#engineFor();
    if (method.startsWith("step.")) return engine.leasedStepCall(method, args, bytes);
    switch (method) {
      case "create": {
        let offset = 0;
        const list = args.instances.map(({ id, size }) => {
          const params = Buffer.from(bytes.subarray(offset, offset + size));
          offset += size;
          return { id, params: checkPayload(params, "the params") };
        });
        await engine.create(list);
        return { json: "{}" };
      }
      case "get":
        await engine.instance(args.id);
        return { json: "{}" };
      case "status": {
        const { output, hasOutput, ...rest } = await engine.status(args.id);
        return { json: JSON.stringify({ ...rest, hasValue: hasOutput && output !== null }), bytes: output };
      }
      case "pause":
      case "resume":
      case "terminate":
      case "restart":
        await engine[method](args.id);
        return { json: "{}" };
      case "sendEvent":
        await engine.sendEvent(args.id, args.type, args.hasValue ? checkPayload(Buffer.from(bytes), "the event payload") : null);
        return { json: "{}" };
    }
    throw new TypeError(`unknown Workflow operation "${method}"`);
  }

  // ---- The API from Node ----------------------------------------------------------------------

  async #createFromNode(list, what) {
    const seen = new Set();
    const parts = list.map((options) => {
      if (options !== undefined && (options === null || typeof options !== "object")) throw new TypeError(`${what}: options must be an object { id?, params? }`);
      const id = options?.id ?? crypto.randomUUID();
      if (!validId(id)) throw new Error("WorkflowError: Workflow instance has invalid id");
      if (seen.has(id)) throw new Error(`${what}: the id "${id}" is given twice in this batch`);
      seen.add(id);
      return { id, params: checkPayload(rpc.serialize(options?.params ?? {}), "the params") };
    });
    await this.#engineFor().create(parts);
    return parts.map((p) => this.#handle(p.id));
  }

  /** Creates an instance from Node, as `env.WF.create({ id?, params? })` does; its handle. */
  async create(options = undefined) {
    const [handle] = await this.#createFromNode([options], "create()");
    return handle;
  }

  async createBatch(batch) {
    if (!Array.isArray(batch) || batch.length === 0) throw new TypeError("WorkflowError: batchCreate should have at least 1 instance");
    if (batch.length > BATCH_LIMIT) throw new RangeError(`WorkflowError: batchCreate takes at most ${BATCH_LIMIT} instances, got ${batch.length}`);
    return this.#createFromNode(batch, "createBatch()");
  }

  /** The handle of instance `id`, as `env.WF.get(id)`; rejects with instance.not_found. */
  async get(id) {
    await this.#engineFor().instance(id);
    return this.#handle(id);
  }

  /** The ids of every instance, oldest first. */
  ids() {
    return this.#engineFor().ids();
  }

  #handle(id) {
    const engine = this.#engineFor();
    return Object.freeze({
      id,
      status: async () => {
        const { output, hasOutput, ...rest } = await engine.status(id);
        return { ...rest, output: hasOutput && output !== null ? rpc.deserialize(output) : undefined };
      },
      pause: () => engine.pause(id),
      resume: () => engine.resume(id),
      terminate: () => engine.terminate(id),
      restart: () => engine.restart(id),
      sendEvent: async ({ type, payload } = {}) => {
        if (!validId(type)) throw new TypeError(`sendEvent(): type must match ${ID_PATTERN} and be at most ${ID_LIMIT} characters, got ${JSON.stringify(type)}`);
        await engine.sendEvent(id, type, payload === undefined ? null : checkPayload(rpc.serialize(payload), "the event payload"));
      },
    });
  }

  /**
   * Resolves with instance `id`'s status once it is `status` (a string, or an array of them);
   * rejects after `timeoutMs` (default 10000).
   */
  async waitForStatus(id, status, { timeoutMs = 10_000 } = {}) {
    const engine = this.#engineFor();
    const wanted = Array.isArray(status) ? status : [status];
    const inst = await engine.instance(id);
    await engine.until(() => wanted.includes(engine.statusOf(inst)), timeoutMs, `instance ${id} to be ${wanted.join(" or ")} (it is ${engine.statusOf(inst)})`);
    await engine.written();
    return this.#handle(id).status();
  }

  // ---- The clock --------------------------------------------------------------------------------

  /** The instances' time (ms since the epoch): real time plus what advance() added. */
  now() {
    return this.#engineFor().clock.now();
  }

  /** Moves the instances' clock `ms` ahead: sleeps, retry delays and timeouts now due fire. */
  advance(ms) {
    this.#engineFor().clock.advance(ms);
  }

  /** The timers waiting: `{ at, instance, kind: "sleep" | "retry" | "timeout" | "waitForEvent", step, … }`. */
  timers() {
    return this.#engineFor().clock.pending();
  }

  /**
   * Resolves with the soonest timer of `kind` ("sleep", "retry", "timeout", "waitForEvent")
   * once one is set (or the soonest for which a function `kind(timer)` is true). Without
   * `kind`, any but a step's timeout (always set while a step runs).
   */
  nextTimer(kind = undefined) {
    const accept = typeof kind === "function" ? kind : kind === undefined ? (t) => t.kind !== "timeout" : (t) => t.kind === kind;
    return this.#engineFor().clock.nextTimer(accept);
  }

  /** Waits for the next timer (as nextTimer(kind)), moves the clock to it (it fires) and resolves with it. */
  async runNextTimer(kind = undefined) {
    const clock = this.#engineFor().clock;
    const timer = await this.nextTimer(kind);
    clock.advance(Math.max(0, timer.at - clock.now()));
    return timer;
  }

  /** The engine, for introspection (introspect.js: introspectWorkflow() and friends). */
  _introspectionEngine() {
    return this.#engineFor();
  }

  /** Stops the runs in this process and the timers (the stored state stays). */
  close() {
    this.#engine?.close();
  }

  get [Symbol.toStringTag]() {
    return "Workflow";
  }
}

/**
 * A Workflow binding for class `className`, exported by the worker it is bound to (or by
 * `worker`, which must be given the binding too). `dir`: keep the instances on disk
 * (`dir/d1.sqlite3`), so a later process resumes them; `name`: the workflow's name (default:
 * the first binding name); `clock: "manual"`: timers fire only through advance()/runNextTimer().
 */
function workflow(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) throw new TypeError('workflow(): options must be an object such as { className: "MyWorkflow" }');
  for (const key of Object.keys(options)) {
    if (!OPTIONS.includes(key)) throw new TypeError(`workflow(): unknown option "${key}" (known options: ${OPTIONS.join(", ")})`);
  }
  if (typeof options.className !== "string" || !CLASS_NAME.test(options.className)) {
    throw new TypeError(`workflow(): options.className must be the name of the exported WorkflowEntrypoint class, got ${JSON.stringify(options.className)}`);
  }
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) throw new TypeError("workflow(): options.name must be a non-empty string");
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) throw new TypeError("workflow(): options.dir must be a folder path");
  if (options.worker !== undefined && !isWorker(options.worker)) throw new TypeError("workflow(): options.worker must be a worker returned by createWorker()");
  if (options.clock !== undefined && options.clock !== "real" && options.clock !== "manual") throw new TypeError('workflow(): options.clock must be "real" or "manual"');
  return new Workflow({ ...options });
}

module.exports = { workflow, Workflow, setWorkerAccess, workerDisposed };
