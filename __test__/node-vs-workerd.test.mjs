// Where workerd's node: modules differ from Node's own, workerbox follows workerd: a cipher's
// string input must name its encoding, timingSafeEqual's length error is a plain TypeError,
// util.format's %o shows non-enumerable properties as Node's does, and path.resolve() starts from
// "/" (not process.cwd()). Every expected value was printed by workerd (Miniflare 4.20260426.0)
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
