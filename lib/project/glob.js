"use strict";
// Glob matching as picomatch does it, without loading picomatch (five modules, ~3 ms of a start)
// for the two shapes every start meets: `**/*.<ext>` (wrangler's default module rules, with
// `**/*.wasm?module`, and the `.js`/`.mjs`/`.cjs` rules of a build served unbundled) and a
// literal path, with or without `**/` in front (the assets' own `_headers`, `_redirects` and
// `.assetsignore`). Any other glob goes to picomatch. __test__/project-glob.test.mjs compares
// both on the same paths.

/** A character that makes a glob more than a literal path for picomatch. */
const SPECIAL = /[*?[\]{}()!+@\\]/;

/** The shortcut for one glob, or null when picomatch must decide. */
function plainMatcher(glob, dot) {
  const deep = glob.startsWith("**/");
  const rest = deep ? glob.slice(3) : glob;
  // (A `.` or `..` segment never matches; other dot segments within the `**/` part only with
  // `dot`, and picomatch's `*` matches a leading dot only then. Empty segments do match.)
  const hidden = (segments) => segments.some((s) => s === "." || s === ".." || (!dot && s.startsWith(".")));
  // `**/*.<ext>`, where a `?` in the extension is any one character (`**/*.wasm?module`).
  const extension = /^\*(\.[A-Za-z0-9_?-]+)$/.exec(rest)?.[1];
  if (deep && extension !== undefined) {
    const ending = new RegExp(`${extension.replace(/\./g, "\\.").replace(/\?/g, ".")}$`);
    return (file) => {
      const segments = file.split("/");
      return ending.test(segments[segments.length - 1]) && !hidden(segments);
    };
  }
  if (rest === "" || SPECIAL.test(rest) || rest.startsWith("/") || rest.endsWith("/") || rest.split("/").some((s) => s === "" || s === "." || s === "..")) return null;
  if (!deep) return (file) => file === rest;
  return (file) => {
    if (file === rest) return true;
    if (!file.endsWith(`/${rest}`)) return false;
    return !hidden(file.slice(0, -rest.length - 1).split("/"));
  };
}

/** picomatch(globs, { dot })'s matcher, without picomatch when every glob is a plain one. */
function globMatcher(globs, { dot = false } = {}) {
  const list = Array.isArray(globs) ? globs : [globs];
  const plain = list.map((glob) => (typeof glob === "string" ? plainMatcher(glob, dot) : null));
  if (plain.length > 0 && plain.every((m) => m !== null)) return (file) => plain.some((m) => m(file));
  return require("picomatch")(list, { dot });
}

module.exports = { globMatcher };
