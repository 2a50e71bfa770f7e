// Several workers in one `workerbox dev` (-c … -c …) and across dev processes (lib/project/
// multi.js, registry.js), and tail workers (lib/tail/, src/js/89_tail.js): a gateway worker with two
// services (one through a named entrypoint) and a Durable Object living in another worker
// (script_name), driven by real HTTP requests; a reload of one worker leaves the other running;
// two separate dev processes find each other through the file registry (503 naming the worker
// before it starts, an answer after); a tail consumer receives trace items with logs and an
// exception.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { dev, tempRoot, until, writeWorker } from "./dev-processes.mjs";
import { CLI, spawnNode, scaled } from "./child-node.mjs";

const GATEWAY = `let hits = 0;
export default {
  async fetch(request, env) {
    hits++;
    const url = new URL(request.url);
    if (url.pathname === "/auth") return env.AUTH.fetch(request);
    if (url.pathname === "/api") return env.API.fetch(request);
    if (url.pathname === "/rpc") return new Response(String(await env.API.add(2, 3)));
    if (url.pathname === "/count") {
      const stub = env.COUNTER.get(env.COUNTER.idFromName("one"));
      return new Response(String(await stub.increment()));
    }
    if (url.pathname === "/hits") return new Response(String(hits));
    if (url.pathname === "/workflow") {
      const instance = await env.JOBS.create({ params: { n: 20 } });
      for (let i = 0; i < 200; i++) {
        const status = await instance.status();
        if (status.status === "complete") return Response.json(status.output);
        await new Promise((r) => setTimeout(r, 25));
      }
      return new Response("workflow did not finish", { status: 500 });
    }
    if (url.pathname === "/boom") {
      console.log("about to fail", 42);
      throw new Error("gateway exploded");
    }
    console.warn("served", url.pathname);
    return new Response("gateway");
  },
};
`;

const AUTH = `export default {
  fetch(request) {
    return new Response("auth says hi to " + new URL(request.url).pathname + " via " + request.headers.get("x-from"));
  },
};
`;

const API = (version) => `import { WorkerEntrypoint, DurableObject, WorkflowEntrypoint } from "cloudflare:workers";
export class Job extends WorkflowEntrypoint {
  async run(event, step) {
    const doubled = await step.do("double", async () => event.payload.n * 2);
    return { doubled, by: "api" };
  }
}
export class Api extends WorkerEntrypoint {
  fetch(request) {
    return new Response("api ${version} entrypoint at " + new URL(request.url).pathname);
  }
  add(a, b) {
    return a + b;
  }
}
export class Counter extends DurableObject {
  async increment() {
    const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    return n;
  }
}
export default {
  fetch() {
    return new Response("api default");
  },
};
`;

const TAILER = `const received = [];
export default {
  tail(events) {
    received.push(...events);
  },
  fetch() {
    return Response.json(received);
  },
};
`;

function projects(t) {
  const root = tempRoot(t, "workerbox-multi-");
  const gateway = writeWorker(root, "gateway", GATEWAY, {
    services: [
      { binding: "AUTH", service: "auth" },
      { binding: "API", service: "api", entrypoint: "Api" },
    ],
    durable_objects: { bindings: [{ name: "COUNTER", class_name: "Counter", script_name: "api" }] },
    tail_consumers: [{ service: "tailer" }],
    workflows: [{ name: "jobs", binding: "JOBS", class_name: "Job", script_name: "api" }],
  });
  const auth = writeWorker(root, "auth", AUTH);
  const api = writeWorker(root, "api", API("v1"), { migrations: [{ tag: "v1", new_sqlite_classes: ["Counter"] }], workflows: [{ name: "jobs", binding: "JOBS", class_name: "Job" }] });
  const tailer = writeWorker(root, "tailer", TAILER);
  const registry = path.join(root, "registry");
  return { root, gateway, auth, api, tailer, registry };
}

async function text(url, init) {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.text() };
}


test("workerbox dev -c gateway -c auth -c api -c tailer: services, entrypoint, RPC, a Durable Object of another worker, tail events", { timeout: scaled(180_000) }, async (t) => {
  const p = projects(t);
  const server = await dev(t, ["-c", p.gateway, "-c", p.auth, "-c", p.api, "-c", p.tailer], p.registry);
  assert.deepEqual(await text(new URL("/auth", server.url), { headers: { "x-from": "test" } }), { status: 200, body: "auth says hi to /auth via test" });
  assert.deepEqual(await text(new URL("/api", server.url)), { status: 200, body: "api v1 entrypoint at /api" });
  assert.deepEqual(await text(new URL("/rpc", server.url)), { status: 200, body: "5" });
  assert.deepEqual(await text(new URL("/count", server.url)), { status: 200, body: "1" });
  assert.deepEqual(await text(new URL("/count", server.url)), { status: 200, body: "2" });
  assert.deepEqual(await text(new URL("/workflow", server.url)), { status: 200, body: '{"doubled":40,"by":"api"}' });
  assert.equal((await text(new URL("/boom", server.url))).status, 500);
  assert.deepEqual(await text(new URL("/plain", server.url)), { status: 200, body: "gateway" });

  // The tailer's own port is printed; its fetch() shows what its tail() received.
  const tailerUrl = server.output().match(/tailer from .* on (http:\/\/\S+)/)[1];
  const items = await until("tail events", async () => {
    const list = await (await fetch(tailerUrl)).json();
    return list.some((i) => i.event?.request?.url?.endsWith("/plain")) && list;
  });
  const boom = items.find((i) => i.event.request.url.endsWith("/boom"));
  assert.equal(boom.scriptName, "gateway");
  assert.equal(boom.outcome, "exception");
  assert.equal(boom.event.request.method, "GET");
  assert.equal(typeof boom.eventTimestamp, "number");
  assert.deepEqual(boom.exceptions.map((e) => [e.name, e.message]), [["Error", "gateway exploded"]]);
  // As workerd's: the frames only, without the "Error: message" line; no response after a throw.
  assert.match(boom.exceptions[0].stack, /^\s+at /);
  assert.equal(boom.event.response, undefined);
  assert.equal(boom.logs.length, 1, JSON.stringify(boom.logs));
  assert.equal(boom.logs[0].level, "log");
  assert.deepEqual(boom.logs[0].message, ["about to fail", 42]);
  assert.deepEqual(boom.diagnosticsChannelEvents, []);
  const plain = items.find((i) => i.event.request.url.endsWith("/plain"));
  assert.equal(plain.outcome, "ok");
  assert.equal(plain.event.response.status, 200);
  assert.deepEqual(plain.exceptions, []);
  assert.equal(plain.logs[0].level, "warn");
  assert.deepEqual(plain.logs[0].message, ["served", "/plain"]);
});

test("a change to one worker reloads only it: the gateway keeps its module state, the api answers with its new code", { timeout: scaled(180_000) }, async (t) => {
  const p = projects(t);
  // State on disk (the api's .wrangler/state): its Durable Object's storage outlives its reload.
  const server = await dev(t, ["-c", p.gateway, "-c", p.auth, "-c", p.api, "-c", p.tailer], p.registry, { persist: true });
  assert.equal((await text(new URL("/api", server.url))).body, "api v1 entrypoint at /api");
  assert.equal((await text(new URL("/count", server.url))).body, "1");
  const before = Number((await text(new URL("/hits", server.url))).body);
  fs.writeFileSync(path.join(p.api, "src", "index.js"), API("v2"));
  await until("the api reload", async () => (await text(new URL("/api", server.url))).body === "api v2 entrypoint at /api");
  // The gateway was not restarted: its counter went on (the /api polls and this one).
  const after = Number((await text(new URL("/hits", server.url))).body);
  assert.ok(after > before + 1, `gateway hits ${before} -> ${after}`);
  assert.match(server.output(), /reloaded api/);
  assert.doesNotMatch(server.output(), /reloaded gateway/);
  // The Durable Object's storage outlived the api's reload: the file in the api's own state folder.
  assert.equal((await text(new URL("/count", server.url))).body, "2");
  const folder = fs.readdirSync(path.join(p.api, ".wrangler", "state", "v3", "do")).find((name) => name.endsWith("-Counter"));
  assert.ok(fs.readdirSync(path.join(p.api, ".wrangler", "state", "v3", "do", folder)).some((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite"));
});

test("two workerbox dev processes find each other through the registry: 503 naming the worker before it starts, its answer after (fetch, RPC, a Durable Object)", { timeout: scaled(180_000) }, async (t) => {
  const p = projects(t);
  const gateway = await dev(t, ["-c", p.gateway], p.registry);
  const missing = await text(new URL("/auth", gateway.url));
  assert.equal(missing.status, 503);
  assert.match(missing.body, /worker "auth" .*is not running/);
  const auth = await dev(t, ["-c", p.auth], p.registry);
  assert.ok(fs.existsSync(path.join(p.registry, "auth.json")));
  // The gateway's log says so (fs.watch on the registry folder).
  await until("the gateway noticing auth", () => /worker auth is running in another workerbox dev/.test(gateway.output()));
  // The original URL and headers reach the other process's worker.
  assert.deepEqual(await text(new URL("/auth?x=1", gateway.url), { headers: { "x-from": "the gateway's client" } }), { status: 200, body: "auth says hi to /auth via the gateway's client" });
  // A named entrypoint across processes: fetch() through the other server.
  const api = await dev(t, ["-c", p.api], p.registry);
  assert.deepEqual(await text(new URL("/api", gateway.url)), { status: 200, body: "api v1 entrypoint at /api" });
  // RPC across processes too (project-multi-registry.test.mjs covers the rest).
  assert.deepEqual(await text(new URL("/rpc", gateway.url)), { status: 200, body: "5" });
  // The Durable Object of the api process (script_name), through the gateway's binding.
  assert.deepEqual(await text(new URL("/count", gateway.url)), { status: 200, body: "1" });
  assert.deepEqual(await text(new URL("/count", gateway.url)), { status: 200, body: "2" });
  // When the auth process stops, its entry goes and the binding answers 503 again.
  auth.child.kill("SIGTERM");
  await auth.exited;
  assert.ok(!fs.existsSync(path.join(p.registry, "auth.json")));
  assert.equal((await text(new URL("/auth", gateway.url))).status, 503);
  void api;
});

test("loadProjects: several configs started together, bindings between them without a server", { timeout: scaled(120_000) }, async (t) => {
  const { loadProjects } = await import("workerbox/project");
  const { dispatch } = await import("workerbox");
  const p = projects(t);
  const group = await loadProjects([p.gateway, p.auth, p.api], { persistTo: false, registryDir: p.registry });
  assert.deepEqual(group.projects.map((project) => project.name), ["gateway", "auth", "api"]);
  const { workers, dispose } = await group.start();
  t.after(dispose);
  const get = async (pathname) => (await dispatch(workers.gateway, `http://example.com${pathname}`)).text();
  assert.equal(await get("/api"), "api v1 entrypoint at /api");
  assert.equal(await get("/rpc"), "5");
  assert.equal(await get("/count"), "1");
  assert.equal(await get("/count"), "2");
  assert.match(await get("/auth"), /^auth says hi to \/auth/);
  // A Workflow of another worker (script_name): the instance runs in the api worker.
  assert.deepEqual(JSON.parse(await get("/workflow")), { doubled: 40, by: "api" });
});

test("the registry ignores (and removes) the entry of a process that is gone, and an unregister leaves another server's entry", async (t) => {
  const registry = await import("../lib/project/registry.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-registry-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // A pid that is not running: a child that exited.
  const child = spawnNode(["-e", "0"]);
  await new Promise((resolve) => child.once("exit", resolve));
  fs.writeFileSync(path.join(dir, "ghost.json"), JSON.stringify({ name: "ghost", pid: child.pid, host: "127.0.0.1", port: 1 }));
  assert.equal(registry.lookup("ghost", dir), null);
  assert.ok(!fs.existsSync(path.join(dir, "ghost.json")));
  const off = registry.register("svc", { host: "127.0.0.1", port: 1111 }, dir);
  assert.equal(registry.lookup("svc", dir).port, 1111);
  // A second server under the same name takes over; the first one's unregister leaves it.
  const offSecond = registry.register("svc", { host: "127.0.0.1", port: 2222 }, dir);
  off();
  assert.equal(registry.lookup("svc", dir).port, 2222);
  assert.deepEqual(registry.list(dir).map((e) => e.name), ["svc"]);
  offSecond();
  assert.equal(registry.lookup("svc", dir), null);
});

test("createWorker's tailConsumers: a worker's tail() and a function in Node get each fetch's trace item", { timeout: scaled(60_000) }, async (t) => {
  const { createWorker, dispatch } = await import("workerbox");
  const tailer = await createWorker({
    script: `let got = [];
export default {
  tail(events) { got.push(...events); },
  fetch() { return Response.json(got); },
};`,
  });
  t.after(() => tailer.dispose());
  const inNode = [];
  const producer = await createWorker({
    script: `export default {
  fetch(request) {
    console.error("oops", new URL(request.url).pathname);
    if (request.method === "POST") throw new TypeError("no posts");
    return new Response("fine", { status: 201 });
  },
};`,
    tailConsumers: [tailer, (events) => inNode.push(...events)],
  });
  t.after(() => producer.dispose());
  assert.equal((await dispatch(producer, "http://example.com/a")).status, 201);
  await assert.rejects(dispatch(producer, new Request("http://example.com/b", { method: "POST", headers: { "x-k": "v" } })), /no posts/);
  await until("two items in Node", () => inNode.length === 2);
  const [a, b] = inNode;
  assert.deepEqual([a.outcome, a.event.request.method, a.event.request.url, a.event.response.status], ["ok", "GET", "http://example.com/a", 201]);
  assert.deepEqual(a.logs.map((l) => [l.level, l.message]), [["error", ["oops", "/a"]]]);
  assert.deepEqual([b.outcome, b.event.request.method, b.event.request.headers["x-k"], b.exceptions[0].name, b.exceptions[0].message], ["exception", "POST", "v", "TypeError", "no posts"]);
  const inWorker = await until("two items in the tail worker", async () => {
    const list = await (await dispatch(tailer, "http://tailer/")).json();
    return list.length === 2 && list;
  });
  assert.deepEqual(inWorker.map((i) => i.outcome), ["ok", "exception"]);
  await assert.rejects(createWorker({ script: "export default { fetch() {} }", tailConsumers: ["nope"] }), /tailConsumers must be an array of workers/);
});

test("bad multi-worker input: no configs, two configs of one name, -c with a project folder too", { timeout: scaled(60_000) }, async (t) => {
  const { startDevServers, loadProjects } = await import("workerbox/project");
  const p = projects(t);
  await assert.rejects(startDevServers([]), /pass one or more project folders or config files/);
  await assert.rejects(loadProjects([]), /pass one or more project folders or config files/);
  const twin = writeWorker(p.root, "twin", AUTH);
  fs.writeFileSync(path.join(twin, "wrangler.jsonc"), JSON.stringify({ name: "auth", main: "src/index.js", compatibility_date: "2025-06-01" }));
  await assert.rejects(startDevServers([p.auth, twin], { port: 0, persistTo: false, registryDir: p.registry }), /two configs name their worker "auth"/);
  const child = spawnNode([CLI, "dev", p.auth, "-c", p.api], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  const [code] = await new Promise((resolve) => child.once("exit", (...a) => resolve(a)));
  assert.equal(code, 2);
  assert.match(err, /give the project as -c .* too, or leave out -c/);
});
