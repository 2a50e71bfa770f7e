// Documentation links: in README.md and every docs/*.md, each relative link names a file that
// exists, and each #anchor (same page or page.md#anchor) names a heading of the target as GitHub
// makes its id (lowercase, punctuation other than - and _ dropped, spaces to -, a repeated
// heading gets -1, -2, …) or an explicit <a id> / <a name>. http(s) and other URLs with a scheme
// are not fetched.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** The text outside fenced code blocks, with inline code spans blanked (their text kept for headings). */
function withoutFences(text) {
  const out = [];
  let fence = null;
  for (const line of text.split("\n")) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) fence = null;
      out.push("");
      continue;
    }
    if (m) {
      fence = m[1];
      out.push("");
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

const withoutCodeSpans = (text) => text.replace(/``[\s\S]*?``|`[^`\n]*`/g, (s) => " ".repeat(s.length));

/** GitHub's id for a heading's text. */
function slug(heading) {
  // Code spans keep their text as it is; elsewhere links become their text and tags go.
  const text = heading
    .split(/(`+[^`]*`+)/)
    .map((part, i) =>
      i % 2 === 1
        ? part.replace(/^`+|`+$/g, "")
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
            .replace(/<[^>]+>/g, "")
            .replace(/\*+/g, "")
            .replace(/(^|[^\p{L}\p{N}])_{1,3}(\S(?:[^_]*\S)?)_{1,3}(?=[^\p{L}\p{N}]|$)/gu, "$1$2"),
    )
    .join("");
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a Markdown page offers: heading ids (with -1, -2 for repeats) and <a id|name>. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  const body = withoutFences(text);
  for (const line of body.split("\n")) {
    const m = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of withoutCodeSpans(body).matchAll(/<a\s[^>]*?\b(?:id|name)\s*=\s*["']?([^"'\s>]+)/gi)) anchors.add(m[1]);
  return anchors;
}

/** The link targets of a page: inline links and images, and reference definitions. */
function linksOf(text) {
  const body = withoutCodeSpans(withoutFences(text));
  const links = [];
  for (const m of body.matchAll(/!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) {
    links.push({ target: m[1], line: body.slice(0, m.index).split("\n").length });
  }
  for (const m of body.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)) {
    links.push({ target: m[1], line: body.slice(0, m.index).split("\n").length });
  }
  for (const m of body.matchAll(/<a\s[^>]*?\bhref\s*=\s*["']([^"']+)["']/gi)) {
    links.push({ target: m[1], line: body.slice(0, m.index).split("\n").length });
  }
  return links;
}

/** Problems with the relative links of the Markdown file `file` (absolute path). */
function checkFile(file, cache = new Map()) {
  const read = (f) => {
    if (!cache.has(f)) cache.set(f, fs.readFileSync(f, "utf8"));
    return cache.get(f);
  };
  const problems = [];
  for (const { target, line } of linksOf(read(file))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue; // http(s), mailto: …
    const hash = target.indexOf("#");
    const rawPath = hash === -1 ? target : target.slice(0, hash);
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const where = `${path.relative(root, file)}:${line}: ${target}`;
    const dest = rawPath === "" ? file : path.resolve(path.dirname(file), decodeURIComponent(rawPath.split("?")[0]));
    if (!fs.existsSync(dest)) {
      problems.push(`${where}: no such file ${path.relative(root, dest)}`);
      continue;
    }
    if (anchor === null || anchor === "") continue;
    if (!dest.endsWith(".md")) continue; // anchors into other files (source lines) are not checked
    if (fs.statSync(dest).isDirectory()) {
      problems.push(`${where}: an anchor into a directory`);
      continue;
    }
    if (!anchorsOf(read(dest)).has(anchor)) problems.push(`${where}: no heading or anchor "#${anchor}" in ${path.relative(root, dest)}`);
  }
  return problems;
}

function pages() {
  const docs = path.join(root, "docs");
  const files = [path.join(root, "README.md")];
  if (fs.existsSync(docs)) for (const f of fs.readdirSync(docs).sort()) if (f.endsWith(".md")) files.push(path.join(docs, f));
  return files;
}

test("slugs follow GitHub's rules", () => {
  assert.equal(slug("`createWorker(options) → Promise<Worker>`"), "createworkeroptions--promiseworker");
  assert.equal(slug("Offline builds: `RUSTY_V8_ARCHIVE`"), "offline-builds-rusty_v8_archive");
  assert.equal(slug("V8 beside Node's V8"), "v8-beside-nodes-v8");
  assert.equal(slug("The *big* _one_ and snake_case_name"), "the-big-one-and-snake_case_name");
  assert.equal(slug("[Linked](x.md) <b>tag</b> `a<b>`"), "linked-tag-ab");
  assert.equal(slug("Quick start (fresh machine)"), "quick-start-fresh-machine");
  assert.equal(slug("node:test: `useWorker()`, `useProject()`, `mockFetch()`"), "nodetest-useworker-useproject-mockfetch");
  assert.deepEqual(
    [...anchorsOf("# A\n\n## Notes\n\n```sh\n# not a heading\n```\n\n### Notes\n\n## Notes\n\n<a id=\"here\"></a>\n<a name='there'></a>\n")],
    ["a", "notes", "notes-1", "notes-2", "here", "there"],
  );
});

test("the checker reports a dead file link and a missing anchor", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-docs-"));
  try {
    fs.writeFileSync(path.join(dir, "b.md"), "# B\n\n## Part one\n");
    fs.writeFileSync(
      path.join(dir, "a.md"),
      "# A\n\n[ok](b.md#part-one) [ok](#a) [web](https://example.com/x#y) `[code](gone.md)`\n\n" +
        "[gone](gone.md) [bad anchor](b.md#part-two) [bad here](#nowhere)\n",
    );
    const problems = checkFile(path.join(dir, "a.md"));
    assert.equal(problems.length, 3, problems.join("\n"));
    assert.match(problems[0], /gone\.md: no such file/);
    assert.match(problems[1], /#part-two/);
    assert.match(problems[2], /#nowhere/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("README.md and docs/*.md have no dead relative links or anchors", () => {
  const cache = new Map();
  const files = pages();
  assert.ok(files.length > 1, "docs/ has pages");
  const problems = files.flatMap((file) => checkFile(file, cache));
  assert.deepEqual(problems, [], `dead links:\n${problems.join("\n")}`);
});
