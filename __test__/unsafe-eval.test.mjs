// Code from strings as workerd allows it (its unsafe-test, autogate-disabled-test,
// experimental-eval-test and worker-test): the unsafe-eval binding (createWorker's unsafeEval())
// compiles code whatever the eval setting; workerd:unsafe needs the unsafe_module flag;
// allow_insecure_inefficient_logged_eval allows eval throughout; `new Function()` with no
// arguments is allowed where eval is not. Expected values: what workerd gives for the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch, unsafeEval } from "../index.js";

async function run(script, options = {}) {
  const worker = await createWorker({ script, format: "module", compatibilityDate: "2025-10-01", onLog() {}, ...options });
  try {
    return await (await dispatch(worker, "http://x/")).json();
  } finally {
    await worker.dispose();
  }
}

const res = `const res = (f) => { try { return f(); } catch (e) { return [e?.name, String(e?.message).split("\\n")[0]]; } };`;

test("the unsafe-eval binding compiles code while eval itself stays refused", { timeout: 60_000 }, async () => {
  const script = `${res}
  export default { async fetch(req, env) {
    const u = env.U;
    const fn = u.newFunction("return m", "bar", "m");
    const afn = u.newAsyncFunction("return await arguments[0]");
    let stack;
    try { u.eval('throw new Error("boom")', "foo"); } catch (e) { stack = /at foo/.test(e.stack); }
    return Response.json({
      one: u.eval("1"),
      noOuterScope: res(() => u.eval("req")),
      stack,
      fn: [fn.length, fn.name, fn(5)],
      afn: [afn.length, afn.name, await afn(Promise.resolve(7))],
      wasm: u.newWasmModule(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])) instanceof WebAssembly.Module,
      wasmBad: res(() => u.newWasmModule([])),
      evalItself: res(() => eval("1")),
    });
  } };`;
  assert.deepEqual(await run(script, { bindings: { U: unsafeEval() } }), {
    one: 1,
    noOuterScope: ["ReferenceError", "req is not defined"],
    stack: true,
    fn: [1, "bar", 5],
    afn: [0, "anonymous", 7],
    wasm: true,
    wasmBad: ["TypeError", "Failed to execute 'newWasmModule' on 'UnsafeEval': parameter 1 is not of type 'ArrayBuffer or ArrayBufferView'."],
    evalItself: ["EvalError", "Code generation from strings disallowed for this context"],
  });
});

test("workerd:unsafe is there under unsafe_module only", { timeout: 60_000 }, async () => {
  const script = `import unsafe from "workerd:unsafe";
  export default { fetch() { return Response.json([typeof unsafe, unsafe.isTestAutogateEnabled()]); } };`;
  assert.deepEqual(await run(script, { compatibilityFlags: ["unsafe_module"], unsafeExperimental: true }), ["object", false]);
  await assert.rejects(run(script), /workerd:unsafe/);
});

test("allow_insecure_inefficient_logged_eval allows eval and new Function throughout", { timeout: 60_000 }, async () => {
  const script = `const top = eval("1 + 1");
  export default { fetch() { return Response.json([top, eval("2 + 2"), new Function("a", "b", "return a + b")(2, 3)]); } };`;
  assert.deepEqual(await run(script, { compatibilityFlags: ["allow_insecure_inefficient_logged_eval"], unsafeExperimental: true }), [2, 4, 5]);
});

test("new Function() with no arguments works where eval is refused, as workerd's", { timeout: 60_000 }, async () => {
  const script = `${res}
  class Foo extends Function {}
  export default { fetch() {
    return Response.json([
      typeof new Function(), typeof new Foo(), new Function()(), eval(), eval(undefined), res(() => eval(5)), res(() => eval({})),
      res(() => new Function("a", "b", undefined)), res(() => new Function("return 1")), res(() => eval("(function anonymous(\\n) {\\n\\n})")),
    ]);
  } };`;
  const refused = ["EvalError", "Code generation from strings disallowed for this context"];
  assert.deepEqual(await run(script), ["function", "function", null, null, null, refused, refused, refused, refused, refused]);
  // Where eval is allowed (createWorker's allowEval), a source that is not a string comes back as it is.
  assert.deepEqual(await run(`export default { fetch() { return Response.json([eval(5), eval({ a: 1 })]); } };`, { allowEval: true }), [5, { a: 1 }]);
});
