// The native addon inside Node: it exports only napi entry points (our V8 never mixes with
// Node's), idle workers do not keep Node alive, and dispose() really ends the worker's threads.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { createWorker, dispatch } from "../index.js";
import { spawnNodeSync } from "./child-node.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// The one this Node loads (an arm64 build may lie beside the x64 one: npm run test:arm64).
const addon = readdirSync(root).find((f) => f.endsWith(".node") && f.includes(`.${process.platform}-${process.arch}-`));

test("the addon exports only napi entry points: no V8, cppgc or C glue symbols", () => {
  assert.ok(addon, "a built .node file in the package root");
  const symbols = execFileSync("nm", ["-D", "--defined-only", "-C", path.join(root, addon)], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(" ").slice(2).join(" "));
  assert.ok(symbols.some((s) => s.startsWith("napi_register_module")), "napi entry point present");
  const leaked = symbols.filter((s) => s.includes("v8::") || s.includes("cppgc"));
  assert.deepEqual(leaked, []);
  // Nor the `v8` crate's `extern "C"` glue (`v8__*`, `crdtp__*`, `temporal_rs_*`, …): the linker
  // wrapper keeps the export list to napi's names.
  assert.deepEqual(symbols.filter((s) => !/^(napi_|node_api_)/.test(s)), []);
});

function readThreadNames() {
  return readdirSync("/proc/self/task").map((tid) => {
    try {
      return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
    } catch {
      return "";
    }
  });
}

/**
 * The threads' names, once they are stable. A thread carries its creator's name until it names
 * itself: V8 starts its pool threads lazily, from whichever thread first needs one (often an
 * isolate thread), so for a moment they read "wb-isolate-N" too. Read until two reads agree.
 */
async function threadNames() {
  let previous = readThreadNames().sort().join("|");
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const names = readThreadNames();
    const current = [...names].sort().join("|");
    if (current === previous) return names;
    previous = current;
  }
  return readThreadNames();
}

test("each worker runs on its own isolate and scheduler threads, joined by dispose()", async () => {
  const isolates = (names) => names.filter((n) => /^wb-isolate-\d+$/.test(n)).length;
  const schedulers = (names) => names.filter((n) => /^wb-sched-\d+$/.test(n)).length;
  const before = await threadNames();
  // Without the warm pool, whose spares have threads of their own (see pool.test.mjs).
  const workers = await Promise.all([1, 2, 3].map(() => createWorker({ script: `export default { fetch() { return new Response("x") } }`, onLog() {}, pool: false })));
  const during = await threadNames();
  assert.equal(isolates(during) - isolates(before), 3, JSON.stringify(during));
  assert.equal(schedulers(during) - schedulers(before), 3, JSON.stringify(during));
  await Promise.all(workers.map((w) => w.dispose()));
  const after = await threadNames();
  assert.equal(isolates(after), isolates(before), JSON.stringify(after));
  assert.equal(schedulers(after), schedulers(before), JSON.stringify(after));
});

test("a process with live, idle workers exits on its own", () => {
  const script = `
    const { createWorker, dispatch } = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => {
      const worker = await createWorker({ script: "export default { fetch() { setTimeout(() => {}, 1); return new Response('bye') } }", onLog() {} });
      const res = await dispatch(worker, "http://localhost/");
      console.log(await res.text());
    })();`;
  const result = spawnNodeSync(["-e", script], { encoding: "utf8", timeout: 20000 });
  assert.equal(result.error, undefined, "the child exited before the timeout");
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stdout.trim(), "bye");
});

test("process.exit with a worker busy in an infinite loop does not crash", () => {
  const script = `
    const { createWorker, dispatch } = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => {
      const worker = await createWorker({ script: "export default { fetch() { while (true) {} } }", onLog() {} });
      dispatch(worker, "http://localhost/").catch(() => {});
      setTimeout(() => process.exit(7), 50);
    })();`;
  const result = spawnNodeSync(["-e", script], { encoding: "utf8", timeout: 20000 });
  assert.equal(result.error, undefined, "the child exited before the timeout");
  assert.equal(result.status, 7, result.stderr);
});

test("Intl works with the bundled ICU data", async () => {
  const worker = await createWorker({
    script: `export default { fetch() { return Response.json([
      new Intl.NumberFormat("de-DE").format(1234567.891),
      new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "long" }).format(new Date(0)),
      ["b", "a", "C"].sort(new Intl.Collator("en").compare),
    ]) } }`,
    onLog() {},
  });
  try {
    assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), ["1.234.567,891", "January", ["a", "b", "C"]]);
  } finally {
    await worker.dispose();
  }
});
