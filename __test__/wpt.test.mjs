// Web Platform Tests data files, run inside one worker against the worker's own URL,
// URLSearchParams and TextDecoder, with the semantics of WPT's own harness files.
//
// Where the data comes from (no copy is kept in this repository):
// - url/resources/urltestdata.json and url/resources/setters_tests.json: no npm package ships the
//   genuine files (whatwg-url, whatwg-url-without-unicode, whatwg-url-compat, url-state-machine,
//   urlpattern-polyfill, url-polyfill, universal-url, bare-url, spec-url, wpt-runner were checked;
//   @wordpress/url ships only a reduced input/failure extract). The Rust `url` crate, already a
//   locked dependency of this project (Cargo.lock), ships them verbatim from WPT in its `tests/`
//   folder (with one added "# Pulled from …" comment string). They are read from the crate's
//   source in Cargo's registry, located with `cargo metadata --offline`.
// - Encoding labels: the Encoding Standard's encodings.json (label → name), as two npm packages
//   carry it: text-encoding@0.7.0 embeds a verbatim (older) copy of encodings.json in
//   lib/encoding.js (all encodings, incl. "replacement", ISO-2022-JP, x-mac-cyrillic, ISO-8859-8-I),
//   and whatwg-encoding@3.1.1 ships lib/labels-to-names.json, generated from a current
//   encodings.json but limited to the encodings it decodes. Their union is the table used here;
//   a label on which they disagree fails the test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

// Pass counts measured on this runtime; a drop below them is a regression.
//
// Known failures: the runtime parses with ada (the `ada-url` crate, the parser workerd uses), which
// follows the current URL Standard; the url crate's copies of the data files are older, and the
// standard changed since on exactly these (the current WPT files, run by scripts/wpt.mjs, pass them):
// - urltestdata (2 of 819; the same 2 fail through URL.parse in urltestdataStatics): "^" in the path
//   of "foo://host/ !\"$%&'()*+,-./:;<=>@[\\]^_`{|}~" and its "wss:" twin is now percent-encoded
//   ("%5E"; the old data kept "^").
// - setters (9 of 254): the same "^" in the pathname setter on "a:/"; and emptying search or hash of
//   an opaque path that ends in spaces ("data:space ?query", "sc:space  ?query#fragment", …) now
//   percent-encodes the last space ("space%20"), where the old data dropped or kept them.
const MEASURED = {
  // urltestdata.json, url-constructor.any.js semantics (incl. url-origin.any.js when "origin" is given)
  urltestdata: 817, // of 819
  // urltestdata.json failure entries without base, failure.html's URL checks (as base, href setter)
  urltestdataFailure: 212, // of 212
  // urltestdata.json through URL.canParse and URL.parse (same expectations, static entry points)
  urltestdataStatics: 817, // of 819
  // setters_tests.json, url-setters.any.js semantics
  setters: 245, // of 254
  // encodings.json labels: textdecoder-labels.any.js (each label, upper-cased and with ASCII whitespace)
  labels: 222, // of 222
  // replacement-encodings.any.js: "replacement" labels throw RangeError
  replacementLabels: 5, // of 5
  // api-invalid-label.any.js: labels padded with U+0000, U+000B, U+00A0, U+2028, U+2029, and an
  // unknown label, throw RangeError
  invalidLabels: 3406, // of 3406
};

function cratePath(name) {
  const out = execFileSync("cargo", ["metadata", "--format-version", "1", "--offline", "--locked"], {
    cwd: root,
    maxBuffer: 256 << 20,
    encoding: "utf8",
  });
  const pkgs = JSON.parse(out).packages.filter((p) => p.name === name && p.source?.startsWith("registry+"));
  assert.ok(pkgs.length >= 1, `crate ${name} not found in cargo metadata`);
  return { dir: dirname(pkgs[0].manifest_path), version: pkgs[0].version };
}

function loadUrlData() {
  const crate = cratePath("url");
  const read = (file) => JSON.parse(readFileSync(join(crate.dir, "tests", file), "utf8"));
  return { source: `url crate ${crate.version}`, urltestdata: read("urltestdata.json"), setters: read("setters_tests.json") };
}

/** encodings.json's shape: [{ heading, encodings: [{ name, labels }] }]. */
function loadEncodingsTable() {
  const src = readFileSync(require.resolve("text-encoding/lib/encoding.js"), "utf8");
  const match = /var encodings = (\[[\s\S]*?\n  \]);/.exec(src);
  assert.ok(match, "encodings table not found in text-encoding/lib/encoding.js");
  const table = JSON.parse(match[1]);
  const labelsToNames = JSON.parse(
    readFileSync(join(dirname(require.resolve("whatwg-encoding")), "labels-to-names.json"), "utf8"),
  );
  const byName = new Map();
  const nameOf = new Map();
  for (const section of table) {
    for (const { name, labels } of section.encodings) {
      byName.set(name, new Set(labels));
      for (const label of labels) nameOf.set(label, name);
    }
  }
  for (const [label, name] of Object.entries(labelsToNames)) {
    if (nameOf.has(label)) assert.equal(nameOf.get(label), name, `the two copies of encodings.json disagree on ${label}`);
    assert.ok(byName.has(name), `unknown encoding name ${name}`);
    byName.get(name).add(label);
  }
  return [...byName].map(([name, labels]) => ({ name, labels: [...labels].sort() }));
}

// Runs inside the worker: everything below uses the isolate's URL, URLSearchParams, TextDecoder.
const WORKER_SCRIPT = String.raw`
// Quotes a string, escaping controls and invisible characters so that failures read unambiguously.
const quote = (s) => '"' + s.replace(/[\u0000-\u001f"\\\u007f-\u00a0\u00ad\u200b-\u200f\u2028\u2029\ufeff\ud800-\udfff]/g,
  (c) => c === '"' ? '\\"' : c === "\\" ? "\\\\" : "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")) + '"';
const show = (v) => typeof v === "string" ? quote(v) : String(v);
function check(problems, what, actual, expected) {
  if (actual !== expected) problems.push(what + ": got " + show(actual) + ", expected " + show(expected));
}
function errorName(f) {
  try { f(); return null; } catch (e) { return e && e.constructor && e.constructor.name || String(e); }
}
function record(results, name, problems) {
  results.total++;
  if (problems.length === 0) results.passed++;
  else results.failures.push({ name, problems });
}

function urltestdata(tests) {
  const main = { total: 0, passed: 0, failures: [] };
  const failure = { total: 0, passed: 0, failures: [] };
  const statics = { total: 0, passed: 0, failures: [] };
  for (const expected of tests) {
    if (typeof expected === "string") continue; // comments
    const base = expected.base !== null ? expected.base : undefined;
    const name = quote(expected.input) + (expected.base ? " against " + quote(expected.base) : " without base");
    // url-constructor.any.js (+ url-origin.any.js)
    const problems = [];
    if (expected.failure) {
      const err = errorName(() => new URL(expected.input, base));
      if (err !== "TypeError") problems.push("new URL() " + (err ? "threw " + err : "did not throw") + ", expected TypeError");
    } else {
      try {
        const url = new URL(expected.input, base);
        for (const key of ["href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search"]) {
          if (key in expected) check(problems, key, url[key], expected[key]);
        }
        if ("searchParams" in expected) {
          if (!("searchParams" in url)) problems.push("no searchParams");
          else check(problems, "searchParams", url.searchParams.toString(), expected.searchParams);
        }
        if ("hash" in expected) check(problems, "hash", url.hash, expected.hash);
        if ("origin" in expected) check(problems, "origin", url.origin, expected.origin);
      } catch (e) {
        problems.push("new URL() threw " + e.name + ": " + e.message);
      }
    }
    record(main, name, problems);
    // URL.canParse / URL.parse agree with the constructor's expectations
    const sp = [];
    try {
      check(sp, "URL.canParse", URL.canParse(expected.input, base), !expected.failure);
      const parsed = URL.parse(expected.input, base);
      if (expected.failure) check(sp, "URL.parse", parsed, null);
      else if (parsed === null) sp.push("URL.parse returned null");
      else check(sp, "URL.parse().href", parsed.href, expected.href);
    } catch (e) {
      sp.push("threw " + e.name + ": " + e.message);
    }
    record(statics, name, sp);
    // failure.html: an input that fails without a base also fails as a base and through href
    if (expected.failure && expected.base === null) {
      const fp = [];
      const asBase = errorName(() => new URL("about:blank", expected.input));
      if (asBase !== "TypeError") fp.push("as base: " + (asBase ? "threw " + asBase : "did not throw"));
      const viaHref = errorName(() => { const url = new URL("about:blank"); url.href = expected.input; });
      if (viaHref !== "TypeError") fp.push("href setter: " + (viaHref ? "threw " + viaHref : "did not throw"));
      record(failure, name, fp);
    }
  }
  return { urltestdata: main, urltestdataFailure: failure, urltestdataStatics: statics };
}

function setters(all) {
  const results = { total: 0, passed: 0, failures: [] };
  for (const [property, cases] of Object.entries(all)) {
    if (property === "comment") continue;
    for (const testCase of cases) {
      const name = "Setting " + quote(testCase.href) + "." + property + " = " + quote(testCase.new_value) +
        (testCase.comment ? " " + testCase.comment : "");
      const problems = [];
      try {
        const url = new URL(testCase.href);
        url[property] = testCase.new_value;
        for (const [key, value] of Object.entries(testCase.expected)) check(problems, key, url[key], value);
      } catch (e) {
        problems.push("threw " + e.name + ": " + e.message);
      }
      record(results, name, problems);
    }
  }
  return { setters: results };
}

function labels(table) {
  const labelsResult = { total: 0, passed: 0, failures: [] };
  const replacement = { total: 0, passed: 0, failures: [] };
  const invalid = { total: 0, passed: 0, failures: [] };
  const whitespace = [" ", "\t", "\n", "\f", "\r"];
  const decoderEncoding = (label) => { try { return new TextDecoder(label).encoding; } catch (e) { return "threw " + e.name; } };
  for (const { name, labels } of table) {
    for (const label of labels) {
      if (name === "replacement") {
        const err = errorName(() => new TextDecoder(label));
        record(replacement, label, err === "RangeError" ? [] : [err ? "threw " + err : "accepted as " + decoderEncoding(label)]);
        continue;
      }
      // textdecoder-labels.any.js
      const expected = name.toLowerCase();
      const problems = [];
      check(problems, quote(label), decoderEncoding(label), expected);
      check(problems, quote(label.toUpperCase()), decoderEncoding(label.toUpperCase()), expected);
      for (const ws of whitespace) {
        for (const input of [ws + label, label + ws, ws + label + ws]) check(problems, quote(input), decoderEncoding(input), expected);
      }
      record(labelsResult, label + " => " + name, problems);
    }
  }
  // api-invalid-label.any.js
  const inputs = ["invalid-invalidLabel"];
  for (const { labels } of table) {
    for (const label of labels) {
      for (const ws of ["\u0000", "\u000b", "\u00a0", "\u2028", "\u2029"]) inputs.push(ws + label, label + ws, ws + label + ws);
    }
  }
  for (const input of inputs) {
    const err = errorName(() => new TextDecoder(input));
    record(invalid, quote(input), err === "RangeError" ? [] : [err ? "threw " + err : "accepted as " + decoderEncoding(input)]);
  }
  return { labels: labelsResult, replacementLabels: replacement, invalidLabels: invalid };
}

const suites = { urltestdata, setters, labels };
export default {
  async fetch(request, env) {
    const suite = new URL(request.url).pathname.slice(1);
    return Response.json(suites[suite](env.DATA[suite]));
  },
};
`;

function report(t, key, result, source) {
  const line = `${key}: ${result.passed}/${result.total} passed (${source})`;
  t.diagnostic(line);
  console.error(line);
  for (const f of result.failures) {
    const detail = `  FAIL ${f.name}: ${f.problems.join("; ")}`;
    t.diagnostic(detail);
    console.error(detail);
  }
}

test("WPT data files: URL parsing and setters, TextDecoder labels", async (t) => {
  const url = loadUrlData();
  const table = loadEncodingsTable();
  const worker = await useWorker(t, {
    script: WORKER_SCRIPT,
    filename: "wpt.js",
    bindings: { DATA: { urltestdata: url.urltestdata, setters: url.setters, labels: table } },
  });
  const sources = {
    urltestdata: `urltestdata.json from ${url.source}`,
    setters: `setters_tests.json from ${url.source}`,
    labels: "encodings.json from text-encoding@0.7.0 + whatwg-encoding@3.1.1",
  };
  const all = {};
  for (const suite of ["urltestdata", "setters", "labels"]) {
    const response = await dispatch(worker, `http://wpt.test/${suite}`);
    assert.equal(response.status, 200, await response.clone().text());
    const results = await response.json();
    for (const [key, result] of Object.entries(results)) {
      report(t, key, result, sources[suite]);
      all[key] = result;
    }
  }
  // The data must actually have been run: counts of cases present in the files.
  assert.ok(all.urltestdata.total > 800, "urltestdata.json cases ran");
  assert.ok(all.setters.total > 250, "setters_tests.json cases ran");
  assert.ok(all.labels.total >= 219, "encoding labels ran");
  assert.ok(all.replacementLabels.total >= 5, "replacement labels ran");
  for (const [key, floor] of Object.entries(MEASURED)) {
    assert.ok(all[key].passed >= floor, `${key}: ${all[key].passed}/${all[key].total} passed, measured ${floor} before`);
  }
});
