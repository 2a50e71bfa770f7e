// The Vitest pool of the integration (Vitest 4's PoolRunnerInitializer / PoolWorker API): each
// pool worker is one workerbox isolate running lib/vitest/runner.mjs, with the bindings of the
// project's wrangler configuration (fresh in-memory storage per worker, so per test file), and
// Vitest's messages crossing one WebSocket to it. Vitest and Vite are the project's own.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { createLoader, resolveBare } = require("./loader.js");
const { startAuxiliaryWorkers } = require("./auxiliary.js");

const RUNNER = path.join(__dirname, "runner.mjs");
const HOST_BINDING = "__WORKERBOX_VITEST_HOST";
const POOL_NAME = "workerbox";
/** Specifiers the engine answers itself; Vite must not try to load them. */
const BUILTIN = /^(?:cloudflare|workerd|node):/;

/**
 * The runner's way back to Node (a service binding): snapshot files, and test files that inline
 * snapshots rewrite, are read and written here — only under the project's root.
 */
function hostService(root, bindings) {
  const fsp = fs.promises;
  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/durable/")) return durableCall(url, bindings);
    const file = path.resolve(url.searchParams.get("path") ?? "");
    if (url.pathname !== "/snapshot" || (file !== root && !file.startsWith(root + path.sep))) {
      return new Response(`not a path under the project root: ${file}`, { status: 403 });
    }
    switch (request.method) {
      case "GET":
        return fs.existsSync(file) ? new Response(await fsp.readFile(file)) : new Response(null, { status: 404 });
      case "POST":
        await fsp.mkdir(file, { recursive: true });
        return new Response(null, { status: 204 });
      case "PUT":
        await fsp.writeFile(file, Buffer.from(await request.arrayBuffer()));
        return new Response(null, { status: 204 });
      case "DELETE":
        await fsp.rm(file, { force: true });
        return new Response(null, { status: 204 });
      default:
        return new Response(null, { status: 405 });
    }
  };
}

/** cloudflare:test's Durable Object helpers that need the namespace in Node (lib/durable.js). */
async function durableCall(url, bindings) {
  const params = url.searchParams;
  const namespaces = Object.entries(bindings).filter(([, b]) => typeof b?.ids === "function" && typeof b?.evict === "function" && typeof b?.className === "string");
  const found = params.has("binding") ? namespaces.find(([name]) => name === params.get("binding")) : namespaces.find(([, b]) => b.className === params.get("className"));
  if (!found) return new Response(`no Durable Object binding for ${params}`, { status: 404 });
  const namespace = found[1];
  if (url.pathname === "/durable/ids") return Response.json(await namespace.ids());
  if (url.pathname === "/durable/evict") return Response.json(await namespace.evict(params.get("id")));
  if (url.pathname === "/durable/evict-all") return Response.json(await namespace.evict());
  return new Response(`unknown call ${url.pathname}`, { status: 404 });
}

/** The pool options, resolved (they may be a function of Vitest's provided context). */
async function resolveOptions(poolOptions, project) {
  if (typeof poolOptions !== "function") return poolOptions ?? {};
  return (await poolOptions({ inject: (key) => project.getProvidedContext()[key] })) ?? {};
}

/**
 * What the isolate gets from the project: bindings, compatibility settings and the main module,
 * from the wrangler configuration (`wrangler.configPath`, else one in the root, if any), with
 * `miniflare.bindings` over its vars and `main` over its main.
 */
async function projectSettings(options, root, warn, log) {
  const { loadProject } = require("../project/index.js");
  const extra = options.miniflare ?? {};
  // Auxiliary workers first: the main worker's service bindings name them.
  const auxiliary = await startAuxiliaryWorkers(extra.workers, root, log);
  const configPath = options.wrangler?.configPath ? path.resolve(root, options.wrangler.configPath) : ["wrangler.jsonc", "wrangler.json", "wrangler.toml"].map((f) => path.join(root, f)).find((f) => fs.existsSync(f));
  let bindings = {};
  let compatibilityDate;
  let compatibilityFlags = [];
  let main = options.main ? path.resolve(root, options.main) : undefined;
  if (configPath) {
    const project = await loadProject(configPath, { env: options.wrangler?.environment, persistTo: false, build: false, migrate: false, services: auxiliary.services }).catch(async (error) => {
      await auxiliary.dispose();
      throw error;
    });
    for (const item of project.unsupported) warn(`${item.key}: ${item.binding} is not available in workerbox tests (${item.reason})`);
    bindings = project.bindings;
    compatibilityDate = project.config.compatibilityDate;
    compatibilityFlags = project.config.compatibilityFlags ?? [];
    main ??= project.config.mainFile;
  }
  if (options.remoteBindings) warn("remoteBindings is ignored: workerbox runs every binding locally");
  Object.assign(bindings, extra.bindings ?? {});
  const api = require("../../index.js");
  for (const [name, target] of Object.entries(extra.serviceBindings ?? {})) {
    bindings[name] = api.service(typeof target === "string" ? (auxiliary.services[target] ?? missingService(target)) : target);
  }
  compatibilityDate = extra.compatibilityDate ?? compatibilityDate;
  compatibilityFlags = [...new Set([...(extra.compatibilityFlags ?? compatibilityFlags), "nodejs_compat"])];
  const outbound = typeof extra.outboundService === "function" ? extra.outboundService : undefined;
  return { bindings, compatibilityDate, compatibilityFlags, main, outbound, auxiliary };
}

function missingService(name) {
  throw new Error(`cloudflareTest: miniflare.serviceBindings names "${name}", which is not one of miniflare.workers`);
}

class WorkerboxPoolWorker {
  name = POOL_NAME;

  constructor(options, poolOptions) {
    this.options = options;
    this.poolOptions = poolOptions;
    this.worker = null;
    this.socket = null;
    this.listeners = { message: new Set(), error: new Set(), exit: new Set() };
  }

  async start() {
    const started = performance.now();
    const { project } = this.options;
    const root = project.config.root;
    const warn = (text) => project.vitest.logger.warn(`[workerbox] ${text}`);
    const log = (level, message) => (level === "error" || level === "warn" ? process.stderr : process.stdout).write(`${message}\n`);
    const vitestWorker = resolveBare("vitest/worker", root, "import");
    if (!vitestWorker) throw new Error(`workerbox/vitest: Vitest is not installed in ${root} (it is a peer dependency: npm install --save-dev vitest)`);
    const options = await resolveOptions(this.poolOptions, project);
    this.codec = await import("./serialize.mjs");
    const settings = await projectSettings(options, root, warn, log);
    this.auxiliary = settings.auxiliary;
    try {
      await this.#startRunner(root, settings, vitestWorker, log);
    } catch (error) {
      await this.stop();
      throw error;
    }
    // bench/vitest.mjs measures each pool worker's start-up (isolate, runner, connection) here.
    if (process.env.WORKERBOX_VITEST_STATS) fs.appendFileSync(process.env.WORKERBOX_VITEST_STATS, `${JSON.stringify({ startMs: performance.now() - started })}\n`);
  }

  async #startRunner(root, settings, vitestWorker, log) {
    const { createWorker, dispatch, service } = require("../../index.js");
    // Only the pool's own upgrade request starts Vitest in the runner.
    const token = require("node:crypto").randomUUID();
    this.worker = await createWorker({
      script: fs.readFileSync(RUNNER, "utf8"),
      filename: RUNNER,
      format: "module",
      allowEval: true,
      bindings: { ...settings.bindings, [HOST_BINDING]: service(hostService(path.resolve(root), settings.bindings)), __WORKERBOX_VITEST_TOKEN: token },
      compatibilityDate: settings.compatibilityDate,
      compatibilityFlags: settings.compatibilityFlags,
      ...(settings.outbound ? { outbound: settings.outbound } : {}),
      loadModule: createLoader({ aliases: { "workerbox-vitest:worker": vitestWorker } }),
      limits: { cpuMs: 0, wallMs: 0, waitUntilMs: 0, memoryMb: 1024 },
      onLog: log,
    });
    const header = JSON.stringify({ cwd: root, main: settings.main, token });
    const response = await dispatch(this.worker, { url: "http://workerbox-vitest/", headers: { upgrade: "websocket", "x-workerbox-vitest": header } });
    if (response.status !== 101 || !response.webSocket) throw new Error(`workerbox/vitest: the runner did not accept the connection (${response.status}: ${await response.text()})`);
    this.socket = response.webSocket;
    this.socket.addEventListener("message", (event) => this.#received(event.data));
    this.socket.addEventListener("close", () => this.#emit("exit"));
    this.socket.addEventListener("error", (event) => this.#emit("error", event.error ?? new Error("the runner's connection failed")));
    this.socket.accept();
  }

  #received(text) {
    let message;
    try {
      message = this.codec.deserialize(text);
    } catch (error) {
      return this.#emit("error", error);
    }
    // Vitest asks Vite for every module the tests import; the engine's own (cloudflare:, node:)
    // are loaded natively instead, as Vite cannot.
    if (message && message.m === "fetch" && Array.isArray(message.a) && typeof message.a[0] === "string" && BUILTIN.test(message.a[0]) && message.a[0] !== "cloudflare:test") {
      this.socket.send(this.codec.serialize({ t: "s", i: message.i, r: { externalize: message.a[0], type: "builtin" } }));
      return;
    }
    this.#emit("message", message);
  }

  #emit(event, value) {
    for (const callback of this.listeners[event] ?? []) callback(value);
  }

  on(event, callback) {
    this.listeners[event]?.add(callback);
  }

  off(event, callback) {
    this.listeners[event]?.delete(callback);
  }

  send(message) {
    if (!this.socket) throw new Error("workerbox/vitest: a message was sent before the pool worker started");
    let outgoing = message;
    // The inspector is not available inside the isolate.
    if (message.type === "start") {
      outgoing = { ...message, context: { ...message.context, config: { ...message.context.config, inspector: { ...message.context.config.inspector, enabled: false } } } };
    }
    this.socket.send(this.codec.serialize(outgoing));
  }

  deserialize(data) {
    return data;
  }

  async stop() {
    try {
      this.socket?.close(1000, "stopped");
    } catch {}
    this.socket = null;
    await this.worker?.dispose();
    this.worker = null;
    await this.auxiliary?.dispose();
    this.auxiliary = null;
  }
}

/** The pool for Vitest's `poolRunner`. */
function cloudflarePool(poolOptions) {
  return { name: POOL_NAME, createPoolWorker: (options) => new WorkerboxPoolWorker(options, poolOptions) };
}

module.exports = { cloudflarePool, projectSettings };
