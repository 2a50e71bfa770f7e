// IdentityTransformStream and FixedLengthStream, workerd's byte pipes: the first test's expected
// value is what workerd (Miniflare 4.20260426.0) returned for the same code; the others check
// that a FixedLengthStream's body leaves with its Content-Length, on loopback only.
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

test("IdentityTransformStream and FixedLengthStream behave as workerd's", async (t) => {
  const out = await evalInWorker(t, `
  const out = {};
  const t = new IdentityTransformStream();
  out.kinds = [t instanceof TransformStream, Object.prototype.toString.call(t), typeof t.readable.getReader({ mode: "byob" }), t.writable.locked];
  const pipe = new IdentityTransformStream();
  const w = pipe.writable.getWriter();
  const order = [];
  const wrote = w.write(new TextEncoder().encode("hello")).then(() => order.push("write done"));
  await new Promise((r) => setTimeout(r, 5));
  order.push("before read");
  const r = pipe.readable.getReader();
  const first = await r.read();
  await new Promise((r) => setTimeout(r, 5));
  order.push("after read");
  const w2 = w.write(new Uint8Array([1, 2])).then(() => order.push("write2 done"));
  const second = await r.read();
  await new Promise((r) => setTimeout(r, 5));
  out.order = order; out.first = new TextDecoder().decode(first.value); out.second = [...second.value];
  try { await w.write("str"); out.str = "ok"; } catch (e) { out.str = e.name + ": " + e.message; }
  out.ctor = [];
  for (const v of [-1, 1.5, 2 ** 53, "7", 7n, null]) { try { new FixedLengthStream(v); out.ctor.push("ok"); } catch (e) { out.ctor.push(e.name + ": " + e.message); } }
  try { new FixedLengthStream(); out.ctor.push("ok"); } catch (e) { out.ctor.push(e.name + ": " + e.message); }
  const f = new FixedLengthStream(3);
  const fw = f.writable.getWriter(); const fr = f.readable.getReader();
  const many = fw.write(new Uint8Array(5)).then(() => "ok", (e) => e.name + ": " + e.message);
  const read1 = await fr.read().then((x) => x.done ? "done" : x.value.length, (e) => e.name + ": " + e.message);
  out.tooMany = [await many, read1];
  const g = new FixedLengthStream(3);
  const gw = g.writable.getWriter(); const gr = g.readable.getReader();
  gw.write(new Uint8Array(2)); const closed = gw.close().then(() => "ok", (e) => e.name + ": " + e.message);
  const gr1 = await gr.read(); const gr2 = await gr.read().then((x) => x.done ? "done" : x.value.length, (e) => e.name + ": " + e.message);
  out.tooFew = [gr1.value.length, gr2, await closed];
  const h = new FixedLengthStream(4); const hw = h.writable.getWriter(); hw.write(new TextEncoder().encode("abcd")); hw.close();
  const resp = new Response(h.readable);
  out.respHeaders = [...resp.headers];
  out.tag = [Object.prototype.toString.call(h), h instanceof IdentityTransformStream];
  return out;`, { compatibilityDate: "2025-06-01" });
  assert.deepEqual(out, {"kinds":[true,"[object IdentityTransformStream]","object",false],"order":["before read","write done","after read","write2 done"],"first":"hello","second":[1,2],"str":"TypeError: This TransformStream is being used as a byte stream, but received a string on its writable side. If you wish to write a string, you'll probably want to explicitly UTF-8-encode it with TextEncoder.","ctor":["TypeError: The value cannot be converted because it is negative and this API expects a positive bigint.","ok","TypeError: FixedLengthStream requires an integer expected length less than 2^53.","ok","ok","ok","TypeError: Failed to construct 'FixedLengthStream': constructor parameter 1 is not of type 'bigint'."],"tooMany":["ok","TypeError: Attempt to write too many bytes through a FixedLengthStream."],"tooFew":[2,"TypeError: FixedLengthStream did not see all expected bytes before close().","ok"],"respHeaders":[],"tag":["[object FixedLengthStream]",true]});
});

test("a Response whose body is a FixedLengthStream's goes out with its Content-Length", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() {
      const { readable, writable } = new FixedLengthStream(11);
      const writer = writable.getWriter();
      writer.write(new TextEncoder().encode("hello "));
      writer.write(new TextEncoder().encode("world"));
      writer.close();
      return new Response(readable);
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(response.headers.get("content-length"), "11");
  assert.equal(await response.text(), "hello world");
});

test("fetch() uploads a FixedLengthStream's body with its Content-Length, not chunked", async (t) => {
  const seen = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => {
      seen.push({ length: req.headers["content-length"], chunked: req.headers["transfer-encoding"] ?? null, body });
      res.end("ok");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const out = await evalInWorker(t, `
    const { readable, writable } = new FixedLengthStream(5);
    const writer = writable.getWriter();
    writer.write(new Uint8Array([104, 101, 108]));
    writer.write(new Uint8Array([108, 111]));
    writer.close();
    const response = await fetch("http://127.0.0.1:${server.address().port}/", { method: "POST", body: readable, duplex: "half" });
    return response.text();`);
  assert.equal(out, "ok");
  assert.deepEqual(seen, [{ length: "5", chunked: null, body: "hello" }]);
});
