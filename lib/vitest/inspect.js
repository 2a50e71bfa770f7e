// workerbox/vitest's `--inspect` and `--inspect-brk`: the test isolates are served through the
// worker inspector (lib/inspector.js: Chrome DevTools Protocol on Vitest's inspector host and port,
// default 127.0.0.1:9229, listed at /json/list), as Vitest serves its Node workers through
// node:inspector. With `--inspect-brk`, the pool's own session to the isolate sets a breakpoint on
// the first line of the files it is about to run (Vitest does the same in Node), so each file stops
// there until a debugger attached to the isolate resumes it.
"use strict";

const { openSession } = require("./coverage.js");

const DEFAULT_PORT = 9229;
const DEFAULT_HOST = "127.0.0.1";

/** createWorker's `inspector` option for the project's runners (undefined without --inspect). */
function inspectorOption(project) {
  const inspector = project.config.inspector;
  if (!inspector?.enabled) return undefined;
  return { port: inspector.port ?? DEFAULT_PORT, host: inspector.host ?? DEFAULT_HOST, name: `workerbox/vitest (${project.name || "project"})` };
}

/** Whether the project's files stop at their first line (`--inspect-brk`). */
function breaksAtStart(project) {
  return Boolean(project.config.inspector?.enabled && project.config.inspector.waitForDebugger);
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * Sets a breakpoint on the first line of each of `files` in the runner's isolate, through a
 * session of the pool's that stays open with the worker (a breakpoint is its session's). Resolves
 * to a function that closes the session.
 */
async function breakAtFiles(worker, files) {
  const session = await openSession(worker.inspectorUrl);
  await session.post("Debugger.enable");
  for (const file of files) {
    // The module runner names a file's script by its path (a file:// URL under Node).
    await session.post("Debugger.setBreakpointByUrl", { lineNumber: 0, urlRegex: `^(file://)?${escape(file)}$` });
  }
  return () => session.close();
}

module.exports = { inspectorOption, breaksAtStart, breakAtFiles };
