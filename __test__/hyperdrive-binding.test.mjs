// The Hyperdrive binding's own API in the worker (src/js/89_local_bindings.js over the marked
// parts lib/hyperdrive.js gives): the connection's parts as own read-only properties, and
// connect() — a socket straight to the database's host and port, as Miniflare makes it locally —
// here against a loopback echo server standing in for the database. In Node the value stays the
// plain parts.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { createWorker, dispatch, hyperdrive } from "../index.js";

import { scaled } from "./child-node.mjs";
test("env.HD.connect() opens a socket to the database's host and port; the parts are own read-only properties; Node keeps the plain parts", { timeout: scaled(30_000) }, async (t) => {
  const server = net.createServer((socket) => socket.on("data", (data) => socket.write(Buffer.concat([Buffer.from("echo:"), data]))));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const binding = hyperdrive(`postgres://user:pa%40ss@127.0.0.1:${port}/db`);
  assert.deepEqual(Object.keys(binding), ["connectionString", "host", "port", "user", "password", "database"]);
  const worker = await createWorker({
    format: "module",
    compatibilityDate: "2026-08-01",
    bindings: { HD: binding },
    script: `export default {
  async fetch(request, env) {
    const hd = env.HD;
    const socket = hd.connect();
    const writer = socket.writable.getWriter();
    await writer.write(new TextEncoder().encode("ping"));
    const { value } = await socket.readable.getReader().read();
    await socket.close();
    let assigned;
    try { "use strict"; hd.port = 1; assigned = hd.port; } catch (error) { assigned = error.constructor.name; }
    return Response.json({
      echoed: new TextDecoder().decode(value),
      tag: Object.prototype.toString.call(hd),
      keys: Object.keys(hd),
      parts: { host: hd.host, port: hd.port, user: hd.user, password: hd.password, database: hd.database, connectionString: hd.connectionString },
      assigned,
    });
  },
};`,
  });
  t.after(() => worker.dispose());
  const out = await (await dispatch(worker, new Request("http://w/"))).json();
  assert.deepEqual(out, {
    echoed: "echo:ping",
    tag: "[object Hyperdrive]",
    keys: ["connectionString", "host", "port", "user", "password", "database"],
    parts: { host: "127.0.0.1", port, user: "user", password: "pa@ss", database: "db", connectionString: `postgres://user:pa%40ss@127.0.0.1:${port}/db` },
    assigned: "TypeError",
  });
});
