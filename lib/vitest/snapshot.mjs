// Vitest's snapshot environment inside the test isolate: snapshot files (and test files, which
// inline snapshots rewrite) are read and written by the pool in Node, through the
// `__WORKERBOX_VITEST_HOST` service binding it gives the runner (lib/vitest/pool.js).
import { env } from "cloudflare:workers";
import { VitestSnapshotEnvironment } from "vitest/runtime";

/** The folder of `path` (not node:path's: Vitest's module runner evaluates this file as the
 * tests' code, which may import only what the worker's flags give). */
const dirname = (path) => path.slice(0, Math.max(path.lastIndexOf("/"), 1));

async function call(method, path, body) {
  const response = await env.__WORKERBOX_VITEST_HOST.fetch(`http://vitest-host/snapshot?path=${encodeURIComponent(path)}`, { method, body });
  if (response.status >= 400 && response.status !== 404) throw new Error(`workerbox/vitest: ${method} ${path}: ${await response.text()}`);
  return response;
}

class WorkerboxSnapshotEnvironment extends VitestSnapshotEnvironment {
  async prepareDirectory(path) {
    await call("POST", path);
  }
  async saveSnapshotFile(path, snapshot) {
    await call("POST", dirname(path));
    await call("PUT", path, snapshot);
  }
  async readSnapshotFile(path) {
    const response = await call("GET", path);
    return response.status === 404 ? null : response.text();
  }
  async removeSnapshotFile(path) {
    await call("DELETE", path);
  }
}

export default new WorkerboxSnapshotEnvironment();
