// Bundling imports of Node built-ins as wrangler does: under nodejs_compat (v2) bare names such as
// `events` become `node:events` imports, also inside published packages (jsonwebtoken, pg) and
// their require() calls; in older modes and without the flag, a bare built-in that is not
// installed is a build error naming the flag and date that would provide it, with file, line and
// column; one workerd puts behind a further flag the worker lacks (fs before its date) comes from
// unenv's polyfill, as wrangler bundles it; a `node:` import without the flag builds with a warning
// naming the flag.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { loadProject, startWorker, BuildError } from "workerbox/project";
import { dispatch } from "workerbox";
import { copyFixture } from "./helpers.mjs";

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** The fixture in a temp folder, its node_modules a link to this repository's (as pnpm links them). */
function project(t) {
  const dir = copyFixture(t, "bundle", "node-builtins");
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"), "junction");
  return dir;
}

function setConfig(dir, date, flags, main = "src/index.js") {
  const config = { name: "node-builtins", main, compatibility_date: date, compatibility_flags: flags };
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), JSON.stringify(config, null, 2));
}

test("nodejs_compat (v2): bare built-ins, and those of published packages, import the runtime's node: modules", async (t) => {
  const dir = project(t);
  const loaded = await loadProject(dir, { persistTo: false });
  const script = loaded.options.script;
  for (const name of ["events", "buffer", "timers/promises", "util", "string_decoder", "crypto"]) {
    assert.match(script, new RegExp(`from "node:${name.replace("/", "\\/")}"`), `node:${name} is imported`);
  }
  assert.doesNotMatch(script, /node_modules\/events\//, "the npm `events` package is not bundled in its place");
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  const body = await (await dispatch(worker, "http://localhost/")).json();
  const jwt = require("jsonwebtoken");
  assert.deepEqual(body, {
    heard: "hello",
    base64: "aGk=",
    formatted: "n=7",
    decoded: "€",
    token: jwt.sign({ sub: "user-1" }, "secret", { algorithm: "HS256", noTimestamp: true }),
    sub: "user-1",
  });
});

test("nodejs_compat (v2): pg, which imports events, net, tls, crypto, stream and more by bare name, bundles and loads", async (t) => {
  const dir = project(t);
  setConfig(dir, "2025-01-01", ["nodejs_compat"], "src/pg.js");
  const loaded = await loadProject(dir, { persistTo: false });
  const imported = new Set([...loaded.options.script.matchAll(/from "(node:[a-z_/]+)"/g)].map((match) => match[1]));
  for (const name of ["node:events", "node:net", "node:tls", "node:crypto", "node:stream", "node:util"]) assert.ok(imported.has(name), `${name} among ${[...imported].join(", ")}`);
  assert.equal(loaded.warnings?.length ?? 0, 0);
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "function");
});

test("nodejs_compat before 2024-09-23 (v1): a bare built-in that is not installed is an error naming the date and flag", async (t) => {
  const dir = copyFixture(t, "bundle", "node-builtins"); // no node_modules: `events` is not installed
  setConfig(dir, "2024-01-01", ["nodejs_compat"]);
  const config = path.join(dir, "wrangler.jsonc");
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import { EventEmitter } from "events";\nconst util = require("util");\nexport default { fetch() { return new Response(typeof EventEmitter + typeof util); } };\n`);
  const needs = `it is a Node.js built-in module, which a worker imports by that name with a compatibility date on or after 2024-09-23 beside "nodejs_compat" (or the "nodejs_compat_v2" flag in compatibility_flags in ${config})`;
  await assert.rejects(loadProject(dir, { persistTo: false }), (error) => {
    assert.ok(error instanceof BuildError);
    const file = path.join(dir, "src", "index.js");
    assert.equal(error.message, `build failed:\n${file}:1:30: Could not resolve "events": ${needs}\n${file}:2:22: Could not resolve "util": ${needs}`);
    return true;
  });
});

test("nodejs_compat (v2) before a module's own date: fs and os come from unenv's polyfills, as wrangler bundles them", async (t) => {
  const dir = project(t);
  setConfig(dir, "2025-01-01", ["nodejs_compat"]);
  fs.writeFileSync(
    path.join(dir, "src", "index.js"),
    `import { readFileSync } from "node:fs";\nimport * as fsp from "fs";\nconst os = require("os");\nexport default { async fetch() {\n  let read;\n  try { readFileSync("/x"); } catch (error) { read = error.message; }\n  return Response.json({ read, promises: typeof fsp.promises.readFile, eol: os.EOL });\n} };\n`,
  );
  const loaded = await loadProject(dir, { persistTo: false });
  for (const file of ["fs.mjs", "os.mjs"]) assert.ok(loaded.options.script.includes(`node_modules/unenv/dist/runtime/node/${file}`), `unenv's ${file} is bundled`);
  assert.doesNotMatch(loaded.options.script, /from "node:(fs|os)"/);
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  const unenv = await import("unenv/node/fs");
  let expected;
  try {
    unenv.readFileSync("/x");
  } catch (error) {
    expected = error.message;
  }
  assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), { read: expected, promises: "function", eol: "\n" });
});

test("nodejs_compat (v2) from a module's own date: the runtime's module, not unenv's", async (t) => {
  const dir = project(t);
  setConfig(dir, "2025-10-01", ["nodejs_compat"]);
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import fs from "fs";\nexport default { fetch() { fs.writeFileSync("/tmp/a.txt", "kept"); return new Response(fs.readFileSync("/tmp/a.txt", "utf8")); } };\n`);
  const loaded = await loadProject(dir, { persistTo: false });
  assert.match(loaded.options.script, /from "node:fs"/);
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "kept");
});

test("nodejs_compat before 2024-09-23 (v1): an installed package of a built-in's name is bundled, as wrangler does", async (t) => {
  const dir = project(t);
  setConfig(dir, "2024-01-01", ["nodejs_compat"]);
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import { EventEmitter } from "events";\nexport default { fetch() { const e = new EventEmitter(); let got; e.on("x", (v) => (got = v)); e.emit("x", 42); return new Response(String(got)); } };\n`);
  const loaded = await loadProject(dir, { persistTo: false });
  assert.doesNotMatch(loaded.options.script, /from "node:events"/);
  assert.match(loaded.options.script, /node_modules\/events\/events\.js/);
  const worker = await startWorker(loaded, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "42");
});

test("without nodejs_compat: a bare built-in is an error naming the flag and the config file; a node: import warns", async (t) => {
  const dir = copyFixture(t, "bundle", "node-builtins");
  setConfig(dir, "2025-01-01", []);
  const config = path.join(dir, "wrangler.jsonc");
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import util from "util";\nexport default { fetch() { return new Response(typeof util); } };\n`);
  await assert.rejects(loadProject(dir, { persistTo: false }), (error) => {
    assert.ok(error instanceof BuildError);
    assert.equal(error.message, `build failed:\n${path.join(dir, "src", "index.js")}:1:18: Could not resolve "util": it is a Node.js built-in module, which a worker imports by that name with the "nodejs_compat" compatibility flag (add it to compatibility_flags in ${config}) and a compatibility date on or after 2024-09-23, or an installed package named "util"`);
    return true;
  });
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import { Buffer } from "node:buffer";\nexport default { fetch() { return new Response(typeof Buffer); } };\n`);
  const loaded = await loadProject(dir, { persistTo: false });
  assert.equal(loaded.warnings.filter((w) => w.includes('"node:buffer" is a Node.js built-in module: the worker cannot load it without the "nodejs_compat" compatibility flag')).length, 1, loaded.warnings.join("\n"));
});
