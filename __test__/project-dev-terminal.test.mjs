// What `workerbox dev` prints in the terminal: uncaught errors of requests and scheduled events
// with their source-mapped stacks and the event they belong to; build errors as esbuild prints
// them (file:line:column and a code frame); a Durable Object binding whose class the bundle does
// not export stops the start (API and CLI, with the config's line, column and frame) and, on a
// reload, keeps the previous worker serving; deploy-only config keys are silent unless --verbose;
// editor temp files neither trigger reloads nor appear in them.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { once } from "node:events";
import { startDevServer } from "workerbox/project";
import { CLI, scaled, spawnNode } from "./child-node.mjs";

const WORKER = `export class Counter {
  fetch() {
    return new Response("counter");
  }
}

function explode() {
  throw new Error("kaboom");
}

export default {
  fetch(request) {
    if (new URL(request.url).pathname === "/boom") explode();
    return new Response("fine");
  },
  scheduled() {
    throw new TypeError("cron went wrong");
  },
};
`;

/** A project in a temp folder: `config` merged over a small wrangler.jsonc, `source` its main. */
function project(t, { config = {}, source = WORKER } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-dev-terminal-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), source);
  writeConfig(dir, config);
  return dir;
}

function writeConfig(dir, config) {
  const base = { name: "terminal", main: "src/index.js", compatibility_date: "2025-06-01" };
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), `${JSON.stringify({ ...base, ...config }, null, 2)}\n`);
}

async function start(t, dir, options = {}) {
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, log: (line) => lines.push(line), ...options });
  t.after(() => server.close());
  return { server, lines };
}

function next(emitter, event, ms = 10000) {
  return once(emitter, event, { signal: AbortSignal.timeout(ms) }).then(([value]) => value);
}

test("an uncaught error of a request is printed with its mapped stack and the request it belongs to", async (t) => {
  const dir = project(t);
  const { server, lines } = await start(t, dir);
  const done = next(server, "request");
  assert.equal((await fetch(`${server.url}boom?x=1`)).status, 500);
  await done;
  const at = lines.findIndex((line) => line.startsWith("✘ [ERROR] GET /boom?x=1: Uncaught Error: kaboom\n"));
  assert.ok(at >= 0, lines.join("\n"));
  assert.ok(lines[at].includes(`at explode (${path.join(dir, "src", "index.js")}:8:9)`), lines[at]);
  assert.match(lines[at + 1], /^GET \/boom 500 \(\d+\.\d ms\)$/);
});

test("the first bundle's source map comes after the start: a stack logged before it waits for it, in order", async (t) => {
  const source = `function where() {
  return new Error("logged").stack;
}

export default {
  fetch() {
    console.log("before");
    console.log(where());
    console.log("after");
    return new Response("fine");
  },
};
`;
  const dir = project(t, { source });
  const { server, lines } = await start(t, dir);
  // The first bundle was made without its map (bundle()'s deferMap): nothing has asked for it yet.
  assert.equal(server.project.mapper.pending, true);
  const done = next(server, "request");
  assert.equal(await (await fetch(server.url)).text(), "fine");
  await done;
  await server.project.sourceMapReady();
  await new Promise((resolve) => setImmediate(resolve));
  const logged = lines.filter((line) => line.startsWith("[terminal]"));
  assert.equal(logged.length, 3, lines.join("\n"));
  assert.equal(logged[0], "[terminal] before");
  assert.ok(logged[1].includes(`at where (${path.join(dir, "src", "index.js")}:2:10)`), logged[1]);
  assert.equal(logged[2], "[terminal] after");
  assert.equal(server.project.mapper.pending, false);
});

test("a failing scheduled handler is printed with its mapped stack", async (t) => {
  const dir = project(t);
  const { server, lines } = await start(t, dir);
  const answer = await fetch(`${server.url}__scheduled?cron=*+*+*+*+*`);
  assert.equal(answer.status, 500);
  const printed = lines.find((line) => line.startsWith('✘ [ERROR] scheduled "* * * * *": Uncaught TypeError: cron went wrong\n'));
  assert.ok(printed, lines.join("\n"));
  assert.ok(printed.includes(`${path.join(dir, "src", "index.js")}:17:11`), printed);
});

test("a build error at start is printed as esbuild prints it, with a code frame", async (t) => {
  const dir = project(t, { source: "export default {\n  fetch() { return new Response(; }\n};\n" });
  const { lines } = await start(t, dir);
  const printed = lines.find((line) => line.startsWith("✘ the worker failed to start"));
  assert.ok(printed, lines.join("\n"));
  assert.match(printed, /✘ \[ERROR\] Unexpected ";"/);
  assert.ok(printed.includes(`${path.join("src", "index.js")}:2:32:`), printed);
  assert.ok(printed.includes("2 │   fetch() { return new Response(; }"), printed);
  assert.match(printed, /\n {8}╵ {33}\^$/);
});

test("a Durable Object class the bundle does not export stops the start, naming it, the config's line and column", async (t) => {
  const dir = project(t, { config: { durable_objects: { bindings: [{ name: "OBJ", class_name: "Missing" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Missing"] }] } });
  const config = path.join(dir, "wrangler.jsonc");
  await assert.rejects(startDevServer(dir, { port: 0, persistTo: false, color: false, log() {} }), (error) => {
    assert.equal(error.name, "ConfigError");
    assert.equal(error.message, `${config}:9:9: durable_objects.bindings[0].class_name: Durable Object binding OBJ: class Missing is not exported by ${path.join("src", "index.js")} (it exports Counter, default); export the class, or set script_name if another worker defines it`);
    return true;
  });
  // The CLI prints it with a frame of the config and exits 1.
  const child = spawnNode([CLI, "dev", dir, "--port", "0", "--no-persist"], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(scaled(30000)) });
  assert.equal(code, 1, stderr);
  assert.ok(stderr.includes("✘ [ERROR] durable_objects.bindings[0].class_name: Durable Object binding OBJ: class Missing is not exported"), stderr);
  assert.ok(stderr.includes(`wrangler.jsonc:9:9:\n`), stderr);
  assert.ok(stderr.includes('9 │         "class_name": "Missing"'), stderr);
});

test("on reload, a Durable Object class not exported keeps the previous worker serving", async (t) => {
  const dir = project(t);
  const { server, lines } = await start(t, dir);
  assert.equal(await (await fetch(server.url)).text(), "fine");
  const reloaded = next(server, "reload");
  writeConfig(dir, { durable_objects: { bindings: [{ name: "OBJ", class_name: "Missing" }] }, migrations: [{ tag: "v1", new_sqlite_classes: ["Missing"] }] });
  const outcome = await reloaded;
  assert.equal(outcome.ok, false);
  assert.match(outcome.error.message, /class Missing is not exported/);
  assert.ok(lines.some((line) => line.startsWith("✘ reload failed, still serving the previous build:") && line.includes("✘ [ERROR] durable_objects.bindings[0].class_name")), lines.join("\n"));
  assert.equal(await (await fetch(server.url)).text(), "fine");
});

test("deploy-only keys are accepted silently; --verbose lists them", async (t) => {
  const config = { $schema: "node_modules/wrangler/config-schema.json", observability: { enabled: true }, upload_source_maps: true, shiny_new_feature: 1 };
  const quiet = await start(t, project(t, { config }));
  const warnings = quiet.lines.filter((line) => line.startsWith("▲"));
  assert.equal(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0], /shiny_new_feature: unknown configuration key; ignored/);
  assert.ok(!quiet.lines.some((line) => /deploying/.test(line)), quiet.lines.join("\n"));
  const verbose = await start(t, project(t, { config }), { verbose: true });
  const notes = verbose.lines.filter((line) => line.startsWith("·"));
  assert.deepEqual(notes.map((line) => /: (\$schema|observability|upload_source_maps): used only when deploying/.exec(line)?.[1]), ["$schema", "observability", "upload_source_maps"]);
});

test("editor temp files neither trigger a reload nor appear in one", async (t) => {
  const dir = project(t);
  const { server, lines } = await start(t, dir);
  let reloads = 0;
  server.on("reload", () => reloads++);
  for (const name of [".index.js.swp", "index.js~", "sedAb12Cd", "4913"]) fs.writeFileSync(path.join(dir, "src", name), "x");
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(reloads, 0);
  const reloaded = next(server, "reload");
  fs.writeFileSync(path.join(dir, "src", "sedXy98Zw"), WORKER.replace('"fine"', '"edited"'));
  fs.renameSync(path.join(dir, "src", "sedXy98Zw"), path.join(dir, "src", "index.js")); // as sed -i saves
  assert.equal((await reloaded).ok, true);
  assert.equal(await (await fetch(server.url)).text(), "edited");
  const line = lines.find((l) => l.startsWith("⎔ reloaded"));
  assert.equal(line, `⎔ reloaded terminal (${path.join("src", "index.js")})`);
});
