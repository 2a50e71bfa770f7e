// Rate limiter bindings (rateLimit(), wrangler's `ratelimits`): limit({ key }) counted per key in
// fixed windows, the option checks and their messages (what Miniflare 4.20260426.0 printed for
// the same calls, noted beside them), shared namespaces, the Node side and reset().
import { test } from "node:test";
import assert from "node:assert/strict";
import { rateLimit } from "../index.js";
import { evalInWorker } from "./helpers.mjs";

/** Runs the calls in a worker; each gives its JSON result or "Name: message". */
const probe = (t, bindings, calls) =>
  evalInWorker(t, `const out = [];
    for (const call of [${calls.join(", ")}]) {
      try { out.push(await call()); } catch (e) { out.push(e.name + ": " + e.message); }
    }
    return out;`, { bindings });

test("limit() counts per key and checks its options with Miniflare's messages", async (t) => {
  const out = await probe(t, { LIM: rateLimit({ limit: 2, period: 60 }), OTHER: rateLimit({ limit: 5, period: 60 }) }, [
    "() => env.LIM.limit({ key: 'a' })",
    "() => env.LIM.limit({ key: 'a' })",
    "() => env.LIM.limit({ key: 'a' })",
    "() => env.LIM.limit({ key: 'a', bogus: 1 })",
    "() => env.LIM.limit({ period: 5 })",
    "() => env.LIM.limit({ key: 5 })",
    "() => env.LIM.limit({ key: 'b', limit: 'x' })",
    "() => env.LIM.limit(null)",
    "() => env.LIM.limit()",
    "() => env.LIM.limit({})",
    "() => env.LIM.limit({ key: 'c', limit: 1 })",
    "() => env.LIM.limit({ key: 'c', limit: 1 })",
    "() => env.LIM.limit({ key: 'c', period: 10 })",
    "() => env.OTHER.limit({ key: 'a' })",
    "() => typeof env.LIM.limit",
  ]);
  // Line for line what Miniflare printed for the same calls.
  assert.deepEqual(out, [
    { success: true },
    { success: true },
    { success: false },
    "Error: bad rate limit options: [bogus]",
    "Error: unsupported period: 5",
    "Error: invalid key: 5",
    "Error: limit must be a number: x",
    "Error: invalid rate limit options",
    "Error: invalid rate limit options",
    { success: true }, // no key: the key ""
    { success: true },
    { success: false },
    { success: true }, // another period: another counter
    { success: true }, // another binding, no namespace: its own counters
    "function",
  ]);
});

test("windows are aligned to the clock: a new window counts from zero", async (t) => {
  const LIM = rateLimit({ limit: 1, period: 10 });
  const realNow = Date.now;
  t.after(() => (Date.now = realNow));
  let now = 1_700_000_000_000; // a multiple of 10 s
  Date.now = () => now;
  assert.deepEqual(await LIM.limit({ key: "k" }), { success: true });
  now += 9_999;
  assert.deepEqual(await LIM.limit({ key: "k" }), { success: false });
  now += 1; // the next 10-second window
  assert.deepEqual(await LIM.limit({ key: "k" }), { success: true });
  assert.deepEqual(await LIM.limit({ key: "k" }), { success: false });
});

test("bindings with one namespace share counters; the Node side counts with the worker; reset() clears", async (t) => {
  const namespace = `ns-${process.pid}-${Date.now()}`;
  const A = rateLimit({ limit: 2, period: 60, namespace });
  const B = rateLimit({ simple: { limit: 3, period: 60 }, namespace });
  assert.deepEqual(await A.limit({ key: "x" }), { success: true });
  const out = await probe(t, { A, B }, ["() => env.B.limit({ key: 'x' })", "() => env.A.limit({ key: 'x' })", "() => env.B.limit({ key: 'x' })", "() => env.B.limit({ key: 'x' })"]);
  // One count (the namespace's), each binding's own limit: A stops at 2, B at 3.
  assert.deepEqual(out, [{ success: true }, { success: false }, { success: true }, { success: false }]);
  A.reset();
  assert.deepEqual(await B.limit({ key: "x" }), { success: true });
  await assert.rejects(A.limit({ key: 1 }), { name: "TypeError", message: "limit(): options must be { key: string }" });
});

test("rateLimit() options are checked", () => {
  assert.throws(() => rateLimit(), /rateLimit\(\): options must be an object/);
  assert.throws(() => rateLimit({ limit: 0 }), { name: "TypeError", message: "rateLimit(): limit must be a number above 0, got 0" });
  assert.throws(() => rateLimit({ limit: 5, period: 30 }), { name: "TypeError", message: "rateLimit(): period must be either 10 or 60 (seconds), got 30" });
  assert.throws(() => rateLimit({ limit: 5, namespace: 7 }), /namespace must be a non-empty string/);
  assert.equal(rateLimit({ limit: 5 }).period, 60);
});
