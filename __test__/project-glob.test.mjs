// lib/project/glob.js: the plain globs it matches itself (`**/*.<ext>`, literal paths) give
// picomatch's answers, with and without `dot`, on paths with dot files and folders, empty and
// `..` segments, other cases and near misses; other globs go to picomatch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const picomatch = require("picomatch");
const { globMatcher } = require("../lib/project/glob.js");

const GLOBS = ["**/*.wasm?module", "**/*.a?b?", "**/*.js", "**/*.mjs", "**/*.cjs", "**/*.txt", "**/*.wasm", "**/*.d-ts", ".assetsignore", "_redirects", "_headers", "**/_headers", "**/.DS_Store", "a/b.txt", "**/a/b.txt", "node_modules", "**/node_modules"];
const PATHS = [
  "a.js", "b/a.js", "b/c/a.js", ".a.js", "b/.a.js", ".b/a.js", "b/.c/a.js", ".js", "b/.js", "a.js/x", "a.jsx", "a.JS", "a.mjs", "a.cjs", "x.txt", "y/x.txt", "m.wasm", "m.wasm?module", "m.wasmXmodule", "m.wasm.module", "m.wasmmodule", "m.wasm/module", "d/m.wasm-module", ".m.wasm?module", "x.aXbY", "x.ab", "x.a/bY", "t.d-ts",
  "a//b.js", "/a.js", "./a.js", "../a.js", "a/../b.js", "",
  ".assetsignore", "x/.assetsignore", "_redirects", "x/_redirects", "_headers", "x/_headers", "x/y/_headers", ".x/_headers", "x/.y/_headers", "x//_headers", "/_headers", "./_headers", "../_headers", "x/../_headers", "_headers/x", "x_headers", "_HEADERS",
  ".DS_Store", "a/.DS_Store", ".a/.DS_Store", "a/b.txt", "c/a/b.txt", "a/b.txt/c", ".c/a/b.txt", "node_modules", "x/node_modules", "node_modules/x", ".x/node_modules",
];

test("globMatcher: the plain globs answer as picomatch does, with dot on and off", () => {
  for (const dot of [false, true]) {
    for (const glob of GLOBS) {
      const ours = globMatcher(glob, { dot });
      const theirs = picomatch(glob, { dot });
      for (const file of PATHS) assert.equal(ours(file), theirs(file), `${JSON.stringify(glob)} on ${JSON.stringify(file)} with dot ${dot}`);
    }
    const ours = globMatcher(["**/*.js", "**/*.mjs"], { dot });
    const theirs = picomatch(["**/*.js", "**/*.mjs"], { dot });
    for (const file of PATHS) assert.equal(ours(file), theirs(file), `["**/*.js", "**/*.mjs"] on ${JSON.stringify(file)} with dot ${dot}`);
  }
});

test("globMatcher: other globs are picomatch's", () => {
  for (const glob of ["src/**/*.{js,ts}", "*.txt", "a?.js", "!x", "[ab].js", "dir/", "**/*.[jt]s"]) {
    const ours = globMatcher(glob, { dot: true });
    const theirs = picomatch(glob, { dot: true });
    for (const file of [...PATHS, "src/a/b.ts", "ab.js", "x", "dir", "dir/x"]) assert.equal(ours(file), theirs(file), `${glob} on ${file}`);
  }
});
