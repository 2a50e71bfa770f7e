"use strict";
// Several workers in one dev server, and dev servers finding each other. `startDevServers(targets,
// options)` starts one dev server (dev.js) per config: the first on the port asked for, the
// others on free loopback ports; each rebuilds and reloads on its own files only. Bindings
// between them are resolved at call time (peers()): a service binding (with its `entrypoint`)
// goes to the named worker's current generation, a Durable Object binding with `script_name` to
// that worker's namespace (same storage folder), a Workflow with `script_name` to that worker's
// workflow, and `tail_consumers` get each invocation's trace item (lib/tail/), and
// `streaming_tail_consumers` its events (lib/tail/stream.js). A worker of another
// `workerbox dev` process is found through the file registry (registry.js) and reached over
// loopback: fetch() as an HTTP request to its server, and RPC methods, Durable Object calls,
// Workflow calls and trace items as binding calls (registry.call(), answered by
// answerForwarded() there) carrying V8-serialized values. One running nowhere answers 503 (a
// fetch) or throws (anything else), naming it, until it starts.

const path = require("node:path");
const registry = require("./registry.js");
const { tailed } = require("../tail/index.js");

/** Request headers that carry a forwarded call between dev servers. */
const TARGET = "x-workerbox-dev-target";
const ORIGINAL_URL = "x-workerbox-dev-url";
const ENTRYPOINT = "x-workerbox-dev-entrypoint";

const text503 = (message) => new Response(`${message}\n`, { status: 503, headers: { "content-type": "text/plain; charset=utf-8" } });

const isLoopback = (address) => address === "127.0.0.1" || address === "::1" || address === "::ffff:127.0.0.1";

/**
 * The bindings to other workers for the projects of one process. `local(name)` gives the dev
 * server entry `{ server, project }` of a worker served here, or undefined.
 */
function makePeers(local, registryDir) {
  // Loaded on first use: the dev server starts bundling before the runtime loads.
  const api = () => require("../api.js");
  const rpc = () => require("../rpc.js");

  /** Forwards a request to worker `name` in another dev process (registry entry `entry`). */
  const forward = async (name, entry, entrypoint, request) => {
    const headers = new Headers(request.headers);
    headers.set(TARGET, name);
    headers.set(ORIGINAL_URL, request.url);
    if (entrypoint) headers.set(ENTRYPOINT, entrypoint);
    const host = entry.host.includes(":") ? `[${entry.host}]` : entry.host;
    const url = new URL(request.url);
    let response;
    try {
      response = await fetch(`http://${host}:${entry.port}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.body,
        redirect: "manual",
        ...(request.body ? { duplex: "half" } : {}),
      });
    } catch (error) {
      return text503(`workerbox: worker ${JSON.stringify(name)} (registered by pid ${entry.pid} on port ${entry.port}) did not answer: ${error.cause?.message ?? error.message}`);
    }
    // Node's fetch decoded a compressed body: the headers must not say it still is.
    const out = new Headers(response.headers);
    if (out.has("content-encoding")) {
      out.delete("content-encoding");
      out.delete("content-length");
    }
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: out });
  };

  const notRunning = (name, what, here = local(name)) =>
    `workerbox: worker ${JSON.stringify(name)} (${what}) ${here ? "is not running (it failed to start; fix it and save)" : "is not running (start it with workerbox dev, or pass its config with another -c)"}`;

  /**
   * A binding call (`binding`: { kind, … }) to worker `name` in another dev process: its answer
   * ({ json, bytes }) as the call would have answered here. Functions, RpcTargets and stubs
   * cannot cross a process (they would need a connection kept to the other process).
   */
  const remoteCall = async (name, what, binding, method, args, bytes) => {
    const entry = registry.lookup(name, registryDir);
    if (!entry || entry.pid === process.pid) throw new Error(notRunning(name, what));
    if ((args?.stubs ?? []).length > 0) {
      throw new TypeError(`workerbox: ${what}: worker ${JSON.stringify(name)} runs in another workerbox dev process (pid ${entry.pid}), and functions, RpcTargets and RPC stubs cannot be passed between processes (only structured-clonable values; or serve both workers from one dev server: workerbox dev -c … -c …)`);
    }
    const { head, bytes: out } = await registry.call(entry, name, { binding, method, args }, bytes);
    if (head.thrown) throw rpc().remoteError(head.thrown);
    return { json: head.json, bytes: out ?? undefined };
  };

  /** What a call to worker `name` goes to now: its worker here, a forwarder, or a 503. */
  const target = (name, entrypoint, what) => {
    const here = local(name);
    if (here?.server.worker) return { worker: here.server.worker };
    const remote = here ? null : registry.lookup(name, registryDir);
    if (remote && remote.pid !== process.pid) {
      return { handler: (request) => forward(name, remote, entrypoint, request) };
    }
    const why = here ? `is not running (it failed to start; fix it and save)` : `is not running (start it with workerbox dev, or pass its config with another -c)`;
    return { handler: () => text503(`workerbox: worker ${JSON.stringify(name)} (${what}) ${why}`) };
  };

  /** A service binding's fetch() answered by `handler` (a forwarder or a 503), as callService answers it. */
  const fetchThrough = (handler, args, bytes) => require("../http.js").fetchAnsweredBy(handler, args, bytes);

  return {
    service(entry, config) {
      const what = `service binding ${entry.binding} of ${config.name ?? "the worker"}${entry.entrypoint ? `, entrypoint ${entry.entrypoint}` : ""}`;
      const binding = api().service(() => null);
      // Read at each call (lib/bindings.js callService): the other worker's current generation.
      let last = null;
      Object.defineProperty(binding, "handler", {
        get() {
          last = target(entry.service, entry.entrypoint, what);
          return last.worker ?? last.handler;
        },
      });
      Object.defineProperty(binding, "entrypoint", { get: () => (last?.worker ? entry.entrypoint : undefined) });
      // A worker not served here: its calls are answered over the registry (lib/bindings.js
      // createDispatcher prefers a binding's answer()); one served here leaves it undefined.
      Object.defineProperty(binding, "answer", {
        get() {
          if (local(entry.service)?.server.worker) return undefined;
          return async (method, args, bytes) => {
            if (method === "fetch") return fetchThrough(target(entry.service, entry.entrypoint, what).handler, args, bytes);
            if (method !== "rpc" && method !== "scheduled") throw new TypeError(`workerbox: ${what}: ${method}() reaches only a worker of the same dev server (workerbox dev -c … -c …), not one in another process`);
            return remoteCall(entry.service, what, { kind: "service", entrypoint: entry.entrypoint }, method, args, bytes);
          };
        },
      });
      return binding;
    },

    durableObject(entry, config) {
      const name = entry.scriptName;
      // workerd's ids for the home worker's unique key (<script>-<Class>), as its own binding has them.
      const namespace = api().durableObject(entry.className, { uniqueKey: `${name}-${entry.className}` });
      const home = () => local(name);
      const where = `Durable Object binding ${entry.binding} of ${config.name ?? "the worker"} (class ${entry.className} of worker ${JSON.stringify(name)})`;
      // The objects live in the other worker, with its storage: wrangler's files (lib/project/wrangler-state.js).
      Object.defineProperty(namespace, "worker", { get: () => home()?.server.worker ?? undefined });
      Object.defineProperty(namespace, "dir", {
        get: () => {
          const project = home()?.server.worker ? home().server.project : null;
          return project?.stateDir ? path.join(project.stateDir, "do") : undefined;
        },
      });
      Object.defineProperty(namespace, "sql", {
        get: () => {
          const migrations = home()?.server.project?.config.migrations ?? [];
          const sqlite = migrations.some((m) => m.newSqliteClasses.includes(entry.className));
          return sqlite || !migrations.some((m) => m.newClasses.includes(entry.className));
        },
      });
      const answer = namespace.answer;
      namespace.answer = (method, args, bytes, caller) => {
        if (home()?.server.worker) return answer(method, args, bytes, caller);
        if (home()) throw new Error(notRunning(name, where));
        // In another dev process: the objects (and their storage) are that worker's.
        return remoteCall(name, where, { kind: "durable", className: entry.className }, method, args, bytes);
      };
      return namespace;
    },

    workflow(entry, config) {
      const name = entry.scriptName;
      const binding = new (require("../bindings.js").Binding)("workflow", null);
      binding.className = entry.className;
      const what = `workflow binding ${entry.binding} of ${config.name ?? "the worker"}`;
      binding.answer = (method, args, bytes) => {
        if (!local(name)) return remoteCall(name, what, { kind: "workflow", name: entry.name, className: entry.className }, method, args, bytes);
        const project = local(name)?.server.project;
        const own = project && Object.values(project.bindings).find((b) => b?.[Symbol.toStringTag] === "Workflow" && (b.workflowName === entry.name || (b.workflowName === undefined && b.className === entry.className)));
        if (!own || !local(name).server.worker) {
          throw new Error(`workerbox: ${what}: ${own ? `worker ${JSON.stringify(name)} is not running` : `worker ${JSON.stringify(name)} ${project ? `has no workflow ${JSON.stringify(entry.name)} of class ${entry.className} in its config` : "is not running"}`}`);
        }
        return own.answer(method, args, bytes);
      };
      return binding;
    },

    /** A tail consumer `name` running in another dev process: a function posting trace items there, or null. */
    remoteTail(name) {
      const entry = registry.lookup(name, registryDir);
      if (!entry || entry.pid === process.pid) return null;
      return async (events) => {
        const answer = await remoteCall(name, `tail consumer ${name}`, { kind: "tail" }, "tail", {}, rpc().serialize(events));
        const parsed = JSON.parse(answer.json ?? "{}");
        if (parsed.error) throw rpc().remoteError(parsed.error);
      };
    },
  };
}

/** Per home worker: the namespaces that answer other processes' calls to its Durable Object classes. */
const servedNamespaces = new WeakMap();

/** The namespace of class `className` of `server`'s worker, with the storage its own binding of the class has. */
function homeNamespace(server, className) {
  const worker = server.worker;
  let table = servedNamespaces.get(worker);
  if (table === undefined) servedNamespaces.set(worker, (table = new Map()));
  if (table.has(className)) return table.get(className);
  const api = require("../api.js");
  const project = server.project;
  const own = Object.values(project?.bindings ?? {}).find((b) => b?.className === className && typeof b.answer === "function" && b[Symbol.toStringTag] !== "Workflow" && b.worker === undefined);
  let options;
  if (own) options = { dir: own.dir, sql: own.sql, evictAfterMs: own.evictAfterMs, ...(own.uniqueKey !== undefined ? { uniqueKey: own.uniqueKey } : {}) };
  else {
    // A class the worker exports without binding it itself: as a script_name binding here would have it.
    const migrations = project?.config.migrations ?? [];
    const sql = migrations.some((m) => m.newSqliteClasses.includes(className)) || !migrations.some((m) => m.newClasses.includes(className));
    options = { ...(project?.stateDir ? require("./wrangler-state.js").durableOptions(project.stateDir, project.config, { className }) : {}), sql };
  }
  const namespace = api.durableObject(className, { worker, ...options });
  table.set(className, namespace);
  return namespace;
}

/** Answers binding call `head` from another dev process for worker `name` (server `server`): { json, bytes }. */
async function answerCall(server, name, head, bytes) {
  const rpc = require("../rpc.js");
  const { binding, method, args } = head;
  const worker = server.worker;
  if (!worker) throw new Error(`workerbox: worker ${JSON.stringify(name)} is not running (it failed to start; fix it and save)`);
  let answer;
  switch (binding?.kind) {
    case "service":
      if (method === "scheduled") {
        // service_binding_extra_handlers: the bound worker's scheduled() handler, run there.
        const result = await require("../api.js").dispatch(worker, { type: "scheduled", cron: args.cron, scheduledTime: args.scheduledTime });
        answer = { json: JSON.stringify({ outcome: result.outcome, noRetry: result.noRetry }) };
        break;
      }
      if (method !== "rpc") throw new TypeError(`workerbox: service binding operation "${method}" does not cross dev processes`);
      answer = await rpc.callService(worker, binding.entrypoint, undefined, args, bytes);
      break;
    case "durable":
      // The id names the object's file: only an id as a namespace makes it is taken.
      if (typeof args?.object !== "string" || !/^[0-9a-f]{64}$/.test(args.object)) throw new TypeError(`workerbox: a Durable Object call from another dev process named no valid object id (${JSON.stringify(args?.object)})`);
      answer = await homeNamespace(server, binding.className).answer(method, args, bytes, undefined);
      if (answer.webSocket !== undefined) {
        answer.webSocket.close?.(1011, "a WebSocket cannot cross workerbox dev processes");
        throw new TypeError(`workerbox: the Durable Object ${binding.className} of worker ${JSON.stringify(name)} answered with a WebSocket, which cannot cross between workerbox dev processes (serve both workers from one dev server: workerbox dev -c … -c …)`);
      }
      break;
    case "workflow": {
      const own = Object.values(server.project?.bindings ?? {}).find((b) => b?.[Symbol.toStringTag] === "Workflow" && (b.workflowName === binding.name || (b.workflowName === undefined && b.className === binding.className)));
      if (!own) throw new Error(`workerbox: worker ${JSON.stringify(name)} has no workflow ${JSON.stringify(binding.name)} of class ${binding.className} in its config`);
      answer = await own.answer(method, args, bytes);
      break;
    }
    case "tail":
      answer = await rpc.callWorker(worker, { kind: "tail" }, bytes);
      break;
    default:
      throw new TypeError(`workerbox: unknown binding call ${JSON.stringify(binding?.kind)} from another dev process`);
  }
  const stubs = answer.json ? (JSON.parse(answer.json).stubs ?? []) : [];
  if (stubs.length > 0) {
    // Functions and RpcTargets stay in this process: let them go, and say so to the caller.
    for (const id of stubs) await rpc.callStub("dispose", { stub: id }, null, undefined).catch(() => {});
    return { json: JSON.stringify({ error: { name: "TypeError", message: `workerbox: worker ${JSON.stringify(name)} returned a function, RpcTarget or RPC stub, which cannot cross between workerbox dev processes (only structured-clonable values do; or serve both workers from one dev server: workerbox dev -c … -c …)` } }) };
  }
  return answer;
}

/** Answers a request another dev server forwarded to worker `name` (see forward()), or a binding call; true if it did. */
async function answerForwarded(req, res, server, name) {
  if (req.headers[registry.CALL_HEADER] !== undefined && isLoopback(req.socket.remoteAddress)) {
    const wanted = req.headers[registry.CALL_HEADER];
    try {
      if (wanted !== name) throw new Error(`workerbox: worker ${JSON.stringify(wanted)} is not running on this port`);
      const { head, bytes } = await registry.readCall(req);
      const answer = await answerCall(server, name, head, bytes);
      registry.sendAnswer(res, { json: answer.json }, answer.bytes ?? null);
    } catch (error) {
      const thrown = error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { name: "Error", message: String(error) };
      if (!res.headersSent) registry.sendAnswer(res, { thrown }, null);
    }
    return true;
  }
  const wanted = req.headers[TARGET];
  if (wanted === undefined || !isLoopback(req.socket.remoteAddress)) return false;
  if (wanted !== name || !server.worker) {
    res.writeHead(503, { "content-type": "text/plain; charset=utf-8" }).end(`workerbox: worker ${JSON.stringify(wanted)} is not running on this port\n`);
    return true;
  }
  const original = req.headers[ORIGINAL_URL];
  const entrypoint = req.headers[ENTRYPOINT];
  // The worker sees the URL the caller used; the forwarding headers are dropped.
  const drop = new Set([TARGET, ORIGINAL_URL, ENTRYPOINT]);
  const raw = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (!drop.has(req.rawHeaders[i].toLowerCase())) raw.push(req.rawHeaders[i], req.rawHeaders[i + 1]);
  req.rawHeaders.length = 0;
  req.rawHeaders.push(...raw);
  for (const header of drop) delete req.headers[header];
  if (typeof original === "string" && /^https?:\/\//.test(original)) req.url = original;
  if (!entrypoint) return false;
  // A named entrypoint: its fetch() through RPC, as a service binding with `entrypoint` calls it.
  const rpc = require("../rpc.js");
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = req.method === "GET" || req.method === "HEAD" || chunks.length === 0 ? null : Buffer.concat(chunks);
  try {
    const head = await rpc.fetchInto(server.worker, { entrypoint }, { method: req.method, url: req.url, headers: raw }, body);
    const { status, statusText, headers } = JSON.parse(head.json);
    const out = [];
    for (let i = 0; i + 1 < headers.length; i += 2) if (headers[i] !== "content-length" && headers[i] !== "transfer-encoding") out.push(headers[i], headers[i + 1]);
    res.writeHead(status, statusText || undefined, out).end(head.bytes ?? undefined);
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`workerbox: entrypoint ${entrypoint} of ${name} failed: ${error.message}\n`);
  }
  return true;
}

/**
 * Starts a dev server per config in `targets` (folders or config files); the first is served on
 * `options.port`, the others on free loopback ports. Each registers its worker in the dev
 * registry (`options.registryDir`, default registry.registryDir()). Options are startDevServer's,
 * for every worker. Resolves to `{ servers, primary, url, close() }`.
 */
async function startDevServers(targets, options = {}) {
  const { startDevServer } = require("./dev.js");
  if (!Array.isArray(targets) || targets.length === 0) throw new TypeError("startDevServers: pass one or more project folders or config files");
  const registryDir = options.registryDir ?? registry.registryDir();
  const entries = new Map(); // worker name -> { server }
  const peers = makePeers((name) => entries.get(name), registryDir);
  // Names first: a binding may name a worker whose config comes later in the list.
  // (A wrangler file, or a cloudflare.config.ts: lib/project/config-cloudflare.js.)
  const { readProjectConfig } = require("./config-cloudflare.js");
  const configs = await Promise.all(targets.map((target) => readProjectConfig(target, { env: options.env, requireMain: false })));
  const names = configs.map((config, i) => config.name ?? (targets.length === 1 ? undefined : `worker-${i + 1}`));
  for (let i = 0; i < names.length; i++) {
    if (names[i] !== undefined && names.indexOf(names[i]) !== i) throw new Error(`startDevServers: two configs name their worker ${JSON.stringify(names[i])} (${configs[names.indexOf(names[i])].file}, ${configs[i].file})`);
  }
  const servers = [];
  const unregister = [];
  const closeAll = async () => {
    for (const off of unregister.splice(0)) off();
    await Promise.all(servers.map((server) => server.close()));
  };
  // The others start first, so the workers the first one binds to are up when it starts.
  const order = targets.map((_, i) => i).slice(1).concat(0);
  try {
    for (const i of order) {
      const name = names[i];
      const slot = { server: null };
      // A consumer served here, one in another dev process (its items posted there), or its name (not running).
      const consumers = () => (configs[i].tailConsumers ?? []).map((c) => entries.get(c.service)?.server.worker ?? (entries.has(c.service) ? null : peers.remoteTail(c.service)) ?? c.service);
      let tail = null;
      const log = options.log ?? ((line) => console.log(line));
      // streaming_tail_consumers: service() bindings that name the worker served here when an
      // invocation starts (a name not served here is reported as not running).
      const streamingTails = (configs[i].streamingTailConsumers ?? []).map((c) => {
        const binding = require("../bindings.js").service(() => null);
        Object.defineProperty(binding, "handler", { configurable: true, enumerable: true, get: () => entries.get(c.service)?.server.worker ?? c.service });
        return binding;
      });
      const server = await startDevServer(targets[i], {
        ...options,
        firstConfig: configs[i],
        port: i === 0 ? options.port : 0,
        host: i === 0 ? options.host : "127.0.0.1",
        peers,
        // Only the first worker's requests are logged unless asked (the others are its bindings).
        logRequests: i === 0 ? options.logRequests : false,
        // One DevTools port: the first worker's.
        inspect: i === 0 ? options.inspect : undefined,
        wrapDispatch: (dispatch) => {
          tail = tailed(dispatch, { scriptName: name ?? null, consumers, onError: (error) => log(`▲ tail: ${error.message}`) });
          return tail.dispatch;
        },
        onWorkerLog: (level, message) => tail?.log(level, message),
        streamingTails,
        onRequest: (req, res) => answerForwarded(req, res, slot.server, name),
      });
      slot.server = server;
      servers[i] = server;
      if (name !== undefined) {
        entries.set(name, slot);
        const bound = server.server.address();
        unregister.push(registry.register(name, { host: bound.address, port: bound.port, entrypoints: [] }, registryDir));
      }
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  // The dev log says when a worker these bind to starts or stops in another process (lookups
  // themselves happen at each call).
  const wanted = new Set(configs.flatMap((c) => [...c.bindings.services.map((s) => s.service), ...c.bindings.durableObjects.map((d) => d.scriptName), ...(c.bindings.workflows ?? []).map((w) => w.scriptName), ...(c.tailConsumers ?? []).map((t) => t.service)]).filter((n) => n && !entries.has(n)));
  if (wanted.size > 0) {
    const log = options.log ?? ((line) => console.log(line));
    const seen = new Map([...wanted].map((n) => [n, registry.lookup(n, registryDir)?.pid ?? null]));
    unregister.push(
      registry.watch((name) => {
        if (!wanted.has(name)) return;
        const pid = registry.lookup(name, registryDir)?.pid ?? null;
        if (pid === seen.get(name)) return;
        seen.set(name, pid);
        log(pid === null ? `⎔ worker ${name} stopped (its bindings answer 503)` : `⎔ worker ${name} is running in another workerbox dev (pid ${pid}); bindings to it connect`);
      }, registryDir),
    );
  }
  const primary = servers[0];
  return {
    servers,
    primary,
    get url() {
      return primary.url;
    },
    /** The dev server of worker `name`. */
    server: (name) => entries.get(name)?.server ?? null,
    close: closeAll,
  };
}

/**
 * loadProject() for several configs whose bindings reach each other (as in startDevServers, but
 * without HTTP servers or reloads). Resolves to `{ projects, start(extra) }`; `start()` creates
 * every worker (the others first, the first last) and resolves to `{ workers, dispose() }`,
 * `workers` by worker name. Tail consumers are the dev server's (startDevServers) only.
 */
async function loadProjects(targets, options = {}) {
  const { loadProject, startWorker } = require("./load.js");
  if (!Array.isArray(targets) || targets.length === 0) throw new TypeError("loadProjects: pass one or more project folders or config files");
  const entries = new Map();
  const peers = makePeers((name) => entries.get(name), options.registryDir ?? registry.registryDir());
  const projects = [];
  for (const target of targets) {
    const project = await loadProject(target, { ...options, peers });
    if (project.name !== undefined && projects.some((p) => p.name === project.name)) throw new Error(`loadProjects: two configs name their worker ${JSON.stringify(project.name)}`);
    projects.push(project);
  }
  return {
    projects,
    async start(extra = {}) {
      const workers = {};
      const started = [];
      try {
        for (const project of [...projects.slice(1), projects[0]]) {
          const slot = { server: { project, worker: null } };
          if (project.name !== undefined) entries.set(project.name, slot);
          slot.server.worker = await startWorker(project, extra);
          started.push(slot.server.worker);
          if (project.name !== undefined) workers[project.name] = slot.server.worker;
        }
      } catch (error) {
        await Promise.all(started.map((w) => w.dispose()));
        throw error;
      }
      return {
        workers,
        dispose: async () => {
          for (const slot of entries.values()) slot.server.worker = null;
          await Promise.all(started.map((w) => w.dispose()));
        },
      };
    },
  };
}

module.exports = { startDevServers, loadProjects, makePeers, answerForwarded };
