// Compatibility flags that select older behaviour: for each flag workerbox honours, the behaviour
// on both sides of its date (an old date against the default) and with its explicit enable and
// disable flags. Every worker runs on loopback only and is disposed when its test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

const OLD = "2021-01-01";

/** `body`'s result in a worker with `compatibilityDate`/`compatibilityFlags` as given. */
function run(t, body, compatibilityDate = undefined, compatibilityFlags = undefined, extra = {}) {
  return evalInWorker(t, body, { compatibilityDate, compatibilityFlags, ...extra });
}

test("formdata_parser_supports_files: parsed files are Files, before 2021-11-03 their text", async (t) => {
  const body = `
    const form = new FormData();
    form.append("f", new File(["file text"], "a.txt", { type: "text/plain" }));
    form.append("s", "plain");
    const parsed = await new Response(form).formData();
    const f = parsed.get("f");
    return [typeof f === "string" ? f : f.constructor.name + ":" + f.name, parsed.get("s")];`;
  assert.deepEqual(await run(t, body), ["File:a.txt", "plain"]);
  assert.deepEqual(await run(t, body, "2021-11-02"), ["file text", "plain"]);
  assert.deepEqual(await run(t, body, "2021-11-03"), ["File:a.txt", "plain"]);
  assert.deepEqual(await run(t, body, undefined, ["formdata_parser_converts_files_to_strings"]), ["file text", "plain"]);
  assert.deepEqual(await run(t, body, OLD, ["formdata_parser_supports_files"]), ["File:a.txt", "plain"]);
});

test("http_headers_getsetcookie: getSetCookie() and separate set-cookie entries, before 2023-03-01 neither", async (t) => {
  const body = `
    const h = new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x", "y"]]);
    return { has: typeof h.getSetCookie, entries: [...h] };`;
  const now = { has: "function", entries: [["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x", "y"]] };
  const then = { has: "undefined", entries: [["set-cookie", "a=1, b=2"], ["x", "y"]] };
  assert.deepEqual(await run(t, body), now);
  assert.deepEqual(await run(t, body, "2023-02-28"), then);
  assert.deepEqual(await run(t, body, undefined, ["no_http_headers_getsetcookie"]), then);
  assert.deepEqual(await run(t, body, "2023-02-28", ["http_headers_getsetcookie"]), now);
});

test("urlsearchparams_delete_has_value_arg: delete()/has() take a value from 2023-07-01", async (t) => {
  const body = `
    const p = new URLSearchParams("a=1&a=2&b=3");
    const has = [p.has("a", "2"), p.has("a", "9")];
    p.delete("a", "1");
    return [has, p.toString()];`;
  assert.deepEqual(await run(t, body), [[true, false], "a=2&b=3"]);
  assert.deepEqual(await run(t, body, "2023-06-30"), [[true, true], "b=3"]);
  assert.deepEqual(await run(t, body, undefined, ["no_urlsearchparams_delete_has_value_arg"]), [[true, true], "b=3"]);
  assert.deepEqual(await run(t, body, "2023-01-01", ["urlsearchparams_delete_has_value_arg"]), [[true, false], "a=2&b=3"]);
  // The legacy URLSearchParams (url_original) never had the value argument, as in workerd.
  assert.deepEqual(await run(t, body, OLD, ["urlsearchparams_delete_has_value_arg"]), [[true, true], "b=3"]);
});

test("blob_standard_mime_type: a body's blob() type is the serialized MIME type, before 2024-06-03 the header as is", async (t) => {
  const body = `
    const r = new Response("x", { headers: { "content-type": "Text/HTML; Charset=UTF-8" } });
    return (await r.blob()).type;`;
  assert.equal(await run(t, body), "text/html;charset=UTF-8");
  assert.equal(await run(t, body, "2024-06-02"), "Text/HTML; Charset=UTF-8");
  assert.equal(await run(t, body, undefined, ["blob_legacy_mime_type"]), "Text/HTML; Charset=UTF-8");
  assert.equal(await run(t, body, OLD, ["blob_standard_mime_type"]), "text/html;charset=UTF-8");
});

test("upper_case_all_http_methods: 'patch' is PATCH from 2024-10-14, a TypeError before (a method workerd does not know is one at any date)", async (t) => {
  const body = `
    const method = (m) => { try { return new Request("https://x.example/", { method: m }).method; } catch (e) { return e.name; } };
    return [method("patch"), method("get"), method("PATCH"), method("custom")];`;
  assert.deepEqual(await run(t, body), ["PATCH", "GET", "PATCH", "TypeError"]);
  assert.deepEqual(await run(t, body, "2024-10-13"), ["TypeError", "GET", "PATCH", "TypeError"]);
  assert.deepEqual(await run(t, body, undefined, ["no_upper_case_all_http_methods"]), ["TypeError", "GET", "PATCH", "TypeError"]);
  assert.deepEqual(await run(t, body, OLD, ["upper_case_all_http_methods"]), ["PATCH", "GET", "PATCH", "TypeError"]);
});

test("cache_option_enabled / cache_no_cache_enabled: Request's cache option from 2024-11-11, no-cache from 2025-08-07", async (t) => {
  const body = `
    const mode = (cache) => { try { return new Request("https://x.example/", { cache }).cache; } catch (e) { return e.name + ": " + (e.message.includes("is not implemented") ? "no option" : e.message); } };
    return [mode("no-store"), mode("no-cache")];`;
  assert.deepEqual(await run(t, body), ["no-store", "no-cache"]);
  const none = "Error: no option";
  assert.deepEqual(await run(t, body, "2024-11-10"), [none, none]);
  assert.deepEqual(await run(t, body, "2025-08-06"), ["no-store", "TypeError: Unsupported cache mode: no-cache"]);
  assert.deepEqual(await run(t, body, undefined, ["cache_option_disabled"]), [none, none]);
  assert.deepEqual(await run(t, body, undefined, ["cache_no_cache_disabled"]), ["no-store", "TypeError: Unsupported cache mode: no-cache"]);
  assert.deepEqual(await run(t, body, OLD, ["cache_option_enabled", "cache_no_cache_enabled"]), ["no-store", "no-cache"]);
});

test("strip_bom_in_read_all_text: text() drops a UTF-8 BOM from 2026-01-13, keeps it before", async (t) => {
  const body = `return [...await new Response(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69])).text()].map((c) => c.codePointAt(0));`;
  assert.deepEqual(await run(t, body), [0x68, 0x69]);
  assert.deepEqual(await run(t, body, "2026-01-12"), [0xfeff, 0x68, 0x69]);
  assert.deepEqual(await run(t, body, undefined, ["do_not_strip_bom_in_read_all_text"]), [0xfeff, 0x68, 0x69]);
  assert.deepEqual(await run(t, body, OLD, ["strip_bom_in_read_all_text"]), [0x68, 0x69]);
});

test("text_decoder_replace_surrogates: UTF-16LE lone surrogates become U+FFFD from 2026-02-24, pass through before", async (t) => {
  const body = `return [...new TextDecoder("utf-16le").decode(new Uint8Array([0x61, 0, 0x00, 0xd8, 0x62, 0]))].map((c) => c.charCodeAt(0));`;
  assert.deepEqual(await run(t, body), [0x61, 0xfffd, 0x62]);
  assert.deepEqual(await run(t, body, "2026-02-23"), [0x61, 0xd800, 0x62]);
  assert.deepEqual(await run(t, body, undefined, ["disable_text_decoder_replace_surrogates"]), [0x61, 0xd800, 0x62]);
  assert.deepEqual(await run(t, body, OLD, ["text_decoder_replace_surrogates"]), [0x61, 0xfffd, 0x62]);
});

test("crypto_preserve_public_exponent: an RSA key's publicExponent is a Uint8Array from 2023-12-01, an ArrayBuffer before", async (t) => {
  const body = `
    const key = await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]);
    const e = key.publicKey.algorithm.publicExponent;
    return [e.constructor.name, [...new Uint8Array(e)]];`;
  assert.deepEqual(await run(t, body), ["Uint8Array", [1, 0, 1]]);
  assert.deepEqual(await run(t, body, "2023-11-30"), ["ArrayBuffer", [1, 0, 1]]);
  assert.deepEqual(await run(t, body, undefined, ["no_crypto_preserve_public_exponent"]), ["ArrayBuffer", [1, 0, 1]]);
  assert.deepEqual(await run(t, body, OLD, ["crypto_preserve_public_exponent"]), ["Uint8Array", [1, 0, 1]]);
});

test("enable_weak_ref: WeakRef and FinalizationRegistry exist from 2025-05-05 only", async (t) => {
  const body = `return [typeof WeakRef, typeof FinalizationRegistry, new TextDecoder().decode(new TextEncoder().encode("ok"))];`;
  assert.deepEqual(await run(t, body), ["function", "function", "ok"]);
  assert.deepEqual(await run(t, body, "2025-05-04"), ["undefined", "undefined", "ok"]);
  assert.deepEqual(await run(t, body, undefined, ["disable_weak_ref"]), ["undefined", "undefined", "ok"]);
  assert.deepEqual(await run(t, body, OLD, ["enable_weak_ref"]), ["function", "function", "ok"]);
});

test("no_global_importscripts: importScripts() exists (and throws) before 2024-03-04", async (t) => {
  const body = `
    if (typeof importScripts !== "function") return "absent";
    try { importScripts("x.js"); return "ran"; } catch (e) { return e.message.includes("not implemented") ? "throws" : e.message; }`;
  assert.equal(await run(t, body), "absent");
  assert.equal(await run(t, body, "2024-03-03"), "throws");
  assert.equal(await run(t, body, undefined, ["global_importscripts"]), "throws");
  assert.equal(await run(t, body, OLD, ["no_global_importscripts"]), "absent");
});

test("enable_navigator_language: navigator.language is 'en' from 2025-05-19, absent before", async (t) => {
  const body = `return [navigator.language ?? null, navigator.languages ?? null, "language" in navigator];`;
  assert.deepEqual(await run(t, body), ["en", ["en"], true]);
  assert.deepEqual(await run(t, body, "2025-05-18"), [null, null, false]);
  assert.deepEqual(await run(t, body, undefined, ["disable_navigator_language"]), [null, null, false]);
  assert.deepEqual(await run(t, body, "2024-01-01", ["enable_navigator_language"]), ["en", ["en"], true]);
});

test("streams_enable_constructors / transformstream_enable_standard_constructor: before 2022-11-30 only byte identity transforms", async (t) => {
  const body = `
    const attempt = (f) => { try { f(); return "ok"; } catch (e) { return e.message.includes("streams_enable_constructors") ? "refused" : e.message; } };
    const ts = new TransformStream({ transform(chunk, c) { c.enqueue(new TextDecoder().decode(chunk).toUpperCase()); } });
    const writer = ts.writable.getWriter();
    writer.write(new TextEncoder().encode("ab")).catch(() => {});
    const { value } = await ts.readable.getReader().read();
    const bodyStream = new Response("x").body;
    return {
      readable: attempt(() => new ReadableStream({})),
      writable: attempt(() => new WritableStream({})),
      controller: typeof ReadableStreamDefaultController,
      transformed: typeof value === "string" ? value : new TextDecoder().decode(value),
      isStream: bodyStream instanceof ReadableStream,
    };`;
  const now = { readable: "ok", writable: "ok", controller: "function", transformed: "AB", isStream: true };
  const then = { readable: "refused", writable: "refused", controller: "undefined", transformed: "ab", isStream: true };
  assert.deepEqual(await run(t, body), now);
  assert.deepEqual(await run(t, body, "2022-11-29"), then);
  assert.deepEqual(await run(t, body, undefined, ["streams_disable_constructors", "transformstream_disable_standard_constructor"]), then);
  assert.deepEqual(await run(t, body, OLD, ["streams_enable_constructors", "transformstream_enable_standard_constructor"]), now);
});

test("encoder_stream_spec_compliant_backpressure: TextEncoderStream's readable side has a high water mark of 0 from 2026-03-24, 1 before", async (t) => {
  // With a high water mark of 0 a write waits for a read; with 1 the first write goes through.
  const body = `
    const writer = new TextEncoderStream().writable.getWriter();
    let written = false;
    writer.write("a").then(() => { written = true; });
    await new Promise((resolve) => setTimeout(resolve, 20));
    return written;`;
  assert.equal(await run(t, body), false);
  assert.equal(await run(t, body, "2026-03-23"), true);
  assert.equal(await run(t, body, undefined, ["no_encoder_stream_spec_compliant_backpressure"]), true);
  assert.equal(await run(t, body, "2025-01-01", ["encoder_stream_spec_compliant_backpressure"]), false);
});

test("capture_async_api_throws: async APIs reject from 2022-10-31, threw synchronously before", async (t) => {
  const body = `
    const how = (f) => { try { const p = f(); return p.then(() => "resolved", () => "rejected"); } catch { return "threw"; } };
    return [await how(() => fetch("not a url")), await how(() => crypto.subtle.encrypt()), await how(() => crypto.subtle.digest("NO-SUCH", new Uint8Array(1)))];`;
  // SubtleCrypto's own errors (DOMExceptions: an unknown digest) reject either way, as in workerd;
  // only its argument errors were thrown.
  assert.deepEqual(await run(t, body), ["rejected", "rejected", "rejected"]);
  assert.deepEqual(await run(t, body, "2022-10-30"), ["threw", "threw", "rejected"]);
  assert.deepEqual(await run(t, body, undefined, ["do_not_capture_async_api_throws"]), ["threw", "threw", "rejected"]);
  assert.deepEqual(await run(t, body, OLD, ["capture_async_api_throws"]), ["rejected", "rejected", "rejected"]);
});

test("capture_async_api_throws also covers bindings: a KV put with an empty key threw synchronously before 2022-10-31", async (t) => {
  const { kv } = await import("../index.js");
  const body = `try { const p = env.KV.put("", "v"); return await p.then(() => "resolved", () => "rejected"); } catch { return "threw"; }`;
  assert.equal(await run(t, body, undefined, undefined, { bindings: { KV: kv() } }), "rejected");
  assert.equal(await run(t, body, "2022-10-30", undefined, { bindings: { KV: kv() } }), "threw");
});

test("set_tostring_tag: API classes have Symbol.toStringTag from 2024-09-26, not before", async (t) => {
  const body = `return [String(new Headers()), String(new Request("https://x.example/")), String(crypto.subtle), String(new Map())];`;
  assert.deepEqual(await run(t, body), ["[object Headers]", "[object Request]", "[object SubtleCrypto]", "[object Map]"]);
  const then = ["[object Object]", "[object Object]", "[object Object]", "[object Map]"];
  assert.deepEqual(await run(t, body, "2024-09-25"), then);
  assert.deepEqual(await run(t, body, undefined, ["do_not_set_tostring_tag"]), then);
});

test("websocket_standard_binary_type / websocket_close_reason_byte_limit / web_socket_auto_reply_to_close", async (t) => {
  const body = `
    const [a, b] = Object.values(new WebSocketPair());
    a.accept();
    b.accept();
    const got = new Promise((resolve) => a.addEventListener("message", (e) => resolve(e.data.constructor.name)));
    b.send(new Uint8Array([1, 2]));
    const binary = await got;
    let longReason;
    try { a.close(1000, "x".repeat(200)); longReason = "allowed"; } catch (e) { longReason = e.name; }
    const [c, d] = Object.values(new WebSocketPair());
    c.accept();
    d.accept();
    const stateAtClose = new Promise((resolve) => d.addEventListener("close", () => resolve(d.readyState)));
    c.close(1000, "bye");
    return { binaryType: "binaryType" in a ? a.binaryType : null, binary, longReason, stateAtClose: await stateAtClose };`;
  assert.deepEqual(await run(t, body), { binaryType: "blob", binary: "Blob", longReason: "SyntaxError", stateAtClose: 3 });
  assert.deepEqual(await run(t, body, "2026-03-02"), { binaryType: "arraybuffer", binary: "ArrayBuffer", longReason: "allowed", stateAtClose: 2 });
  assert.deepEqual(await run(t, body, undefined, ["no_websocket_standard_binary_type", "no_websocket_close_reason_byte_limit", "web_socket_manual_reply_to_close"]),
    { binaryType: "arraybuffer", binary: "ArrayBuffer", longReason: "allowed", stateAtClose: 2 });
  assert.deepEqual(await run(t, body, "2025-01-01", ["websocket_standard_binary_type", "websocket_close_reason_byte_limit", "web_socket_auto_reply_to_close"]),
    { binaryType: "blob", binary: "Blob", longReason: "SyntaxError", stateAtClose: 3 });
});

test("no_resizable_array_buffer_in_blob: a resizable buffer in a Blob is a TypeError only with the flag", async (t) => {
  const body = `try { return new Blob([new ArrayBuffer(2, { maxByteLength: 8 })]).size; } catch (e) { return e.name; }`;
  assert.equal(await run(t, body), 2);
  assert.equal(await run(t, body, undefined, ["no_resizable_array_buffer_in_blob"]), "TypeError");
});

test("fetch_refuses_unknown_protocols: before 2021-11-10 fetch() sent other schemes as http:", async (t) => {
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => res.end(`seen ${req.url}`));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const { port } = server.address();
  const body = `try { return await (await fetch("foo://127.0.0.1:${port}/path")).text(); } catch (e) { return e.name; }`;
  assert.equal(await run(t, body), "TypeError");
  assert.equal(await run(t, body, "2021-11-09"), "seen /path");
  assert.equal(await run(t, body, undefined, ["fetch_treats_unknown_protocols_as_http"]), "seen /path");
  assert.equal(await run(t, body, "2021-11-09", ["fetch_refuses_unknown_protocols"]), "TypeError");
});

test("durable_object_fetch_requires_full_url / fetcher_no_get_put_delete / rpc on Durable Object stubs and service bindings", async (t) => {
  const { durableObject, service } = await import("../index.js");
  const script = `
    import { DurableObject } from "cloudflare:workers";
    export class Echo extends DurableObject {
      fetch(request) { return new Response(request.method + " " + request.url); }
      hello() { return "rpc"; }
    }
    export default { async fetch(request, env) {
      const stub = env.ECHO.get(env.ECHO.idFromName("a"));
      const attempt = async (f) => { try { return await f(); } catch (e) { return e.name; } };
      return Response.json({
        relative: await attempt(async () => (await stub.fetch("/path")).text()),
        get: await attempt(async () => typeof stub.get === "function" ? (await stub.get("https://x.example/g")).text() : typeof stub.get),
        serviceGet: await attempt(async () => typeof env.SVC.get === "function" ? (await env.SVC.get("https://x.example/s")).text() : typeof env.SVC.get),
        rpc: await attempt(async () => typeof stub.hello === "function" ? await stub.hello() : typeof stub.hello),
      });
    } }`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const bindings = { ECHO: durableObject("Echo"), SVC: service((request) => new Response("svc " + request.method)) };
    const worker = await useWorker(t, { script, bindings, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  const now = await result();
  assert.equal(now.relative, "TypeError");
  assert.equal(now.rpc, "rpc");
  // With rpc on, get is an RPC method (the object has none): calling it fails.
  assert.notEqual(now.get, "GET https://x.example/g");
  const old = await result("2021-11-09");
  assert.deepEqual(old, { relative: "GET https://fake-host/path", get: "GET https://x.example/g", serviceGet: "svc GET", rpc: "undefined" });
  const shortcuts = await result("2024-03-25", ["rpc"]);
  assert.deepEqual([shortcuts.get, shortcuts.rpc], ["GET https://x.example/g", "rpc"]);
  const flags = await result(undefined, ["durable_object_fetch_allows_relative_url", "fetcher_has_get_put_delete", "no_rpc"]);
  assert.deepEqual(flags, old);
});

test("delete_all_deletes_alarm: deleteAll() removes the alarm from 2026-02-24, keeps it before", async (t) => {
  const { durableObject } = await import("../index.js");
  const script = `
    import { DurableObject } from "cloudflare:workers";
    export class Box extends DurableObject {
      async fetch() {
        await this.ctx.storage.put("k", 1);
        await this.ctx.storage.setAlarm(Date.now() + 3600000);
        await this.ctx.storage.deleteAll();
        return Response.json([await this.ctx.storage.get("k") ?? null, (await this.ctx.storage.getAlarm()) === null]);
      }
      alarm() {}
    }
    export default { fetch(request, env) { return env.BOX.get(env.BOX.idFromName("a")).fetch(request); } }`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, bindings: { BOX: durableObject("Box") }, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  assert.deepEqual(await result(), [null, true]);
  assert.deepEqual(await result("2026-02-23"), [null, false]);
  assert.deepEqual(await result(undefined, ["delete_all_preserves_alarm"]), [null, false]);
  assert.deepEqual(await result("2025-01-01", ["delete_all_deletes_alarm"]), [null, true]);
});

test("enable_ctx_exports / disallow_importable_env: ctx.exports from 2025-11-17; the importable env only without disallow_importable_env", async (t) => {
  const script = `
    import { env as imported } from "cloudflare:workers";
    export default { fetch(request, env, ctx) {
      return Response.json({ exports: "exports" in ctx, importedVar: imported.VAR ?? null });
    } }`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, bindings: { VAR: "value" }, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  assert.deepEqual(await result(), { exports: true, importedVar: "value" });
  assert.deepEqual(await result("2025-11-16"), { exports: false, importedVar: "value" });
  assert.deepEqual(await result(undefined, ["disable_ctx_exports"]), { exports: false, importedVar: "value" });
  assert.deepEqual(await result("2025-01-01", ["enable_ctx_exports"]), { exports: true, importedVar: "value" });
  assert.deepEqual(await result(undefined, ["disallow_importable_env"]), { exports: true, importedVar: null });
});

test("export_commonjs_default: require() of a worker module gives its value from 2022-10-31, a { default } namespace before", async (t) => {
  const script = `
    import main from "./main.cjs";
    export default { fetch() { return Response.json(main); } }`;
  const modules = { "main.cjs": `const other = require("./other.cjs"); const text = require("./note.txt"); module.exports = { other, text };`, "other.cjs": `module.exports = { n: 1 };`, "note.txt": "hello" };
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, filename: "index.js", modules, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  assert.deepEqual(await result(), { other: { n: 1 }, text: "hello" });
  assert.deepEqual(await result("2022-10-30"), { other: { default: { n: 1 } }, text: { default: "hello" } });
  assert.deepEqual(await result(undefined, ["export_commonjs_namespace"]), { other: { default: { n: 1 } }, text: { default: "hello" } });
  assert.deepEqual(await result("2022-10-30", ["export_commonjs_default"]), { other: { n: 1 }, text: "hello" });
});

test("diagnostics_channel_has_subscribers_getter: hasSubscribers is a getter from 2026-05-19, a method before", async (t) => {
  const body = `
    const dc = await import("node:diagnostics_channel");
    const ch = dc.channel("x");
    ch.subscribe(() => {});
    const tc = dc.tracingChannel("y");
    return [typeof ch.hasSubscribers === "function" ? ["method", ch.hasSubscribers()] : ["getter", ch.hasSubscribers], typeof tc.hasSubscribers, dc.hasSubscribers("x")];`;
  const flags = (...more) => ["nodejs_compat", ...more];
  assert.deepEqual(await run(t, body, undefined, flags()), [["getter", true], "boolean", true]);
  assert.deepEqual(await run(t, body, "2026-05-18", flags()), [["method", true], "function", true]);
  assert.deepEqual(await run(t, body, undefined, flags("no_diagnostics_channel_has_subscribers_getter")), [["method", true], "function", true]);
  assert.deepEqual(await run(t, body, "2025-01-01", flags("diagnostics_channel_has_subscribers_getter")), [["getter", true], "boolean", true]);
});

test("url_standard / url_original: before 2022-10-31 URL and URLSearchParams are workerd's legacy ones", async (t) => {
  const body = `
    const t = (f) => { try { return f(); } catch (e) { return e.name + ": " + e.message; } };
    const u = t(() => new URL("HTTPS://Us%20er@Example.COM:443/a/./b/../c%20d?x=1+2&y#f"));
    return {
      href: t(() => u.href),
      parts: t(() => [u.origin, u.host, u.pathname, u.search, u.hash, u.username]),
      bare: t(() => new URL("https://example.com?q").href),
      opaque: t(() => new URL("mailto:a@b.example").href),
      unicodeHost: t(() => new URL("https://exämple.com/").href),
      relative: t(() => new URL("../x?y=1", "http://h.example/a/b/c").href),
      params: t(() => { const v = new URL("http://h.example/?a=1&b=2"); v.searchParams.append("c", "3 4"); v.searchParams.delete("a"); return [v.href, v.searchParams.size]; }),
      setters: t(() => { const v = new URL("http://h.example/x"); v.pathname = "a/b/"; v.search = "?k=v"; v.port = "80"; v.protocol = "https"; return v.href; }),
      canParse: typeof URL.canParse,
      paramsText: new URLSearchParams("?a=1&b=%zz&c").toString(),
    };`;
  const legacy = {
    href: "https://Us%20er@example.com/a/c%20d?x=1+2&y#f",
    parts: ["https://example.com", "example.com", "/a/c%20d", "?x=1+2&y", "#f", "Us%20er"],
    bare: "https://example.com?q",
    opaque: "TypeError: Invalid URL string.",
    unicodeHost: "TypeError: Invalid URL string.",
    relative: "http://h.example/a/x?y=1",
    params: ["http://h.example/?b=2&c=3+4", 2],
    setters: "https://h.example/a/b/?k=v",
    canParse: "undefined",
    paramsText: "a=1&b=zz&c=",
  };
  const standard = await run(t, body);
  assert.equal(standard.href, "https://Us%20er@example.com/a/c%20d?x=1+2&y#f");
  assert.equal(standard.bare, "https://example.com/?q");
  assert.equal(standard.opaque, "mailto:a@b.example");
  assert.equal(standard.unicodeHost, "https://xn--exmple-cua.com/");
  assert.equal(standard.canParse, "function");
  assert.deepEqual(await run(t, body, "2022-10-30"), legacy);
  assert.deepEqual(await run(t, body, undefined, ["url_original"]), legacy);
  assert.deepEqual((await run(t, body, OLD, ["url_standard"])).bare, "https://example.com/?q");
});

test("fetch_standard_url / response_redirect_url_standard: Request keeps its URL as given and Response.redirect() uses KJ's parser before their dates", async (t) => {
  const body = `
    let invalid;
    try { invalid = new Request("not a url").url; } catch (e) { invalid = e.name; }
    return { url: new Request("http://h.example").url, invalid, location: Response.redirect("http://h.example/a/../b").headers.get("location") };`;
  assert.deepEqual(await run(t, body), { url: "http://h.example/", invalid: "TypeError", location: "http://h.example/b" });
  assert.deepEqual(await run(t, body, "2024-06-02"), { url: "http://h.example", invalid: "not a url", location: "http://h.example/b" });
  assert.deepEqual(await run(t, body, undefined, ["fetch_legacy_url", "response_redirect_url_original"]), { url: "http://h.example", invalid: "not a url", location: "http://h.example/b" });
  assert.deepEqual((await run(t, `return Response.redirect("http://h.example/%zz").headers.get("location");`, "2023-03-13")), "http://h.example/%zz");
  assert.deepEqual((await run(t, `try { return Response.redirect("mailto:x@y.example").headers.get("location"); } catch (e) { return e.name; }`, "2023-03-13")), "TypeError");
  assert.deepEqual((await run(t, `return Response.redirect("mailto:x@y.example").headers.get("location");`)), "mailto:x@y.example");
});

test("set_event_target_this: listeners get the target as `this` from 2025-08-01, undefined before", async (t) => {
  const body = `
    const target = new EventTarget();
    const seen = [];
    target.addEventListener("x", function () { seen.push(this === target ? "target" : String(this)); });
    const listener = { handleEvent() { seen.push(this === listener ? "object" : String(this)); } };
    target.addEventListener("x", listener);
    target.dispatchEvent(new Event("x"));
    return seen;`;
  assert.deepEqual(await run(t, body), ["target", "object"]);
  assert.deepEqual(await run(t, body, "2025-07-31"), ["undefined", "undefined"]);
  assert.deepEqual(await run(t, body, undefined, ["no_set_event_target_this"]), ["undefined", "undefined"]);
  assert.deepEqual(await run(t, body, "2025-01-01", ["set_event_target_this"]), ["target", "object"]);
});

test("strict_compression_checks: from 2023-08-01 trailing or missing compressed data is an error; before, ignored", async (t) => {
  const body = `
    const packed = new Uint8Array(await new Response(new Response("hello hello").body.pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
    const unpack = async (bytes) => { try { return await new Response(new Response(bytes).body.pipeThrough(new DecompressionStream("deflate"))).text(); } catch (e) { return e.name; } };
    const trailing = new Uint8Array([...packed, 1, 2, 3]);
    return [await unpack(packed), await unpack(trailing), await unpack(packed.slice(0, packed.length - 4))];`;
  assert.deepEqual(await run(t, body), ["hello hello", "TypeError", "TypeError"]);
  assert.deepEqual(await run(t, body, "2023-07-31"), ["hello hello", "hello hello", "hello hello"]);
  assert.deepEqual(await run(t, body, undefined, ["no_strict_compression_checks"]), ["hello hello", "hello hello", "hello hello"]);
  assert.deepEqual(await run(t, body, "2023-01-01", ["strict_compression_checks"]), ["hello hello", "TypeError", "TypeError"]);
});

test("strict_crypto_checks: RSA sizes and exponents and ECDH public key usages are checked from 2023-08-01", async (t) => {
  const body = `
    const attempt = async (f) => { try { await f(); return "ok"; } catch (e) { return e.name; } };
    const ec = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
    const spki = await crypto.subtle.exportKey("spki", ec.publicKey);
    return [
      await attempt(() => crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1032, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign"])),
      await attempt(() => crypto.subtle.importKey("spki", spki, { name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])),
    ];`;
  assert.deepEqual(await run(t, body), ["OperationError", "SyntaxError"]);
  assert.deepEqual(await run(t, body, "2023-07-31"), ["ok", "ok"]);
  assert.deepEqual(await run(t, body, undefined, ["no_strict_crypto_checks"]), ["ok", "ok"]);
  assert.deepEqual(await run(t, body, "2023-01-01", ["strict_crypto_checks"]), ["OperationError", "SyntaxError"]);
});

test("allow_eval_during_startup: eval works at the top level from 2025-06-01, never during requests without allowEval", async (t) => {
  const script = `
    let atStartup;
    try { atStartup = eval("1 + 1"); } catch (e) { atStartup = e.name; }
    export default { fetch() {
      let later;
      try { later = new Function("return 3")(); } catch (e) { later = e.name; }
      return Response.json([atStartup, later]);
    } };`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  assert.deepEqual(await result(), [2, "EvalError"]);
  assert.deepEqual(await result("2025-05-31"), ["EvalError", "EvalError"]);
  assert.deepEqual(await result(undefined, ["disallow_eval_during_startup"]), ["EvalError", "EvalError"]);
  assert.deepEqual(await result("2025-01-01", ["allow_eval_during_startup"]), [2, "EvalError"]);
});

test("fetch_iterable_type_support: iterables of bytes are bodies from 2026-02-19, text before", async (t) => {
  const body = `
    const parts = [new Uint8Array([104, 105]), new Uint8Array([33])];
    async function* gen() { yield new Uint8Array([111, 107]); }
    const custom = { *[Symbol.iterator]() { yield new Uint8Array([120]); }, toString() { return "custom"; } };
    return [await new Response(parts).text(), await new Response(gen()).text(), await new Response(custom).text()];`;
  assert.deepEqual(await run(t, body), ["hi!", "ok", "custom"]);
  assert.deepEqual(await run(t, body, "2026-02-18"), ["104,105,33", "[object AsyncGenerator]", "custom"]);
  assert.deepEqual(await run(t, body, undefined, ["no_fetch_iterable_type_support"]), ["104,105,33", "[object AsyncGenerator]", "custom"]);
  assert.deepEqual(await run(t, body, undefined, ["no_fetch_iterable_type_support_override_adjustment"]), ["hi!", "ok", "x"]);
});

test("streams_byob_reader_detaches_buffer: before 2021-11-10 a BYOB read leaves the caller's buffer usable", async (t) => {
  const body = `
    const stream = new Response(new Uint8Array([1, 2, 3])).body;
    const reader = stream.getReader({ mode: "byob" });
    const view = new Uint8Array(8);
    const { value } = await reader.read(view);
    return [view.buffer.detached, [...value], value.buffer === view.buffer];`;
  assert.deepEqual(await run(t, body), [true, [1, 2, 3], false]);
  assert.deepEqual(await run(t, body, "2021-11-09", ["streams_enable_constructors"]), [false, [1, 2, 3], true]);
  assert.deepEqual(await run(t, body, undefined, ["streams_byob_reader_does_not_detach_buffer"]), [false, [1, 2, 3], true]);
});

test("html_rewriter_treats_esi_include_as_void_tag: <esi:include> has no end tag only with the flag", async (t) => {
  const body = `
    const html = '<esi:include src="a"/><p>x</p>';
    const out = await new HTMLRewriter().on("esi\\\\:include", { element(e) { e.replace("[esi]"); } }).transform(new Response(html)).text();
    return out;`;
  assert.equal(await run(t, body), "[esi]");
  assert.equal(await run(t, body, undefined, ["html_rewriter_treats_esi_include_as_void_tag"]), "[esi]<p>x</p>");
});

test("brotli_content_encoding: fetch() offers br from 2024-04-29, only gzip and deflate before", async (t) => {
  const { createServer } = await import("node:http");
  const server = createServer((req, res) => res.end(req.headers["accept-encoding"] ?? "none"));
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const body = `return (await fetch("http://127.0.0.1:${server.address().port}/")).text();`;
  assert.match(await run(t, body), /\bbr\b/);
  assert.equal(await run(t, body, "2024-04-28"), "gzip, deflate");
  assert.equal(await run(t, body, undefined, ["no_brotli_content_encoding"]), "gzip, deflate");
});

test("r2_list_honor_include: list() gives metadata only as `include` asks from 2022-08-04, always before", async (t) => {
  const { storage } = await import("../index.js");
  const script = `export default { async fetch(request, env) {
    await env.FILES.put("k", "v", { httpMetadata: { contentType: "text/plain" }, customMetadata: { a: "1" } });
    const [object] = (await env.FILES.list()).objects;
    return Response.json([object.httpMetadata.contentType ?? null, object.customMetadata.a ?? null]);
  } }`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, bindings: { FILES: storage() }, compatibilityDate, compatibilityFlags });
    return (await dispatch(worker, "http://localhost/")).json();
  };
  assert.deepEqual(await result(), [null, null]);
  assert.deepEqual(await result("2022-08-03"), ["text/plain", "1"]);
  assert.deepEqual(await result("2022-08-03", ["r2_list_honor_include"]), [null, null]);
});

test("throw_on_unrecognized_import_assertion: import attributes fail from 2025-06-16, are ignored before", async (t) => {
  const { createWorker } = await import("../index.js");
  const options = (compatibilityDate, compatibilityFlags) => ({
    script: `import data from "./d.json" with { type: "json" };
      export default { async fetch() { const again = await import("./d.json", { with: { type: "json" } }); return Response.json([data.n, again.default.n]); } };`,
    filename: "main.js",
    modules: { "d.json": '{"n":1}' },
    compatibilityDate,
    compatibilityFlags,
    onLog() {},
  });
  await assert.rejects(createWorker(options()), /Unrecognized import attributes specified/);
  for (const settings of [["2025-06-15"], [undefined, ["ignore_unrecognized_import_assertion"]]]) {
    const worker = await useWorker(t, options(...settings));
    assert.deepEqual(await (await dispatch(worker, "http://localhost/")).json(), [1, 1]);
  }
  await assert.rejects(createWorker(options("2025-06-15", ["throw_on_unrecognized_import_assertion"])), /Unrecognized import attributes specified/);
});

test("strip_authorization_on_cross_origin_redirect: from 2025-09-01 a redirect to another origin drops Authorization; before, it is kept", async (t) => {
  const { createServer } = await import("node:http");
  const listen = async (handler) => {
    const server = createServer(handler);
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    t.after(() => server.close());
    return server.address().port;
  };
  const target = await listen((req, res) => res.end(`auth=${req.headers.authorization ?? "none"} method=${req.method}`));
  const origin = await listen((req, res) => res.writeHead(307, { location: `http://127.0.0.1:${target}/next` }).end());
  const body = `
    const r = await fetch("http://127.0.0.1:${origin}/start", { method: "POST", body: "x", headers: { authorization: "Bearer t" } });
    return [await r.text(), r.redirected, new URL(r.url).port];`;
  assert.deepEqual(await run(t, body), ["auth=none method=POST", true, String(target)]);
  assert.deepEqual(await run(t, body, "2025-08-31"), ["auth=Bearer t method=POST", true, String(target)]);
  assert.deepEqual(await run(t, body, undefined, ["retain_authorization_on_cross_origin_redirect"]), ["auth=Bearer t method=POST", true, String(target)]);
});

test("bind_asynclocalstorage_snapshot_to_request: from 2025-06-16 a snapshot made in one request throws in another", async (t) => {
  const script = `
    import { AsyncLocalStorage } from "node:async_hooks";
    const als = new AsyncLocalStorage();
    let saved;
    export default { fetch(request) {
      if (saved === undefined) {
        saved = als.run("first", () => AsyncLocalStorage.snapshot());
        return new Response(saved(() => als.getStore()));
      }
      try { return new Response(saved(() => als.getStore())); } catch (e) { return new Response(e.message); }
    } };`;
  const result = async (compatibilityDate, compatibilityFlags) => {
    const worker = await useWorker(t, { script, compatibilityDate, compatibilityFlags: ["nodejs_compat", ...(compatibilityFlags ?? [])] });
    return [await (await dispatch(worker, "http://localhost/")).text(), await (await dispatch(worker, "http://localhost/")).text()];
  };
  const refused = ["first", "Cannot call this AsyncLocalStorage bound function outside of the request in which it was created."];
  assert.deepEqual(await result(), refused);
  assert.deepEqual(await result("2025-06-15"), ["first", "first"]);
  assert.deepEqual(await result(undefined, ["do_not_bind_asynclocalstorage_snapshot_to-request"]), ["first", "first"]);
  assert.deepEqual(await result("2025-01-01", ["bind_asynclocalstorage_snapshot_to_request"]), refused);
});

test("internal_stream_byob_return_view: a body's BYOB read at the end gives an empty view from 2024-05-13, undefined before", async (t) => {
  const body = `
    const reader = new Response(new Uint8Array([7])).body.getReader({ mode: "byob" });
    const first = await reader.read(new Uint8Array(4));
    const last = await reader.read(new Uint8Array(4));
    const own = new ReadableStream({ type: "bytes", start(c) { c.close(); } }).getReader({ mode: "byob" });
    const ownLast = await own.read(new Uint8Array(4));
    return [[...first.value], last.done, last.value === undefined ? "undefined" : last.value.constructor.name + last.value.length, ownLast.value === undefined ? "undefined" : "view"];`;
  assert.deepEqual(await run(t, body), [[7], true, "Uint8Array0", "view"]);
  assert.deepEqual(await run(t, body, "2024-05-12"), [[7], true, "undefined", "view"]);
  assert.deepEqual(await run(t, body, undefined, ["internal_stream_byob_return_undefined"]), [[7], true, "undefined", "view"]);
});

test("unwrap_custom_thenables: waitUntil() and respondWith() take thenables from 2024-04-01", async (t) => {
  const body = `
    let called = false;
    ctx.waitUntil({ then(resolve) { called = true; resolve(); } });
    for (let i = 0; i < 5; i++) await null;
    return called;`;
  assert.equal(await run(t, body), true);
  assert.equal(await run(t, body, "2024-03-31"), false);
  assert.equal(await run(t, body, undefined, ["no_unwrap_custom_thenables"]), false);
  const script = `addEventListener("fetch", (event) => {
    try { event.respondWith({ then(resolve) { resolve(new Response("from a thenable")); } }); }
    catch (e) { event.respondWith(new Response(e.name)); }
  });`;
  const answer = async (compatibilityDate) => (await dispatch(await useWorker(t, { script, compatibilityDate }), "http://localhost/")).text();
  assert.equal(await answer(), "from a thenable");
  assert.equal(await answer("2024-03-31"), "TypeError");
});

test("enhanced_error_serialization: structuredClone keeps an error's custom name and own properties from 2026-04-21", async (t) => {
  const body = `
    const e = new TypeError("boom");
    e.code = "E_X";
    e.name = "CustomError";
    const c = structuredClone({ e, r: new RangeError("r", { cause: 5 }) });
    return [c.e.name, c.e.code ?? null, c.e.message, c.r instanceof RangeError, c.r.cause];`;
  assert.deepEqual(await run(t, body), ["CustomError", "E_X", "boom", true, 5]);
  assert.deepEqual(await run(t, body, "2026-04-20"), ["Error", null, "boom", true, 5]);
  assert.deepEqual(await run(t, body, undefined, ["legacy_error_serialization"]), ["Error", null, "boom", true, 5]);
});

test("unhandled_rejection_after_microtask_checkpoint: from 2026-03-03 a rejection handled a few ticks later fires no unhandledrejection", async (t) => {
  const body = `
    const seen = [];
    const onUnhandled = (e) => { seen.push(e.type); e.preventDefault(); };
    const onHandled = (e) => seen.push(e.type);
    addEventListener("unhandledrejection", onUnhandled);
    addEventListener("rejectionhandled", onHandled);
    const p = Promise.reject(new Error("late"));
    for (let i = 0; i < 3; i++) await null;
    p.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    removeEventListener("unhandledrejection", onUnhandled);
    removeEventListener("rejectionhandled", onHandled);
    return seen;`;
  assert.deepEqual(await run(t, body), []);
  assert.deepEqual(await run(t, body, "2026-03-02"), ["unhandledrejection", "rejectionhandled"]);
  assert.deepEqual(await run(t, body, undefined, ["no_unhandled_rejection_after_microtask_checkpoint"]), ["unhandledrejection", "rejectionhandled"]);
});

test("fixup-transform-stream-backpressure: from 2024-12-16 a full readable side holds back a TransformStream's writes", async (t) => {
  const body = `
    let transformed = 0;
    const ts = new TransformStream({ transform(chunk, controller) { transformed++; controller.enqueue(chunk); } });
    const writer = ts.writable.getWriter();
    const reader = ts.readable.getReader();
    const first = reader.read();
    for (let i = 0; i < 4; i++) writer.write(i).catch(() => {});
    await first;
    await new Promise((resolve) => setTimeout(resolve, 20));
    return transformed;`;
  assert.equal(await run(t, body), 1);
  assert.equal(await run(t, body, "2024-12-15"), 4);
  assert.equal(await run(t, body, undefined, ["original-transform-stream-backpressure"]), 4);
});

test("enhanced_error_serialization keeps EvalError and URIError as such", async (t) => {
  const body = `const [a, b] = structuredClone([new EvalError("e"), new URIError("u")]); return [a instanceof EvalError, a.name, b instanceof URIError, b.name, b.message];`;
  assert.deepEqual(await run(t, body), [true, "EvalError", true, "URIError", "u"]);
});
