// Memory that grows without end, in steps, must end as ERR_MEMORY_LIMIT, with the worker
// restarted and serving the next request (such bombs made V8 abort the whole process before). Each attack runs in a child process, so a
// regression kills the child and fails the test instead of the runner. (Kept apart from
// hostile.test.mjs and huge-allocations.test.mjs so that no file runs long: Node 22+ bounds each file
// by --test-timeout.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { attackInChild, expectMemoryLimitInChild } from "./helpers.mjs";
import { scaled, underEmulator } from "./child-node.mjs";

// Under qemu-user, ending these heaps (V8's last garbage collections past memoryMb, a builtin
// finishing its step) takes more than the 2 s of CPU the runtime gives terminated JavaScript
// (STOP_GRACE in src/runtime/scheduler.rs), emulated 10 to 20 times slower: the worker is then
// failed (ERR_WORKER_FAILED) instead of restarted. The loops that stop at a termination check pass there.
const pastGrace = underEmulator("ending this heap takes V8 longer than the runtime's 2 s CPU grace for terminated JavaScript when emulated (ERR_WORKER_FAILED)");
const stopsAtCheck = new Set(["small arrays kept alive in a tight loop", "small filled arrays kept alive in a tight loop"]);

// Each of these aborted Node with V8's fatal "out of memory" before the heap-limit headroom
// grew for builtins that never check for termination.
const memoryBombs = [
  ["a Map that grows without end", "const m = new Map(); for (let i = 0; ; i++) m.set(i, { i })"],
  ["a Set that grows without end", "const s = new Set(); for (let i = 0; ; i++) s.add(i)"],
  ["an object with ever more properties", "const o = {}; for (let i = 0; ; i++) o['k' + i] = i"],
  ["megabyte strings kept alive", "const k = []; for (;;) k.push('x'.repeat(1e6) + Math.random())"],
  ["arrays of a million doubles kept alive", "const k = []; for (;;) k.push(new Array(1e6).fill(1.5))"],
  // In loops Turboshaft unrolled, V8 15.2 lost the interrupt check: the first grew the heap past
  // 15 GB and V8 aborted the process (src/runtime/platform.rs, V8_FLAGS).
  ["small arrays kept alive in a tight loop", "const k = []; for (;;) k.push(new Array(1000))"],
  ["small filled arrays kept alive in a tight loop", "const k = []; for (;;) k.push(new Array(1000).fill(1))"],
];

// Two children at a time: each is one busy thread, and the file stays well inside the runner's
// per-file time bound. The suite has its own bound: Node 26 applies --test-timeout to a describe
// block as a whole, and ten bombs on a loaded machine can take longer than one test may.
describe("memory bombs", { concurrency: 2, timeout: scaled(600_000) }, () => {
for (const [name, attack] of memoryBombs) {
  test(`memory bomb: ${name} ends as ERR_MEMORY_LIMIT and the worker recovers`, { timeout: scaled(150_000), skip: stopsAtCheck.has(name) ? false : pastGrace }, async () => {
    await expectMemoryLimitInChild(attack);
  });
}
});

// Objects piling up a few at a time: the host's memory stays within about 2 × memoryMb + 64 MB
// (a young-generation GC over the limit makes V8 check the live size at once; before that the
// peak grew 180-250 MB under memoryMb 64). Builtins that allocate a large block in one step
// (huge-allocations.test.mjs) can go further; docs/security.md, "Limits and faults".
test("small objects piling up stop with the host's peak RSS within about 2 × memoryMb + 64 MB", { timeout: scaled(150_000), skip: pastGrace }, async (t) => {
  const result = await expectMemoryLimitInChild("const k = []; for (let i = 0; ; i++) k.push({ i, s: 'x' + i, list: [i] })");
  const growthMb = result.peakMb - result.peakBeforeMb;
  t.diagnostic(`peak RSS growth ${growthMb.toFixed(0)} MB`);
  // "About": the child's peak also holds Node's own allocations, which differ by Node version
  // (131 MB on Node 20, 180 on 22, 224-225 on 24 and 26 in one CI run), hence 64 MB of slack.
  assert.ok(growthMb < 2 * 64 + 64 + 64, `the host's peak RSS grew by ${growthMb.toFixed(0)} MB under memoryMb 64`);
});

// ArrayBuffer memory has its own cap (memoryMb): an allocation past it fails with a RangeError the
// script can catch, as workerd's does, and the worker is not stopped for memory it never held.
test("typed arrays kept alive up to the ArrayBuffer cap end in a catchable RangeError, the host bounded", { timeout: scaled(150_000) }, async (t) => {
  const result = await attackInChild(`const k = [];
    try { for (;;) k.push(new Uint8Array(1 << 20)); }
    catch (e) { const held = k.length; k.length = 0; return new Response(e.name + ": " + e.message + " after " + held + " MB"); }`);
  assert.equal(result.signal, null, result.stderr);
  assert.equal(result.status, 0, result.stderr);
  const [, held] = /^RangeError: Array buffer allocation failed after (\d+) MB$/.exec(result.first?.body ?? "") ?? [];
  assert.ok(held !== undefined, JSON.stringify(result.first));
  assert.ok(Number(held) <= 64 && Number(held) >= 48, `${held} MB held under memoryMb 64`);
  assert.equal(result.then, "fine");
  const growthMb = result.peakMb - result.peakBeforeMb;
  t.diagnostic(`peak RSS growth ${growthMb.toFixed(0)} MB`);
  assert.ok(growthMb < 2 * 64 + 64 + 64, `the host's peak RSS grew by ${growthMb.toFixed(0)} MB under memoryMb 64`);
});
