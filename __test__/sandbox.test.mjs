// The isolate is a sandbox: no Node globals, Web-style globals only, no code from strings
// unless the host allows it.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";
import { spawnNodeSync } from "./child-node.mjs";

test("no Node globals inside the worker", async (t) => {
  const probe = `return {
    process: typeof process, require: typeof require, Buffer: typeof Buffer, module: typeof module,
    global: typeof global, setImmediate: typeof setImmediate, __dirname: typeof __dirname,
  };`;
  // Before nodejs_compat is on by date, none of them exists.
  const old = await evalInWorker(t, probe, { compatibilityDate: "2024-01-01" });
  for (const [name, type] of Object.entries(old)) assert.equal(type, "undefined", name);
  // With it (the default date), Buffer, process, global and setImmediate are workerd's own, never the host's.
  const current = await evalInWorker(t, `${probe.replace("return {", "const seen = {")}
    const code = (fn) => { try { fn(); return "no error"; } catch (e) { return e.code; } };
    return { ...seen, hostProcess: [process.pid, process.versions.v8, code(() => process.binding("fs")), code(() => process.dlopen({}, "x.node")), typeof process.mainModule, process.execPath] };`);
  // process v2 (implied by the default date) has workerd's fixed pid and versions and stubs
  // where Node reaches into the host: nothing of the host process shows.
  assert.deepEqual(current, {
    process: "object", require: "undefined", Buffer: "function", module: "undefined", global: "object", setImmediate: "function", __dirname: "undefined",
    hostProcess: [1, "", "ERR_METHOD_NOT_IMPLEMENTED", "ERR_METHOD_NOT_IMPLEMENTED", "undefined", ""],
  });
});

test("globalThis and self are the global scope", async (t) => {
  const result = await evalInWorker(t, `return { self: self === globalThis, global: typeof globalThis, fetchEvent: typeof FetchEvent };`);
  assert.deepEqual(result, { self: true, global: "object", fetchEvent: "function" });
});

test("eval and new Function throw EvalError by default", async (t) => {
  const result = await evalInWorker(t, `
    const names = [];
    try { eval("1 + 1"); names.push("eval ran"); } catch (e) { names.push(e.name); }
    try { new Function("return 1")(); names.push("Function ran"); } catch (e) { names.push(e.name); }
    try { setTimeout("1"); names.push("string timer accepted"); } catch (e) { names.push(e.name); }
    return names;`);
  assert.deepEqual(result, ["EvalError", "EvalError", "TypeError"]);
});

test("allowEval: true lets eval and new Function run", async (t) => {
  const result = await evalInWorker(t, `return [eval("1 + 1"), new Function("a", "return a * 3")(5)];`, { allowEval: true });
  assert.deepEqual(result, [2, 15]);
});

test("the private ops and internals objects are not reachable", async (t) => {
  const result = await evalInWorker(t, `return {
    ops: typeof ops, internals: typeof internals,
    globals: Object.getOwnPropertyNames(globalThis).filter((n) => n === "ops" || n === "internals"),
  };`);
  assert.deepEqual(result, { ops: "undefined", internals: "undefined", globals: [] });
});

test("workers made from the startup snapshot share no state and no random sequence", async (t) => {
  const script = `export default { fetch() {
    globalThis.count = (globalThis.count ?? 0) + 1;
    return Response.json({ count: globalThis.count, random: [Math.random(), Math.random()], origin: performance.now() });
  } }`;
  const [a, b] = await Promise.all([useWorker(t, { script }), useWorker(t, { script })]);
  const first = await (await dispatch(a, "http://localhost/")).json();
  const again = await (await dispatch(a, "http://localhost/")).json();
  const other = await (await dispatch(b, "http://localhost/")).json();
  assert.equal(first.count, 1);
  assert.equal(again.count, 2);
  assert.equal(other.count, 1);
  assert.notDeepEqual(first.random, other.random);
  assert.ok(Math.abs(first.origin - Date.now()) < 60_000, "performance.now() is on this worker's clock (Date.now()'s scale, as workerd's), not the snapshot's");
});

test("isolates boot from source when the snapshot is disabled (WORKERBOX_NO_SNAPSHOT=1)", () => {
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  const code = `
    const { createWorker, dispatch } = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => {
      const w = await createWorker({ script: "export default { fetch() { return new Response(typeof ReadableStream + ' ' + new URL('http://a/b').pathname) } }", onLog() {} });
      console.log(await (await dispatch(w, "http://localhost/")).text());
      await w.dispose();
    })();`;
  const result = spawnNodeSync(["-e", code], { encoding: "utf8", timeout: 20000, env: { ...process.env, WORKERBOX_NO_SNAPSHOT: "1" } });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), "function /b");
});
