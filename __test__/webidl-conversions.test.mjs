// Web IDL conversions as workerd makes them, for the strings and numbers the Web APIs take: a
// Symbol given where a string is expected is V8's TypeError ("Cannot convert a Symbol value to a
// string"; `String(symbol)` would have made "Symbol(s)"), and AbortSignal.timeout() takes any
// number (NaN, negative or not a number: at once; Infinity: never); a Request's method must be one
// workerd's HTTP layer knows, a Response's status is a 32-bit integer (a fraction is dropped), and
// Response.json() of what JSON cannot represent is the text "undefined". Every expected value was
// printed by workerd (Miniflare 4.20260426.0) from the same code. Workers run on loopback only
// and are disposed when their test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const SYMBOLS = `
  const out = {};
  const msg = async (f) => { try { const v = f(); if (v && typeof v.then === "function") await v; return "ok"; } catch (e) { return e?.name + ": " + e?.message; } };
  const S = Symbol("s");
  const cases = {
    blob: () => new Blob([S]),
    file: () => new File(["x"], S),
    headersValue: () => new Headers({ a: S }),
    headersAppend: () => new Headers().append("a", S),
    urlCtor: () => new URL(S),
    urlSearch: () => new URLSearchParams({ a: S }),
    encoder: () => new TextEncoder().encode(S),
    response: () => new Response(S),
    requestMethod: () => new Request("https://a.example/", { method: S }),
    eventType: () => new Event(S),
    formData: () => new FormData().append("a", S),
    atob: () => atob(S),
    btoa: () => btoa(S),
    fetchUrl: () => fetch(S),
  };
  for (const [k, f] of Object.entries(cases)) out[k] = await msg(f);
  return out;`;

const TIMEOUTS = `
const out = {};
  for (const [k, v] of [["neg", -1], ["nan", NaN], ["str", "x"], ["big", 2 ** 53], ["inf", Infinity], ["frac", 0.5], ["undef", undefined], ["numstr", "5"], ["neg2", -(2 ** 40)]]) {
    try {
      const s = AbortSignal.timeout(v);
      const sync = s.aborted;
      await new Promise((r) => setTimeout(r, 30));
      out[k] = [sync, s.aborted, s.reason?.name ?? null];
    } catch (e) { out[k] = e.name + ": " + e.message; }
  }
  return out;`;

test("a Symbol where a Web API takes a string is a TypeError, as in workerd", async (t) => {
  const SYMBOL_ERROR = "TypeError: Cannot convert a Symbol value to a string";
  assert.deepEqual(await evalInWorker(t, SYMBOLS), Object.fromEntries(["blob", "file", "headersValue", "headersAppend", "urlCtor", "urlSearch", "encoder", "response", "requestMethod", "eventType", "formData", "atob", "btoa", "fetchUrl"].map((key) => [key, SYMBOL_ERROR])));
});

test("AbortSignal.timeout() takes any number as workerd does", async (t) => {
  assert.deepEqual(await evalInWorker(t, TIMEOUTS), {
    neg: [
      false,
      true,
      "TimeoutError"
    ],
    nan: [
      false,
      true,
      "TimeoutError"
    ],
    str: [
      false,
      true,
      "TimeoutError"
    ],
    big: [
      false,
      false,
      null
    ],
    inf: [
      false,
      false,
      null
    ],
    frac: [
      false,
      true,
      "TimeoutError"
    ],
    undef: [
      false,
      true,
      "TimeoutError"
    ],
    numstr: [
      false,
      true,
      "TimeoutError"
    ],
    neg2: [
      false,
      true,
      "TimeoutError"
    ]
  });
});

const HTTP = `
  const out = {};
  for (const m of ["GET", "get", "PATCH", "patch", "PURGE", "TRACE", "PROPFIND", "MSEARCH", "M-SEARCH", "CONNECT", "LINK", "custom", "a b"]) {
    try { out[m] = new Request("https://a.example/", { method: m }).method; } catch (e) { out[m] = e.name + ": " + e.message; }
  }
  for (const [k, s] of [["float", 201.7], ["string", "204.9"], ["nan", NaN], ["infinity", Infinity], ["negative", -1], ["huge", 2 ** 32 + 200]]) {
    try { out["status " + k] = new Response(null, { status: s }).status; } catch (e) { out["status " + k] = e.name; }
  }
  for (const [k, v] of [["undefined", undefined], ["function", () => 1], ["symbol", Symbol()]]) {
    const r = Response.json(v);
    out["json " + k] = [await r.text(), r.headers.get("content-type")];
  }
  return out;`;

test("Request methods, Response statuses and Response.json() as workerd converts them", async (t) => {
  assert.deepEqual(await evalInWorker(t, HTTP, { compatibilityDate: "2025-10-01" }), {
    "GET": "GET",
    "get": "GET",
    "PATCH": "PATCH",
    "patch": "PATCH",
    "PURGE": "PURGE",
    "TRACE": "TRACE",
    "PROPFIND": "PROPFIND",
    "MSEARCH": "MSEARCH",
    "M-SEARCH": "TypeError: Invalid HTTP method string: M-SEARCH",
    "CONNECT": "TypeError: Invalid HTTP method string: CONNECT",
    "LINK": "TypeError: Invalid HTTP method string: LINK",
    "custom": "TypeError: Invalid HTTP method string: custom",
    "a b": "TypeError: Invalid HTTP method string: a b",
    "status float": 201,
    "status string": 204,
    "status nan": "RangeError",
    "status infinity": "RangeError",
    "status negative": "RangeError",
    "status huge": "TypeError",
    "json undefined": [
      "undefined",
      "application/json"
    ],
    "json function": [
      "undefined",
      "application/json"
    ],
    "json symbol": [
      "undefined",
      "application/json"
    ]
  });
});
