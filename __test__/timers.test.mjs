// Timers run on the worker's scheduler thread and come back in order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

test("timers fire by due time, then creation order; cleared timers never fire", async (t) => {
  // The delays outlast the calls that make the timers by far (ten times longer under an emulator,
  // where those calls alone took more than 100 ms on a loaded machine, and due times then rightly
  // reordered them).
  const order = await evalInWorker(t, `
    const seen = [];
    await new Promise((resolve) => {
      setTimeout(() => seen.push("200ms"), ${scaled(200)});
      setTimeout(() => seen.push("0ms-a"), 0);
      setTimeout(() => seen.push("0ms-b"));
      const cancelled = setTimeout(() => seen.push("cancelled"), ${scaled(5)});
      clearTimeout(cancelled);
      setTimeout((x, y) => seen.push("args:" + x + y), ${scaled(10)}, "p", "q");
      Promise.resolve().then(() => seen.push("microtask"));
      queueMicrotask(() => seen.push("queued microtask"));
      seen.push("sync");
      setTimeout(resolve, ${scaled(250)});
    });
    return seen;`);
  assert.deepEqual(order, ["sync", "microtask", "queued microtask", "0ms-a", "0ms-b", "args:pq", "200ms"]);
});

test("a timer made after another with the same delay never fires first, even when the thread wakes late", async (t) => {
  // Two 1 ms timers made a microtask apart: the isolate holds the first (handed over just before
  // it is due) while the second arrives; when the thread woke after both were due, the second
  // used to fire at once, ahead of the first (2 of 300 pairs on an idle machine).
  const reversed = await evalInWorker(t, `
    const reversed = [];
    for (let i = 0; i < 400; i++) {
      const log = [];
      const a = new Promise((r) => setTimeout(() => { log.push("a"); r(); }, 1));
      await Promise.resolve();
      const b = new Promise((r) => setTimeout(() => { log.push("b"); r(); }, 1));
      await Promise.all([a, b]);
      if (log.join() !== "a,b") reversed.push(i + ": " + log.join());
    }
    return reversed;`);
  assert.deepEqual(reversed, []);
});

test("setInterval repeats until cleared, including from inside its callback", async (t) => {
  const count = await evalInWorker(t, `
    let n = 0;
    await new Promise((resolve) => {
      const id = setInterval(() => { n += 1; if (n === 3) { clearInterval(id); setTimeout(resolve, 20); } }, 1);
    });
    return n;`);
  assert.equal(count, 3);
});

test("timer ids are distinct positive integers", async (t) => {
  // The runtime's own timers: at the default date nodejs_compat brings enable_nodejs_global_timers,
  // whose globals return Timeout objects (see compat.test.mjs), so this turns it off.
  const ids = await evalInWorker(t, `const ids = [setTimeout(() => {}), setTimeout(() => {}), setInterval(() => {}, 1000)];
    ids.forEach(clearTimeout); return ids;`, { compatibilityFlags: ["no_nodejs_global_timers"] });
  assert.equal(new Set(ids).size, 3);
  for (const id of ids) assert.ok(Number.isInteger(id) && id > 0);
});
