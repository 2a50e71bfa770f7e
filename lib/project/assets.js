"use strict";
// Static assets as Cloudflare Workers serve them, following Cloudflare's asset worker and router
// worker (workers-sdk, packages/workers-shared): an index of the assets folder (less the
// `.assetsignore` patterns and the configuration files), the `html_handling` rules
// (auto-trailing-slash, force-trailing-slash, drop-trailing-slash, none) with their 307
// redirects, paths decoded and redirected to their canonical encoding, `not_found_handling`
// (none, 404-page, single-page-application), which requests reach the worker first
// (`run_worker_first`, navigation requests), content types as wrangler assigns them, strong
// ETags, 304s and 405s, and the folder's `_redirects` and `_headers` files (assets-rules.js:
// redirects and 200 rewrites before any asset is looked up, custom headers on every answer of
// the assets). Used by the dev server and by the `assets.binding` binding (env.ASSETS.fetch).

const fs = require("node:fs");
const path = require("node:path");
// node:crypto loads on first use (an asset's first ETag), picomatch only for an .assetsignore
// pattern that is more than a path (glob.js): ~3-5 ms each to load.
const { globMatcher } = require("./glob.js");
const rulesFiles = require("./assets-rules.js");

// wrangler gives each asset the type the `mime` package (v4) knows for its extension, with
// `; charset=utf-8` added to text/* types; an extension it does not know gets no Content-Type.
const TEXT = ["html", "htm", "shtml", "css", "csv", "md", "markdown", "txt", "text", "ics", "vtt", "yaml", "yml", "wgsl", "jsx", "mml", "n3", "sgml", "coffee", "litcoffee", "less", "styl", "stylus", "rtx", "vcard", "uri", "appcache", "manifest"];
const TYPES = {
  js: "text/javascript", mjs: "text/javascript", cjs: "application/node", json: "application/json", map: "application/json",
  jsonld: "application/ld+json", webmanifest: "application/manifest+json", xml: "application/xml", xhtml: "application/xhtml+xml",
  rss: "application/rss+xml", atom: "application/atom+xml", toml: "application/toml", wasm: "application/wasm", pdf: "application/pdf",
  zip: "application/zip", gz: "application/gzip", tar: "application/x-tar", "7z": "application/x-7z-compressed", rtf: "application/rtf",
  epub: "application/epub+zip", sql: "application/sql", bin: "application/octet-stream", exe: "application/octet-stream",
  dmg: "application/octet-stream", sh: "application/x-sh", jar: "application/java-archive", ts: "video/mp2t",
  m3u8: "application/vnd.apple.mpegurl", mpd: "application/dash+xml", doc: "application/msword", xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint", docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  svg: "image/svg+xml", svgz: "image/svg+xml", png: "image/png", apng: "image/apng", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif",
  webp: "image/webp", avif: "image/avif", ico: "image/vnd.microsoft.icon", bmp: "image/bmp", tif: "image/tiff", tiff: "image/tiff",
  heic: "image/heic", jxl: "image/jxl", woff: "font/woff", woff2: "font/woff2", ttf: "font/ttf", otf: "font/otf",
  eot: "application/vnd.ms-fontobject", mp4: "video/mp4", m4v: "video/x-m4v", webm: "video/webm", ogv: "video/ogg", mov: "video/quicktime",
  mpeg: "video/mpeg", avi: "video/x-msvideo", mkv: "video/x-matroska", "3gp": "video/3gpp", mp3: "audio/mpeg", wav: "audio/wav",
  ogg: "audio/ogg", oga: "audio/ogg", opus: "audio/ogg", m4a: "audio/mp4", aac: "audio/aac", flac: "audio/x-flac", weba: "audio/webm",
  mid: "audio/midi", midi: "audio/midi", glb: "model/gltf-binary", gltf: "model/gltf+json", vcf: "text/x-vcard",
  html: "text/html", htm: "text/html", shtml: "text/html", css: "text/css", csv: "text/csv", md: "text/markdown", markdown: "text/markdown",
  txt: "text/plain", text: "text/plain", ics: "text/calendar", vtt: "text/vtt", yaml: "text/yaml", yml: "text/yaml", wgsl: "text/wgsl",
  jsx: "text/jsx",
};

/** The Content-Type wrangler gives a file, or undefined. */
function contentTypeOf(file) {
  const type = TYPES[path.extname(file).slice(1).toLowerCase()];
  if (type === undefined) return undefined;
  return type.startsWith("text/") || TEXT.includes(path.extname(file).slice(1).toLowerCase()) ? `${type}; charset=utf-8` : type;
}

/** Always left out of the assets, as wrangler leaves them out (they configure, not serve). */
const IGNORED_ALWAYS = ["/.assetsignore", "/_redirects", "/_headers"];

/**
 * `.assetsignore` (gitignore syntax) as a predicate on asset paths (`/a/b.txt`): `#` comments,
 * `!` re-includes, a trailing `/` matches folders only, a pattern with a `/` before its end is
 * anchored at the assets folder, one without matches at any depth; a folder that is ignored
 * takes everything under it along.
 */
function ignoreMatcher(text) {
  const rules = [...IGNORED_ALWAYS, ...text.split(/\r?\n/)]
    .map((line) => line.replace(/(?<!\\)\s+$/, ""))
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const negate = line.startsWith("!");
      let pattern = negate ? line.slice(1) : line;
      const dirOnly = pattern.endsWith("/");
      if (dirOnly) pattern = pattern.slice(0, -1);
      const anchored = pattern.includes("/");
      pattern = pattern.replace(/^\//, "").replace(/^\\([#!])/, "$1");
      const match = globMatcher(anchored ? pattern : `**/${pattern}`, { dot: true });
      return { negate, dirOnly, match };
    });
  const decide = (rel, isDir, ignored) => {
    for (const rule of rules) if ((!rule.dirOnly || isDir) && rule.match(rel)) ignored = !rule.negate;
    return ignored;
  };
  return (assetPath) => {
    const parts = assetPath.slice(1).split("/");
    for (let i = 1; i < parts.length; i++) if (decide(parts.slice(0, i).join("/"), true, false)) return true;
    return decide(parts.join("/"), false, false);
  };
}

/**
 * `run_worker_first` routes as Cloudflare's router matches them against the request's
 * (undecoded) path: `*` matches anything, `!/…` routes go to the assets even when another
 * route matches. `{ worker(pathname), assets(pathname) }`.
 */
function routeMatcher(rules) {
  const compile = (pattern) => new RegExp(`^${pattern.split("*").map((part) => part.replace(/[-/\\^$*+?.()|[\]{}]/g, "\\$&")).join(".*")}$`);
  const include = rules.filter((r) => !r.startsWith("!")).map(compile);
  const exclude = rules.filter((r) => r.startsWith("!")).map((r) => compile(r.slice(1)));
  return { worker: (p) => include.some((re) => re.test(p)), assets: (p) => exclude.some((re) => re.test(p)) };
}

/** A path's segments percent-decoded (undecodable ones kept), repeated slashes made one. */
const decodePath = (pathname) =>
  pathname
    .split("/")
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .join("/")
    .replace(/\/+/g, "/");
/** The canonical spelling of a decoded path: each segment percent-encoded. */
const encodePath = (pathname) => pathname.split("/").map((segment) => encodeURIComponent(segment)).join("/");

const NO_INTENT = Symbol("no asset intent");

/**
 * `assets`: `{ directory, htmlHandling, notFoundHandling, runWorkerFirst, compatibilityDate,
 * compatibilityFlags }` (config.js's form plus the worker's date and flags). Returns the handler:
 * `fetch(request)` (what env.ASSETS.fetch answers), `route(request, hasWorker)` (the dev
 * server's choice: a Response, or null for the worker) and `refresh()` (re-reads the folder).
 */
function createAssetHandler(assets) {
  const { directory, htmlHandling = "auto-trailing-slash", notFoundHandling = "none", runWorkerFirst = false } = assets;
  const flags = assets.compatibilityFlags ?? [];
  // Navigation requests (Sec-Fetch-Mode: navigate) get not_found_handling in front of a worker
  // from 2025-04-01 (assets_navigation_prefers_asset_serving / assets_navigation_has_no_effect).
  // Without a date workerbox runs at its newest, so it is on.
  const navigationGetsAssets = flags.includes("assets_navigation_prefers_asset_serving") ||
    (!flags.includes("assets_navigation_has_no_effect") && (assets.compatibilityDate === undefined || assets.compatibilityDate >= "2025-04-01"));
  const staticRouting = Array.isArray(runWorkerFirst) ? routeMatcher(runWorkerFirst) : null;
  let index = new Map(); // asset path -> file
  const etags = new Map(); // file -> { key, etag }
  // `_redirects` and `_headers` of the folder (null: no such file), and what was wrong in them.
  let redirects = null;
  let headerRules = null;
  let problems = [];

  /** Reads `_redirects` and `_headers` again; their problems become `problems` (log lines). */
  function readRules() {
    const read = (name) => {
      try {
        return fs.readFileSync(path.join(directory, name), "utf8");
      } catch {
        return null;
      }
    };
    const redirectsText = read("_redirects");
    const headersText = read("_headers");
    redirects = redirectsText === null ? null : rulesFiles.parseRedirects(redirectsText, { htmlHandling });
    headerRules = headersText === null ? null : rulesFiles.parseHeaders(headersText);
    const where = (name) => path.relative(process.cwd(), path.join(directory, name)) || name;
    problems = [
      ...(redirects?.problems ?? []).map((p) => `_redirects: ${rulesFiles.formatProblem(where("_redirects"), p)}`),
      ...(headerRules?.problems ?? []).map((p) => `_headers: ${rulesFiles.formatProblem(where("_headers"), p)}`),
    ];
  }

  function refresh() {
    const next = new Map();
    let ignored;
    try {
      ignored = ignoreMatcher(fs.readFileSync(path.join(directory, ".assetsignore"), "utf8"));
    } catch {
      ignored = ignoreMatcher("");
    }
    const walk = (dir, prefix) => {
      let entries;
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const url = `${prefix}/${entry.name}`;
        if (entry.isDirectory()) walk(path.join(dir, entry.name), url);
        else if (entry.isFile() && !ignored(url)) next.set(url, path.join(dir, entry.name));
      }
    };
    walk(directory, "");
    index = next;
    readRules();
    return index.size;
  }
  refresh();

  const exists = (p) => (index.has(p) ? p : null);
  const serve = (asset) => ({ asset, status: 200 });

  /**
   * Redirect to `destination` when `file` is what a request for `destination` would be served,
   * and `destination` is not itself an asset: so every file has one URL.
   */
  function redirectIf(file, destination, notFound, skip) {
    if (skip || exists(destination)) return null;
    const target = intentFor(destination, notFound, true);
    return target?.asset !== undefined && target.asset === exists(file) ? { redirect: destination } : null;
  }

  /** Which asset serves decoded `p` (`{ asset, status }`), a `{ redirect }`, or null. */
  function intentFor(p, notFound, skip = false) {
    const exact = exists(p);
    const tried = htmlIntent(p, exact, notFound, skip);
    if (tried) return tried;
    if (notFound === "single-page-application") return exists("/index.html") ? serve("/index.html") : null;
    if (notFound === "404-page") {
      for (let dir = p; dir; ) {
        dir = dir.slice(0, dir.lastIndexOf("/"));
        if (exists(`${dir}/404.html`)) return { asset: `${dir}/404.html`, status: 404 };
      }
    }
    return null;
  }

  /** The html_handling mode's answer for `p` before not_found_handling, or null. */
  function htmlIntent(p, exact, notFound, skip) {
    const r = (file, destination) => redirectIf(file, destination, notFound, skip);
    const at = (file) => (exists(file) ? serve(file) : null);
    const cut = (suffix) => p.slice(0, -suffix.length);
    switch (htmlHandling) {
      case "none":
        return exact ? serve(exact) : null;
      case "auto-trailing-slash":
        if (p.endsWith("/index")) {
          if (exact) return serve(exact);
          return r(`${p}.html`, cut("index")) ?? r(`${cut("/index")}.html`, cut("/index")) ?? fallback();
        }
        if (p.endsWith("/index.html")) return r(p, cut("index.html")) ?? r(`${cut("/index.html")}.html`, cut("/index.html")) ?? fallback();
        if (p.endsWith("/")) return at(`${p}index.html`) ?? r(`${cut("/")}.html`, cut("/")) ?? fallback();
        if (p.endsWith(".html")) return r(p, cut(".html")) ?? r(`${cut(".html")}/index.html`, `${cut(".html")}/`) ?? fallback();
        return fallback();
      case "force-trailing-slash":
        if (p.endsWith("/index")) {
          if (exact) return serve(exact);
          return r(`${p}.html`, cut("index")) ?? r(`${cut("/index")}.html`, cut("index")) ?? forced();
        }
        if (p.endsWith("/index.html")) return r(p, cut("index.html")) ?? r(`${cut("/index.html")}.html`, cut("index.html")) ?? forced();
        if (p.endsWith("/")) return at(`${p}index.html`) ?? at(`${cut("/")}.html`) ?? forced();
        if (p.endsWith(".html")) {
          // Both /foo.html and /foo/index.html: /foo.html stays at /foo.html.
          return r(p, `${cut(".html")}/`) ?? (exact ? serve(exact) : null) ?? r(`${cut(".html")}/index.html`, `${cut(".html")}/`) ?? forced();
        }
        return forced();
      case "drop-trailing-slash":
        if (p.endsWith("/index")) {
          if (exact) return serve(exact);
          if (p === "/index") return r("/index.html", "/") ?? dropped();
          return r(`${cut("/index")}.html`, cut("/index")) ?? r(`${p}.html`, cut("/index")) ?? dropped();
        }
        if (p.endsWith("/index.html")) {
          if (p === "/index.html") return r("/index.html", "/") ?? dropped();
          // Both /foo.html and /foo/index.html: /foo/index.html stays at /foo/index.html.
          return r(p, cut("/index.html")) ?? (exact ? serve(exact) : null) ?? r(`${cut("/index.html")}.html`, cut("/index.html")) ?? dropped();
        }
        if (p.endsWith("/")) {
          if (p === "/") return at("/index.html") ?? dropped();
          return r(`${cut("/")}.html`, cut("/")) ?? r(`${cut("/")}/index.html`, cut("/")) ?? dropped();
        }
        if (p.endsWith(".html")) return r(p, cut(".html")) ?? r(`${cut(".html")}/index.html`, cut(".html")) ?? dropped();
        return dropped();
    }
    return null;
    // The last tries of each mode, when the path's ending settled nothing.
    function fallback() {
      return (exact ? serve(exact) : null) ?? at(`${p}.html`) ?? r(`${p}/index.html`, `${p}/`);
    }
    function forced() {
      return (exact ? serve(exact) : null) ?? r(`${p}.html`, `${p}/`) ?? r(`${p}/index.html`, `${p}/`);
    }
    function dropped() {
      return (exact ? serve(exact) : null) ?? at(`${p}.html`) ?? at(`${p}/index.html`);
    }
  }

  function etagOf(file) {
    const stat = fs.statSync(file);
    const key = `${stat.size}:${stat.mtimeMs}`;
    const cached = etags.get(file);
    if (cached && cached.key === key) return cached.etag;
    const etag = require("node:crypto").createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 32);
    etags.set(file, { key, etag });
    return etag;
  }

  const empty = (status, statusText, headers) => new Response(null, { status, statusText, headers });

  /**
   * The asset worker's answer under `notFound` handling: a Response, or NO_INTENT when no asset
   * is meant (the router then asks the worker; env.ASSETS.fetch answers an empty 404).
   */
  function answer(request, notFound) {
    const url = new URL(request.url);
    const response = assetAnswer(request, url, notFound);
    return response === NO_INTENT ? NO_INTENT : rulesFiles.applyHeaders(headerRules, url, response);
  }

  function assetAnswer(request, url, notFound) {
    // `_redirects` first: a redirect answers at once; a 200 rule serves another path's asset.
    let pathname = url.pathname;
    let proxied = false;
    const rule = rulesFiles.findRedirect(redirects, url);
    if (rule !== null && rule.status !== 200) return rulesFiles.redirectResponse(rule, url);
    if (rule !== null) {
      pathname = new URL(rule.to, url).pathname;
      proxied = true;
    }
    const decoded = decodePath(pathname);
    const intent = intentFor(decoded, notFound);
    // A rewritten request that finds no asset is the assets' 404, not the worker's.
    if (!intent) return proxied ? empty(404, "Not Found") : NO_INTENT;
    const method = request.method.toUpperCase();
    if (method !== "GET" && method !== "HEAD") return empty(405, "Method Not Allowed");
    // One redirect for both: the canonical (re-encoded) spelling and the html_handling URL.
    const destination = encodePath(intent.redirect ?? decoded);
    if ((destination !== pathname && intent.asset !== undefined) || intent.redirect !== undefined) {
      return empty(307, "Temporary Redirect", { location: destination + url.search });
    }
    const file = index.get(intent.asset);
    let etag;
    try {
      etag = `"${etagOf(file)}"`;
    } catch {
      return proxied ? empty(404, "Not Found") : NO_INTENT; // removed since the last refresh
    }
    const headers = new Headers({ etag });
    const type = contentTypeOf(file);
    if (type !== undefined) headers.set("content-type", type);
    if (!request.headers.has("authorization") && !request.headers.has("range")) headers.set("cache-control", "public, max-age=0, must-revalidate");
    // Cloudflare compares the whole header with the strong and the weak form of the ETag.
    const ifNoneMatch = request.headers.get("if-none-match");
    if (ifNoneMatch === etag || ifNoneMatch === `W/${etag}`) return empty(304, "Not Modified", headers);
    const body = method === "HEAD" ? null : fs.readFileSync(file);
    return new Response(body, { status: intent.status, statusText: intent.status === 404 ? "Not Found" : "OK", headers });
  }

  // The assets' own 404 gets the `_headers` rules too, as Cloudflare's asset worker adds them.
  const orNotFound = (response, request) => (response === NO_INTENT ? rulesFiles.applyHeaders(headerRules, new URL(request.url), empty(404, "Not Found")) : response);

  return {
    directory,
    refresh,
    get size() {
      return index.size;
    },
    /** What is wrong in `_redirects` and `_headers` (lines skipped), as log lines. */
    get problems() {
      return problems;
    },
    /** How many rules `_redirects` and `_headers` gave. */
    get rules() {
      return { redirects: redirects?.count ?? 0, headers: headerRules?.rules.length ?? 0 };
    },
    /** env.ASSETS.fetch(): every rule applied, not_found_handling included; an empty 404 when nothing matches. */
    async fetch(input) {
      const request = input instanceof Request ? input : new Request(input);
      return orNotFound(answer(request, notFoundHandling), request);
    },
    /**
     * Cloudflare's router in front of a worker: null sends the request to the worker. Without a
     * worker the assets answer everything. `run_worker_first: true` sends everything to the
     * worker; with a list of routes, `!/…` routes go to the assets, the others to the worker,
     * and not_found_handling applies to every other request. Otherwise a request goes to the
     * assets when an asset is meant (a GET or HEAD gets it, other methods 405), with
     * not_found_handling only for navigation requests (Sec-Fetch-Mode: navigate, from
     * 2025-04-01), else to the worker.
     */
    route(request, hasWorker) {
      if (!hasWorker) return orNotFound(answer(request, notFoundHandling), request);
      if (runWorkerFirst === true) return null;
      if (staticRouting) {
        const { pathname } = new URL(request.url);
        if (staticRouting.assets(pathname)) return orNotFound(answer(request, notFoundHandling), request);
        if (staticRouting.worker(pathname)) return null;
      }
      const navigate = navigationGetsAssets && request.headers.get("sec-fetch-mode") === "navigate";
      const mode = staticRouting || navigate ? notFoundHandling : "none";
      const response = answer(request, mode);
      if (response === NO_INTENT) return null;
      // Cloudflare's router asks whether the assets answer with not_found_handling off; when they
      // do, they answer with it on. That differs only for a `_redirects` 200 rewrite that finds
      // no asset (the only 404 with it off): then the 404 page.
      return mode === notFoundHandling || response.status !== 404 ? response : answer(request, notFoundHandling);
    },
  };
}

module.exports = { createAssetHandler };
