// urlpattern_standard / urlpattern_original: before 2025-05-01 a worker gets workerd's legacy
// URLPattern (src/runtime/ops/urlpattern_legacy.rs and the `legacy` class in
// src/js/46_urlpattern.js). Every expected value below was printed by workerd itself (through
// Miniflare 4.20260426.0 at compatibility dates 2025-04-30 and 2025-05-01, and with both explicit
// flags). Every worker runs on loopback only and is disposed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

function run(t, body, compatibilityDate = undefined, compatibilityFlags = undefined) {
  return evalInWorker(t, body, { compatibilityDate, compatibilityFlags });
}

const BODY = `
  const C = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
  const parts = (p) => C.map((k) => p[k]).join(" | ");
  const attempt = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message; } };
  const P = (...a) => new URLPattern(...a);
  return {
    string: parts(P("https://a.example/:id")),
    stringNoPath: parts(P("https://a.example")),
    stringBase: parts(P("/books/:id", "https://u:p@a.example:8080/base?x=1#y")),
    stringBaseSearch: parts(P("?q", "https://a.example/p?old#h")),
    defaultPort: parts(P("https://a.example:443/x")),
    init: parts(P({ pathname: "/x" })),
    initBase: parts(P({ pathname: "/x", baseURL: "https://a.example/p?s=1#h" })),
    initHostBase: parts(P({ hostname: "b.example", baseURL: "https://u:p@a.example:8080/p?s#h" })),
    initBaseEscaped: parts(P({ hash: "z", baseURL: "https://a.example/p:x(y)*?a=*&b={c}" })),
    initPort: parts(P({ protocol: "https", port: "443" })),
    initWithBaseArg: attempt(() => parts(P({ pathname: "/x" }, "https://a.example/"))),
    withQuery: P("https://a.example/:id").test("https://a.example/42?q=1"),
    withHash: P("https://a.example/:id").test("https://a.example/42#h"),
    plain: P("https://a.example/:id").exec("https://a.example/42").pathname.groups,
    port443: P("https://a.example:443/x").test("https://a.example:443/x"),
    optional: JSON.stringify(P({ search: ":a?" }).exec({ search: "" }).search.groups, (k, v) => (v === undefined ? "<undefined>" : v)),
    emptyRepeat: JSON.stringify(P("https://a.example/foo/:bar*").exec("https://a.example/foo")?.pathname.groups ?? null, (k, v) => (v === undefined ? "<undefined>" : v)),
    execInitBase: P({ pathname: "/books/:id" }).exec({ pathname: "/books/1", baseURL: "https://a.example/p?q#h" }).search.input,
    execInitBaseArg: attempt(() => P({}).test({}, "https://a.example")),
    hasRegExpGroups: [P("/(\\\\d+)", "https://a.example").hasRegExpGroups, "hasRegExpGroups" in URLPattern.prototype],
    relative: attempt(() => P("/x")),
    badBase: attempt(() => P("/x", "nope")),
    badName: attempt(() => P("https://a.example/:")),
    duplicate: attempt(() => P("https://a.example/:id:id")),
    unclosed: attempt(() => P("https://a.example/{a")),
    badProtocol: attempt(() => P({ protocol: "ht tp" })),
  };`;

const LEGACY = {
  string: "https |  |  | a.example |  | /:id |  | ",
  stringNoPath: "https |  |  | a.example |  |  |  | ",
  stringBase: "https | u | p | a.example | 8080 | /books/:id |  | ",
  stringBaseSearch: "https |  |  | a.example |  | /p | q | ",
  defaultPort: "https |  |  | a.example | 443 | /x |  | ",
  init: "* | * | * | * | * | /x | * | *",
  initBase: "https |  |  | a.example |  | /x | s=1 | h",
  initHostBase: "https | u | p | b.example | 8080 | /p | s | h",
  initBaseEscaped: "https |  |  | a.example |  | /p\\:x\\(y\\)\\* | a=\\*&b=\\{c\\} | z",
  initPort: "https | * | * | * | 443 | * | * | *",
  initWithBaseArg: "* | * | * | * | * | /x | * | *",
  withQuery: false,
  withHash: false,
  plain: { id: "42" },
  port443: false,
  optional: '{"a":""}',
  emptyRepeat: '{"bar":""}',
  execInitBase: "q",
  execInitBaseArg: "TypeError: A baseURL is not allowed when input is an object.",
  hasRegExpGroups: [null, false],
  relative: "TypeError: Syntax error in URL Pattern: a relative pattern must have a base URL.",
  badBase: "TypeError: Invalid base URL.",
  badName: "TypeError: Syntax error in URL Pattern: invalid name start at 1",
  duplicate: "TypeError: Syntax error in URL Pattern: Duplicated part names [id]",
  unclosed: "TypeError: Syntax error in URL Pattern: Missing required close token",
  badProtocol: "TypeError: Syntax error in URL Pattern",
};

// The standard one, as workerd gives it from 2025-05-01, except for error messages: workerd's
// are all "Failed to construct URLPattern", workerbox's name the cause (checked by prefix).
const STANDARD = {
  string: "https | * | * | a.example |  | /:id | * | *",
  stringNoPath: "https | * | * | a.example |  | * | * | *",
  stringBase: "https | * | * | a.example | 8080 | /books/:id | * | *",
  stringBaseSearch: "https | * | * | a.example |  | /p | q | *",
  defaultPort: "https | * | * | a.example |  | /x | * | *",
  init: "* | * | * | * | * | /x | * | *",
  initBase: "https | * | * | a.example |  | /x | * | *",
  initHostBase: "https | * | * | b.example | * | * | * | *",
  initBaseEscaped: "https | * | * | a.example |  | /p\\:x\\(y\\)\\* | a=\\*&b=\\{c\\} | z",
  initPort: "https | * | * | * |  | * | * | *",
  withQuery: true,
  withHash: true,
  plain: { id: "42" },
  port443: true,
  optional: '{"a":"<undefined>"}',
  emptyRepeat: '{"bar":"<undefined>"}',
  hasRegExpGroups: [true, true],
};
const STANDARD_ERRORS = ["initWithBaseArg", "relative", "badBase", "badName", "duplicate", "unclosed", "badProtocol", "execInitBaseArg"];

function assertStandard(result) {
  for (const [key, value] of Object.entries(STANDARD)) assert.deepEqual(result[key], value, key);
  for (const key of STANDARD_ERRORS) assert.match(result[key], /^TypeError: /, key);
  assert.equal(result.execInitBase, "");
}

test("urlpattern_standard: workerd's legacy URLPattern before 2025-05-01 and with urlpattern_original", async (t) => {
  assert.deepEqual(await run(t, BODY, "2025-04-30"), LEGACY);
  assert.deepEqual(await run(t, BODY, "2025-05-01", ["urlpattern_original"]), LEGACY);
});

// What the legacy one does beyond the standard's rules (src/js/lazy/urlpattern_legacy*.js): a
// hostname pattern keeps its case, an exec() init dict is checked, each component's regexp is a
// JavaScript RegExp with the u flag, error positions count UTF-8 bytes, and the class is
// workerd's (function constructor, prototype order, its own errors). Printed by workerd at
// compatibility date 2025-04-30.
const LEGACY_MORE_BODY = `
  const C = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
  const parts = (p) => C.map((k) => p[k]).join(" | ");
  const attempt = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message.replace(/reference = \\w+/, "reference = <id>"); } };
  const P = (...a) => new URLPattern(...a);
  return {
    hostCase: parts(P("https://A.Example/x")),
    hostCaseTest: P("https://A.Example/x").test("https://A.Example/x"),
    execHostCase: P({ hostname: "a.example" }).exec({ hostname: "A.Example" }),
    execHostCaseHttps: P({ hostname: "a.example" }).exec({ protocol: "https", hostname: "A.Example" }).hostname.input,
    execBadProtocol: attempt(() => P({}).exec({ protocol: "ht tp" })),
    vFlagOnly: attempt(() => P({ pathname: "/([\\\\q{abc}])" })),
    nestedGroup: attempt(() => P({ pathname: "((a))" })),
    bytePosition: attempt(() => P({ pathname: "\u00e9\u00e9(" })),
    relative: attempt(() => P("((a))")),
    groupPattern: [P({ pathname: "{:a}b" }).pathname, P({ pathname: "/{:a}b" }).pathname],
    nullBase: parts(P("https://a.example/x", null)),
    badOptions: attempt(() => P({ pathname: "/x" }, undefined, "x")),
    withoutNew: attempt(() => URLPattern()),
    keys: Object.keys(URLPattern.prototype),
    illegal: attempt(() => URLPattern.prototype.pathname),
    surrogate: P({}).exec({ pathname: "/\\udc00" }).pathname.input,
    libcxxRejects: attempt(() => P({ protocol: "(x})", pathname: "a b" }).pathname),
  };`;

const LEGACY_MORE = {
  hostCase: "https |  |  | A.Example |  | /x |  | ",
  hostCaseTest: false,
  execHostCase: null,
  execHostCaseHttps: "a.example",
  execBadProtocol: "TypeError: Invalid URL protocol component",
  vFlagOnly: "TypeError: Invalid regular expression syntax.",
  nestedGroup: "TypeError: Syntax error in URL Pattern: invalid group in regex at 2",
  bytePosition: "TypeError: Syntax error in URL Pattern: invalid regex start at 4",
  relative: "TypeError: Syntax error in URL Pattern: a relative pattern must have a base URL.",
  groupPattern: [":ab", "/{:a}b"],
  nullBase: "https |  |  | a.example |  | /x |  | ",
  badOptions: "TypeError: Failed to construct 'URLPattern': constructor parameter 3 is not of type 'URLPatternOptions'.",
  withoutNew: "TypeError: Failed to construct 'URLPattern': Please use the 'new' operator, this object constructor cannot be called as a function.",
  keys: ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash", "test", "exec"],
  illegal: "TypeError: Illegal invocation: function called with incorrect `this` reference. See https://developers.cloudflare.com/workers/observability/errors/#illegal-invocation-errors for details.",
  surrogate: "/%ED%B0%80",
  libcxxRejects: "Error: internal error; reference = <id>",
};

test("urlpattern_standard: the legacy URLPattern's own rules, as workerd's", async (t) => {
  assert.deepEqual(await run(t, LEGACY_MORE_BODY, "2025-04-30"), LEGACY_MORE);
});

test("urlpattern_standard: the standard URLPattern from 2025-05-01, with urlpattern_standard, and by default", async (t) => {
  assertStandard(await run(t, BODY, "2025-05-01"));
  assertStandard(await run(t, BODY, "2025-04-30", ["urlpattern_standard"]));
  assertStandard(await run(t, BODY));
});
