// The setup file of workerbox/vitest's `isolatedStorage` (put first among the project's setup
// files by lib/vitest/index.js), run in the isolate before each test file. With the option on:
// a beforeEach hook marks the storage and an afterEach hook undoes what the test wrote
// (lib/vitest/isolated-storage.js in the pool). Registered first, the beforeEach runs before the
// project's own and — Vitest running after-hooks in reverse order — the afterEach after theirs, so
// what those hooks write is undone too. A `describe` block is marked before its beforeAll hooks
// and undone after its afterAll hooks (Vitest's runner's onBeforeRunSuite / onAfterRunSuite), so
// its tests start from what its beforeAll left, and the file's next tests from what the file's did.
import { beforeEach, afterEach, TestRunner } from "vitest";

const runner = globalThis.__workerboxVitest;
const PATCHED = Symbol.for("workerbox.vitest.isolatedStorage");

async function ask(action) {
  try {
    await runner.callPool("isolated", action);
  } catch (error) {
    throw new Error(`workerbox/vitest: ${error.message}`);
  }
}

/** Marks each describe block that runs (Vitest calls onAfterRunSuite only for those). */
function markSuites(prototype) {
  if (!prototype || prototype[PATCHED]) return;
  prototype[PATCHED] = true;
  const marked = new WeakSet();
  const before = prototype.onBeforeRunSuite;
  const after = prototype.onAfterRunSuite;
  prototype.onBeforeRunSuite = async function onBeforeRunSuite(suite) {
    await before?.call(this, suite);
    const runs = suite.file !== suite && suite.mode !== "skip" && suite.mode !== "todo" && suite.result?.state !== "fail";
    if (runs) {
      await ask("open");
      marked.add(suite);
    }
  };
  prototype.onAfterRunSuite = async function onAfterRunSuite(suite) {
    try {
      await after?.call(this, suite);
    } finally {
      if (marked.delete(suite)) await ask("undo");
    }
  };
}

if (runner?.isolatedStorage) {
  beforeEach(({ task }) => {
    // Concurrent tests of one file would mark and undo one another's writes.
    if (task?.concurrent) throw new Error(`workerbox/vitest: isolatedStorage does not work with concurrent tests ("${task.name}" is test.concurrent): the tests of a file share one storage`);
    return ask("open");
  });
  afterEach(({ task }) => (task?.concurrent ? undefined : ask("undo")));
  markSuites(TestRunner?.prototype);
}
