// Tail workers' trace items as production's (lib/tail/index.js, src/js/89_tail.js): a log's
// `message` is the list of values the worker logged, as workerd carries them (checked with the
// workerd binary: JSON of plain data — null, numbers, booleans, strings, arrays, plain objects,
// values with toJSON() such as a Date — and any other value as its string: a function's source,
// "[object Map]", "RangeError: bad"); console.group's label is no line of the trace; the
// request's `cf` is the one the worker saw (the host's `cf` laid over the default one); cpuTime
// is the CPU the invocation used before it responded.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "workerbox";

import { until as poll } from "./dev-processes.mjs";

import { scaled } from "./child-node.mjs";
const until = (what, check) => poll(what, check, 10_000, 20);

test("trace items: logged values as workerd carries them, levels, the request's cf", { timeout: scaled(60_000) }, async (t) => {
  const items = [];
  const lines = [];
  const producer = await createWorker({
    script: `export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    console.log("plain", 1, true, null, { a: [1, 2] });
    console.info(new Map([["k", 1]]), new Date(0), new Uint8Array([3]));
    console.debug("fn", function named() {});
    console.group("group");
    console.warn("inside", path);
    console.groupEnd();
    console.error(new RangeError("bad"));
    return new Response("ok " + request.cf.colo);
  },
};`,
    tailConsumers: [(events) => items.push(...events)],
    onLog: (level, message) => lines.push([level, message]),
  });
  t.after(() => producer.dispose());
  assert.equal(await (await dispatch(producer, { url: "http://example.com/one", cf: { colo: "LHR", country: "GB" } })).text(), "ok LHR");
  assert.equal(await (await dispatch(producer, "http://example.com/two")).text(), "ok DFW");
  await until("two trace items", () => items.length === 2);
  const [one, two] = items;
  assert.deepEqual(one.logs.map((l) => Object.keys(l)), Array(5).fill(["message", "level", "timestamp"]));
  assert.deepEqual(one.logs[0], { message: ["plain", 1, true, null, { a: [1, 2] }], level: "log", timestamp: one.logs[0].timestamp });
  assert.deepEqual([one.logs[1].level, one.logs[1].message], ["info", ["[object Map]", "1970-01-01T00:00:00.000Z", "3"]]);
  assert.deepEqual([one.logs[2].level, one.logs[2].message], ["debug", ["fn", "function named() {}"]]);
  // console.group's indent is the log line's, not the values'; its label is no trace line.
  assert.deepEqual(one.logs[3], { message: ["inside", "/one"], level: "warn", timestamp: one.logs[3].timestamp });
  assert.deepEqual([one.logs[4].level, one.logs[4].message], ["error", ["RangeError: bad"]]);
  for (const log of one.logs) assert.equal(typeof log.timestamp, "number");
  // The worker's log lines are unchanged (text, with the group's indent).
  assert.ok(lines.some(([level, text]) => level === "warn" && /^\s+inside \/one$/.test(text)), JSON.stringify(lines));
  // cf: the host's laid over the default, as the worker saw it.
  assert.equal(one.event.request.cf.colo, "LHR");
  assert.equal(one.event.request.cf.country, "GB");
  assert.equal(two.event.request.cf.colo, "DFW");
  assert.equal(typeof two.event.request.cf.asn, "number");
  assert.deepEqual(two.logs[3].message, ["inside", "/two"]);
});

test("a worker without tail consumers keeps its console as it was", { timeout: scaled(30_000) }, async (t) => {
  const worker = await createWorker({ script: `export default { fetch() { return new Response(console.log.name + " " + console.log.toString().includes("tailRecords")); } };` });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://example.com/")).text(), "log false");
});

test("trace items: cpuTime is the CPU the invocation used before it responded, in whole ms; wallTime covers its waits", { timeout: scaled(60_000) }, async (t) => {
  const items = [];
  const producer = await createWorker({
    script: `export default {
  async fetch(request) {
    if (new URL(request.url).pathname === "/busy") {
      const end = performance.now() + 60;
      let x = 0;
      while (performance.now() < end) x++;
      await new Promise((r) => setTimeout(r, 5));
      return new Response(String(x > 0));
    }
    await new Promise((r) => setTimeout(r, 80));
    return new Response("idle");
  },
};`,
    tailConsumers: [(events) => items.push(...events)],
  });
  t.after(() => producer.dispose());
  assert.equal(await (await dispatch(producer, "http://example.com/busy")).text(), "true");
  await until("the busy item", () => items.length === 1);
  assert.equal(await (await dispatch(producer, "http://example.com/idle")).text(), "idle");
  await until("the idle item", () => items.length === 2);
  const [busy, idle] = items;
  // A 60 ms spin gets at least a third of a core even on a loaded machine; waiting uses next to none.
  assert.ok(Number.isInteger(busy.cpuTime) && busy.cpuTime >= 20 && busy.cpuTime <= busy.wallTime + 5, `busy cpuTime ${busy.cpuTime}, wallTime ${busy.wallTime}`);
  assert.ok(Number.isInteger(idle.cpuTime) && idle.cpuTime < 20, `idle cpuTime ${idle.cpuTime}`);
  assert.ok(idle.wallTime >= 75, `idle wallTime ${idle.wallTime}`);
});

test("a tail consumer may be a service() binding filled in later: a worker tailing itself (workerd's tails naming the worker)", { timeout: scaled(60_000) }, async (t) => {
  const { service } = await import("workerbox");
  const self = service(() => new Response("not yet"));
  const worker = await createWorker({
    script: `const seen = [];
export default {
  fetch(request) {
    if (new URL(request.url).pathname === "/seen") return Response.json(seen);
    console.log("line of", new URL(request.url).pathname);
    return new Response("ok");
  },
  tail(events) { seen.push(...events.map((e) => [e.event.request.url, e.logs.map((l) => l.message)])); },
};`,
    format: "module",
    tailConsumers: [self],
  });
  t.after(() => worker.dispose());
  self.handler = worker;
  assert.equal(await (await dispatch(worker, "http://example.com/one")).text(), "ok");
  let seen = null;
  await until("the worker's own tail() ran", async () => {
    // (Reading /seen is traced too; it logs nothing.)
    seen = await (await dispatch(worker, "http://example.com/seen")).json();
    return seen.some(([url]) => url === "http://example.com/one");
  });
  assert.deepEqual(seen.find(([url]) => url === "http://example.com/one"), ["http://example.com/one", [["line of", "/one"]]]);
  await assert.rejects(async () => createWorker({ script: "export default {}", tailConsumers: [{}] }), /tailConsumers must be an array of workers, service\(\) bindings/);
});
