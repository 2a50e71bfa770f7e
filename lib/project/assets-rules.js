"use strict";
// The `_redirects` and `_headers` files of an assets folder, with the rules Cloudflare applies
// to them (as workers-shared's metadata generation and asset worker describe them):
//
// - `_redirects`: one rule a line, `from to [status]` (status 301, 302 — the default — 303,
//   307, 308, or 200 to serve another path's asset without redirecting; 200 only to relative
//   paths). `from` is a relative path; `*` matches anything (`:splat` in `to`), `:name` one path
//   segment. Rules without either are static: they are looked up exactly and win over dynamic
//   rules, as long as they come before the first dynamic rule (a later one is matched in order
//   with the dynamic ones). At most 2,000 static and 100 dynamic rules, lines of at most 2,000
//   characters; a repeated `from`, `/* → /index.html` and (with html_handling) `/ → /index`
//   loops are refused.
// - `_headers`: a path line (relative, or `https://host/path`; one `*` at most, `:name`
//   placeholders), then `Name: value` lines (repeated names joined with ", ") and `! Name` lines
//   that remove a header; at most 100 rules. Every matching rule applies, in order: a header
//   set by an earlier rule gets later values appended, an existing one is replaced.
//
// A line that breaks a rule is skipped with a message (`problems`), as wrangler warns.

const PERMITTED_STATUS = new Set([200, 301, 302, 303, 307, 308]);
const MAX_LINE = 2000;
const MAX_STATIC_REDIRECTS = 2000;
const MAX_DYNAMIC_REDIRECTS = 100;
const MAX_HEADER_RULES = 100;
const PLACEHOLDER = /:([A-Za-z]\w*)/g;
const HAS_PLACEHOLDER = /:[A-Za-z]\w*/;
const ABSOLUTE = /^https:\/\/+([^/]+)\/?(.*)$/;

/** The path of `token` as a URL parser normalises it (percent-encoding, dot segments). */
function normalisedPath(token, withSearch) {
  const url = new URL(`//${token.startsWith("/") ? token : `/${token}`}`, "relative://");
  return url.pathname + (withSearch ? url.search + url.hash : "");
}

/**
 * A rule's URL: `[value]` or `[undefined, message]`. `relativeOnly` refuses https:// URLs;
 * `keepSearch` keeps a query and fragment (redirect destinations).
 */
function checkUrl(token, { relativeOnly = false, noPorts = false, keepSearch = false } = {}) {
  const absolute = ABSOLUTE.exec(token);
  if (absolute) {
    if (relativeOnly) return [undefined, `Only relative URLs are allowed. Skipping absolute URL ${token}.`];
    if (noPorts && /:\d+$/.test(absolute[1])) return [undefined, `Specifying ports is not supported. Skipping absolute URL ${token}.`];
    return [`https://${absolute[1]}${normalisedPath(absolute[2], keepSearch)}`];
  }
  if (relativeOnly && !token.startsWith("/")) token = `/${token}`;
  if (token.startsWith("/")) {
    try {
      return [normalisedPath(token, keepSearch)];
    } catch {
      return [undefined, `Error parsing URL segment ${token}. Skipping.`];
    }
  }
  return [undefined, relativeOnly ? "URLs should begin with a forward-slash." : 'URLs should either be relative (e.g. begin with a forward-slash), or use HTTPS (e.g. begin with "https://").'];
}

const isDynamic = (from) => from.includes("*") || HAS_PLACEHOLDER.test(from);
const escape = (text) => text.replace(/[-/\\^$*+?.()|[\]{}]/g, "\\$&");

/**
 * A matcher for a rule's pattern: `*` captures anything as `splat`, `:name` one path segment (in
 * the host of an https:// pattern, one label). It returns the captures, or null.
 */
function compilePattern(pattern) {
  const crossHost = pattern.startsWith("https://");
  let hostPart = "";
  let pathPart = pattern;
  if (crossHost) {
    const slash = pattern.indexOf("/", "https://".length);
    hostPart = pattern.slice(0, slash < 0 ? pattern.length : slash);
    pathPart = slash < 0 ? "/" : pattern.slice(slash);
  }
  const names = new Set();
  // Each `*` captures as `splat` (a second one makes the pattern invalid, as in Cloudflare's).
  const part = (text, segment) =>
    text
      .split("*")
      .map((piece) =>
        escape(piece).replace(/:([A-Za-z]\w*)/g, (_, name) => {
          if (names.has(name)) return `\\k<${name}>`;
          names.add(name);
          return `(?<${name}>${segment})`;
        }),
      )
      .join("(?<splat>.*)");
  let source;
  try {
    source = `^${crossHost ? part(hostPart, "[^/.]+") : ""}${part(pathPart, "[^/]+")}$`;
    const regExp = new RegExp(source);
    return (hostname, pathname) => {
      const found = regExp.exec(crossHost ? `https://${hostname}${pathname}` : pathname);
      return found ? { ...(found.groups ?? {}) } : null;
    };
  } catch {
    return null;
  }
}

/** `text` with each `:name` of `captures` replaced by its value. */
function substitute(text, captures) {
  for (const [name, value] of Object.entries(captures)) if (value !== undefined) text = text.replaceAll(`:${name}`, value);
  return text;
}

/** Parses a `_redirects` file: `{ staticRules: Map, dynamicRules: [], count, problems }`. */
function parseRedirects(text, { htmlHandling } = {}) {
  const lines = text.split("\n");
  const problems = [];
  const staticRules = new Map();
  const dynamicRules = [];
  const seen = new Set();
  let statics = 0;
  let dynamics = 0;
  let staticAllowed = true;
  const problem = (lineNumber, line, message) => problems.push({ lineNumber, line, message });
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.length > MAX_LINE) {
      problem(i + 1, undefined, `Ignoring line ${i + 1} as it exceeds the maximum allowed length of ${MAX_LINE}.`);
      continue;
    }
    const tokens = line.replace(/\s+#.*$/, "").split(/\s+/);
    if (tokens.length < 2 || tokens.length > 3) {
      problem(i + 1, line, `Expected exactly 2 or 3 whitespace-separated tokens. Got ${tokens.length}.`);
      continue;
    }
    const [fromToken, toToken, statusToken = "302"] = tokens;
    const [from, fromError] = checkUrl(fromToken, { relativeOnly: true, noPorts: true });
    if (from === undefined) {
      problem(i + 1, line, fromError);
      continue;
    }
    const dynamic = !staticAllowed || isDynamic(from);
    if (!dynamic) {
      if (++statics > MAX_STATIC_REDIRECTS) {
        problem(i + 1, undefined, `Maximum number of static rules supported is ${MAX_STATIC_REDIRECTS}. Skipping line.`);
        continue;
      }
    } else {
      staticAllowed = false;
      if (++dynamics > MAX_DYNAMIC_REDIRECTS) {
        problem(i + 1, undefined, `Maximum number of dynamic rules supported is ${MAX_DYNAMIC_REDIRECTS}. Skipping remaining ${lines.length - i} lines of file.`);
        break;
      }
    }
    const [to, toError] = checkUrl(toToken, { keepSearch: true });
    if (to === undefined) {
      problem(i + 1, line, toError);
      continue;
    }
    const status = Number(statusToken);
    if (!PERMITTED_STATUS.has(status)) {
      problem(i + 1, line, `Valid status codes are 200, 301, 302 (default), 303, 307, or 308. Got ${statusToken}.`);
      continue;
    }
    const relative = !ABSOLUTE.test(to);
    const loops = (from.endsWith("/*") && /\/index(\.html)?$/.test(to)) || (from.endsWith("/") && /\/index(\.html)?$/.test(to) && htmlHandling !== "none");
    if (relative && loops) {
      problem(i + 1, line, "Infinite loop detected in this rule and has been ignored. This will cause a redirect to strip `.html` or `/index` and end up triggering this rule again. Please fix or remove this rule to silence this warning.");
      continue;
    }
    if (seen.has(from)) {
      problem(i + 1, line, `Ignoring duplicate rule for path ${from}.`);
      continue;
    }
    seen.add(from);
    if (status === 200 && !relative) {
      problem(i + 1, line, `Proxy (200) redirects can only point to relative paths. Got ${to}`);
      continue;
    }
    const rule = { from, to, status, lineNumber: i + 1 };
    if (!dynamic) staticRules.set(from, rule);
    else {
      const match = compilePattern(from);
      if (match !== null) dynamicRules.push({ ...rule, match });
    }
  }
  return { staticRules, dynamicRules, count: staticRules.size + dynamicRules.length, problems };
}

/** The redirect rule for a request URL, with its destination filled in: `{ status, to }` or null. */
function findRedirect(redirects, url) {
  if (redirects === null) return null;
  const withHost = redirects.staticRules.get(`https://${url.host}${url.pathname}`);
  const without = redirects.staticRules.get(url.pathname);
  const found = withHost && without ? (withHost.lineNumber < without.lineNumber ? withHost : without) : (withHost ?? without);
  if (found) return { status: found.status, to: found.to };
  for (const rule of redirects.dynamicRules) {
    const captures = rule.match(url.hostname, url.pathname);
    if (captures === null) continue;
    const target = substitute(rule.to, captures).trim();
    // A relative destination loses repeated slashes; an absolute one is left as it is.
    return { status: rule.status, to: /^\w+:\/\//.test(target) ? target : target.replace(/\/+/g, "/") };
  }
  return null;
}

/** The Location of a redirect to `to` from `url`: the request's query kept unless `to` has one. */
function redirectLocation(to, url) {
  const destination = new URL(to, url);
  const search = destination.search || url.search;
  if (destination.origin === url.origin) return `${destination.pathname}${search}${destination.hash}`;
  return `${destination.href.slice(0, destination.href.length - destination.search.length - destination.hash.length)}${search}${destination.hash}`;
}

const STATUS_TEXT = { 301: "Moved Permanently", 302: "Found", 303: "See Other", 307: "Temporary Redirect", 308: "Permanent Redirect" };

/** The redirect response for a rule (not 200). */
const redirectResponse = (rule, url) => new Response(null, { status: rule.status, statusText: STATUS_TEXT[rule.status], headers: { location: redirectLocation(rule.to, url) } });

const LOOKS_LIKE_PATH = /^([^\s]+:\/\/|\/)/;

/** Parses a `_headers` file: `{ rules: [{ path, set, unset, match }], problems }`. */
function parseHeaders(text) {
  const lines = text.split("\n");
  const rules = [];
  const problems = [];
  const problem = (lineNumber, line, message) => problems.push({ lineNumber, line, message });
  let rule = null;
  let skipping = false;
  const finish = (lineNumber) => {
    if (rule === null) return;
    if (Object.keys(rule.set).length > 0 || rule.unset.length > 0) {
      const match = compilePattern(rule.path);
      if (match !== null) rules.push({ path: rule.path, set: rule.set, unset: rule.unset, match });
    } else problem(lineNumber, rule.line, "No headers specified");
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    if (line.length > MAX_LINE) {
      problem(i + 1, undefined, `Ignoring line ${i + 1} as it exceeds the maximum allowed length of ${MAX_LINE}.`);
      continue;
    }
    if (LOOKS_LIKE_PATH.test(line)) {
      skipping = false;
      if (rules.length >= MAX_HEADER_RULES) {
        problem(i + 1, undefined, `Maximum number of rules supported is ${MAX_HEADER_RULES}. Skipping remaining ${lines.length - i} lines of file.`);
        rule = null;
        break;
      }
      finish(i + 1);
      rule = null;
      const [path, pathError] = checkUrl(line, { noPorts: true });
      const wildcards = path === undefined ? 0 : (path.match(/\*/g) ?? []).length;
      const error = pathError ??
        (wildcards > 1 ? `Only one wildcard is allowed per rule. Use a named placeholder (e.g. :project) instead. Skipping ${path}.` : wildcards === 1 && /:splat(?!\w)/.test(path) ? `Cannot combine a wildcard * with a :splat placeholder because wildcards are converted to :splat at runtime. Skipping ${path}.` : undefined);
      if (error !== undefined) {
        problem(i + 1, line, error);
        skipping = true;
        continue;
      }
      rule = { path, line, set: {}, unset: [] };
      continue;
    }
    if (skipping) continue;
    if (!line.includes(":")) {
      if (rule === null) problem(i + 1, line, "Expected a path beginning with at least one forward-slash");
      else if (line.startsWith("! ")) rule.unset.push(line.slice(2).trim());
      else problem(i + 1, line, "Expected a colon-separated header pair (e.g. name: value)");
      continue;
    }
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name.includes(" ")) problem(i + 1, line, "Header name cannot include spaces");
    else if (name === "") problem(i + 1, line, "No header name specified");
    else if (value === "") problem(i + 1, line, "No header value specified");
    else if (rule === null) problem(i + 1, line, `Path should come before header (${name}: ${value})`);
    else rule.set[name] = rule.set[name] === undefined ? value : `${rule.set[name]}, ${value}`;
  }
  finish(lines.length);
  return { rules, problems };
}

/**
 * `response` with the `_headers` rules that match `url` applied, in order: removals first, then
 * each header set (replacing the response's own, appended to when an earlier rule set it).
 */
function applyHeaders(headerRules, url, response) {
  if (headerRules === null || headerRules.rules.length === 0) return response;
  const matched = [];
  for (const rule of headerRules.rules) {
    const captures = rule.match(url.hostname, url.pathname);
    if (captures !== null) matched.push({ rule, captures });
  }
  if (matched.length === 0) return response;
  const headers = new Headers(response.headers);
  const setHere = new Set();
  for (const { rule, captures } of matched) {
    for (const name of rule.unset) headers.delete(name);
    for (const [name, value] of Object.entries(rule.set)) {
      const filled = substitute(value, captures);
      if (setHere.has(name)) headers.append(name, filled);
      else {
        headers.set(name, filled);
        setHere.add(name);
      }
    }
  }
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** A problem as a log line: its message and, when it came from a line, where. */
const formatProblem = (file, { lineNumber, line, message }) => `${message}${line ? `\n    at ${file}${lineNumber ? `:${lineNumber}` : ""} | ${line}` : ""}`;

module.exports = { parseRedirects, parseHeaders, findRedirect, redirectResponse, applyHeaders, formatProblem };
