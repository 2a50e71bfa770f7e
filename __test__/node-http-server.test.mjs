// node:http's server half and OutgoingMessage as workerd shapes them (servers registered by port,
// fed fetch events by cloudflare:node; the head rendered as HTTP/1.1 text and counted in
// writableLength while corked; a write after end() failing through its callback; the request body
// piped to several destinations), and the node:net / node:tls / node:dns helpers that need no
// network: BlockList, SocketAddress, checkServerIdentity, translatePeerCertificate and
// dns.lookup()'s argument checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const FLAGS = ["nodejs_compat"];

test("ServerResponse: the head counts in writableLength while corked, writes after end() fail by callback, statusText is workerd's 'unknown'", { timeout: scaled(60_000) }, async (t) => {
  const script = `
    import http from "node:http";
    import { handleAsNodeRequest } from "cloudflare:node";
    let seen = null;
    const server = http.createServer((req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      const lengths = [res.writableLength];
      res.cork();
      res.write("chunk1");
      lengths.push(res.writableLength);
      res.write("chunk2");
      lengths.push(res.writableLength);
      res.uncork();
      lengths.push(res.writableLength);
      res.end("final");
      queueMicrotask(() => res.write("late", (error) => { seen = { lengths, late: error.code }; }));
    });
    server.listen(8080);
    export default {
      async fetch(request) {
        if (new URL(request.url).pathname === "/seen") return Response.json(seen);
        return handleAsNodeRequest(8080, request);
      },
    };`;
  const worker = await useWorker(t, { script, compatibilityFlags: FLAGS });
  const res = await dispatch(worker, "http://localhost/");
  assert.equal(res.status, 200);
  assert.equal(res.statusText, "unknown");
  assert.equal(res.headers.get("content-type"), "text/plain");
  assert.equal(await res.text(), "chunk1chunk2final");
  // "HTTP/1.1 200 unknown", Content-Type, Connection and Transfer-Encoding lines: 102 bytes.
  assert.deepEqual(await (await dispatch(worker, "http://localhost/seen")).json(), { lengths: [0, 108, 114, 0], late: "ERR_STREAM_WRITE_AFTER_END" });
});

test("node:http servers: ports are registered per isolate, request headers fold as Node's, the body pipes to several destinations", { timeout: scaled(60_000) }, async (t) => {
  const script = `
    import http from "node:http";
    import { Writable } from "node:stream";
    import { handleAsNodeRequest, httpServerHandler } from "cloudflare:node";
    const server = http.createServer({ highWaterMark: 1.5 }, (req, res) => {
      if (req.url === "/pipe") {
        const parts = [[], []];
        let done = 0;
        for (const part of parts) {
          req.pipe(new Writable({ write(chunk, _e, cb) { part.push(chunk); cb(); } })).on("finish", () => {
            if (++done === 2) res.end(JSON.stringify(parts.map((p) => Buffer.concat(p).toString())));
          });
        }
        return;
      }
      res.setHeaders(new Headers({ "x-type": req.headers["content-type"], "x-accept": req.headers.accept, "x-port": String(req.socket.localPort) }));
      res.end();
    });
    server.listen(8080);
    export default {
      async fetch(request) {
        const url = new URL(request.url);
        if (url.pathname === "/checks") {
          const errors = [];
          for (const fn of [() => server.listen(8080), () => http.createServer().listen(8080), () => httpServerHandler(null), () => httpServerHandler({}), () => http.createServer({ headersTimeout: 2, requestTimeout: 1 }), () => new http.Server(42)]) {
            try { fn(); errors.push(null); } catch (error) { errors.push(error.code ?? error.message); }
          }
          let missing;
          try { await handleAsNodeRequest(1234, request); } catch (error) { missing = error.message; }
          return Response.json({ errors, missing, hwm: server.highWaterMark, address: server.address() });
        }
        return handleAsNodeRequest(8080, request);
      },
    };`;
  const worker = await useWorker(t, { script, compatibilityFlags: FLAGS });
  const res = await dispatch(worker, { url: "http://localhost/", headers: [["content-type", 'text/plain; f="a, b"'], ["content-type", "text/html"], ["accept", "a"], ["accept", "b"]] });
  assert.equal(res.headers.get("x-type"), 'text/plain; f="a, b"');
  assert.equal(res.headers.get("x-accept"), "a, b");
  assert.equal(res.headers.get("x-port"), "8080");
  const piped = await dispatch(worker, { url: "http://localhost/pipe", method: "POST", body: "x".repeat(100_000) });
  assert.deepEqual(await piped.json(), ["x".repeat(100_000), "x".repeat(100_000)]);
  const checks = await (await dispatch(worker, "http://localhost/checks")).json();
  assert.deepEqual(checks.errors, ["ERR_SERVER_ALREADY_LISTEN", "ERR_SERVER_ALREADY_LISTEN", "Server descriptor cannot be null or undefined", "Failed to determine port for server", "ERR_OUT_OF_RANGE", "ERR_INVALID_ARG_TYPE"]);
  assert.match(checks.missing, /^Http server with port 1234 not found/);
  assert.equal(checks.hwm, 1.5);
  assert.deepEqual(checks.address, { port: 8080, family: "IPv4", address: "127.0.0.1" });
});

test("node:net BlockList and SocketAddress, node:tls identity checks, node:dns lookup() argument checks", { timeout: scaled(60_000) }, async (t) => {
  const script = `
    import net from "node:net";
    import tls from "node:tls";
    import dns from "node:dns";
    import { translatePeerCertificate } from "node:_tls_common";
    const code = (fn) => { try { fn(); return null; } catch (error) { return error.code; } };
    export default {
      fetch() {
        const list = new net.BlockList();
        list.addSubnet("10.1.0.0", 24);
        list.addRange("192.168.2.1", "192.168.2.10");
        list.addAddress("2001:db8::1", "ipv6");
        const parsed = net.SocketAddress.parse("[::1]:3000");
        return Response.json({
          blocked: ["10.1.0.200", "10.1.1.1", "192.168.2.5", "::ffff:10.1.0.3"].map((a) => list.check(a, a.includes(":") ? "ipv6" : "ipv4")),
          rules: list.rules,
          parsed: [parsed.address, parsed.port, parsed.family, net.SocketAddress.parse("nope")],
          addressErrors: [code(() => new net.SocketAddress({ address: "300.1.1.1" })), code(() => new net.SocketAddress({ port: 65536 })), code(() => list.addSubnet("10.0.0.0", 33))],
          fqdn: tls.checkServerIdentity("a.com", { subject: { CN: "a.com." } }) ?? null,
          wildcardTld: tls.checkServerIdentity("a.com", { subjectaltname: "DNS:*.com", subject: {} })?.reason,
          peer: translatePeerCertificate({ infoAccess: "OCSP - URI:http://ocsp.example/\\nCA Issuers - URI:http://ca.example/" }).infoAccess["OCSP - URI"],
          context: typeof tls.SecureContext(),
          lookup: [code(() => dns.lookup(1, {}, () => {})), code(() => dns.promises.lookup("x", { family: 20 })), code(() => dns.lookup("x", { all: 1 }, () => {}))],
          servers: dns.getServers(),
        });
      },
    };`;
  const worker = await useWorker(t, { script, compatibilityFlags: FLAGS });
  const result = await (await dispatch(worker, "http://localhost/")).json();
  assert.deepEqual(result, {
    blocked: [true, false, true, true],
    rules: ["Address: IPv6 2001:db8::1", "Range: IPv4 192.168.2.1-192.168.2.10", "Subnet: IPv4 10.1.0.0/24"],
    parsed: ["::1", 3000, "ipv6", null],
    addressErrors: ["ERR_INVALID_ADDRESS", "ERR_SOCKET_BAD_PORT", "ERR_OUT_OF_RANGE"],
    fqdn: null,
    wildcardTld: "Host: a.com. is not in the cert's altnames: DNS:*.com",
    peer: ["http://ocsp.example/"],
    context: "object",
    lookup: ["ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_VALUE", "ERR_INVALID_ARG_TYPE"],
    servers: ["1.1.1.1", "2606:4700:4700::1111", "1.0.0.1", "2606:4700:4700::1001"],
  });
});
