// `workerbox dev`: a TypeScript project with an npm dependency bundled and served, request log
// and labelled console lines, the dev error page with mapped stacks, streaming bodies both ways,
// /__scheduled, assets in front of the worker, hot reload, a taken port, WebSocket upgrades,
// and the CLI (dev and serve) shutting down cleanly on SIGINT/SIGTERM.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import net from "node:net";
import http from "node:http";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startDevServer } from "workerbox/project";
import { copyFixture } from "./helpers.mjs";
import { CLI, scaled, spawnNode } from "./child-node.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

const copyApp = (t) => copyFixture(t, "ts-app");

async function startApp(t, options = {}) {
  const dir = copyApp(t);
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, log: (line) => lines.push(line), ...options });
  t.after(() => server.close());
  return { dir, server, lines };
}

/** Resolves with the next `event` the emitter sends, or rejects after `ms`. */
function next(emitter, event, ms = 10000) {
  return once(emitter, event, { signal: AbortSignal.timeout(ms) }).then(([value]) => value);
}

test("a TypeScript project with an npm dependency is bundled and served", async (t) => {
  const { server } = await startApp(t);
  const info = await (await fetch(`${server.url}info`)).json();
  assert.deepEqual(info, { build: "workerd", greeting: "Hello from a text module", blob: 3, sum: 5, version: "1.2.3", greetingVar: "hello", secret: "dev-secret" });
  assert.equal(await (await fetch(`${server.url}page`)).text(), '<p class="greeting">Hi Ada</p>');
});

test("each request gets a log line; console output is labelled with the worker's name", async (t) => {
  const { server, lines } = await startApp(t);
  const logged = next(server, "request");
  assert.equal(await (await fetch(`${server.url}log?x=1`)).text(), "logged");
  assert.deepEqual({ ...(await logged), ms: 0 }, { method: "GET", path: "/log", status: 200, ms: 0 });
  assert.ok(lines.includes("[ts-app] worker says hi"), lines.join("\n"));
  assert.ok(lines.some((line) => /^GET \/log 200 \(\d+\.\d ms\)$/.test(line)), lines.join("\n"));
});

test("an uncaught error gives the dev error page with the stack mapped to the TypeScript source", async (t) => {
  const { server, dir } = await startApp(t);
  const html = await fetch(`${server.url}explode`, { headers: { accept: "text/html" } });
  assert.equal(html.status, 500);
  assert.match(html.headers.get("content-type"), /text\/html/);
  const page = await html.text();
  assert.match(page, /<h1>Error: exploded: on purpose<\/h1>/);
  assert.ok(page.includes(`at explode (${path.join(dir, "src", "fail.ts")}:4:9)`), page);
  const text = await (await fetch(`${server.url}explode`)).text();
  assert.ok(text.startsWith("Uncaught Error: exploded: on purpose\n"), text);
  assert.ok(text.includes(`${path.join(dir, "src", "index.ts")}:`), text);
});

test("request and response bodies stream: the echo answers before the request has ended", async (t) => {
  const { server } = await startApp(t);
  const request = http.request(`${server.url}echo`, { method: "POST", headers: { "content-type": "text/plain", "transfer-encoding": "chunked" } });
  request.write("first|");
  const [response] = await once(request, "response", { signal: AbortSignal.timeout(10000) });
  assert.equal(response.headers["x-method"], "POST");
  const [chunk] = await once(response, "data", { signal: AbortSignal.timeout(10000) });
  assert.equal(chunk.toString(), "first|");
  request.end("second");
  let rest = "";
  for await (const more of response) rest += more;
  assert.equal(rest, "second");

  const streamed = await fetch(`${server.url}stream`);
  assert.equal(await streamed.text(), "chunk0\nchunk1\nchunk2\n");
});

test("/__scheduled runs the scheduled handler with the given cron", async (t) => {
  const { server, lines } = await startApp(t);
  const response = await fetch(`${server.url}__scheduled?cron=${encodeURIComponent("*/10 * * * *")}`);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { outcome: "ok", cron: "*/10 * * * *", noRetry: false });
  assert.ok(lines.includes("[ts-app] scheduled */10 * * * *"), lines.join("\n"));
});

test("assets are served in front of the worker, which gets what matches no asset", async (t) => {
  const { server } = await startApp(t);
  const home = await fetch(server.url);
  assert.equal(await home.text(), "<h1>Home</h1>\n");
  assert.match(home.headers.get("etag"), /^"[0-9a-f]{32}"$/);
  const again = await fetch(server.url, { headers: { "if-none-match": home.headers.get("etag") } });
  assert.equal(again.status, 304);
  const docs = await fetch(`${server.url}docs`, { redirect: "manual" });
  assert.equal(docs.status, 307);
  assert.equal(docs.headers.get("location"), "/docs/");
  const missing = await fetch(`${server.url}nothing-here`);
  assert.equal(missing.status, 404);
  assert.equal(await missing.text(), "worker fallback: /nothing-here");
  // env.ASSETS.fetch() inside the worker
  assert.equal(await (await fetch(`${server.url}via-assets`)).text(), "<h1>Docs</h1>\n");
});

test("hot reload: an edit rebuilds and swaps only this worker; a broken edit keeps the last good build", async (t) => {
  const { server, dir, lines } = await startApp(t);
  const file = path.join(dir, "src", "index.ts");
  const source = fs.readFileSync(file, "utf8");
  assert.equal(await (await fetch(`${server.url}mark`)).text(), "v1");
  assert.equal(await (await fetch(`${server.url}counter`)).text(), "1");

  let reloaded = next(server, "reload");
  fs.writeFileSync(file, source.replace('const MARK = "v1"', 'const MARK = "v2"'));
  assert.deepEqual(await reloaded, { ok: true, changed: [file] });
  assert.equal(await (await fetch(`${server.url}mark`)).text(), "v2");
  // The KV store outlives the worker it served.
  assert.equal(await (await fetch(`${server.url}counter`)).text(), "2");

  reloaded = next(server, "reload");
  fs.writeFileSync(file, `${source}\nexport const broken = ;\n`);
  const failed = await reloaded;
  assert.equal(failed.ok, false);
  assert.match(failed.error.message, /index\.ts:\d+:\d+: Unexpected ";"/);
  assert.ok(lines.some((line) => line.startsWith("✘ reload failed, still serving the previous build")));
  assert.equal(await (await fetch(`${server.url}mark`)).text(), "v2");

  reloaded = next(server, "reload");
  fs.renameSync(path.join(dir, "src", "greeting.txt"), path.join(dir, "src", "greeting.old"));
  fs.writeFileSync(path.join(dir, "src", "greeting.txt"), "Replaced by rename\n"); // as editors save
  fs.writeFileSync(file, source.replace('const MARK = "v1"', 'const MARK = "v3"'));
  assert.equal((await reloaded).ok, true);
  assert.equal(await (await fetch(`${server.url}mark`)).text(), "v3");
  assert.equal((await (await fetch(`${server.url}info`)).json()).greeting, "Replaced by rename");
});

test("hot reload: a config change reloads bindings (a bad one keeps the old build), stores survive; an asset change needs no rebuild", async (t) => {
  const { server, dir } = await startApp(t);
  const config = path.join(dir, "wrangler.jsonc");
  assert.equal(await (await fetch(`${server.url}counter`)).text(), "1");
  let reloaded = next(server, "reload");
  fs.writeFileSync(config, "{ this is not json");
  const failed = await reloaded;
  assert.equal(failed.ok, false);
  assert.match(failed.error.message, /wrangler\.jsonc:1:3: invalid JSON/);
  assert.equal((await (await fetch(`${server.url}info`)).json()).greetingVar, "hello"); // still the old build
  reloaded = next(server, "reload");
  fs.writeFileSync(config, fs.readFileSync(path.join(HERE, "fixtures", "ts-app", "wrangler.jsonc"), "utf8"));
  assert.equal((await reloaded).ok, true);
  reloaded = next(server, "reload");
  fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace('"GREETING": "hello"', '"GREETING": "bonjour"'));
  assert.equal((await reloaded).ok, true);
  assert.equal((await (await fetch(`${server.url}info`)).json()).greetingVar, "bonjour");
  // The in-memory KV namespace outlived both config reloads.
  assert.equal(await (await fetch(`${server.url}counter`)).text(), "2");

  const refreshed = next(server, "assets");
  fs.writeFileSync(path.join(dir, "public", "new.html"), "<p>new</p>");
  await refreshed;
  assert.equal(await (await fetch(`${server.url}new`)).text(), "<p>new</p>");
});

test("a worker that fails to start: the server still starts, shows the mapped error, and recovers on save", async (t) => {
  const dir = copyApp(t);
  const file = path.join(dir, "src", "index.ts");
  const source = fs.readFileSync(file, "utf8");
  fs.writeFileSync(file, source.replace('const MARK = "v1";', 'const MARK = "v1";\nif (MARK) throw new RangeError("bad start");'));
  const lines = [];
  const server = await startDevServer(dir, { port: 0, persistTo: false, color: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  assert.equal(server.worker, null);
  assert.ok(lines.some((line) => line.startsWith("✘ the worker failed to start")), lines.join("\n"));
  const broken = await fetch(`${server.url}mark`);
  assert.equal(broken.status, 500);
  const text = await broken.text();
  assert.match(text, /^Uncaught RangeError: bad start\n/);
  assert.ok(text.includes(`${file}:21:17`), text);
  assert.equal(await (await fetch(server.url)).text(), "<h1>Home</h1>\n"); // assets still served
  const reloaded = next(server, "reload");
  fs.writeFileSync(file, source);
  assert.equal((await reloaded).ok, true);
  assert.equal(await (await fetch(`${server.url}mark`)).text(), "v1");
});

test("WebSocket upgrade requests reach the worker; its non-101 answer is passed back", async (t) => {
  const { server } = await startApp(t);
  const request = http.request(`${server.url}upgrade`, { headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" } });
  request.end();
  const [response] = await once(request, "response", { signal: AbortSignal.timeout(10000) });
  assert.equal(response.statusCode, 426);
  let body = "";
  for await (const chunk of response) body += chunk;
  assert.equal(body, "upgrade refused by the worker");
});

test("a taken port is a clear error (API) and exit code 1 (CLI)", async (t) => {
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  t.after(() => blocker.close());
  const { port } = blocker.address();
  const dir = copyApp(t);
  await assert.rejects(startDevServer(dir, { port, persistTo: false, log() {} }), (error) => {
    assert.equal(error.code, "EADDRINUSE");
    assert.equal(error.message, `port ${port} on 127.0.0.1 is already in use; stop the other server or pass --port (0 picks a free port)`);
    return true;
  });
  const child = spawnNode([CLI, "dev", dir, "--port", String(port), "--no-persist"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(scaled(20000)) });
  assert.equal(code, 1);
  assert.match(stderr, new RegExp(`workerbox dev: port ${port} on 127\\.0\\.0\\.1 is already in use`));
});

/** Starts the CLI and resolves once it prints its URL. */
async function startCli(t, args, ready) {
  const child = spawnNode([CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  t.after(() => child.exitCode === null && child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`CLI did not start: ${stdout}${stderr}`)), scaled(20000));
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const match = ready.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", (code) => reject(new Error(`CLI exited with ${code}: ${stdout}${stderr}`)));
  });
  return { child, url, output: () => stdout + stderr };
}

test("CLI: workerbox dev serves the project and exits 0 on SIGINT", async (t) => {
  const dir = copyApp(t);
  const { child, url, output } = await startCli(t, ["dev", dir, "--port", "0", "--no-persist", "--var", "GREETING=from-cli"], /ready on (http:\/\/\S+)/);
  assert.equal((await (await fetch(`${url}info`)).json()).greetingVar, "from-cli");
  await fetch(`${url}log`).then((r) => r.text());
  child.kill("SIGINT");
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(20000) });
  assert.equal(code, 0, output());
  assert.match(output(), /\[ts-app\] worker says hi/);
  assert.match(output(), /GET \/log 200/);
  assert.match(output(), /SIGINT, shutting down/);
});

test("CLI: workerbox serve still works, streams a POST body and exits 0 on SIGTERM", async (t) => {
  const example = path.join(HERE, "..", "examples", "hello.js");
  const { child, url, output } = await startCli(t, ["serve", example, "--port", "0", "--var", "GREETING=hey"], /on (http:\/\/\S+)/);
  assert.deepEqual(await (await fetch(`${url}json?name=t`)).json(), { hello: "t", greeting: "hey" });
  const body = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode("streamed "));
      controller.enqueue(new TextEncoder().encode("body"));
      controller.close();
    },
  });
  const echoed = await fetch(`${url}echo`, { method: "POST", body, duplex: "half" });
  assert.equal(await echoed.text(), "streamed body");
  child.kill("SIGTERM");
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(20000) });
  assert.equal(code, 0, output());
});

test("a request path that starts with // stays a path on the dev server's origin", async (t) => {
  const { server } = await startApp(t);
  const response = await new Promise((resolve, reject) => {
    // server.url ends with "/": the request target is "//nowhere//here".
    http.get(`${server.url}/nowhere//here`, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => resolve([res.statusCode, body]));
    }).on("error", reject);
  });
  assert.deepEqual(response, [404, "worker fallback: //nowhere//here"]);
});

test("the server listens while the first worker is made: a request that comes meanwhile waits for it", { timeout: scaled(60000) }, async (t) => {
  const dir = copyApp(t);
  // A top level that takes a while: the port is open well before the worker is ready.
  const index = path.join(dir, "src", "index.ts");
  fs.writeFileSync(index, `const until = Date.now() + 300;\nwhile (Date.now() < until) {}\n${fs.readFileSync(index, "utf8")}`);
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, "127.0.0.1", resolve));
  const { port } = blocker.address();
  await new Promise((resolve) => blocker.close(resolve));
  let resolved = false;
  const starting = startDevServer(dir, { port, persistTo: false, watch: false, log() {} }).then((server) => {
    resolved = true;
    return server;
  });
  t.after(async () => (await starting).close());
  // Connect as soon as the port takes connections, then ask.
  const deadline = Date.now() + scaled(30000);
  let socket;
  let connectedBeforeStart;
  while (socket === undefined) {
    try {
      socket = await new Promise((resolve, reject) => {
        const attempt = net.connect(port, "127.0.0.1", () => resolve(attempt));
        attempt.once("error", reject);
      });
      connectedBeforeStart = !resolved;
    } catch {
      assert.ok(Date.now() < deadline, "the dev server never took a connection");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk) => (text += chunk));
  socket.write("GET /mark HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
  await once(socket, "close");
  assert.equal(connectedBeforeStart, true, "the port took the connection before startDevServer resolved");
  assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  assert.ok(text.endsWith("\r\n\r\nv1") || text.includes("\r\n\r\n2\r\nv1\r\n"), text);
});
