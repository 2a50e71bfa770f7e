// workerbox/test: helpers for node:test (or any runner whose test context has `after()`): a
// worker per test, disposed when the test ends; a project loaded with fresh in-memory storage per
// test, with its bindings usable from the test in Node; an outbound `fetch()` mock; and Workflow
// introspection (introspectWorkflow(), introspectWorkflowInstance(): lib/workflows/introspect.js).
"use strict";

const path = require("node:path");

function afterOf(t, name) {
  if (t === null || typeof t !== "object" || typeof t.after !== "function") {
    throw new TypeError(`${name}(t, …): t must be the test's context (node:test's \`t\`), whose after() disposes the worker`);
  }
  return (fn) => t.after(fn);
}

/** Calls into `worker` with relative URLs allowed (they resolve against http://localhost/). */
function calls(worker) {
  const { dispatch } = require("../../index.js");
  return {
    worker,
    fetch(input, init) {
      const request = input instanceof Request ? new Request(input, init) : new Request(new URL(String(input), "http://localhost/"), init);
      return dispatch(worker, request);
    },
    scheduled(options = {}) {
      return dispatch(worker, { type: "scheduled", cron: options.cron ?? "", scheduledTime: options.scheduledTime ?? Date.now() });
    },
    queue(queueName, messages) {
      return dispatch(worker, { type: "queue", queue: queueName, messages });
    },
  };
}

/** A worker for one test (createWorker's options), disposed when the test ends. */
async function useWorker(t, options) {
  const after = afterOf(t, "useWorker");
  const { createWorker } = require("../../index.js");
  const worker = await createWorker({ onLog: () => {}, ...options });
  after(() => worker.dispose());
  return calls(worker);
}

/**
 * The project in `dir` (its wrangler configuration) for one test: bundled, with fresh in-memory
 * storage (KV, R2, D1 with its migrations applied, Durable Objects), its worker started, and
 * `env`, its bindings as Node objects over the same storage. `options` are loadProject()'s
 * (`vars`, `services`, …) plus createWorker's `outbound`.
 */
async function useProject(t, dir = ".", options = {}) {
  const after = afterOf(t, "useProject");
  const { loadProject, startWorker } = require("../project/index.js");
  const { getPlatformProxy } = require("../project/platform.js");
  const { outbound, ...loadOptions } = options;
  const project = await loadProject(path.resolve(dir), { onLog: () => {}, ...loadOptions, persistTo: false });
  const worker = await startWorker(project, { pool: false, ...(outbound ? { outbound } : {}) });
  after(() => worker.dispose());
  const proxy = await getPlatformProxy({ project, worker });
  after(() => proxy.dispose());
  return { ...calls(worker), env: proxy.env, project };
}

/** `*` in a pattern matches any run of characters (also `/`); the rest is literal. */
function matcher(pattern) {
  const [method, url] = /^[A-Z]+ /.test(pattern) ? [pattern.slice(0, pattern.indexOf(" ")), pattern.slice(pattern.indexOf(" ") + 1)] : [null, pattern];
  const source = url.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  const regexp = new RegExp(`^${source}$`);
  return (request) => (method === null || request.method === method) && regexp.test(request.url);
}

/**
 * An `outbound` handler for createWorker/useWorker/useProject that answers the worker's fetch()
 * from `routes` (`{ "GET https://api.example.com/users/*": (request) => Response | Response }`,
 * method optional, `*` any characters), first match wins. A request no route matches fails the
 * worker's fetch() with an error naming it. `calls` records every request (method and URL).
 */
function mockFetch(routes) {
  if (routes === null || typeof routes !== "object") throw new TypeError("mockFetch(routes): routes must be an object of { pattern: response or handler }");
  const table = Object.entries(routes).map(([pattern, answer]) => ({ pattern, matches: matcher(pattern), answer }));
  const recorded = [];
  const outbound = async (request) => {
    recorded.push({ method: request.method, url: request.url });
    const route = table.find((r) => r.matches(request));
    if (!route) throw new Error(`mockFetch: no route for ${request.method} ${request.url} (routes: ${table.map((r) => r.pattern).join(", ") || "none"})`);
    const response = typeof route.answer === "function" ? await route.answer(request) : route.answer;
    if (!(response instanceof Response)) throw new TypeError(`mockFetch: the route "${route.pattern}" did not give a Response`);
    // A Response given as a value may be used more than once.
    return typeof route.answer === "function" ? response : response.clone();
  };
  outbound.calls = recorded;
  return outbound;
}

const { introspectWorkflow, introspectWorkflowInstance } = require("../workflows/introspect.js");

module.exports = { useWorker, useProject, mockFetch, introspectWorkflow, introspectWorkflowInstance };
