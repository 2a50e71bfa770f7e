// scripts/workerd-tests/report.mjs, the runner's bookkeeping: which tests are regressions against
// the workerd binary, what --write-known writes (failures and the tests passing beyond workerd),
// and what --check finds lost of those. Synthetic result rows; no workerd or worker is run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { regressionsOf, knownFailuresFrom, beyondFrom, lostBeyond } from "../scripts/workerd-tests/report.mjs";

const row = (file, variant, workerd, workerbox) => ({ file: `src/workerd/api/${file}`, variant, workerd: { tests: workerd }, workerbox: { tests: workerbox, errors: { b: "Error: b broke\nat x" } } });

const rows = [
  row("tests/a.wd-test", "config", { a: "pass", b: "pass", c: "fail" }, { a: "pass", b: "fail", c: "pass" }),
  row("tests/a.wd-test", "all-compat-flags", { a: "pass", b: "pass", c: "fail" }, { a: "pass", b: "pass", c: "pass" }),
  row("tests/z.wd-test", "config", {}, { main: "pass" }),
];

test("a regression passes on workerd and fails here; a known failure names its variant when only one fails", () => {
  assert.deepEqual(regressionsOf(rows[0]), ["b"]);
  assert.deepEqual(knownFailuresFrom(rows), [{ file: "tests/a.wd-test", test: "b", variant: "config", reason: "Error: b broke" }]);
});

test("beyond lists each test passing here and failing (or not run) on workerd, per variant; --check loses only what ran", () => {
  const beyond = beyondFrom(rows);
  assert.deepEqual(beyond, [
    { file: "tests/a.wd-test", test: "c", variant: "all-compat-flags" },
    { file: "tests/a.wd-test", test: "c", variant: "config" },
    { file: "tests/z.wd-test", test: "main", variant: "config" },
  ]);
  assert.deepEqual(lostBeyond(rows, beyond), []);
  const later = [row("tests/a.wd-test", "config", { c: "fail" }, { c: "fail" })];
  // z.wd-test and the all-flags variant did not run in `later`: only a.wd-test [config] is checked.
  assert.deepEqual(lostBeyond(later, beyond), [{ file: "tests/a.wd-test", test: "c", variant: "config" }]);
});
