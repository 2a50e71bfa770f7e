// Memory of Vite's module parses in a workerbox/vitest run. Vite's server-side transform
// (ssrTransform) parses every module the tests import with rolldown's `parseAstAsync`, which parses
// on libuv's thread pool and hands the AST back as JSON text (many times the size of the source).
// That memory is freed on the pool's threads, where rolldown's allocator (mimalloc, in a 1 GiB
// arena it commits eagerly) keeps it for the life of the process. With every dependency going
// through Vite (the pool needs them in the isolate), that was 40–75 MB of a test run's peak RSS
// (chanfana-openapi-template's two files: the arena grew from 20 to 82–94 MB). Parsed on the
// calling thread, as `parseAst` does, the same parses leave it near its start, and runs took no
// longer: the JSON is turned into objects on the calling thread either way, which is most of a
// parse's time. So the pool makes rolldown's async parse call the synchronous one.
"use strict";

const path = require("node:path");

const PATCHED = Symbol.for("workerbox.vitest.parseOnCallingThread");
/** rolldown's native binding, as its loader names the file (rolldown-binding.<platform>.node). */
const BINDING = /^rolldown-binding\..+\.node$/;

/**
 * Every rolldown binding this process has loaded (Vite loads it before the config runs): its
 * `parse` (async, on the thread pool) now runs `parseSync` and answers with a settled promise —
 * the same result, the same errors (a rejection). Returns how many bindings were changed; a
 * binding without both functions (another version's shape) is left alone.
 */
function parseOnCallingThread(cache = require.cache) {
  let changed = 0;
  for (const [file, entry] of Object.entries(cache)) {
    if (!BINDING.test(path.basename(file))) continue;
    const binding = entry?.exports;
    if (!binding || binding[PATCHED] || typeof binding.parse !== "function" || typeof binding.parseSync !== "function") continue;
    const parseSync = binding.parseSync;
    try {
      binding.parse = function parse(...args) {
        try {
          return Promise.resolve(parseSync.apply(this, args));
        } catch (error) {
          return Promise.reject(error);
        }
      };
      binding[PATCHED] = true;
      changed++;
    } catch {
      // A frozen binding: left as it is.
    }
  }
  return changed;
}

module.exports = { parseOnCallingThread };
