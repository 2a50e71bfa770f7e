// The JS side's layering: the host API (lib/api.js, and the lower modules it owns) never imports
// the tooling built on it (lib/project/, lib/vitest/, lib/test/, bin/), and no import circle spans
// two folders. The graph is read from the sources: every require("./…") and import … "./…"
// (static or inside a function) with a relative specifier.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** The API: createWorker(), dispatch(), the bindings, everything `require("workerbox")` is. */
const API = "lib/api.js";
/** The package's entry: the API, plus loadProject() & co. from lib/project/ on first use. */
const ENTRY = "index.js";
const PROJECT_ENTRY = "lib/project/index.js";
const TOOLING = ["lib/project/", "lib/vitest/", "lib/test/", "bin/"];

/** Repository-relative paths of the JS files the graph covers. */
function sources() {
  const files = ["index.js", "native.js"];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (/\.(c|m)?js$/.test(entry.name)) files.push(rel);
    }
  };
  walk("lib");
  for (const name of fs.readdirSync(path.join(root, "bin"))) if (name.endsWith(".js")) files.push(`bin/${name}`);
  return files;
}

/** The relative specifiers a file imports: require(), import(), import … from, export … from, bare import. */
function specifiers(text) {
  // Comment lines (// … and the * lines of a /** … */ block) may name files in prose.
  const code = text
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .join("\n");
  const found = [];
  const patterns = [
    /\brequire\s*\(\s*(["'])(\.{1,2}\/[^"']*)\1\s*\)/g,
    /\bimport\s*\(\s*(["'])(\.{1,2}\/[^"']*)\1/g,
    /\bfrom\s*(["'])(\.{1,2}\/[^"']*)\1/g,
    /^\s*import\s*(["'])(\.{1,2}\/[^"']*)\1/gm,
  ];
  for (const pattern of patterns) for (const match of code.matchAll(pattern)) found.push(match[2]);
  return found;
}

/** file → the files of the graph it imports (targets outside it, .node and .json files, are left out). */
function buildGraph() {
  const files = sources();
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const targets = new Set();
    for (const spec of specifiers(fs.readFileSync(path.join(root, file), "utf8"))) {
      const base = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const hit = [base, `${base}.js`, `${base}.mjs`, `${base}.cjs`, `${base}/index.js`].find((c) => known.has(c));
      if (hit !== undefined) targets.add(hit);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Every file reachable from `start` (itself included), not following `skip(from, to)` edges. */
function reachable(graph, start, skip = () => false) {
  const seen = new Set([start]);
  const stack = [start];
  while (stack.length > 0) {
    const file = stack.pop();
    for (const next of graph.get(file) ?? []) {
      if (seen.has(next) || skip(file, next)) continue;
      seen.add(next);
      stack.push(next);
    }
  }
  return seen;
}

/** Strongly connected components (Tarjan), each a list of files. */
function components(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const out = [];
  const visit = (file) => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file)) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file), index.get(next)));
      }
    }
    if (low.get(file) === index.get(file)) {
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== file);
      out.push(component.sort());
    }
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return out;
}

/** A file's folder; index.js and native.js are the root folder ("."). */
const folderOf = (file) => path.posix.dirname(file);
const isTooling = (file) => TOOLING.some((prefix) => file.startsWith(prefix));
/** A path from `from` to `to` in the graph, for the failure messages. */
function pathBetween(graph, from, to) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    if (file === to) break;
    for (const next of graph.get(file)) if (!previous.has(next)) previous.set(next, file), queue.push(next);
  }
  const chain = [];
  for (let at = to; at != null; at = previous.get(at)) chain.unshift(at);
  return chain.join(" → ");
}

const graph = buildGraph();

test("the graph is read: the files the checks rely on are there and import what they should", () => {
  assert.ok(graph.has(API), `${API} exists`);
  assert.ok(graph.get(ENTRY).has(API), `${ENTRY} takes the API from ${API}`);
  assert.ok(graph.get("lib/project/load.js").size > 0, "lib/project/load.js's imports are read");
  assert.ok(graph.get("lib/vitest/runner.mjs").size > 0, "ES module imports are read");
  const sample = `import b from "../b.mjs";\nimport "./c.js";\nexport { d } from "./d.js";\n// require("./comment.js")\nconst a = () => require("./lazy.js");\nawait import("./e.js");\nrequire("node:fs");`;
  assert.deepEqual(specifiers(sample).sort(), ["../b.mjs", "./c.js", "./d.js", "./e.js", "./lazy.js"]);
});

test("the API reaches no tooling: not lib/project/, lib/vitest/, lib/test/, bin/, nor anything that imports the API back", () => {
  const fromApi = reachable(graph, API);
  const tooling = [...fromApi].filter(isTooling);
  assert.deepEqual(tooling.map((file) => pathBetween(graph, API, file)), [], "the API imports tooling");
  // Whatever the API reaches is below it: none of it imports the API or the package entry (the
  // queue consumer, for one, is run through hooks the API sets, not by importing it).
  const back = [...fromApi].filter((file) => graph.get(file).has(API) || graph.get(file).has(ENTRY));
  assert.deepEqual(back.map((file) => pathBetween(graph, API, file)), [], "a module the API imports imports the API back");
});

test("the package entry reaches tooling only through its on-first-use re-export of lib/project/index.js", () => {
  const direct = [...graph.get(ENTRY)].sort();
  assert.deepEqual(direct, [API, PROJECT_ENTRY].sort(), `${ENTRY} imports the API and (on first use of loadProject & co.) lib/project/index.js`);
  const withoutProject = reachable(graph, ENTRY, (from, to) => from === ENTRY && to === PROJECT_ENTRY);
  assert.deepEqual([...withoutProject].filter(isTooling), []);
  // Tooling depends on the API directly, never on the entry that re-exports it.
  const viaEntry = [...graph.keys()].filter((file) => file.startsWith("lib/project/") && graph.get(file).has(ENTRY));
  assert.deepEqual(viaEntry, [], "lib/project/ imports the package entry (which re-exports lib/project/)");
});

test("no import circle spans two folders", () => {
  const spanning = components(graph).filter((component) => new Set(component.map(folderOf)).size > 1);
  assert.deepEqual(spanning, [], "import circles across folders (each a strongly connected component)");
});
