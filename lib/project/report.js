"use strict";
// How `workerbox dev` shows a problem in the developer's terminal: build and TypeScript errors as
// esbuild formats them (file:line:column and a code frame), configuration problems in the same
// shape (read from the config file itself), anything else as its (source-mapped) stack.

const fs = require("node:fs");
const path = require("node:path");
const { loadEsbuild } = require("./bundle.js");

/** A code frame for `line`/`column` (1-based) of `text`, esbuild's style. */
function codeFrame(text, line, column) {
  const source = text.split(/\r?\n/)[line - 1];
  if (source === undefined) return "";
  const gutter = String(line);
  const pad = " ".repeat(gutter.length);
  const caret = " ".repeat(Math.max(0, (column ?? 1) - 1));
  return `      ${gutter} │ ${source}\n      ${pad} ╵ ${caret}^\n`;
}

/** One configuration problem: `✘ [ERROR] key: message`, where it is, and its frame. */
function formatProblem({ file, line, column, key, message }, { color, cwd }) {
  const red = (text) => (color ? `\u001b[31m${text}\u001b[39m` : text);
  let out = `${red("✘ [ERROR]")} ${key ? `${key}: ` : ""}${message}\n\n`;
  if (file) {
    const shown = path.relative(cwd, file) || file;
    out += `    ${shown}${line ? `:${line}${column ? `:${column}` : ""}` : ""}:\n`;
    if (line) {
      try {
        out += codeFrame(fs.readFileSync(file, "utf8"), line, column);
      } catch {
        // the file went away: its name and line are enough
      }
    }
  }
  return out;
}

/**
 * The text to print for `error`: esbuild's own formatting of a BuildError's messages, each
 * ConfigError problem with its frame, or the error's stack. `cwd` is what paths are shown
 * relative to (the project's root).
 */
function describeProblem(error, { color = false, cwd = process.cwd() } = {}) {
  if (error?.name === "BuildError" && Array.isArray(error.errors)) {
    const esbuild = loadEsbuild();
    if (esbuild) return esbuild.formatMessagesSync(error.errors, { kind: "error", color }).join("").trimEnd();
  }
  if (error?.name === "ConfigError" && Array.isArray(error.problems)) {
    return error.problems.map((problem) => formatProblem(problem, { color, cwd })).join("\n").trimEnd();
  }
  return error?.stack ?? String(error);
}

module.exports = { describeProblem, codeFrame };
