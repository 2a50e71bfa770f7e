// createWorker's unsafeExposeGc: globalThis.gc() (V8's --expose-gc, per worker) runs a full
// collection — a WeakRef's target goes — and exists only when asked for; the option is checked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";
import { createWorker } from "../index.js";

const PROBE = `
  const hasGc = typeof globalThis.gc;
  if (hasGc !== "function") return { hasGc };
  let ref;
  (() => { ref = new WeakRef({ big: new Array(1000).fill(1) }); })();
  // A WeakRef keeps its target until the job that made it ends.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const before = ref.deref() !== undefined;
  // deref() keeps the target for the rest of this job too.
  await new Promise((resolve) => setTimeout(resolve, 0));
  globalThis.gc();
  return { hasGc, before, after: ref.deref() === undefined, enumerable: Object.keys(globalThis).includes("gc") };`;

test("unsafeExposeGc: gc() collects what nothing holds; without the option there is no gc", async (t) => {
  assert.deepEqual(await evalInWorker(t, PROBE, { unsafeExposeGc: true }), { hasGc: "function", before: true, after: true, enumerable: false });
  assert.deepEqual(await evalInWorker(t, PROBE), { hasGc: "undefined" });
});

test("unsafeExposeGc must be a boolean", async () => {
  await assert.rejects(createWorker({ script: "export default {}", unsafeExposeGc: "yes" }), /createWorker: options\.unsafeExposeGc must be a boolean, got "yes"/);
});
