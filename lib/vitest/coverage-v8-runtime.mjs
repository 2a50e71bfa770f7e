// What a test isolate imports for "@vitest/coverage-v8" (lib/vitest/coverage.js makes the runner's
// loader give this file): the provider's runtime side — startCoverage / takeCoverage /
// stopCoverage, called by Vitest's worker runtime — done by the pool through the worker
// inspector, since the isolate has no node:inspector session onto itself. The results' start
// offsets (the module runner's wrapper) are Vitest's own, as its provider's runtime sets them.
import { fileURLToPath } from "node:url";

async function ask(action) {
  const response = await globalThis.__workerboxVitest.env.__WORKERBOX_VITEST_HOST.fetch(`http://vitest-host/coverage/${action}`, { method: "POST" });
  if (!response.ok) throw new Error(`workerbox/vitest: coverage: ${await response.text()}`);
  return response.json();
}

/** Vitest's moduleExecutionInfo keys: the module's path with forward slashes. */
const normalize = (file) => file.replace(/\\/g, "/");

export default {
  async startCoverage() {
    await ask("start");
  },
  async takeCoverage(options) {
    const { result } = await ask("take");
    for (const entry of result) entry.startOffset = options?.moduleExecutionInfo?.get(normalize(fileURLToPath(entry.url)))?.startOffset || 0;
    return { result };
  },
  async stopCoverage({ isolate } = {}) {
    if (isolate === false) return;
    await ask("stop");
  },
  getProvider() {
    throw new Error("workerbox/vitest: @vitest/coverage-v8's provider runs in Node, not in the test isolate");
  },
};
