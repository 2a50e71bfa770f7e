// Workflows, inside the worker. Owns the Workflow binding (`env.MY_WORKFLOW`: create, createBatch,
// get) and its instance handles (status, pause, resume, terminate, restart, sendEvent), with
// production's validation; the `cloudflare:workflows` module (NonRetryableError); and the run of
// one instance: the host (lib/workflows/engine.js) calls in with kind "workflowRun", this file
// constructs the exported WorkflowEntrypoint class and calls `run(event, step)`, where every
// step.do / sleep / sleepUntil / waitForEvent asks the host first (cached results, timers,
// retries, pause) through binding calls on the workflow binding's name. Values cross as V8
// structured clones (ops.serialize).

const kConstruct = Symbol("construct");

// Production's limits (Cloudflare's Workflows limits page; 1 MiB = 2^20 bytes).
const ID_PATTERN = /^[a-zA-Z0-9_][a-zA-Z0-9-_]*$/;
const ID_LIMIT = 100;
const STEP_NAME_LIMIT = 256;
const PAYLOAD_LIMIT = 1 << 20;
const BATCH_LIMIT = 100;
const SLEEP_LIMIT = 365 * 24 * 3600 * 1000;
const DEFAULT_EVENT_TIMEOUT = 24 * 3600 * 1000;
const DEFAULT_CONFIG = Object.freeze({ retries: Object.freeze({ limit: 5, delay: 10000, backoff: "exponential" }), timeout: "10 minutes" });

class NonRetryableError extends Error {
  constructor(message, name = "NonRetryableError") {
    super(message);
    this.name = name;
  }
}

class WorkflowFatalError extends Error {
  constructor(message) {
    super(message);
    this.name = "WorkflowFatalError";
  }
}

class WorkflowTimeoutError extends Error {
  constructor(message) {
    super(message);
    this.name = "WorkflowTimeoutError";
  }
}

const UNITS = { millisecond: 1, second: 1000, minute: 60000, hour: 3600000, day: 86400000, week: 7 * 86400000, month: 30 * 86400000, year: 365 * 86400000 };

/** A duration as production takes it: milliseconds, or "<n> <unit>[s]" (second … year). */
function durationMs(value, what) {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === "string") {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+?)s?\s*$/i.exec(value);
    const unit = match && UNITS[match[2].toLowerCase()];
    if (unit !== undefined && unit !== null) return Number(match[1]) * unit;
  }
  throw new TypeError(`${what}: ${JSON.stringify(value) ?? String(value)} is not a duration (a number of milliseconds, or a string such as "10 seconds", "5 minutes", "2 hours", "1 day")`);
}

function serialized(value, what) {
  let bytes;
  try {
    bytes = ops.serialize(value);
  } catch (error) {
    throw new TypeError(`${what} is not serializable: ${error?.message ?? error}`);
  }
  if (bytes.byteLength > PAYLOAD_LIMIT) throw new RangeError(`${what} is ${bytes.byteLength} bytes; the limit is ${PAYLOAD_LIMIT} bytes (1 MiB)`);
  return bytes;
}

const decoded = (json, bytes) => (json.hasValue ? ops.deserialize(bytes) : undefined);

function checkId(id) {
  if (typeof id !== "string" || id.length > ID_LIMIT || !ID_PATTERN.test(id)) throw new Error("WorkflowError: Workflow instance has invalid id");
  return id;
}

// ---- The binding and its instances ----------------------------------------------------------

class WorkflowInstance {
  #binding;
  constructor(token, binding, id) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.id = id;
  }

  async #call(method, args = {}, bytes = null) {
    return internals.hostCall(this.#binding, method, { id: this.id, ...args }, bytes);
  }

  async status() {
    const [json, bytes] = await this.#call("status");
    const out = { status: json.status, error: json.error ?? undefined, output: decoded(json, bytes) };
    return out;
  }

  async pause() {
    await this.#call("pause");
  }

  async resume() {
    await this.#call("resume");
  }

  async terminate() {
    await this.#call("terminate");
  }

  async restart() {
    await this.#call("restart");
  }

  async sendEvent({ type, payload } = {}) {
    if (typeof type !== "string" || type.length > ID_LIMIT || !ID_PATTERN.test(type)) throw new TypeError(`sendEvent(): type must match ${ID_PATTERN} and be at most ${ID_LIMIT} characters, got ${JSON.stringify(type)}`);
    await this.#call("sendEvent", { type, hasValue: payload !== undefined }, payload === undefined ? null : serialized(payload, "sendEvent(): the payload"));
  }

  get [Symbol.toStringTag]() {
    return "WorkflowInstance";
  }
}

class Workflow {
  #name;
  constructor(token, name) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#name = name;
  }

  async #create(list, what) {
    const seen = new Set();
    const parts = list.map((options, i) => {
      if (options !== undefined && (options === null || typeof options !== "object")) throw new TypeError(`${what}: options must be an object { id?, params? }`);
      const id = options?.id === undefined ? crypto.randomUUID() : checkId(options.id);
      if (seen.has(id)) throw new Error(`${what}: the id "${id}" is given twice in this batch`);
      seen.add(id);
      const params = options?.params ?? {};
      return { id, bytes: serialized(params, `${what}: the params of instance ${i === 0 && list.length === 1 ? id : i}`) };
    });
    const total = new Uint8Array(parts.reduce((n, p) => n + p.bytes.byteLength, 0));
    let at = 0;
    for (const p of parts) total.set(p.bytes, at), (at += p.bytes.byteLength);
    await internals.hostCall(this.#name, "create", { instances: parts.map((p) => ({ id: p.id, size: p.bytes.byteLength })) }, total);
    return parts.map((p) => new WorkflowInstance(kConstruct, this.#name, p.id));
  }

  async create(options = undefined) {
    const [instance] = await this.#create([options], "create()");
    return instance;
  }

  async createBatch(batch) {
    if (!Array.isArray(batch) || batch.length === 0) throw new TypeError("WorkflowError: batchCreate should have at least 1 instance");
    if (batch.length > BATCH_LIMIT) throw new RangeError(`WorkflowError: batchCreate takes at most ${BATCH_LIMIT} instances, got ${batch.length}`);
    return this.#create(batch, "createBatch()");
  }

  async get(id) {
    if (typeof id !== "string") throw new TypeError("get(): the id must be a string");
    await internals.hostCall(this.#name, "get", { id });
    return new WorkflowInstance(kConstruct, this.#name, id);
  }

  get [Symbol.toStringTag]() {
    return "Workflow";
  }
}

// ---- One run of an instance -----------------------------------------------------------------

function resolveConfig(config) {
  if (config === undefined) return { retries: { ...DEFAULT_CONFIG.retries }, timeout: DEFAULT_CONFIG.timeout };
  if (config === null || typeof config !== "object") throw new TypeError("step.do(): the config must be an object { retries?, timeout? }");
  const unknown = Object.keys(config).filter((k) => k !== "retries" && k !== "timeout");
  if (unknown.length > 0) throw new TypeError(`step.do(): unknown config key ${unknown.join(", ")} (retries, timeout)`);
  const retries = { ...DEFAULT_CONFIG.retries, ...(config.retries ?? {}) };
  if (!(Number.isInteger(retries.limit) && retries.limit >= 0)) throw new TypeError(`step.do(): retries.limit must be an integer of at least 0, got ${JSON.stringify(retries.limit)}`);
  if (!["constant", "linear", "exponential"].includes(retries.backoff)) throw new TypeError(`step.do(): retries.backoff must be "constant", "linear" or "exponential", got ${JSON.stringify(retries.backoff)}`);
  durationMs(retries.delay, "step.do(): retries.delay");
  const timeout = config.timeout ?? DEFAULT_CONFIG.timeout;
  if (durationMs(timeout, "step.do(): timeout") === 0) throw new TypeError("step.do(): timeout must be more than 0");
  return { retries, timeout };
}

class WorkflowStep {
  #binding;
  #run;
  #counts = new Map();
  constructor(token, binding, run) {
    if (token !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#run = run;
  }

  /** A step call; one that waits longer than the host answers within is asked for again ("step.poll"). */
  async #call(method, args, bytes = null) {
    let answer = await internals.hostCall(this.#binding, method, { ...this.#run, ...args }, bytes);
    while (answer[0].pending !== undefined) answer = await internals.hostCall(this.#binding, "step.poll", { ...this.#run, token: answer[0].pending });
    return answer;
  }

  /** The step's cache key: its kind, name and how many steps of that kind and name came before. */
  #key(kind, name) {
    if (typeof name !== "string" || name.length > STEP_NAME_LIMIT || /[\u0000-\u001f]/.test(name)) {
      throw new WorkflowFatalError(`Step name "${name}" exceeds max length (${STEP_NAME_LIMIT} chars) or invalid characters found`);
    }
    const count = (this.#counts.get(`${kind}:${name}`) ?? 0) + 1;
    this.#counts.set(`${kind}:${name}`, count);
    return { key: `${kind}:${count}:${name}`, count };
  }

  async do(name, configOrCallback, maybeCallback) {
    const [config, callback] = typeof configOrCallback === "function" ? [undefined, configOrCallback] : [configOrCallback, maybeCallback];
    if (typeof callback !== "function") throw new TypeError("step.do(name, [config], callback): the callback must be a function");
    const resolved = resolveConfig(config);
    const { key, count } = this.#key("do", name);
    const [begin, cached] = await this.#call("step.begin", { key, name });
    if (begin.cached) return decoded(begin, cached);
    // What a test mocked for the next attempt (workerbox's introspection: a result, an error or a timeout).
    let mock = begin.mock ? { ...begin.mock, bytes: cached } : null;
    const timeoutMs = durationMs(resolved.timeout, "step.do(): timeout");
    const delayMs = durationMs(resolved.retries.delay, "step.do(): retries.delay");
    let attempt = begin.attempt;
    for (;;) {
      let value;
      let failure = null;
      if (mock?.error) {
        failure = new Error(mock.error.message);
        failure.name = mock.error.name;
      } else if (mock?.timeout) {
        failure = new WorkflowTimeoutError(`Execution timed out after ${timeoutMs}ms`);
      } else if (mock?.value) {
        value = decoded(mock, mock.bytes);
      } else {
        try {
          const timer = this.#call("step.timeout", { key, attempt, ms: timeoutMs }).then(([answer]) => {
            if (answer.fired) throw new WorkflowTimeoutError(`Execution timed out after ${timeoutMs}ms`);
            return new Promise(() => {});
          });
          value = await Promise.race([callback({ attempt, step: { name, count }, config: resolved }), timer]);
        } catch (error) {
          failure = error;
        }
      }
      if (failure === null) {
        let bytes;
        try {
          bytes = value === undefined ? null : serialized(value, `the result of step "${name}"`);
        } catch (error) {
          await this.#call("step.end", { key, attempt, ok: false, fatal: true, error: errorOf(error) });
          throw error;
        }
        await this.#call("step.end", { key, attempt, ok: true, hasValue: value !== undefined }, bytes);
        return value;
      }
      const fatal = failure instanceof NonRetryableError || failure?.name === "NonRetryableError";
      const [verdict, next] = await this.#call("step.end", { key, attempt, ok: false, fatal, error: errorOf(failure), retries: { limit: resolved.retries.limit, delay: delayMs, backoff: resolved.retries.backoff } });
      if (!verdict.retry) throw failure;
      attempt = verdict.attempt;
      mock = verdict.mock ? { ...verdict.mock, bytes: next } : null;
    }
  }

  async sleep(name, duration) {
    const ms = durationMs(duration, "step.sleep()");
    if (ms > SLEEP_LIMIT) throw new RangeError(`step.sleep(): ${ms} ms is longer than the limit of 365 days`);
    const { key } = this.#key("sleep", name);
    await this.#call("step.sleep", { key, name, ms });
  }

  async sleepUntil(name, timestamp) {
    const until = timestamp instanceof Date ? timestamp.getTime() : timestamp;
    if (typeof until !== "number" || !Number.isFinite(until)) throw new TypeError("step.sleepUntil(): the timestamp must be a Date or a number of milliseconds since the epoch");
    const { key } = this.#key("sleep", name);
    await this.#call("step.sleep", { key, name, until });
  }

  async waitForEvent(name, options = {}) {
    const type = options?.type;
    if (typeof type !== "string" || type.length > ID_LIMIT || !ID_PATTERN.test(type)) throw new TypeError(`step.waitForEvent(): type must match ${ID_PATTERN} and be at most ${ID_LIMIT} characters, got ${JSON.stringify(type)}`);
    const ms = options.timeout === undefined ? DEFAULT_EVENT_TIMEOUT : durationMs(options.timeout, "step.waitForEvent(): timeout");
    if (ms > SLEEP_LIMIT) throw new RangeError("step.waitForEvent(): the timeout may be at most 365 days");
    const { key } = this.#key("wait", name);
    const [answer, bytes] = await this.#call("step.wait", { key, name, type, ms });
    if (answer.timedOut) throw new WorkflowTimeoutError(`Execution timed out after ${ms}ms`);
    return { type: answer.type, timestamp: new Date(answer.timestamp), payload: decoded(answer, bytes) };
  }

  get [Symbol.toStringTag]() {
    return "WorkflowStep";
  }
}

function errorOf(error) {
  const [name, message] = internals.errorParts(error);
  return { name, message };
}

/** Runs `run(event, step)` of the exported class the call names; resolves to its output. */
async function runInstance(call, argsBytes, ctx) {
  const { WorkflowEntrypoint } = internals.loadCloudflareModule("workers");
  let Class = internals.namespace?.[call.className];
  // workerbox/vitest's runner supplies the classes of the project's main module on demand.
  const supply = internals.namespace?.__workerboxWorkflowClass;
  if (typeof Class !== "function" && typeof supply === "function") Class = await supply(call.className);
  if (typeof Class !== "function" || !(Class.prototype instanceof WorkflowEntrypoint)) {
    throw new TypeError(`The worker does not export a class "${call.className}" that extends WorkflowEntrypoint from "cloudflare:workers".`);
  }
  const instance = new Class(ctx, internals.workerEnv);
  if (typeof instance.run !== "function") throw new TypeError(`The Workflow class "${call.className}" has no run(event, step) method.`);
  const event = { payload: ops.deserialize(argsBytes), timestamp: new Date(call.timestamp), instanceId: call.instance };
  const step = new WorkflowStep(kConstruct, call.binding, { instance: call.instance, gen: call.gen });
  let output;
  try {
    output = await instance.run(event, step);
  } catch (error) {
    // Before workflows_preserve_non_retryable_error_message, production reports an unhandled
    // NonRetryableError as this WorkflowFatalError.
    if (error?.name === "NonRetryableError" && !internals.feature("workflows_preserve_non_retryable_error_message")) {
      throw new WorkflowFatalError("The execution of the Workflow instance was terminated, as a step threw an NonRetryableError and it was not handled");
    }
    throw error;
  }
  return output === undefined ? undefined : serialized(output, "the Workflow's output") && output;
}

const dispatchOther = internals.dispatchRpc;
internals.dispatchRpc = function dispatchRpc(id, callJson, argsBytes) {
  if (!callJson.startsWith('{"kind":"workflowRun"')) return dispatchOther(id, callJson, argsBytes);
  const { ctx, work } = internals.eventContext(id);
  (async () => runInstance(JSON.parse(callJson), argsBytes, ctx))()
    .then((output) => ops.respondRpc(id, ops.serialize(output), '{"stubs":[]}'))
    .catch((error) => {
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => work.responded(false));
};

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  return kind === "workflow" ? new Workflow(kConstruct, name) : makeOtherBinding(name, kind);
};

const loadOtherModule = internals.loadCloudflareModule;
let workflowsModule;
// The list of modules workerbox has, in the error for one it has not, names this one too.
internals.moreCloudflareModules.push("workflows");
internals.loadCloudflareModule = function loadCloudflareModule(name, dynamic) {
  if (name === "workflows") return (workflowsModule ??= { NonRetryableError });
  return loadOtherModule(name, dynamic);
};

internals.asyncApiPrototypes.push(Workflow.prototype, WorkflowInstance.prototype);
