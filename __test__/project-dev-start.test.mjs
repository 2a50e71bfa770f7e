// What `workerbox dev` does on its way to the first answer: a worker's answer (and the assets'
// router asking whether an asset is meant) reaches the client without Node's fetch classes
// (undici, 20-30 ms to load on Node 24), which load only after the first answer; the answer it
// writes is byte for byte the one Node's Response would have given (lib/http.js RAW_ANSWER:
// header names in lower case and sorted, repeats joined, each Set-Cookie its own, UTF-8 values as
// their bytes). Also that lib/api.js's lazily loaded simulated bindings are the ones
// lib/simulated/ exports.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { CLI, scaled, spawnNode } from "./child-node.mjs";

const require = createRequire(import.meta.url);

// The headers of the worker's answer, in the order it appends them: what Node's Headers
// normalises (mixed-case and repeated names, two Set-Cookie headers, a value with a character
// beyond Latin-1).
const APPENDED = [
  ["X-Zeta", "last"],
  ["x-alpha", "one"],
  ["X-Alpha", "two"],
  ["Set-Cookie", "a=1; Path=/"],
  ["Set-Cookie", "b=2"],
  ["X-Name", "caf\u00e9 \u2603"],
  ["Content-Type", "text/plain; charset=utf-8"],
];

// A worker whose answer has APPENDED's headers and a status text.
const WORKER = `export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/stream") {
      const body = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode("a")); c.enqueue(new TextEncoder().encode("b")); c.close(); } });
      return new Response(body, { headers: { "content-type": "text/plain" } });
    }
    if (url.pathname === "/empty") return new Response(null, { status: 204 });
    const headers = new Headers();
    for (const [name, value] of ${JSON.stringify(APPENDED)}) headers.append(name, value);
    return new Response("hello " + request.method + " " + url.pathname, { status: 201, statusText: "Made It", headers });
  },
};
`;

function project(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-dev-start-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }));
  fs.mkdirSync(path.join(dir, "src"));
  fs.mkdirSync(path.join(dir, "public"));
  fs.writeFileSync(path.join(dir, "src", "index.js"), WORKER);
  fs.writeFileSync(path.join(dir, "public", "style.css"), "body { color: red }\n");
  // Comments and a trailing comma: the config's JSONC fast path (lib/project/config.js plainJson).
  fs.writeFileSync(path.join(dir, "wrangler.jsonc"), `// the test's project\n{\n  "name": "dev-start", /* its name */\n  "main": "src/index.js",\n  "compatibility_date": "2025-06-01",\n  "assets": { "directory": "public" },\n}\n`);
  // Notes when Node's fetch classes (undici, which Node loads on the first read of one of those
  // globals) have been loaded, by Node's own list of the internal modules it loaded: whether they
  // were at the first answer's mark (checked as the mark is written), and when they were, as the
  // timing marks count time. (Wrapping the globals' getters would not do: from Node 22 they are
  // V8 lazy data properties, which reading their descriptor already loads.)
  const preload = path.join(dir, "watch-fetch-classes.cjs");
  fs.writeFileSync(preload, `const undici = () => process.moduleLoadList.some((m) => m.endsWith("internal/deps/undici/undici"));
const write = process.stderr.write;
process.stderr.write = function (chunk, ...rest) {
  if (String(chunk).includes("dev: first answer")) write.call(this, "[fetch-classes-at-first-answer] " + undici() + "\\n");
  return write.call(this, chunk, ...rest);
};
const poll = setInterval(() => {
  if (!undici()) return;
  clearInterval(poll);
  process.stderr.write("[fetch-classes] " + performance.now().toFixed(1) + "\\n");
}, 1);
poll.unref();
`);
  return { dir, preload };
}

/** A GET (or `method`) to `url` with node:http: `{ status, statusMessage, rawHeaders, body }`. */
function get(url, method = "GET") {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode, statusMessage: res.statusMessage, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks).toString("latin1") }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The header lines Node's Response (and flatHeaders) would have given for WORKER's answer. */
function expectedHeaders() {
  const { flatHeaders } = require("../lib/http.js");
  const headers = new Headers();
  // (Node's Headers takes a ByteString: a value's UTF-8 bytes, as the worker's answer carries them.)
  for (const [name, value] of APPENDED) headers.append(name, Buffer.from(value, "utf8").toString("latin1"));
  return flatHeaders(headers);
}

/** The headers a response carried, without the ones Node's http server adds (date, connection, …). */
const ADDED = /^(date|connection|keep-alive|transfer-encoding|content-length)$/i;
function ownHeaders(raw) {
  const own = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!ADDED.test(raw[i])) own.push(raw[i], raw[i + 1]);
  return own;
}

test("workerbox dev: the first answer (through the assets' router) loads none of Node's fetch classes; they load after it, and the answer is Node's Response's, byte for byte", { timeout: scaled(120_000) }, async (t) => {
  const { dir, preload } = project(t);
  const child = spawnNode(["--require", preload, CLI, "dev", dir, "--port", "0", "--no-persist"], { env: { ...process.env, NO_COLOR: "1", WORKERBOX_DEV_TIMING: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise((resolve) => child.once("exit", resolve));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  });
  const deadline = Date.now() + scaled(60_000);
  while (!/ready on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) assert.fail(`workerbox dev did not start:\n${out}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const base = /ready on (http:\/\/\S+)/.exec(out)[1];
  const first = await get(new URL("/page", base));
  assert.equal(first.status, 201);
  assert.equal(first.statusMessage, "Made It");
  assert.equal(first.body, "hello GET /page");
  assert.deepEqual(ownHeaders(first.rawHeaders), expectedHeaders());
  // The fetch classes come after the first answer (the dev server loads them once it went out).
  while (!/\[fetch-classes\]/.test(out) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const answered = Number(/\[timing\] ([\d.]+) dev: first answer/.exec(out)?.[1]);
  const loaded = Number(/\[fetch-classes\] ([\d.]+)/.exec(out)?.[1]);
  assert.ok(Number.isFinite(answered), `no first-answer mark:\n${out}`);
  assert.ok(Number.isFinite(loaded), `the fetch classes were never loaded after the first answer:\n${out}`);
  assert.match(out, /\[fetch-classes-at-first-answer\] false/, `Node's fetch classes were loaded by the first answer:\n${out}`);
  assert.ok(loaded > answered, `Node's fetch classes were read at ${loaded} ms, before the first answer at ${answered} ms:\n${out}`);
  // The other answers: an asset (Node's Response), a streamed body, a HEAD, a 204.
  const asset = await get(new URL("/style.css", base));
  assert.equal(asset.status, 200);
  assert.equal(asset.body, "body { color: red }\n");
  assert.match(asset.rawHeaders.join("\n"), /etag/i);
  const streamed = await get(new URL("/stream", base));
  assert.deepEqual([streamed.status, streamed.body], [200, "ab"]);
  const head = await get(new URL("/page", base), "HEAD");
  assert.deepEqual([head.status, head.body], [201, ""]);
  assert.deepEqual(ownHeaders(head.rawHeaders), expectedHeaders());
  const empty = await get(new URL("/empty", base));
  assert.deepEqual([empty.status, empty.body], [204, ""]);
});

test("dispatch() with RAW_ANSWER: the plain answer has what Node's Response would have (status, text, headers as flatHeaders gives them, body), and makes none", { timeout: scaled(60_000) }, async () => {
  // In a process of its own, so that nothing else has loaded Node's fetch classes.
  const script = `
const { createWorker, dispatch } = require(${JSON.stringify(path.resolve("index.js"))});
const { RAW_ANSWER, flatHeaders } = require(${JSON.stringify(path.resolve("lib/http.js"))});
(async () => {
  const worker = await createWorker({ script: ${JSON.stringify(WORKER)} });
  const raw = await dispatch(worker, { url: "http://localhost/page", method: "POST", headers: [["x-in", "1"]], body: null, [RAW_ANSWER]: true });
  const head = await dispatch(worker, { url: "http://localhost/page", method: "HEAD", headers: [], [RAW_ANSWER]: true });
  const stream = await dispatch(worker, { url: "http://localhost/stream", headers: [], [RAW_ANSWER]: true });
  const chunks = [];
  for await (const chunk of stream.body) chunks.push(Buffer.from(chunk).toString());
  const loadedBefore = process.moduleLoadList.some((m) => m.includes("undici"));
  const node = await dispatch(worker, { url: "http://localhost/page", method: "POST", headers: [["x-in", "1"]] });
  const out = {
    loadedBefore,
    raw: { status: raw.status, statusText: raw.statusText, headers: raw.headers, body: Buffer.from(raw.body).toString() },
    node: { status: node.status, statusText: node.statusText, headers: flatHeaders(node.headers), body: await node.text() },
    head: { status: head.status, body: head.body },
    stream: { headers: stream.headers, text: chunks.join("") },
  };
  await worker.dispose();
  console.log(JSON.stringify(out));
})().catch((error) => { console.error(error); process.exit(1); });
`;
  const child = spawnNode(["-e", script], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  assert.equal(code, 0, stderr);
  const out = JSON.parse(stdout);
  assert.equal(out.loadedBefore, false, "a RAW_ANSWER dispatch loaded Node's fetch classes");
  assert.deepEqual(out.raw, out.node);
  assert.deepEqual(out.raw.headers, expectedHeaders());
  assert.deepEqual(out.head, { status: 201, body: null });
  assert.deepEqual(out.stream, { headers: ["content-type", "text/plain"], text: "ab" });
});

test("lib/api.js: the simulated bindings it loads on first use are the ones lib/simulated/ exports", () => {
  const api = require("../lib/api.js");
  const simulated = require("../lib/simulated/index.js");
  for (const name of Object.keys(simulated)) assert.equal(typeof api[name], "function", `lib/api.js has no ${name}()`);
  const source = fs.readFileSync(path.resolve("lib/api.js"), "utf8");
  const listed = JSON.parse(/const SIMULATED = (\[[^\]]*\]);/.exec(source)[1]);
  assert.deepEqual([...listed].sort(), Object.keys(simulated).sort());
});
