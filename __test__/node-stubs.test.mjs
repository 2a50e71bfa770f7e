// The node: modules workerd stubs or partly implements (fs, os, net, http, child_process, …), the
// fuller `process` of enable_nodejs_process_v2, and node:http's client over fetch(): each
// imports with nodejs_compat, has workerd's shape, and throws workerd's ERR_METHOD_NOT_IMPLEMENTED
// ("The <name> method is not implemented") where workerd does.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import path from "node:path";
import { createWorker, dispatch } from "../index.js";
import { useWorker, waitFor } from "./helpers.mjs";

/** Runs `body` (an async function body with `m` = the module namespaces below) in a worker. */
async function run(t, imports, body, options = {}) {
  const logs = [];
  const script = `${imports}
    export default { async fetch() {
      const notImpl = (fn) => { try { fn(); return "no error"; } catch (e) { return [e.code, e.message]; } };
      const rejects = async (p) => { try { await p; return "no error"; } catch (e) { return [e.code, e.message]; } };
      try { return Response.json(await (async () => { ${body} })()); } catch (e) { return Response.json({ threw: String(e.stack) }); }
    } }`;
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"], onLog: (level, message) => logs.push([level, message]), ...options });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  return { result, logs };
}

test("process v2: version, versions, argv, pid, cwd/chdir, hrtime, uptime, emitWarning, events, stubs", async (t) => {
  const { result, logs } = await run(t, `import process from "node:process";`, `
    const warnings = [];
    process.on("warning", (w) => warnings.push([w.name, w.message, w.code]));
    process.emitWarning("careful", "DeprecationWarning", "DEP0001");
    await null; await null;
    const cwd1 = process.cwd(); process.chdir("../tmp"); const cwd2 = process.cwd(); process.chdir("/bundle");
    const [s, ns] = process.hrtime();
    const diff = process.hrtime([s, ns]);
    process.stdout.write("to stdout\\n");
    return {
      same: process === globalThis.process,
      version: process.version, node: process.versions.node, v8: process.versions.v8,
      fixed: [process.title, process.argv, process.argv0, process.execArgv, process.pid, process.ppid, process.arch, process.platform, process.release.name],
      cwd: [cwd1, cwd2],
      hrtime: [Number.isInteger(s), Number.isInteger(ns), ns < 1e9, diff[0] >= 0, typeof process.hrtime.bigint()],
      uptime: process.uptime(), umask: process.umask(), memory: process.memoryUsage().heapUsed, uid: process.getuid(),
      warnings,
      emitter: [typeof process.on, typeof process.emit, process.listenerCount("warning")],
      kill: notImpl(() => process.kill(1)),
      cpuUsage: notImpl(() => process.cpuUsage()),
      setuid: notImpl(() => process.setuid(5)),
      report: typeof process.report.getReport(),
    };`);
  assert.deepEqual(result, {
    same: true,
    version: "v22.19.0", node: "22.19.0", v8: "",
    fixed: ["workerd", ["workerd"], "workerd", [], 1, 0, "x64", "linux", "node"],
    cwd: ["/bundle", "/tmp"],
    hrtime: [true, true, true, true, "bigint"],
    uptime: 0, umask: 18, memory: 0, uid: 0,
    warnings: [["DeprecationWarning", "careful", "DEP0001"]],
    emitter: ["function", "function", 1],
    kill: ["ERR_METHOD_NOT_IMPLEMENTED", "The process.kill method is not implemented"],
    cpuUsage: ["ERR_METHOD_NOT_IMPLEMENTED", "The process.cpuUsage method is not implemented"],
    setuid: ["EPERM", "EPERM: operation not permitted, setuid"],
    report: "object",
  });
  await waitFor(() => logs.some(([, message]) => message === "to stdout"));
});

test("process v2 is off before 2025-09-15 or with disable_nodejs_process_v2: the legacy process has no version", async (t) => {
  const probe = `import process from "node:process";`;
  const body = `return [process.version ?? null, typeof process.cwd, typeof process.nextTick];`;
  assert.deepEqual((await run(t, probe, body, { compatibilityDate: "2025-09-14" })).result, [null, "undefined", "function"]);
  assert.deepEqual((await run(t, probe, body, { compatibilityFlags: ["nodejs_compat", "disable_nodejs_process_v2"] })).result, [null, "undefined", "function"]);
});

const STUB_IMPORTS = `
import fs from "node:fs"; import fsp from "node:fs/promises"; import os from "node:os"; import net from "node:net";
import tls from "node:tls"; import dns from "node:dns"; import dnsp from "node:dns/promises"; import http from "node:http";
import https from "node:https"; import http2 from "node:http2"; import Module, { createRequire, isBuiltin, builtinModules } from "node:module";
import perf from "node:perf_hooks"; import punycode from "node:punycode"; import wt from "node:worker_threads";
import cp from "node:child_process"; import win32 from "node:path/win32"; import cluster from "node:cluster";
import dgram from "node:dgram"; import inspector from "node:inspector"; import readline from "node:readline";
import rlp from "node:readline/promises"; import repl from "node:repl"; import sqlite from "node:sqlite";
import traceEvents from "node:trace_events"; import tty from "node:tty"; import v8 from "node:v8"; import vm from "node:vm";
import wasi from "node:wasi"; import domain from "node:domain"; import constants from "node:constants"; import sys from "node:sys";
import util from "node:util"; import tp from "node:timers/promises"; import stream from "node:stream";
import readable from "node:_stream_readable"; import path from "node:path"; import inspectorP from "node:inspector/promises";
`;

test("stubbed and partial node: modules import, with workerd's shapes, values and not-implemented errors", async (t) => {
  const { result } = await run(t, STUB_IMPORTS, `
    const require = createRequire("/src/app.js");
    let ran;
    domain.createDomain().run(() => { ran = "ran"; }); // workerd's domain.create is a Domain, not a function
    const socket = dgram.createSocket("udp4");
    return {
      fs: [notImpl(() => fs.readFileSync("/x")), await rejects(fsp.readFile("/x")), fs.existsSync("/x"), fs.constants.O_RDONLY, fs.F_OK, fsp === fs.promises, notImpl(() => fs.watch("/tmp")), notImpl(() => fs.watchFile("/tmp"))],
      os: [os.EOL, os.platform(), os.arch(), os.type(), os.tmpdir(), os.homedir(), os.cpus(), os.constants.signals.SIGTERM, os.constants.errno.ENOENT, os.availableParallelism()],
      // Client sockets work (__test__/sockets-node-net.test.mjs); servers throw workerd's errors.
      net: [net.isIP("10.0.0.1"), net.isIP("::1"), net.isIP("nope"), (() => { try { net.createServer(); } catch (error) { return error.message; } })()],
      tls: [tls.DEFAULT_MIN_VERSION, typeof tls.TLSSocket, (() => { try { tls.createServer(); } catch (error) { return error.message; } })()],
      dns: [await rejects(dnsp.lookup("example.com")), dns.promises === dnsp, await new Promise((r) => dns.lookup("example.com", (e) => r(e.code)))],
      http: [http.STATUS_CODES[418], http.METHODS.includes("PATCH"), typeof https.request, typeof http.Agent, typeof http.createServer().listen],
      http2: [http2.constants.HTTP2_HEADER_STATUS, http2.constants.HTTP_STATUS_NOT_FOUND, notImpl(() => http2.connect("https://x"))],
      module: [typeof Module, require("node:path") === path, require("path").join("a", "b"), isBuiltin("node:fs"), isBuiltin("nope"), builtinModules.includes("os"), notImpl(() => Module.register())],
      perf: [perf.performance === globalThis.performance, typeof perf.performance.now(), perf.constants.NODE_PERFORMANCE_GC_MAJOR, notImpl(() => perf.monitorEventLoopDelay())],
      punycode: [punycode.toASCII("mañana.com"), punycode.toUnicode("xn--maana-pta.com"), punycode.encode("bücher"), punycode.version],
      worker_threads: [wt.isMainThread, wt.threadId, wt.parentPort, notImpl(() => new wt.Worker("x.js"))],
      child_process: [notImpl(() => cp.spawn("ls")), notImpl(() => cp.execSync("ls")), notImpl(() => new cp.ChildProcess())],
      win32: [win32.sep, win32.delimiter, win32.join("a", "b"), notImpl(() => win32.matchesGlob("a", "*"))],
      cluster: [cluster.isPrimary, cluster.isWorker, notImpl(() => cluster.fork())],
      dgram: [socket.bind() === socket, JSON.stringify(socket.address())],
      inspector: [inspector.url() ?? null, typeof inspector.console.log, notImpl(() => new inspector.Session()), inspectorP === inspector],
      readline: [typeof readline.createInterface().question, readline.clearLine(), typeof rlp.createInterface().question],
      repl: [notImpl(() => repl.start()), repl.builtinModules.includes("fs")],
      sqlite: [notImpl(() => new sqlite.DatabaseSync(":memory:")), sqlite.constants.SQLITE_INSERT],
      trace_events: [traceEvents.createTracing({ categories: ["a", "b"] }).categories],
      tty: [tty.isatty(1), new tty.WriteStream(1).isTTY],
      v8: [v8.getHeapStatistics().used_heap_size, notImpl(() => v8.serialize({}))],
      vm: [notImpl(() => new vm.Script("1").runInThisContext()), vm.isContext(vm.createContext({}))],
      wasi: [notImpl(() => new wasi.WASI())],
      domain: [ran, domain.active],
      constants: [constants.ENOENT, constants.SIGKILL, constants.RTLD_NOW],
      sys: sys === util,
      timersPromises: typeof tp.setTimeout,
      streamAlias: readable === stream.Readable,
    };`);
  const ni = (name) => ["ERR_METHOD_NOT_IMPLEMENTED", `The ${name} method is not implemented`];
  assert.deepEqual(result, {
    fs: [["ENOENT", "ENOENT: no such file or directory, open '/x'"], ["ENOENT", "ENOENT: no such file or directory, open '/x'"], false, 0, 0, true, ni("fs.watch"), ni("fs.watchFile")],
    os: ["\n", "linux", "x64", "Linux", "/tmp/", "/tmp/", [], 15, 2, 1],
    net: [4, 6, 0, "createServer() is not implemented"],
    tls: ["TLSv1.2", "function", "Not implemented"],
    dns: [ni("dns.promises.lookup"), true, "ERR_METHOD_NOT_IMPLEMENTED"],
    http: ["I'm a Teapot", true, "function", "function", "function"],
    http2: [":status", 404, ni("http2.connect")],
    module: ["function", true, "a/b", true, false, true, ni("module.register")],
    perf: [true, "number", 4, ni("monitorEventLoopDelay")],
    punycode: ["xn--maana-pta.com", "mañana.com", "bcher-kva", "2.1.0"],
    worker_threads: [true, 0, null, ni("Worker")],
    child_process: [ni("child_process.spawn"), ni("child_process.execSync"), ni("child_process.ChildProcess")],
    win32: ["\\", ";", "a\\b", ni("path.win32.matchesGlob")],
    cluster: [true, false, ni("cluster.fork")],
    dgram: [true, "{}"],
    inspector: [null, "function", ni("Session"), true],
    readline: ["function", false, "function"],
    repl: [ni("start"), true],
    sqlite: [[null, "Illegal constructor"], 18],
    trace_events: ["a,b"],
    tty: [false, true], // workerd's WriteStream says it is a TTY (of 0x0)
    v8: [0, ni("serialize")],
    vm: [ni("runInThisContext"), true],
    wasi: [ni("WASI")],
    domain: ["ran", null],
    constants: [2, 9, 2],
    sys: true,
    timersPromises: "function",
    streamAlias: true,
  });
});

test("node:http's client runs over fetch(): request with headers and a body, get, status and response headers", async (t) => {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      res.writeHead(req.url === "/missing" ? 404 : 201, { "content-type": "application/json", "x-reply": "yes" });
      res.end(JSON.stringify({ method: req.method, url: req.url, body, custom: req.headers["x-custom"] ?? null }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}`;
  const { result } = await run(t, `import http from "node:http";`, `
    const collect = (res) => new Promise((resolve, reject) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode, message: res.statusMessage, type: res.headers["content-type"], reply: res.headers["x-reply"], body: JSON.parse(text) }));
      res.on("error", reject);
    });
    const posted = await new Promise((resolve, reject) => {
      const req = http.request("${base}/items?x=1", { method: "POST", headers: { "x-custom": "abc" } }, (res) => collect(res).then(resolve, reject));
      req.on("error", reject);
      req.write("hello ");
      req.end("world");
    });
    const got = await new Promise((resolve, reject) => http.get({ hostname: "127.0.0.1", port: ${server.address().port}, path: "/missing" }, (res) => collect(res).then(resolve, reject)).on("error", reject));
    // As workerd's: fetch() fails after the request ended, so the failure is logged, not emitted.
    const failed = await new Promise((resolve) => {
      const req = http.get("http://127.0.0.1:1/", () => resolve("answered"));
      req.on("error", (e) => resolve(e.name));
      setTimeout(() => resolve(req.destroyed ? "destroyed, no error event" : "pending"), 500);
    });
    return { posted, got, failed };`);
  assert.deepEqual(result.posted, { status: 201, message: "Created", type: "application/json", reply: "yes", body: { method: "POST", url: "/items?x=1", body: "hello world", custom: "abc" } });
  assert.deepEqual(result.got, { status: 404, message: "Not Found", type: "application/json", reply: "yes", body: { method: "GET", url: "/missing", body: "", custom: null } });
  assert.equal(result.failed, "destroyed, no error event");
});

test("Node's internal module names workerd exports (_http_*, _tls_*) are node:http's and node:tls's pieces", async (t) => {
  const { result } = await run(t, `import http from "node:http"; import tls from "node:tls";
    import agent from "node:_http_agent"; import client from "node:_http_client"; import common from "node:_http_common";
    import incoming from "node:_http_incoming"; import outgoing from "node:_http_outgoing"; import server from "node:_http_server";
    import tlsCommon from "node:_tls_common"; import tlsWrap from "node:_tls_wrap";`, `
    return [agent.Agent === http.Agent, client.ClientRequest === http.ClientRequest, common.methods === http.METHODS, common._checkIsHttpToken("x-ok"),
      incoming.IncomingMessage === http.IncomingMessage, outgoing.validateHeaderName === http.validateHeaderName, server.STATUS_CODES[200],
      tlsCommon.createSecureContext === tls.createSecureContext, tlsWrap.TLSSocket === tls.TLSSocket];`);
  assert.deepEqual(result, [true, true, true, true, true, true, "OK", true, true]);
});

test("node:path/win32 gives what Node's path.win32 gives", async (t) => {
  const paths = ["", ".", "a\\b/c", "C:", "C:\\", "c:foo\\..\\..\\bar", "C:\\foo\\bar.txt", "\\foo\\bar\\", "\\\\server\\share",
    "\\\\server\\share\\dir\\file.js", "//server/share/x/../y", "foo\\..\\..\\bar", ".bashrc", "a.", "file.tar.gz", "///a", "\\\\?\\C:\\x"];
  const cases = [];
  for (const p of paths) for (const fn of ["normalize", "isAbsolute", "dirname", "basename", "extname", "parse"]) cases.push([fn, [p]]);
  cases.push(["join", ["\\\\server", "share"]], ["join", ["C:\\a", "..\\b", "c"]], ["resolve", ["C:\\a", "D:\\b", "..\\c"]],
    ["resolve", ["\\\\s\\sh\\a", "..\\..\\x"]], ["relative", ["C:\\a\\B", "c:\\A\\b\\c"]], ["relative", ["C:\\a", "D:\\a"]],
    ["toNamespacedPath", ["C:\\a"]], ["toNamespacedPath", ["\\\\s\\sh\\a"]], ["basename", ["C:\\x\\y.js", ".js"]],
    ["format", [{ root: "C:\\", name: "x", ext: "txt" }]]);
  const { result } = await run(t, `import win32 from "node:path/win32";`, `
    const cases = ${JSON.stringify(cases)};
    return { out: cases.map(([fn, args]) => win32[fn](...args)) };`);
  assert.deepEqual(result.out, JSON.parse(JSON.stringify(cases.map(([fn, args]) => path.win32[fn](...args)))));
});

test("module.createRequire reaches the worker's own modules by path, and allowed node: modules", async (t) => {
  const modules = { "lib/answer.cjs": `module.exports = { answer: 42, os: require("node:os").EOL };`, "lib/data.json": { type: "json", content: `{"ok":true}` } };
  const { result } = await run(t, `import { createRequire } from "node:module";`, `
    const require = createRequire("/src/app.js");
    const fromUrl = createRequire("file:///lib/other.js");
    let bad;
    try { createRequire("relative.js"); } catch (e) { bad = e.code; }
    let missing;
    try { require("./nope.cjs"); } catch (e) { missing = e.code; }
    return [require("../lib/answer.cjs"), fromUrl("./data.json"), bad, missing];`, { modules });
  assert.deepEqual(result, [{ answer: 42, os: "\n" }, { ok: true }, "ERR_INVALID_ARG_VALUE", "MODULE_NOT_FOUND"]);
});

test("node:test's mock tracker (what workerd has of node:test) records calls as Node's does", async (t) => {
  const body = `
    const out = [];
    const f = mock.fn((a, b) => a + b);
    out.push(f(1, 2), f.mock.callCount(), f.mock.calls[0].arguments, f.mock.calls[0].result);
    f.mock.mockImplementationOnce(() => "once");
    out.push(f(1, 1), f(2, 2));
    f.mock.mockImplementation(() => "new");
    out.push(f(0, 0), f.mock.callCount());
    const obj = { value: 2, get g() { return "real"; }, method(x) { return x * this.value; } };
    const spy = mock.method(obj, "method");
    out.push(obj.method(5), spy.mock.calls[0].this === obj);
    mock.getter(obj, "g", () => "fake getter");
    out.push(obj.g);
    mock.restoreAll();
    out.push(obj.method(5), obj.g, Object.keys(obj).join());
    const limited = mock.fn(() => "orig", () => "impl", { times: 1 });
    out.push(limited(), limited());
    mock.reset();
    return out;`;
  const { mock } = await import("node:test");
  const inNode = new Function("mock", `return (async () => { ${body} })();`)(mock);
  const { result } = await run(t, `import { mock } from "node:test";`, body);
  assert.deepEqual(result, await inNode);
});

test("node:http servers answer fetch events through cloudflare:node's httpServerHandler (enable_nodejs_http_server_modules)", async (t) => {
  const script = `
    import http from "node:http";
    import https from "node:https";
    import { httpServerHandler, handleAsNodeRequest } from "cloudflare:node";
    const server = http.createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      if (req.url === "/stream") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("one ");
        setTimeout(() => res.end("two"), 5);
        return;
      }
      res.setHeader("x-seen", req.method + " " + req.url + " " + req.headers["x-name"]);
      res.appendHeader("set-cookie", "a=1");
      res.appendHeader("set-cookie", "b=2");
      res.statusCode = 201;
      res.end("body=" + body);
    });
    server.listen(8080);
    const other = http.createServer((req, res) => res.end("other server"));
    other.listen(0);
    const secure = https.createServer({}, (req, res) => res.end("https server " + req.method));
    secure.listen(8443);
    export default {
      async fetch(request, env, ctx) {
        if (new URL(request.url).pathname === "/other") return handleAsNodeRequest(other.address().port, request);
        if (new URL(request.url).pathname === "/secure") return handleAsNodeRequest(8443, request);
        return httpServerHandler({ port: 8080 }).fetch(request, env, ctx);
      },
    };`;
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"] });
  const posted = await dispatch(worker, { url: "http://localhost/path?q=1", method: "POST", body: "abc", headers: { "x-name": "ada" } });
  assert.equal(posted.status, 201);
  assert.equal(posted.headers.get("x-seen"), "POST /path?q=1 ada");
  assert.deepEqual(posted.headers.getSetCookie(), ["a=1", "b=2"]);
  assert.equal(await posted.text(), "body=abc");
  assert.equal(await (await dispatch(worker, "http://localhost/stream")).text(), "one two");
  assert.equal(await (await dispatch(worker, "http://localhost/other")).text(), "other server");
  assert.equal(await (await dispatch(worker, "http://localhost/secure")).text(), "https server GET");
  // Before the server half's date, createServer is workerd's stub and cloudflare:node is missing.
  await assert.rejects(
    createWorker({ script, compatibilityDate: "2025-08-20", compatibilityFlags: ["nodejs_compat"], pool: false, onLog() {} }),
    /cloudflare:node.*enable_nodejs_http_server_modules/,
  );
});

test("node:vm runs code in the worker's own context when the worker allows eval, with the script's name and offsets in stacks", async (t) => {
  const script = `import vm from "node:vm";
    export default { fetch() {
      globalThis.seen = 41;
      const value = vm.runInThisContext("seen + 1", { filename: "/src/answer.js" });
      const fn = new vm.Script("(function thrower() { throw new Error('boom') })", { filename: "/src/thrower.js", lineOffset: 10 }).runInThisContext();
      let stack;
      try { fn(); } catch (error) { stack = error.stack; }
      return Response.json({ value, stack });
    } };`;
  const worker = await useWorker(t, { script, allowEval: true, compatibilityFlags: ["nodejs_compat"] });
  const { value, stack } = await (await dispatch(worker, "http://w/")).json();
  assert.equal(value, 42);
  assert.match(stack, /at thrower \(\/src\/thrower\.js:11:\d+\)/);
});

test("node:async_hooks has workerd's inert hooks and ids; node:console's Console is workerd's stub", async (t) => {
  const script = `import { createHook, executionAsyncId, triggerAsyncId, executionAsyncResource, asyncWrapProviders } from "node:async_hooks";
    import nodeConsole, { Console, log } from "node:console";
    export default { fetch() {
      const hook = createHook({ init() {} });
      let consoleError;
      try { new Console(process.stdout); } catch (error) { consoleError = error.code; }
      return Response.json({ chained: hook.enable() === hook && hook.disable() === hook, ids: [executionAsyncId(), triggerAsyncId()],
        resource: Object.keys(executionAsyncResource()).length, providers: [asyncWrapProviders.TCPWRAP, Object.keys(asyncWrapProviders).length > 50],
        consoleError, same: nodeConsole === console && typeof log === "function" && console.Console === Console });
    } };`;
  const worker = await useWorker(t, { script, compatibilityFlags: ["nodejs_compat"] });
  assert.deepEqual(await (await dispatch(worker, "http://w/")).json(), {
    chained: true, ids: [0, 0], resource: 0, providers: [0, true], consoleError: "ERR_METHOD_NOT_IMPLEMENTED", same: true,
  });
});
