// The setup file of workerbox/vitest's `isolatedStorage` (put first among the project's setup
// files by lib/vitest/index.js), run in the isolate before each test file. With the option on, it
// registers a beforeEach hook that marks the storage and an afterEach hook that undoes what the
// test wrote (lib/vitest/isolated-storage.js in the pool). Registered first, the beforeEach runs
// before the project's own, and — Vitest running after-hooks in reverse order — the afterEach
// after theirs, so what those hooks write is undone too.
import { beforeEach, afterEach } from "vitest";

const runner = globalThis.__workerboxVitest;

async function ask(action) {
  const response = await runner.env.__WORKERBOX_VITEST_HOST.fetch(`http://vitest-host/isolated/${action}`, { method: "POST" });
  if (!response.ok) throw new Error(`workerbox/vitest: isolatedStorage: ${await response.text()}`);
}

if (runner?.isolatedStorage) {
  beforeEach(() => ask("open"));
  afterEach(() => ask("undo"));
}
