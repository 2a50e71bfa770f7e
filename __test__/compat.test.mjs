// Compatibility dates and flags: validated with workerd's names, and the features they turn on
// or off honoured where workerbox implements them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker } from "../index.js";
import { evalInWorker } from "./helpers.mjs";
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
