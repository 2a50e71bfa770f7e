// The Vitest integration's runner: the main module of every test isolate. Vitest's own worker
// runtime (`vitest/worker`, loaded from the project by the host loader, lib/vitest/loader.js)
// runs here and talks to Vitest in Node over a WebSocket that the pool opens with one upgrade
// request; test files then come from Vite through Vitest's module runner. `cloudflare:test`
// (lib/vitest/cloudflare-test.mjs) finds the worker's env and main module through
// `globalThis.__workerboxVitest`. The Durable Object classes of the project's own bindings are
// supplied on demand (`__workerboxDurableClass`) from the main module as the tests load it, each
// wrapped to answer cloudflare:test's requests (runInDurableObject, runDurableObjectAlarm). Every
// other event (`exports.default.fetch()`, SELF) goes to the main module's default export.
import { WorkerEntrypoint } from "cloudflare:workers";
import { serialize, deserialize } from "./serialize.mjs";
import { Console } from "./console.mjs";
import { addRemoteOnlyBindings } from "./remote-bindings.mjs";
import workerProcess from "node:process";

// Vitest writes test output through node:console's Console over its own streams, which workerd's
// node:console cannot make; the runner's does (before Vitest's modules are linked, which happens
// in the first request: their top level sets timers, which global scope may not).
console.Console = Console;

/** What the host passed in the upgrade request's header: { cwd, main, token, stats }. */
let settings = { cwd: "/", main: undefined, token: undefined };
// The runner's modules are trusted (lib/vitest/runners.js): `process` here, and in Vitest's
// runtime, is the one lib/vitest/node-globals.mjs gives them, whatever the worker's flags.
process.cwd = () => settings.cwd;

/**
 * Whether the worker's own code may import `node:<name>`: the worker's process.getBuiltinModule
 * answers by the worker's compatibility date and flags, not by the runner's trust (node:module's
 * builtinModules is Node's fixed list, as in workerd, so it cannot tell).
 */
const workerBuiltin = (name) => typeof workerProcess?.getBuiltinModule === "function" && workerProcess.getBuiltinModule(`node:${name}`) !== undefined;

/**
 * Makes Vitest's module runner import a `node:` module for the tests and the worker's code only
 * when the worker's own flags give it, as workerd would: its imports come from Vitest's runtime,
 * a trusted module that could import any.
 */
function gateExternalImports(Evaluator) {
  const run = Evaluator.prototype.runExternalModule;
  if (typeof run !== "function" || run.workerboxGated) return;
  const gated = function runExternalModule(id) {
    const name = typeof id === "string" && id.startsWith("node:") ? id.slice(5) : undefined;
    if (name !== undefined && !workerBuiltin(name)) {
      return Promise.reject(new Error(`No such module "${id}": the worker's compatibility date and flags do not give it (workerd refuses the import too)`));
    }
    return run.call(this, id);
  };
  gated.workerboxGated = true;
  Evaluator.prototype.runExternalModule = gated;
}

// Vitest broadcasts between its own workers; a test isolate has none to reach.
globalThis.BroadcastChannel ??= class BroadcastChannel extends EventTarget {
  constructor(name) {
    super();
    this.name = name;
  }
  postMessage() {}
  close() {}
};

/** The header of cloudflare:test's requests to an object (see cloudflare-test.mjs). */
const TEST_HEADER = "x-workerbox-vitest";
/** Callbacks runInDurableObject() left for an object to run, by token. */
const durableCallbacks = new Map();
const kState = Symbol("state");

/** Answers a cloudflare:test request inside object `instance` (`state` its DurableObjectState). */
async function answerTestRequest(what, instance, state, className) {
  if (what === "class") return new Response(className);
  // evictDurableObject(stub, { webSockets: "close" }): its WebSockets are closed first.
  if (what === "close-websockets") {
    for (const socket of state.getWebSockets?.() ?? []) socket.close(1001, "Durable Object evicted");
    return new Response(className);
  }
  if (what === "alarm") {
    if ((await state.storage.getAlarm()) === null) return Response.json(false);
    await state.storage.deleteAlarm();
    await instance.alarm?.({ retryCount: 0, isRetry: false });
    return Response.json(true);
  }
  const entry = durableCallbacks.get(what);
  if (entry === undefined) return new Response(`no runInDurableObject() callback ${what}`, { status: 500 });
  try {
    entry.result = await entry.callback(instance, state);
  } catch (error) {
    entry.error = error;
  }
  return new Response(null, { status: 204 });
}

/**
 * The class `name` of the project's main module (imported through Vitest's module runner, so the
 * tests see the same class), wrapped so that it also answers cloudflare:test's requests.
 */
export async function __workerboxDurableClass(name) {
  if (!settings.main || !globalThis.__vitest_mocker__) return undefined;
  const UserClass = (await importMain())[name];
  if (typeof UserClass !== "function") return undefined;
  const Wrapped = class extends UserClass {
    constructor(state, env) {
      super(state, env);
      Object.defineProperty(this, kState, { value: state });
    }
    fetch(request) {
      const what = request.headers.get(TEST_HEADER);
      if (what !== null) {
        // Marked, so that cloudflare:test tells this answer from a class that is not wrapped (another worker's).
        return answerTestRequest(what, this, this[kState], name).then((response) => {
          response.headers.set(TEST_HEADER, "answered");
          return response;
        });
      }
      if (typeof super.fetch !== "function") throw new TypeError("The entrypoint has no fetch() handler.");
      return super.fetch(request);
    }
  };
  Object.defineProperty(Wrapped, "name", { value: UserClass.name });
  return Wrapped;
}

/**
 * The error for an RPC member a Durable Object or entrypoint of the project lacks, worded as
 * Cloudflare's pool words it for the classes it wraps (src/js/84_rpc.js asks): an instance
 * field is named as such; a name neither has, as not implemented. Undefined (the runtime's own
 * message, as workerd's) for anything else — an instance field shadowing a class member too.
 */
export function __workerboxMissingMember(receiver, name) {
  const wrapped = receiver !== null && typeof receiver === "object" && (kState in receiver || (receiver instanceof WorkerEntrypoint && !(receiver instanceof Runner)));
  if (!wrapped || Reflect.has(Object.getPrototypeOf(receiver), name)) return undefined;
  return Reflect.has(receiver, name) ? instanceOnly(name) : new TypeError(`The RPC receiver does not implement ${JSON.stringify(name)}.`);
}

/** Cloudflare's pool's error for an RPC member that only an instance has (a class field). */
function instanceOnly(name) {
  return new TypeError(
    `The RPC receiver's prototype does not implement ${JSON.stringify(name)}, but the receiver instance does.\n` +
      "Only properties and methods defined on the prototype can be accessed over RPC.\n" +
      `Ensure properties are declared like \`get ${name}() { ... }\` instead of \`${name} = ...\`,\n` +
      `and methods are declared like \`${name}() { ... }\` instead of \`${name} = () => { ... }\`.`,
  );
}

/** The Workflow class `name` of the project's main module (as the tests load it), for runs of its instances. */
export async function __workerboxWorkflowClass(name) {
  if (!settings.main || !globalThis.__vitest_mocker__) return undefined;
  const Class = (await importMain())[name];
  return typeof Class === "function" ? Class : undefined;
}

/** Keys of ctx.exports read by tools that inspect objects (no warning when they are missing). */
const INSPECTED = new Set(["then", "toJSON", "constructor", "asymmetricMatch", "$$typeof", "nodeType", "tagName", "@@__IMMUTABLE_ITERABLE__@@", "@@__IMMUTABLE_RECORD__@@", "_isMockFunction", "__proto__"]);

/**
 * The worker's `ctx.exports` (and `exports` of cloudflare:workers), asked for by the runtime with
 * the runner's own (`own`: its default entrypoint) and the means to make bindings to this
 * worker's entrypoints and Durable Object classes: the names the host guessed from the worker's
 * main module and configuration (lib/vitest/exports.js). A name the guess missed reads as
 * undefined, with the warning Cloudflare's pool gives.
 */
export function __workerboxExports(own, make) {
  const made = new Map();
  const guessed = () => settings.exports ?? {};
  const lookup = (key) => {
    if (typeof key !== "string") return undefined;
    if (Object.hasOwn(own, key)) return own[key];
    const kind = guessed()[key];
    if (kind === undefined) return undefined;
    if (!made.has(key)) made.set(key, kind === "durable" ? make.durable(key) : make.entrypoint(key));
    return made.get(key);
  };
  const names = () => [...new Set([...Object.keys(own), ...Object.keys(guessed())])];
  return new Proxy(
    {},
    {
      get(_, key) {
        const value = lookup(key);
        if (value === undefined && typeof key === "string" && !INSPECTED.has(key)) {
          console.warn(
            `Attempted to access 'ctx.exports.${key}', which was not defined for the main Worker.\n` +
              `Check that '${key}' is exported as an entry-point from the Worker.\n` +
              "The 'workerbox/vitest' integration tries to infer these exports by analyzing the source code of the main Worker.\n",
          );
        }
        return value;
      },
      has: (_, key) => names().includes(key),
      ownKeys: () => names(),
      getOwnPropertyDescriptor: (_, key) => (names().includes(key) ? { value: lookup(key), writable: false, enumerable: true, configurable: true } : undefined),
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    },
  );
}

/** A named entrypoint of the worker's main module, for calls through ctx.exports or a binding. */
export async function __workerboxEntrypoint(name) {
  if (!settings.main || !globalThis.__vitest_mocker__ || name === "default") return undefined;
  return (await importMain())[name];
}

/** The project's main module, through Vitest's module runner (the instance the tests import). */
async function importMain() {
  if (!settings.main) throw new Error("workerbox/vitest: the worker has no main module: set `main` in the wrangler configuration or in cloudflareTest({ main })");
  const mocker = globalThis.__vitest_mocker__;
  if (!mocker) throw new Error("workerbox/vitest: the worker's main module is loaded by Vitest's module runner, which is not running");
  return mocker.moduleRunner.import(settings.main);
}

/** Runs handler `name` of the main module's default export (an object or a WorkerEntrypoint). */
async function callMain(name, event, env, ctx) {
  const entry = (await importMain()).default;
  if (typeof entry === "function") {
    const instance = new entry(ctx, env);
    if (typeof instance[name] !== "function") throw new TypeError(`The worker's default export has no ${name}() handler.`);
    return instance[name](event);
  }
  if (typeof entry?.[name] !== "function") throw new TypeError(`The worker's default export has no ${name}() handler.`);
  return entry[name](event, env, ctx);
}

/**
 * The wrangler file's `define` replacements as globals (`A.B.C` as a property path), each value
 * evaluated once, as Cloudflare's pool sets them: every use of a name sees the same value.
 */
function applyDefines(defines) {
  for (const [key, expression] of Object.entries(defines)) {
    let value;
    try {
      value = new Function(`return (${expression});`)();
    } catch (error) {
      throw new SyntaxError(`workerbox/vitest: the wrangler file's define ${key} is not a JavaScript expression (${error.message}): ${expression}`);
    }
    const segments = key.split(".");
    let target = globalThis;
    for (const segment of segments.slice(0, -1)) target = target[segment] ??= {};
    target[segments.at(-1)] = value;
  }
}

/**
 * The pool's connection, made at the top level so that it belongs to no request: Vitest's
 * messages go out from whichever event is running (a test's SELF request, a Durable Object's
 * call), as they do from Cloudflare's runner, a Durable Object whose I/O is the object's.
 */
const connection = new WebSocketPair();
/** The runner's end of the connection, once Vitest is started on it. */
let poolSocket = null;
/** callPool() calls waiting for the pool's answer, by id. */
const poolCalls = new Map();
let lastPoolCall = 0;

/**
 * Calls `method` of the pool's runner in Node (lib/vitest/runners.js `calls`) with `args`, on the
 * connection Vitest talks over: isolatedStorage's marks, asked twice a test.
 */
function callPool(method, ...args) {
  if (poolSocket === null) return Promise.reject(new Error("the runner's connection to the pool is not open"));
  const id = ++lastPoolCall;
  return new Promise((resolve, reject) => {
    poolCalls.set(id, { resolve, reject });
    poolSocket.send(serialize({ poolCall: id, method, args }));
  });
}

function answered({ poolAnswer, value, error }) {
  const call = poolCalls.get(poolAnswer);
  poolCalls.delete(poolAnswer);
  if (error !== undefined) call?.reject(new Error(error));
  else call?.resolve(value);
}

/** Starts Vitest's worker runtime on a WebSocket to the pool. */
async function startVitest(request, env) {
  settings = JSON.parse(request.headers.get("x-workerbox-vitest"));
  addRemoteOnlyBindings(env, settings.remoteOnly);
  applyDefines(settings.defines ?? {});
  globalThis.__workerboxVitest = { env, main: settings.main, cwd: settings.cwd, durableCallbacks, testHeader: TEST_HEADER, callMain, codec: { serialize, deserialize }, isolatedStorage: settings.isolatedStorage === true, callPool };
  const importing = performance.now();
  const { init, runBaseTests, setupEnvironment } = await import("workerbox-vitest:worker");
  gateExternalImports((await import("workerbox-vitest:module-evaluator")).VitestModuleEvaluator);
  // With WORKERBOX_VITEST_STATS, the host records how long Vitest's runtime took to import here.
  const importMs = performance.now() - importing;
  const [client, server] = [connection[0], connection[1]];
  server.accept();
  // One listener: the pool's answers to callPool() are taken out, the rest go to Vitest.
  const listeners = [];
  server.addEventListener("message", (event) => {
    const message = deserialize(event.data);
    if (message !== null && typeof message === "object" && message.poolAnswer !== undefined) return answered(message);
    for (const callback of listeners) callback(message);
  });
  // Calls still waiting when the connection ends get no answer: they fail instead of hanging.
  server.addEventListener("close", () => {
    poolSocket = null;
    for (const [id, call] of poolCalls) (poolCalls.delete(id), call.reject(new Error("the runner's connection to the pool closed")));
  });
  poolSocket = server;
  init({
    post: (response) => server.send(serialize(response)),
    on: (callback) => listeners.push(callback),
    runTests: (state, traces) => runBaseTests("run", state, traces),
    collectTests: (state, traces) => runBaseTests("collect", state, traces),
    setup: setupEnvironment,
  });
  return new Response(null, { status: 101, webSocket: client, headers: settings.stats ? { "x-workerbox-vitest-import-ms": String(importMs) } : {} });
}

/** Names never forwarded as RPC methods of the main module's entrypoint (thenables, etc.). */
const NOT_RPC = new Set(["then", "catch", "finally", "constructor", "toJSON", "fetch", "scheduled", "queue", "ctx", "env"]);

/**
 * The worker's default entrypoint: the pool's upgrade request (carrying the pool's token) starts
 * Vitest; everything else — requests, cron and queue events, RPC calls — goes to the main
 * module's default export, so `exports.default` reaches the worker under test.
 */
class Runner extends WorkerEntrypoint {
  fetch(request) {
    const header = request.headers.get("x-workerbox-vitest");
    if (header !== null && request.headers.get("upgrade") === "websocket" && JSON.parse(header).token === this.env.__WORKERBOX_VITEST_TOKEN) return startVitest(request, this.env);
    return callMain("fetch", request, this.env, this.ctx);
  }
  scheduled(controller) {
    // An RPC call `exports.default.scheduled(options)` (options, not a controller).
    if (settings.extraHandlers && typeof controller?.noRetry !== "function") return extraHandler("scheduled", controller);
    return callMain("scheduled", controller, this.env, this.ctx);
  }
  queue(batch, messages) {
    // An RPC call `exports.default.queue(queueName, messages)`.
    if (settings.extraHandlers && typeof batch === "string") return extraHandler("queue", batch, messages);
    return callMain("queue", batch, this.env, this.ctx);
  }
}

/**
 * service_binding_extra_handlers: a service binding's `scheduled(options)` and
 * `queue(queueName, messages)` run the handler with a new controller or batch and execution
 * context, wait for its waitUntil() promises, and resolve to the outcome ({ outcome, noRetry } /
 * the queue result), as cloudflare:test's SELF does (the module the tests import, through
 * Vitest's module runner).
 */
async function extraHandler(name, ...args) {
  const mocker = globalThis.__vitest_mocker__;
  if (!mocker) throw new Error(`workerbox/vitest: ${name}() needs Vitest's module runner, which is not running`);
  const { SELF } = await mocker.moduleRunner.import("cloudflare:test");
  try {
    return await SELF[name](...args);
  } catch (error) {
    // The handler threw (or a waitUntil() promise rejected): the outcome says so, as workerd's.
    console.error(error);
    if (name === "scheduled") return { outcome: "exception", noRetry: false };
    return { outcome: "exception", retryBatch: { retry: false }, ackAll: false, retryMessages: [], explicitAcks: [] };
  }
}
/**
 * Member `key` of a new instance of the main module's default entrypoint, as Cloudflare's pool
 * reads it for `exports.default`: class members only, with its messages for an instance field and
 * for a name the class lacks.
 */
async function mainMember(runner, key) {
  const entry = (await importMain()).default;
  if (typeof entry !== "function") throw new TypeError(`The RPC receiver does not implement the method "${key}".`);
  const instance = new entry(runner.ctx, runner.env);
  for (let proto = Object.getPrototypeOf(instance); proto !== null && proto !== Object.prototype && proto !== WorkerEntrypoint.prototype; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, key)) return { instance, value: instance[key] };
  }
  if (Object.hasOwn(instance, key)) throw instanceOnly(key);
  throw new TypeError(`The RPC receiver does not implement "${key}".`);
}

/**
 * What the Runner answers for RPC member `key` (of the Runner instance `runner`): a function that
 * calls the main module's method, and that is also a thenable resolving to the member's value, so
 * that both `await exports.default.method()` and `await exports.default.property` reach the
 * main module's entrypoint (the runtime calls the one, and resolves the other).
 */
function forwarder(runner, key) {
  const call = async (...args) => {
    const { instance, value } = await mainMember(runner, key);
    if (typeof value !== "function") throw new TypeError(`The RPC receiver does not implement the method "${key}".`);
    return value.apply(instance, args);
  };
  call.then = (resolve, reject) => mainMember(runner, key).then(({ value }) => value).then(resolve, reject);
  return call;
}
const forwarded = (key) => typeof key === "string" && !NOT_RPC.has(key);

// Unknown members of the Runner's prototype are forwarders: the runtime finds RPC members on the
// prototype chain (own properties of each prototype), then reads them through the instance.
Object.setPrototypeOf(
  Runner.prototype,
  new Proxy(Object.create(WorkerEntrypoint.prototype), {
    get(target, key, receiver) {
      if (!forwarded(key) || key in target || !(receiver instanceof Runner)) return Reflect.get(target, key, receiver);
      return forwarder(receiver, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (!forwarded(key) || key in target) return Reflect.getOwnPropertyDescriptor(target, key);
      return { value: undefined, writable: false, enumerable: false, configurable: true };
    },
  }),
);

export default Runner;
