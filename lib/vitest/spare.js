// Runners started ahead: while a test file runs, the pool starts the runner its next file will
// take (an isolate, Vitest's runtime loaded in it, its connection), so that with one file at a
// time — Vitest's default on a 2-core machine — a file's start-up overlaps the file before it
// instead of following it. A runner holds nothing of a file until Vitest's "start" message, so
// one started ahead is the same as one started on demand. One spare per project and pool
// options, and none while the last file runs; a spare no file takes within SPARE_IDLE_MS of the
// moment no file of theirs runs is disposed (the next group of files is a typecheck, or a rerun
// ran fewer files), as are those left when Vitest closes.
"use strict";

const { disposeRunner, recordStat } = require("./runners.js");

const SPARE_IDLE_MS = 50;

/** project -> Map(poolOptions -> { running, spare: Promise<runner | null> | null, timer }) */
const kinds = new WeakMap();

function kindOf(project, poolOptions) {
  let map = kinds.get(project);
  if (!map) {
    kinds.set(project, (map = new Map()));
    // At the end of the run, what is left goes with Vitest.
    if (typeof project.vitest?.onClose === "function") project.vitest.onClose(() => Promise.all([...map.values()].map(dropSpare)));
  }
  let kind = map.get(poolOptions);
  if (!kind) map.set(poolOptions, (kind = { running: 0, spare: null, timer: null }));
  return kind;
}

/** Whether runners of `project` may be started ahead: not under a debugger or V8 coverage. */
function mayStartAhead(project) {
  return !project.config.inspector?.enabled && !project.config.coverage?.enabled;
}

/**
 * Whether the run has a file left after the one starting now: Vitest's state has the run's files
 * (getPaths) and those already queued in a runner (getFilepaths), which the one starting is not
 * yet. A spare made during the last file would only add an isolate to the run's peak memory. (A
 * typecheck file counts too: that spare goes SPARE_IDLE_MS after the last runtime file.) Without
 * that state (another Vitest), a spare is made.
 */
function moreFilesAfterThis(project) {
  const state = project.vitest?.state;
  if (typeof state?.getPaths !== "function" || typeof state?.getFilepaths !== "function") return true;
  const queued = new Set(state.getFilepaths());
  let waiting = 0;
  for (const file of state.getPaths()) if (!queued.has(file) && ++waiting > 1) return true;
  return false;
}

/**
 * A file of (project, poolOptions) starts: its runner is the spare (started ahead by `start()`),
 * or one `start()` makes now when there is none or the spare failed (which reports the failure).
 * A spare for the file after it starts at once.
 */
async function runnerFor(project, poolOptions, start) {
  const kind = kindOf(project, poolOptions);
  kind.running++;
  clearTimeout(kind.timer);
  const spare = kind.spare;
  kind.spare = null;
  try {
    const ahead = spare && (await spare);
    if (ahead) ahead.startedAhead = true;
    const runner = ahead || (await start());
    if (kind.spare === null && mayStartAhead(project) && moreFilesAfterThis(project)) kind.spare = start().catch(() => null);
    return runner;
  } catch (error) {
    fileEnded(project, poolOptions);
    throw error;
  }
}

/** A file of (project, poolOptions) ended: with none running, the spare goes if none starts soon. */
function fileEnded(project, poolOptions) {
  const kind = kindOf(project, poolOptions);
  kind.running = Math.max(0, kind.running - 1);
  if (kind.running > 0 || kind.spare === null) return;
  clearTimeout(kind.timer);
  kind.timer = setTimeout(() => {
    if (kind.running === 0) dropSpare(kind);
  }, SPARE_IDLE_MS);
}

/** Disposes the spare of `kind`, if any. */
function dropSpare(kind) {
  clearTimeout(kind.timer);
  const spare = kind.spare;
  kind.spare = null;
  return spare
    ?.then(async (runner) => {
      if (!runner) return;
      await disposeRunner(runner);
      // bench/vitest.mjs and the pool's tests count them.
      recordStat({ unusedSpare: true });
    })
    .catch(() => {});
}

module.exports = { runnerFor, fileEnded, SPARE_IDLE_MS };
