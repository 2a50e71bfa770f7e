// Source maps on the host: error stacks and locations from a worker rewritten to the original
// files and lines (through Node's own source map reader), for bundles the project loader makes
// and for createWorker's \`sourceMap\` option; and the map inlined into a script for DevTools.
"use strict";

const path = require("node:path");
const { SourceMap } = require("node:module");

const identityMapper = { mapStack: (text) => text, mapLocation: () => null };

/**
 * Maps `file:line:column` positions in the bundle (as V8 prints them in stacks) back to the
 * original sources, through Node's own source map reader. The map is read on the first lookup,
 * not here: reading a large bundle's map costs ~100 ms (and its garbage), which a dev server's
 * start and every reload would pay for stacks that mostly never come.
 */
function stackMapper(bundleFile, payload) {
  let parsed = null;
  const map = { findEntry: (line, column) => (parsed ??= new SourceMap(payload)).findEntry(line, column) };
  const dir = path.dirname(bundleFile);
  const escaped = bundleFile.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`${escaped}:(\\d+):(\\d+)`, "g");
  const mapLocation = (line, column) => {
    const entry = map.findEntry(line - 1, column - 1);
    if (!entry || entry.originalSource === undefined) return null;
    const source = entry.originalSource.startsWith("file://") ? new URL(entry.originalSource).pathname : path.resolve(dir, entry.originalSource);
    return { file: source, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
  };
  const mapStack = (text) =>
    typeof text !== "string"
      ? text
      : text.replace(pattern, (whole, line, column) => {
          const found = mapLocation(Number(line), Number(column));
          return found ? `${found.file}:${found.line}:${found.column}` : whole;
        });
  return { mapStack, mapLocation };
}

/** Rewrites an Error from the bundled worker so its stack and location name the original files. */
function mapError(error, mapper) {
  if (!error || typeof error !== "object") return error;
  if (typeof error.stack === "string") error.stack = mapper.mapStack(error.stack);
  if (error.fileName && error.lineNumber) {
    const found = mapper.mapLocation(error.lineNumber, error.columnNumber ?? 1);
    if (found) {
      error.fileName = found.file;
      error.lineNumber = found.line;
      error.columnNumber = found.column;
    }
  }
  return error;
}


/** `script` with `payload` (a source map object) appended as an inline data: URL, for DevTools. */
function inlineSourceMap(script, payload) {
  return `${script}\n//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(payload)).toString("base64")}\n`;
}

/** createWorker's `sourceMap` option (a source map object or its JSON) as an object; throws a TypeError naming the problem. */
function parseSourceMap(value) {
  if (value === undefined) return null;
  let payload = value;
  if (typeof value === "string") {
    try {
      payload = JSON.parse(value);
    } catch (error) {
      throw new TypeError(`createWorker: options.sourceMap is not valid JSON: ${error.message}`);
    }
  }
  if (payload === null || typeof payload !== "object" || typeof payload.mappings !== "string" || !Array.isArray(payload.sources)) {
    throw new TypeError("createWorker: options.sourceMap must be a source map (an object or JSON with version, sources and mappings)");
  }
  return payload;
}

module.exports = { stackMapper, identityMapper, mapError, inlineSourceMap, parseSourceMap };
