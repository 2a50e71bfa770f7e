// Function.prototype.toString shows the runtime's own functions as native code, as workerd's API
// functions are (the expected strings are what workerd printed for the same code), and the
// worker's own functions with their source.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

test("the runtime's functions read as native code; the worker's keep their source", async (t) => {
  const out = await evalInWorker(t, `
    const s = (f) => Function.prototype.toString.call(f);
    class Mine extends Response { extra() { return 1; } }
    function helper(a) { return a + 1; }
    return {
      fetch: s(fetch), Request: s(Request), headersGet: s(Headers.prototype.get),
      urlGetter: s(Object.getOwnPropertyDescriptor(Request.prototype, "url").get),
      setTimeout: s(setTimeout), digest: s(crypto.subtle.digest), ReadableStream: s(ReadableStream),
      getReader: s(ReadableStream.prototype.getReader), structuredClone: s(structuredClone), btoa: s(btoa),
      EventTarget: s(EventTarget), addEventListener: s(EventTarget.prototype.addEventListener),
      responseJson: s(Response.json), TextDecoder: s(TextDecoder), URL: s(URL), URLPattern: s(URLPattern),
      HTMLRewriter: s(HTMLRewriter), queueMicrotask: s(queueMicrotask), abortTimeout: s(AbortSignal.timeout),
      lockedGetter: s(Object.getOwnPropertyDescriptor(ReadableStream.prototype, "locked").get),
      split: s(String.prototype.split), viaString: String(fetch),
      mine: s(Mine).startsWith("class Mine extends Response {"), helper: s(helper), arrow: s((x) => x * 2),
    };`, { compatibilityDate: "2025-10-01" });
  assert.deepEqual(out, {
    fetch: "function fetch() { [native code] }",
    Request: "function Request() { [native code] }",
    headersGet: "function get() { [native code] }",
    urlGetter: "function () { [native code] }",
    setTimeout: "function setTimeout() { [native code] }",
    digest: "function digest() { [native code] }",
    ReadableStream: "function ReadableStream() { [native code] }",
    getReader: "function getReader() { [native code] }",
    structuredClone: "function structuredClone() { [native code] }",
    btoa: "function btoa() { [native code] }",
    EventTarget: "function EventTarget() { [native code] }",
    addEventListener: "function addEventListener() { [native code] }",
    responseJson: "function json() { [native code] }",
    TextDecoder: "function TextDecoder() { [native code] }",
    URL: "function URL() { [native code] }",
    URLPattern: "function URLPattern() { [native code] }",
    HTMLRewriter: "function HTMLRewriter() { [native code] }",
    queueMicrotask: "function queueMicrotask() { [native code] }",
    abortTimeout: "function timeout() { [native code] }",
    lockedGetter: "function () { [native code] }",
    split: "function split() { [native code] }",
    viaString: "function fetch() { [native code] }",
    mine: true,
    helper: "function helper(a) { return a + 1; }",
    arrow: "(x) => x * 2",
  });
});
