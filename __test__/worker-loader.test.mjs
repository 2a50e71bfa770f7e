// The Worker Loader binding (workerLoader(), wrangler's worker_loaders; lib/worker-loader.js and
// src/js/89_worker_loader.js): get(name, getCode) and load(code) give a WorkerStub whose
// getEntrypoint(name, { props }) calls into a worker of its own, as workerd's does. Checked here:
// RPC and fetch into the loaded worker's entrypoints with props (stubs in them too), reuse per
// name and loader id, env values and stubs, globalOutbound (a stub, inherited, null), module
// kinds, compatibility date and flags, and workerd's errors and messages.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, workerLoader, service } from "../index.js";
import { useWorker } from "./helpers.mjs";

/** A parent worker whose default fetch runs `body` (the inside of an async function of env and ctx) and answers its JSON result. */
function parentScript(body, extra = "") {
  return `import { WorkerEntrypoint } from "cloudflare:workers";
export class Greeter extends WorkerEntrypoint {
  greet(name) { return this.ctx.props.greeting + ", " + name + "!"; }
}
export let outboundTarget = { fetch() { return new Response("from outboundTarget"); } };
${extra}
export default { async fetch(request, env, ctx) {
  try {
    const result = await (async () => { ${body} })();
    return Response.json({ ok: result });
  } catch (e) {
    return Response.json({ error: { name: e.name, message: e.message } });
  }
} };`;
}

async function run(t, body, options = {}) {
  const worker = await useWorker(t, {
    script: parentScript(body, options.extra),
    format: "module",
    compatibilityDate: "2025-06-01",
    compatibilityFlags: ["enable_ctx_exports"],
    bindings: { LOADER: workerLoader(), SHARED1: workerLoader({ id: "s" }), SHARED2: workerLoader({ id: "s" }), ...options.bindings },
    ...(options.outbound ? { outbound: options.outbound } : {}),
  });
  const response = await dispatch(worker, "http://parent/");
  const out = await response.json();
  assert.equal(out.error, undefined, `the parent worker threw: ${JSON.stringify(out.error)}`);
  return out;
}

const GREETER = `
import { WorkerEntrypoint } from "cloudflare:workers";
export default { greet(name) { return "Hello, " + name; }, fetch(req, env) { return new Response("fetched " + new URL(req.url).pathname); } };
export let alternate = { greet(name, env, ctx) { return ctx.props.greeting + ", " + name; } };
export class Fancy extends WorkerEntrypoint {
  async run() { return [await this.ctx.props.a.greet("Dave"), await this.ctx.props.b.greet("Eve")].join("|"); }
}`;

test("worker loader: RPC and fetch into a loaded worker's entrypoints, with props (stubs too)", { timeout: 60_000 }, async (t) => {
  const out = await run(
    t,
    `const code = { compatibilityDate: "2025-01-01", mainModule: "foo.js", modules: { "foo.js": ${JSON.stringify(GREETER)} } };
    const w = env.LOADER.get("basics", () => code);
    const a = await w.getEntrypoint().greet("Alice");
    const b = await w.getEntrypoint("alternate", { props: { greeting: "Welcome" } }).greet("Bob");
    const f = await (await w.getEntrypoint().fetch("https://x/path")).text();
    const fancy = await w.getEntrypoint("Fancy", { props: { a: ctx.exports.Greeter({ props: { greeting: "G'day" } }), b: ctx.exports.Greeter({ props: { greeting: "Sup" } }) } }).run();
    const errors = [];
    try { w.getEntrypoint("Fancy", { props: { a: w.getEntrypoint("alternate") } }); } catch (e) { errors.push([e.name, e.message]); }
    try { w.getEntrypoint("Fancy", { props: { a: ctx.exports.Greeter } }); } catch (e) { errors.push([e.name, e.message]); }
    const loaded = env.LOADER.load(code);
    const viaLoad = await loaded.getEntrypoint().greet("Carol");
    return { a, b, f, fancy, errors, viaLoad };`,
  );
  assert.deepEqual(out.ok, {
    a: "Hello, Alice",
    b: "Welcome, Bob",
    f: "fetched /path",
    fancy: "G'day, Dave!|Sup, Eve!",
    errors: [
      ["DataCloneError", "Entrypoints to dynamically-loaded workers cannot be transferred to other Workers, because the system does not know how to reload this Worker from scratch. Instead, have the parent Worker expose an entrypoint which constructs the dynamic worker and forwards to it."],
      ["DataCloneError", 'Could not serialize object of type "LoopbackServiceStub". This type does not support serialization.'],
    ],
    viaLoad: "Hello, Carol",
  });
});

test("worker loader: one worker per name and loader id; getCode runs once; no name or load() is always new", { timeout: 60_000 }, async (t) => {
  const out = await run(
    t,
    `let loads = 0;
    const code = () => { loads++; return { compatibilityDate: "2025-01-01", mainModule: "m.js", modules: { "m.js": "import { WorkerEntrypoint } from 'cloudflare:workers'; let i = 0; export default class extends WorkerEntrypoint { next() { return i++; } }" } }; };
    const never = () => { throw new Error("getCode called again"); };
    const s1 = env.SHARED1.get("n", code).getEntrypoint();
    const s2 = env.SHARED2.get("n", never).getEntrypoint();
    const anon = env.LOADER.get("n", code).getEntrypoint();
    const seq = [await s1.next(), await s2.next(), await anon.next(), await env.LOADER.get("n", never).getEntrypoint().next()];
    const fresh = [await env.LOADER.get(null, code).getEntrypoint().next(), await env.LOADER.get(undefined, code).getEntrypoint().next()];
    return { seq, fresh, loads };`,
  );
  assert.deepEqual(out.ok, { seq: [0, 1, 0, 1], fresh: [0, 0], loads: 4 });
});

test("worker loader: env values and stubs, globalOutbound as a stub, inherited, or null", { timeout: 60_000 }, async (t) => {
  const fetcher = `export default { async fetch(req, env) { return new Response((await fetch(req)).status + " " + await (await fetch(req)).text()); } }`;
  const out = await run(
    t,
    `const mk = (name, extra) => env.LOADER.get(name, () => ({ compatibilityDate: "2025-01-01", mainModule: "f.js", modules: { "f.js": ${JSON.stringify(fetcher)} }, ...extra }));
    const envWorker = env.LOADER.get("env", () => ({ compatibilityDate: "2025-01-01", mainModule: "e.js",
      modules: { "e.js": "export default { async fetch(req, env) { return new Response([env.num, env.list.join(','), env.bytes.byteLength, await env.greeter.greet('Ann')].join(' ')); } }" },
      env: { num: 123, list: [1, 2], bytes: new Uint8Array(3), greeter: ctx.exports.Greeter({ props: { greeting: "Hi" } }) } }));
    const envText = await (await envWorker.getEntrypoint().fetch("https://x/")).text();
    const overridden = await (await mk("o", { globalOutbound: ctx.exports.outboundTarget }).getEntrypoint().fetch("https://x/")).text();
    const inherited = await (await mk("i", {}).getEntrypoint().fetch("https://x/")).text();
    let nullError;
    try { await mk("z", { globalOutbound: null }).getEntrypoint().fetch("https://x/"); } catch (e) { nullError = [e.name, e.message]; }
    return { envText, overridden, inherited, nullError };`,
    { outbound: (request) => new Response("from the parent's outbound " + new URL(request.url).host) },
  );
  assert.deepEqual(out.ok, {
    envText: "123 1,2 3 Hi, Ann!",
    overridden: "200 from outboundTarget",
    inherited: "200 from the parent's outbound x",
    nullError: ["Error", "This worker is not permitted to access the internet via global functions like fetch(). It must use capabilities (such as bindings in 'env') to talk to the outside world."],
  });
});

test("worker loader: js, cjs, text, data, json and wasm modules; compatibility date and flags", { timeout: 60_000 }, async (t) => {
  const wasm = [0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 127, 127, 1, 127, 3, 2, 1, 0, 7, 7, 1, 3, 97, 100, 100, 0, 0, 10, 9, 1, 7, 0, 32, 0, 32, 1, 106, 11];
  const out = await run(
    t,
    `const w = env.LOADER.get("kinds", () => ({ compatibilityDate: "2025-01-01", mainModule: "main.js", modules: {
      "main.js": { js: "import t from './t.txt'; import j from './d.json'; import c from './c.cjs'; import b from './b.dat'; import m from './m.wasm'; import { WorkerEntrypoint } from 'cloudflare:workers'; export default class extends WorkerEntrypoint { async all() { const i = await WebAssembly.instantiate(m); return [t, j.v, c.hi('x'), new TextDecoder().decode(b), i.exports.add(2, 3)]; } }" },
      "t.txt": { text: "text!" }, "d.json": { json: { v: 42 } }, "c.cjs": { cjs: "module.exports = { hi: (n) => 'cjs ' + n };" },
      "b.dat": { data: new TextEncoder().encode("bytes!") }, "m.wasm": { wasm: new Uint8Array(${JSON.stringify(wasm)}) } } }));
    const probe = "import { WorkerEntrypoint } from 'cloudflare:workers'; export default class extends WorkerEntrypoint { node() { return typeof process !== 'undefined'; } cache() { try { new Request('https://x', { cache: 'no-store' }); return true; } catch { return false; } } }";
    const old = env.LOADER.get("old", () => ({ compatibilityDate: "2023-01-01", compatibilityFlags: ["nodejs_compat", "nodejs_compat_v2"], mainModule: "p.js", modules: { "p.js": probe } })).getEntrypoint();
    const recent = env.LOADER.get("new", () => ({ compatibilityDate: "2025-01-01", mainModule: "p.js", modules: { "p.js": probe } })).getEntrypoint();
    return { all: await w.getEntrypoint().all(), old: [await old.node(), await old.cache()], recent: [await recent.node(), await recent.cache()] };`,
  );
  assert.deepEqual(out.ok, { all: ["text!", 42, "cjs x", "bytes!", 5], old: [true, false], recent: [false, true] });
});

test("worker loader: getCode errors, startup errors, TypeScript and mixed Python modules fail the calls as in workerd", { timeout: 60_000 }, async (t) => {
  const out = await run(
    t,
    `const failure = async (w, call = (e) => e.greet("x")) => { try { await call(w.getEntrypoint()); return "no error"; } catch (e) { return [e.name, e.message]; } };
    const js = "export default { greet(n) { return n; } }";
    return {
      thrown: await failure(env.LOADER.get("t", () => { throw new Error("Code loader failed!"); })),
      asyncCode: await env.LOADER.get("a", async () => { await new Promise((r) => setTimeout(r, 1)); return { compatibilityDate: "2025-01-01", mainModule: "a.js", modules: { "a.js": js } }; }).getEntrypoint().greet("later"),
      startup: await failure(env.LOADER.get("s", () => ({ compatibilityDate: "2025-01-01", mainModule: "s.js", modules: { "s.js": "throw new Error('intentional startup error'); export default {};" } }))),
      ts: await failure(env.LOADER.get("ts", () => ({ compatibilityDate: "2025-01-01", mainModule: "main.ts", modules: { "main.ts": js } })), (e) => e.fetch("https://x/")),
      mixed: await failure(env.LOADER.get("mx", () => ({ compatibilityDate: "2025-01-01", mainModule: "foo.js", modules: { "foo.js": js, "foo.py": "x = 1" } }))),
      mixedPy: await failure(env.LOADER.get("mp", () => ({ compatibilityDate: "2025-01-01", mainModule: "foo.py", modules: { "foo.js": js, "foo.py": "x = 1" } }))),
      twoFields: await failure(env.LOADER.get("tf", () => ({ compatibilityDate: "2025-01-01", mainModule: "a.js", modules: { "a.js": { js, text: "x" } } }))),
    };`,
  );
  const { startup, ...rest } = out.ok;
  assert.match(startup[1], /intentional startup error/);
  assert.doesNotMatch(startup[1], /internal error/);
  assert.deepEqual(rest, {
    thrown: ["Error", "Code loader failed!"],
    asyncCode: "later",
    ts: ["TypeError", "Module name must end with '.js' or '.py' (or the content must be an object indicating the type explicitly). Got: main.ts. If you're trying to load TypeScript, bundle it first with '@cloudflare/worker-bundler' and pass the generated JavaScript modules."],
    mixed: ["TypeError", 'Module "foo.py" is a Python module, but the main module isn\'t a Python module.'],
    mixedPy: ["TypeError", 'Module "foo.js" is a JS module, but the main module is a Python module.'],
    twoFields: ["TypeError", "Each module must contain exactly one of 'js', 'cjs', 'text', 'data', 'json', 'py', or 'wasm'. Module 'a.js' contained 2 properties."],
  });
});

test("worker loader: the loaded worker runs in its own isolate and goes with its parent", { timeout: 60_000 }, async (t) => {
  const logs = [];
  const parent = await createWorker({
    script: `export default { async fetch(req, env) {
      const w = env.LOADER.get("own", () => ({ compatibilityDate: "2025-01-01", mainModule: "o.js", modules: { "o.js": "globalThis.mark = 'child'; export default { check() { console.log('child log'); return [globalThis.mark, typeof globalThis.parentMark]; } }" } }));
      globalThis.parentMark = "parent";
      return Response.json(await w.getEntrypoint().check(null));
    } }`,
    format: "module",
    compatibilityDate: "2025-06-01",
    bindings: { LOADER: workerLoader() },
    onLog: (level, message) => logs.push(message),
  });
  try {
    assert.deepEqual(await (await dispatch(parent, "http://p/")).json(), ["child", "undefined"]);
    assert.ok(logs.includes("child log"), `the loaded worker's console goes to the parent's onLog: ${JSON.stringify(logs)}`);
  } finally {
    await parent.dispose();
  }
  assert.throws(() => workerLoader({ id: "" }), /options\.id must be a non-empty string/);
  assert.throws(() => workerLoader({ ids: "x" }), /unknown option "ids"/);
  assert.throws(() => service(1), /service\(\)/);
});

test("worker loader: worker_loaders in a wrangler config (loadProject), not inherited by environments", { timeout: 120_000 }, async (t) => {
  const { loadProject, startWorker, readConfig } = await import("workerbox/project");
  const fs = await import("node:fs");
  const os = await import("node:os");
  const path = await import("node:path");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-loader-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify({ name: "app", main: "worker.js", compatibility_date: "2025-06-01", worker_loaders: [{ binding: "LOADER" }], env: { staging: {} } }));
  fs.writeFileSync(
    path.join(dir, "worker.js"),
    `export default { async fetch(request, env) {
      const w = env.LOADER.get("x", () => ({ compatibilityDate: "2025-06-01", mainModule: "m.js", modules: { "m.js": "export default { fetch() { return new Response('loaded'); } }" } }));
      return w.getEntrypoint().fetch(request);
    } };`,
  );
  const project = await loadProject(dir, { persistTo: false });
  const worker = await startWorker(project, { onLog: () => {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://app/")).text(), "loaded");
  const staging = await readConfig(dir, { env: "staging" });
  assert.deepEqual(staging.bindings.workerLoaders, [], "worker_loaders is not inherited by an environment, as in wrangler");
});

test("worker loader: loaded workers are disposed with their parent (their timers stop)", { timeout: 60_000 }, async () => {
  const ticks = [];
  const parent = await createWorker({
    // The loaded worker's call never ends: it ticks until its worker is gone.
    script: `export default { async fetch(req, env, ctx) {
      const w = env.LOADER.get("ticker", () => ({ compatibilityDate: "2025-01-01", mainModule: "t.js", modules: { "t.js": "export default { start() { return new Promise(() => setInterval(() => console.log('tick'), 5)); } }" } }));
      ctx.waitUntil(w.getEntrypoint().start(null).catch(() => {}));
      return new Response("started");
    } }`,
    format: "module",
    compatibilityDate: "2025-06-01",
    bindings: { LOADER: workerLoader() },
    onLog: (level, message) => message === "tick" && ticks.push(Date.now()),
  });
  assert.equal(await (await dispatch(parent, "http://p/")).text(), "started");
  const deadline = Date.now() + 5_000;
  while (ticks.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ticks.length >= 3, `the loaded worker's interval runs (${ticks.length} ticks)`);
  await parent.dispose();
  await new Promise((r) => setTimeout(r, 100)); // its disposal is under way when the parent's resolves
  const after = ticks.length;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(ticks.length, after, "no tick after the parent was disposed");
});

test("worker loader: Miniflare's workerLoaders option (workerbox/vitest) makes the binding", async () => {
  const { addMiniflareBindings } = await import("../lib/vitest/miniflare-options.js");
  const api = await import("../index.js");
  const bindings = {};
  addMiniflareBindings(bindings, { workerLoaders: { LOADER: {} } }, { where: "test", api });
  assert.equal(bindings.LOADER?.constructor?.name, "WorkerLoaderBinding");
});

test("Durable Object facets: ctx.facets.get() with ctx.exports.<Class>({ props }) and a loaded worker's getDurableObjectClass()", { timeout: 60_000 }, async (t) => {
  const actor = `import { DurableObject } from "cloudflare:workers";
export class Actor extends DurableObject {
  i = 0;
  inc() { return ++this.i; }
  props() { const { g, ...rest } = this.ctx.props; return rest; }
  viaParent() { return this.ctx.facets.get("g", () => ({ class: this.ctx.props.g })).greet("Bob"); }
}`;
  const worker = await useWorker(t, {
    script: `import { DurableObject } from "cloudflare:workers";
export class Greeter extends DurableObject {
  n = 0;
  greet(name) { return this.ctx.props.greeting + ", " + name; }
  count() { return ++this.n; }
}
export class Holder extends DurableObject {
  async run() {
    const w = this.env.LOADER.get("facets", () => ({ compatibilityDate: "2025-01-01", mainModule: "a.js", modules: { "a.js": ${JSON.stringify(actor)} } }));
    const local = this.ctx.facets.get("local", () => ({ class: this.ctx.exports.Greeter({ props: { greeting: "Hi" } }) }));
    const loaded = this.ctx.facets.get("loaded", () => ({ class: w.getDurableObjectClass("Actor", { props: { x: 1, g: this.ctx.exports.Greeter({ props: { greeting: "Yo" } }) } }) }));
    return [await local.greet("Ann"), await local.count(), await local.count(), await loaded.inc(), await loaded.inc(), await loaded.props(), await loaded.viaParent(), typeof this.ctx.exports.Greeter.idFromName];
  }
}
export default { async fetch(req, env, ctx) { return Response.json(await ctx.exports.Holder.getByName("h").run()); } };`,
    format: "module",
    compatibilityDate: "2025-06-01",
    compatibilityFlags: ["enable_ctx_exports"],
    bindings: { LOADER: workerLoader() },
  });
  assert.deepEqual(await (await dispatch(worker, "http://p/")).json(), ["Hi, Ann", 1, 2, 1, 2, { x: 1 }, "Yo, Bob", "function"]);
});
