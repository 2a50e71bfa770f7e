// Memory bombs that would make V8 abort the whole process must end as ERR_MEMORY_LIMIT, with the
// worker restarted and serving the next request. Each attack runs in a child process, so a
// regression kills the child and fails the test instead of the runner. (Kept apart from
// hostile.test.mjs so that neither file runs long: Node 22+ bounds each file by --test-timeout.)
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { runChild } from "./helpers.mjs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/**
 * Runs `attack` (statements inside a fetch handler) in a worker in a child process, then a
 * benign request to the same worker. Resolves to { status, signal, first, then, stderr }.
 */
function attackInChild(attack, { memoryMb = 64, timeoutMs = 120_000 } = {}) {
  const child = `
    const { createWorker, dispatch } = require(${JSON.stringify(path.join(root, "index.js"))});
    (async () => {
      const worker = await createWorker({
        script: \`export default { async fetch(request) {
          if (request.url.endsWith("/ok")) return new Response("fine");
          \${process.env.ATTACK};
          return new Response("attack finished");
        } }\`,
        limits: { memoryMb: ${memoryMb} },
        pool: false,
        onLog() {},
      });
      const peakBeforeMb = Number(/VmHWM:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
      const first = await dispatch(worker, "http://localhost/").then(
        async (r) => ({ status: r.status, body: await r.text() }),
        (e) => ({ code: e.code, name: e.name, message: e.message }),
      );
      const then = await dispatch(worker, "http://localhost/ok").then((r) => r.text(), (e) => "error " + e.code);
      await worker.dispose();
      // The process's peak RSS, to compare with the one before the attack.
      const peakMb = () => Number(/VmHWM:\\s+(\\d+)/.exec(require("node:fs").readFileSync("/proc/self/status", "utf8"))[1]) / 1024;
      process.stdout.write(JSON.stringify({ first, then, peakBeforeMb, peakMb: peakMb() }));
    })();`;
  return runChild(child, { ATTACK: attack }, timeoutMs);
}

// Each of these aborted Node with V8's fatal "out of memory" before the heap-limit headroom
// grew for builtins that never check for termination.
const memoryBombs = [
  ["a 100M-element array filled at once", "new Array(1e8).fill(0)"],
  ["a 50M-element double array", "const a = []; a.length = 5e7; a.fill(2.5)"],
  ["a 1e9-element dictionary array filled", "new Array(1e9).fill(0)"],
  ["a Map that grows without end", "const m = new Map(); for (let i = 0; ; i++) m.set(i, { i })"],
  ["a Set that grows without end", "const s = new Set(); for (let i = 0; ; i++) s.add(i)"],
  ["an object with ever more properties", "const o = {}; for (let i = 0; ; i++) o['k' + i] = i"],
  ["megabyte strings kept alive", "const k = []; for (;;) k.push('x'.repeat(1e6) + Math.random())"],
  ["arrays of a million doubles kept alive", "const k = []; for (;;) k.push(new Array(1e6).fill(1.5))"],
  ["typed arrays past the ArrayBuffer cap", "const k = []; for (;;) k.push(new Uint8Array(1 << 20))"],
  ["Array.from with a billion elements", "Array.from({ length: 1e9 })"],
  // In loops Turboshaft unrolled, V8 15.2 lost the interrupt check: the first grew the heap past
  // 15 GB and V8 aborted the process (src/runtime/platform.rs, V8_FLAGS).
  ["small arrays kept alive in a tight loop", "const k = []; for (;;) k.push(new Array(1000))"],
  ["small filled arrays kept alive in a tight loop", "const k = []; for (;;) k.push(new Array(1000).fill(1))"],
];

// Built-ins that V8 aborts in ("Fatal JavaScript invalid size error": an array longer than
// FixedArray's maximum) rather than running out of heap. Each must end as a RangeError the
// script can catch (src/js/02_huge_strings.js refuses it) or as ERR_MEMORY_LIMIT.
const invalidSizeBombs = [
  ["split('') of a 2^28-character string", "'a'.repeat(2 ** 28).split('')"],
  ["a global match of a 2^28-character string", "'a'.repeat(2 ** 28).match(/a/g)"],
  ["split(',') into 2^27 + 1 pieces", "'a,'.repeat(2 ** 27).split(',')"],
  ["a RegExp split of a 2^28-character string", "'a'.repeat(2 ** 28).split(/(?:)/)"],
  ["a global replace with a function", "'a'.repeat(2 ** 28).replace(/a/g, () => 'b')"],
  ["RegExp.prototype[Symbol.match] called directly on an object that converts to a huge string", "/a/g[Symbol.match]({ toString: () => 'a'.repeat(2 ** 28) })"],
  ["JSON.parse of a 2^27 + 1 element array", "JSON.parse('[' + '0,'.repeat(2 ** 27) + '0]')"],
];

// Two children at a time: each is one busy thread, and the file stays well inside the runner's
// per-file time bound. The suite has its own bound: Node 26 applies --test-timeout to a describe
// block as a whole, and ten bombs on a loaded machine can take longer than one test may.
describe("memory bombs", { concurrency: 2, timeout: 600_000 }, () => {
for (const [name, attack] of memoryBombs) {
  test(`memory bomb: ${name} ends as ERR_MEMORY_LIMIT and the worker recovers`, { timeout: 150_000 }, async () => {
    const result = await attackInChild(attack);
    assert.equal(result.signal, null, `the child was killed by ${result.signal}: ${result.stderr}`);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.first?.code, "ERR_MEMORY_LIMIT", JSON.stringify(result.first));
    assert.equal(result.then, "fine", "the restarted worker serves the next request");
  });
}
});

// Objects piling up a few at a time: the host's memory stays within about 2 × memoryMb + 64 MB
// (a young-generation GC over the limit makes V8 check the live size at once; before that the
// peak grew 180-250 MB under memoryMb 64). Builtins that allocate a large block in one step
// (the 800 MB array above) can go further; README, "Limits and faults".
test("small objects piling up stop with the host's peak RSS within about 2 × memoryMb + 64 MB", { timeout: 150_000 }, async (t) => {
  const result = await attackInChild("const k = []; for (let i = 0; ; i++) k.push({ i, s: 'x' + i, list: [i] })");
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.first?.code, "ERR_MEMORY_LIMIT", JSON.stringify(result.first));
  const growthMb = result.peakMb - result.peakBeforeMb;
  t.diagnostic(`peak RSS growth ${growthMb.toFixed(0)} MB`);
  assert.ok(growthMb < 2 * 64 + 64 + 32, `the host's peak RSS grew by ${growthMb.toFixed(0)} MB under memoryMb 64`);
});

describe("invalid-size bombs", { concurrency: 2 }, () => {
  for (const [name, attack] of invalidSizeBombs) {
    test(`invalid-size bomb: ${name} ends as a RangeError, not a process abort`, { timeout: 150_000 }, async () => {
      const result = await attackInChild(`try { ${attack}; } catch (e) { return new Response(e.name + ": " + e.message) }`);
      assert.equal(result.signal, null, `the child was killed by ${result.signal}: ${result.stderr}`);
      assert.equal(result.status, 0, result.stderr);
      const clean = result.first?.code === "ERR_MEMORY_LIMIT" || /^RangeError: Invalid array length/.test(result.first?.body ?? "");
      assert.ok(clean, JSON.stringify(result.first));
      assert.equal(result.then, "fine");
    });
  }

  test("the guarded built-ins still look and work like V8's own", async () => {
    const result = await attackInChild(`return new Response(JSON.stringify([
      String.prototype.split.name, String.prototype.split.length, String(String.prototype.split),
      RegExp.prototype[Symbol.replace].name, String(RegExp.prototype[Symbol.match]), JSON.parse.length,
      Function.prototype.toString.call(Function.prototype.toString),
      "a,b,,c".split(","), "abc".split("", 2), "a1b2".split(/\\d/), "x".split(), "aXbxc".split({ [Symbol.split]: (s) => [s.length] }),
      "a-b".replace(/-/g, "+"), "aaa".match(/a/g), JSON.parse('{"x":[1,2]}', (k, v) => (k === "x" ? v.length : v)),
      "abc".split({ toString: () => "b" }),
    ]))`);
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.first.body), [
      "split", 2, "function split() { [native code] }",
      "[Symbol.replace]", "function [Symbol.match]() { [native code] }", 2,
      "function toString() { [native code] }",
      ["a", "b", "", "c"], ["a", "b"], ["a", "b", ""], ["x"], [5],
      "a+b", ["a", "a", "a"], { x: 2 },
      ["a", "c"],
    ]);
  });
});
