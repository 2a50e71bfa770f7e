// Bundling: stacks mapped to the original TypeScript, build errors naming file and line, incremental rebuilds,
// no_bundle projects (and code-split ones loading chunks with dynamic import()), module rules replacing
// defaults, and what happens without esbuild (an optional peer dependency): JavaScript loads
// unbundled with a warning, TypeScript is an error.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { loadProject, startWorker, BuildError } from "workerbox/project";
import { dispatch } from "workerbox";
import { copyFixture } from "./helpers.mjs";
import { scaled, spawnNode } from "./child-node.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.join(HERE, "fixtures");

const copy = copyFixture;

test("a thrown error's stack, fileName and lineNumber point into the TypeScript sources", async (t) => {
  const dir = copy(t, "ts-app");
  const project = await loadProject(dir, { persistTo: false });
  assert.equal(project.options.filename, path.join(dir, ".workerbox", "bundle", "index.js"));
  assert.ok(fs.existsSync(`${project.options.filename}.map`));
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  const error = await dispatch(worker, "http://localhost/explode").then(
    () => assert.fail("expected a rejection"),
    (caught) => project.mapError(caught),
  );
  assert.equal(error.message, "exploded: on purpose");
  const frames = error.stack.split("\n").filter((line) => line.includes(dir));
  assert.equal(frames[0].trim(), `at explode (${path.join(dir, "src", "fail.ts")}:4:9)`);
  assert.match(frames[1], new RegExp(`index\\.ts:\\d+:\\d+\\)$`));
});

test("console lines carrying a stack are mapped too", async (t) => {
  const dir = copy(t, "ts-app");
  const file = path.join(dir, "src", "index.ts");
  fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('console.log("worker says hi");', 'console.log(new Error("logged").stack);'));
  const lines = [];
  const project = await loadProject(dir, { persistTo: false, onLog: (level, message) => lines.push(message) });
  const worker = await startWorker(project);
  t.after(() => worker.dispose());
  await (await dispatch(worker, "http://localhost/log")).text();
  await worker.waitUntilSettled();
  assert.equal(lines.length, 1);
  assert.match(lines[0], new RegExp(`^Error: logged\\n\\s+at Object\\.fetch \\(${file.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")}:\\d+:\\d+\\)`));
});

test("a build error is a BuildError naming the file, line and column", async (t) => {
  const dir = copy(t, "ts-app");
  fs.writeFileSync(path.join(dir, "src", "fail.ts"), "export function explode(): never {\n  throw new Error(;\n}\n");
  await assert.rejects(loadProject(dir, { persistTo: false }), (error) => {
    assert.ok(error instanceof BuildError);
    assert.equal(error.message, `build failed:\n${path.join(dir, "src", "fail.ts")}:2:19: Unexpected ";"`);
    return true;
  });
});

test("no_bundle: main and the module files beside it load as they are; a project rule replaces the default", async (t) => {
  const dir = copy(t, "bundle", "plain-js");
  const project = await loadProject(dir, { persistTo: false });
  assert.equal(project.options.filename, path.join(dir, "src", "index.js"));
  assert.deepEqual(Object.keys(project.options.modules).sort(), [path.join(dir, "src", "lib", "shout.js"), path.join(dir, "src", "page.tmpl")]);
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "HELLO PLAIN");
});

test("without esbuild: a JavaScript main loads unbundled with a warning; a TypeScript main is a clear error", async (t) => {
  const js = copy(t, "bundle", "plain-js");
  const config = path.join(js, "wrangler.toml");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace("no_bundle = true\n", ""));
  const ts = copy(t, "ts-app");
  const dir = path.join(FIXTURES, "bundle", "no-esbuild");
  const child = spawnNode(["-r", path.join(dir, "hide-esbuild.cjs"), path.join(dir, "check.cjs"), js, ts], { cwd: HERE, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(scaled(30000)) });
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  assert.equal(result.text, "HELLO PLAIN");
  assert.deepEqual(result.warnings, [`esbuild is not installed: ${path.join("src", "index.js")} and the modules beside it are loaded without bundling`]);
  assert.equal(result.tsError, `${path.join(ts, "src", "index.ts")} needs bundling, but esbuild is not installed: run \`npm install --save-dev esbuild\` (it is an optional peer dependency of workerbox)`);
});

test("no_bundle: .cjs files and files matched by a CommonJS rule load as CommonJS modules", async (t) => {
  const dir = copy(t, "bundle", "plain-js");
  const config = path.join(dir, "wrangler.toml");
  fs.writeFileSync(config, `${fs.readFileSync(config, "utf8")}\n[[rules]]\ntype = "CommonJS"\nglobs = ["**/legacy/*.js"]\n`);
  fs.mkdirSync(path.join(dir, "src", "legacy"));
  fs.writeFileSync(path.join(dir, "src", "legacy", "greet.js"), `const { suffix } = require("../lib/suffix.cjs");\nexports.greet = (name) => "hi " + name + suffix + " " + typeof module;\n`);
  fs.writeFileSync(path.join(dir, "src", "lib", "suffix.cjs"), `module.exports = { suffix: "!" };\n`);
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import { greet } from "./legacy/greet.js";\nimport suffix from "./lib/suffix.cjs";\nexport default { fetch() { return new Response(greet("cjs") + " " + suffix.suffix); } };\n`);
  const project = await loadProject(dir, { persistTo: false });
  assert.equal(project.options.modules[path.join(dir, "src", "legacy", "greet.js")].type, "commonjs");
  assert.equal(project.options.modules[path.join(dir, "src", "lib", "suffix.cjs")].type, "commonjs");
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), "hi cjs! object !");
});

test("no_bundle with dynamic import() (a code-split build): each chunk evaluated only when first imported, stacks naming its file", async (t) => {
  const dir = copy(t, "bundle", "plain-js");
  fs.mkdirSync(path.join(dir, "src", "chunks"));
  // As Vite writes a split server build: an entry importing chunks on demand, with a source map.
  fs.writeFileSync(path.join(dir, "src", "chunks", "late.js"), `globalThis.order.push("late evaluated");\nexport const late = (n) => "late " + n;\nexport function fail() { throw new Error("from the late chunk"); }\n`);
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import template from "./page.tmpl";
globalThis.order = ["entry evaluated"];
export default {
  async fetch(request) {
    const url = new URL(request.url);
    globalThis.order.push("request");
    const chunk = await import("./chunks/late.js");
    if (url.pathname === "/fail") chunk.fail();
    return new Response(chunk.late(2) + " | " + globalThis.order.join(", ") + " | " + template.trim().length);
  },
};\n`);
  const project = await loadProject(dir, { persistTo: false });
  assert.ok(Object.keys(project.options.modules).includes(path.join(dir, "src", "chunks", "late.js")), "the chunk is a module of the worker");
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  const length = fs.readFileSync(path.join(dir, "src", "page.tmpl"), "utf8").trim().length;
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), `late 2 | entry evaluated, request, late evaluated | ${length}`);
  assert.equal(await (await dispatch(worker, "http://localhost/")).text(), `late 2 | entry evaluated, request, late evaluated, request | ${length}`, "evaluated once");
  // The text module beside it is still a module of the worker, and stacks name the chunk's file.
  assert.ok(Object.keys(project.options.modules).includes(path.join(dir, "src", "page.tmpl")), Object.keys(project.options.modules).join(", "));
  await assert.rejects(dispatch(worker, "http://localhost/fail"), (error) => {
    project.mapError(error);
    assert.match(error.stack, new RegExp(`${path.join(dir, "src", "chunks", "late.js").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:`));
    return true;
  });
});

test("incremental: rebuilds reuse one esbuild context, see edits (module-rule files too) and end with dispose()", { timeout: scaled(60_000) }, async (t) => {
  const dir = copy(t, "ts-app");
  const project = await loadProject(dir, { persistTo: false, incremental: true });
  t.after(() => project.dispose());
  const textModule = path.join(dir, "src", "greeting.txt");
  assert.ok(Object.keys(project.options.modules).includes(textModule));
  fs.writeFileSync(path.join(dir, "src", "fail.ts"), fs.readFileSync(path.join(dir, "src", "fail.ts"), "utf8").replace("exploded: ", "blew up: "));
  fs.writeFileSync(textModule, "edited greeting");
  const options = await project.rebuild();
  assert.match(options.script, /blew up: /);
  assert.deepEqual(Object.keys(options.modules).filter((file) => file === textModule), [textModule]);
  assert.equal(options.modules[textModule].content.toString(), "edited greeting");
  // The stack mapper of the rebuilt bundle still names the TypeScript file.
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  const error = await dispatch(worker, "http://localhost/explode").then(
    () => assert.fail("expected a rejection"),
    (caught) => project.mapError(caught),
  );
  assert.equal(error.message, "blew up: on purpose");
  assert.ok(error.stack.includes(`${path.join(dir, "src", "fail.ts")}:4:9`), error.stack);
  await project.dispose();
  // After dispose(), rebuild() makes a new context.
  assert.match((await project.rebuild()).script, /blew up: /);
});

test("module rules reach esbuild as a filter: the default rules' extensions only, any relative path for a glob without one", async (t) => {
  const { rulesFilter, effectiveRules } = createRequire(import.meta.url)("../lib/project/bundle.js");
  const defaults = rulesFilter(effectiveRules());
  for (const claimed of ["./greeting.txt", "../x/page.html", "./add.wasm", "./add.wasm?module", "/abs/blob.bin"]) assert.ok(defaults.test(claimed), claimed);
  for (const passed of ["./view", "./a.js", "greet-lib", "node:fs", "greeting.txt"]) assert.ok(!defaults.test(passed), passed);
  assert.equal(String(rulesFilter(effectiveRules([{ type: "Text", globs: ["**/*.{tmpl,md}"] }]))), "/^[./]/");
  // Such a rule still claims its files in a bundle (the default ones too).
  const dir = copy(t, "ts-app");
  const config = path.join(dir, "wrangler.jsonc");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace(`"main": "src/index.ts",`, `"main": "src/index.ts",\n  "rules": [{ "type": "Text", "globs": ["**/*.{tmpl,md}"], "fallthrough": true }],`));
  fs.writeFileSync(path.join(dir, "src", "page.tmpl"), "<p>from a template</p>\n");
  const index = path.join(dir, "src", "index.ts");
  fs.writeFileSync(index, `// @ts-ignore\nimport template from "./page.tmpl";\n${fs.readFileSync(index, "utf8").replace(`case "/mark":`, `case "/template":\n        return new Response(template);\n      case "/mark":`)}`);
  const project = await loadProject(dir, { persistTo: false });
  assert.equal(project.options.modules[path.join(dir, "src", "page.tmpl")].type, "text");
  assert.equal(project.options.modules[path.join(dir, "src", "greeting.txt")].type, "text");
  const worker = await startWorker(project, { onLog() {} });
  t.after(() => worker.dispose());
  assert.equal(await (await dispatch(worker, "http://localhost/template")).text(), "<p>from a template</p>\n");
  assert.equal((await (await dispatch(worker, "http://localhost/info")).json()).sum, 5);
});

test("process.env.NODE_ENV is the bundle's constant, as wrangler dev defines it: the shell's NODE_ENV, else development; a project's define wins", async (t) => {
  const dir = copy(t, "bundle", "plain-js");
  const config = path.join(dir, "wrangler.toml");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace("no_bundle = true\n", ""));
  // React's CommonJS entry points pick a build this way: only the chosen one is bundled.
  fs.writeFileSync(path.join(dir, "src", "mode.cjs"), `if (process.env.NODE_ENV === "production") module.exports = require("./mode-production.cjs");\nelse module.exports = require("./mode-development.cjs");\n`);
  fs.writeFileSync(path.join(dir, "src", "mode-production.cjs"), `module.exports = "PRODUCTION_BUILD";\n`);
  fs.writeFileSync(path.join(dir, "src", "mode-development.cjs"), `module.exports = "DEVELOPMENT_BUILD";\n`);
  // No nodejs_compat: the worker has no `process`, so the reads must be constants.
  fs.writeFileSync(path.join(dir, "src", "index.js"), `import mode from "./mode.cjs";\nexport default { fetch() { return Response.json([process.env.NODE_ENV, global.process.env.NODE_ENV, globalThis.process.env.NODE_ENV, mode]); } };\n`);
  const saved = process.env.NODE_ENV;
  t.after(() => (saved === undefined ? delete process.env.NODE_ENV : (process.env.NODE_ENV = saved)));
  const answer = async (setting) => {
    if (setting === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = setting;
    const project = await loadProject(dir, { persistTo: false });
    const worker = await startWorker(project, { onLog() {} });
    try {
      return { body: await (await dispatch(worker, "http://localhost/")).json(), script: fs.readFileSync(project.options.filename, "utf8") };
    } finally {
      await worker.dispose();
    }
  };
  const development = await answer(undefined);
  assert.deepEqual(development.body, ["development", "development", "development", "DEVELOPMENT_BUILD"]);
  assert.ok(!development.script.includes("PRODUCTION_BUILD"), "the production branch's module is left out");
  const production = await answer("production");
  assert.deepEqual(production.body, ["production", "production", "production", "PRODUCTION_BUILD"]);
  assert.ok(!production.script.includes("DEVELOPMENT_BUILD"));
  // The project's own define of the key wins over both.
  fs.writeFileSync(config, `${fs.readFileSync(config, "utf8").replace("[[rules]]", `[define]\n"process.env.NODE_ENV" = '"staging"'\n\n[[rules]]`)}`);
  assert.deepEqual((await answer("production")).body, ["staging", "production", "production", "DEVELOPMENT_BUILD"]);
});
