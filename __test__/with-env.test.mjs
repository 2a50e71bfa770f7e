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

// workerd's EnvModule rules (api/modules.c++; its importable-env, importable-exports and
// disable-importable-env tests): with env_module_nullable_support, withEnv(null/undefined) gives
// an empty env (without it, the worker's own); an override that is not an object falls back to
// the worker's; disallow_importable_env empties the worker's own but leaves withEnv working; and
// the env seen while the top level runs holds the bindings too, not only the plain values.
const RULES = `
import { env, exports, withEnv, withExports } from "cloudflare:workers";
const top = [typeof env.KV, env.NAME ?? null];
export default { async fetch() {
  const keys = () => Object.keys(env).sort();
  return Response.json({
    top,
    nul: withEnv(null, () => keys()),
    undef: withEnv(undefined, () => keys()),
    str: withEnv("x", () => keys()),
    obj: await withEnv({ A: 1 }, async () => { await null; return keys(); }),
    exportsNull: withExports(null, () => Object.keys(exports)),
    own: keys(),
  });
} };`;

test("withEnv(null), disallow_importable_env and the top level's env follow workerd's rules", async () => {
  const { kv } = await import("../index.js");
  const run = async (flags) => {
    const worker = await createWorker({ script: RULES, format: "module", compatibilityDate: "2025-11-20", compatibilityFlags: flags, bindings: { NAME: "base", KV: kv() }, onLog() {} });
    try {
      return await (await dispatch(worker, "http://x/")).json();
    } finally {
      await worker.dispose();
    }
  };
  assert.deepEqual(await run(["env_module_nullable_support"]), {
    top: ["object", "base"],
    nul: [],
    undef: [],
    str: ["KV", "NAME"],
    obj: ["A"],
    exportsNull: [],
    own: ["KV", "NAME"],
  });
  // Without the flag null and undefined fall back to the worker's own env.
  const plain = await run([]);
  assert.deepEqual([plain.nul, plain.undef], [["KV", "NAME"], ["KV", "NAME"]]);
  // disallow_importable_env: empty, at the top level too, but withEnv still gives its object.
  const disallowed = await run(["disallow_importable_env"]);
  assert.deepEqual([disallowed.top, disallowed.own, disallowed.obj, disallowed.str], [["undefined", null], [], ["A"], []]);
});
