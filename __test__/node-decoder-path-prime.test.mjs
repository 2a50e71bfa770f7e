// node:string_decoder (Node's state buffer and its checks, WHATWG-style U+FFFD for interrupted
// UTF-8, UTF-16 surrogates held back, base64url), node:path's argument checks and path.win32,
// node:crypto's checkPrime/generatePrime with workerd's limits, and querystring.escape.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
async function run(t, imports, body) {
  const worker = await useWorker(t, {
    compatibilityDate: "2026-08-01",
    compatibilityFlags: ["nodejs_compat"],
    script: `${imports}
      const code = (fn) => { try { fn(); return "no error"; } catch (e) { return e.code ?? e.message; } };
      export default { async fetch() { const out = await (async () => { ${body} })(); return Response.json(out); } };`,
  });
  return (await dispatch(worker, "http://w/")).json();
}

test("string_decoder: pieces decode as the whole Buffer; state checks; encodings", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `import { StringDecoder } from "node:string_decoder"; import { Buffer } from "node:buffer";`, `
    const pieces = (encoding, hex, cuts) => {
      const d = new StringDecoder(encoding); const bytes = Buffer.from(hex, "hex"); let out = ""; let at = 0;
      for (const cut of [...cuts, bytes.length]) { out += d.write(bytes.subarray(at, cut)); at = cut; }
      return out + d.end();
    };
    const held = new StringDecoder("utf8");
    held.write(Buffer.from("e1", "hex"));
    const broken = new StringDecoder();
    broken[Object.getOwnPropertySymbols(broken)[0]] = Buffer.alloc(3);
    return {
      interrupted: [pieces("utf8", "f0b841", [1]), pieces("utf8", "e2fbcc01", [2]), pieces("utf8", "f69bd1", [2])],
      surrogate: pieces("utf16le", "3dd84ddc", [1, 2, 3]),
      base64url: [pieces("base64url", "616161", [1]), pieces("base64", "61", [])],
      state: [held.lastNeed, held.lastTotal, [...held.lastChar]],
      errors: [code(() => new StringDecoder("nope")), code(() => new StringDecoder().write(null)), code(() => broken.write(Buffer.from("x")))],
      whole: Buffer.from("f0b841", "hex").toString(),
    };`);
  assert.deepEqual(out, {
    interrupted: ["\ufffdA", "\ufffd\ufffd\ufffd\u0001", "\ufffd\ufffd\ufffd"],
    surrogate: "\ud83d\udc4d",
    base64url: ["YWFh", "YQ=="],
    state: [2, 3, [0xe1, 0, 0, 0]],
    errors: ["ERR_UNKNOWN_ENCODING", "ERR_INVALID_ARG_TYPE", "Invalid StringDecoder"],
    whole: "\ufffdA",
  });
});

test("path: ERR_INVALID_ARG_TYPE for non-strings, format() checks, path.win32 is the Windows half", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `import path from "node:path"; import win32 from "node:path/win32";`, `
    return {
      types: [code(() => path.join(1)), code(() => path.basename("a", 1)), code(() => path.relative("a", null)), code(() => path.format("x"))],
      format: [path.format({ name: "x", ext: "png" }), path.format({ root: "/", name: "i", ext: ".html" })],
      win32: [path.win32 === win32, path.win32.sep, path.win32.normalize("a//b//../b"), path.posix === path],
    };`);
  assert.deepEqual(out, {
    types: ["ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE"],
    format: ["x.png", "/i.html"],
    win32: [true, "\\", "a\\b", true],
  });
});

test("crypto: checkPrime/generatePrime, sync and with callbacks, with workerd's checks", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `import crypto from "node:crypto"; import { Buffer } from "node:buffer";`, `
    const safe = Buffer.from(crypto.generatePrimeSync(32, { safe: true })).readUInt32BE();
    const withRem = Buffer.from(crypto.generatePrimeSync(32, { add: 12n, rem: 11n })).readUInt32BE();
    const viaCallback = await new Promise((resolve, reject) => crypto.generatePrime(64, { bigint: true }, (e, p) => (e ? reject(e) : resolve(p))));
    const checked = await new Promise((resolve, reject) => crypto.checkPrime(viaCallback, (e, r) => (e ? reject(e) : resolve(r))));
    const refused = await new Promise((resolve) => crypto.generatePrime(16, { add: 5n }, (e) => resolve(e && e.name)));
    return {
      small: [crypto.checkPrimeSync(Buffer.from([2])), crypto.checkPrimeSync(Buffer.from([4])), crypto.checkPrimeSync(7919n), crypto.checkPrimeSync(7917n)],
      three: String(crypto.generatePrimeSync(3, { bigint: true })),
      safe: [crypto.checkPrimeSync(BigInt(safe)), crypto.checkPrimeSync(BigInt((safe - 1) / 2)), safe >= 2 ** 31],
      withRem: [withRem % 12, crypto.checkPrimeSync(BigInt(withRem))],
      viaCallback: [typeof viaCallback, viaCallback.toString(2).length, checked],
      refused,
      errors: [code(() => crypto.checkPrimeSync(1)), code(() => crypto.checkPrimeSync(2n, { checks: -1 })), code(() => crypto.generatePrimeSync(0)),
        code(() => crypto.generatePrimeSync(8, { add: 12n })), code(() => crypto.checkPrime(-1n, () => {})), code(() => crypto.generatePrime(8, {}))],
    };`);
  assert.deepEqual(out, {
    small: [true, false, true, false],
    three: "7",
    safe: [true, true, true],
    withRem: [11, true],
    viaCallback: ["bigint", 64, true],
    refused: "RangeError",
    errors: ["ERR_INVALID_ARG_TYPE", "ERR_OUT_OF_RANGE", "ERR_OUT_OF_RANGE", "Invalid values for add and rem", "ERR_OUT_OF_RANGE", "ERR_INVALID_ARG_TYPE"],
  });
});

test("querystring.escape: Node's UTF-8 escaping, its surrogate pairing and ERR_INVALID_URI", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `import qs from "node:querystring";`, `
    return {
      escaped: [qs.escape("a b&c=d/é!~*()'"), qs.escape(String.fromCharCode(0xd801) + "test"), qs.escape([5, 10]), qs.escape({ toString: 5, valueOf: () => "v" })],
      lone: code(() => qs.escape(String.fromCharCode(0xd801))),
    };`);
  assert.deepEqual(out, {
    escaped: ["a%20b%26c%3Dd%2F%C3%A9!~*()'", "%F0%90%91%B4est", "5%2C10", "v"],
    lone: "ERR_INVALID_URI",
  });
});
