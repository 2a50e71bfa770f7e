"use strict";
// A project's custom build (wrangler's `build.command`, `build.cwd`, `build.watch_dir`): runs the
// command in a shell, streams its output line by line to the dev log, and says whether it
// succeeded. `workerbox dev` runs it before serving and again when a file under a watched folder
// changes (lib/project/dev.js); a failing build leaves the running worker as it is.

const path = require("node:path");

/**
 * Runs `build` (`{ command, cwd }`), passing each output line to `log(line, stream)`. Resolves to
 * `{ ok, code, signal, ms }`; never rejects (a command that cannot start is `ok: false`).
 */
function runBuild(build, log) {
  const started = performance.now();
  return new Promise((resolve) => {
    let child;
    try {
      // (node:child_process loads here: a project without a custom build never needs it.)
      child = require("node:child_process").spawn(build.command, { cwd: build.cwd, shell: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "0" } });
    } catch (error) {
      log(`cannot start: ${error.message}`, "stderr");
      return resolve({ ok: false, code: null, signal: null, ms: performance.now() - started });
    }
    for (const [stream, name] of [[child.stdout, "stdout"], [child.stderr, "stderr"]]) {
      let rest = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk) => {
        const lines = (rest + chunk).split(/\r?\n/);
        rest = lines.pop();
        for (const line of lines) log(line, name);
      });
      stream.on("end", () => rest && log(rest, name));
    }
    child.on("error", (error) => log(`cannot start: ${error.message}`, "stderr"));
    child.on("close", (code, signal) => resolve({ ok: code === 0, code, signal, ms: performance.now() - started }));
  });
}

/** Whether `file` lies under one of the build's watched folders. */
function watchedByBuild(build, file) {
  return build !== undefined && build.watchDirs.some((dir) => file === dir || file.startsWith(dir + path.sep));
}

module.exports = { runBuild, watchedByBuild };
