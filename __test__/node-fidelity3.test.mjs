// Node API details workerd's own suite (scripts/workerd-tests.mjs, issue 44 "Fidelity III") found
// different here: util.format/formatWithOptions and util.inspect with `colors` (Node's styles, a
// proxy's "Proxy(…)" in cyan, layout by the width shown), a SharedArrayBuffer's contents, an error
// without a stack in brackets, %j rethrowing what is not a cycle; node:http's ClientRequest timeout,
// its own 400 for a request with no header at all (no Host); tls.connect({ socket }) over any
// Duplex; and a dynamic import of a node: module the flags leave out failing with workerd's
// message. The expected values were printed by workerd (v1.20260426.1) from the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker, useWorker } from "./helpers.mjs";
import { dispatch } from "../index.js";

const OPTIONS = { compatibilityDate: "2025-01-01", compatibilityFlags: ["nodejs_compat", "enable_nodejs_http_modules"] };

test("util colors, proxies, SharedArrayBuffer, errors without a stack, %j; http timeout and host-less 400; tls over a Duplex: as workerd", async (t) => {
  const worker = await useWorker(t, {
    ...OPTIONS,
    script: `import util from "node:util"; import http from "node:http"; import tls from "node:tls"; import { Duplex } from "node:stream";
      export default { async fetch() {
    const out = {};
  out.colors = util.formatWithOptions({ colors: true }, true, undefined, Symbol(), 1, 5n, null, 'foobar', { a: 'x', 'b-c': [1] }, new Date(0), /re/g, () => {}, [undefined]);
  out.proxy = util.inspect(new Proxy([1, 2, 3], {}), { colors: true, breakLength: 1 });
  out.plainProxy = util.inspect(new Proxy({ a: 1 }, {}));
  out.sab = util.format(new SharedArrayBuffer(4));
  out.sabColors = util.inspect(new SharedArrayBuffer(2), { colors: true });
  function Bad(msg) { Error.call(this); Object.defineProperty(this, 'message', { value: msg }); Object.defineProperty(this, 'name', { value: 'Bad' }); }
  Object.setPrototypeOf(Bad.prototype, Error.prototype);
  out.bad = util.format(new Bad('foo'));
  out.jCircular = (() => { const o = {}; o.o = o; return util.format('%j', o); })();
  try { util.format('%j', { toJSON() { throw new Error('nope'); } }); out.jThrow = 'no'; } catch (e) { out.jThrow = e.message; }
  out.columns = util.inspect(Array.from({ length: 30 }, (_, i) => i * 7), { colors: true });
  out.nested = util.inspect({ a: { b: { c: { d: 1 } } }, s: 'str', n: -0, u: undefined }, { colors: true });
  // http: a request with headers given as an empty array has no Host: workerd answers 400 itself
  out.hostless = await new Promise((resolve) => http.get({ hostname: 'example.invalid', headers: [] }, (res) => resolve([res.statusCode, res.statusMessage, res.headers.connection])));
  // setTimeout fires 'timeout'
  out.timeout = await new Promise((resolve) => { const req = http.get({ hostname: 'example.invalid', headers: [] }); req.setTimeout(20, () => resolve('timeout')); });
  out.badTimeout = (() => { try { http.request({ hostname: 'x', headers: [] }).setTimeout('1'); return 'no'; } catch (e) { return [e.name, e.code]; } })();
  out.dup = await new Promise((resolve) => { const d = new Duplex({ read() {}, write(c, e, cb) { queueMicrotask(cb); } }); const s = tls.connect({ socket: d }); queueMicrotask(() => s.destroy()); s.on('close', () => resolve(['closed', d.destroyed])); });
        return Response.json(out);
      } }`,
  });
  const r = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(r, EXPECTED);
});

test("a dynamic import() of a node: module the flags leave out fails with workerd's message alone", async (t) => {
  const r = await evalInWorker(t, `
    const tryImport = async (name) => { try { await import(name); return "imported"; } catch (e) { return e.message; } };
    return [await tryImport("node:assert"), await tryImport("node:nope")];`, { compatibilityDate: "2024-01-01", compatibilityFlags: ["nodejs_als"] });
  assert.deepEqual(r, ['No such module "node:assert".', 'No such module "node:nope".']);
});

const EXPECTED = {
  "colors": "\u001b[33mtrue\u001b[39m \u001b[90mundefined\u001b[39m \u001b[32mSymbol()\u001b[39m \u001b[33m1\u001b[39m \u001b[33m5n\u001b[39m \u001b[1mnull\u001b[22m foobar { a: \u001b[32m'x'\u001b[39m, \u001b[32m'b-c'\u001b[39m: [ \u001b[33m1\u001b[39m ] } \u001b[35m1970-01-01T00:00:00.000Z\u001b[39m \u001b[31m/re/g\u001b[39m \u001b[36m[Function (anonymous)]\u001b[39m [ \u001b[90mundefined\u001b[39m ]",
  "proxy": "\u001b[36mProxy(\u001b[39m[\n  \u001b[33m1\u001b[39m,\n  \u001b[33m2\u001b[39m,\n  \u001b[33m3\u001b[39m\n]\u001b[36m)\u001b[39m",
  "plainProxy": "Proxy({ a: 1 })",
  "sab": "SharedArrayBuffer { [Uint8Contents]: <00 00 00 00>, byteLength: 4 }",
  "sabColors": "SharedArrayBuffer { \u001b[36m[Uint8Contents]\u001b[39m: <00 00>, byteLength: \u001b[33m2\u001b[39m }",
  "bad": "[Bad: foo]",
  "jCircular": "[Circular]",
  "jThrow": "nope",
  "columns": "[\n    \u001b[33m0\u001b[39m,   \u001b[33m7\u001b[39m,  \u001b[33m14\u001b[39m,  \u001b[33m21\u001b[39m,  \u001b[33m28\u001b[39m,  \u001b[33m35\u001b[39m,  \u001b[33m42\u001b[39m,  \u001b[33m49\u001b[39m,\n   \u001b[33m56\u001b[39m,  \u001b[33m63\u001b[39m,  \u001b[33m70\u001b[39m,  \u001b[33m77\u001b[39m,  \u001b[33m84\u001b[39m,  \u001b[33m91\u001b[39m,  \u001b[33m98\u001b[39m, \u001b[33m105\u001b[39m,\n  \u001b[33m112\u001b[39m, \u001b[33m119\u001b[39m, \u001b[33m126\u001b[39m, \u001b[33m133\u001b[39m, \u001b[33m140\u001b[39m, \u001b[33m147\u001b[39m, \u001b[33m154\u001b[39m, \u001b[33m161\u001b[39m,\n  \u001b[33m168\u001b[39m, \u001b[33m175\u001b[39m, \u001b[33m182\u001b[39m, \u001b[33m189\u001b[39m, \u001b[33m196\u001b[39m, \u001b[33m203\u001b[39m\n]",
  "nested": "{ a: { b: { c: \u001b[36m[Object]\u001b[39m } }, s: \u001b[32m'str'\u001b[39m, n: \u001b[33m-0\u001b[39m, u: \u001b[90mundefined\u001b[39m }",
  "hostless": [
    400,
    "Bad Request",
    "close"
  ],
  "timeout": "timeout",
  "badTimeout": [
    "TypeError",
    "ERR_INVALID_ARG_TYPE"
  ],
  "dup": [
    "closed",
    true
  ]
};
