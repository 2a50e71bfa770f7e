// node:fs beyond the basics, as workerd has them: glob (globSync, the callback and the
// fs.promises async iterator; braces, **, classes, extglobs, exclude, withFileTypes), cp (force,
// errorOnExist, dereference, recursive merges and workerd's error codes), opendir/readdir
// (recursive names, ERR_DIR_CLOSED), mkdir/mkdtemp, BigInt stats, and Read/WriteStream with a
// custom `fs`, a FileHandle as `fd`, and option checks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { dispatch } from "../index.js";
import { useWorker } from "./helpers.mjs";

import { scaled } from "./child-node.mjs";
const FLAGS = { compatibilityDate: "2026-08-01", compatibilityFlags: ["nodejs_compat"] };

async function run(t, body) {
  const worker = await useWorker(t, {
    ...FLAGS,
    script: `import fs from "node:fs"; import { Buffer } from "node:buffer";
      const code = (fn) => { try { fn(); return "no error"; } catch (e) { return e.code; } };
      export default { async fetch() { const out = await (async () => { ${body} })(); return Response.json(out); } };`,
  });
  return (await dispatch(worker, "http://w/")).json();
}

test("glob: patterns, braces, ** with dot entries, extglobs, exclude, withFileTypes, callback and promises", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `
    for (const dir of ["a/b/c", "a/bc/e", "a/.hidden/x", "a/c/d"]) fs.mkdirSync("/tmp/g/" + dir, { recursive: true });
    for (const file of ["a/b/c/d", "a/bc/e/f", "a/.hidden/x/f", "a/c/d/f", "a/.b"]) fs.writeFileSync("/tmp/g/" + file, "x");
    const cwd = "/tmp/g";
    const sorted = (list) => [...list].sort();
    const fromCallback = await new Promise((resolve, reject) => fs.glob("a/{b,bc}/*", { cwd }, (e, m) => (e ? reject(e) : resolve(m))));
    const fromPromises = [];
    for await (const entry of fs.promises.glob("**/f", { cwd })) fromPromises.push(entry);
    const dirent = fs.globSync("a/b/c/d", { cwd, withFileTypes: true })[0];
    return {
      star: sorted(fs.globSync("a/*/e/f", { cwd })),
      braces: sorted(fs.globSync("a/{b,c}", { cwd })),
      globstar: sorted(fs.globSync("**/f", { cwd })),
      dotFiles: sorted(fs.globSync("**/.b", { cwd })),
      classAndExtglob: [sorted(fs.globSync("a/[bc]", { cwd })), sorted(fs.globSync("a/+(b|c)/d", { cwd })), sorted(fs.globSync("a/!(b|c|bc)", { cwd }))],
      parent: fs.globSync("a/b/../c", { cwd }),
      exclude: [sorted(fs.globSync("a/*/e/f", { cwd, exclude: (p) => p.includes("bc") })), sorted(fs.globSync("**/f", { cwd, exclude: ["a/.hidden/**"] }))],
      dirent: [dirent.name, dirent.parentPath, dirent.isFile()],
      fromCallback: sorted(fromCallback),
      fromPromises: sorted(fromPromises),
      none: fs.globSync("nothing/**", { cwd }),
      badPattern: code(() => fs.globSync(1)),
    };`);
  assert.deepEqual(out, {
    star: ["a/bc/e/f"],
    braces: ["a/b", "a/c"],
    globstar: ["a/.hidden/x/f", "a/bc/e/f", "a/c/d/f"],
    dotFiles: ["a/.b"],
    classAndExtglob: [["a/b", "a/c"], ["a/c/d"], ["a/.b", "a/.hidden"]],
    parent: ["a/c"],
    exclude: [[], ["a/bc/e/f", "a/c/d/f"]],
    dirent: ["d", "/tmp/g/a/b/c", true],
    fromCallback: ["a/b/c", "a/bc/e"],
    fromPromises: ["a/.hidden/x/f", "a/bc/e/f", "a/c/d/f"],
    none: [],
    badPattern: "ERR_INVALID_ARG_TYPE",
  });
});

test("cp: workerd's rules for files, directories and symlinks, with its error codes", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `
    fs.writeFileSync("/tmp/a", "foo");
    fs.mkdirSync("/tmp/dir");
    fs.writeFileSync("/tmp/dir/e", "bar");
    fs.symlinkSync("/tmp/a", "/tmp/link");
    fs.symlinkSync("/tmp/dir", "/tmp/dirlink");
    fs.cpSync("/tmp/a", "/tmp/new/deep/f");
    fs.writeFileSync("/tmp/keep", "original");
    fs.cpSync("/tmp/a", "/tmp/keep", { force: false });
    const kept = fs.readFileSync("/tmp/keep", "utf8");
    fs.cpSync("/tmp/dir", "/tmp/copy", { recursive: true });
    fs.cpSync("/tmp/link", "/tmp/linkcopy");
    fs.cpSync("/tmp/link", "/tmp/derefcopy", { dereference: true });
    fs.cpSync("/tmp/a", "/tmp/dirlink");
    return {
      made: fs.readFileSync("/tmp/new/deep/f", "utf8"),
      kept,
      tree: fs.readFileSync("/tmp/copy/e", "utf8"),
      link: [fs.lstatSync("/tmp/linkcopy").isSymbolicLink(), fs.lstatSync("/tmp/derefcopy").isFile()],
      replacedLink: fs.lstatSync("/tmp/dirlink").isFile(),
      errors: [
        code(() => fs.cpSync("/tmp/a", "/tmp/keep", { force: false, errorOnExist: true })),
        code(() => fs.cpSync("/tmp/a", "/tmp/dir")),
        code(() => fs.cpSync("/tmp/dir", "/tmp/a", { recursive: true })),
        code(() => fs.cpSync("/tmp/dir", "/tmp/other")),
        code(() => fs.cpSync("/tmp/dir", "/tmp/dir/sub", { recursive: true })),
        code(() => fs.cpSync("/tmp/link", "/tmp/dir")),
        code(() => fs.cpSync("/tmp/missing", "/tmp/x")),
        code(() => fs.cpSync("/tmp/a", "/tmp/x", { force: "yes" })),
        code(() => fs.cpSync("/tmp/a", "/tmp/x", { filter: () => true })),
        code(() => fs.cpSync("/tmp/a", "/tmp/x", { mode: fs.constants.COPYFILE_FICLONE_FORCE })),
      ],
    };`);
  assert.deepEqual(out, {
    made: "foo",
    kept: "original",
    tree: "bar",
    link: [true, true],
    replacedLink: true,
    errors: ["ERR_FS_CP_EEXIST", "ERR_FS_CP_NON_DIR_TO_DIR", "ERR_FS_CP_DIR_TO_NON_DIR", "ERR_FS_EISDIR", "ERR_FS_CP_EINVAL", "ENOTDIR", "ENOENT",
      "ERR_INVALID_ARG_TYPE", "ERR_UNSUPPORTED_OPERATION", "ERR_INVALID_ARG_VALUE"],
  });
});

test("directories: readdir and opendir as workerd lists them, mkdir/mkdtemp/rm rules, BigInt stats", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `
    const dir = fs.opendirSync("/", { recursive: true });
    const names = [];
    for (let d = dir.readSync(); d !== null; d = dir.readSync()) names.push(d.name);
    dir.closeSync();
    fs.mkdirSync("/tmp/d");
    fs.writeFileSync("/tmp/d/x", "12345");
    return {
      names,
      closed: [code(() => dir.readSync()), code(() => dir.closeSync())],
      devParent: fs.readdirSync("/", { withFileTypes: true, recursive: true }).find((d) => d.name === "dev/null").parentPath,
      mkdirAgain: code(() => fs.mkdirSync("/tmp/d")),
      mkdirReadOnly: code(() => fs.mkdirSync("/bundle/x")),
      mkdtemp: /^\\/tmp\\/t-\\d+$/.test(fs.mkdtempSync("/tmp/t-")),
      options: [code(() => fs.readdirSync("/tmp", { recursive: 1 })), code(() => fs.rmSync("/tmp/d", "x")), code(() => fs.opendirSync("/tmp", { encoding: 1 })), code(() => fs.mkdirSync("/tmp/q", "x"))],
      notEmpty: [code(() => fs.rmSync("/tmp/d")), code(() => fs.rmdirSync("/tmp/d"))],
      bigint: (() => { const s = fs.statSync("/tmp/d/x", { bigint: true }); return [typeof s.size, String(s.size), s.isFile(), typeof s.mtimeNs]; })(),
      fd: [code(() => fs.fstatSync("1")), code(() => fs.fstatSync(1.5))],
      rmdirRecursive: (fs.rmdirSync("/tmp/d", { recursive: true }), fs.existsSync("/tmp/d")),
    };`);
  assert.deepEqual(out, {
    names: ["bundle", "bundle/worker.js", "tmp", "dev", "dev/null", "dev/zero", "dev/full", "dev/random"],
    closed: ["ERR_DIR_CLOSED", "ERR_DIR_CLOSED"],
    devParent: "/dev",
    mkdirAgain: "no error",
    mkdirReadOnly: "EPERM",
    mkdtemp: true,
    options: ["ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_VALUE", "ERR_INVALID_ARG_TYPE"],
    notEmpty: ["ENOTEMPTY", "ENOTEMPTY"],
    bigint: ["bigint", "5", true, "bigint"],
    fd: ["ERR_INVALID_ARG_TYPE", "ERR_OUT_OF_RANGE"],
    rmdirRecursive: false,
  });
});

test("Read/WriteStream: callable without new, a custom fs, a FileHandle as fd, option checks", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `
    const calls = { open: 0, read: 0, close: 0, writev: 0 };
    const custom = {
      open: (...a) => { calls.open++; return fs.open(...a); },
      read: (...a) => { calls.read++; return fs.read(...a); },
      writev: (...a) => { calls.writev++; return fs.writev(...a); },
      close: (...a) => { calls.close++; return fs.close(...a); },
    };
    const w = fs.WriteStream("/tmp/s.txt", { fs: custom });
    w.write("ab"); w.write("cd"); w.end("ef");
    await new Promise((resolve) => w.on("close", resolve));
    let text = "";
    const r = fs.createReadStream("/tmp/s.txt", { fs: custom, start: 1, end: 4, encoding: "utf8" });
    for await (const chunk of r) text += chunk;
    const handle = await fs.promises.open("/tmp/s.txt", "r");
    let viaHandle = "";
    const handleClosed = new Promise((resolve) => handle.on("close", resolve));
    for await (const chunk of fs.createReadStream(null, { fd: handle, encoding: "utf8" })) viaHandle += chunk;
    await handleClosed;
    // As workerd's, opening a missing file makes it: the stream reads nothing and ends.
    const missing = fs.createReadStream("/tmp/none");
    const error = await new Promise((resolve) => { missing.on("error", (e) => resolve(e.code)); missing.on("end", () => resolve(fs.existsSync("/tmp/none") ? "made, empty" : "gone")); missing.resume(); });
    return {
      calls, text, viaHandle, handleFd: handle.fd === undefined, error,
      checks: [code(() => fs.createReadStream("/tmp/s.txt", { start: 5, end: 1 })), code(() => fs.createReadStream("/tmp/s.txt", 1)),
        code(() => fs.createWriteStream("/tmp/w.txt", { flush: "yes" })), code(() => fs.createReadStream("/tmp/s.txt", { start: 0.5 }))],
    };`);
  assert.deepEqual(out, {
    calls: { open: 2, read: 1, close: 2, writev: 1 },
    text: "bcde",
    viaHandle: "abcdef",
    handleFd: true,
    error: "made, empty",
    checks: ["ERR_OUT_OF_RANGE", "ERR_INVALID_ARG_TYPE", "ERR_INVALID_ARG_TYPE", "ERR_OUT_OF_RANGE"],
  });
});

test("workerd's answers: chmod/chown check and change nothing, access, links, writes, constants", { timeout: scaled(60_000) }, async (t) => {
  const out = await run(t, `
    fs.writeFileSync("/tmp/f", "abc");
    const before = fs.statSync("/tmp/f").mode;
    fs.chmodSync("/tmp/f", 0o600);
    fs.chownSync("/tmp/f", 1000, 1000);
    const fd = fs.openSync("/tmp/f", "r");
    fs.readSync(fd, Buffer.alloc(2));
    const checks = await new Promise((resolve) => {
      const thrown = [code(() => fs.chmod("/tmp/f", -1, () => {})), code(() => fs.chown("/tmp/f", {}, 0, () => {})), code(() => fs.fchmodSync(99, 0o600)), code(() => fs.access("/", "x", () => {}))];
      fs.access("/bundle/worker.js", fs.constants.W_OK, (e) => resolve([...thrown, e.code]));
    });
    return {
      unchanged: fs.statSync("/tmp/f").mode === before && fs.statSync("/tmp/f").uid === 0,
      checks,
      links: [code(() => fs.symlinkSync("/tmp/f", "/tmp/x/")), code(() => fs.linkSync("/tmp/f", "/dev/null/x")), code(() => fs.symlinkSync("/tmp/f", "/bundle/l"))],
      created: code(() => fs.writeFileSync("/bundle/new.txt", "x")),
      written: fs.writeFileSync("/tmp/g", "hello"),
      wholeFromFd: fs.readFileSync(fd, "utf8"),
      nullProto: Object.getPrototypeOf(fs.constants) === null,
      realpathDangling: (fs.symlinkSync("/tmp/none", "/tmp/dangling"), fs.realpathSync("/tmp/dangling")),
    };`);
  assert.deepEqual(out, {
    unchanged: true,
    checks: ["ERR_OUT_OF_RANGE", "ERR_INVALID_ARG_TYPE", "EBADF", "ERR_INVALID_ARG_TYPE", "ENOENT"],
    links: ["EINVAL", "EINVAL", "EPERM"],
    created: "EPERM",
    written: 5,
    wholeFromFd: "abc",
    nullProto: true,
    realpathDangling: "/tmp/none",
  });
});
