// withEnv(), withExports() and withEnvAndExports() of cloudflare:workers: the importable `env`
// and `exports` read the override inside the callback and its async continuations (timers too),
// the worker's own outside; the callback's result is returned. Expected: what workerd printed
// for the same worker (2025-11-20, a text binding NAME = "base").
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";

const WORKER = `
import { env, exports, withEnv, withExports, withEnvAndExports } from "cloudflare:workers";
export default { async fetch(req, e, ctx) {
  const out = {};
  out.outside = env.NAME;
  out.inside = await withEnv({ NAME: "over" }, async () => { await null; await new Promise(r => setTimeout(r, 1)); return env.NAME; });
  out.after = env.NAME;
  out.returns = withEnv({}, () => 42);
  out.keys = await withEnv({ A: 1, B: 2 }, () => Object.keys(env));
  out.exportsOver = withExports({ Z: 1 }, () => Object.keys(exports));
  out.both = withEnvAndExports({ NAME: "b" }, { Q: 1 }, () => [env.NAME, Object.keys(exports)]);
  try { withEnv({}, "nope"); } catch (err) { out.notFn = String(err); }
  return Response.json(out);
} };`;

const WORKERD = {
  outside: "base",
  inside: "over",
  after: "base",
  returns: 42,
  keys: ["A", "B"],
  exportsOver: ["Z"],
  both: ["b", ["Q"]],
  notFn: "TypeError: Failed to execute 'withEnv' on 'EnvModule': parameter 2 is not of type 'function'.",
};

test("withEnv / withExports / withEnvAndExports as in workerd", async () => {
  const worker = await createWorker({ script: WORKER, format: "module", compatibilityDate: "2025-11-20", bindings: { NAME: "base" }, onLog() {} });
  try {
    assert.deepEqual(await (await dispatch(worker, "http://x/")).json(), WORKERD);
  } finally {
    await worker.dispose();
  }
});
