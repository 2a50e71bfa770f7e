#!/usr/bin/env node
// Writes the list of every workerd compatibility flag, with its state in workerbox, into
// docs/compatibility.md (between the `compat-flags:begin` and `compat-flags:end` markers), from
// lib/compat-flags.json (workerd's feature table) and the page's own prose: a feature whose
// enable or disable flag a row of the table "What the features change in workerbox today" names
// is honoured; the bullet lists after it say which are about something workerbox does not have,
// obsolete in workerd, experimental (refused), or not done. A flag of the table that none of them
// names is an error, so a new workerd table cannot go unlisted.
//
//   node scripts/compat-flags-doc.mjs           rewrite the list in docs/compatibility.md
//   node scripts/compat-flags-doc.mjs --check   exit 1 if the page's list is not what it would write
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const DOC = path.join(ROOT, "docs", "compatibility.md");
const TABLE = path.join(ROOT, "lib", "compat-flags.json");
const BEGIN = "<!-- compat-flags:begin (written by scripts/compat-flags-doc.mjs) -->";
const END = "<!-- compat-flags:end -->";

/** The states a bullet list can give, by the bold words that open it. */
const BULLETS = [
  ["About something workerbox does not have", "no effect: about something workerbox does not have"],
  ["Obsolete in workerd", "no effect: obsolete in workerd"],
  ["Experimental in workerd", "experimental: refused (workerd needs `--experimental`)"],
  ["Not done", "not done"],
];

/** `a_{x,y}_b` → `a_x_b`, `a_y_b`. */
function expandBraces(name) {
  const match = /\{([^}]*)\}/.exec(name);
  if (match === null) return [name];
  return match[1].split(",").flatMap((part) => expandBraces(name.slice(0, match.index) + part + name.slice(match.index + match[0].length)));
}

/** The backticked names of `text`; a name starting with `_` continues the one before it (`remove_x_v22` / `_v23`). */
function names(text) {
  const out = [];
  let previous = null;
  for (const [, raw] of text.matchAll(/`([^`]+)`/g)) {
    for (let name of expandBraces(raw)) {
      if (name.startsWith("_") && previous !== null) name = previous.slice(0, previous.lastIndexOf("_")) + name;
      out.push(name);
      previous = name;
    }
  }
  return out;
}

/** Each flag name the page's prose places, with its state (the first place that names it wins). */
export function statesFromProse(doc, allFlags = []) {
  const states = new Map();
  // `python_*` stands for every flag of the table with that start, after the names given in full.
  const patterns = [];
  const place = (name, state) => {
    if (name.includes("*")) patterns.push([new RegExp(`^${name.replaceAll("*", ".*")}$`), state]);
    else if (!states.has(name)) states.set(name, state);
  };
  const lines = doc.split("\n");
  const header = lines.findIndex((line) => line.startsWith("| feature (enable / disable flag) |"));
  if (header < 0) throw new Error(`${DOC}: the table "| feature (enable / disable flag) | …" was not found`);
  for (let i = header + 2; i < lines.length && lines[i].startsWith("|"); i++) {
    // A flag named anywhere in a row (the feature, the flags that imply it, one whose effect the
    // row describes with it) is honoured.
    for (const name of names(lines[i])) place(name, "honoured (see the table above)");
  }
  for (const [opening, state] of BULLETS) {
    const start = doc.indexOf(`- **${opening}**`);
    if (start < 0) throw new Error(`${DOC}: the list "- **${opening}**" was not found`);
    const next = doc.indexOf("\n- **", start + 1);
    const blank = doc.indexOf("\n\n", start);
    const end = Math.min(next < 0 ? doc.length : next, blank < 0 ? doc.length : blank);
    for (const name of names(doc.slice(start, end))) place(name, state);
  }
  for (const [pattern, state] of patterns) {
    for (const flag of allFlags) if (pattern.test(flag) && !states.has(flag)) states.set(flag, state);
  }
  return states;
}

/** The generated list (a Markdown table), or throws naming the flags the prose leaves out. */
export function render(doc, table) {
  const states = statesFromProse(doc, table.flags.flatMap((flag) => [flag.enable, flag.disable]).filter(Boolean));
  const rows = [];
  const missing = [];
  for (const flag of table.flags) {
    const state = states.get(flag.enable) ?? (flag.disable === null ? undefined : states.get(flag.disable));
    if (state === undefined) missing.push(flag.enable);
    let on = flag.date === null ? "flag only" : flag.date;
    if (flag.impliedBy) on += `; with ${flag.impliedBy.flags.map((f) => `\`${f}\``).join(" or ")} from ${flag.impliedBy.date}`;
    const experimental = flag.experimental ? " (experimental)" : "";
    rows.push(`| \`${flag.enable}\`${experimental} | ${flag.disable === null ? "—" : `\`${flag.disable}\``} | ${on} | ${state} |`);
  }
  if (missing.length > 0) {
    throw new Error(`${DOC} does not say what ${missing.length} flag(s) of lib/compat-flags.json do here: ${missing.join(", ")}. Add each to the table of honoured features or to one of the lists after it.`);
  }
  const counts = new Map();
  for (const flag of table.flags) {
    const state = states.get(flag.enable) ?? states.get(flag.disable);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const summary = [...counts].map(([state, n]) => `${n} ${state.replace(/ \(.*\)$/, "")}`).join(", ");
  return [
    BEGIN,
    "",
    `All ${table.flags.length} features of workerd's table (${table.source.split(" (")[0]}), in its order, with their state here (${summary}):`,
    "",
    "| enable flag | disable flag | on from | in workerbox |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    END,
  ].join("\n");
}

/** The page with its list replaced (or added at the end of the flags section). */
export function rewrite(doc, table) {
  const list = render(doc, table);
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin >= 0 && end > begin) return doc.slice(0, begin) + list + doc.slice(end + END.length);
  throw new Error(`${DOC}: the markers ${BEGIN} … ${END} were not found; put them where the list goes`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const doc = fs.readFileSync(DOC, "utf8");
  const table = JSON.parse(fs.readFileSync(TABLE, "utf8"));
  const next = rewrite(doc, table);
  if (process.argv.includes("--check")) {
    if (next !== doc) {
      console.error("docs/compatibility.md: the list of flags is out of date; run node scripts/compat-flags-doc.mjs");
      process.exit(1);
    }
    console.log("docs/compatibility.md: the list of flags is current");
  } else if (next !== doc) {
    fs.writeFileSync(DOC, next);
    console.log("docs/compatibility.md: the list of flags was rewritten");
  } else {
    console.log("docs/compatibility.md: the list of flags is current");
  }
}
