// workerd:rtti (the experimental rtti_api flag): exportTypes(date, flags) returns a Cap'n Proto
// StructureGroups message describing the API of a worker with that date and those flags. The
// bytes are read back with a small decoder of this file's own (independent of the runtime's
// encoder) for two flag sets, and, where the `capnp` tool (Debian's capnproto) and a git mirror
// of workerd (for its rtti.capnp) are there, decoded with `capnp decode` as well.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createWorker, dispatch } from "../index.js";

const WORKERD_MIRROR = process.env.WORKERBOX_WORKERD_MIRROR ?? "/work/.mirror/cloudflare+workerd/repo";

const SCRIPT = `import rtti from "workerd:rtti";
export default {
  async fetch(request) {
    const { date, flags } = await request.json();
    const bytes = rtti.exportTypes(date, flags);
    return new Response(bytes, { headers: { "x-type": Object.prototype.toString.call(bytes), "x-json-length": String(Response.json.length), "x-fetch-length": String(fetch.length), "x-experimental": String(rtti.exportExperimentalTypes(date, flags).byteLength === bytes.byteLength) } });
  },
};`;

/** A minimal reader of single-segment Cap'n Proto messages: structs, struct lists, text. */
function reader(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  assert.equal(view.getUint32(0, true), 0, "one segment");
  assert.equal(view.getUint32(4, true) * 8 + 8, bytes.byteLength, "the segment is the whole message");
  const base = 8;
  const word = (i) => [view.getUint32(base + i * 8, true), view.getUint32(base + i * 8 + 4, true)];
  const target = (at, low) => at + 1 + ((low | 0) >> 2);
  const struct = (at) => {
    const [low, high] = word(at);
    if (low === 0 && high === 0) return null;
    assert.equal(low & 3, 0, "a struct pointer");
    const data = target(at, low);
    return { data, pointers: data + (high & 0xffff), dataWords: high & 0xffff };
  };
  const list = (at) => {
    const [low, high] = word(at);
    if (low === 0 && high === 0) return [];
    assert.equal(low & 3, 1, "a list pointer");
    assert.equal(high & 7, 7, "a list of structs");
    const tag = target(at, low);
    const [count, sizes] = word(tag);
    const size = (sizes & 0xffff) + (sizes >>> 16);
    return Array.from({ length: count >>> 2 }, (_, i) => ({ data: tag + 1 + i * size, pointers: tag + 1 + i * size + (sizes & 0xffff), dataWords: sizes & 0xffff }));
  };
  const text = (at) => {
    const [low, high] = word(at);
    if (low === 0 && high === 0) return null;
    assert.equal(high & 7, 2, "a byte list");
    const start = base + target(at, low) * 8;
    return new TextDecoder().decode(bytes.subarray(start, start + (high >>> 3) - 1));
  };
  const u16 = (s) => (s.dataWords ? view.getUint16(base + s.data * 8, true) : 0);
  return { struct, list, text, u16, root: () => struct(0) };
}

/** The parts of a StructureGroups message the tests look at (field positions from rtti.capnp). */
function decode(bytes) {
  const r = reader(new Uint8Array(bytes));
  const root = r.root();
  const groups = r.list(root.pointers).map((group) => ({
    name: r.text(group.pointers),
    structures: r.list(group.pointers + 1).map((s) => ({
      name: r.text(s.pointers),
      members: r.list(s.pointers + 1).map((m) => {
        const tag = r.u16(m);
        const inner = r.struct(m.pointers);
        if (tag === 0) return { method: r.text(inner.pointers), args: r.list(inner.pointers + 2).length };
        if (tag === 1) return { property: r.text(inner.pointers) };
        if (tag === 3) return { constant: r.text(inner.pointers) };
        return { constructor: r.list(inner.pointers).length };
      }),
    })),
  }));
  const modules = r.list(root.pointers + 1).map((m) => r.text(m.pointers));
  return { groups, modules };
}

async function exportTypes(t, date, flags) {
  const worker = await createWorker({ script: SCRIPT, compatibilityDate: "2026-04-26", compatibilityFlags: ["nodejs_compat", "rtti_api"], unsafeExperimental: true });
  t.after(() => worker.dispose());
  const response = await dispatch(worker, { url: "http://rtti/", method: "POST", body: JSON.stringify({ date, flags }) });
  const bytes = new Uint8Array(await response.arrayBuffer());
  assert.equal(response.status, 200, new TextDecoder().decode(bytes));
  return { bytes, headers: response.headers };
}

test("workerd:rtti needs the rtti_api flag", { timeout: 60_000 }, async (t) => {
  const worker = await createWorker({ script: `export default { async fetch() { try { await import("workerd:rtti"); return new Response("loaded"); } catch (e) { return new Response(e.name + ": " + e.message); } } };`, compatibilityDate: "2026-04-26" });
  t.after(() => worker.dispose());
  // A dynamic import() rejects with workerd's message alone (a script may compare it).
  assert.equal(await (await dispatch(worker, "http://x/")).text(), 'Error: No such module "workerd:rtti".');
  // A static import (the worker does not start) says what it needs.
  await assert.rejects(createWorker({ script: `import "workerd:rtti"; export default {};`, compatibilityDate: "2026-04-26", onLog() {} }), /^Error: No such module "workerd:rtti"\. It needs the experimental rtti_api compatibility flag\.$/);
});

test("exportTypes describes the global scope and the built-in modules a date and flags give", { timeout: 120_000 }, async (t) => {
  const withNode = await exportTypes(t, "2023-05-18", ["nodejs_compat"]);
  assert.equal(withNode.headers.get("x-type"), "[object ArrayBuffer]");
  assert.equal(withNode.headers.get("x-experimental"), "true");
  const described = decode(withNode.bytes);
  const global = described.groups.find((g) => g.name === "global-scope");
  const names = global.structures.map((s) => s.name);
  for (const name of ["ServiceWorkerGlobalScope", "Request", "Response", "ReadableStream", "Headers"]) assert.ok(names.includes(name), `${name} in ${names}`);
  assert.ok(!names.includes("Object") && !names.includes("Promise"), "JavaScript's own classes are left out");
  const scope = global.structures.find((s) => s.name === "ServiceWorkerGlobalScope");
  assert.deepEqual(scope.members.find((m) => m.method === "fetch"), { method: "fetch", args: Number(withNode.headers.get("x-fetch-length")) });
  assert.ok(scope.members.some((m) => m.property === "navigator"), "navigator is there from 2022-03-21");
  const response = global.structures.find((s) => s.name === "Response");
  assert.deepEqual(response.members.find((m) => m.method === "json"), { method: "json", args: Number(withNode.headers.get("x-json-length")) });
  assert.ok(response.members.some((m) => m.property === "status") && response.members.some((m) => m.constructor !== undefined));
  assert.ok(described.modules.includes("node:buffer") && described.modules.includes("cloudflare:workers"), described.modules.join());
  const buffer = described.groups.find((g) => g.name === "node:buffer");
  assert.ok(buffer.structures.some((s) => s.name === "Buffer"), "node:buffer's Buffer class");

  const plain = decode((await exportTypes(t, "2021-11-03", [])).bytes);
  assert.ok(!plain.modules.some((m) => m.startsWith("node:")), "no node: module without nodejs_compat");
  const plainScope = plain.groups[0].structures.find((s) => s.name === "ServiceWorkerGlobalScope");
  assert.ok(!plainScope.members.some((m) => m.property === "navigator"), "no navigator before global_navigator's date");
});

test("exportTypes refuses a bad date or an unknown flag", { timeout: 60_000 }, async (t) => {
  const worker = await createWorker({ script: `import rtti from "workerd:rtti"; export default { fetch(r) { try { rtti.exportTypes(...JSON.parse(new URL(r.url).searchParams.get("a"))); return new Response("ok"); } catch (e) { return new Response(e.name + ": " + e.message); } } };`, compatibilityFlags: ["rtti_api"], unsafeExperimental: true });
  t.after(() => worker.dispose());
  const ask = async (args) => (await dispatch(worker, `http://x/?a=${encodeURIComponent(JSON.stringify(args))}`)).text();
  assert.equal(await ask(["2023-13", []]), 'TypeError: exportTypes: compatibility date "2023-13" is not a date in the form YYYY-MM-DD');
  assert.equal(await ask(["2023-05-18", ["no_such_flag"]]), 'TypeError: exportTypes: unknown compatibility flag "no_such_flag"');
});

test("exportTypes' bytes decode with capnp and workerd's rtti.capnp", { timeout: 120_000 }, async (t) => {
  if (spawnSync("capnp", ["--version"]).status !== 0) return t.skip("no `capnp` tool (Debian's capnproto package)");
  let schema;
  try {
    schema = execFileSync("git", ["--git-dir", WORKERD_MIRROR, "show", "HEAD:src/workerd/jsg/rtti.capnp"], { encoding: "utf8" });
  } catch {
    return t.skip(`no git mirror of workerd at ${WORKERD_MIRROR} (set WORKERBOX_WORKERD_MIRROR) for its rtti.capnp`);
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-rtti-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  // (Its C++ annotations need capnp's own c++.capnp, which the decoder does not.)
  fs.writeFileSync(path.join(dir, "rtti.capnp"), schema.replace(/^using Cxx.*$/m, "").replace(/^\$Cxx\..*$/gm, ""));
  for (const [date, flags] of [["2023-05-18", ["nodejs_compat"]], ["2021-11-03", []]]) {
    const { bytes } = await exportTypes(t, date, flags);
    const text = execFileSync("capnp", ["decode", path.join(dir, "rtti.capnp"), "StructureGroups"], { input: bytes, encoding: "utf8", maxBuffer: 64 << 20 });
    assert.match(text, /name = "global-scope"/);
    assert.match(text, /name = "ServiceWorkerGlobalScope"/);
    assert.match(text, /name = "Response"/);
    assert.equal(/specifier = "node:buffer"/.test(text), flags.includes("nodejs_compat"));
  }
});
