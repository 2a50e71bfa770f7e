// Bad scripts, throwing handlers and bad arguments: every failure is a clear error, and the
// worker (and the host process) carry on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const OK = `export default { fetch() { return new Response("ok") } }`;

test("a syntax error rejects createWorker with a SyntaxError naming file, line and column", async () => {
  await assert.rejects(
    createWorker({ script: "export default {\n  fetch() {\n    return 1 +;\n  }\n}\n", filename: "src/broken.js", onLog() {} }),
    (error) => {
      assert.ok(error instanceof SyntaxError);
      assert.match(error.message, /^Unexpected token ';' \(at src\/broken\.js:3:15\)$/);
      assert.equal(error.fileName, "src/broken.js");
      assert.equal(error.lineNumber, 3);
      assert.equal(error.columnNumber, 15);
      assert.match(error.stack, /src\/broken\.js:3:15/);
      return true;
    },
  );
});

test("an import no module answers rejects createWorker naming the import and its importer, with no made-up location", async () => {
  await assert.rejects(
    createWorker({ script: 'import x from "./missing.js";\nexport default { fetch() { return new Response(x) } }', filename: "/app/main.js", onLog() {} }),
    (error) => {
      assert.match(error.message, /Cannot resolve module "\.\/missing\.js" imported by "\/app\/main\.js"/);
      // V8 gives no script for this error: no file "undefined" at line 0.
      assert.deepEqual([error.fileName, error.lineNumber, error.columnNumber], [undefined, undefined, undefined]);
      return true;
    },
  );
});

test("a service-worker script with a syntax error reports it too", async () => {
  await assert.rejects(
    createWorker({ script: "addEventListener('fetch', (e) => {\n  e.respondWith(new Response('x');\n});", filename: "sw.js", onLog() {} }),
    (error) => error instanceof SyntaxError && /sw\.js:2:/.test(error.message),
  );
});

test("scripts without any handler are rejected clearly; RPC methods alone start, and a fetch to them fails", async () => {
  await assert.rejects(createWorker({ script: "export const x = 1;", onLog() {} }), /no default export/);
  await assert.rejects(createWorker({ script: "export default {}", onLog() {} }), /no fetch\(\), scheduled\(\) or queue\(\) handler/);
  // A default export of RPC methods alone starts, as in workerd (it is reached by RPC); a fetch
  // to it fails with workerd's message.
  const rpcOnly = await createWorker({ script: "export default { hello() {} }", onLog() {} });
  try {
    await assert.rejects(rpcOnly.dispatch(new Request("http://x/")), /Handler does not export a fetch\(\) function/);
  } finally {
    await rpcOnly.dispose();
  }
  await assert.rejects(createWorker({ script: "console.log('nothing here')", onLog() {} }), /registered no fetch \(or scheduled, or queue\) event listener/);
  await assert.rejects(createWorker({ script: "addEventListener('message', () => {})", onLog() {} }), /registered no fetch \(or scheduled, or queue\) event listener/);
});

test("an exception at start-up keeps its name, message and stack", async () => {
  await assert.rejects(
    createWorker({ script: "function boot() { throw new RangeError('bad config') }\nboot();\nexport default { fetch() {} }", filename: "boot.js", onLog() {} }),
    (error) => error instanceof RangeError && error.message === "bad config" && /boot\.js:1:/.test(error.stack),
  );
});

test("imports are refused with a message that says to bundle", async () => {
  await assert.rejects(
    createWorker({ script: "import x from './dep.js';\nexport default { fetch() { return new Response(x) } }", onLog() {} }),
    /Cannot resolve module "\.\/dep\.js".*bundle/,
  );
});

test("a handler's exception rejects dispatch with the worker's name, message and stack", async (t) => {
  const worker = await useWorker(t, {
    filename: "handler.js",
    script: `class QuotaError extends Error { constructor(m) { super(m); this.name = "QuotaError"; } }
export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === "/type") null.boom;
    if (path === "/custom") throw new QuotaError("over quota");
    if (path === "/string") throw "just a string";
    if (path === "/async") await Promise.reject(new RangeError("later"));
    return new Response("fine");
  },
};`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/type"), (error) => {
    assert.ok(error instanceof TypeError);
    assert.match(error.message, /null/);
    assert.match(error.stack, /handler\.js:5:\d+/);
    return true;
  });
  await assert.rejects(dispatch(worker, "http://localhost/custom"), (error) => {
    assert.equal(error.name, "QuotaError");
    assert.equal(error.message, "over quota");
    assert.match(error.stack, /^QuotaError: over quota\n\s+at /);
    return true;
  });
  await assert.rejects(dispatch(worker, "http://localhost/string"), /just a string/);
  await assert.rejects(dispatch(worker, "http://localhost/async"), (error) => error instanceof RangeError && error.message === "later");
  // The worker is still usable.
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "fine");
});

test("returning something other than a Response is a TypeError saying what came back", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/string") return "hello";
      if (path === "/object") return { status: 200 };
      if (path === "/error") return Response.error();
    } }`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/undefined"), (e) => e instanceof TypeError && /returned undefined/.test(e.message));
  await assert.rejects(dispatch(worker, "http://localhost/string"), (e) => e instanceof TypeError && /returned a string/.test(e.message));
  await assert.rejects(dispatch(worker, "http://localhost/object"), (e) => e instanceof TypeError && /type Object/.test(e.message));
  await assert.rejects(dispatch(worker, "http://localhost/error"), (e) => e instanceof TypeError && /Response\.error/.test(e.message));
});

test("a service worker whose listener never responds rejects clearly", async (t) => {
  const worker = await useWorker(t, { script: `addEventListener("fetch", () => {});` });
  await assert.rejects(dispatch(worker, "http://localhost/"), /respondWith/);
});

test("bad createWorker options throw a TypeError naming the option", async () => {
  const cases = [
    [undefined, /options must be an object/],
    ["script", /options must be an object/],
    [{}, /options\.script must be a string/],
    [{ script: 42 }, /options\.script must be a string/],
    [{ script: OK, format: "commonjs" }, /options\.format/],
    [{ script: OK, filename: "" }, /options\.filename/],
    [{ script: OK, onLog: "yes" }, /options\.onLog/],
    [{ script: OK, allowEval: 1 }, /options\.allowEval/],
    [{ script: OK, bindings: [] }, /options\.bindings/],
    [{ script: OK, bindings: { F: () => 1 } }, /options\.bindings\.F is a function/],
    [{ script: OK, bindings: { B: 1n } }, /options\.bindings\.B is a bigint/],
    [{ script: OK, scirpt: "typo" }, /unknown option "scirpt"/],
  ];
  for (const [options, message] of cases) {
    await assert.rejects(createWorker(options), (error) => error instanceof TypeError && message.test(error.message), String(message));
  }
  const cyclic = {};
  cyclic.self = cyclic;
  await assert.rejects(createWorker({ script: OK, bindings: { C: cyclic } }), /options\.bindings\.C cannot be encoded/);
});

test("bad dispatch arguments throw a TypeError naming the problem", async (t) => {
  const worker = await useWorker(t, { script: OK });
  const cases = [
    [[{}, "http://localhost/"], /first argument must be a worker/],
    [[worker, "not a url"], /invalid URL "not a url"/],
    [[worker, "/relative"], /invalid URL/],
    [[worker, 42], /must be a Request, a URL/],
    [[worker, { url: 42 }], /request\.url must be a string or URL/],
    [[worker, { url: "http://localhost/", method: "BAD METHOD" }], /invalid request\.method/],
    [[worker, { url: "http://localhost/", headers: { "bad name": "x" } }], /invalid header name "bad name"/],
    [[worker, { url: "http://localhost/", headers: { ok: "a\nb" } }], /header "ok" contains/],
    [[worker, { url: "http://localhost/", body: "x" }], /GET request cannot have a body/],
    [[worker, { url: "http://localhost/", method: "POST", body: 12 }], /request\.body must be/],
  ];
  for (const [args, message] of cases) {
    await assert.rejects(dispatch(...args), (error) => error instanceof TypeError && message.test(error.message), String(message));
  }
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "ok");
});

test("dispatch on a disposed worker throws; dispose twice is harmless", async () => {
  const worker = await createWorker({ script: OK, onLog() {} });
  await worker.dispose();
  await worker.dispose();
  assert.equal(worker.disposed, true);
  await assert.rejects(dispatch(worker, "http://localhost/"), (e) => e instanceof TypeError && /disposed/.test(e.message));
});

test("dispose answers requests still in flight", async () => {
  const worker = await createWorker({ script: `export default { fetch() { return new Promise(() => setTimeout(() => {}, 60000)) } }`, onLog() {} });
  const outcome = assert.rejects(dispatch(worker, "http://localhost/"), (e) => e.code === "ERR_WORKER_DISPOSED" && /disposed/.test(e.message));
  await new Promise((resolve) => setTimeout(resolve, 20));
  await worker.dispose();
  await outcome;
});

test("dispose racing node: module loads answers ERR_WORKER_DISPOSED, never the loader's own failure", { timeout: scaled(120_000) }, async () => {
  // Each request imports every node: module; the worker is disposed 0-12 ms in, mostly while a
  // module's factory is compiled or run. Before the fix an op caught the termination and threw a
  // TypeError in its place, so the handler went on and failed with "ops.nodeModuleFactory(...)
  // is not a function" (about 4 in 10 rounds on x64, more under qemu).
  const script = `import { builtinModules } from "node:module";
    export default { async fetch() {
      for (const name of builtinModules) {
        try { await import("node:" + name); } catch (e) { if (!/not enabled|No such module/.test(String(e))) throw e; }
      }
      return new Response("loaded");
    } }`;
  const outcomes = {};
  const started = Date.now();
  for (let round = 0; round < 200 && Date.now() - started < 4000; round++) {
    const worker = await createWorker({ script, compatibilityFlags: ["nodejs_compat"], compatibilityDate: "2025-09-01", onLog() {} });
    const outcome = dispatch(worker, "http://localhost/").then(
      async (response) => `answered ${await response.text()}`,
      (e) => (e.code === "ERR_WORKER_DISPOSED" ? e.code : `${e.code} ${e.name}: ${e.message}`),
    );
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 12));
    await worker.dispose();
    const key = await outcome;
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  const other = Object.keys(outcomes).filter((k) => k !== "ERR_WORKER_DISPOSED" && k !== "answered loaded");
  assert.deepEqual(other, [], JSON.stringify(outcomes));
  assert.ok(outcomes.ERR_WORKER_DISPOSED > 0, JSON.stringify(outcomes));
});

test("an onLog handler that throws does not break the worker or the host", async (t) => {
  const original = console.error;
  const reported = [];
  console.error = (...args) => reported.push(args);
  try {
    const worker = await useWorker(t, {
      script: `export default { fetch() { console.log("x"); return new Response("still ok") } }`,
      onLog() { throw new Error("logger exploded"); },
    });
    assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "still ok");
    await waitFor(() => reported.length > 0);
  } finally {
    console.error = original;
  }
  assert.ok(reported.some((args) => String(args[1]).includes("logger exploded")));
});

test("a handler promise that nothing can settle rejects at once instead of hanging", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch(request) {
      if (new URL(request.url).pathname === "/late") return new Promise((resolve) => setTimeout(() => resolve(new Response("late")), 30));
      return new Promise(() => {});
    } }`,
  });
  await assert.rejects(dispatch(worker, "http://localhost/never"), (e) => e.code === "ERR_NEVER_RESPONDS" && /will never respond/.test(e.message));
  // A pending timer is something that can still settle the promise: no false alarm.
  assert.equal(await (await dispatch(worker, "http://localhost/late")).text(), "late");
});
