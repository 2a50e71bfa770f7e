"use strict";
// Static assets as Cloudflare Workers serve them: an index of the assets folder, the
// `html_handling` rules (auto-trailing-slash, force-trailing-slash, drop-trailing-slash, none)
// with their 307 redirects, `not_found_handling` (none, 404-page, single-page-application),
// `run_worker_first` routing, content types, strong ETags and 304s. Used by the dev server and
// by the `assets.binding` binding (env.ASSETS.fetch).

const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");

const TYPES = {
  ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8", ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8", ".txt": "text/plain; charset=utf-8", ".md": "text/markdown; charset=utf-8",
  ".xml": "application/xml; charset=utf-8", ".csv": "text/csv; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
  ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".avif": "image/avif",
  ".ico": "image/x-icon", ".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
  ".wasm": "application/wasm", ".pdf": "application/pdf", ".mp4": "video/mp4", ".webm": "video/webm", ".mp3": "audio/mpeg",
  ".wav": "audio/wav", ".zip": "application/zip", ".webmanifest": "application/manifest+json", ".bin": "application/octet-stream",
};

/** Files the assets folder holds that are configuration, not assets (as on Cloudflare). */
const SPECIAL = new Set(["/_headers", "/_redirects", "/_routes.json", "/.assetsignore"]);

/** `run_worker_first` route patterns: `*` matches anything; `!` excludes. */
function routeMatcher(rules) {
  if (rules === true || rules === false) return () => rules;
  const compile = (pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
  const include = rules.filter((r) => !r.startsWith("!")).map(compile);
  const exclude = rules.filter((r) => r.startsWith("!")).map((r) => compile(r.slice(1)));
  return (pathname) => !exclude.some((re) => re.test(pathname)) && include.some((re) => re.test(pathname));
}

/**
 * `assets`: `{ directory, htmlHandling, notFoundHandling, runWorkerFirst }` as config.js
 * normalises it. Returns the handler: `fetch(request)` (what env.ASSETS.fetch answers),
 * `route(request, hasWorker)` (the dev server's choice: a Response, or null for the worker) and
 * `refresh()` (re-reads the folder).
 */
function createAssetHandler(assets) {
  const { directory, htmlHandling = "auto-trailing-slash", notFoundHandling = "none", runWorkerFirst = false } = assets;
  let index = new Map();
  const etags = new Map(); // file -> { key, etag }
  const workerFirst = routeMatcher(runWorkerFirst);

  function refresh() {
    const next = new Map();
    const walk = (dir, prefix) => {
      let entries;
      try {
        entries = fs.readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const file = path.join(dir, entry.name);
        const url = `${prefix}/${entry.name}`;
        if (entry.isDirectory()) walk(file, url);
        else if (entry.isFile() && !SPECIAL.has(url)) next.set(url, file);
      }
    };
    walk(directory, "");
    index = next;
    return index.size;
  }
  refresh();

  const exists = (p) => index.has(p);

  /** The URL an HTML file is served at under the html_handling mode. */
  function canonical(assetPath) {
    if (htmlHandling === "none") return assetPath;
    if (assetPath.endsWith("/index.html")) {
      const dir = assetPath.slice(0, -"index.html".length); // ends with "/"
      if (htmlHandling === "drop-trailing-slash" && dir !== "/") return dir.slice(0, -1);
      return dir;
    }
    if (assetPath.endsWith(".html")) {
      const bare = assetPath.slice(0, -".html".length);
      return htmlHandling === "force-trailing-slash" ? `${bare}/` : bare;
    }
    return assetPath;
  }

  /** Asset paths a request path may mean, most specific first. */
  function candidates(p) {
    if (htmlHandling === "none") return [p];
    if (p.endsWith("/index.html")) return [p, `${p.slice(0, -"/index.html".length)}.html`];
    if (p.endsWith("/index")) return [`${p}.html`, `${p.slice(0, -"/index".length)}/index.html`, `${p.slice(0, -"/index".length)}.html`];
    if (p.endsWith("/")) return [`${p}index.html`, p.length > 1 ? `${p.slice(0, -1)}.html` : null].filter(Boolean);
    if (p.endsWith(".html")) return [p, `${p.slice(0, -".html".length)}/index.html`];
    return [p, `${p}.html`, `${p}/index.html`];
  }

  /** What a path resolves to: `{ asset, status }`, `{ redirect }` or null (no asset). */
  function resolvePath(p, applyNotFound) {
    if (exists(p) && !p.endsWith(".html")) return { asset: p, status: 200 };
    for (const candidate of candidates(p)) {
      if (!exists(candidate)) continue;
      const want = canonical(candidate);
      return want === p ? { asset: candidate, status: 200 } : { redirect: want };
    }
    if (!applyNotFound) return null;
    if (notFoundHandling === "single-page-application" && exists("/index.html")) return { asset: "/index.html", status: 200 };
    if (notFoundHandling === "404-page") {
      let dir = p.endsWith("/") ? p.slice(0, -1) : p.slice(0, p.lastIndexOf("/"));
      for (;;) {
        if (exists(`${dir}/404.html`)) return { asset: `${dir}/404.html`, status: 404 };
        if (dir === "") break;
        dir = dir.slice(0, dir.lastIndexOf("/"));
      }
    }
    return null;
  }

  function etagOf(file) {
    const stat = fs.statSync(file);
    const key = `${stat.size}:${stat.mtimeMs}`;
    const cached = etags.get(file);
    if (cached && cached.key === key) return cached.etag;
    const etag = crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 32);
    etags.set(file, { key, etag });
    return etag;
  }

  function respond(request, intent, search) {
    if (intent.redirect !== undefined) {
      return new Response(null, { status: 307, headers: { location: encodeURI(intent.redirect) + search } });
    }
    const method = request.method.toUpperCase();
    if (method !== "GET" && method !== "HEAD") return new Response("Method Not Allowed", { status: 405, headers: { allow: "GET, HEAD" } });
    const file = index.get(intent.asset);
    let etag;
    try {
      etag = `"${etagOf(file)}"`;
    } catch {
      return new Response("Not Found", { status: 404 }); // removed since the last refresh
    }
    const headers = { etag, "content-type": TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream", "cache-control": "public, max-age=0, must-revalidate" };
    const ifNoneMatch = request.headers.get("if-none-match");
    if (ifNoneMatch && ifNoneMatch.split(",").map((s) => s.trim()).some((tag) => tag === etag || tag === `W/${etag}` || tag === "*")) {
      return new Response(null, { status: 304, headers });
    }
    const body = method === "HEAD" ? null : fs.readFileSync(file);
    return new Response(body, { status: intent.status, headers });
  }

  function pathOf(request) {
    const url = new URL(request.url);
    let pathname;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      pathname = url.pathname;
    }
    if (pathname.split("/").includes("..")) pathname = "/";
    return { pathname, search: url.search };
  }

  return {
    directory,
    refresh,
    get size() {
      return index.size;
    },
    /** env.ASSETS.fetch(): every rule applied; 404 when nothing matches. */
    async fetch(input) {
      const request = input instanceof Request ? input : new Request(input);
      const { pathname, search } = pathOf(request);
      const intent = resolvePath(pathname, true);
      return intent ? respond(request, intent, search) : new Response("Not Found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
    },
    /**
     * The router in front of a worker: null sends the request to the worker. With a worker,
     * not_found_handling applies only to navigation requests (Sec-Fetch-Mode: navigate), as on
     * Cloudflare; run_worker_first routes go to the worker first.
     */
    route(request, hasWorker) {
      const { pathname, search } = pathOf(request);
      if (hasWorker && workerFirst(pathname)) return null;
      const navigate = request.headers.get("sec-fetch-mode") === "navigate";
      const intent = resolvePath(pathname, !hasWorker || navigate);
      if (intent) return respond(request, intent, search);
      return hasWorker ? null : new Response("Not Found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });
    },
  };
}

module.exports = { createAssetHandler };
