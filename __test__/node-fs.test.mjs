// node:fs over workerd's virtual filesystem: the worker's modules read-only under /bundle, a
// /tmp of each request's own, /dev devices; sync, callback, promise and stream APIs; Node's
// error codes; and the flag that gates the module.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createWorker, dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

const FLAGS = { compatibilityDate: "2026-08-01", compatibilityFlags: ["nodejs_compat"] };

async function run(t, body, extra = {}) {
  const worker = await useWorker(t, {
    ...FLAGS,
    ...extra,
    script: `import fs from "node:fs"; import fsp from "node:fs/promises"; import { Buffer } from "node:buffer";
      const code = (fn) => { try { fn(); return "no error"; } catch (e) { return e.code; } };
      export default { async fetch(request) { const out = await (async () => { ${body} })(); return Response.json(out); } };`,
  });
  return async (path = "/") => (await dispatch(worker, `http://w${path}`)).json();
}

test("/bundle holds the worker's modules, read-only; / lists bundle, tmp and dev (workerd's order)", async (t) => {
  const get = await run(t, `return {
      config: JSON.parse(fs.readFileSync("/bundle/data/config.json", "utf8")),
      bytes: [...fs.readFileSync("/bundle/blob.bin")],
      list: fs.readdirSync("/bundle", { recursive: true }),
      dirents: fs.readdirSync("/", { withFileTypes: true }).map((d) => [d.name, d.isDirectory()]),
      write: code(() => fs.writeFileSync("/bundle/new.txt", "x")),
      remove: code(() => fs.unlinkSync("/bundle/blob.bin")),
      rootWrite: code(() => fs.mkdirSync("/elsewhere")),
      access: code(() => fs.accessSync("/bundle/blob.bin", fs.constants.W_OK)),
      stat: [fs.statSync("/bundle/blob.bin").size, fs.statSync("/bundle/data").isDirectory()],
    };`, { modules: { "data/config.json": '{"on":true}', "blob.bin": new Uint8Array([1, 2, 3]) } });
  assert.deepEqual(await get(), {
    config: { on: true },
    bytes: [1, 2, 3],
    list: ["blob.bin", "data", "data/config.json", "worker.js"],
    dirents: [["bundle", true], ["tmp", true], ["dev", true]],
    write: "EPERM", // creating a file in a read-only directory, as workerd
    remove: "EPERM", // as workerd
    rootWrite: "EPERM",
    access: "ENOENT", // workerd's answer to W_OK on a read-only file
    stat: [3, true],
  });
});

test("/bundle holds the main module too, under its own name, readable from its top level", async (t) => {
  const script = `import fs from "node:fs";
    const atStart = fs.readFileSync("/bundle/src/index.js", "utf8");
    export default { fetch() {
      return Response.json({ text: fs.readFileSync("/bundle/src/index.js", "utf8"), same: atStart === fs.readFileSync("/bundle/src/index.js", "utf8"), list: fs.readdirSync("/bundle", { recursive: true }), readOnly: (() => { try { fs.writeFileSync("/bundle/src/index.js", "x"); return "written"; } catch (e) { return e.code; } })() });
    } };`;
  const worker = await useWorker(t, { ...FLAGS, script, filename: "src/index.js", modules: { "src/util.js": "export const x = 1;" } });
  assert.deepEqual(await (await dispatch(worker, "http://w/")).json(), {
    text: script, same: true, list: ["src", "src/index.js", "src/util.js"], readOnly: "EROFS",
  });
});

test("/tmp: files, directories, links, renames and removal; each request has its own", async (t) => {
  const get = await run(t, `
    const url = new URL(request.url);
    if (url.pathname === "/second") return { leftover: fs.existsSync("/tmp/keep.txt"), list: fs.readdirSync("/tmp") };
    fs.writeFileSync("/tmp/keep.txt", "one");
    fs.appendFileSync("/tmp/keep.txt", " two");
    fs.mkdirSync("/tmp/a/b/c", { recursive: true });
    fs.writeFileSync("/tmp/a/b/c/deep.txt", Buffer.from("deep"));
    fs.symlinkSync("/tmp/a/b", "/tmp/link");
    fs.linkSync("/tmp/keep.txt", "/tmp/hard.txt");
    fs.renameSync("/tmp/a/b/c/deep.txt", "/tmp/moved.txt");
    fs.copyFileSync("/tmp/moved.txt", "/tmp/copy.txt");
    const out = {
      text: fs.readFileSync("/tmp/keep.txt", "utf8"),
      viaLink: fs.readdirSync("/tmp/link"),
      readlink: fs.readlinkSync("/tmp/link"),
      realpath: fs.realpathSync("/tmp/link/c"),
      hard: [fs.readFileSync("/tmp/hard.txt", "utf8"), fs.statSync("/tmp/keep.txt").nlink],
      copy: fs.readFileSync("/tmp/copy.txt", "utf8"),
      exists: [fs.existsSync("/tmp/moved.txt"), fs.existsSync("/tmp/a/b/c/deep.txt")],
      errors: [code(() => fs.mkdirSync("/tmp/a")), code(() => fs.rmdirSync("/tmp/a")), code(() => fs.readFileSync("/tmp/a")), code(() => fs.readdirSync("/tmp/keep.txt")),
        code(() => fs.copyFileSync("/tmp/moved.txt", "/tmp/copy.txt", fs.constants.COPYFILE_EXCL)), code(() => fs.rmSync("/tmp/a"))],
      temp: fs.mkdtempSync("/tmp/job-").startsWith("/tmp/job-"),
    };
    fs.rmSync("/tmp/a", { recursive: true });
    out.afterRm = fs.existsSync("/tmp/a");
    return out;`);
  assert.deepEqual(await get("/first"), {
    text: "one two",
    viaLink: ["c"],
    readlink: "/tmp/a/b",
    realpath: "/tmp/a/b/c",
    hard: ["one two", 2],
    copy: "deep",
    exists: [true, false],
    errors: ["no error", "ENOTEMPTY", "EISDIR", "ENOTDIR", "EEXIST", "ENOTEMPTY"],
    temp: true,
    afterRm: false,
  });
  assert.deepEqual(await get("/second"), { leftover: false, list: [] });
});

test("descriptors, /dev devices, callbacks, promises with FileHandle, and streams", async (t) => {
  const get = await run(t, `
    const fd = fs.openSync("/tmp/f.bin", "w+");
    fs.writeSync(fd, Buffer.from("abcdef"));
    const buf = Buffer.alloc(3);
    const n = fs.readSync(fd, buf, 0, 3, 2);
    fs.ftruncateSync(fd, 4);
    const size = fs.fstatSync(fd).size;
    fs.closeSync(fd);
    const handle = await fsp.open("/tmp/h.txt", "w+");
    await handle.writeFile("handled");
    const stat = await handle.stat();
    await handle.close();
    const written = fs.createWriteStream("/tmp/s.txt");
    await new Promise((resolve, reject) => { written.on("finish", resolve).on("error", reject); written.write("str"); written.end("eam"); });
    const chunks = [];
    for await (const chunk of fs.createReadStream("/tmp/s.txt", { highWaterMark: 2 })) chunks.push(chunk.toString());
    const part = [];
    for await (const chunk of fs.createReadStream("/tmp/s.txt", { start: 1, end: 3 })) part.push(chunk.toString());
    return {
      read: [n, buf.toString()], size,
      closed: code(() => fs.readSync(fd, buf)),
      devices: [fs.readFileSync("/dev/null").length, [...fs.readFileSync("/dev/zero").subarray(0, 2)], fs.readFileSync("/dev/random").length > 0, code(() => fs.writeFileSync("/dev/full", "x")), code(() => fs.writeFileSync("/dev/null", "x"))],
      callback: await new Promise((resolve) => fs.readFile("/tmp/h.txt", "utf8", (error, data) => resolve([error, data]))),
      callbackError: await new Promise((resolve) => fs.stat("/nope", (error) => resolve([error.code, error.syscall, error.path]))),
      exists: await new Promise((resolve) => fs.exists("/tmp/h.txt", resolve)),
      promise: [await fsp.readFile("/tmp/h.txt", "utf8"), stat.size, (await fsp.readdir("/tmp")).sort()],
      rejected: await fsp.access("/tmp/none").then(() => "resolved", (e) => e.code),
      stream: [chunks.join(""), chunks.length > 1, part.join("")],
    };`);
  assert.deepEqual(await get(), {
    read: [3, "cde"],
    size: 4,
    closed: "EBADF",
    devices: [0, [0, 0], true, "ENOSPC", "no error"],
    callback: [null, "handled"],
    callbackError: ["ENOENT", "stat", "/nope"],
    exists: true,
    promise: ["handled", 7, ["f.bin", "h.txt", "s.txt"]],
    rejected: "ENOENT",
    stream: ["stream", true, "tre"],
  });
});

test("node:fs needs nodejs_compat with a date from 2025-09-01 (or enable_nodejs_fs_module)", async () => {
  await assert.rejects(createWorker({ compatibilityDate: "2025-08-01", compatibilityFlags: ["nodejs_compat"], script: `import "node:fs"; export default { fetch() {} };`, onLog() {} }), /node:fs.*enable_nodejs_fs_module/);
  const worker = await createWorker({ compatibilityDate: "2025-08-01", compatibilityFlags: ["nodejs_compat", "enable_nodejs_fs_module"], script: `import fs from "node:fs"; export default { fetch() { return new Response(String(fs.existsSync("/tmp"))); } };`, onLog() {} });
  assert.equal(await (await dispatch(worker, "http://w/")).text(), "true");
  await worker.dispose();
});
