// The `cloudflare:test` module of workerbox/vitest, evaluated inside the test isolate by Vitest's
// module runner (so that it shares module instances with the tests): the worker's `env`, `SELF`
// (the project's main module's handlers, called in this isolate), execution contexts, scheduled
// controllers, queue batches and their results, D1 migrations, the Durable Object helpers, and
// Workflow introspection (introspectWorkflow, introspectWorkflowInstance).
// The runner (lib/vitest/runner.mjs) leaves the main module's path in `globalThis.__workerboxVitest`;
// Durable Object helpers send the object a request the runner's wrapper of its class answers, or
// ask the pool in Node (through the `__WORKERBOX_VITEST_HOST` binding).
import { env as workerEnv, exports as workerExports } from "cloudflare:workers";

export const env = workerEnv;

const kWaitUntil = Symbol("waitUntil");
const kConstruct = Symbol("construct");

function settings() {
  const found = globalThis.__workerboxVitest;
  if (!found) throw new Error("cloudflare:test is only available in tests run by workerbox/vitest");
  return found;
}

class ExecutionContext {
  constructor(flag) {
    if (flag !== kConstruct) throw new TypeError("Illegal constructor");
    this[kWaitUntil] = [];
    this.props = {};
  }
  /** The worker's own entrypoints and Durable Object namespaces, as a request's ctx.exports. */
  get exports() {
    return workerExports;
  }
  waitUntil(promise) {
    if (!(this instanceof ExecutionContext)) throw new TypeError("Illegal invocation");
    this[kWaitUntil].push(promise);
  }
  passThroughOnException() {}
}

export function createExecutionContext() {
  return new ExecutionContext(kConstruct);
}

/**
 * The context a Pages Function gets (`{ request, functionPath, params, data, env, next, waitUntil,
 * passThroughOnException }`), an execution context waitOnExecutionContext() takes, as
 * Cloudflare's pool makes it: the worker needs an `ASSETS` service binding; `next()` calls
 * `init.next` — with the original request (the context's own is a clone, so both may read the
 * body), or with a request made of its arguments (a relative URL against the request's).
 */
export function createPagesEventContext(init) {
  if (typeof init !== "object" || init === null) throw new TypeError("Failed to execute 'createPagesEventContext': parameter 1 is not of type 'EventContextInit'.");
  if (!(init.request instanceof Request)) throw new TypeError("Incorrect type for the 'request' field on 'EventContextInit': the provided value is not of type 'Request'.");
  if (init.functionPath !== undefined && typeof init.functionPath !== "string") throw new TypeError("Incorrect type for the 'functionPath' field on 'EventContextInit': the provided value is not of type 'string'.");
  if (init.next !== undefined && typeof init.next !== "function") throw new TypeError("Incorrect type for the 'next' field on 'EventContextInit': the provided value is not of type 'function'.");
  for (const key of ["params", "data"]) {
    if (init[key] !== undefined && (typeof init[key] !== "object" || init[key] === null)) throw new TypeError(`Incorrect type for the '${key}' field on 'EventContextInit': the provided value is not of type 'object'.`);
  }
  if (env.ASSETS === null || env.ASSETS === undefined || typeof env.ASSETS.fetch !== "function") {
    throw new TypeError("Cannot call `createPagesEventContext()` without defining `ASSETS` service binding");
  }
  const ctx = createExecutionContext();
  const next = async (input, nextInit) => {
    if (init.next === undefined) throw new TypeError("Cannot call `EventContext#next()` without including `next` property in 2nd argument to `createPagesEventContext()`");
    if (input === undefined) return init.next(init.request);
    return init.next(new Request(typeof input === "string" ? new URL(input, init.request.url).toString() : input, nextInit));
  };
  Object.assign(ctx, { request: init.next ? init.request.clone() : init.request, functionPath: init.functionPath ?? "", params: init.params ?? {}, data: init.data ?? {}, env, next });
  return ctx;
}

/** Waits for every waitUntil() promise, including ones added while waiting; rejections too. */
async function waitForAll(list) {
  const errors = [];
  while (list.length > 0) {
    const results = await Promise.allSettled(list.splice(0));
    for (const result of results) if (result.status === "rejected") errors.push(result.reason);
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, "Multiple waitUntil() promises rejected");
}

export async function waitOnExecutionContext(ctx) {
  if (!(ctx instanceof ExecutionContext)) {
    throw new TypeError("Failed to execute 'waitOnExecutionContext': parameter 1 is not of type 'ExecutionContext'.\nYou must call 'createExecutionContext()' to get an 'ExecutionContext' instance.");
  }
  return waitForAll(ctx[kWaitUntil]);
}

class ScheduledController {
  #scheduledTime;
  #cron;
  constructor(flag, options) {
    if (flag !== kConstruct) throw new TypeError("Illegal constructor");
    this.#scheduledTime = Number(options?.scheduledTime ?? Date.now());
    this.#cron = String(options?.cron ?? "");
  }
  get scheduledTime() {
    return this.#scheduledTime;
  }
  get cron() {
    return this.#cron;
  }
  noRetry() {}
}

export function createScheduledController(options) {
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    throw new TypeError("Failed to execute 'createScheduledController': parameter 1 is not of type 'ScheduledOptions'.");
  }
  return new ScheduledController(kConstruct, options);
}

class QueueMessage {
  #batch;
  constructor(batch, message) {
    this.#batch = batch;
    this.id = String(message.id);
    this.timestamp = message.timestamp instanceof Date ? new Date(message.timestamp.getTime()) : new Date(Number(message.timestamp ?? Date.now()));
    this.body = message.body;
    this.attempts = Number(message.attempts ?? 1);
    this.retried = false;
    this.acked = false;
  }
  retry() {
    this.retried = true;
    this.acked = false;
  }
  ack() {
    this.acked = true;
    this.retried = false;
  }
}

class MessageBatch {
  constructor(flag, queue, messages) {
    if (flag !== kConstruct) throw new TypeError("Illegal constructor");
    this.queue = String(queue);
    this.messages = messages.map((message) => new QueueMessage(this, message));
    this.retriedAll = false;
    this.ackedAll = false;
  }
  retryAll() {
    this.retriedAll = true;
  }
  ackAll() {
    this.ackedAll = true;
  }
}

export function createMessageBatch(queueName, messages) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'createMessageBatch': parameter 1 is not of type 'string'.");
  if (!Array.isArray(messages)) throw new TypeError("Failed to execute 'createMessageBatch': parameter 2 is not of type 'Array'.");
  return new MessageBatch(kConstruct, queueName, messages);
}

export async function getQueueResult(batch, ctx) {
  if (!(batch instanceof MessageBatch)) throw new TypeError("Failed to execute 'getQueueResult': parameter 1 is not of type 'MessageBatch'.\nYou must call 'createMessageBatch()' to get a 'MessageBatch' instance.");
  if (!(ctx instanceof ExecutionContext)) throw new TypeError("Failed to execute 'getQueueResult': parameter 2 is not of type 'ExecutionContext'.\nYou must call 'createExecutionContext()' to get an 'ExecutionContext' instance.");
  await waitOnExecutionContext(ctx);
  return {
    outcome: "ok",
    retryBatch: { retry: batch.retriedAll },
    ackAll: batch.ackedAll,
    retryMessages: batch.messages.filter((m) => m.retried).map((m) => ({ msgId: m.id })),
    explicitAcks: batch.messages.filter((m) => m.acked).map((m) => m.id),
  };
}

/** Runs handler `name` of the main module's default export (the runner's callMain) with a new context. */
async function callHandler(name, event) {
  const ctx = createExecutionContext();
  const result = await settings().callMain(name, event, env, ctx);
  return { result, ctx };
}

/**
 * `SELF`: the worker's default entrypoint (`exports.default`, a service binding to it, so its
 * requests and RPC calls go through the runtime as a real caller's would), with `scheduled()` and
 * `queue()`, which call the handlers in this isolate.
 */
const selfExtras = {
  async scheduled(options = {}) {
    const controller = createScheduledController(options);
    const { ctx } = await callHandler("scheduled", controller);
    await waitOnExecutionContext(ctx);
    return { outcome: "ok", noRetry: false };
  },
  async queue(queueName, messages) {
    const batch = createMessageBatch(queueName, messages);
    const { ctx } = await callHandler("queue", batch);
    return getQueueResult(batch, ctx);
  },
};

export const SELF = new Proxy(
  {},
  {
    get(_, key) {
      if (key in selfExtras) return selfExtras[key];
      // The stub's own members: each is callable as is (a stub's calls do not depend on `this`),
      // and a property read stays awaitable (binding it would make a plain function of it).
      return workerExports.default[key];
    },
  },
);

/** Applies D1 migrations not yet recorded in `table`, each with its record in one batch. */
export async function applyD1Migrations(db, migrations, table = "d1_migrations") {
  if (typeof db?.prepare !== "function" || typeof db?.batch !== "function") throw new TypeError("Failed to execute 'applyD1Migrations': parameter 1 is not of type 'D1Database'.");
  if (!Array.isArray(migrations) || !migrations.every((m) => typeof m?.name === "string" && Array.isArray(m.queries))) {
    throw new TypeError("Failed to execute 'applyD1Migrations': parameter 2 is not of type 'D1Migration[]'.");
  }
  const quoted = `"${String(table).replace(/"/g, '""')}"`;
  await db.prepare(`CREATE TABLE IF NOT EXISTS ${quoted} (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);`).run();
  const applied = new Set((await db.prepare(`SELECT name FROM ${quoted};`).all()).results.map((row) => row.name));
  const record = db.prepare(`INSERT INTO ${quoted} (name) VALUES (?);`);
  for (const migration of migrations) {
    if (applied.has(migration.name)) continue;
    await db.batch([...migration.queries.map((query) => db.prepare(query)), record.bind(migration.name)]);
  }
}

// ---- Durable Objects ---------------------------------------------------------------------------

let nextCallback = 1;

/** Sends object `stub` one of cloudflare:test's requests (answered by the runner's class wrapper). */
async function askObject(stub, what) {
  if (typeof stub?.fetch !== "function" || stub.id === undefined) throw new TypeError("Expected a Durable Object stub (from namespace.get())");
  const header = settings().testHeader;
  const response = await stub.fetch("http://workerbox-vitest/", { headers: { [header]: what } });
  // Only the worker under test's own classes answer (another worker's, by script_name, runs elsewhere).
  if (response.headers.get(header) !== "answered") {
    await response.body?.cancel();
    throw new TypeError("The Durable Object's class is not one of the worker under test's own (a class of another worker, by script_name, runs in that worker): runInDurableObject(), runDurableObjectAlarm() and evictDurableObject() need an object of a class the main module exports");
  }
  return response;
}

/** Runs `callback(instance, state)` inside the object, with its input gate held, and returns its result. */
export async function runInDurableObject(stub, callback) {
  if (typeof callback !== "function") throw new TypeError("Failed to execute 'runInDurableObject': parameter 2 is not of type 'function'.");
  const { durableCallbacks } = settings();
  const token = `run-${nextCallback++}`;
  const entry = { callback, result: undefined, error: undefined };
  durableCallbacks.set(token, entry);
  try {
    const response = await askObject(stub, token);
    if (response.status !== 204) throw new Error(`runInDurableObject: ${await response.text()}`);
  } finally {
    durableCallbacks.delete(token);
  }
  if (entry.error !== undefined) throw entry.error;
  return entry.result;
}

/** Runs the object's alarm now if one is set (and removes it); resolves to whether it ran. */
export async function runDurableObjectAlarm(stub) {
  const response = await askObject(stub, "alarm");
  return response.json();
}

async function hostCall(path, params) {
  const url = new URL(`http://vitest-host${path}`);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  const response = await env.__WORKERBOX_VITEST_HOST.fetch(url, { method: "POST" });
  if (!response.ok) throw new Error(await response.text());
  return response.json();
}

/** The ids of the namespace's objects that have stored something. */
export async function listDurableObjectIds(namespace) {
  const binding = Object.keys(env).find((name) => env[name] === namespace);
  if (binding === undefined) throw new TypeError("listDurableObjectIds: the namespace must be one of env's Durable Object bindings");
  const ids = await hostCall("/durable/ids", { binding });
  return ids.map((id) => namespace.idFromString(id));
}

/** Drops the object's live instance (its storage stays; its WebSockets stay, hibernated, unless `{ webSockets: "close" }`); the next request constructs it again. */
export async function evictDurableObject(stub, options = {}) {
  if (options?.webSockets !== undefined && options.webSockets !== "close" && options.webSockets !== "hibernate") {
    throw new TypeError(`evictDurableObject: options.webSockets must be "hibernate" or "close", got ${JSON.stringify(options.webSockets)}`);
  }
  const className = await (await askObject(stub, options?.webSockets === "close" ? "close-websockets" : "class")).text();
  await hostCall("/durable/evict", { className, id: stub.id.toString() });
}

/** env's Durable Object namespaces, by binding name. */
function durableNamespaces() {
  return Object.entries(env).filter(([, value]) => Object.prototype.toString.call(value) === "[object DurableObjectNamespace]");
}

/** Drops every live Durable Object instance (storage stays). */
export async function evictAllDurableObjects() {
  for (const [binding] of durableNamespaces()) await hostCall("/durable/evict-all", { binding });
}

/** As evictAllDurableObjects(): workerbox drops the instances (nothing is aborted mid-call). */
export const abortAllDurableObjects = evictAllDurableObjects;

async function clearKV(kv) {
  let cursor;
  do {
    const page = await kv.list({ cursor });
    await Promise.all(page.keys.map((key) => kv.delete(key.name)));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
}

async function clearR2(bucket) {
  let cursor;
  do {
    const page = await bucket.list({ cursor });
    if (page.objects.length > 0) await bucket.delete(page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}

async function clearD1(db) {
  const { results } = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all();
  if (results.length === 0) return;
  await db.batch([db.prepare("PRAGMA foreign_keys = OFF"), ...results.map(({ name }) => db.prepare(`DROP TABLE "${String(name).replace(/"/g, '""')}"`))]);
}

/** Deletes the data of every binding: KV, R2, D1 (its tables), Durable Objects (their storage), rate limiters. */
export async function reset() {
  await hostCall("/reset", {});
  for (const [name, value] of Object.entries(env)) {
    const tag = Object.prototype.toString.call(value);
    if (tag === "[object KvNamespace]" || tag === "[object KVNamespace]") await clearKV(value);
    else if (tag === "[object R2Bucket]") await clearR2(value);
    else if (tag === "[object D1Database]") await clearD1(value);
    else if (tag === "[object DurableObjectNamespace]") {
      for (const id of await listDurableObjectIds(value)) {
        await runInDurableObject(value.get(id), (_instance, state) => state.storage.deleteAll());
      }
      await hostCall("/durable/evict-all", { binding: name });
    }
  }
}

// ---- Workflows: introspectWorkflow(), introspectWorkflowInstance() ------------------------------
// Cloudflare's API over workerbox's engine: the modifications are recorded here and sent to the
// pool (lib/vitest/workflow-host.js), which applies them to the binding's instances.

async function workflowCall(operation, params) {
  const { codec } = settings();
  const response = await env.__WORKERBOX_VITEST_HOST.fetch(`http://vitest-host/workflow/${operation}`, { method: "POST", body: codec.serialize(params) });
  const answer = codec.deserialize(await response.text());
  if (!answer.ok) {
    const error = new Error(answer.error.message);
    if (answer.error.name !== "Error") error.name = answer.error.name;
    throw error;
  }
  return answer.value;
}

function workflowBindingName(workflow, what) {
  const name = workflow === null || workflow === undefined ? undefined : Object.keys(env).find((key) => env[key] === workflow);
  if (name === undefined || Object.prototype.toString.call(workflow) !== "[object Workflow]") {
    throw new TypeError(`[WorkflowIntrospector] ${what}: the first argument must be one of env's Workflow bindings (env.MY_WORKFLOW)`);
  }
  return name;
}

/** The modifier a modify() callback gets: records what it asks for. */
function workflowRecorder(operations) {
  return Object.freeze({
    disableSleeps: async (steps) => void operations.push({ type: "disableSleeps", steps }),
    disableRetryDelays: async (steps) => void operations.push({ type: "disableRetryDelays", steps }),
    mockStepResult: async (step, value) => {
      if (value instanceof ReadableStream) throw new TypeError("[WorkflowIntrospector] mockStepResult(): a ReadableStream result is not supported by workerbox (step results are structured clones)");
      operations.push({ type: "mockStepResult", step, value });
    },
    mockStepError: async (step, error, times) => void operations.push({ type: "mockStepError", step, error: { name: error?.name, message: error?.message }, times }),
    forceStepTimeout: async (step, times) => void operations.push({ type: "forceStepTimeout", step, times }),
    mockEvent: async (event) => void operations.push({ type: "mockEvent", event }),
    forceEventTimeout: async (step) => void operations.push({ type: "forceEventTimeout", step }),
  });
}

async function recordModifications(fn, what) {
  if (typeof fn !== "function") throw new TypeError(`[WorkflowIntrospector] ${what}: give a callback (m) => { … }`);
  const operations = [];
  await fn(workflowRecorder(operations));
  return operations;
}

class WorkflowInstanceIntrospector {
  #binding;
  #id;
  constructor(flag, binding, id) {
    if (flag !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#id = id;
  }
  async modify(fn) {
    await workflowCall("modify", { binding: this.#binding, id: this.#id, operations: await recordModifications(fn, "modify()") });
    return this;
  }
  waitForStepResult(step) {
    return workflowCall("stepResult", { binding: this.#binding, id: this.#id, step });
  }
  async waitForStatus(status) {
    await workflowCall("waitForStatus", { binding: this.#binding, id: this.#id, status });
  }
  getOutput() {
    return workflowCall("output", { binding: this.#binding, id: this.#id });
  }
  getError() {
    return workflowCall("error", { binding: this.#binding, id: this.#id });
  }
  dispose = async () => {
    await workflowCall("abort", { binding: this.#binding, id: this.#id });
  };
  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

class WorkflowIntrospector {
  #binding;
  #session;
  #instances = new Map();
  #disposed = false;
  constructor(flag, binding, session) {
    if (flag !== kConstruct) throw new TypeError("Illegal constructor");
    this.#binding = binding;
    this.#session = session;
  }
  async modifyAll(fn) {
    await workflowCall("modifyAll", { session: this.#session, operations: await recordModifications(fn, "modifyAll()") });
  }
  async get() {
    for (const id of await workflowCall("instances", { session: this.#session })) {
      if (!this.#instances.has(id)) this.#instances.set(id, new WorkflowInstanceIntrospector(kConstruct, this.#binding, id));
    }
    return [...this.#instances.values()];
  }
  dispose = async () => {
    if (this.#disposed) return;
    this.#disposed = true;
    await workflowCall("stop", { session: this.#session });
  };
  [Symbol.asyncDispose]() {
    return this.dispose();
  }
}

/** Changes and watches instance `instanceId` of a Workflow binding (it may be created later). */
export async function introspectWorkflowInstance(workflow, instanceId) {
  if (!workflow || !instanceId) throw new Error("[WorkflowIntrospector] Workflow binding and instance id are required.");
  return new WorkflowInstanceIntrospector(kConstruct, workflowBindingName(workflow, "introspectWorkflowInstance()"), String(instanceId));
}

/** Changes and watches every instance of a Workflow binding created from now until dispose(). */
export async function introspectWorkflow(workflow) {
  if (!workflow) throw new Error("[WorkflowIntrospector] Workflow binding is required.");
  const binding = workflowBindingName(workflow, "introspectWorkflow()");
  return new WorkflowIntrospector(kConstruct, binding, await workflowCall("start", { binding }));
}
