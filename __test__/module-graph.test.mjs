// The Rust core's layering (src/runtime/), as scripts/module-graph.mjs reads it from the
// sources: no circle between its top-level modules (docs/internals.md lists them top-down), a
// folder's files are tied only among themselves, and the plain-data modules at the bottom
// refer to nothing above them.
// Reads source files only; needs no build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnNodeSync } from "./child-node.mjs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SCRIPT = path.join(root, "scripts", "module-graph.mjs");

function graph(...args) {
  const run = spawnNodeSync([SCRIPT, ...args], { encoding: "utf8" });
  return run;
}

test("no circle between the runtime's top-level modules", () => {
  const run = graph("--check");
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /no cycles/);
  assert.deepEqual(JSON.parse(graph("--json").stdout).sccs, []);
});

test("with folders split into their files, every circle stays inside one folder", () => {
  // A folder's mod.rs and its files refer to each other (the parent re-exports, the children
  // take `super::*`); nothing outside the folder is part of such a circle.
  const { sccs } = JSON.parse(graph("--fine", "--json").stdout);
  for (const scc of sccs) {
    const folders = new Set(scc.map((m) => m.split("::").slice(0, 2).join("::")));
    assert.equal(folders.size, 1, `a circle across folders: ${scc.join(", ")}`);
  }
});

test("--check fails on a circle and --allow tolerates exactly its members", () => {
  // The folder-internal circles of --fine stand in for a circle between modules.
  const { sccs } = JSON.parse(graph("--fine", "--json").stdout);
  assert.ok(sccs.length > 0, "expected a folder-internal circle under --fine");
  const strict = graph("--fine", "--check");
  assert.equal(strict.status, 1, strict.stdout);
  for (const scc of sccs) assert.ok(strict.stdout.includes(scc.join(", ")), strict.stdout);
  const [first, ...rest] = sccs;
  const allowAll = sccs.flat().join(",");
  assert.equal(graph("--fine", "--check", `--allow=${allowAll}`).status, 0);
  if (rest.length > 0) assert.equal(graph("--fine", "--check", `--allow=${first.join(",")}`).status, 1);
});

test("types.rs, sources.rs, messages.rs and the event types sit at the bottom", () => {
  const { edges } = JSON.parse(graph("--json").stdout);
  const runtimeTargets = (from) => (edges[`runtime::${from}`] ?? []).filter((to) => to.startsWith("runtime::"));
  assert.deepEqual(runtimeTargets("types"), []);
  assert.deepEqual(runtimeTargets("platform"), []);
  assert.deepEqual(runtimeTargets("sources"), []);
  for (const events of ["queue", "rpc"]) assert.deepEqual(runtimeTargets(events), ["runtime::types"], events);
  const messages = runtimeTargets("messages");
  assert.deepEqual(messages.filter((to) => !["runtime::types", "runtime::queue", "runtime::rpc"].includes(to)), []);
});
