// Analytics Engine dataset bindings (analyticsEngine(), wrangler's `analytics_engine_datasets`):
// writeDataPoint() checked as workerd checks it (src/workerd/api/analytics-engine-impl.h: one
// index of at most 96 bytes, 20 blobs of 16,000 bytes together, 20 doubles; its messages), and
// the data points kept, in memory or as JSON lines in a folder, read back from Node.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { analyticsEngine, dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

/** The dataset's data points once there are `count` (writes are not awaited by the worker). */
async function pointsOf(AE, count) {
  let points = [];
  for (const deadline = Date.now() + 2000; points.length < count && Date.now() < deadline; await new Promise((r) => setTimeout(r, 10))) points = await AE.dataPoints();
  return points;
}

test("writeDataPoint() refuses what workerd refuses, with its messages", async (t) => {
  const AE = analyticsEngine({ dataset: "checks" });
  const out = await evalInWorker(t, `const out = [];
    const big = "x".repeat(800);
    for (const point of [
      { indexes: ["a", "b"] },
      { indexes: ["i".repeat(97)] },
      { indexes: [new Uint8Array(97)] },
      { blobs: Array(21).fill("b") },
      { blobs: Array(20).fill(big).concat([]) },
      { blobs: Array(20).fill(big + "y") },
      { doubles: Array(21).fill(1) },
      { doubles: [1n] },
      { blobs: "not a sequence" },
      "not an object",
    ]) {
      try { out.push(env.AE.writeDataPoint(point) === undefined ? "ok" : "returned"); } catch (e) { out.push(e.name + ": " + e.message); }
    }
    return out;`, { bindings: { AE } });
  assert.deepEqual(out, [
    "TypeError: writeDataPoint(): Maximum of 1 indexes supported.",
    "TypeError: writeDataPoint(): Size of indexes[0] exceeds 96 bytes).",
    "TypeError: writeDataPoint(): Size of indexes[0] exceeds 96 bytes).",
    "TypeError: writeDataPoint(): Maximum of 20 blobs supported.",
    "ok", // 20 × 800 bytes is the limit itself
    "TypeError: writeDataPoint(): Cumulative size of blobs exceeds 16000 bytes).",
    "TypeError: writeDataPoint(): Maximum of 20 doubles supported.",
    "TypeError: Cannot convert a BigInt value to a number",
    "TypeError: Failed to execute 'writeDataPoint' on 'AnalyticsEngineDataset': blobs is not a sequence.",
    "TypeError: Failed to execute 'writeDataPoint' on 'AnalyticsEngineDataset': parameter 1 is not of type 'AnalyticsEngineDataPoint'.",
  ]);
  const points = await pointsOf(AE, 1);
  assert.equal(points.length, 1, "only the accepted point was kept");
  assert.equal(points[0].blobs.length, 20);
});

test("data points are kept in order and read back from Node: strings, bytes, nulls, numbers", async (t) => {
  const AE = analyticsEngine({ dataset: "events" });
  const worker = await useWorker(t, { bindings: { AE }, script: `export default { fetch(request, env) {
    const n = Number(new URL(request.url).searchParams.get("n"));
    env.AE.writeDataPoint({ indexes: ["user-" + n], blobs: ["GET", null, new Uint8Array([0, 255]), 42], doubles: [n, "2.5"] });
    env.AE.writeDataPoint();
    return new Response("ok");
  } }` });
  const before = Date.now();
  for (const n of [1, 2, 3]) assert.equal(await (await dispatch(worker, `http://localhost/?n=${n}`)).text(), "ok");
  const points = await pointsOf(AE, 6);
  assert.equal(points.length, 6);
  assert.deepEqual(points.filter((p) => p.blobs.length > 0).map((p) => p.index1), ["user-1", "user-2", "user-3"]);
  const first = points[0];
  assert.equal(first.dataset, "events");
  assert.ok(first.timestamp >= before && first.timestamp <= Date.now());
  assert.deepEqual(first.blobs, ["GET", null, Buffer.from([0, 255]), "42"]);
  assert.deepEqual(first.doubles, [1, 2.5]);
  // An empty data point: index "" and nothing else, as workerd writes it.
  assert.deepEqual({ ...points[1], timestamp: 0 }, { dataset: "events", timestamp: 0, index1: "", blobs: [], doubles: [] });
  await AE.clear();
  assert.deepEqual(await AE.dataPoints(), []);
});

test("with dir, each data point is a line of JSON in <dir>/<dataset>.jsonl, read by another binding on the folder", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-ae-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const AE = analyticsEngine({ dataset: "page views", dir });
  assert.equal(AE.file, path.join(dir, "page_views.jsonl"));
  const worker = await useWorker(t, { bindings: { AE }, script: `export default { fetch(request, env) {
    env.AE.writeDataPoint({ blobs: ["/home", new Uint8Array([1])], doubles: [200] });
    return new Response("ok");
  } }` });
  await dispatch(worker, "http://localhost/");
  const reader = analyticsEngine({ dataset: "page views", dir });
  const points = await pointsOf(reader, 1);
  assert.deepEqual(points.map((p) => [p.dataset, p.index1, p.blobs, p.doubles]), [["page views", "", ["/home", Buffer.from([1])], [200]]]);
  const line = JSON.parse(fs.readFileSync(AE.file, "utf8").trim());
  assert.deepEqual(line.blobs, ["/home", { base64: "AQ==" }]);
});

test("analyticsEngine() options are checked", () => {
  assert.throws(() => analyticsEngine(null), /analyticsEngine\(\): options must be an object/);
  assert.throws(() => analyticsEngine({ dataset: "" }), { name: "TypeError", message: "analyticsEngine(): dataset must be a non-empty string" });
  assert.throws(() => analyticsEngine({ dir: 5 }), { name: "TypeError", message: "analyticsEngine(): dir must be a folder path" });
});
