// Compatibility dates and flags: validated with workerd's names, and the features they turn on
// or off honoured where workerbox implements them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";
import compat from "../lib/compat.js";

const { resolveCompat, DEFAULT_DATE } = compat;

test("the default date is the newest the flag table knows, and today's date is accepted", () => {
  assert.match(DEFAULT_DATE, /^\d{4}-\d{2}-\d{2}$/);
  assert.equal(resolveCompat(undefined, undefined).date, DEFAULT_DATE);
  const today = new Date().toISOString().slice(0, 10);
  assert.equal(resolveCompat(today, []).date, today);
});

test("features follow their enable dates and flags, as in workerd", () => {
  // global_navigator is on from 2022-03-21; nodejs_compat from 2026-08-04 in this table.
  assert.ok(!resolveCompat("2022-03-20", []).enabled.includes("global_navigator"));
  assert.ok(resolveCompat("2022-03-21", []).enabled.includes("global_navigator"));
  assert.ok(!resolveCompat("2022-03-21", ["no_global_navigator"]).enabled.includes("global_navigator"));
  assert.ok(resolveCompat("2021-01-01", ["global_navigator"]).enabled.includes("global_navigator"));
  assert.ok(resolveCompat("2024-01-01", ["nodejs_compat"]).enabled.includes("nodejs_compat"));
  assert.ok(!resolveCompat("2024-01-01", []).enabled.includes("nodejs_compat"));
  assert.deepEqual(resolveCompat("2024-01-01", ["nodejs_compat", "nodejs_compat"]).flags, ["nodejs_compat"]);
});

test("bad dates and flags are TypeErrors that name the problem", async () => {
  const bad = [
    [{ compatibilityDate: "2024-13-01" }, /compatibilityDate "2024-13-01" is not a valid date in the form YYYY-MM-DD/],
    [{ compatibilityDate: "24-01-01" }, /is not a valid date/],
    [{ compatibilityDate: 20240101 }, /compatibilityDate must be a "YYYY-MM-DD" string, got number/],
    [{ compatibilityDate: "2999-01-01" }, /compatibilityDate 2999-01-01 is in the future/],
    [{ compatibilityFlags: "nodejs_compat" }, /compatibilityFlags must be an array of flag names/],
    [{ compatibilityFlags: ["nodejs_compat", "no_such_flag"] }, /unknown compatibility flag "no_such_flag"\. Known flags: .*nodejs_compat/],
    [{ compatibilityFlags: ["url_standard", "url_original"] }, /"url_standard" and "url_original" contradict each other/],
    [{ compatibilityFlags: ["experimental"] }, /"experimental" is experimental in workerd/],
  ];
  for (const [options, message] of bad) {
    await assert.rejects(createWorker({ script: "export default { fetch() {} }", ...options }), { name: "TypeError", message }, JSON.stringify(options));
  }
});

test("global_navigator is honoured: navigator exists from its date, and no_global_navigator removes it", async (t) => {
  const probe = `return typeof navigator === "object" ? navigator.userAgent : typeof navigator;`;
  assert.equal(await evalInWorker(t, probe), "Cloudflare-Workers");
  assert.equal(await evalInWorker(t, probe, { compatibilityDate: "2022-03-21" }), "Cloudflare-Workers");
  assert.equal(await evalInWorker(t, probe, { compatibilityDate: "2022-03-20" }), "undefined");
  assert.equal(await evalInWorker(t, probe, { compatibilityFlags: ["no_global_navigator"] }), "undefined");
});

test("impliedByAfterDate: nodejs_compat brings the features workerd ties to it from their dates", () => {
  const node = (date, flags) => resolveCompat(date, flags).enabled.filter((f) => f.includes("node"));
  // Before 2024-09-23 nodejs_compat is v1 alone.
  assert.deepEqual(node("2024-09-22", ["nodejs_compat"]), ["nodejs_compat"]);
  // From 2024-09-23 it implies nodejs_compat_v2 and nodejs_zlib.
  assert.deepEqual(node("2024-09-23", ["nodejs_compat"]), ["nodejs_compat", "nodejs_compat_v2", "nodejs_zlib"]);
  const mid2025 = node("2025-05-01", ["nodejs_compat"]);
  assert.ok(mid2025.includes("nodejs_compat_populate_process_env"));
  assert.ok(!mid2025.includes("enable_nodejs_process_v2"));
  const late2025 = node("2025-09-15", ["nodejs_compat"]);
  for (const flag of ["enable_nodejs_process_v2", "enable_nodejs_fs_module", "enable_nodejs_os_module", "enable_nodejs_http_modules", "enable_nodejs_http2_module"]) {
    assert.ok(late2025.includes(flag), flag);
  }
  // enable_nodejs_http_server_modules is implied by enable_nodejs_http_modules (itself implied) from 2025-09-01.
  assert.ok(late2025.includes("enable_nodejs_http_server_modules"));
  assert.ok(!late2025.includes("enable_nodejs_perf_hooks_module"));
  assert.ok(node("2026-03-17", ["nodejs_compat"]).includes("enable_nodejs_perf_hooks_module"));
  // The implied feature's own disable flag wins; the rule needs the implying flag on.
  assert.ok(!node("2025-01-01", ["nodejs_compat", "no_nodejs_compat_v2"]).includes("nodejs_compat_v2"));
  assert.ok(!node("2025-10-01", ["nodejs_compat", "disable_nodejs_process_v2"]).includes("enable_nodejs_process_v2"));
  assert.deepEqual(node("2025-10-01", []), []);
  // A rule naming two flags fires for either (nodejs_zlib ← nodejs_compat or nodejs_compat_v2).
  assert.ok(node("2024-10-01", ["nodejs_compat_v2"]).includes("nodejs_zlib"));
});

test("a worker dated 2025 with only nodejs_compat has workerd's v2 globals; one dated mid-2024 does not", async (t) => {
  const probe = `return { buffer: typeof Buffer, process: typeof process, env: typeof process === "object" ? { ...process.env } : null, version: typeof process === "object" ? process.version ?? null : null };`;
  const bindings = { GREETING: "hi" };
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2024-06-01", compatibilityFlags: ["nodejs_compat"], bindings }), { buffer: "undefined", process: "undefined", env: null, version: null });
  // 2025-01-01: v2 (globals) but process.env is not filled yet (from 2025-04-01) and process is the legacy one.
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-01-01", compatibilityFlags: ["nodejs_compat"], bindings }), { buffer: "function", process: "object", env: {}, version: null });
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-05-01", compatibilityFlags: ["nodejs_compat"], bindings }), { buffer: "function", process: "object", env: { GREETING: "hi" }, version: null });
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2025-09-15", compatibilityFlags: ["nodejs_compat"], bindings }), { buffer: "function", process: "object", env: { GREETING: "hi" }, version: "v22.19.0" });
});

test("node: modules workerd puts behind their own flag import only when it is on", async (t) => {
  const tryImport = async (name, options) => {
    try {
      const worker = await useWorker(t, { script: `import m from "node:${name}"; export default { fetch() { return new Response(typeof m); } }`, ...options });
      return (await dispatch(worker, "http://localhost/")).text();
    } catch (error) {
      return error.message;
    }
  };
  // node:os comes with nodejs_compat from 2025-09-15, or earlier with enable_nodejs_os_module.
  assert.match(await tryImport("os", { compatibilityDate: "2025-06-01", compatibilityFlags: ["nodejs_compat"] }), /^No such module "node:os"\. It needs the enable_nodejs_os_module compatibility flag/);
  assert.equal(await tryImport("os", { compatibilityDate: "2025-06-01", compatibilityFlags: ["nodejs_compat", "enable_nodejs_os_module"] }), "object");
  assert.equal(await tryImport("os", { compatibilityDate: "2025-09-15", compatibilityFlags: ["nodejs_compat"] }), "object");
  assert.match(await tryImport("os", { compatibilityDate: "2025-09-15", compatibilityFlags: ["nodejs_compat", "disable_nodejs_os_module"] }), /No such module "node:os"/);
  // node:console from 2025-09-21; node:fs/promises has no flag of its own in workerd.
  assert.match(await tryImport("console", { compatibilityDate: "2025-09-01", compatibilityFlags: ["nodejs_compat"] }), /No such module "node:console"/);
  assert.equal(await tryImport("fs/promises", { compatibilityDate: "2025-01-01", compatibilityFlags: ["nodejs_compat"] }), "object");
});

test("nodejs_compat before 2024-09-23: node: names only (no bare \"buffer\"), and zlib's codecs need nodejs_zlib", async (t) => {
  const early = { compatibilityDate: "2024-06-01", compatibilityFlags: ["nodejs_compat"] };
  await assert.rejects(createWorker({ ...early, script: `import "buffer"; export default { fetch() {} }`, onLog() {} }), /Cannot resolve module "buffer"/);
  const bareLater = await useWorker(t, { compatibilityDate: "2024-09-23", compatibilityFlags: ["nodejs_compat"], script: `import { Buffer } from "buffer"; export default { fetch() { return new Response(Buffer.from("ok").toString()); } }` });
  assert.equal(await (await dispatch(bareLater, "http://localhost/")).text(), "ok");
  const zlibScript = `import zlib from "node:zlib";
    export default { fetch() {
      let gzip;
      try { gzip = zlib.gunzipSync(zlib.gzipSync("hi")).toString(); } catch (e) { gzip = e.message; }
      return Response.json({ gzip, crc: zlib.crc32("hi"), level: zlib.constants.Z_BEST_COMPRESSION });
    } }`;
  const off = await useWorker(t, { ...early, script: zlibScript });
  assert.deepEqual(await (await dispatch(off, "http://localhost/")).json(), { gzip: 'Compatibility flag "nodejs_zlib" is not enabled', crc: 3633523372, level: 9 });
  const on = await useWorker(t, { compatibilityDate: "2024-06-01", compatibilityFlags: ["nodejs_compat", "nodejs_zlib"], script: zlibScript });
  assert.equal((await (await dispatch(on, "http://localhost/")).json()).gzip, "hi");
});

test("remove_nodejs_compat_eol_v2x: the end-of-life APIs workerd keeps go with their flags", async (t) => {
  const script = `import util from "node:util"; import crypto from "node:crypto"; import tls from "node:tls"; import process from "node:process";
    export default { fetch() { return Response.json([typeof util.isBoolean, typeof util.isArray, typeof crypto.createCipher, typeof tls.createSecurePair, typeof process.assert]); } }`;
  const kept = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(kept, "http://localhost/")).json(), ["function", "function", "function", "function", "function"]);
  // remove_nodejs_compat_eol_v24 brings v23 (workerd's rule); v22 is named on its own.
  const gone = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat", "remove_nodejs_compat_eol_v22", "remove_nodejs_compat_eol_v24"] });
  assert.deepEqual(await (await dispatch(gone, "http://localhost/")).json(), ["undefined", "function", "undefined", "undefined", "undefined"]);
});

test("enable_nodejs_global_timers (nodejs_compat from 2026-02-10): the global timers are node:timers', returning Timeout objects", async (t) => {
  const probe = `
    const t1 = setTimeout(() => {}, 1000);
    const kind = typeof t1;
    clearTimeout(t1);
    const fired = await new Promise((resolve) => { const t2 = setTimeout((x) => resolve(x), 1, "fired"); });
    const ticks = await new Promise((resolve) => { let n = 0; const i = setInterval(() => { if (++n === 3) { clearInterval(i); resolve(n); } }, 1); });
    const cancelled = await new Promise((resolve) => { const t3 = setTimeout(() => resolve("ran"), 5); clearTimeout(t3); setTimeout(() => resolve("cancelled"), 20); });
    return { kind, hasRef: typeof t1.hasRef, fired, ticks, cancelled, immediate: typeof setImmediate };`;
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityFlags: ["nodejs_compat"] }), { kind: "object", hasRef: "function", fired: "fired", ticks: 3, cancelled: "cancelled", immediate: "function" });
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2026-02-09", compatibilityFlags: ["nodejs_compat"] }), { kind: "number", hasRef: "undefined", fired: "fired", ticks: 3, cancelled: "cancelled", immediate: "function" });
});

test("enable_global_performance_classes (nodejs_compat from 2026-03-17): performance.mark/measure and the entry classes", async (t) => {
  const probe = `
    if (typeof performance.mark !== "function") return { mark: typeof performance.mark, PerformanceMark: typeof PerformanceMark };
    const a = performance.mark("a", { detail: { step: 1 }, startTime: 100 });
    const b = performance.mark("b", { startTime: 105 });
    const now = performance.mark("now");
    const nowOk = now.startTime >= 0 && now.startTime <= performance.now();
    performance.clearMarks("now");
    const m = performance.measure("a-to-b", "a", "b");
    const o = performance.measure("opts", { start: 10, duration: 7, detail: "d" });
    const result = {
      mark: [a.entryType, a.name, a.duration, a.detail, a instanceof PerformanceMark, a instanceof PerformanceEntry],
      measure: [m.entryType, m.duration, m.detail, o.startTime, o.duration, o.detail],
      lists: [performance.getEntries().length, performance.getEntriesByType("mark").map((e) => e.name), performance.getEntriesByName("opts", "measure").length],
      classes: [new PerformanceMark("x").entryType, PerformanceObserver.supportedEntryTypes, new PerformanceObserver(() => {}).takeRecords()],
      illegal: (() => { try { new PerformanceEntry(); return "constructed"; } catch (e) { return e.message; } })(),
      nowOk,
    };
    performance.clearMarks("a");
    result.afterClear = performance.getEntriesByType("mark").map((e) => e.name);
    performance.clearMeasures();
    result.measuresLeft = performance.getEntriesByType("measure").length;
    return result;`;
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityFlags: ["nodejs_compat"] }), {
    mark: ["mark", "a", 0, { step: 1 }, true, true],
    measure: ["measure", 5, null, 10, 7, "d"],
    lists: [4, ["a", "b"], 1],
    classes: ["mark", ["mark", "measure"], []],
    illegal: "Illegal constructor",
    nowOk: true,
    afterClear: ["b"],
    measuresLeft: 0,
  });
  assert.deepEqual(await evalInWorker(t, probe, { compatibilityDate: "2026-03-16", compatibilityFlags: ["nodejs_compat"] }), { mark: "undefined", PerformanceMark: "undefined" });
});
