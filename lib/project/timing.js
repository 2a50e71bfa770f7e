"use strict";
// Start-up phase marks of `workerbox dev`, for profiling its path to the first answer: with
// WORKERBOX_DEV_TIMING=1 each mark prints `[timing] <ms since the process started> <phase>` to
// stderr (bench/starters.mjs and bench/dev.mjs collect them with --phases); otherwise nothing.

const on = Boolean(process.env.WORKERBOX_DEV_TIMING);

/** Prints a phase mark (when WORKERBOX_DEV_TIMING is set). */
function mark(label) {
  if (on) process.stderr.write(`[timing] ${performance.now().toFixed(1)} ${label}\n`);
}

module.exports = { mark, timing: on };
