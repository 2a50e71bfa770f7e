// Where workerd's node: modules differ from Node's own, workerbox follows workerd: a cipher's
// string input must name its encoding, timingSafeEqual's length error is a plain TypeError,
// util.format's %o shows non-enumerable properties as Node's does, and path.resolve() starts from
// "/" (not process.cwd()), and Buffer's reads and writes are checked with Node's errors
// (ERR_OUT_OF_RANGE, ERR_BUFFER_OUT_OF_BOUNDS, ERR_INVALID_ARG_TYPE). Every expected value was printed by workerd (Miniflare 4.20260426.0)
// from the same code. The worker runs on loopback only and is disposed when the test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const BODY = `
  const { Buffer } = await import("node:buffer");
  const crypto = await import("node:crypto");
  const util = await import("node:util");
  const path = await import("node:path");
  const error = (f) => { try { f(); return "no error"; } catch (e) { return [e.name, e.code ?? null, e.message]; } };
  const key = Buffer.alloc(32, 1), iv = Buffer.alloc(16, 2);
  return {
    cipherString: error(() => crypto.createCipheriv("aes-256-cbc", key, iv).update("hello")),
    decipherString: error(() => crypto.createDecipheriv("aes-256-cbc", key, iv).update("00")),
    cipherUtf8: crypto.createCipheriv("aes-256-cbc", key, iv).update("hello", "utf8").length,
    timingSafeEqual: error(() => crypto.timingSafeEqual(Buffer.from("a"), Buffer.from("ab"))),
    formatO: [util.format("%o", [1]), util.format("%o", { a: [2] }), util.format("%O", [1])],
    inspectHidden: util.inspect([1], { showHidden: true }),
    resolve: [path.resolve("x"), path.resolve("a", "../b"), path.posix.resolve("y")],
  };`;

test("node: modules follow workerd where it differs from Node", async (t) => {
  assert.deepEqual(await evalInWorker(t, BODY, { compatibilityDate: "2025-10-01", compatibilityFlags: ["nodejs_compat"] }), {
    cipherString: [
      "TypeError",
      "ERR_INVALID_ARG_VALUE",
      "The argument 'inputEncoding' If inputEncoding is not provided then the data must be a Buffer. Received undefined"
    ],
    decipherString: [
      "TypeError",
      "ERR_INVALID_ARG_VALUE",
      "The argument 'inputEncoding' If inputEncoding is not provided then the data must be a Buffer. Received undefined"
    ],
    cipherUtf8: 0,
    timingSafeEqual: [
      "TypeError",
      null,
      "Input buffers must have the same byte length."
    ],
    formatO: [
      "[ 1, [length]: 1 ]",
      "{ a: [ 2, [length]: 1 ] }",
      "[ 1 ]"
    ],
    inspectHidden: "[ 1, [length]: 1 ]",
    resolve: [
      "/x",
      "/b",
      "/y"
    ]
  });
});

const BUFFER = `
  const { Buffer } = await import("node:buffer");
  const out = {};
  const run = (k, f) => { try { const v = f(); out[k] = typeof v === "bigint" ? v + "n" : v; } catch (e) { out[k] = [e.name, e.code ?? null, e.message].join(" | "); } };
  const b8 = () => Buffer.alloc(8);
  run("r32short", () => Buffer.alloc(2).readUInt32LE(0));
  run("r32big", () => b8().readUInt32LE(5));
  run("r8end", () => b8().readUInt8(8));
  run("r8ok", () => b8().readUint8(7));
  run("rneg", () => b8().readUInt8(-1));
  run("rfrac", () => b8().readUInt8(1.5));
  run("rstr", () => b8().readUInt8("1"));
  run("rdouble", () => Buffer.alloc(4).readDoubleLE(0));
  run("rfloat", () => b8().readFloatBE(6));
  run("rint16", () => b8().readInt16BE(7));
  run("ruintle", () => b8().readUIntLE(4, 6));
  run("ruintleW", () => b8().readUIntLE(0, 7));
  run("ruintleU", () => b8().readUIntLE(undefined, 2));
  run("rintbe", () => b8().readIntBE(2, 3));
  run("rbig", () => Buffer.alloc(4).readBigUInt64LE(0));
  run("rbigneg", () => b8().readBigInt64LE(-1));
  run("w32", () => b8().writeUInt32LE(1, 6));
  run("wval", () => b8().writeUInt8(300, 0));
  run("wint8", () => b8().writeInt8(-200, 0));
  run("wint32", () => b8().writeInt32BE(2 ** 31, 0));
  run("wu32", () => b8().writeUInt32LE(2 ** 32, 0));
  run("wok", () => b8().writeUInt16BE(65535, 6));
  run("wuintle6", () => b8().writeUIntLE(2 ** 48, 0, 6));
  run("wintle6", () => b8().writeIntLE(2 ** 47, 0, 6));
  run("wuintle5", () => b8().writeUIntLE(1, 4, 5));
  run("wuintleW", () => b8().writeUIntLE(1, 0, 0));
  run("wdouble", () => b8().writeDoubleLE(1.5, 1));
  run("wfloatok", () => b8().writeFloatLE(1e40, 0));
  run("wbig", () => b8().writeBigUInt64LE(2n ** 64n, 0));
  run("wbigint", () => b8().writeBigInt64LE(2n ** 63n, 0));
  run("wbigoff", () => b8().writeBigInt64LE(1n, 1));
  run("wstroff", () => b8().writeUInt8(1, "0"));
  run("wfrac", () => b8().writeUInt8(1, 0.5));
  run("wvalstr", () => b8().writeUInt8("7", 0));
  return out;`;

test("node:buffer's reads and writes are checked as workerd checks them", async (t) => {
  assert.deepEqual(await evalInWorker(t, BUFFER, { compatibilityDate: "2025-10-01", compatibilityFlags: ["nodejs_compat"] }), {
    r32short: "RangeError | ERR_BUFFER_OUT_OF_BOUNDS | Attempt to access memory outside buffer bounds",
    r32big: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 4. Received 5",
    r8end: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 7. Received 8",
    r8ok: 0,
    rneg: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 && <= 8. Received -1",
    rfrac: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be an integer. Received 1.5",
    rstr: "TypeError | ERR_INVALID_ARG_TYPE | The \"offset\" argument must be of type number. Received type string ('1')",
    rdouble: "RangeError | ERR_BUFFER_OUT_OF_BOUNDS | Attempt to access memory outside buffer bounds",
    rfloat: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 4. Received 6",
    rint16: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 6. Received 7",
    ruintle: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 2. Received 4",
    ruintleW: "RangeError | ERR_OUT_OF_RANGE | The value of \"byteLength\" is out of range. It must be >= 1 and <= 6. Received 7",
    ruintleU: "TypeError | ERR_INVALID_ARG_TYPE | The \"offset\" argument must be of type number. Received undefined",
    rintbe: 0,
    rbig: "RangeError | ERR_BUFFER_OUT_OF_BOUNDS | Attempt to access memory outside buffer bounds",
    rbigneg: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 && <= 8. Received 4294967295",
    w32: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 4. Received 6",
    wval: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= 0 and <= 255. Received 300",
    wint8: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= -128 and <= 127. Received -200",
    wint32: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= -2147483648 and <= 2147483647. Received 2147483648",
    wu32: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= 0 and <= 4294967295. Received 4294967296",
    wok: 8,
    wuintle6: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= 0 and < 2 ** 48. Received 281_474_976_710_656",
    wintle6: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= -(2 ** 47) and < 2 ** 47. Received 140_737_488_355_328",
    wuintle5: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 3. Received 4",
    wuintleW: "RangeError | ERR_OUT_OF_RANGE | The value of \"byteLength\" is out of range. It must be >= 1 and <= 6. Received 0",
    wdouble: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 0. Received 1",
    wfloatok: 4,
    wbig: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= 0n and < 2n ** 64n. Received 18_446_744_073_709_551_616n",
    wbigint: "RangeError | ERR_OUT_OF_RANGE | The value of \"value\" is out of range. It must be >= -(2n ** 63n) and < 2 ** 63n. Received 9_223_372_036_854_775_808n",
    wbigoff: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be >= 0 and <= 0. Received 1",
    wstroff: "TypeError | ERR_INVALID_ARG_TYPE | The \"offset\" argument must be of type number. Received type string ('0')",
    wfrac: "RangeError | ERR_OUT_OF_RANGE | The value of \"offset\" is out of range. It must be an integer. Received 0.5",
    wvalstr: 1
  });
});
