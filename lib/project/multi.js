"use strict";
// Several workers in one dev server, and dev servers finding each other. `startDevServers(targets,
// options)` starts one dev server (dev.js) per config: the first on the port asked for, the
// others on free loopback ports; each rebuilds and reloads on its own files only. Bindings
// between them are resolved at call time (peers()): a service binding (with its `entrypoint`)
// goes to the named worker's current generation, a Durable Object binding with `script_name` to
// that worker's namespace (same storage folder), a Workflow with `script_name` to that worker's
// workflow, and `tail_consumers` get each invocation's trace item (lib/tail/). A worker of another
// `workerbox dev` process is found through the file registry (registry.js) and reached over
// loopback HTTP (fetch only); one running nowhere answers 503 naming it, until it starts.

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
  const api = require("../api.js");
  const { Binding } = require("../bindings.js");

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

  /** RPC methods of a worker reached over HTTP or not running: a clear error. */
  const noRpc = (name) =>
    new Proxy(
      {},
      {
        get(_, key) {
          if (key === "then" || key === "dispatch" || typeof key === "symbol") return undefined;
          return () => {
            throw new Error(`workerbox: RPC to worker ${JSON.stringify(name)} needs it in this dev server (workerbox dev -c … -c …): it runs in another process or not at all, which only fetch() reaches`);
          };
        },
      },
    );

  return {
    service(entry, config) {
      const what = `service binding ${entry.binding} of ${config.name ?? "the worker"}${entry.entrypoint ? `, entrypoint ${entry.entrypoint}` : ""}`;
      const binding = api.service(() => null);
      // Read at each call (lib/bindings.js callService): the other worker's current generation.
      let last = null;
      Object.defineProperty(binding, "handler", {
        get() {
          last = target(entry.service, entry.entrypoint, what);
          if (last.worker) return last.worker;
          const fetchOnly = noRpc(entry.service);
          const handler = last.handler;
          return new Proxy(fetchOnly, { get: (t, key) => (key === "fetch" ? handler : Reflect.get(t, key)) });
        },
      });
      Object.defineProperty(binding, "entrypoint", { get: () => (last?.worker ? entry.entrypoint : undefined) });
      return binding;
    },

    durableObject(entry, config) {
      const name = entry.scriptName;
      const namespace = api.durableObject(entry.className);
      const home = () => local(name);
      const where = `Durable Object binding ${entry.binding} of ${config.name ?? "the worker"} (class ${entry.className} of worker ${JSON.stringify(name)})`;
      // The objects live in the other worker, with its storage: the folder its own binding uses.
      Object.defineProperty(namespace, "worker", { get: () => home()?.server.worker ?? undefined });
      Object.defineProperty(namespace, "dir", {
        get: () => {
          const project = home()?.server.worker ? home().server.project : null;
          return project?.stateDir ? path.join(project.stateDir, "workerbox", "do") : undefined;
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
        if (!home()?.server.worker) {
          const elsewhere = !home() && registry.lookup(name, registryDir);
          throw new Error(`workerbox: ${where}: ${elsewhere ? `worker ${JSON.stringify(name)} runs in another workerbox dev process (pid ${elsewhere.pid}); a Durable Object is reachable only from workers of the same dev server (workerbox dev -c … -c …)` : `worker ${JSON.stringify(name)} is not running`}`);
        }
        return answer(method, args, bytes, caller);
      };
      return namespace;
    },

    workflow(entry, config) {
      const name = entry.scriptName;
      const binding = new Binding("workflow", null);
      binding.className = entry.className;
      binding.answer = (method, args, bytes) => {
        const project = local(name)?.server.project;
        const own = project && Object.values(project.bindings).find((b) => b?.[Symbol.toStringTag] === "Workflow" && (b.workflowName === entry.name || (b.workflowName === undefined && b.className === entry.className)));
        if (!own || !local(name).server.worker) {
          throw new Error(`workerbox: workflow binding ${entry.binding} of ${config.name ?? "the worker"}: ${own ? `worker ${JSON.stringify(name)} is not running` : `worker ${JSON.stringify(name)} ${project ? `has no workflow ${JSON.stringify(entry.name)} of class ${entry.className} in its config` : "is not served by this dev server (workflows of another worker need it here: workerbox dev -c … -c …)"}`}`);
        }
        return own.answer(method, args, bytes);
      };
      return binding;
    },
  };
}

/** Answers a request another dev server forwarded to worker `name` (see forward()); true if it did. */
async function answerForwarded(req, res, server, name) {
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
  const { readConfig } = require("./config.js");
  if (!Array.isArray(targets) || targets.length === 0) throw new TypeError("startDevServers: pass one or more project folders or config files");
  const registryDir = options.registryDir ?? registry.registryDir();
  const entries = new Map(); // worker name -> { server }
  const peers = makePeers((name) => entries.get(name), registryDir);
  // Names first: a binding may name a worker whose config comes later in the list.
  const configs = targets.map((target) => readConfig(target, { env: options.env, requireMain: false }));
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
      const consumers = () => (configs[i].tailConsumers ?? []).map((c) => entries.get(c.service)?.server.worker ?? c.service);
      let tail = null;
      const log = options.log ?? ((line) => console.log(line));
      const server = await startDevServer(targets[i], {
        ...options,
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
