#!/usr/bin/env node
// workerd's own test suite on workerbox, beside the workerd binary: the `.wd-test` configs of
// src/workerd/api/node/tests/, src/workerd/api/tests/ and src/workerd/api/streams/ from the
// workerd release that matches the `workerd` binary Miniflare brings (node_modules/workerd), run
// on both, in workerd's two variants (the config's: compatibility date 2000-01-01; and
// all-compat-flags: every dated flag on). No workerd file is part of this repository: the files
// are fetched at run time into .cache/workerd-tests/<tag>/ (gitignored). This file owns the
// command line, fetching and the loop; scripts/workerd-tests/ holds the Cap'n Proto subset parser
// (capnp.mjs), the config translation (translate.mjs), the runners (run.mjs) and the report
// (report.mjs). See docs/workerd-tests.md.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseCapnp, configOf } from "./workerd-tests/capnp.mjs";
import { translate } from "./workerd-tests/translate.mjs";
import { runWorkerbox, runWorkerd, VARIANTS } from "./workerd-tests/run.mjs";
import { printReport, loadKnown, knownFailuresFrom, beyondFrom, lostBeyond } from "./workerd-tests/report.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const DIRS = ["src/workerd/api/node/tests", "src/workerd/api/tests", "src/workerd/api/streams"];
const REPO = "https://github.com/cloudflare/workerd";
const KNOWN = path.join(ROOT, "scripts/workerd-tests/known-failures.json");
// A few quick configs across the three directories, for CI (well under a minute together).
const SUBSET = [
  "node/tests/assert-test", "node/tests/path-test", "node/tests/string-decoder-test", "node/tests/querystring-nodejs-test",
  "node/tests/util-nodejs-test", "node/tests/punycode-nodejs-test", "node/tests/crypto_hash-test", "node/tests/buffer-nodejs-test",
  "tests/blob-test", "tests/textdecoder-utf16-odd-offset-test", "tests/encoding-test", "tests/url-test", "tests/form-data-test",
  "tests/response-json", "tests/events-test", "tests/global-scope-test", "tests/navigator-test", "tests/streams-js-test",
  "tests/headers-immutable-prototype-test", "streams/identitytransformstream-backpressure-test",
];

const HELP = `usage: node scripts/workerd-tests.mjs [options]
       npm run test:workerd -- [options]

Runs workerd's own tests (.wd-test configs) on workerbox and on the workerd binary, per variant.

Where the test files come from (the tag is v<version of the workerd package Miniflare uses>):
  default                  git clone (shallow, sparse) of ${REPO} at the tag,
                           cached in .cache/workerd-tests/<tag>/ (gitignored)
  --workerd-src <dir>      a local workerd git repository (work tree or bare) that has the tag,
  WORKERD_SRC=<dir>        e.g. a mirror, for machines that cannot reach github.com

Options:
  --filter <substring>     only configs whose path contains it (repeatable)
  --variant <name>         config | all-compat-flags (default: both)
  --subset                 a quick fixed selection (${SUBSET.length} configs) that CI can afford
  --json <file>            write every result (per test, with errors) as JSON
  --check                  exit 1 when a test passing on workerd fails here and
                           scripts/workerd-tests/known-failures.json does not list it,
                           or a test it lists as passing beyond workerd fails here
  --write-known            rewrite known-failures.json from this run (all configs and
                           both variants only; reasons already written are kept),
                           with the tests that pass here and fail on workerd (beyond)
  --details                list each test that passes on workerd and fails here, with its error
  --no-workerd             skip the binary (workerbox's numbers only)
  --concurrency <n>        configs run at once (default 4)
  --timeout <ms>           per test on workerbox (default 10000)
  --verbose                print the workers' console output
  --refresh                fetch the test files again`;

function parseArgs(argv) {
  const o = { filter: [], variants: Object.keys(VARIANTS), subset: false, json: null, check: false, details: false, workerd: true, concurrency: 4, timeout: 10000, verbose: false, refresh: false, src: process.env.WORKERD_SRC || null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") { console.log(HELP); process.exit(0); }
    else if (a === "--filter") o.filter.push(argv[++i]);
    else if (a === "--variant") { o.variants = [argv[++i]]; if (!VARIANTS[o.variants[0]]) throw new Error(`--variant must be one of ${Object.keys(VARIANTS).join(", ")}`); }
    else if (a === "--subset") o.subset = true;
    else if (a === "--json") o.json = argv[++i];
    else if (a === "--check") o.check = true;
    else if (a === "--details") o.details = true;
    else if (a === "--write-known") o.writeKnown = true;
    else if (a === "--no-workerd") o.workerd = false;
    else if (a === "--concurrency") o.concurrency = Number(argv[++i]);
    else if (a === "--timeout") o.timeout = Number(argv[++i]);
    else if (a === "--verbose") o.verbose = true;
    else if (a === "--refresh") o.refresh = true;
    else if (a === "--workerd-src") o.src = argv[++i];
    else throw new Error(`unknown option ${a}\n\n${HELP}`);
  }
  return o;
}

/** The workerd binary and its release tag (the npm package's version, checked against the binary's date). */
function findWorkerd() {
  const miniflare = path.dirname(require.resolve("miniflare/package.json", { paths: [ROOT] }));
  const pkgFile = require.resolve("workerd/package.json", { paths: [miniflare] });
  const version = JSON.parse(readFileSync(pkgFile, "utf8")).version;
  const binary = path.join(path.dirname(pkgFile), "bin", "workerd");
  const date = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim().split(/\s+/).pop();
  if (date.replaceAll("-", "") !== version.split(".")[1]) throw new Error(`the workerd binary says ${date} but its package is ${version}`);
  return { binary, tag: `v${version}`, date };
}

/** The tag's flag table: the all-compat-flags variant turns on what that workerd release dates, not what later ones do. */
const COMPAT_CAPNP = "src/workerd/io/compatibility-date.capnp";

/**
 * The newest `compatEnableDate` in a workerd release's flag table. workerd's all-compat-flags
 * variant runs at 2999-12-31, which turns on every flag that release dates; workerbox's own flag
 * table is newer (it dates flags the release leaves undated, e.g. nodejs_compat on 2026-08-04), so
 * its side of the variant runs at the release's newest date instead of its own.
 */
function newestFlagDate(capnp) {
  const dates = [...capnp.matchAll(/\$compatEnableDate\("(\d{4}-\d{2}-\d{2})"\)/g)].map((m) => m[1]).sort();
  if (!dates.length) throw new Error(`no compatEnableDate in ${COMPAT_CAPNP}`);
  return dates.at(-1);
}

/** Fills `dest` with the three test directories of `tag` (and the rest of src/workerd/api, which configs embed from). */
function fetchSources(tag, dest, src) {
  const tmp = `${dest}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const archive = (gitDir) => {
    const tar = execFileSync("git", ["--git-dir", gitDir, "archive", "--format=tar", tag, "src/workerd/api", COMPAT_CAPNP], { maxBuffer: 1 << 30 });
    execFileSync("tar", ["-x", "-C", tmp], { input: tar });
  };
  if (src) {
    const gitDir = existsSync(path.join(src, ".git")) ? path.join(src, ".git") : src;
    console.error(`workerd-tests: taking ${tag} from ${src}`);
    archive(gitDir);
  } else {
    console.error(`workerd-tests: fetching ${tag} from ${REPO} (shallow, sparse) …`);
    const clone = `${dest}.git`;
    rmSync(clone, { recursive: true, force: true });
    try {
      execFileSync("git", ["clone", "--quiet", "--depth", "1", "--filter=blob:none", "--sparse", "--branch", tag, REPO, clone], { stdio: "inherit" });
      execFileSync("git", ["-C", clone, "sparse-checkout", "set", "--no-cone", "/src/workerd/api/", `/${COMPAT_CAPNP}`], { stdio: "inherit" });
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      rmSync(clone, { recursive: true, force: true });
      throw Object.assign(new Error(`could not fetch ${tag} from ${REPO} (${e.message.split("\n")[0]}); without github.com, pass --workerd-src <a workerd git checkout> or WORKERD_SRC`), { brief: true });
    }
    archive(path.join(clone, ".git"));
    rmSync(clone, { recursive: true, force: true });
  }
  rmSync(dest, { recursive: true, force: true });
  execFileSync("mv", [tmp, dest]);
  compileTypeScript(dest);
  writeFileSync(path.join(dest, ".complete"), `${tag}\n`);
}

/** Test modules written in TypeScript are embedded as their .js output (bazel's ts_project): make it with esbuild. */
function compileTypeScript(dest) {
  const esbuild = require("esbuild");
  for (const dir of DIRS) {
    for (const file of walk(path.join(dest, dir), (n) => n.endsWith(".ts") && !n.endsWith(".d.ts"))) {
      const js = file.replace(/\.ts$/, ".js");
      if (existsSync(js)) continue;
      const out = esbuild.transformSync(readFileSync(file, "utf8"), { loader: "ts", format: "esm", target: "esnext" });
      writeFileSync(js, out.code);
    }
  }
}

function walk(dir, keep, out = []) {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, keep, out);
    else if (keep(e.name)) out.push(full);
  }
  return out.sort();
}

/** wd_test() settings per config from BUILD.bazel: variants turned off, a compat_date. */
function buildSettings(root) {
  const settings = new Map();
  for (const build of walk(path.join(root, "src/workerd/api"), (n) => n === "BUILD.bazel")) {
    const text = readFileSync(build, "utf8");
    for (const m of text.matchAll(/wd_test\(([\s\S]*?)\n\)/g)) {
      const src = /\bsrc = "([^"]+)"/.exec(m[1])?.[1];
      if (!src) continue;
      const file = path.relative(root, path.join(path.dirname(build), src));
      settings.set(file, {
        config: !/generate_default_variant = False/.test(m[1]),
        "all-compat-flags": !/generate_all_compat_flags_variant = False/.test(m[1]),
        date: /compat_date = "([^"]+)"/.exec(m[1])?.[1] ?? null,
      });
    }
  }
  return settings;
}

async function pool(items, n, fn) {
  const queue = [...items];
  await Promise.all(Array.from({ length: Math.max(1, n) }, async () => {
    while (queue.length) await fn(queue.shift());
  }));
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const { binary, tag } = findWorkerd();
  const cache = path.join(ROOT, ".cache", "workerd-tests", tag);
  if (o.refresh || !existsSync(path.join(cache, ".complete")) || !existsSync(path.join(cache, COMPAT_CAPNP))) fetchSources(tag, cache, o.src);
  VARIANTS["all-compat-flags"].workerboxDate = newestFlagDate(readFileSync(path.join(cache, COMPAT_CAPNP), "utf8"));
  const settings = buildSettings(cache);
  let files = DIRS.flatMap((d) => walk(path.join(cache, d), (n) => n.endsWith(".wd-test") || n.endsWith(".ts-wd-test"))).map((f) => path.relative(cache, f));
  if (o.subset) files = files.filter((f) => SUBSET.some((s) => f === `src/workerd/api/${s}.wd-test`));
  if (o.filter.length) files = files.filter((f) => o.filter.some((s) => f.includes(s)));
  console.error(`workerd-tests: ${files.length} configs from ${tag}, variants ${o.variants.join(", ")}, workerd ${o.workerd ? binary : "skipped"}`);

  const rows = [];
  const untranslatable = [];
  const gaps = {};
  const started = Date.now();
  await pool(files, o.concurrency, async (file) => {
    const full = path.join(cache, file);
    let plan;
    try {
      plan = translate(configOf(parseCapnp(readFileSync(full, "utf8"))), path.dirname(full));
    } catch (e) {
      plan = { workers: [], gaps: [], untranslatable: `parse error: ${e.message}` };
    }
    if (plan.gaps.length) gaps[file] = plan.gaps;
    if (plan.untranslatable) untranslatable.push({ file, reason: plan.untranslatable });
    const s = settings.get(file) ?? { config: true, "all-compat-flags": true, date: null };
    // wd_test's compat_date replaces 2000-01-01 in the config variant; none of the three directories sets one.
    if (s.date) (gaps[file] ??= []).push(`BUILD.bazel sets compat_date ${s.date}; this runner uses 2000-01-01`);
    for (const variant of o.variants) {
      if (!s[variant]) continue;
      const workerd = o.workerd ? await runWorkerd(binary, path.basename(full), path.dirname(full), variant) : { tests: {}, errors: {}, note: "not run" };
      const t0 = Date.now();
      const workerbox = plan.untranslatable
        ? { tests: Object.fromEntries(Object.keys(workerd.tests).map((n) => [n, "fail"])), errors: {}, note: `not translated: ${plan.untranslatable}` }
        : await runWorkerbox(plan, variant, { timeoutMs: o.timeout, verbose: o.verbose, expected: Object.keys(workerd.tests) });
      delete workerd.output;
      rows.push({ file, variant, workerd, workerbox, ms: Date.now() - t0 });
      if (!o.json) process.stderr.write(".");
    }
  });
  process.stderr.write("\n");
  rows.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.variant < b.variant ? -1 : 1));
  untranslatable.sort((a, b) => (a.file < b.file ? -1 : 1));
  const known = existsSync(KNOWN) ? loadKnown(KNOWN) : () => undefined;
  const { totals, unknownRegressions } = printReport(rows, untranslatable, { known, details: o.details });
  console.log(`\n${rows.length} runs in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (o.json) {
    writeFileSync(o.json, JSON.stringify({ tag, variants: o.variants, totals, untranslatable, gaps, rows, unknownRegressions }, null, 1));
    console.log(`wrote ${o.json}`);
  }
  if (o.writeKnown) {
    if (o.subset || o.filter.length || o.variants.length !== Object.keys(VARIANTS).length || !o.workerd) throw new Error("--write-known needs a full run (no --subset, --filter, --variant or --no-workerd)");
    const previous = existsSync(KNOWN) ? JSON.parse(readFileSync(KNOWN, "utf8")).failures ?? [] : [];
    const failures = knownFailuresFrom(rows, previous);
    const beyond = beyondFrom(rows);
    const note = `Tests of workerd ${tag} that pass on the workerd binary and fail on workerbox, with why (scripts/workerd-tests.mjs --check fails on any other), and the tests that fail on the binary and pass on workerbox (beyond: --check fails when one of them fails here). Written by --write-known; see docs/workerd-tests.md.`;
    writeFileSync(KNOWN, JSON.stringify({ note, tag, failures, beyond }, null, 1) + "\n");
    console.log(`wrote ${failures.length} known failures and ${beyond.length} tests beyond workerd to ${path.relative(ROOT, KNOWN)}`);
  }
  const lost = o.check && existsSync(KNOWN) ? lostBeyond(rows, JSON.parse(readFileSync(KNOWN, "utf8")).beyond ?? []) : [];
  if (lost.length) {
    console.log(`\n${lost.length} tests that fail on workerd and passed here before (beyond in known-failures.json) fail here now:`);
    for (const b of lost) console.log(`  ${b.file} [${b.variant}] ${b.test}`);
    process.exitCode = 1;
  }
  if (o.check && unknownRegressions.length) {
    console.log(`\n${unknownRegressions.length} tests pass on workerd, fail here and are not in known-failures.json:`);
    for (const r of unknownRegressions) console.log(`  ${r.file} [${r.variant}] ${r.test}: ${r.error.slice(0, 200)}`);
    process.exitCode = 1;
  }
}

main().then(
  () => setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref(),
  (e) => {
    console.error(`workerd-tests: ${e?.brief ? e.message : (e?.stack ?? e)}`);
    process.exit(2);
  },
);
