"use strict";
// Workflows, introspection for tests — the shape of Cloudflare's `introspectWorkflow()` and
// `introspectWorkflowInstance()` (cloudflare:test), over workerbox's engine: a test changes what
// instances' runs do (mocks.js: sleeps and retry delays skipped, step results, errors and
// timeouts mocked, events supplied, event waits timed out), then waits for a step's result or an
// instance's status and reads its output or error. workerbox/test exports these functions for
// Node; workerbox/vitest's cloudflare:test reaches the same objects through the pool
// (lib/vitest/workflow-host.js). Values are V8-serialized between the engine and the caller.

const rpc = require("../rpc.js");
const { FINISHED } = require("./engine.js");
const { operationFromNode } = require("./mocks.js");

const DEFAULT_TIMEOUT_MS = 60_000;

/** The engine behind a workflow() binding (a workerbox Workflow in Node). */
function engineOf(workflow, what) {
  if (workflow === null || typeof workflow !== "object" || typeof workflow._introspectionEngine !== "function") {
    throw new TypeError(`${what}: the first argument must be a Workflow binding (workflow(), or a project's env.MY_WORKFLOW in Node), got ${workflow === null ? "null" : typeof workflow}`);
  }
  return workflow._introspectionEngine();
}

/** The modifier a modify() callback gets; records operations (applied when the callback is done). */
function recorder(operations) {
  return Object.freeze({
    disableSleeps: async (steps) => void operations.push({ type: "disableSleeps", steps }),
    disableRetryDelays: async (steps) => void operations.push({ type: "disableRetryDelays", steps }),
    mockStepResult: async (step, value) => void operations.push({ type: "mockStepResult", step, value }),
    mockStepError: async (step, error, times) => void operations.push({ type: "mockStepError", step, error, times }),
    forceStepTimeout: async (step, times) => void operations.push({ type: "forceStepTimeout", step, times }),
    mockEvent: async (event) => void operations.push({ type: "mockEvent", event }),
    forceEventTimeout: async (step) => void operations.push({ type: "forceEventTimeout", step }),
  });
}

async function record(fn, what) {
  if (typeof fn !== "function") throw new TypeError(`${what}: give a callback (m) => { m.disableSleeps(); m.mockStepResult({ name }, value); … }`);
  const operations = [];
  await fn(recorder(operations));
  return operations.map(operationFromNode);
}

/** An error as it reaches a test: a custom class's name becomes "Error" (it crossed RPC). */
const BUILTIN_ERRORS = new Set(["Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError", "AggregateError"]);

function stepKey(step, what) {
  if (step === null || typeof step !== "object" || typeof step.name !== "string") throw new TypeError(`${what}: the step must be an object { name: string, index?: number }`);
  if (step.index !== undefined && !(Number.isInteger(step.index) && step.index >= 1)) throw new TypeError(`${what}: the step's index must be an integer of at least 1`);
  return `do:${step.index ?? 1}:${step.name}`;
}

/** The operations of one instance, as bytes in and out (the vitest pool's route uses these directly). */
class InstanceOps {
  constructor(engine, id) {
    this.engine = engine;
    this.id = id;
  }

  /** Applies checked operations now (the instance need not exist yet). */
  apply(operations) {
    const mocks = this.engine.mocks.ensure(this.id);
    for (const op of operations) mocks.apply(op);
  }

  /** The step's result as bytes (null: undefined). */
  stepResult(step, timeoutMs = DEFAULT_TIMEOUT_MS) {
    return this.engine.stepResult(this.id, stepKey(step, "waitForStepResult()"), timeoutMs);
  }

  async waitForStatus(status, timeoutMs = DEFAULT_TIMEOUT_MS) {
    if (typeof status !== "string") throw new TypeError("waitForStatus(): the status must be a string such as \"complete\"");
    if (status === "queued") return;
    const inst = await this.engine.instanceWhenMade(this.id, timeoutMs);
    await this.engine.until(() => {
      const now = this.engine.statusOf(inst);
      if (now === status) return true;
      if (FINISHED.has(now)) throw new Error(`[WorkflowIntrospector] The Workflow instance ${this.id} is ${now}, which it will not leave for ${status}`);
      return false;
    }, timeoutMs, `instance ${this.id} to be ${status}`);
    await this.engine.written();
  }

  /** The output as bytes (null: undefined); throws unless the instance is complete. */
  async output() {
    const { status, output } = await this.engine.status(this.id);
    if (status !== "complete") throw new Error(`[WorkflowIntrospector] The Workflow instance ${this.id} is ${status}, so it has no output yet (wait for "complete" first)`);
    return output;
  }

  /** `{ name, message }` of an errored instance, as Cloudflare's introspector gives it. */
  async error() {
    const { status, error } = await this.engine.status(this.id);
    if (status !== "errored" || !error) throw new Error(`[WorkflowIntrospector] The Workflow instance ${this.id} is ${status}, so it has no error (wait for "errored" first)`);
    return { name: BUILTIN_ERRORS.has(error.name) ? error.name : "Error", message: error.message };
  }

  dispose() {
    return this.engine.abort(this.id);
  }
}

/** introspectWorkflowInstance()'s object, in Node. */
class WorkflowInstanceIntrospector {
  #ops;
  constructor(ops) {
    this.#ops = ops;
    this.id = ops.id;
  }

  async modify(fn) {
    this.#ops.apply(await record(fn, "modify()"));
    return this;
  }

  async waitForStepResult(step, { timeoutMs } = {}) {
    const bytes = await this.#ops.stepResult(step, timeoutMs);
    return bytes === null ? undefined : rpc.deserialize(bytes);
  }

  waitForStatus(status, { timeoutMs } = {}) {
    return this.#ops.waitForStatus(status, timeoutMs);
  }

  async getOutput() {
    const bytes = await this.#ops.output();
    return bytes === null ? undefined : rpc.deserialize(bytes);
  }

  getError() {
    return this.#ops.error();
  }

  dispose = () => this.#ops.dispose();

  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

/** The session of introspectWorkflow(): instances created while it lasts get its modifications. */
class WorkflowSession {
  #engine;
  #session;
  #disposed = false;
  constructor(engine) {
    this.#engine = engine;
    this.#session = engine.mocks.startSession();
  }

  get ids() {
    return [...this.#session.ids];
  }

  /** Adds operations: to every instance created from now on, and to those already in the session. */
  apply(operations) {
    if (this.#disposed) throw new Error("[WorkflowIntrospector] this introspector was disposed; call introspectWorkflow() again");
    this.#session.operations.push(...operations);
    for (const id of this.#session.ids) new InstanceOps(this.#engine, id).apply(operations);
  }

  instance(id) {
    return new InstanceOps(this.#engine, id);
  }

  async dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#engine.mocks.endSession(this.#session);
    for (const id of this.#session.ids) await this.#engine.abort(id);
  }
}

/** introspectWorkflow()'s object, in Node. */
class WorkflowIntrospector {
  #session;
  #introspectors = new Map();
  constructor(session) {
    this.#session = session;
  }

  async modifyAll(fn) {
    this.#session.apply(await record(fn, "modifyAll()"));
  }

  /** An introspector for each instance created since introspectWorkflow(), oldest first. */
  async get() {
    for (const id of this.#session.ids) {
      if (!this.#introspectors.has(id)) this.#introspectors.set(id, new WorkflowInstanceIntrospector(this.#session.instance(id)));
    }
    return [...this.#introspectors.values()];
  }

  dispose = () => this.#session.dispose();

  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

/** Changes and watches instance `instanceId` of `workflow` (it may be created later). */
async function introspectWorkflowInstance(workflow, instanceId) {
  const engine = engineOf(workflow, "introspectWorkflowInstance()");
  if (typeof instanceId !== "string" || instanceId === "") throw new TypeError("introspectWorkflowInstance(): the instance id must be a non-empty string");
  return new WorkflowInstanceIntrospector(new InstanceOps(engine, instanceId));
}

/** Changes and watches every instance of `workflow` created from now until dispose(). */
async function introspectWorkflow(workflow) {
  return new WorkflowIntrospector(new WorkflowSession(engineOf(workflow, "introspectWorkflow()")));
}

module.exports = { introspectWorkflow, introspectWorkflowInstance, InstanceOps, WorkflowSession, engineOf, DEFAULT_TIMEOUT_MS };
