// AbortSignals where workerd honours them beyond fetch(): a service binding's fetch() rejects
// with the signal's reason (aborted before or during the call), an AbortSignal passed over RPC
// (enable_abortsignal_rpc) aborts the receiver's copy with the same reason, a DOMException
// crosses RPC as a DOMException; and fetch() of a data: URL answers from the URL itself.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch, service } from "../index.js";
import { useWorker } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

const CALLEE = `
import { WorkerEntrypoint } from "cloudflare:workers";
export default class extends WorkerEntrypoint {
  async fetch() { await scheduler.wait(5000); return new Response("late"); }
  echo(value) { return value; }
  async waitForAbort(signal) {
    let fired = false;
    signal.onabort = () => { fired = true; };
    for (let i = 0; i < 200 && !signal.aborted; i++) await scheduler.wait(10);
    return { aborted: signal.aborted, reason: signal.reason, fired, isSignal: signal instanceof AbortSignal };
  }
}`;

async function run(t, body, options = {}) {
  const worker = await useWorker(t, {
    script: `export default { async fetch(request, env) { return Response.json(await (async () => { ${body} })() ?? null); } }`,
    ...options,
  });
  return (await dispatch(worker, "http://localhost/")).json();
}

test("a service binding's fetch() rejects with its signal's reason, aborted before or during the call", { timeout: scaled(30_000) }, async (t) => {
  const callee = await useWorker(t, { script: CALLEE });
  const started = Date.now();
  const result = await run(
    t,
    `const out = [];
     const reason = (p) => p.then(() => "answered", (e) => typeof e === "string" ? e : e.name + ": " + e.message);
     out.push(await reason(env.SVC.fetch("http://x/", { signal: AbortSignal.abort("before") })));
     const ac = new AbortController();
     const pending = env.SVC.fetch("http://x/", { signal: ac.signal });
     ac.abort();
     out.push(await reason(pending));
     out.push(await reason(env.SVC.fetch("http://x/", { signal: AbortSignal.timeout(50) })));
     out.push(await reason(env.HOST.fetch("http://x/", { signal: AbortSignal.timeout(50) })));
     return out;`,
    { bindings: { SVC: callee, HOST: service(() => new Promise((resolve) => setTimeout(() => resolve(new Response("late")), 3000).unref())) } },
  );
  assert.deepEqual(result, [
    "before",
    "AbortError: The operation was aborted",
    "TimeoutError: The operation was aborted due to timeout",
    "TimeoutError: The operation was aborted due to timeout",
  ]);
  assert.ok(Date.now() - started < 2500, "the aborted calls did not wait for their answers");
});

test("an AbortSignal passed over RPC aborts the receiver's copy with the same reason (enable_abortsignal_rpc)", { timeout: scaled(30_000) }, async (t) => {
  const callee = await useWorker(t, { script: CALLEE, compatibilityFlags: ["enable_abortsignal_rpc"], unsafeExperimental: true });
  const result = await run(
    t,
    `const ac = new AbortController();
     const later = env.SVC.waitForAbort(ac.signal);
     await scheduler.wait(50);
     ac.abort("changed my mind");
     const timeout = await env.SVC.waitForAbort(AbortSignal.timeout(50));
     const echoed = await env.SVC.echo(new AbortController().signal);
     return {
       later: await later,
       already: await env.SVC.waitForAbort(AbortSignal.abort("no")),
       timeout: [timeout.aborted, timeout.fired, timeout.reason instanceof DOMException, timeout.reason.name, timeout.reason.message],
       echoed: [echoed instanceof AbortSignal, echoed.aborted],
       domException: await env.SVC.echo(new DOMException("m", "DataError")) instanceof DOMException,
     };`,
    { bindings: { SVC: callee }, compatibilityFlags: ["enable_abortsignal_rpc"], unsafeExperimental: true },
  );
  assert.deepEqual(result, {
    later: { aborted: true, reason: "changed my mind", fired: true, isSignal: true },
    already: { aborted: true, reason: "no", fired: false, isSignal: true },
    timeout: [true, true, true, "TimeoutError", "The operation was aborted due to timeout"],
    echoed: [true, false],
    domException: true,
  });
});

test("fetch() of a data: URL answers with its bytes and MIME type, as workerd does", async (t) => {
  const result = await run(
    t,
    `const read = async (url, init) => { const r = await fetch(url, init); return [r.status, r.headers.get("content-type"), r.body === null ? null : await r.text()]; };
     return [
       await read("data:,hello%20world"),
       await read("data:Text/HTML;Charset=X;base64,aGk="),
       await read("data:;base64,aGk"),
       await read("data:text/plain,x", { method: "POST", body: "ignored" }),
       await fetch("data:nocomma").then(() => "answered", (e) => e.name),
     ];`,
  );
  assert.deepEqual(result, [
    [200, "text/plain;charset=US-ASCII", "hello world"],
    [200, "text/html;charset=X", "hi"],
    [200, "text/plain;charset=US-ASCII", "hi"],
    [200, "text/plain", null],
    "TypeError",
  ]);
});
