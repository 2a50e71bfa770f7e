// Reporting: the per-file table (workerd's pass/fail beside workerbox's for each variant), the
// totals per directory, the configs that could not be translated (and why), and the check
// against known-failures.json: a test that passes on workerd and fails here is a regression
// unless that file lists it (by file, test name — `*` for every test of the file — and
// optionally variant) with a reason; and a test the file lists as passing here while it fails on
// workerd (`beyond`) must keep passing here.
import { readFileSync } from "node:fs";

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

export function area(file) {
  if (file.startsWith("src/workerd/api/node/tests/")) return "node/tests";
  if (file.startsWith("src/workerd/api/streams/")) return "streams";
  return "tests";
}

function counts(tests) {
  let pass = 0, fail = 0;
  for (const v of Object.values(tests ?? {})) v === "pass" ? pass++ : fail++;
  return { pass, fail };
}

/** Tests passing on workerd and failing (or missing) here. */
export function regressionsOf(row) {
  const out = [];
  for (const [name, v] of Object.entries(row.workerd.tests)) {
    if (v === "pass" && row.workerbox.tests[name] !== "pass") out.push(name);
  }
  return out;
}

export function loadKnown(file) {
  const list = JSON.parse(readFileSync(file, "utf8")).failures ?? [];
  const byFile = new Map();
  for (const k of list) byFile.set(`src/workerd/api/${k.file}`, [...(byFile.get(`src/workerd/api/${k.file}`) ?? []), k]);
  return (row, test) => byFile.get(row.file)?.find((k) => (k.test === "*" || k.test === test) && (!k.variant || k.variant === row.variant));
}

/** Prints the table and totals; returns { totals, unknownRegressions }. */
export function printReport(rows, untranslatable, { known, log = console.log, details = false } = {}) {
  const short = (f) => f.replace(/^src\/workerd\/api\//, "");
  const width = Math.max(30, ...rows.map((r) => short(r.file).length)) + 2;
  log(`${pad("file", width)}${pad("variant", 18)}${lpad("workerd", 12)}${lpad("workerbox", 12)}${lpad("both", 6)}  note`);
  const totals = {};
  const unknownRegressions = [];
  for (const r of rows) {
    const wd = counts(r.workerd.tests);
    const wb = counts(r.workerbox.tests);
    const regs = regressionsOf(r);
    const both = Object.keys(r.workerd.tests).filter((n) => r.workerd.tests[n] === "pass" && r.workerbox.tests[n] === "pass").length;
    const note = [r.workerd.note && `workerd: ${r.workerd.note}`, r.workerbox.note && `workerbox: ${r.workerbox.note}`].filter(Boolean).join("; ");
    log(`${pad(short(r.file), width)}${pad(r.variant, 18)}${lpad(`${wd.pass}/${wd.pass + wd.fail}`, 12)}${lpad(`${wb.pass}/${wb.pass + wb.fail}`, 12)}${lpad(both, 6)}  ${note.slice(0, 160)}`);
    for (const key of [area(r.file), "all"]) {
      const t = (totals[`${key}|${r.variant}`] ??= { area: key, variant: r.variant, files: 0, workerdPass: 0, workerdTotal: 0, workerboxPass: 0, both: 0 });
      t.files++;
      t.workerdPass += wd.pass;
      t.workerdTotal += wd.pass + wd.fail;
      t.workerboxPass += wb.pass;
      t.both += both;
    }
    for (const name of regs) {
      const k = known?.(r, name);
      if (details) log(`    ${k ? "known  " : "FAILS  "} ${name}: ${(r.workerbox.errors[name] ?? "not run here").split("\n")[0].slice(0, 200)}${k ? ` (${k.reason})` : ""}`);
      if (known && !k) unknownRegressions.push({ file: r.file, variant: r.variant, test: name, error: (r.workerbox.errors[name] ?? "not run here").split("\n")[0] });
    }
  }
  log("");
  log("Totals (workerd: tests passing / run on the binary; here: passing on workerbox; both: passing on both)");
  log(`${pad("area", 14)}${pad("variant", 18)}${lpad("files", 6)}${lpad("workerd", 14)}${lpad("here", 8)}${lpad("both", 8)}${lpad("both/workerd", 14)}`);
  const order = ["node/tests", "tests", "streams", "all"];
  const sorted = Object.values(totals).sort((a, b) => order.indexOf(a.area) - order.indexOf(b.area) || (a.variant < b.variant ? -1 : 1));
  for (const t of sorted) {
    log(`${pad(t.area, 14)}${pad(t.variant, 18)}${lpad(t.files, 6)}${lpad(`${t.workerdPass}/${t.workerdTotal}`, 14)}${lpad(t.workerboxPass, 8)}${lpad(t.both, 8)}${lpad(t.workerdPass ? ((100 * t.both) / t.workerdPass).toFixed(1) + "%" : "-", 14)}`);
  }
  if (untranslatable.length) {
    log("");
    log(`Configs not translated (${untranslatable.length}):`);
    for (const u of untranslatable) log(`  ${short(u.file)}: ${u.reason}`);
  }
  return { totals: sorted, unknownRegressions };
}

/** Why a test fails here, in one line: its error's first line, or the note of a worker that did not start. */
function reasonOf(row, test) {
  const error = row.workerbox.errors[test] ?? row.workerbox.note ?? "not run here";
  return error.split("\n")[0].replace(/\s+/g, " ").slice(0, 240);
}

/**
 * A known-failures list from these results: every test that passes on workerd and fails here,
 * once per file and test (with `variant` when it fails in one variant only), its reason the
 * error it failed with. An earlier entry's reason is kept only while it still ends with the same
 * error (a category written before the error, such as "API differs in detail: …"), so a reason never
 * outlives the failure it described; a hand-written `why` is kept as it is.
 */
export function knownFailuresFrom(rows, previous = []) {
  const byKey = new Map();
  for (const row of rows) {
    for (const test of regressionsOf(row)) {
      const key = `${row.file}|${test}`;
      const entry = byKey.get(key) ?? { file: row.file.replace(/^src\/workerd\/api\//, ""), test, variants: [], reason: reasonOf(row, test) };
      entry.variants.push(row.variant);
      byKey.set(key, entry);
    }
  }
  const variantsOf = new Map();
  for (const row of rows) variantsOf.set(row.file, [...(variantsOf.get(row.file) ?? []), row.variant]);
  const kept = new Map(previous.map((k) => [`${k.file}|${k.test}|${k.variant ?? ""}`, k]));
  const out = [];
  for (const [key, e] of byKey) {
    const all = e.variants.length === variantsOf.get(key.split("|")[0]).length;
    const entry = { file: e.file, test: e.test, ...(all ? {} : { variant: e.variants[0] }), reason: e.reason };
    const before = kept.get(`${entry.file}|${entry.test}|${entry.variant ?? ""}`);
    if (before?.reason?.endsWith(entry.reason)) entry.reason = before.reason;
    if (before?.why) entry.why = before.why;
    out.push(entry);
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.test < b.test ? -1 : 1));
}

/** Tests passing here and failing (or not run) on the workerd binary: what workerbox does beyond it. */
export function beyondFrom(rows) {
  const out = [];
  for (const row of rows) {
    for (const [test, v] of Object.entries(row.workerbox.tests)) {
      if (v === "pass" && row.workerd.tests[test] !== "pass") out.push({ file: row.file.replace(/^src\/workerd\/api\//, ""), test, variant: row.variant });
    }
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.test < b.test ? -1 : a.test > b.test ? 1 : a.variant < b.variant ? -1 : 1));
}

/** The listed `beyond` tests that ran in `rows` (a filtered run checks only its own) and did not pass here. */
export function lostBeyond(rows, beyond) {
  const byKey = new Map(rows.map((r) => [`${r.file}|${r.variant}`, r]));
  return beyond.filter((b) => {
    const row = byKey.get(`src/workerd/api/${b.file}|${b.variant}`);
    return row !== undefined && row.workerbox.tests[b.test] !== "pass";
  });
}
