// The Vitest integration's runner: the main module of every test isolate. Vitest's own worker
// runtime (`vitest/worker`, loaded from the project by the host loader, lib/vitest/loader.js)
// runs here and talks to Vitest in Node over a WebSocket that the pool opens with one upgrade
// request; test files then come from Vite through Vitest's module runner. `cloudflare:test`
// (lib/vitest/cloudflare-test.mjs) finds the worker's env and main module through
// `globalThis.__workerboxVitest`. The Durable Object classes of the project's own bindings are
// supplied on demand (`__workerboxDurableClass`) from the main module as the tests load it, each
// wrapped to answer cloudflare:test's requests (runInDurableObject, runDurableObjectAlarm).
import { serialize, deserialize } from "./serialize.mjs";
import { Console } from "./console.mjs";

// Vitest writes test output through node:console's Console over its own streams, which workerd's
// node:console cannot make; the runner's does (before Vitest's modules are linked, which happens
// in the first request: their top level sets timers, which global scope may not).
console.Console = Console;

/** What the host passed in the upgrade request's header: { cwd, main }. */
let settings = { cwd: "/", main: undefined };
process.cwd = () => settings.cwd;

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
  const mocker = globalThis.__vitest_mocker__;
  if (!settings.main || !mocker) return undefined;
  const UserClass = (await mocker.moduleRunner.import(settings.main))[name];
  if (typeof UserClass !== "function") return undefined;
  const Wrapped = class extends UserClass {
    constructor(state, env) {
      super(state, env);
      Object.defineProperty(this, kState, { value: state });
    }
    fetch(request) {
      const what = request.headers.get(TEST_HEADER);
      if (what !== null) return answerTestRequest(what, this, this[kState], name);
      if (typeof super.fetch !== "function") throw new TypeError("The entrypoint has no fetch() handler.");
      return super.fetch(request);
    }
  };
  Object.defineProperty(Wrapped, "name", { value: UserClass.name });
  return Wrapped;
}

export default {
  async fetch(request, env) {
    if (request.headers.get("upgrade") !== "websocket") return new Response("the Vitest runner expects a WebSocket", { status: 426 });
    settings = JSON.parse(request.headers.get("x-workerbox-vitest") ?? "{}");
    globalThis.__workerboxVitest = { env, main: settings.main, cwd: settings.cwd, durableCallbacks, testHeader: TEST_HEADER };
    const { init, runBaseTests, setupEnvironment } = await import("workerbox-vitest:worker");
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    server.accept();
    init({
      post: (response) => server.send(serialize(response)),
      on: (callback) => server.addEventListener("message", (event) => callback(deserialize(event.data))),
      runTests: (state, traces) => runBaseTests("run", state, traces),
      collectTests: (state, traces) => runBaseTests("collect", state, traces),
      setup: setupEnvironment,
    });
    return new Response(null, { status: 101, webSocket: client });
  },
};
