// The isolate is a sandbox: no Node globals, Web-style globals only, no code from strings
// unless the host allows it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

test("no Node globals inside the worker", async (t) => {
  const result = await evalInWorker(t, `return {
    process: typeof process, require: typeof require, Buffer: typeof Buffer, module: typeof module,
    global: typeof global, setImmediate: typeof setImmediate, __dirname: typeof __dirname,
  };`);
  for (const [name, type] of Object.entries(result)) assert.equal(type, "undefined", name);
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
