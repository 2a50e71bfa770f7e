// The engine generation: V8 15.2 built-ins and syntax that production Workers has, ICU 78's
// Intl output (compared with the host Node's where their ICU versions agree), and no Temporal.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

// Each probe runs inside a worker and returns JSON; `expected` is what V8 15.2 gives.
const probes = [
  ["`using` disposes at the end of its block, in reverse order", `
    const log = [];
    const res = (name) => ({ [Symbol.dispose]() { log.push("dispose " + name); } });
    { using a = res("a"); using b = res("b"); log.push("body"); }
    return log;`, ["body", "dispose b", "dispose a"]],
  ["`await using` awaits Symbol.asyncDispose", `
    const log = [];
    { await using r = { async [Symbol.asyncDispose]() { await null; log.push("async dispose"); } }; log.push("body"); }
    return log;`, ["body", "async dispose"]],
  ["DisposableStack and AsyncDisposableStack", `
    const log = [];
    const stack = new DisposableStack();
    stack.defer(() => log.push(1));
    stack.use({ [Symbol.dispose]: () => log.push(2) });
    stack.dispose();
    const astack = new AsyncDisposableStack();
    astack.defer(async () => log.push(3));
    await astack.disposeAsync();
    let suppressed;
    try { using s = new DisposableStack(); s.defer(() => { throw new Error("in dispose"); }); throw new Error("in body"); }
    catch (e) { suppressed = [e.name, e.error.message, e.suppressed.message]; }
    return { log, disposed: stack.disposed, suppressed };`,
    { log: [2, 1, 3], disposed: true, suppressed: ["SuppressedError", "in dispose", "in body"] }],
  ["Float16Array and Math.f16round", `
    const a = new Float16Array([1.5, 65504, 70000, 0.1]);
    return [Array.from(a), a.BYTES_PER_ELEMENT, Math.f16round(1.337), new DataView(new ArrayBuffer(2)).getFloat16(0)];`,
    [[1.5, 65504, null, 0.0999755859375], 2, 1.3369140625, 0]],
  ["RegExp.escape", `return [RegExp.escape("a.b*c"), new RegExp(RegExp.escape("1+1=2")).test("1+1=2")];`,
    ["\\x61\\.b\\*c", true]],
  ["Error.isError", `return [Error.isError(new TypeError()), Error.isError({ name: "Error", message: "" }), Error.isError(new DOMException("x"))];`,
    [true, false, true]],
  ["Uint8Array.fromBase64 / toBase64 / fromHex / toHex / setFromBase64", `
    const bytes = Uint8Array.fromBase64("3q2+7w==");
    const target = new Uint8Array(4);
    const written = target.setFromHex("cafe");
    return [Array.from(bytes), bytes.toBase64(), bytes.toBase64({ alphabet: "base64url", omitPadding: true }), bytes.toHex(),
      Array.from(Uint8Array.fromHex("00ff10")), written, Array.from(target)];`,
    [[222, 173, 190, 239], "3q2+7w==", "3q2-7w", "deadbeef", [0, 255, 16], { read: 4, written: 2 }, [202, 254, 0, 0]]],
  ["Math.sumPrecise", `return [Math.sumPrecise([1e20, 0.1, -1e20]), [1e20, 0.1, -1e20].reduce((a, b) => a + b)];`, [0.1, 0]],
  ["Iterator.concat and iterator helpers", `
    return [[...Iterator.concat([1, 2], new Set([3]))], Iterator.from([1, 2, 3, 4]).filter((x) => x % 2).map((x) => x * 10).toArray()];`,
    [[1, 2, 3], [10, 30]]],
  ["Map/WeakMap getOrInsert and getOrInsertComputed", `
    const m = new Map([["a", 1]]);
    const w = new WeakMap();
    const key = {};
    return [m.getOrInsert("a", 9), m.getOrInsert("b", 2), m.getOrInsertComputed("c", (k) => k + "!"), [...m], w.getOrInsert(key, 5), w.get(key)];`,
    [1, 2, "c!", [["a", 1], ["b", 2], ["c", "c!"]], 5, 5]],
  ["Atomics.pause", `return [typeof Atomics.pause, Atomics.pause(), Atomics.pause(10)];`, ["function", null, null]],
  ["Promise.try, Array.fromAsync, RegExp modifiers, duplicate named groups, Set methods", `
    const fromAsync = await Array.fromAsync((async function* () { yield 1; yield 2; })());
    return [await Promise.try(() => 7), fromAsync, /(?i:a)b/.test("Ab"), "2024-05".replace(/(?<y>\\d{4})-(?<m>\\d{2})|(?<m>\\d{2})\\/(?<y>\\d{4})/, "$<m>.$<y>"),
      [...new Set([1, 2, 3]).intersection(new Set([2, 3, 4]))], new Set([1]).isSubsetOf(new Set([1, 2]))];`,
    [7, [1, 2], true, "05.2024", [2, 3], true]],
];

for (const [name, body, expected] of probes) {
  test(`V8 15.2 inside a worker: ${name}`, async (t) => {
    assert.deepEqual(await evalInWorker(t, body), expected);
  });
}

test("Temporal is not defined (this V8 is built without it)", async (t) => {
  assert.deepEqual(await evalInWorker(t, `return [typeof Temporal, "Temporal" in globalThis];`), ["undefined", false]);
});

// Formatting calls run in the worker and on the host alike; `Date.UTC` keeps them zone-free.
const intlCases = [
  `new Intl.NumberFormat("de-DE", { style: "currency", currency: "EUR" }).format(1234567.891)`,
  `new Intl.NumberFormat("en-IN").format(123456789.123)`,
  `new Intl.NumberFormat("ja-JP", { notation: "compact" }).format(1234567)`,
  `new Intl.NumberFormat("en-US", { style: "unit", unit: "kilometer-per-hour", unitDisplay: "long" }).format(88)`,
  `new Intl.NumberFormat("fr-FR", { style: "percent", maximumFractionDigits: 1 }).format(0.4567)`,
  `new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).formatRange(3, 5)`,
  `new Intl.DateTimeFormat("en-US", { timeZone: "UTC", dateStyle: "full", timeStyle: "long" }).format(Date.UTC(2024, 1, 29, 13, 5, 9))`,
  `new Intl.DateTimeFormat("de-DE", { timeZone: "Europe/Berlin", dateStyle: "medium", timeStyle: "short" }).format(Date.UTC(2024, 6, 1, 10))`,
  `new Intl.DateTimeFormat("ja-JP-u-ca-japanese", { timeZone: "UTC", era: "long", year: "numeric" }).format(Date.UTC(2024, 0, 1))`,
  `new Intl.DateTimeFormat("en-US", { timeZone: "UTC", month: "short", day: "numeric" }).formatRange(Date.UTC(2024, 0, 3), Date.UTC(2024, 0, 9))`,
  `new Intl.DateTimeFormat("en-GB", { timeZone: "UTC", dateStyle: "medium" }).formatRange(Date.UTC(2024, 0, 3), Date.UTC(2024, 2, 9))`,
  `new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", hour: "numeric", minute: "numeric" }).formatRange(Date.UTC(2024, 0, 3, 15), Date.UTC(2024, 0, 3, 17, 30))`,
  `JSON.stringify(new Intl.DateTimeFormat("en-US", { timeZone: "UTC", hour: "numeric", dayPeriod: "short" }).formatToParts(Date.UTC(2024, 0, 1, 15)))`,
  `new Intl.ListFormat("en", { type: "conjunction" }).format(["apples", "pears", "plums"])`,
  `new Intl.ListFormat("es", { type: "disjunction" }).format(["uno", "dos", "tres"])`,
  `new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(-1, "day")`,
  `new Intl.RelativeTimeFormat("fr").format(3, "week")`,
  `new Intl.PluralRules("ar").select(3) + " " + new Intl.PluralRules("en", { type: "ordinal" }).select(22)`,
  `new Intl.DisplayNames(["en"], { type: "region" }).of("DE") + " / " + new Intl.DisplayNames(["de"], { type: "language" }).of("fr-CA")`,
  `["z", "ä", "a", "Z"].sort(new Intl.Collator("de").compare).join()`,
  `["z", "ä", "a"].sort(new Intl.Collator("sv").compare).join()`,
  `Array.from(new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world!")).filter((s) => s.isWordLike).map((s) => s.segment).join("|")`,
  `new Intl.DurationFormat("en", { style: "long" }).format({ hours: 1, minutes: 46, seconds: 40 })`,
  `(1234.5).toLocaleString("hi-IN") + " " + new Date(Date.UTC(2024, 0, 1)).toLocaleDateString("ko-KR", { timeZone: "UTC" })`,
];

test("Intl output matches the host Node's for the same inputs (both ICU 78), but for V8's date/time spaces", async (t) => {
  const hostIcu = Number(process.versions.icu.split(".")[0]);
  if (hostIcu !== 78) {
    t.skip(`the host Node has ICU ${process.versions.icu}, not 78: its output is not comparable`);
    return;
  }
  const inWorker = await evalInWorker(t, `return [${intlCases.map((c) => `(() => { try { return ${c}; } catch (e) { return "ERR " + e.message; } })()`).join(",\n")}];`);
  const onHost = intlCases.map((c) => {
    try {
      return new Function(`return ${c}`)();
    } catch (e) {
      return "ERR " + e.message;
    }
  });
  const missingOnHost = [];
  for (let i = 0; i < intlCases.length; i++) {
    // An older host may lack an API (Node 20 has no Intl.DurationFormat): nothing to compare.
    if (/^ERR .* is not a (constructor|function)$/.test(onHost[i]) && !String(inWorker[i]).startsWith("ERR ")) {
      missingOnHost.push(intlCases[i]);
      continue;
    }
    // Where the two differ on purpose: V8 (so Chrome and workerd too) turns the U+202F and
    // U+2009 spaces that ICU 72+ puts in date/time output back into U+0020 (crbug.com/1414292);
    // Node's own V8 keeps ICU's characters. The worker follows V8, as production does.
    const isDateTime = /DateTimeFormat|toLocale(Date|Time)?String/.test(intlCases[i]);
    if (isDateTime) assert.doesNotMatch(inWorker[i], /[\u2009\u202f]/, intlCases[i]);
    const expected = isDateTime ? onHost[i].replace(/[\u2009\u202f]/g, " ") : onHost[i];
    assert.equal(inWorker[i], expected, `${intlCases[i]}\n  worker: ${JSON.stringify(inWorker[i])}\n  host:   ${JSON.stringify(onHost[i])}`);
  }
  for (const c of missingOnHost) t.diagnostic(`not compared, Node ${process.version} lacks the API: ${c}`);
  assert.ok(missingOnHost.length < intlCases.length / 4, "most cases were compared");
});
