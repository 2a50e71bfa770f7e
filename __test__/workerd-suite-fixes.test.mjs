// Members workerd has that its own test suite (scripts/workerd-tests.mjs) found missing here:
// node:assert's partialDeepStrictEqual, node:stream's duplexPair and get/setDefaultHighWaterMark,
// node:util's parseEnv and log, node:crypto's SecretKeyObject/PublicKeyObject/PrivateKeyObject, and the
// `Cloudflare` global with its compatibilityFlags. Every expected value was printed by workerd
// (Miniflare 4.20260426.0, compatibility date 2025-10-01, nodejs_compat) from the same code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const OPTIONS = { compatibilityDate: "2025-10-01", compatibilityFlags: ["nodejs_compat"] };
const PREFIX = `
  const res = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return [e?.name, e?.code ?? null, String(e?.message).split("\\n")[0]]; } };`;

test("node:assert partialDeepStrictEqual passes and fails as workerd's", async (t) => {
  const body = `${PREFIX}
    const assert = (await import("node:assert")).default;
    const P = assert.partialDeepStrictEqual;
    const cyc1 = { a: 1, b: 2 }; cyc1.self = cyc1; const cyc2 = { a: 1 }; cyc2.self = cyc2;
    return [
      res(() => P({ a: 1, b: 2 }, { a: 1 })), res(() => P({ a: 1 }, { a: 2 })), res(() => P({ a: 1 }, { a: 1, b: 2 })),
      res(() => P([1, 2, 3], [1, 2])), res(() => P([1, 2, 3], [3, 1])), res(() => P([1, 2, 3], [2, 3])), res(() => P([1, 2], [1, 2, 3])), res(() => P([1, 1, 2], [1, 1])), res(() => P([1, 2], [1, 1])),
      res(() => P(new Set([1, 2, 3]), new Set([2]))), res(() => P(new Set([{ a: 1, b: 2 }]), new Set([{ a: 1 }]))), res(() => P(new Set([1]), new Set([2]))),
      res(() => P(new Map([["a", { x: 1, y: 2 }]]), new Map([["a", { x: 1 }]]))), res(() => P(new Map([["a", 1]]), new Map([["b", 1]]))),
      res(() => P(new Date(1), new Date(1))), res(() => P(new Date(1), new Date(2))), res(() => P(/a/g, /a/g)), res(() => P(/a/g, /a/i)),
      res(() => P(new Error("x"), new Error("x"))), res(() => P(cyc1, cyc2)), res(() => P(1, "1")), res(() => P(NaN, NaN)), res(() => P(0, -0)),
      res(() => P({ a: [1, { b: 2, c: 3 }] }, { a: [{ b: 2 }] })), res(() => P({ a: 1 }, [])), res(() => P(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2]))),
      res(() => P(Object.create(null), {})), res(() => P({ a: undefined }, {})), res(() => P({}, { a: undefined })),
      res(() => P({ a: 1 }, { a: 2 }, "custom")), typeof (await import("node:assert/strict")).default.partialDeepStrictEqual,
    ];`;
  const F = ["AssertionError", "ERR_ASSERTION", "Expected actual to be partially deeply strictly equal to expected"];
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), [
    "ok", F, F,
    "ok", F, F, F, "ok", F,
    "ok", F, F,
    "ok", F,
    "ok", F, "ok", F,
    "ok", "ok", F, "ok", F,
    F, F, "ok",
    F, "ok", F,
    ["AssertionError", "ERR_ASSERTION", "custom"], "function",
  ]);
});

test("node:stream duplexPair and the default high water marks are workerd's", async (t) => {
  const body = `${PREFIX}
    const stream = await import("node:stream");
    const out = {};
    out.duplexPair = await new Promise((resolve) => {
      const [a, b] = stream.duplexPair();
      const got = [];
      b.on("data", (d) => got.push(String(d)));
      b.on("end", () => resolve([a instanceof stream.Duplex, got, a.readableHighWaterMark, a.writableHighWaterMark]));
      a.write("hello "); a.write("world"); a.end();
    });
    out.hwm = [stream.getDefaultHighWaterMark(false), stream.getDefaultHighWaterMark(true), new stream.Readable().readableHighWaterMark, new stream.Writable().writableHighWaterMark];
    stream.setDefaultHighWaterMark(false, 1024);
    out.hwmSet = [stream.getDefaultHighWaterMark(false), new stream.Readable().readableHighWaterMark, new stream.PassThrough().writableHighWaterMark, new stream.Readable({ objectMode: true }).readableHighWaterMark];
    out.hwmBad = [res(() => stream.setDefaultHighWaterMark(false, -1)), res(() => stream.setDefaultHighWaterMark(false, "x")), res(() => stream.setDefaultHighWaterMark(false, 1.5))];
    stream.setDefaultHighWaterMark(false, 65536);
    return out;`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    duplexPair: [true, ["hello ", "world"], 65536, 65536],
    hwm: [65536, 16, 65536, 65536],
    hwmSet: [1024, 1024, 1024, 16],
    hwmBad: [
      ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "value" is out of range. It must be >= 0 && <= 9007199254740991. Received -1'],
      ["TypeError", "ERR_INVALID_ARG_TYPE", "The \"value\" argument must be of type number. Received type string ('x')"],
      ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "value" is out of range. It must be an integer. Received 1.5'],
    ],
  });
});

test("node:util parseEnv reads a dotenv file as workerd's", async (t) => {
  const body = `${PREFIX}
    const util = await import("node:util");
    return [util.parseEnv("A=1\\nB='x y'\\n# c\\nexport C=\\"q\\\\nr\\"\\nD\\n E = f g # h\\nF=\`a'b\\"c\`\\nG=\\"un\\nH=2\\nI='a\\\\nb'\\nJ=\\"multi\\nline\\"\\n"), res(() => util.parseEnv(null)), res(() => util.parseEnv(1)), util.parseEnv(""), util.parseEnv("X=1\\r\\nY=2")];`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), [
    { A: "1", B: "x y", C: "q\nr", E: "f g", F: "a'b\"c", G: "un\nH=2\nI='a\nb'\nJ=" },
    ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "content" argument must be of type string. Received null'],
    ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "content" argument must be of type string. Received type number (1)'],
    {},
    { X: "1", Y: "2" },
  ]);
});

test("node:crypto exports SecretKeyObject, PublicKeyObject and PrivateKeyObject as workerd does", async (t) => {
  const body = `
    const crypto = await import("node:crypto");
    const k = crypto.createSecretKey(new Uint8Array(16));
    const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");
    return {
      names: ["SecretKeyObject", "PublicKeyObject", "PrivateKeyObject", "KeyObject"].map((n) => [n, typeof crypto[n], crypto[n]?.name]),
      inst: [k instanceof crypto.SecretKeyObject, publicKey instanceof crypto.PublicKeyObject, privateKey instanceof crypto.PrivateKeyObject, k instanceof crypto.KeyObject, Object.getPrototypeOf(crypto.SecretKeyObject) === crypto.KeyObject],
      defaultKeys: Object.keys(crypto.default ?? {}).filter((n) => /KeyObject/.test(n)).sort(),
    };`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    names: [["SecretKeyObject", "function", "SecretKeyObject"], ["PublicKeyObject", "function", "PublicKeyObject"], ["PrivateKeyObject", "function", "PrivateKeyObject"], ["KeyObject", "function", "KeyObject"]],
    inst: [true, true, true, true, true],
    defaultKeys: ["KeyObject", "PrivateKeyObject", "PublicKeyObject", "SecretKeyObject"],
  });
});

test("the Cloudflare global gives the compatibility flags' state as workerd's", async (t) => {
  const body = `
    const C = globalThis.Cloudflare;
    const f = C.compatibilityFlags;
    const d = Object.getOwnPropertyDescriptor(globalThis, "Cloudflare");
    return {
      desc: { enumerable: d.enumerable, writable: d.writable, configurable: d.configurable, get: typeof d.get },
      keys: Object.getOwnPropertyNames(C), protoKeys: Object.getOwnPropertyNames(Object.getPrototypeOf(C)), tag: Object.prototype.toString.call(C),
      flagsTag: Object.prototype.toString.call(f), frozen: Object.isFrozen(f),
      sample: ["formdata_parser_supports_files", "nodejs_compat", "nodejs_compat_v2", "url_standard", "capture_async_api_throws", "upper_case_all_http_methods", "formdata_parser_converts_files_to_strings", "experimental", "no_such_flag"].map((k) => [k, f[k], k in f]),
      same: C.compatibilityFlags === f,
      assign: (() => { try { f.nodejs_compat = false; return f.nodejs_compat; } catch (e) { return e.name; } })(),
    };`;
  const flag = (name, value) => [name, value ?? null, value !== undefined];
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    desc: { enumerable: true, writable: true, configurable: true, get: "undefined" },
    keys: ["compatibilityFlags"], protoKeys: ["constructor"], tag: "[object Cloudflare]",
    flagsTag: "[object Object]", frozen: true,
    sample: [
      flag("formdata_parser_supports_files", true), flag("nodejs_compat", true), flag("nodejs_compat_v2", true), flag("url_standard", true),
      flag("capture_async_api_throws", true), flag("upper_case_all_http_methods", true), flag("formdata_parser_converts_files_to_strings"), flag("experimental"), flag("no_such_flag"),
    ],
    same: true,
    assign: "TypeError",
  });
  // An old date: the flags of later dates are there, off (workerd printed these at 2021-01-01).
  const old = await evalInWorker(t, `const f = Cloudflare.compatibilityFlags; return ["formdata_parser_supports_files", "url_standard", "nodejs_compat", "global_navigator"].map((k) => [k, f[k]]);`, { compatibilityDate: "2021-01-01" });
  assert.deepEqual(old, [["formdata_parser_supports_files", false], ["url_standard", false], ["nodejs_compat", false], ["global_navigator", false]]);
});

test("node:stream's promises, node:util's styleText and node:constants' names are workerd's", async (t) => {
  const body = `${PREFIX}
    const stream = await import("node:stream");
    const sp = await import("node:stream/promises");
    const util = await import("node:util");
    const constants = (await import("node:constants")).default;
    const PICK = ["POINT_CONVERSION_HYBRID", "TLS1_3_VERSION", "SSL_OP_NO_TLSv1_3", "ENGINE_METHOD_ALL", "DH_CHECK_P_NOT_PRIME", "RSA_PKCS1_PADDING", "O_RDONLY", "S_IFMT", "UV_DIRENT_DIR", "defaultCipherList", "E2BIG"];
    return {
      promises: [typeof stream.promises, stream.promises === sp.default, Object.keys(stream.promises).sort()],
      styleText: [util.styleText("red", "x"), util.styleText(["bold", "underline"], "y"), util.styleText("red", "x", { validateStream: false }), util.styleText(["bold", "red"], "w", { validateStream: false }), res(() => util.styleText("nope", "x")), res(() => util.styleText("red", 1)), util.styleText("none", "z")],
      constants: [Object.keys(constants).length, PICK.map((k) => [k, constants[k]])],
    };`;
  const formats = "'reset', 'bold', 'dim', 'italic', 'underline', 'blink', 'inverse', 'hidden', 'strikethrough', 'doubleunderline', 'black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white', 'bgBlack', 'bgRed', 'bgGreen', 'bgYellow', 'bgBlue', 'bgMagenta', 'bgCyan', 'bgWhite', 'framed', 'overlined', 'gray', 'redBright', 'greenBright', 'yellowBright', 'blueBright', 'magentaBright', 'cyanBright', 'whiteBright', 'bgGray', 'bgRedBright', 'bgGreenBright', 'bgYellowBright', 'bgBlueBright', 'bgMagentaBright', 'bgCyanBright', 'bgWhiteBright'";
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    promises: ["object", true, ["finished", "pipeline"]],
    styleText: [
      "x", "y", "\u001b[31mx\u001b[39m", "\u001b[1m\u001b[31mw\u001b[39m\u001b[22m",
      ["TypeError", "ERR_INVALID_ARG_VALUE", `The argument 'format' must be one of: ${formats}. Received 'nope'`],
      ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "text" argument must be of type string. Received type number (1)'],
      "z",
    ],
    constants: [239, [["POINT_CONVERSION_HYBRID", 6], ["TLS1_3_VERSION", 772], ["SSL_OP_NO_TLSv1_3", 536870912], ["ENGINE_METHOD_ALL", 65535], ["DH_CHECK_P_NOT_PRIME", 1], ["RSA_PKCS1_PADDING", 1], ["O_RDONLY", 0], ["S_IFMT", 61440], ["UV_DIRENT_DIR", 2], ["defaultCipherList", ""], ["E2BIG", 7]]],
  });
});

test("node:fs takes the URL of an old compatibility date (before url_standard) as a path, as workerd does", async (t) => {
  const body = `${PREFIX}
    const fs = await import("node:fs");
    const u = new URL("file:///tmp/probe-url");
    return [
      typeof u.href, res(() => { fs.writeFileSync(u, "foo"); }), res(() => fs.readFileSync(u, "utf8")), res(() => fs.existsSync(new URL("file:///tmp/probe-url"))),
      res(() => fs.readFileSync(new URL("http://example.com/x"))), res(() => fs.readFileSync({ href: "file:///tmp/probe-url", protocol: "file:", pathname: "/tmp/probe-url" }, "utf8")),
    ];`;
  const expected = [
    "string", "ok", "foo", true,
    ["TypeError", null, "File path must be a file: URL"],
    ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "path" argument must be of type string or an instance of Buffer or URL. Received an instance of Object'],
  ];
  assert.deepEqual(await evalInWorker(t, body, { compatibilityDate: "2000-01-01", compatibilityFlags: ["nodejs_compat", "enable_nodejs_fs_module"] }), expected);
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), expected);
});

test("node:util log, aborted's rejection and the _errnoException stubs are workerd's", async (t) => {
  const body = `${PREFIX}
    const util = (await import("node:util")).default;
    const calls = [];
    const original = console.log;
    console.log = (...args) => calls.push(args);
    try { util.log("a %d", 1); } finally { console.log = original; }
    const returned = util.aborted({}, {});
    const rejection = await returned.then(() => "resolved", (e) => [e.name, e.code, e.message]);
    const signal = AbortSignal.timeout(10);
    await util.aborted(signal, {});
    return {
      log: [calls.length, calls[0][0], /^\\d{1,2} [A-Z][a-z]{2} \\d\\d:\\d\\d:\\d\\d$/.test(calls[0][1]), calls[0][2]],
      aborted: [returned instanceof Promise, rejection, signal.aborted],
      stubs: [res(() => util._errnoException()), res(() => util._exceptionWithHostPort())],
    };`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    log: [1, "%s - %s", true, "a 1"],
    aborted: [true, ["TypeError", "ERR_INVALID_ARG_TYPE", 'The "signal" argument must be an instance of AbortSignal. Received an instance of Object'], true],
    stubs: [
      ["Error", "ERR_METHOD_NOT_IMPLEMENTED", "The _errnoException method is not implemented"],
      ["Error", "ERR_METHOD_NOT_IMPLEMENTED", "The _exceptionWithHostPort method is not implemented"],
    ],
  });
});
