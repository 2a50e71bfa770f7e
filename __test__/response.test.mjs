// The Response dispatch() gives for a buffered answer (lib/response.js) behaves as Node's own
// Response holding the same bytes: every sequence of body reads, clones and stream accesses
// below runs on both and must give the same values and the same errors.
import { test } from "node:test";
import assert from "node:assert/strict";
import util from "node:util";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

// Each body is sent by the worker as these bytes (hex), with this content type.
const BODIES = {
  ascii: { hex: Buffer.from("hello world").toString("hex"), type: "text/plain" },
  bom: { hex: "efbbbf" + Buffer.from('{"a":[1,"é"]}').toString("hex"), type: "application/json" },
  invalidUtf8: { hex: "61ff62c3", type: "text/plain" },
  badJson: { hex: Buffer.from("{nope").toString("hex"), type: "application/json" },
  form: { hex: Buffer.from("a=1&b=%C3%A9&a=2").toString("hex"), type: "application/x-www-form-urlencoded" },
  empty: { hex: "", type: "" },
  binary: { hex: "00010280ff", type: "application/octet-stream" },
};

/** What a sequence of operations on `response` gives: values, or error names and messages. */
async function run(response, steps) {
  const out = [];
  const settle = async (label, get) => {
    try {
      out.push([label, await get()]);
    } catch (error) {
      out.push([label, "threw", error.name, error.message]);
    }
  };
  const read = async (stream) => {
    const chunks = [];
    for await (const chunk of stream) chunks.push(Buffer.from(chunk).toString("hex"));
    return chunks.join("");
  };
  let other = null;
  for (const step of steps) {
    switch (step) {
      case "text":
      case "json":
        await settle(step, () => response[step]());
        break;
      case "arrayBuffer":
        await settle(step, async () => {
          const buffer = await response.arrayBuffer();
          return [Object.prototype.toString.call(buffer), Buffer.from(buffer).toString("hex")];
        });
        break;
      case "bytes":
        await settle(step, async () => {
          const bytes = await response.bytes();
          return [bytes.constructor.name, Buffer.from(bytes).toString("hex")];
        });
        break;
      case "blob":
        await settle(step, async () => {
          const blob = await response.blob();
          return [blob.type, blob.size, Buffer.from(await blob.arrayBuffer()).toString("hex")];
        });
        break;
      case "formData":
        await settle(step, async () => [...(await response.formData())]);
        break;
      case "body":
        await settle(step, async () => [response.body === response.body, response.body?.locked, response.body && (await read(response.body))]);
        break;
      case "lock":
        await settle(step, () => (response.body.getReader(), response.body.locked));
        break;
      case "used":
        out.push([step, response.bodyUsed]);
        break;
      case "clone":
        await settle(step, () => ((other = response.clone()), [other.status, other.statusText, [...other.headers], other.bodyUsed]));
        break;
      case "mutate":
        // Bytes handed to one clone are its own: writing them does not show in the other.
        await settle(step, async () => {
          const mine = new Uint8Array(await response.arrayBuffer());
          mine.fill(0x7a);
          return Buffer.from(await other.arrayBuffer()).toString("hex");
        });
        break;
      case "cloneText":
        await settle(step, () => other.text());
        break;
      case "inspect":
        out.push([step, util.inspect(response)]);
        break;
      default:
        throw new Error(`unknown step ${step}`);
    }
  }
  return out;
}

const SEQUENCES = [
  ["used", "text", "used", "text", "json", "arrayBuffer", "blob", "clone", "body", "used"],
  ["json", "text"],
  ["arrayBuffer", "used", "arrayBuffer", "body"],
  ["blob", "text"],
  ["formData", "formData"],
  ["body", "used", "text", "used", "body"],
  ["lock", "used", "text", "clone", "used"],
  ["clone", "text", "used", "cloneText", "text"],
  ["clone", "mutate"],
  ["body", "clone", "text", "cloneText", "used"],
  ["inspect", "text", "inspect"],
];
if (typeof Response.prototype.bytes === "function") SEQUENCES.push(["bytes", "text"], ["clone", "bytes", "cloneText"]);

test("a buffered response from dispatch() reads, clones and streams as Node's own Response with its bytes", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch(request) {
      const url = new URL(request.url);
      const hex = url.searchParams.get("hex"), type = url.searchParams.get("type");
      const bytes = new Uint8Array(hex.length / 2).map((_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
      const headers = type ? { "content-type": type, "x-two": "a" } : { "x-two": "a" };
      return new Response(bytes, { status: 203, statusText: "Fine", headers });
    } }`,
  });
  let compared = 0;
  for (const [name, { hex, type }] of Object.entries(BODIES)) {
    for (const steps of SEQUENCES) {
      const url = `http://localhost/?hex=${hex}&type=${encodeURIComponent(type)}`;
      const response = await dispatch(worker, url);
      assert.ok(response instanceof Response);
      const headers = type ? { "content-type": type, "x-two": "a" } : { "x-two": "a" };
      const node = new Response(Buffer.from(hex, "hex"), { status: 203, statusText: "Fine", headers });
      const [ours, theirs] = [await run(response, steps), await run(node, steps)];
      assert.deepEqual(ours, theirs, `${name}: ${steps.join(" → ")}`);
      compared++;
    }
  }
  assert.equal(compared, Object.keys(BODIES).length * SEQUENCES.length);
});

test("its class, constructed by user code (new response.constructor(body, init)), is Node's Response as it is", async (t) => {
  const worker = await useWorker(t, { script: `export default { fetch() { return new Response("made") } }` });
  const Class = (await dispatch(worker, "http://localhost/")).constructor;
  let compared = 0;
  for (const [name, { hex, type }] of Object.entries(BODIES)) {
    for (const steps of SEQUENCES) {
      const init = () => ({ status: 201, statusText: "Made", headers: type ? { "content-type": type } : {} });
      // Each made just before its run: an empty body's stream closes a microtask after construction.
      const ours = await run(new Class(Buffer.from(hex, "hex"), init()), steps);
      const theirs = await run(new Response(Buffer.from(hex, "hex"), init()), steps);
      assert.deepEqual(ours, theirs, `${name}: ${steps.join(" → ")}`);
      compared++;
    }
  }
  assert.equal(compared, Object.keys(BODIES).length * SEQUENCES.length);
  // Other bodies and none at all, as Node's constructor takes them.
  assert.equal(await new Class("text").text(), "text");
  assert.equal(await new Class(new Blob(["blob"])).text(), "blob");
  assert.equal(new Class(null, { status: 204 }).body, null);
  assert.equal(await new Class().text(), "");
});

test("a buffered response keeps Node's Response surface: class, tag, status and headers", async (t) => {
  const worker = await useWorker(t, {
    script: `export default { fetch() {
      const headers = new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x-b", "2"], ["x-a", "1"]]);
      return new Response("made", { status: 299, statusText: "Odd", headers });
    } }`,
  });
  const response = await dispatch(worker, "http://localhost/");
  assert.equal(Object.prototype.toString.call(response), "[object Response]");
  assert.equal(response.constructor.name, "Response");
  assert.deepEqual([response.status, response.statusText, response.ok, response.type, response.url, response.redirected], [299, "Odd", true, "default", "", false]);
  assert.deepEqual(response.headers.getSetCookie(), ["a=1", "b=2"]);
  assert.deepEqual([...response.headers].filter(([name]) => name.startsWith("x-")), [["x-a", "1"], ["x-b", "2"]]);
  // Headers stay mutable, as on any Response Node constructs.
  response.headers.set("x-c", "3");
  assert.equal(response.clone().headers.get("x-c"), "3");
  assert.equal(await response.text(), "made");
  // A copy made with Node's constructor from its parts carries the same body.
  const again = await dispatch(worker, "http://localhost/");
  assert.equal(await new Response(again.body, again).text(), "made");
});

test("loading workerbox and creating a worker leave Node's fetch classes unloaded; the first dispatch loads them", async () => {
  // In a child process, so that this process's own use of Response does not count.
  const { execNode } = await import("./child-node.mjs");
  const index = new URL("../index.js", import.meta.url).pathname;
  const code = `
    const loaded = () => process.moduleLoadList.some((name) => name.includes("undici"));
    const { createWorker, dispatch } = require(${JSON.stringify(index)});
    (async () => {
      const worker = await createWorker({ script: "export default { fetch() { return new Response('ok') } }", onLog() {} });
      const before = loaded();
      const text = await (await dispatch(worker, "http://localhost/")).text();
      console.log(JSON.stringify({ before, after: loaded(), text }));
      await worker.dispose();
    })();`;
  const out = execNode(["-e", code], { encoding: "utf8", timeout: 30_000 });
  assert.deepEqual(JSON.parse(out.trim().split("\n").pop()), { before: false, after: true, text: "ok" });
});
