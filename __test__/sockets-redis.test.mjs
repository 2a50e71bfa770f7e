// A real Redis (Debian's redis-server) reached from a worker with connect() from cloudflare:sockets,
// RESP written in the test: SET/GET with a value larger than one read, and a pub/sub message from
// one socket to another. The server runs on a free loopback port from a temp dir, without
// persistence, and is stopped and removed after. Without redis-server the test is skipped, saying so.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";
import { createWorker, dispatch } from "workerbox";
import { freePort } from "./helpers.mjs";

function which(command) {
  try {
    return execFileSync("sh", ["-c", `command -v ${command}`], { encoding: "utf8" }).trim() || null;
  } catch {
    return null;
  }
}
const REDIS = which("redis-server");
const SKIP = REDIS === null ? "redis-server not found on PATH (apt-get install -y redis-server)" : false;
if (SKIP) console.log(`# skipped: ${SKIP}`);


async function startRedis(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-redis-"));
  const port = await freePort();
  const server = spawn(REDIS, ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: ["ignore", "pipe", "ignore"] });
  const exited = new Promise((resolve) => server.on("exit", resolve));
  t.after(async () => {
    server.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    server.stdout.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let log = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s:\n${log}`)), 10_000);
    server.stdout.on("data", (chunk) => {
      log += chunk;
      if (/Ready to accept connections/i.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    });
    server.on("exit", (code) => reject(new Error(`redis-server exited (${code}):\n${log}`)));
  });
  return port;
}

const WORKER = `import { connect } from "cloudflare:sockets";
const enc = new TextEncoder(), dec = new TextDecoder();
/** A RESP connection: send(command...) and read until the reply so far ends with a pattern. */
function redis(port) {
  const socket = connect({ hostname: "127.0.0.1", port });
  const writer = socket.writable.getWriter(), reader = socket.readable.getReader();
  let buffered = "";
  return {
    socket,
    send: (...args) => writer.write(enc.encode("*" + args.length + "\\r\\n" + args.map((a) => "$" + enc.encode(a).length + "\\r\\n" + a + "\\r\\n").join(""))),
    async until(pattern) {
      while (!pattern.test(buffered)) {
        const { done, value } = await reader.read();
        if (done) throw new Error("closed after " + JSON.stringify(buffered));
        buffered += dec.decode(value, { stream: true });
      }
      const reply = buffered;
      buffered = "";
      return reply;
    },
  };
}
export default { async fetch(request, env) {
  const port = Number(new URL(request.url).searchParams.get("port"));
  const a = redis(port), b = redis(port);
  const big = "x".repeat(300000);
  await a.send("SET", "greeting", big);
  const set = await a.until(/\\r\\n$/);
  await a.send("GET", "greeting");
  const got = await a.until(/^\\$300000\\r\\nx{300000}\\r\\n$/);
  await a.send("SUBSCRIBE", "news");
  const subscribed = await a.until(/:1\\r\\n$/);
  await b.send("PUBLISH", "news", "hello from b");
  const receivers = await b.until(/\\r\\n$/);
  const message = await a.until(/hello from b\\r\\n$/);
  await a.socket.close(); await b.socket.close();
  return Response.json({ set, gotLength: got.length, subscribed: subscribed.includes("subscribe"), receivers, message });
} }`;

test("Redis: SET/GET and a pub/sub message over connect() with RESP, against a real redis-server", { skip: SKIP }, async (t) => {
  const port = await startRedis(t);
  const worker = await createWorker({ script: WORKER, filename: "redis.js", compatibilityDate: "2025-01-01", onLog() {} });
  t.after(() => worker.dispose());
  const out = await (await dispatch(worker, `http://localhost/?port=${port}`)).json();
  assert.deepEqual(out, { set: "+OK\r\n", gotLength: "$300000\r\n".length + 300000 + 2, subscribed: true, receivers: ":1\r\n", message: "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$12\r\nhello from b\r\n" });
});
