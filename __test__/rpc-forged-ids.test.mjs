// The host's table of RPC stubs is shared by all workers of a process, addressed by small host
// ids (lib/rpc.js). A worker acts only on the ids handed to it: here worker B rewrites what its
// runtime sends to the host (JSON.stringify replaced, so a dispose or call of one of its own stubs
// names another id) and tries every id below its own. Another worker's RpcTarget and an inbound
// TCP connection's host objects stay alive and usable by their worker; B's forged calls fail as
// calls on a stub that is gone, and its forged disposes are ignored, as a dispose of an unknown id is.
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { dispatch, service } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const OWNER = `
import { WorkerEntrypoint, RpcTarget } from "cloudflare:workers";
const disposed = [];
class T extends RpcTarget {
  constructor(name) { super(); this.name = name; }
  hello() { return "hello " + this.name; }
  [Symbol.dispose]() { disposed.push(this.name); }
}
export default class extends WorkerEntrypoint {
  make(name) { return new T(name); }
  disposed() { return disposed; }
  fetch() { return new Response("owner"); }
  async connect(socket) {
    const writer = socket.writable.getWriter();
    for await (const chunk of socket.readable) await writer.write(chunk);
  }
}`;

// Holds one of OWNER's objects while the test lets B try, then uses it.
const HOLDER = `
export default {
  async fetch(request, env) {
    const t = await env.OWNER.make("held");
    await env.GATE.held();
    const out = { hello: await t.hello().catch((e) => e.message) };
    out.disposed = await env.OWNER.disposed();
    return Response.json(out);
  },
};`;

// Learns the host id of a stub of its own, then names each id below it in a dispose (and a call)
// of a fresh stub of its own.
const FORGER = `
const stringify = JSON.stringify;
let forged;
let seen;
JSON.stringify = function (value, ...rest) {
  if (value !== null && typeof value === "object" && typeof value.stub === "number") {
    seen = value.stub;
    if (forged !== undefined) value = { ...value, stub: forged };
  }
  return stringify.call(JSON, value, ...rest);
};
export default {
  async fetch(request, env) {
    const mine = await env.OWNER.make("mine");
    await mine.hello();
    const own = seen;
    const calls = {};
    for (let id = 1; id < own; id++) {
      const decoy = await env.OWNER.make("decoy");
      forged = id;
      const call = decoy.hello();
      decoy[Symbol.dispose]();
      forged = undefined;
      const answer = await call.then((v) => "answered: " + v, (e) => e.message);
      calls[answer] = (calls[answer] ?? 0) + 1;
    }
    await scheduler.wait(50);
    return Response.json({ own, calls, mine: await mine.hello() });
  },
};`;

const GONE = "The RPC stub was disposed, or the worker holding its object is gone.";

test("a worker cannot dispose or call another worker's RPC stub by naming its host id", { timeout: scaled(60_000) }, async (t) => {
  const owner = await useWorker(t, { script: OWNER, compatibilityDate: "2025-06-01" });
  let held;
  const holding = new Promise((resolve) => (held = resolve));
  let release;
  const released = new Promise((resolve) => (release = resolve));
  const gate = { held: () => (held(), released) };
  const holder = await useWorker(t, { script: HOLDER, compatibilityDate: "2025-06-01", bindings: { OWNER: owner, GATE: service(gate) } });
  const forger = await useWorker(t, { script: FORGER, compatibilityDate: "2025-06-01", bindings: { OWNER: owner } });
  const holderAnswer = dispatch(holder, "http://x/");
  await holding;
  const forged = await (await dispatch(forger, "http://x/")).json();
  release();
  const out = await (await holderAnswer).json();
  // The holder's object was never disposed and still answers it.
  assert.deepEqual(out, { hello: "hello held", disposed: out.disposed.filter((name) => name !== "held") });
  assert.ok(!out.disposed.includes("held"), `the held object was disposed: ${JSON.stringify(out.disposed)}`);
  // B tried at least the holder's id; every forged call failed as a call on a gone stub.
  assert.ok(forged.own > 1, `B's own stub id: ${forged.own}`);
  assert.deepEqual(forged.calls, { [GONE]: forged.own - 1 });
  assert.equal(forged.mine, "hello mine");
});

test("a worker cannot dispose another worker's inbound TCP connection by naming its host objects' ids", { timeout: scaled(60_000) }, async (t) => {
  const owner = await useWorker(t, { script: OWNER, compatibilityDate: "2025-06-01" });
  const forger = await useWorker(t, { script: FORGER, compatibilityDate: "2025-06-01", bindings: { OWNER: owner } });
  const listener = await owner.listenTcp();
  t.after(() => listener.close());
  const client = net.connect(listener.port, "127.0.0.1");
  t.after(() => client.destroy());
  // What comes back for `text`; rejects if the connection closes or nothing comes within 10 s.
  const echoed = (text) =>
    new Promise((resolve, reject) => {
      let got = "";
      const done = (error) => {
        clearTimeout(timer);
        client.off("data", onData).off("close", onClose).off("error", done);
        if (error) reject(error);
        else resolve(got);
      };
      const onData = (chunk) => {
        got += chunk;
        if (got.length >= text.length) done();
      };
      const onClose = () => done(new Error(`the connection closed after ${JSON.stringify(got)}`));
      const timer = setTimeout(() => done(new Error(`no echo of ${text} within 10 s (got ${JSON.stringify(got)})`)), scaled(10_000));
      client.on("data", onData).on("close", onClose).on("error", done);
      client.write(text);
    });
  assert.equal(await echoed("one"), "one");
  const forged = await (await dispatch(forger, "http://x/")).json();
  assert.ok(forged.own > 2, `B's own stub id: ${forged.own}`);
  assert.deepEqual(forged.calls, { [GONE]: forged.own - 1 });
  // The connection's two sides still work for the worker they were handed to.
  assert.equal(await echoed("two"), "two");
  client.end();
});
