// node:fs's glob (fs.globSync, fs.glob, fs.promises.glob) over the virtual filesystem
// (node:internal/vfs): brace expansion ({a,b}), *, ?, [...] classes, ** (any depth, dot entries
// included, symlinked directories not descended), the extglobs +() *() ?() @() !(), `.` and `..`
// segments; options cwd, exclude (a function or an array of patterns) and withFileTypes.
// Results are paths relative to cwd, normalized, each once.
const { invalidArgType } = require("node:internal/errors");
const vfs = require("node:internal/vfs");

const MAX_DEPTH = 256;

/** The top-level `sep`-separated parts of `text` (braces and parentheses nest, `\` escapes). */
function splitTop(text, sep) {
  const parts = [];
  let depth = 0;
  let current = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === "{" || c === "(") depth++;
    else if ((c === "}" || c === ")") && depth > 0) depth--;
    if (c === sep && depth === 0) {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/** `pattern` with its first {a,b} group expanded, recursively: every alternative pattern. */
function expandBraces(pattern) {
  let depth = 0;
  let start = -1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") { i++; continue; }
    if (c === "{") {
      if (depth++ === 0) start = i;
    } else if (c === "}" && depth > 0 && --depth === 0) {
      const inner = pattern.slice(start + 1, i);
      const alternatives = splitTop(inner, ",");
      if (alternatives.length < 2) break; // {x} stays literal
      const head = pattern.slice(0, start);
      const tail = pattern.slice(i + 1);
      return alternatives.flatMap((alt) => expandBraces(head + alt + tail));
    }
  }
  return [pattern];
}

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The regular-expression source for one path segment's pattern. */
function segmentSource(segment) {
  let out = "";
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    const next = segment[i + 1];
    if ("+*?@!".includes(c) && next === "(") {
      let depth = 0;
      let end = i + 1;
      for (; end < segment.length; end++) {
        if (segment[end] === "(") depth++;
        else if (segment[end] === ")" && --depth === 0) break;
      }
      if (end < segment.length) {
        const body = splitTop(segment.slice(i + 2, end), "|").map(segmentSource).join("|");
        const rest = segmentSource(segment.slice(end + 1));
        if (c === "!") return `${out}(?:(?!(?:${body})${rest}$)[^/]*?)${rest}`;
        out += `(?:${body})${{ "+": "+", "*": "*", "?": "?", "@": "" }[c]}`;
        i = end;
        continue;
      }
    }
    if (c === "\\" && next !== undefined) {
      out += escapeRegExp(next);
      i++;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const close = segment.indexOf("]", i + 2);
      if (close === -1) out += "\\[";
      else {
        let body = segment.slice(i + 1, close);
        if (body[0] === "!") body = `^${body.slice(1)}`;
        out += `[${body.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else out += escapeRegExp(c);
  }
  return out;
}

const isMagic = (segment) => /[*?[]|[+@!]\(/.test(segment);

/** A compiled pattern: its segments, each "**", ".." or { literal } or { regexp }. */
function compile(pattern) {
  const absolute = pattern.startsWith("/");
  const segments = pattern.split("/").filter((s) => s !== "" && s !== ".").map((s) => {
    if (s === "**" || s === "..") return s;
    return isMagic(s) ? { regexp: new RegExp(`^(?:${segmentSource(s)})$`) } : { literal: s.replace(/\\(.)/g, "$1") };
  });
  // Consecutive ** are one.
  return { absolute, segments: segments.filter((s, i) => !(s === "**" && segments[i - 1] === "**")) };
}

const matchesSegment = (segment, name) => (segment.literal !== undefined ? segment.literal === name : segment.regexp.test(name));

/** Whether path segments `names` match compiled `segments` whole (for exclude patterns). */
function matchesPath(segments, names, i = 0, j = 0) {
  if (i === segments.length) return j === names.length;
  const segment = segments[i];
  if (segment === "**") {
    for (let k = j; k <= names.length; k++) if (matchesPath(segments, names, i + 1, k)) return true;
    return false;
  }
  if (j === names.length) return false;
  if (segment === "..") return names[j] === ".." && matchesPath(segments, names, i + 1, j + 1);
  return matchesSegment(segment, names[j]) && matchesPath(segments, names, i + 1, j + 1);
}

function childNames(node) {
  return node !== undefined && node.kind === "dir" ? vfs.names(node) : [];
}

/** The node at absolute `path` (symlinks followed), or undefined. */
function nodeAt(path, follow = true) {
  try {
    return vfs.lookup(path, "scandir", { follow }).node;
  } catch {
    return undefined;
  }
}

const join = (base, name) => (base === "/" ? `/${name}` : `${base}/${name}`);

/** Every absolute path matched by `compiled`, walking from absolute `base`. */
function walk(compiled, base, add) {
  const seen = new Set();
  function step(i, path, depth) {
    if (depth > MAX_DEPTH) return;
    const key = `${i}\u0000${path}`;
    if (seen.has(key)) return;
    seen.add(key);
    if (i === compiled.segments.length) {
      add(path);
      return;
    }
    const segment = compiled.segments[i];
    const node = nodeAt(path);
    if (node === undefined || node.kind !== "dir") return;
    if (segment === "**") {
      step(i + 1, path, depth + 1);
      for (const name of childNames(node)) {
        const child = join(path, name);
        const own = nodeAt(child, false);
        if (own?.kind === "dir") step(i, child, depth + 1);
        else if (i + 1 === compiled.segments.length) add(child);
        else step(i + 1, child, depth + 1);
      }
      return;
    }
    if (segment === "..") {
      step(i + 1, vfs.normalize(`${path}/..`), depth + 1);
      return;
    }
    if (segment.literal !== undefined) {
      const child = join(path, segment.literal);
      if (nodeAt(child, false) !== undefined) step(i + 1, child, depth + 1);
      return;
    }
    for (const name of childNames(node)) if (segment.regexp.test(name)) step(i + 1, join(path, name), depth + 1);
  }
  step(0, compiled.absolute ? "/" : base, 0);
}

/** `path` relative to `base` (both absolute and normalized). */
function relative(base, path) {
  if (path === base) return ".";
  const from = base === "/" ? [] : base.slice(1).split("/");
  const to = path === "/" ? [] : path.slice(1).split("/");
  let common = 0;
  while (common < from.length && common < to.length && from[common] === to[common]) common++;
  return [...from.slice(common).map(() => ".."), ...to.slice(common)].join("/") || ".";
}

function validate(pattern, options) {
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  for (const p of patterns) if (typeof p !== "string") throw invalidArgType("pattern", "string or an array of strings", pattern);
  if (options === null || options === undefined) options = {};
  if (typeof options !== "object") throw invalidArgType("options", "object", options);
  const { exclude, withFileTypes = false } = options;
  if (exclude !== undefined && typeof exclude !== "function" && !Array.isArray(exclude)) throw invalidArgType("options.exclude", "function or an array of strings", exclude);
  if (typeof withFileTypes !== "boolean") throw invalidArgType("options.withFileTypes", "boolean", withFileTypes);
  const cwd = options.cwd === undefined ? vfs.toPath(".") : vfs.toPath(options.cwd, "options.cwd");
  return { patterns, cwd, exclude, withFileTypes };
}

/** globSync(pattern, options): the matches as relative paths (or Dirents with withFileTypes). */
function globSync(pattern, options, Dirent) {
  const { patterns, cwd, exclude, withFileTypes } = validate(pattern, options);
  const excluded = Array.isArray(exclude) ? exclude.flatMap(expandBraces).map((p) => compile(p)) : [];
  const found = new Map();
  for (const expanded of patterns.flatMap(expandBraces)) {
    const compiled = compile(expanded);
    walk(compiled, cwd, (path) => {
      if (!found.has(path)) found.set(path, compiled.absolute ? path : relative(cwd, path));
    });
  }
  const out = [];
  for (const [path, shown] of found) {
    const names = shown === "." ? [] : shown.split("/");
    if (excluded.some((c) => matchesPath(c.segments, c.absolute ? path.split("/").filter(Boolean) : names))) continue;
    let result = shown;
    if (withFileTypes) {
      const node = nodeAt(path, false);
      const cut = path.lastIndexOf("/");
      result = new Dirent(path.slice(cut + 1), node, path.slice(0, cut) || "/");
    }
    if (typeof exclude === "function" && exclude(result)) continue;
    out.push(result);
  }
  return out;
}

module.exports = { globSync, expandBraces };
