// The Vitest integration's runner: the main module of every test isolate. Vitest's own worker
// runtime (`vitest/worker`, loaded from the project by the host loader, lib/vitest/loader.js)
// runs here and talks to Vitest in Node over a WebSocket that the pool opens with one upgrade
// request; test files then come from Vite through Vitest's module runner. `cloudflare:test`
// (lib/vitest/cloudflare-test.mjs) finds the worker's env and main module through
// `globalThis.__workerboxVitest`.
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

export default {
  async fetch(request, env) {
    if (request.headers.get("upgrade") !== "websocket") return new Response("the Vitest runner expects a WebSocket", { status: 426 });
    settings = JSON.parse(request.headers.get("x-workerbox-vitest") ?? "{}");
    globalThis.__workerboxVitest = { env, main: settings.main, cwd: settings.cwd };
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
