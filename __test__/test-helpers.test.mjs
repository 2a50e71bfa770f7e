// workerbox/test, the node:test helpers: a worker per test disposed at its end, a project with
// fresh storage per test (and its bindings in Node over the same storage), and mockFetch().
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { useWorker, useProject, mockFetch } from "../lib/test/index.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const EXAMPLE = path.join(root, "examples", "vitest");

test("useWorker: a worker for the test, relative URLs, cron and queue events; disposed after", async (t) => {
  let worker;
  await t.test("inner", async (t) => {
    const w = await useWorker(t, {
      script: `export default {
        fetch(request) { return new Response(new URL(request.url).pathname); },
        scheduled(controller) { globalThis.cron = controller.cron; },
        async queue(batch) { for (const m of batch.messages) m.body === "bad" ? m.retry() : m.ack(); },
      };`,
    });
    worker = w.worker;
    assert.equal(await (await w.fetch("/hello")).text(), "/hello");
    assert.equal((await w.scheduled({ cron: "0 * * * *" })).outcome, "ok");
    const result = await w.queue("jobs", [{ id: "a", body: "ok" }, { id: "b", body: "bad" }]);
    assert.deepEqual(result.explicitAcks, ["a"]);
    assert.deepEqual(result.retryMessages, [{ msgId: "b" }]);
  });
  assert.equal(worker.disposed, true, "disposed when the inner test ended");
  await assert.rejects(useWorker({}, { script: "" }), /t must be the test's context/);
});

test("useProject: the example project with fresh storage per test, and its env in Node", async (t) => {
  const first = await useProject(t, EXAMPLE);
  assert.equal(await (await first.fetch("/hi")).text(), "hello from /hi");
  // D1 migrations are applied; the worker and the test's env share the database.
  const notes = await (await first.fetch("/notes", { method: "POST", body: JSON.stringify({ text: "from the test" }) })).json();
  assert.deepEqual(notes, ["first note", "from the test"]);
  const { results } = await first.env.DB.prepare("SELECT COUNT(*) AS n FROM notes").all();
  assert.equal(results[0].n, 2);
  await first.env.KV.put("count", "41");
  assert.deepEqual(await (await first.fetch("/count")).json(), { count: 42 });
  assert.equal(await (await first.fetch("/counter?name=x")).text(), JSON.stringify({ count: 0, calls: 0, path: "/counter" }));
  await t.test("another test gets its own storage", async (t) => {
    const second = await useProject(t, EXAMPLE);
    assert.equal(await second.env.KV.get("count"), null);
    const again = await (await second.fetch("/notes")).json();
    assert.deepEqual(again, ["first note"]);
  });
});

test("mockFetch answers the worker's outbound requests by route, records them, and names what no route matches", async (t) => {
  const outbound = mockFetch({
    "GET https://api.weather.example/today*": (request) => Response.json({ temperature: new URL(request.url).searchParams.get("city") === "oslo" ? -3 : 20 }),
    "https://static.example/*": new Response("static"),
  });
  const project = await useProject(t, EXAMPLE, { outbound });
  assert.equal(await (await project.fetch("/weather?city=oslo")).text(), "-3°C");
  assert.deepEqual(outbound.calls, [{ method: "GET", url: "https://api.weather.example/today?city=oslo" }]);
  const worker = await useWorker(t, {
    outbound,
    script: `export default { async fetch() {
      const a = await (await fetch("https://static.example/a")).text();
      const b = await (await fetch("https://static.example/b")).text();
      try { await fetch("https://elsewhere.example/"); } catch (error) { return new Response(a + " " + b + " | " + error.message); }
    } };`,
  });
  assert.match(await (await worker.fetch("/")).text(), /^static static \| .*mockFetch: no route for GET https:\/\/elsewhere\.example\//);
});
