// Error stacks leave out the runtime's own frames (workerbox:internal/…), as workerd's have none
// to show, and a script's Error.prepareStackTrace still gets the call sites. The expected stacks
// are what workerd (Miniflare 4.20260426.0) gave for the same script, its file name put in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

const SCRIPT = `function inner() { return new Error("boom"); }
async function later() { await null; throw new Error("async"); }
export default { async fetch() {
  const out = {};
  out.plain = inner().stack;
  const reader = new ReadableStream().getReader();
  reader.releaseLock();
  try { reader.read(); } catch (e) { out.fromApi = e.stack.split("\\n").slice(1); }
  try { await later(); } catch (e) { out.async = e.stack; }
  try { await new Response("{").json(); } catch (e) { out.json = e.stack.split("\\n").slice(1); }
  Error.prepareStackTrace = (error, sites) => [String(error), ...sites.map((s) => s.getFunctionName() + ":" + s.getLineNumber())].join("|");
  out.prepared = new Error("x").stack;
  Error.prepareStackTrace = undefined;
  const target = {};
  Error.captureStackTrace(target);
  out.captured = target.stack;
  return Response.json(out);
} }`;

const WORKERD = {"plain":"Error: boom\n    at inner (worker.js:1:27)\n    at Object.fetch (worker.js:5:15)","async":"Error: async\n    at later (worker.js:2:44)\n    at async Object.fetch (worker.js:9:9)","json":["    at async Object.fetch (worker.js:10:9)"],"prepared":"Error: x|fetch:12","captured":"Error\n    at Object.fetch (worker.js:15:9)"};

test("stacks show the worker's frames only, as workerd's do", async (t) => {
  const worker = await useWorker(t, { script: SCRIPT, filename: "worker.js", compatibilityDate: "2025-06-01" });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(out, WORKERD);
});

test("an error thrown out of the handler reaches the host without the runtime's frames", async (t) => {
  const worker = await useWorker(t, { script: `export default { fetch() { throw new TypeError("out"); } }`, filename: "worker.js" });
  const error = await dispatch(worker, "http://localhost/").then(() => null, (e) => e);
  assert.equal(error?.name, "TypeError");
  assert.equal(error.stack, "TypeError: out\n    at Object.fetch (worker.js:1:34)");
});

// The first line is V8's: the message the error was made with (workerd's V8 writes it so too), the
// name as it is when the stack is first read; an object given a stack by Error.captureStackTrace
// has no message of its own to keep, so its current one is read. The expected values are workerd's.
test("a stack's first line has the message the error was made with", async (t) => {
  const worker = await useWorker(t, { script: `export default { async fetch() {
    const out = [];
    const e = new Error(); e.message = "later"; out.push(e.stack.split("\\n")[0]);
    const f = new TypeError("made"); f.message = "changed"; f.name = "Renamed"; out.push(f.stack.split("\\n")[0]);
    const o = { name: "Thing", message: "mine" }; Error.captureStackTrace(o); o.message = "later"; out.push(o.stack.split("\\n")[0]);
    try { await import("cloudflare:no-such-module"); } catch (error) { out.push(error.stack.split("\\n")[0]); }
    return Response.json(out);
  } }` });
  assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), ["Error", "Renamed: made", "Thing: later", 'Error: No such module "cloudflare:no-such-module".']);
});
