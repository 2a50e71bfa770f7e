"use strict";
// The Workflows engine: runs each instance of one workflow binding step by step inside its home
// worker. A run is one call into the worker (kind "workflowRun", src/js/89_workflows.js) that
// calls the class's run(event, step); each step.do / sleep / sleepUntil / waitForEvent asks this
// file first, through a binding call: a finished step answers from its record (so a run started
// again from the top, after a restart or a worker change, replays finished steps instead of
// running them), a failed attempt is retried after production's backoff, sleeps and waits are
// timers on the binding's clock (clock.js), and a paused instance is held at its next step. The
// records are the store's (store.js); the binding (binding.js) validates what callers send.
//
// Each run has a generation: terminate, restart and the home worker going away bump it, and
// every call of an older run is refused, so its run() ends without touching the instance.

const rpc = require("../rpc.js");
const { Clock } = require("./clock.js");
const { WorkflowStore, b64, unb64 } = require("./store.js");
const { Mocks } = require("./mocks.js");

const FINISHED = new Set(["complete", "errored", "terminated"]);
const RESUMABLE = new Set(["queued", "running", "waiting"]);

class Stale extends Error {
  constructor() {
    super("This run of the Workflow instance was terminated, restarted or moved to another worker.");
    this.name = "Error";
  }
}

class Engine {
  #className;
  #workflow;
  #store;
  #log;
  #instances = null;
  #loading = null;
  #listeners = new Set();
  /** Which worker runs the instances, its binding name for this workflow and its limits.bindingMs. */
  #home = null;
  /** Step calls still going after their first answer (leasedStepCall), by token. */
  #leases = new Map();
  #nextLease = 0;
  /** How each step call now waiting its lease out is ended by close() (its timer cleared). */
  #lapses = new Set();
  /** Whether waits hold Node's event loop open (as the clock's timers do: in memory, real clock). */
  #holdLoop;
  clock;
  /** What tests changed in the runs (introspection, mocks.js). */
  mocks = new Mocks();

  constructor({ className, workflow, dir, manualClock, log }) {
    this.#className = className;
    this.#workflow = workflow;
    this.#store = new WorkflowStore(dir, workflow);
    this.#log = log;
    this.clock = new Clock({ manual: manualClock, hold: dir === undefined && !manualClock });
    this.#holdLoop = dir === undefined && !manualClock;
  }

  /** The instances, loaded from the store on first use. */
  async #all() {
    if (this.#instances !== null) return this.#instances;
    this.#loading ??= this.#store.instances().then((rows) => {
      this.#instances = new Map(rows.map((row) => [row.id, this.#fresh(row)]));
    });
    await this.#loading;
    return this.#instances;
  }

  #fresh(row) {
    return { ...row, gen: 0, active: false, worker: null, steps: new Map(), cancels: new Set(), held: 0, sleeping: 0, waiters: [], timeouts: new Map(), stepErrors: new Map() };
  }

  async instance(id) {
    const inst = (await this.#all()).get(id);
    if (inst === undefined) throw new Error("instance.not_found");
    return inst;
  }

  /** The status production reports, from the stored status and the pause flag. */
  statusOf(inst) {
    if (!inst.paused || FINISHED.has(inst.status)) return inst.status;
    return !inst.active || inst.held > 0 || inst.sleeping > 0 ? "paused" : "waitingForPause";
  }

  #changed() {
    for (const listener of this.#listeners) listener();
  }

  /** Resolves once `test()` is true, checked after every change; rejects after `timeoutMs`. */
  until(test, timeoutMs, what) {
    return new Promise((resolve, reject) => {
      const check = () => {
        let value;
        try {
          value = test();
        } catch (error) {
          done();
          return reject(error);
        }
        if (value) done(), resolve(value);
      };
      const timer = setTimeout(() => (done(), reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))), timeoutMs);
      const done = () => (clearTimeout(timer), this.#listeners.delete(check));
      this.#listeners.add(check);
      check();
    });
  }

  async #set(inst, fields) {
    Object.assign(inst, fields);
    this.#changed();
    await this.#store.setState(inst.id, fields);
  }

  // ---- Workers ------------------------------------------------------------------------------

  /** Worker `worker` runs the instances (its binding for this workflow is `name`): start those that were left running. */
  async setHome(worker, name, bindingMs = 30_000) {
    this.#home = { worker, name, bindingMs };
    for (const inst of (await this.#all()).values()) {
      if (!inst.active && !inst.paused && RESUMABLE.has(inst.status)) this.#start(inst);
    }
  }

  /** The home worker is gone: its runs stop (the records stay for the next one). */
  workerGone(worker) {
    if (this.#home?.worker === worker) this.#home = null;
    for (const inst of this.#instances?.values() ?? []) {
      if (inst.worker === worker && inst.active) this.#stop(inst);
    }
    this.#changed();
  }

  /** Ends the current run: its pending calls fail and its later calls are refused. */
  #stop(inst) {
    for (const [token, entry] of this.#leases) if (entry.instance === inst.id) this.#leases.delete(token);
    inst.gen++;
    inst.active = false;
    inst.held = 0;
    inst.sleeping = 0;
    inst.waiters = [];
    for (const stopTimeout of inst.timeouts.values()) stopTimeout();
    inst.timeouts.clear();
    for (const cancel of inst.cancels) cancel(new Stale());
    inst.cancels.clear();
  }

  async #start(inst) {
    if (this.#home === null || this.#home.worker.disposed || inst.paused) return;
    const { worker, name } = this.#home;
    inst.gen++;
    const gen = inst.gen;
    Object.assign(inst, { active: true, worker });
    try {
      inst.steps = await this.#store.steps(inst.id);
      if (inst.gen !== gen) return;
      await this.#set(inst, { status: "running" });
      const call = { kind: "workflowRun", className: this.#className, binding: name, instance: inst.id, gen, timestamp: inst.created };
      const answer = await rpc.callWorker(worker, call, inst.params ?? rpc.serialize({}));
      const parsed = JSON.parse(answer.json);
      if (inst.gen !== gen) return;
      if (parsed.error) throw rpc.remoteError(parsed.error);
      Object.assign(inst, { active: false, hasOutput: true });
      await this.#set(inst, { status: "complete", output: answer.bytes ?? null, paused: false });
    } catch (error) {
      if (inst.gen !== gen || error?.code === "ERR_WORKER_DISPOSED" || worker.disposed) return;
      inst.active = false;
      this.#log(worker, "error", `workflow "${this.#workflow}" instance ${inst.id} errored: ${error?.stack ?? error}`);
      await this.#set(inst, { status: "errored", error: { name: error?.name ?? "Error", message: error?.message ?? String(error) }, paused: false });
    }
  }

  // ---- The binding's operations -------------------------------------------------------------

  /** Creates instances `[{ id, params (bytes) }]` and starts them; rejects on an id that exists. */
  async create(list) {
    const all = await this.#all();
    for (const { id } of list) if (all.has(id)) throw new Error(`instance.already_exists: a Workflow instance with id "${id}" already exists`);
    const created = this.clock.now();
    // In the table before the write, so that a create of the same id meanwhile is refused too.
    const made = list.map(({ id, params }) => this.#fresh({ id, status: "queued", params, created, output: null, hasOutput: false, error: null, paused: false }));
    for (const inst of made) all.set(inst.id, inst);
    try {
      await this.#store.create(list.map(({ id, params }) => ({ id, params, created })));
    } catch (error) {
      for (const inst of made) all.delete(inst.id);
      throw error;
    }
    for (const inst of made) this.mocks.created(inst.id);
    for (const inst of made) this.#start(inst);
    this.#changed();
  }

  async status(id) {
    const inst = await this.instance(id);
    return { status: this.statusOf(inst), error: inst.error ?? undefined, output: inst.hasOutput ? inst.output : null, hasOutput: inst.hasOutput };
  }

  async pause(id) {
    const inst = await this.instance(id);
    // A finished instance stays as it is (as Miniflare's engine, production's code, does).
    if (FINISHED.has(inst.status)) return;
    await this.#set(inst, { paused: true });
  }

  async resume(id) {
    const inst = await this.instance(id);
    if (!inst.paused) return;
    await this.#set(inst, { paused: false });
    for (const cancel of [...inst.cancels]) if (cancel.resume) cancel.resume();
    if (!inst.active && RESUMABLE.has(inst.status)) this.#start(inst);
  }

  async terminate(id) {
    const inst = await this.instance(id);
    if (FINISHED.has(inst.status)) throw new Error("WorkflowError: (instance.cannot_terminate) Cannot terminate instance since its on a finite state");
    this.#stop(inst);
    await this.#set(inst, { status: "terminated", paused: false });
  }

  async restart(id) {
    const inst = await this.instance(id);
    this.#stop(inst);
    inst.steps = new Map();
    inst.stepErrors = new Map();
    this.mocks.of(id)?.restarted();
    Object.assign(inst, { output: null, hasOutput: false, error: null });
    await this.#store.clearSteps(id);
    await this.#set(inst, { status: "queued", paused: false });
    this.#start(inst);
  }

  /** An event for instance `id`: it goes to a wait for its type, or is kept for the next one. */
  async sendEvent(id, type, payload) {
    const inst = await this.instance(id);
    if (FINISHED.has(inst.status)) throw new Error(`Cannot send an event to a Workflow instance that is ${inst.status}`);
    await this.#store.addEvent(id, { type, at: this.clock.now(), payload });
    const waiter = inst.waiters.find((w) => w.type === type);
    if (waiter !== undefined) waiter.take();
  }

  // ---- Step calls from a run ---------------------------------------------------------------

  /**
   * A step call answered within half the home worker's limits.bindingMs (a sleep, an event wait,
   * a retry delay, a pause or a step's timeout may last far longer): if it is not done by then,
   * the answer is `{ pending: token }` and the run asks again with "step.poll" until it is.
   */
  async leasedStepCall(method, args, bytes) {
    let entry;
    if (method === "step.poll") {
      entry = this.#leases.get(args.token);
      if (entry === undefined) throw new Stale();
    } else {
      entry = { token: ++this.#nextLease, instance: args.instance, promise: this.stepCall(method, args, bytes) };
      entry.promise.catch(() => {});
    }
    const bindingMs = this.#home?.bindingMs ?? 30_000;
    let timer;
    let end;
    const lapse = new Promise((resolve, reject) => {
      end = () => reject(new Stale());
      if (bindingMs !== 0) timer = setTimeout(resolve, Math.max(1, Math.floor(bindingMs / 2)), null);
    });
    if (!this.#holdLoop) timer?.unref();
    this.#lapses.add(end);
    try {
      const done = await Promise.race([entry.promise.then((answer) => ({ answer })), lapse]);
      if (done !== null) {
        this.#leases.delete(entry.token);
        return done.answer;
      }
    } catch (error) {
      this.#leases.delete(entry.token);
      throw error;
    } finally {
      clearTimeout(timer);
      this.#lapses.delete(end);
    }
    this.#leases.set(entry.token, entry);
    return { json: JSON.stringify({ pending: entry.token }) };
  }

  /** A call of run `gen` of instance `id`; throws if that run is over. */
  async #current(args) {
    const inst = await this.instance(args.instance);
    if (inst.gen !== args.gen || !inst.active) throw new Stale();
    return inst;
  }

  /**
   * Throws Stale when run `gen` of `inst` was stopped (terminate, restart, the worker going): before
   * a wait's counters (held, sleeping) are raised, which the stop has reset for the next run.
   */
  #still(inst, gen) {
    if (inst.gen !== gen) throw new Stale();
  }

  /** A promise for `inst`'s run that its end (terminate, restart, the worker going) rejects. */
  #pending(inst, executor, gen) {
    return new Promise((resolve, reject) => {
      // A run stopped (terminated, restarted) since `gen` had its waits cancelled already: one
      // begun now would stay pending (and hold its step call's lease) until the lease lapses.
      // (Thrown in the executor, Stale rejects the promise.)
      this.#still(inst, gen);
      const cancel = (error) => reject(error);
      inst.cancels.add(cancel);
      const settle = (fn) => (value) => (inst.cancels.delete(cancel), fn(value));
      executor(settle(resolve), settle(reject), cancel);
    });
  }

  /** Holds a step of a paused instance until resume() (the instance is "paused" meanwhile). */
  async #boundary(inst, gen) {
    if (!inst.paused) return;
    this.#still(inst, gen);
    inst.held++;
    this.#changed();
    try {
      await this.#pending(inst, (resolve, _reject, cancel) => {
        cancel.resume = resolve;
      }, gen);
    } finally {
      if (inst.gen === gen) inst.held--;
    }
  }

  /** Waits until clock time `at` (cancelled with the run); `sleeping` makes the instance "waiting". */
  async #sleep(inst, gen, at, info) {
    this.#still(inst, gen);
    let stop;
    inst.sleeping++;
    this.#changed();
    try {
      await this.#pending(inst, (resolve) => {
        stop = this.clock.at(at, resolve, { instance: inst.id, ...info });
      }, gen);
    } finally {
      stop?.();
      if (inst.gen === gen) inst.sleeping--;
    }
  }

  async #waitingStatus(inst, gen, waiting) {
    this.#still(inst, gen);
    if (waiting) await this.#set(inst, { status: "waiting" });
    else if (inst.status === "waiting") await this.#set(inst, { status: "running" });
  }

  async stepCall(method, args, bytes) {
    const inst = await this.#current(args);
    const gen = inst.gen;
    const { key } = args;
    switch (method) {
      case "step.begin": {
        await this.#boundary(inst, gen);
        const record = inst.steps.get(key);
        if (record?.done) return { json: JSON.stringify({ cached: true, hasValue: record.hasValue }), bytes: unb64(record.value) };
        // A step that failed in an earlier run and waits for its retry: the wait goes on.
        if (record?.retryAt !== undefined) {
          if (!this.mocks.of(inst.id)?.retryDelayDisabled(key)) await this.#sleep(inst, gen, record.retryAt, { kind: "retry", step: key, attempt: record.failed + 1 });
          await this.#boundary(inst, gen);
          return this.#attempt(inst, key, { cached: false, attempt: record.failed + 1 });
        }
        return this.#attempt(inst, key, { cached: false, attempt: 1 });
      }
      case "step.timeout": {
        const fired = await this.#pending(inst, (resolve) => {
          const stop = this.clock.at(this.clock.now() + args.ms, () => resolve(true), { instance: inst.id, kind: "timeout", step: key, attempt: args.attempt });
          inst.timeouts.set(`${key}\u0000${args.attempt}`, () => (stop(), resolve(false)));
        }, gen);
        return { json: JSON.stringify({ fired }) };
      }
      case "step.end": {
        const endTimeout = inst.timeouts.get(`${key}\u0000${args.attempt}`);
        inst.timeouts.delete(`${key}\u0000${args.attempt}`);
        endTimeout?.();
        if (args.ok) {
          const record = { done: true, hasValue: args.hasValue, value: b64(bytes) };
          inst.steps.set(key, record);
          this.#changed();
          await this.#store.setStep(inst.id, key, record);
          return { json: "{}" };
        }
        const { retries } = args;
        if (args.fatal || retries === undefined || args.attempt > retries.limit) {
          inst.stepErrors.set(key, args.error ?? { name: "Error", message: "the step failed" });
          this.#changed();
          return { json: JSON.stringify({ retry: false }) };
        }
        const undelayed = this.mocks.of(inst.id)?.retryDelayDisabled(key);
        const delay = undelayed ? 0 : retries.backoff === "exponential" ? retries.delay * 2 ** (args.attempt - 1) : retries.backoff === "linear" ? retries.delay * args.attempt : retries.delay;
        const retryAt = this.clock.now() + delay;
        const failed = { failed: args.attempt, retryAt };
        inst.steps.set(key, failed);
        await this.#store.setStep(inst.id, key, failed);
        this.#log(inst.worker, "warn", `workflow "${this.#workflow}" instance ${inst.id}: step "${args.key.split(":").slice(2).join(":")}" attempt ${args.attempt} failed (${args.error?.name}: ${args.error?.message}); retrying in ${delay} ms`);
        if (delay > 0) await this.#sleep(inst, gen, retryAt, { kind: "retry", step: key, attempt: args.attempt + 1, delay });
        await this.#boundary(inst, gen);
        return this.#attempt(inst, key, { retry: true, attempt: args.attempt + 1 });
      }
      case "step.sleep": {
        await this.#boundary(inst, gen);
        let record = inst.steps.get(key);
        if (record?.done) return { json: "{}" };
        if (record === undefined) {
          record = { until: args.until ?? this.clock.now() + args.ms };
          inst.steps.set(key, record);
          await this.#store.setStep(inst.id, key, record);
        }
        if (record.until > this.clock.now() && !this.mocks.of(inst.id)?.sleepDisabled(key)) {
          await this.#waitingStatus(inst, gen, true);
          await this.#sleep(inst, gen, record.until, { kind: "sleep", step: key });
          await this.#waitingStatus(inst, gen, false);
        }
        record = { done: true };
        inst.steps.set(key, record);
        await this.#store.setStep(inst.id, key, record);
        await this.#boundary(inst, gen);
        return { json: "{}" };
      }
      case "step.wait":
        return this.#wait(inst, gen, args);
    }
    throw new TypeError(`unknown workflow step operation "${method}"`);
  }

  async #wait(inst, gen, { key, type, ms }) {
    await this.#boundary(inst, gen);
    let record = inst.steps.get(key);
    const answer = (r) => ({ json: JSON.stringify({ timedOut: r.timedOut ?? false, type: r.type, timestamp: r.at, hasValue: r.payload !== null && r.payload !== undefined }), bytes: unb64(r.payload) });
    if (record?.done) return answer(record);
    if (record === undefined) {
      record = { deadline: this.clock.now() + ms, type };
      inst.steps.set(key, record);
      await this.#store.setStep(inst.id, key, record);
    }
    if (this.mocks.of(inst.id)?.eventTimesOut(key)) {
      const done = { done: true, timedOut: true, type };
      inst.steps.set(key, done);
      await this.#store.setStep(inst.id, key, done);
      await this.#boundary(inst, gen);
      return answer(done);
    }
    const take = async () => {
      const event = (await this.#store.events(inst.id)).find((e) => e.type === type);
      if (event === undefined) {
        const mocked = this.mocks.of(inst.id)?.takeEvent(type);
        if (!mocked) return null;
        const done = { done: true, type, at: this.clock.now(), payload: b64(mocked.bytes) };
        inst.steps.set(key, done);
        await this.#store.setStep(inst.id, key, done);
        return done;
      }
      const done = { done: true, type, at: event.at, payload: b64(event.payload) };
      inst.steps.set(key, done);
      await this.#store.takeEvent(inst.id, event.seq, key, done);
      return done;
    };
    let done = await take();
    if (done === null) {
      await this.#waitingStatus(inst, gen, true);
      this.#still(inst, gen);
      inst.sleeping++;
      this.#changed();
      let stop;
      try {
        done = await this.#pending(inst, (resolve, reject) => {
          const waiter = { type, take: () => take().then((d) => d && resolve(d), reject) };
          inst.waiters.push(waiter);
          // An event sent since the first look (while the status was written) is taken now.
          waiter.take();
          stop = this.clock.at(record.deadline, () => resolve({ done: true, timedOut: true, type }), { instance: inst.id, kind: "waitForEvent", step: key });
        }, gen);
      } finally {
        stop?.();
        if (inst.gen === gen) {
          inst.sleeping--;
          inst.waiters = inst.waiters.filter((w) => w.type !== type);
        }
      }
      if (done.timedOut) {
        inst.steps.set(key, done);
        await this.#store.setStep(inst.id, key, done);
      }
      await this.#waitingStatus(inst, gen, false);
    }
    await this.#boundary(inst, gen);
    return answer(done);
  }

  /** A step.do attempt's answer, with what a test mocked for it (a result, an error, a timeout). */
  #attempt(inst, key, answer) {
    const mock = this.mocks.of(inst.id)?.forAttempt(key, answer.attempt);
    if (!mock) return { json: JSON.stringify(answer) };
    if (mock.value !== undefined) return { json: JSON.stringify({ ...answer, mock: { value: true, hasValue: mock.value !== null } }), bytes: mock.value };
    return { json: JSON.stringify({ ...answer, mock }) };
  }

  // ---- Introspection (introspect.js) --------------------------------------------------------

  /** The instance, once it exists (introspectWorkflowInstance() may be called before create()). */
  async instanceWhenMade(id, timeoutMs) {
    const all = await this.#all();
    return this.until(() => all.get(id), timeoutMs, `instance ${id} to be created`);
  }

  /**
   * Resolves with the recorded result (bytes or null) of step.do `key` once it is done; rejects
   * with its error if it failed for good, or if the instance finishes without it.
   */
  async stepResult(id, key, timeoutMs) {
    const inst = await this.instanceWhenMade(id, timeoutMs);
    const record = await this.until(() => {
      const done = inst.steps.get(key);
      if (done?.done) return done;
      const failed = inst.stepErrors.get(key);
      if (failed) throw Object.assign(new Error(failed.message), { name: failed.name });
      if (FINISHED.has(inst.status)) throw new Error(`[WorkflowIntrospector] The Workflow instance ${id} is ${inst.status} and its step "${key.split(":").slice(2).join(":")}" (index ${key.split(":")[1]}) has no result`);
      return null;
    }, timeoutMs, `step "${key.split(":").slice(2).join(":")}" of instance ${id} to finish`);
    return record.hasValue ? unb64(record.value) : null;
  }

  /** Ends instance `id`'s run for a test's dispose(): a run not finished is terminated. */
  async abort(id) {
    const inst = this.#instances?.get(id);
    this.mocks.drop(id);
    if (inst === undefined) return;
    if (FINISHED.has(inst.status)) return;
    this.#stop(inst);
    await this.#set(inst, { status: "terminated", paused: false });
  }

  /** Every instance id, in creation order. */
  async ids() {
    return [...(await this.#all()).values()].sort((a, b) => a.created - b.created).map((i) => i.id);
  }

  /** Resolves once every write asked for so far is on disk. */
  written() {
    return this.#store.written();
  }

  close() {
    for (const inst of this.#instances?.values() ?? []) if (inst.active) this.#stop(inst);
    this.clock.clear();
    // A step call still waiting (a day-long sleep) would otherwise hold Node's event loop open
    // until its lease lapses (half the worker's limits.bindingMs).
    for (const end of this.#lapses) end();
    this.#lapses.clear();
    this.#leases.clear();
  }
}

module.exports = { Engine, FINISHED };
