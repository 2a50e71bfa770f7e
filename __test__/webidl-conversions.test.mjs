// Web IDL conversions as workerd makes them, for the strings and numbers the Web APIs take: a
// Symbol given where a string is expected is V8's TypeError ("Cannot convert a Symbol value to a
// string"; `String(symbol)` would have made "Symbol(s)"), and AbortSignal.timeout() takes any
// number (NaN, negative or not a number: at once; Infinity: never). Every expected value was
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
