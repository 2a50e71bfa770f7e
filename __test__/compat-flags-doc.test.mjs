// docs/compatibility.md lists every flag of workerd's table (lib/compat-flags.json) with its state
// here, as scripts/compat-flags-doc.mjs writes it from the page's prose (issue 44 point 5): the
// page is current, and a flag the prose does not place is an error that names it.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { render, rewrite, statesFromProse } from "../scripts/compat-flags-doc.mjs";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const doc = fs.readFileSync(path.join(ROOT, "docs", "compatibility.md"), "utf8");
const table = JSON.parse(fs.readFileSync(path.join(ROOT, "lib", "compat-flags.json"), "utf8"));

test("docs/compatibility.md's list of flags is what scripts/compat-flags-doc.mjs writes", () => {
  assert.equal(rewrite(doc, table), doc, "run node scripts/compat-flags-doc.mjs");
});

test("every flag of the table has one row with a state", () => {
  const list = render(doc, table);
  for (const flag of table.flags) {
    const row = list.split("\n").find((line) => line.startsWith(`| \`${flag.enable}\``));
    assert.ok(row, `no row for ${flag.enable}`);
    assert.match(row, /\| (honoured|no effect|experimental|not done)[^|]*\|$/, row);
  }
  assert.equal(list.split("\n").filter((line) => line.startsWith("| `")).length, table.flags.length);
});

test("the states come from the page: honoured rows, the lists after them", () => {
  const states = statesFromProse(doc, table.flags.flatMap((f) => [f.enable, f.disable]).filter(Boolean));
  assert.match(states.get("nodejs_compat"), /^honoured/);
  assert.match(states.get("enable_nodejs_sqlite_module"), /^honoured/); // from `enable_nodejs_{…,sqlite,…}_module`
  assert.match(states.get("remove_nodejs_compat_eol_v23"), /^honoured/); // from `… / _v23`
  assert.match(states.get("python_workers"), /about something workerbox does not have/); // `python_*`
  assert.match(states.get("python_workers_development"), /^experimental/); // named in full wins over `python_*`
  assert.equal(states.get("handle_cross_request_promise_resolution"), "not done");
});

test("a flag the page does not place is an error naming it", () => {
  const extra = { ...table, flags: [...table.flags, { enable: "brand_new_feature", disable: null, date: "2026-09-01" }] };
  assert.throws(() => render(doc, extra), /brand_new_feature/);
});
