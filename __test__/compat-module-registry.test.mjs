// new_module_registry (a flag with no date): module specifiers are URLs, as in workerd's new
// module registry — import.meta has main, url and resolve(); "./a.js?x=1" is a module instance of
// its own; "/x.js" is outside the bundle; a missing module is "Module not found: <url>"; import
// attributes are checked. The expected values were printed by workerd (Miniflare 4.20260426.0's
// binary) from the same worker code and modules (data.json a text module).
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

const MAIN = `
import * as other from "./lib/other.js";
export default { async fetch() {
  const out = {};
  out.metaKeys = Object.keys(import.meta);
  out.url = import.meta.url;
  out.main = import.meta.main;
  out.resolveType = typeof import.meta.resolve;
  try { out.resolved = [import.meta.resolve("./lib/other.js"), import.meta.resolve("node:buffer"), import.meta.resolve("bare")]; } catch (e) { out.resolved = e.name + ": " + e.message; }
  out.otherMeta = other.meta;
  try { out.data = (await import("./data.json", { with: { type: "json" } })).default; } catch (e) { out.data = e.name + ": " + e.message; }
  try { await import("./missing.js"); } catch (e) { out.missing = e.name + ": " + e.message; }
  try { await import("./lib/other.js?x=1"); out.query = "ok"; } catch (e) { out.query = e.name + ": " + e.message; }
  try { await import("./data.json"); out.jsonNoAttr = "ok"; } catch (e) { out.jsonNoAttr = e.name + ": " + e.message; }
  try { await import("./data.json", { with: { type: "text" } }); out.jsonText = "ok"; } catch (e) { out.jsonText = e.name + ": " + e.message; }
  try { const m = await import("node:path"); out.nodePath = typeof m.join; } catch (e) { out.nodePath = e.name + ": " + e.message; }
  try { const m = await import("path"); out.barePath = typeof m.join; } catch (e) { out.barePath = e.name + ": " + e.message; }
  try { const m = await import("/lib/other.js"); out.absolute = typeof m.meta; } catch (e) { out.absolute = e.name + ": " + e.message; }
  try { const m = await import("file:///bundle/lib/other.js"); out.fileUrl = typeof m.meta; } catch (e) { out.fileUrl = e.name + ": " + e.message; }
  try { const q = await import("./lib/other.js?x=1#f"); out.queryMeta = [q.meta.url, q === other]; } catch (e) { out.queryMeta = e.name + ": " + e.message; }
  try { out.more = [import.meta.resolve("path"), import.meta.resolve("../../up.js"), import.meta.resolve("/abs.js"), import.meta.resolve("https://x.example/a.js"), import.meta.resolve("cloudflare:workers"), import.meta.resolve("./a b.js")]; } catch (e) { out.more = e.name + ": " + e.message; }
  try { await import("https://x.example/a.js"); } catch (e) { out.https = e.name + ": " + e.message; }
  try { await import("lib/other.js"); out.bareLocal = "ok"; } catch (e) { out.bareLocal = e.name + ": " + e.message; }
  try { await import("node:nope"); } catch (e) { out.nodeNope = e.name + ": " + e.message; }
  try { await import("./lib/other.js", { with: { type: "json" } }); } catch (e) { out.esmAsJson = e.name + ": " + e.message; }
  try { await import("./lib/other.js", { with: { foo: "bar" } }); out.otherAttr = "ok"; } catch (e) { out.otherAttr = e.name + ": " + e.message; }
  return Response.json(out);
} }`;

async function run(t, flags) {
  const worker = await useWorker(t, {
    filename: "worker.js",
    script: MAIN,
    compatibilityDate: "2025-10-01",
    compatibilityFlags: ["nodejs_compat", ...flags],
    modules: { "lib/other.js": "export const meta = { url: import.meta.url, main: import.meta.main };", "data.json": { type: "text", content: '{"a":1}' } },
  });
  return (await dispatch(worker, "http://localhost/")).json();
}

test("new_module_registry: specifiers are URLs under file:///bundle/, import.meta has main, url and resolve()", async (t) => {
  assert.deepEqual(await run(t, ["new_module_registry"]), {
    metaKeys: ["main", "url", "resolve"],
    url: "file:///bundle/worker.js",
    main: true,
    resolveType: "function",
    resolved: ["file:///bundle/lib/other.js", "node:buffer", "file:///bundle/bare"],
    otherMeta: { url: "file:///bundle/lib/other.js", main: false },
    data: 'TypeError: Module "./data.json" is not of type "json"',
    missing: "TypeError: Module not found: file:///bundle/missing.js",
    query: "ok",
    jsonNoAttr: "ok",
    jsonText: 'TypeError: Import attribute type "text" is not yet supported',
    nodePath: "function",
    barePath: "function",
    absolute: "TypeError: Module not found: file:///lib/other.js",
    fileUrl: "object",
    queryMeta: ["file:///bundle/lib/other.js?x=1#f", false],
    more: ["file:///bundle/path", "file:///up.js", "file:///abs.js", "https://x.example/a.js", "cloudflare:workers", "file:///bundle/a%20b.js"],
    https: "TypeError: Module not found: https://x.example/a.js",
    bareLocal: "ok",
    nodeNope: "TypeError: Module not found: node:nope",
    esmAsJson: 'TypeError: Module "./lib/other.js" is not of type "json"',
    otherAttr: 'TypeError: Unsupported import attribute: "foo"',
  });
});

test("without new_module_registry, specifiers are names in the bundle and attributes are refused (throw_on_unrecognized_import_assertion)", async (t) => {
  const out = await run(t, []);
  // workerd's legacy registry gives an empty import.meta; workerbox keeps url and main (docs/runtime.md).
  assert.deepEqual(out.metaKeys, ["url", "main"]);
  assert.equal(out.resolveType, "undefined");
  assert.match(out.data, /^Error: Unrecognized import attributes specified/);
  assert.match(out.missing, /Cannot resolve module "\.\/missing\.js"/);
  assert.equal(out.absolute, "object"); // "/lib/other.js" is the bundle's lib/other.js
  assert.equal(out.bareLocal, "ok");
  assert.equal(out.jsonNoAttr, "ok");
  assert.deepEqual([out.nodePath, out.barePath], ["function", "function"]);
});
