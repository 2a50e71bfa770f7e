// Separate `workerbox dev` processes reaching each other through the file registry
// (lib/project/registry.js, multi.js): a gateway worker in one process, and in others the
// workers it binds to — a service with a named entrypoint (fetch, RPC methods, a property get),
// a Durable Object class (script_name: idFromName/get, RPC and fetch on the stub), a Workflow
// (script_name: create, status until complete, sendEvent to an instance waiting for it) and a
// tail consumer (trace items posted to it), and service_binding_extra_handlers' scheduled().
// Before a worker starts, calls name it (503 for fetch, a thrown Error for RPC); they connect
// when it starts. What cannot cross a process (functions passed or returned) is a clear error,
// as is an entrypoint or Durable Object class the running worker does not export.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { dev, tempRoot, until, writeWorker } from "./dev-processes.mjs";

import { scaled } from "./child-node.mjs";
const GATEWAY = `export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const attempt = async (fn) => {
      try {
        return new Response(String(await fn()));
      } catch (error) {
        return new Response(error.name + ": " + error.message, { status: 500 });
      }
    };
    switch (url.pathname) {
      case "/api": return env.API.fetch(request);
      case "/rpc": return attempt(() => env.API.add(2, 3));
      case "/rpc-object": return attempt(async () => JSON.stringify(await env.API.echo({ list: [1, 2], when: new Date(0), bytes: new Uint8Array([7, 8]) })));
      case "/rpc-get": return attempt(() => env.API.version);
      case "/rpc-throws": return attempt(() => env.API.fail());
      case "/rpc-pass-fn": return attempt(() => env.API.callBack((x) => x * 2));
      case "/rpc-return-fn": return attempt(() => env.API.giveFunction());
      case "/count": return attempt(() => env.COUNTER.get(env.COUNTER.idFromName(url.searchParams.get("name") ?? "one")).increment());
      case "/rpc-no-entrypoint": return attempt(() => env.NOPE.add(1, 2));
      case "/count-no-class": return attempt(() => env.GHOST.get(env.GHOST.idFromName("x")).increment());
      case "/scheduled": return attempt(async () => JSON.stringify(await env.API_DEFAULT.scheduled({ cron: "*/5 * * * *" })));
      case "/scheduled-count": return env.API_DEFAULT.fetch("http://api/scheduled-count");
      case "/count-fetch": return env.COUNTER.get(env.COUNTER.idFromName("one")).fetch("http://do/peek");
      case "/flow": {
        const instance = await env.FLOW.create({ id: url.searchParams.get("id"), params: { n: 21 } });
        return Response.json({ id: instance.id });
      }
      case "/flow-status": return attempt(async () => JSON.stringify(await (await env.FLOW.get(url.searchParams.get("id"))).status()));
      case "/flow-event": return attempt(async () => {
        await (await env.FLOW.get(url.searchParams.get("id"))).sendEvent({ type: "approval", payload: { ok: true } });
        return "sent";
      });
    }
    console.log("gateway served", url.pathname, { n: 1 });
    return new Response("gateway");
  },
};
`;

const API = `import { WorkerEntrypoint, DurableObject, WorkflowEntrypoint } from "cloudflare:workers";
export class Api extends WorkerEntrypoint {
  fetch(request) { return new Response("api entrypoint at " + new URL(request.url).pathname); }
  add(a, b) { return a + b; }
  echo(value) { return { got: value, isDate: value.when instanceof Date, bytes: [...value.bytes] }; }
  get version() { return "v1"; }
  fail() { throw new RangeError("api refuses"); }
  callBack(fn) { return fn(21); }
  giveFunction() { return () => 1; }
}
export class Counter extends DurableObject {
  async increment() {
    const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
  async fetch() { return new Response("counter at " + ((await this.ctx.storage.get("n")) ?? 0)); }
}
export class Flow extends WorkflowEntrypoint {
  async run(event, step) {
    const doubled = await step.do("double", async () => event.payload.n * 2);
    const approval = await step.waitForEvent("wait for approval", { type: "approval", timeout: "1 minute" });
    return { doubled, approved: approval.payload.ok };
  }
}
let scheduledRuns = [];
export default {
  fetch(request) {
    if (new URL(request.url).pathname === "/scheduled-count") return Response.json(scheduledRuns);
    return new Response("api default");
  },
  scheduled(controller) { scheduledRuns.push(controller.cron); },
};
`;

const TAILER = `const received = [];
export default {
  tail(events) { received.push(...events); },
  fetch() { return Response.json(received); },
};
`;

async function text(url) {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}


test("separate dev processes: RPC, a Durable Object, a Workflow and a tail consumer of other processes, through the registry", { timeout: scaled(240_000) }, async (t) => {
  const root = tempRoot(t, "workerbox-registry-");
  const registry = path.join(root, "registry");
  const gatewayDir = writeWorker(root, "gateway", GATEWAY, {
    compatibility_flags: ["service_binding_extra_handlers"],
    services: [
      { binding: "API", service: "api", entrypoint: "Api" },
      { binding: "NOPE", service: "api", entrypoint: "Nope" },
      { binding: "API_DEFAULT", service: "api" },
    ],
    durable_objects: {
      bindings: [
        { name: "COUNTER", class_name: "Counter", script_name: "api" },
        { name: "GHOST", class_name: "Ghost", script_name: "api" },
      ],
    },
    workflows: [{ name: "flow", binding: "FLOW", class_name: "Flow", script_name: "api" }],
    tail_consumers: [{ service: "tailer" }],
  });
  const apiDir = writeWorker(root, "api", API, { migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }], workflows: [{ name: "flow", binding: "FLOW", class_name: "Flow" }] });
  const tailerDir = writeWorker(root, "tailer", TAILER);
  const gateway = await dev(t, ["-c", gatewayDir], registry);
  const url = (p) => new URL(p, gateway.url);

  // Not running yet: fetch answers 503, RPC, Durable Object and Workflow calls throw, all naming it.
  const missingFetch = await text(url("/api"));
  assert.equal(missingFetch.status, 503);
  assert.match(missingFetch.body, /worker "api" \(service binding API of gateway, entrypoint Api\) is not running/);
  for (const route of ["/rpc", "/count", "/flow-status?id=x"]) {
    const missing = await text(url(route));
    assert.equal(missing.status, 500, route);
    assert.match(missing.body, /^Error: workerbox: worker "api" \(.*\) is not running/, route);
  }

  // It starts in a process of its own: the same bindings connect.
  await dev(t, ["-c", apiDir], registry);
  assert.deepEqual(await text(url("/api")), { status: 200, body: "api entrypoint at /api" });
  assert.deepEqual(await text(url("/rpc")), { status: 200, body: "5" });
  assert.deepEqual(JSON.parse((await text(url("/rpc-object"))).body), { got: { list: [1, 2], when: "1970-01-01T00:00:00.000Z", bytes: { 0: 7, 1: 8 } }, isDate: true, bytes: [7, 8] });
  assert.deepEqual(await text(url("/rpc-get")), { status: 200, body: "v1" });
  // An error thrown there keeps its kind and message.
  assert.deepEqual(await text(url("/rpc-throws")), { status: 500, body: "RangeError: api refuses" });
  // What cannot cross a process: a clear error, each way.
  const passFn = await text(url("/rpc-pass-fn"));
  assert.equal(passFn.status, 500);
  assert.match(passFn.body, /^TypeError: .*functions, RpcTargets and RPC stubs cannot be passed between processes/);
  const returnFn = await text(url("/rpc-return-fn"));
  assert.equal(returnFn.status, 500);
  assert.match(returnFn.body, /^TypeError: .*returned a function, RpcTarget or RPC stub, which cannot cross between workerbox dev processes/);

  // A running worker without that entrypoint or Durable Object class: the error says so.
  const noEntrypoint = await text(url("/rpc-no-entrypoint"));
  assert.equal(noEntrypoint.status, 500);
  assert.equal(noEntrypoint.body, 'TypeError: The worker has no entrypoint named "Nope".');
  const noClass = await text(url("/count-no-class"));
  assert.equal(noClass.status, 500);
  assert.equal(noClass.body, 'TypeError: The worker exports no Durable Object class named "Ghost".');
  // service_binding_extra_handlers: scheduled() runs the other process's handler.
  assert.deepEqual(JSON.parse((await text(url("/scheduled"))).body), { outcome: "ok", noRetry: false });
  assert.deepEqual(JSON.parse((await text(url("/scheduled-count"))).body), ["*/5 * * * *"]);

  // The Durable Object lives in the api process: RPC and fetch on the stub, state kept between calls.
  assert.deepEqual(await text(url("/count")), { status: 200, body: "1" });
  assert.deepEqual(await text(url("/count")), { status: 200, body: "2" });
  assert.deepEqual(await text(url("/count?name=two")), { status: 200, body: "1" });
  assert.deepEqual(await text(url("/count-fetch")), { status: 200, body: "counter at 2" });

  // The Workflow runs in the api process: create, wait for it to ask for its event, send it, complete.
  assert.deepEqual(JSON.parse((await text(url("/flow?id=order-1"))).body), { id: "order-1" });
  await until("the instance waiting for its event", async () => JSON.parse((await text(url("/flow-status?id=order-1"))).body).status === "waiting");
  assert.deepEqual(await text(url("/flow-event?id=order-1")), { status: 200, body: "sent" });
  const done = await until("the instance completing", async () => {
    const status = JSON.parse((await text(url("/flow-status?id=order-1"))).body);
    return status.status === "complete" && status;
  });
  assert.deepEqual(done.output, { doubled: 42, approved: true });

  // A tail consumer in a third process gets the gateway's trace items.
  const tailer = await dev(t, ["-c", tailerDir], registry);
  assert.deepEqual(await text(url("/plain")), { status: 200, body: "gateway" });
  const items = await until("the trace item", async () => {
    const list = await (await fetch(tailer.url)).json();
    return list.find((i) => i.event?.request?.url?.endsWith("/plain"));
  });
  assert.equal(items.scriptName, "gateway");
  assert.equal(items.outcome, "ok");
  assert.equal(items.event.response.status, 200);
  assert.deepEqual(items.logs.map((l) => [l.level, l.message]), [["log", ["gateway served", "/plain", { n: 1 }]]]);
});

test("a worker that stops: its bindings throw naming it again, and the dev log says so", { timeout: scaled(180_000) }, async (t) => {
  const root = tempRoot(t, "workerbox-registry-");
  const registry = path.join(root, "registry");
  const gatewayDir = writeWorker(root, "gateway", GATEWAY, { services: [{ binding: "API", service: "api", entrypoint: "Api" }] });
  const apiDir = writeWorker(root, "api", API, { migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }] });
  const api = await dev(t, ["-c", apiDir], registry);
  const gateway = await dev(t, ["-c", gatewayDir], registry);
  assert.deepEqual(await text(new URL("/rpc", gateway.url)), { status: 200, body: "5" });
  await api.stop();
  await until("the gateway noticing", () => /worker api stopped/.test(gateway.output()));
  const after = await text(new URL("/rpc", gateway.url));
  assert.equal(after.status, 500);
  assert.match(after.body, /worker "api" .* is not running/);
});
