"use strict";
// The development server behind `workerbox dev`: serves a project on localhost like `wrangler dev`.
// It owns the HTTP bridge (streaming request and response bodies between Node's http server
// and dispatch(), also used by `workerbox serve`), the request log, labelled worker console
// output, the dev error page with source-mapped stacks, `/__scheduled`, static assets in front
// of the worker, WebSocket upgrade handling, and hot reload: a file change rebuilds and swaps
// only this worker, letting requests already running on the old one finish first.

const fs = require("node:fs");
// node:http (3-10 ms to load) loads when the server is made: on a start, after the worker's
// creation has begun in its isolate.
const http = () => require("node:http");
const path = require("node:path");
const util = require("node:util");
const { Readable } = require("node:stream");
const { EventEmitter } = require("node:events");
const { loadProject, projectFromConfig, startWorker } = require("./load.js");
const { runBuild, watchedByBuild } = require("./build.js");
const { stopOneShotEsbuild } = require("./bundle.js");
const { describeProblem } = require("./report.js");
const { userCacheDir, pruneCodeCache } = require("./code-cache.js");
const { mark } = require("./timing.js");
const { RAW_ANSWER, flatHeaders } = require("../http.js");

const IGNORED_DIRS = new Set(["node_modules", ".git", ".workerbox", ".wrangler"]);
/** Files editors write beside the one being saved (swap, backup, lock and temp files). */
const EDITOR_TEMP = /(^\.?#|~$|\.(swp|swx|swo|tmp|bak|orig)$|^4913$|^sed[A-Za-z0-9]{6}$|\.~tmp$|___jb_(tmp|old)___$)/;

function paint(enabled, style, text) {
  return enabled && typeof util.styleText === "function" ? util.styleText(style, text) : text;
}

function statusStyle(status) {
  return status >= 500 ? "red" : status >= 400 ? "yellow" : status >= 300 ? "cyan" : "green";
}

/**
 * Watches every folder under `root` (not node_modules, .git, .workerbox, .wrangler) with one
 * non-recursive watcher each: a folder's watcher keeps reporting a file that an editor replaced
 * by renaming a new one over it, which a per-file watcher does not. New folders are added.
 */
function watchTree(root, onChange, warn, limit = 4000) {
  const watchers = new Map();
  const add = (dir) => {
    if (watchers.has(dir)) return;
    if (watchers.size >= limit) {
      if (watchers.size === limit) warn(`more than ${limit} folders under ${root}; not watching the rest`);
      return;
    }
    let watcher;
    try {
      watcher = fs.watch(dir, (event, name) => {
        if (!name) return;
        const file = path.join(dir, name.toString());
        if (IGNORED_DIRS.has(path.basename(file))) return;
        onChange(file);
        if (event === "rename") {
          try {
            if (fs.statSync(file).isDirectory()) walk(file);
          } catch {
            // removed
          }
        }
      });
    } catch (error) {
      warn(`cannot watch ${dir}: ${error.message}`);
      return;
    }
    watcher.on("error", () => {
      watchers.delete(dir);
      watcher.close();
    });
    watchers.set(dir, watcher);
  };
  const walk = (dir) => {
    add(dir);
    let entries = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) if (entry.isDirectory() && !IGNORED_DIRS.has(entry.name)) walk(path.join(dir, entry.name));
  };
  walk(root);
  return {
    close() {
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

/** The dev error page (HTML for browsers, text otherwise) for an uncaught worker error. */
function errorResponse(error, request) {
  const name = error?.name ?? "Error";
  const message = error?.message ?? String(error);
  const stack = error?.stack ?? `${name}: ${message}`;
  if ((request.headers.accept ?? "").includes("text/html")) {
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(name)}: ${escapeHtml(message)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;color:#222}h1{font-size:1.3rem;color:#b00020}pre{background:#f6f6f6;padding:1rem;overflow:auto;border-radius:6px}</style></head>
<body><h1>${escapeHtml(name)}: ${escapeHtml(message)}</h1><p>Uncaught in the worker while handling <code>${escapeHtml(request.method)} ${escapeHtml(request.url)}</code>.</p>
<pre>${escapeHtml(stack)}</pre><p><small>workerbox dev</small></p></body></html>`;
    return { status: 500, headers: { "content-type": "text/html; charset=utf-8" }, body: html };
  }
  return { status: 500, headers: { "content-type": "text/plain; charset=utf-8" }, body: `Uncaught ${stack}\n` };
}

/**
 * The URL of a Node request: an origin-form target ("/a", "//a") is a path on `origin`, even
 * when it starts with "//" (which `new URL(target, origin)` would read as another host).
 */
function requestUrl(req, origin) {
  return req.url.startsWith("/") ? new URL(origin + req.url) : new URL(req.url, origin);
}

/**
 * Node request -> dispatch() input; the body streams (never buffered whole). With `raw`, the
 * answer is dispatch()'s plain object (lib/http.js RAW_ANSWER), which writeResponse() takes too:
 * no Node Response is made, so a worker's answer does not make Node load its fetch classes.
 */
function toDispatchInput(req, origin, raw = false) {
  const headers = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && (req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined);
  return { url: requestUrl(req, origin).href, method: req.method, headers, body: hasBody ? Readable.toWeb(req) : null, ...(raw ? { [RAW_ANSWER]: true } : {}) };
}

/** The methods Node's Request refuses (fetch's forbidden methods): such a request is the worker's. */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * What the assets' router reads of a request (lib/project/assets.js route(): `url`, `method`,
 * `headers.get()` and `headers.has()`), as Node's Request would give them, without making one
 * (the first makes Node load its fetch classes, 20-30 ms): null for a request Node's Request
 * refuses (its method or its URL).
 */
function routedRequest(req, url) {
  // (Node's Request refuses a URL with credentials too: an absolute-form target may carry them.)
  if (FORBIDDEN_METHODS.has(req.method.toUpperCase()) || url.username !== "" || url.password !== "") return null;
  const get = (name) => {
    const value = req.headers[String(name).toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  };
  return { url: url.href, method: req.method, headers: { get, has: (name) => get(name) !== null } };
}

/**
 * Writes a fetch Response (or dispatch()'s plain answer, see toDispatchInput) to Node's
 * response, streaming its body; resolves when done.
 */
async function writeResponse(res, response) {
  const plain = response[RAW_ANSWER] === true;
  // Each Set-Cookie a header of its own (the plain answer's list is that already).
  const head = plain ? response.headers : flatHeaders(response.headers);
  if (response.statusText) res.writeHead(response.status, response.statusText, head);
  else res.writeHead(response.status, head);
  if (response.body === null) return void res.end();
  if (plain && ArrayBuffer.isView(response.body)) {
    if (response.body.byteLength > 0) res.write(response.body);
    return void res.end();
  }
  const reader = response.body.getReader();
  const onClose = () => reader.cancel("the client went away").catch(() => {});
  res.once("close", onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((resolve) => (res.writableEnded || res.destroyed ? resolve() : res.once("drain", resolve).once("close", resolve)));
      if (res.destroyed) break;
    }
    res.end();
  } catch (error) {
    res.destroy(error);
  } finally {
    res.off("close", onClose);
  }
}

let fetchClassesLoaded = false;
/**
 * Loads Node's fetch classes (undici) and runs what a request that needs them runs of them (a
 * Request with headers, a Response with a body and its reader), so that V8 compiles that code
 * now. The path to a worker's answer needs none of them (toDispatchInput, routedRequest); an
 * asset's answer, a service binding's call and the like do: the dev server loads them once the
 * first request is answered, not on a start's path (20-30 ms of this thread on Node 24).
 */
function loadFetchClasses() {
  if (fetchClassesLoaded) return;
  fetchClassesLoaded = true;
  try {
    const request = new Request("http://localhost/", { method: "GET", headers: new Headers({ accept: "text/html" }) });
    void request.headers.get("accept");
    const response = new Response("warm", { status: 200, headers: { "content-type": "text/plain" } });
    for (const entry of response.headers) void entry;
    void response.headers.getSetCookie();
    response.body.getReader().read().catch(() => {});
  } catch {
    // Only a warm-up.
  }
}

/**
 * An http.Server request handler that sends every request to `getWorker()` through dispatch(),
 * streaming both bodies. `onError(error, req)` may map the error (stacks) before the 500.
 */
function nodeHandler({ getWorker, dispatch, origin, onDone = () => {}, onError = (e) => e }) {
  return async (req, res) => {
    const started = process.hrtime.bigint();
    let status = 500;
    try {
      const response = await dispatch(getWorker(), toDispatchInput(req, origin(), true));
      status = response.status;
      await writeResponse(res, response);
    } catch (caught) {
      const error = await onError(caught, req);
      const page = errorResponse(error, { method: req.method, url: req.url, headers: req.headers });
      status = page.status;
      if (!res.headersSent) res.writeHead(page.status, page.headers).end(page.body);
      else res.destroy(error);
    } finally {
      onDone(req, status, Number(process.hrtime.bigint() - started) / 1e6);
    }
  };
}

/** A close code `ws` may send: 1005 and 1006 only describe a close, so they become none. */
const sendableCode = (code) => (code === 1000 || (code >= 1001 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999) ? code : undefined);

/** Joins a real client's WebSocket (`ws`) to the worker's end (lib/websocket.js), both ways. */
function bridge(client, workerSocket) {
  workerSocket.addEventListener("message", (event) => client.send(typeof event.data === "string" ? event.data : Buffer.from(event.data)));
  workerSocket.addEventListener("close", (event) => {
    const code = sendableCode(event.code);
    if (event.code === 1006) client.terminate();
    else client.close(code, code === undefined ? undefined : event.reason);
  });
  workerSocket.accept();
  client.on("message", (data, isBinary) => {
    try {
      workerSocket.send(isBinary ? new Uint8Array(Buffer.concat([].concat(data))) : data.toString("utf8"));
    } catch {}
  });
  client.on("close", (code, reason) => workerSocket.close(code, reason.toString("utf8")));
  client.on("error", () => workerSocket.close(1011, "client error"));
}

/**
 * `ws`'s permessage-deflate setting for the extension a worker's 101 answer names (the worker
 * decides it as workerd does, see internals.webSocketAnswerExtensions): false for none, else
 * the parameters it gives; `ws` then agrees on what the client offered.
 */
function deflateOptions(extensions) {
  const deflate = (extensions ?? "").split(",").map((e) => e.split(";").map((p) => p.trim())).find((e) => e[0].toLowerCase() === "permessage-deflate");
  if (deflate === undefined) return false;
  const options = { threshold: 0 };
  for (const param of deflate.slice(1)) {
    const [key, value] = param.split("=").map((p) => p.trim().replace(/^"|"$/g, ""));
    const bits = Number(value);
    if (key === "server_no_context_takeover") options.serverNoContextTakeover = true;
    else if (key === "client_no_context_takeover") options.clientNoContextTakeover = true;
    else if (key === "server_max_window_bits" && bits >= 8 && bits <= 15) options.serverMaxWindowBits = bits;
    else if (key === "client_max_window_bits" && bits >= 8 && bits <= 15) options.clientMaxWindowBits = bits;
  }
  return options;
}

/**
 * Handles HTTP upgrade requests (for `server.on("upgrade")`): the request goes to the worker;
 * a 101 answer with a WebSocket completes the handshake (with `ws`) and joins the client to the
 * worker's end; any other answer is written back as a plain HTTP response.
 */
function upgradeHandler({ getWorker, dispatch, origin, onDone = () => {}, onError = (e) => e }) {
  const servers = new Map(); // a ws server per permessage-deflate setting
  return async (req, socket, head) => {
    socket.on("error", () => {});
    const started = process.hrtime.bigint();
    let status = 500;
    try {
      const response = await dispatch(getWorker(), { ...toDispatchInput(req, origin()), body: null });
      status = response.status;
      if (response.status === 101 && response.webSocket) {
        const deflate = deflateOptions(response.headers.get("sec-websocket-extensions"));
        const key = JSON.stringify(deflate);
        if (!servers.has(key)) {
          const { WebSocketServer } = require("ws");
          servers.set(key, new WebSocketServer({ noServer: true, maxPayload: 32 << 20, perMessageDeflate: deflate }));
        }
        servers.get(key).handleUpgrade(req, socket, head, (client) => bridge(client, response.webSocket));
      } else {
        const body = Buffer.from(await response.arrayBuffer());
        let text = `HTTP/1.1 ${response.status} ${response.statusText || http().STATUS_CODES[response.status] || ""}\r\n`;
        for (const [name, value] of response.headers) if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection") text += `${name}: ${value}\r\n`;
        socket.end(`${text}content-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString("latin1")}`, "latin1");
      }
    } catch (caught) {
      const page = errorResponse(await onError(caught, req), { method: req.method, url: req.url, headers: req.headers });
      status = 500;
      socket.end(`HTTP/1.1 500 Internal Server Error\r\ncontent-type: ${page.headers["content-type"]}\r\ncontent-length: ${Buffer.byteLength(page.body)}\r\nconnection: close\r\n\r\n${page.body}`);
    }
    onDone(req, status, Number(process.hrtime.bigint() - started) / 1e6);
  };
}

/**
 * Starts the dev server for the project in `dir` (a folder or config file). Options: `port`
 * (default the config's dev.port or 8787; 0 picks a free one), `host` (default 127.0.0.1), `env`,
 * `persistTo` (state in `<persistTo>/v3` as wrangler's --persist-to; default
 * `<root>/.wrangler/state/v3`, where wrangler dev keeps it; false for memory), `services`, `vars`,
 * `watch` (default true), `color` (default: stdout is a TTY), `log` (default console.log),
 * `logRequests` (default true), `verbose` (also list what is only worth knowing, such as config
 * keys used only when deploying), `cache` (default true; false turns off the bundle cache and
 * the code cache on disk).
 * Resolves to the server: `url`, `port`, `project`, `worker`, `reload()`, `close()`, and events
 * "reload" ({ ok, error?, changed }) and "request" ({ method, path, status, ms }).
 */
async function startDevServer(dir, options = {}) {
  // options.wrapDispatch (lib/project/multi.js): tail workers see each invocation.
  // The runtime (lib/api.js, the native addon) loads once the first bundle is on its way.
  const apiDispatch = (...args) => require("../api.js").dispatch(...args);
  const dispatch = options.wrapDispatch ? options.wrapDispatch(apiDispatch) : apiDispatch;
  const color = options.color ?? (Boolean(process.stdout.isTTY) && !process.env.NO_COLOR);
  const log = options.log ?? ((line) => console.log(line));
  const emitter = new EventEmitter();
  let closed = false;
  let project;
  let current = null; // { worker, inflight, retired }

  const onLog = (level, message) => {
    const label = paint(color, level === "error" ? "red" : level === "warn" ? "yellow" : "gray", `[${project?.name ?? "worker"}${level === "log" || level === "info" ? "" : ` ${level}`}]`);
    log(`${label} ${message}`);
    options.onWorkerLog?.(level, message);
  };
  const storeCache = new Map(); // KV/R2 stores outlive config reloads (in memory too)
  // --inspect: the worker (each generation of it) serves DevTools on this port.
  const inspect = options.inspect === undefined || options.inspect === false ? null : options.inspect === true ? 9229 : options.inspect;
  if (inspect !== null && (!Number.isInteger(inspect) || inspect < 0 || inspect > 65535)) throw new TypeError(`startDevServer: options.inspect must be true or a port number, got ${JSON.stringify(options.inspect)}`);
  // The caches (`cache: false` turns both off): the last bundle, reused at start when none of
  // its inputs changed (bundle-cache.js), and V8's code cache on disk (code-cache.js).
  const cache = options.cache !== false;
  const codeCacheDir = cache ? userCacheDir() : null;
  const workerExtra = () => ({
    // No warm spare of each build: the pool would boot a second isolate of the same bundle
    // beside the first request (on Remix's 2 MB bundle, 10-15 ms later answers on 2 cores)
    // for a create that comes only after a save that changed nothing, which the code cache
    // makes quick anyway.
    pool: false,
    ...(codeCacheDir ? { cacheDir: codeCacheDir } : {}),
    // options.streamingTails (lib/project/multi.js): streaming tail workers, as createWorker's.
    ...(options.streamingTails?.length ? { streamingTails: options.streamingTails } : {}),
    ...(inspect === null ? {} : { inspector: { port: inspect, host: "127.0.0.1", name: project.name ?? "worker" } }),
  });
  const loadOptions = (build) => ({ env: options.env, persistTo: options.persistTo, services: options.services, peers: options.peers, vars: options.vars, onLog, build, storeCache, migrate: options.migrate, incremental: true, cache });
  /** Says how the bundle cache fared: a damaged slot always, a hit or miss with --verbose. */
  const cacheNote = () => {
    const state = project?.cache;
    if (state?.status === "corrupt") log(paint(color, "yellow", `▲ ignoring the bundle cache ${state.message}`));
    else if (options.verbose && state?.status === "hit") log(paint(color, "gray", "⎔ bundle from the cache (nothing it was built from changed)"));
    else if (options.verbose && state?.status === "miss") log(paint(color, "gray", `⎔ bundling (not from the cache: ${state.message})`));
  };
  const load = (build = true) => loadProject(dir, loadOptions(build));
  const describe = (error) => describeProblem(error, { color, cwd: project?.root ?? process.cwd() });
  /** An uncaught error of an event, in the terminal with its mapped stack and what it belongs to. */
  const reportUncaught = (error, what) => {
    log(`${paint(color, "red", "✘ [ERROR]")} ${what}: Uncaught ${error?.stack ?? error}`);
    return error;
  };

  /** Runs the project's custom build (`build.command`), its output in the log. */
  const customBuild = async (build) => {
    log(paint(color, "cyan", `⎔ running the custom build: ${build.command}`));
    const outcome = await runBuild(build, (line, stream) => log(`${paint(color, stream === "stderr" ? "yellow" : "gray", "[build]")} ${line}`));
    if (outcome.ok) log(paint(color, "cyan", `⎔ custom build done in ${Math.round(outcome.ms)} ms`));
    else log(paint(color, "red", `✘ the custom build failed (${outcome.signal ?? `exit code ${outcome.code}`}): ${build.command}`));
    return outcome.ok;
  };

  // The custom build runs first: it may make the files the configuration names (main).
  mark("dev: start");
  // (lib/project/multi.js read it already: options.firstConfig.)
  // Its wrangler file, or its cloudflare.config.ts (lib/project/config-cloudflare.js).
  const first = options.firstConfig ?? (await require("./config-cloudflare.js").readProjectConfig(dir, { env: options.env, requireMain: false }));
  mark("dev: config read");
  if (first.build) await customBuild(first.build);

  // A configuration error stops here; a build or start-up error is shown (log and error page)
  // until an edit fixes it. Without a build, and with its main in place, the configuration
  // just read is the one to use; otherwise it is read again (and a missing main reported).
  // The first bundle starts before the bindings are made (bundleFirst).
  const reuse = !first.build && (first.mainFile === undefined || fs.existsSync(first.mainFile));
  // The first bundle is made without its source map, which follows once the first request is
  // answered (or sooner, for a stack that needs it): bundle()'s deferMap. Not with --inspect
  // (DevTools gets the map inline with the script).
  const firstOptions = { ...loadOptions(false), deferMap: inspect === null };
  project = reuse ? await projectFromConfig(first, { ...firstOptions, bundleFirst: true }) : await loadProject(dir, firstOptions);
  mark("dev: bindings, assets, migrations");
  if (project.redirectedFrom) {
    log(paint(color, "cyan", `⎔ using the configuration the build wrote: ${path.relative(process.cwd(), project.configFile) || project.configFile} (pointed to by .wrangler/deploy/config.json)`));
  }
  for (const warning of project.warnings) log(paint(color, "yellow", `▲ ${warning}`));
  if (options.verbose) for (const note of project.notes ?? []) log(paint(color, "gray", `· ${note}`));
  // State taken over on this start: an earlier layout's, wrangler's KV and R2 data.
  for (const note of project.stateNotes ?? []) log(paint(color, "cyan", `⎔ ${note}`));
  for (const { binding, dir: folder, applied } of project.migrations ?? []) {
    if (applied.length) log(`D1 ${binding}: applied ${applied.length} migration(s) from ${path.relative(process.cwd(), folder) || folder}: ${applied.join(", ")}`);
  }
  let failure = null; // why there is no worker although the project has one
  let lastFailed = false; // after a failed build any source change retries
  // The first worker is made while the server starts listening and the watcher starts; a
  // request that comes meanwhile waits for it (firstStart). A ConfigError rejects it.
  const firstStart = project.config.mainFile ? startFirst() : null;
  let started = firstStart === null;
  const firstSettled = firstStart?.then(() => {}, () => {}).finally(() => (started = true));
  async function startFirst() {
    try {
      const known = project.warnings.length;
      await project.rebuild();
      mark(`dev: bundle (${project.cache?.status ?? "no cache"})`);
      // The first bundle's esbuild process (booted by the CLI) ends, if this start did not need it.
      stopOneShotEsbuild();
      cacheNote();
      // The bundle's own warnings (esbuild's), found only now.
      for (const warning of project.warnings.slice(known)) log(paint(color, "yellow", `▲ ${warning}`));
      current = { worker: await startWorker(project, workerExtra()), inflight: 0 };
      mark("dev: worker created");
      if (current.worker.inspectorUrl) log(`Debugger listening on ${current.worker.inspectorUrl} (chrome://inspect, or attach from VS Code to 127.0.0.1:${inspect})`);
    } catch (error) {
      // A binding that cannot work (a Durable Object class the bundle does not export) stops the
      // start, as wrangler's does; a build or start-up error waits for an edit that fixes it.
      failure = error;
      if (error.name === "ConfigError") throw error;
      lastFailed = true;
      log(paint(color, "red", `✘ the worker failed to start; fix it and save to retry:\n${describe(error)}`));
    }
  }

  const retire = (generation) => {
    generation.retired = true;
    if (generation.inflight === 0) generation.worker.dispose().catch(() => {});
  };

  // Reloads (and the background esbuild context) wait for the first start.
  let reloading = firstSettled ?? Promise.resolve();
  let configPending = false; // a config reload failed: the next retry reloads the config too
  /** Rebuilds (and, when the config changed, reloads) the project, then swaps the worker. */
  function reload(changed = [], { config = false } = {}) {
    reloading = reloading.then(async () => {
      if (closed) return;
      config ||= configPending;
      try {
        if (config) {
          const next = await load();
          for (const warning of next.warnings) if (!project.warnings.includes(warning)) log(paint(color, "yellow", `▲ ${warning}`));
          await project.dispose?.();
          project = next;
          cacheNote();
          warmed = false;
          scheduleWarm(200);
        } else if (project.config.mainFile) {
          await project.rebuild();
        }
        const worker = project.options ? await startWorker(project, workerExtra()) : null;
        const old = current;
        current = worker ? { worker, inflight: 0 } : null;
        if (old) retire(old);
        const shown = changed.filter((f) => fs.existsSync(f) || project.inputs.includes(f)).map((f) => path.relative(project.root, f));
        log(paint(color, "green", `⎔ reloaded ${project.name ?? "worker"}${shown.length ? ` (${shown.join(", ")})` : ""}`));
        lastFailed = false;
        configPending = false;
        failure = null;
        emitter.emit("reload", { ok: true, changed });
      } catch (error) {
        lastFailed = true;
        configPending ||= config;
        if (!current) failure = error;
        log(paint(color, "red", `✘ reload failed, ${current ? "still serving the previous build" : "no worker is running"}:\n${describe(error)}`));
        emitter.emit("reload", { ok: false, error, changed });
      }
    });
    return reloading;
  }

  // After a start the bundle cache answered, or one whose first bundle was made without its
  // source map (deferMap), esbuild's context is made in the background once the first request
  // is answered (or after a second): the first reload is then an incremental rebuild, and its
  // build gives the source map (and the bundle cache's entry); should esbuild's bundle differ
  // from the one served, it is swapped in.
  let warmed = false;
  let warmTimer = null;
  let changesSeen = 0; // files the watcher reported
  function warmUp() {
    clearTimeout(warmTimer);
    // Without watching, nothing but an explicit reload() rebuilds: no context is worth keeping,
    // unless its build is the one that gives the source map.
    if (warmed || closed || (project?.cache?.status !== "hit" && !project?.mapper?.pending)) return;
    if (options.watch === false && !project?.mapper?.pending) return;
    warmed = true;
    reloading = reloading.then(async () => {
      if (closed) return;
      const seen = changesSeen;
      const what = project.mapper?.pending ? "the bundle served" : "the cached bundle";
      try {
        // A difference after an edit made meanwhile is that edit's: its own reload follows.
        if ((await project.warm()) && changesSeen === seen) {
          log(paint(color, "yellow", `▲ ${what} differs from esbuild's; reloading`));
          reload([]);
        }
      } catch {
        // A build error shows on the next save, as it would have.
      }
    });
  }
  function scheduleWarm(ms) {
    clearTimeout(warmTimer);
    warmTimer = setTimeout(warmUp, ms);
    warmTimer.unref?.();
  }
  // The code cache's folder is kept under its budget, off the start's path and every 25 reloads.
  let reloadsSincePrune = 0;
  const pruneTimer = codeCacheDir ? setTimeout(() => pruneCodeCache(codeCacheDir), 2000) : null;
  pruneTimer?.unref?.();
  emitter.on("reload", () => {
    if (codeCacheDir && ++reloadsSincePrune >= 25) {
      reloadsSincePrune = 0;
      pruneCodeCache(codeCacheDir);
    }
  });

  const isAssetFile = (file) => project.assets && (file === project.assets.directory || file.startsWith(project.assets.directory + path.sep));
  let watcher = null;
  let pending = new Set();
  let timer = null;
  /** Starts the watcher (once the server listens: its folder walk runs while the worker is made). */
  function startWatching() {
    if (options.watch === false) return;
    watcher = watchTree(project.projectRoot, (file) => {
      if (EDITOR_TEMP.test(path.basename(file))) return;
      changesSeen++;
      pending.add(file);
      clearTimeout(timer);
      // Editors save in bursts (write, rename, chmod) within a few ms; 8 ms gathers one save.
      timer = setTimeout(flush, 8);
    }, (message) => log(paint(color, "yellow", `▲ ${message}`)));
  }
  function flush() {
    const files = [...pending];
    pending = new Set();
    if (closed || files.length === 0) return;
    const configChanged = files.some((f) => f === project.configFile || f === project.redirectedFrom || /(^|[/\\])\.(dev\.vars|env)/.test(path.basename(f)));
    // Sources of the custom build: it runs again, then the worker reloads from its output.
    const build = project.config.build;
    if (build && files.some((f) => watchedByBuild(build, f))) {
      reloading = reloading.then(async () => {
        if (closed) return;
        if (await customBuild(build)) reload(files.filter((f) => watchedByBuild(build, f)), { config: true });
        else emitter.emit("reload", { ok: false, error: new Error(`the custom build failed: ${build.command}`), changed: files });
      });
      return;
    }
    if (files.some(isAssetFile)) {
      project.assets.refresh();
      emitter.emit("assets", { files: files.filter(isAssetFile) });
    }
    const inputs = new Set(project.inputs);
    // After a failed build any source file may be the fix (an import it could not resolve).
    const codeChanged = files.filter((f) => !isAssetFile(f) && (inputs.has(f) || (lastFailed && fs.existsSync(f))));
    const configFiles = files.filter((f) => f === project.configFile || f === project.redirectedFrom || /(^|[/\\])\.(dev\.vars|env)/.test(path.basename(f)));
    if (configChanged || codeChanged.length > 0) reload(configChanged ? [...configFiles, ...codeChanged] : codeChanged, { config: configChanged });
  }

  let address;
  const origin = () => `http://${address}`;
  let answered = false;
  const requestLog = (req, status, ms) => {
    if (!answered) {
      answered = true;
      mark(`dev: first answer ${status} (${ms.toFixed(1)} ms)`);
      // Node's fetch classes, for the requests that need them (see loadFetchClasses), once this
      // answer has gone out.
      setTimeout(loadFetchClasses, 10).unref?.();
    }
    if (!warmed) setImmediate(warmUp);
    const pathOnly = req.url.split("?")[0];
    emitter.emit("request", { method: req.method, path: pathOnly, status, ms });
    if (options.logRequests === false) return;
    log(`${paint(color, "bold", req.method)} ${pathOnly} ${paint(color, statusStyle(status), String(status))} ${paint(color, "gray", `(${ms.toFixed(1)} ms)`)}`);
  };

  async function scheduled(req, res, url) {
    const started = process.hrtime.bigint();
    const cron = url.searchParams.get("cron") ?? project.crons[0] ?? "";
    const time = url.searchParams.get("time");
    let status = 200;
    let body;
    try {
      if (!current) throw new Error("the project has no worker to run a scheduled event on");
      const result = await dispatch(current.worker, { type: "scheduled", cron, scheduledTime: time ? Number(time) : Date.now() });
      if (result.error) reportUncaught(await project.mappedError(result.error), `scheduled "${cron}"`);
      else if (result.outcome !== "ok") log(`${paint(color, "red", "✘ [ERROR]")} scheduled "${cron}": ${result.outcome}`);
      status = result.outcome === "ok" ? 200 : 500;
      body = JSON.stringify({ outcome: result.outcome, cron, noRetry: result.noRetry, ...(result.error ? { error: result.error.stack } : {}) });
    } catch (error) {
      status = 500;
      reportUncaught(await project.mappedError(error), `scheduled "${cron}"`);
      body = JSON.stringify({ outcome: "exception", cron, error: error.stack ?? String(error) });
    }
    res.writeHead(status, { "content-type": "application/json" }).end(`${body}\n`);
    requestLog(req, status, Number(process.hrtime.bigint() - started) / 1e6);
  }

  // The server is made after startFirst() has had its turn: a worker that needs no bundling (or
  // comes from the bundle cache) is then being created in its isolate while node:http loads and
  // the server starts listening (Node's dns and cluster modules), not after them.
  await new Promise((resolve) => setImmediate(resolve));
  const server = http().createServer((req, res) => {
    handle(req, res).catch((error) => {
      // Never let one request take the server down.
      log(paint(color, "red", `workerbox dev: ${req.method} ${req.url} failed: ${error.stack ?? error}`));
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`workerbox dev: ${error.message}\n`);
      else res.destroy();
    });
  });
  async function handle(req, res) {
    if (!started) await firstSettled;
    // A call from another dev server's binding (lib/project/multi.js) is answered there.
    if (options.onRequest && (await options.onRequest(req, res, current?.worker ?? null))) return;
    const url = requestUrl(req, origin());
    if (url.pathname === "/__scheduled") return scheduled(req, res, url);
    const generation = current;
    const hasWorker = generation !== null || failure !== null;
    // The assets answer first when an asset is meant (other methods than GET and HEAD get a 405
    // there, as on Cloudflare); the body is never read, so the request is made without it.
    // (A method fetch refuses, CONNECT or TRACE, is the worker's to answer.)
    const request = project.assets ? routedRequest(req, url) : null;
    if (request) {
      const started = process.hrtime.bigint();
      const answer = project.assets.route(request, hasWorker);
      if (answer) {
        await writeResponse(res, answer);
        return requestLog(req, answer.status, Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    if (!generation) {
      if (failure) {
        const page = errorResponse(failure, { method: req.method, url: req.url, headers: req.headers });
        res.writeHead(page.status, page.headers).end(page.body);
        return requestLog(req, page.status, 0);
      }
      res.writeHead(404).end("Not Found\n");
      return requestLog(req, 404, 0);
    }
    generation.inflight++;
    try {
      await toWorkerFor(generation)(req, res);
    } finally {
      generation.inflight--;
      if (generation.retired && generation.inflight === 0) generation.worker.dispose().catch(() => {});
    }
  }
  // The worker of the generation that accepted the request answers it, even if a reload swaps
  // in a new one meanwhile.
  const toWorkerFor = (generation) => nodeHandler({ getWorker: () => generation.worker, dispatch, origin, onDone: requestLog, onError: async (error, req) => reportUncaught(await project.mappedError(error), `${req.method} ${req.url}`) });

  // WebSocket upgrades reach the worker; a 101 answer with a WebSocket is joined to the client.
  const upgrade = upgradeHandler({
    getWorker: () => {
      if (!current) throw failure ?? new Error("the project has no worker");
      return current.worker;
    },
    dispatch,
    origin,
    onDone: requestLog,
    onError: async (error, req) => reportUncaught(await project.mappedError(error), `${req.method} ${req.url}`),
  });
  server.on("upgrade", async (req, socket, head) => {
    if (!started) await firstSettled;
    return upgrade(req, socket, head);
  });

  const port = options.port ?? project.config.dev?.port ?? 8787;
  const host = options.host ?? project.config.dev?.ip ?? "127.0.0.1";
  try {
    await new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await firstSettled;
    await project.dispose?.();
    if (current) await current.worker.dispose();
    if (error.code === "EADDRINUSE") {
      const taken = new Error(`port ${port} on ${host} is already in use; stop the other server or pass --port (0 picks a free port)`);
      taken.code = "EADDRINUSE";
      throw taken;
    }
    throw error;
  }
  mark("dev: listening");
  const bound = server.address();
  address = `${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`;
  startWatching();
  try {
    await firstStart;
  } catch (error) {
    // A binding that cannot work: the start stops (see startFirst()).
    watcher?.close();
    await new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    await project.dispose?.();
    throw error;
  }
  // Requests that waited for the worker go to it first (their dispatch starts the isolate's work):
  // what the caller does next (the CLI's log lines, the dev registry) runs while it answers.
  await new Promise((resolve) => setImmediate(resolve));
  scheduleWarm(1000);

  // Defined with their getters (Object.assign would copy what they return now): `worker` and
  // `project` follow reloads.
  return Object.defineProperties(emitter, Object.getOwnPropertyDescriptors({
    get url() {
      return `http://${address}/`;
    },
    port: bound.port,
    get project() {
      return project;
    },
    get worker() {
      return current?.worker ?? null;
    },
    server,
    reload: (changed) => reload(changed ?? [], { config: true }),
    /** Stops watching, closes the server (and its connections) and disposes the worker. */
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      clearTimeout(warmTimer);
      clearTimeout(pruneTimer);
      watcher?.close();
      await new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await reloading;
      await project?.dispose?.();
      if (current) await current.worker.dispose();
      current = null;
    },
  }));
}

module.exports = { upgradeHandler, startDevServer, nodeHandler, writeResponse, toDispatchInput, errorResponse };
