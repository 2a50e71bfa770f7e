// The parts of workerd's API surface that were missing: crypto.subtle.timingSafeEqual,
// ReadableStreamBYOBReader's readAtLeast, the ready-state constants on WebSocket's prototype,
// Navigator and navigator.platform, origin, console.clear/context/profile/profileEnd/timeStamp,
// and the Cache API and URL methods workerd declares but does not implement (they throw). The
// expected value is what workerd (Miniflare 4.20260426.0) returned for the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const BODY = `
  const out = {};
  const t = async (name, f) => { try { const v = await f(); out[name] = v === undefined ? "undefined" : v; } catch (e) { out[name] = e.name + ": " + e.message; } };
  await t("cacheAdd", () => caches.default.add("http://x/"));
  await t("cacheAddAll", () => caches.default.addAll(["http://x/"]));
  await t("cacheKeys", () => caches.default.keys());
  await t("cacheMatchAll", () => caches.default.matchAll());
  await t("storageHas", () => caches.has("x"));
  await t("storageDelete", () => caches.delete("x"));
  await t("storageKeys", () => caches.keys());
  await t("storageMatch", () => caches.match("http://x/"));
  await t("createObjectURL", () => URL.createObjectURL(new Blob(["x"])));
  await t("revokeObjectURL", () => URL.revokeObjectURL("blob:x"));
  await t("origin", () => String(origin));
  await t("platform", () => navigator.platform);
  await t("consoleFns", () => ["clear", "context", "profile", "profileEnd", "timeStamp"].map((k) => typeof console[k]));
  await t("consoleContext", () => { const c = console.context("x"); return [typeof c, typeof c?.log]; });
  await t("tse1", () => crypto.subtle.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2])));
  await t("tse2", () => crypto.subtle.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 3])));
  await t("tse3", () => crypto.subtle.timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1])));
  await t("tse4", () => crypto.subtle.timingSafeEqual(new Uint8Array([1, 2]).buffer, new Uint16Array([513])));
  await t("tse5", () => crypto.subtle.timingSafeEqual("ab", "ab"));
  await t("wsConsts", () => [WebSocket.prototype.OPEN, WebSocket.prototype.READY_STATE_OPEN, Object.getOwnPropertyDescriptor(WebSocket.prototype, "OPEN")]);
  await t("navigatorClass", () => [typeof Navigator, navigator instanceof Navigator, (() => { try { new Navigator(); return "constructed"; } catch (e) { return e.message; } })()]);
  const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1, 2])); c.enqueue(new Uint8Array([3, 4, 5])); c.close(); } });
  await t("readAtLeast", async () => { const r = rs.getReader({ mode: "byob" }); const a = await r.readAtLeast(4, new Uint8Array(8)); return [a.done, [...a.value]]; });

  const t2 = async (name, f) => { try { const v = await f(); out[name] = v === undefined ? "undefined" : v; } catch (e) { out[name] = "threw " + e.name + ": " + e.message; } };
  await t2("addSync", () => { try { const p = caches.default.add("x"); p.catch(() => {}); return "promise"; } catch (e) { return "sync"; } });
  await t2("hasSync", () => { try { const p = caches.has("x"); p.catch(() => {}); return "promise"; } catch (e) { return "sync"; } });
  await t2("originType", () => typeof origin);
  const mk = () => new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1, 2])); c.close(); } }).getReader({ mode: "byob" });
  await t2("ral0", async () => { const r = await mk().readAtLeast(0, new Uint8Array(4)); return [r.done, [...r.value]]; });
  await t2("ralBig", async () => { const r = await mk().readAtLeast(10, new Uint8Array(4)); return [r.done, [...r.value]]; });
  await t2("ralShort", async () => { const r = await mk().readAtLeast(3, new Uint8Array(4)); return [r.done, [...r.value]]; });
  await t2("ral16", async () => { const s = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1, 2, 3, 4])); c.close(); } }).getReader({ mode: "byob" }); const r = await s.readAtLeast(2, new Uint16Array(4)); return [r.done, r.value.constructor.name, r.value.length]; });
  return out;`;

test("workerd's API surface beyond the standards is there and behaves as workerd's", async (t) => {
  const out = await evalInWorker(t, BODY, { compatibilityDate: "2025-06-01" });
  assert.deepEqual(out, {
  "cacheAdd": "Error: Failed to execute 'add' on 'Cache': the method is not implemented.",
  "cacheAddAll": "Error: Failed to execute 'addAll' on 'Cache': the method is not implemented.",
  "cacheKeys": "Error: Failed to execute 'keys' on 'Cache': the method is not implemented.",
  "cacheMatchAll": "Error: Failed to execute 'matchAll' on 'Cache': the method is not implemented.",
  "storageHas": "Error: Failed to execute 'has' on 'CacheStorage': the method is not implemented.",
  "storageDelete": "Error: Failed to execute 'delete' on 'CacheStorage': the method is not implemented.",
  "storageKeys": "Error: Failed to execute 'keys' on 'CacheStorage': the method is not implemented.",
  "storageMatch": "Error: Failed to execute 'match' on 'CacheStorage': the method is not implemented.",
  "createObjectURL": "Error: URL.createObjectURL() is not implemented",
  "revokeObjectURL": "Error: URL.revokeObjectURL() is not implemented",
  "origin": "null",
  "platform": "",
  "consoleFns": [
    "function",
    "function",
    "function",
    "function",
    "function"
  ],
  "consoleContext": [
    "object",
    "function"
  ],
  "tse1": true,
  "tse2": false,
  "tse3": "TypeError: Input buffers must have the same byte length.",
  "tse4": true,
  "tse5": "TypeError: Failed to execute 'timingSafeEqual' on 'SubtleCrypto': parameter 1 is not of type 'JsBufferSource'.",
  "wsConsts": [
    1,
    1,
    {
      "value": 1,
      "writable": false,
      "enumerable": true,
      "configurable": true
    }
  ],
  "navigatorClass": [
    "function",
    true,
    "Illegal constructor"
  ],
  "readAtLeast": [
    false,
    [
      1,
      2,
      3,
      4,
      5
    ]
  ],
  "addSync": "sync",
  "hasSync": "sync",
  "originType": "string",
  "ral0": "threw TypeError: Requested invalid minimum number of bytes to read (0).",
  "ralBig": "threw TypeError: Minimum bytes to read (10) exceeds size of buffer (4).",
  "ralShort": [
    false,
    [
      1,
      2
    ]
  ],
  "ral16": [
    false,
    "Uint16Array",
    2
  ]
});
});
