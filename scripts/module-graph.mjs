#!/usr/bin/env node
// The Rust side's module graph: which modules of the runtime core (src/runtime/) refer to which.
// It owns reading the sources (every .rs file under src/runtime/, src/binding*.rs, src/lib.rs),
// mapping each file to its module path, extracting the runtime modules each one names
// (`use crate::runtime::x::…`, `use super::x`, `super::super::…`, grouped `use a::{b, c::{d}}`,
// and `crate::…` / `super::…` / child-module paths written in code), and printing the strongly
// connected components (Tarjan) of the resulting graph with the edges inside them.
//
// Nodes are the top-level modules of src/runtime/ (`runtime::worker`), the submodules of its
// folders (`runtime::isolate::pump`; the folder's mod.rs is `runtime::isolate`), `runtime` itself
// (src/runtime/mod.rs, with its re-exports), and the crate-root files (`binding`, `lib`).
// A `mod x;` declaration is not an edge (a parent owns its children); a `pub use` is.
//
//   node scripts/module-graph.mjs            every SCC with more than one member, and its edges
//   node scripts/module-graph.mjs --all      every edge of the graph too
//   node scripts/module-graph.mjs --fine     folders' submodules as their own nodes
//   node scripts/module-graph.mjs --check    exit 1 if any SCC has more than one member
//   … --check --allow=isolate,ops,…          except one made of exactly these modules (a known
//                                            circle left on purpose: it may shrink, never grow)
//   node scripts/module-graph.mjs --json     { edges: { from: [to, …] }, sccs } for tests
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC = path.join(root, "src");

/** Repository files → module path segments (["runtime", "isolate", "pump"]). */
function sourceFiles() {
  const files = new Map();
  const walk = (dir, segments) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full, [...segments, entry.name]);
      else if (entry.name === "mod.rs") files.set(full, segments);
      else if (entry.name.endsWith(".rs")) files.set(full, [...segments, entry.name.slice(0, -3)]);
    }
  };
  walk(path.join(SRC, "runtime"), ["runtime"]);
  for (const name of fs.readdirSync(SRC)) {
    if (/^binding.*\.rs$/.test(name)) files.set(path.join(SRC, name), [name.slice(0, -3)]);
  }
  files.set(path.join(SRC, "lib.rs"), []);
  return files;
}

/** Source text with comments, strings and char literals blanked (lengths kept). */
function stripCode(text) {
  let out = "";
  let i = 0;
  const blank = (s) => s.replace(/[^\n]/g, " ");
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === "/" && next === "*") {
      let depth = 1;
      let j = i + 2;
      while (j < text.length && depth > 0) {
        if (text[j] === "/" && text[j + 1] === "*") (depth++, (j += 2));
        else if (text[j] === "*" && text[j + 1] === "/") (depth--, (j += 2));
        else j++;
      }
      out += blank(text.slice(i, j));
      i = j;
    } else if (c === "r" && /^r#*"/.test(text.slice(i, i + 8)) && !/\w/.test(text[i - 1] ?? "")) {
      const hashes = /^r(#*)"/.exec(text.slice(i))[1];
      const close = `"${hashes}`;
      const end = text.indexOf(close, i + 2 + hashes.length);
      const stop = end === -1 ? text.length : end + close.length;
      out += blank(text.slice(i, stop));
      i = stop;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += blank(text.slice(i, j + 1));
      i = j + 1;
    } else if (c === "'") {
      // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
      const m = /^'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'/.exec(text.slice(i, i + 12));
      if (m) (out += blank(m[0]), (i += m[0].length));
      else (out += c, i++);
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Expands a use tree (`super::{a, b::{c, d}}`) into its paths, each a list of segments. */
function expandUseTree(tree) {
  const paths = [];
  const parse = (s, prefix) => {
    s = s.trim();
    if (!s) return;
    const brace = s.indexOf("{");
    if (brace === -1) {
      const plain = s.replace(/\s+as\s+\w+$/, "");
      paths.push([...prefix, ...plain.split("::").map((x) => x.trim()).filter(Boolean)]);
      return;
    }
    const head = s.slice(0, brace).replace(/::\s*$/, "");
    const inner = s.slice(brace + 1, s.lastIndexOf("}"));
    const base = [...prefix, ...head.split("::").map((x) => x.trim()).filter(Boolean)];
    let depth = 0;
    let start = 0;
    for (let i = 0; i <= inner.length; i++) {
      const ch = inner[i];
      if (ch === "{") depth++;
      else if (ch === "}") depth--;
      else if ((ch === "," && depth === 0) || i === inner.length) {
        const part = inner.slice(start, i).trim();
        if (part === "self") paths.push(base);
        else parse(part, base);
        start = i + 1;
      }
    }
  };
  parse(tree, []);
  return paths;
}

const files = sourceFiles();
/** Module paths that are files ("runtime::isolate::pump"), to resolve a path to its node. */
const modulePaths = new Set([...files.values()].map((s) => s.join("::")));
const nodeName = (segments) => (segments.length ? segments.join("::") : "lib");

/** The graph node a resolved absolute path (["runtime", "isolate", "Thing"]) belongs to. */
function nodeOf(segments) {
  let best = null;
  for (let n = 1; n <= segments.length; n++) {
    const key = segments.slice(0, n).join("::");
    if (modulePaths.has(key)) best = segments.slice(0, n);
  }
  if (best) return nodeName(best);
  if (segments.length === 0) return "lib";
  return null; // an item at the crate root or outside the graph
}

/** Inline `mod name {` blocks of a file, as [start, end, name] character ranges. */
function inlineModules(code) {
  const blocks = [];
  const re = /\bmod\s+(\w+)\s*\{/g;
  let m;
  while ((m = re.exec(code))) {
    let depth = 0;
    let j = m.index + m[0].length - 1;
    for (; j < code.length; j++) {
      if (code[j] === "{") depth++;
      else if (code[j] === "}" && --depth === 0) break;
    }
    blocks.push([m.index, j, m[1]]);
  }
  return blocks;
}

/** Resolves a path written in `module` (segments) to absolute segments, or null if external. */
function resolvePath(segs, module, children) {
  const [first, ...rest] = segs;
  if (first === "crate") return rest;
  if (first === "self") return [...module, ...rest];
  if (first === "super") {
    let base = module;
    let i = 0;
    while (segs[i] === "super") (base = base.slice(0, -1), i++);
    return [...base, ...segs.slice(i)];
  }
  if (children.has(first)) return [...module, ...segs];
  return null;
}

const edges = new Map(); // node → Map(target → Set of "file:line")
const addEdge = (from, to, where) => {
  if (!from || !to || from === to) return;
  if (!edges.has(from)) edges.set(from, new Map());
  const targets = edges.get(from);
  if (!targets.has(to)) targets.set(to, new Set());
  targets.get(to).add(where);
};

for (const [file, module] of files) {
  const code = stripCode(fs.readFileSync(file, "utf8"));
  const rel = path.relative(root, file);
  const from = nodeName(module);
  const children = new Set([...code.matchAll(/^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/gm)].map((m) => m[1]));
  const blocks = inlineModules(code);
  const lineOf = (index) => code.slice(0, index).split("\n").length;
  // The module a position is in: the file's, or an inline `mod x { … }` inside it.
  const scopeAt = (index) => {
    const scope = [...module];
    for (const [start, end, name] of blocks) if (index > start && index < end) scope.push(name);
    return scope;
  };
  const childrenAt = (index, scope) => (scope.length === module.length ? children : new Set());
  const note = (segs, index) => {
    const scope = scopeAt(index);
    const abs = resolvePath(segs, scope, childrenAt(index, scope));
    if (!abs) return;
    addEdge(from, nodeOf(abs), `${rel}:${lineOf(index)}`);
  };
  // use declarations (with their braces), then paths written in code outside them.
  const useRanges = [];
  for (const m of code.matchAll(/\b(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);/g)) {
    useRanges.push([m.index, m.index + m[0].length]);
    for (const segs of expandUseTree(m[1])) note(segs.filter((s) => s !== "*"), m.index);
  }
  const inUse = (i) => useRanges.some(([a, b]) => i >= a && i < b);
  for (const m of code.matchAll(/(?<![\w:])((?:crate|self|super|[a-z_][a-z0-9_]*)(?:\s*::\s*[A-Za-z_]\w*)+)/g)) {
    if (inUse(m.index)) continue;
    const segs = m[1].split("::").map((s) => s.trim());
    if (!["crate", "self", "super"].includes(segs[0]) && !children.has(segs[0])) continue;
    note(segs, m.index);
  }
}

/** Tarjan's strongly connected components, each a sorted list of node names. */
function tarjan(nodes) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const sccs = [];
  const visit = (v) => {
    info.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!info.has(w)) {
        visit(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).onStack) {
        info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
      }
    }
    if (info.get(v).low === info.get(v).index) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        info.get(w).onStack = false;
        scc.push(w);
      } while (w !== v);
      sccs.push(scc.sort());
    }
  };
  for (const v of nodes) if (!info.has(v)) visit(v);
  return sccs;
}

const args = process.argv.slice(2);
// By default the graph is collapsed to the top-level modules of src/runtime/ (a folder's
// submodules count as the folder: a parent and its children referring to each other is how a
// folder module is built); --fine keeps each submodule of a folder as its own node.
if (!args.includes("--fine")) {
  const top = (name) => name.split("::").slice(0, 2).join("::");
  const collapsed = new Map();
  for (const [from, targets] of edges) {
    for (const [to, where] of targets) {
      const [a, b] = [top(from), top(to)];
      if (a === b) continue;
      if (!collapsed.has(a)) collapsed.set(a, new Map());
      const t = collapsed.get(a);
      if (!t.has(b)) t.set(b, new Set());
      for (const w of where) t.get(b).add(w);
    }
  }
  edges.clear();
  for (const [k, v] of collapsed) edges.set(k, v);
  for (const [file, module] of files) files.set(file, module.slice(0, 2));
}
const nodes = [...new Set([...files.values()].map(nodeName))].sort();
const sccs = tarjan(nodes).filter((scc) => scc.length > 1).sort((a, b) => b.length - a.length);

const allowed = args.find((a) => a.startsWith("--allow="))?.slice("--allow=".length).split(",").filter(Boolean).map((m) => (m.includes("::") ? m : `runtime::${m}`)).sort();
const isAllowed = (scc) => allowed !== undefined && scc.every((m) => allowed.includes(m));

if (args.includes("--json")) {
  const out = {};
  for (const from of nodes) out[from] = [...(edges.get(from)?.keys() ?? [])].sort();
  console.log(JSON.stringify({ edges: out, sccs }, null, 2));
  process.exit(0);
}
if (args.includes("--all")) {
  for (const from of nodes) {
    for (const [to, where] of edges.get(from) ?? []) console.log(`${from} -> ${to}  (${[...where][0]})`);
  }
}
console.log(`${nodes.length} modules, ${[...edges.values()].reduce((n, t) => n + t.size, 0)} edges`);
if (sccs.length === 0) console.log("no cycles: every strongly connected component has one module");
for (const scc of sccs) {
  const members = new Set(scc);
  console.log(`\ncycle of ${scc.length} modules: ${scc.join(", ")}`);
  for (const from of scc) {
    for (const [to, where] of edges.get(from) ?? []) {
      if (members.has(to)) console.log(`  ${from} -> ${to}  (${[...where].slice(0, 2).join(", ")})`);
    }
  }
}
const failing = sccs.filter((scc) => !isAllowed(scc));
if (allowed && failing.length < sccs.length) console.log(`\n(the circle of ${allowed.length} allowed modules is tolerated by --allow)`);
if (args.includes("--check") && failing.length > 0) process.exit(1);
