// node:fs details that workerd's own fs tests (scripts/workerd-tests.mjs) check: stat's shape
// (no inode or block numbers, 0o444/0o666 modes, one time that only utimes sets), utimes' times
// in milliseconds, the stdio descriptors, descriptors counted per request, EBADF's bare message,
// percent-encoding of names, the path limits, open() making a missing file, the argument checks
// made before a descriptor is looked at or a callback is called, and a FileHandle's web stream.
// The expected values were printed by workerd (Miniflare 4.20260426.0, date 2026-04-01,
// nodejs_compat) from the same code; only messages workerbox words differently are left out.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const OPTIONS = { compatibilityDate: "2026-04-01", compatibilityFlags: ["nodejs_compat"] };
const PREFIX = `
  const fs = (await import("node:fs")).default;
  const { Buffer } = await import("node:buffer");
  const res = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return [e?.name, e?.code ?? null, String(e?.message).split("\\n")[0]]; } };
  const kind = (f) => { const r = res(f); return Array.isArray(r) ? r.slice(0, 2) : r; };`;

test("stat: no inode or block numbers, 0o444/0o666 modes, and one time that only utimes sets (in ms)", async (t) => {
  const body = `${PREFIX}
    const shape = (s) => [s.ino, s.mode, s.nlink, s.size, s.blksize, s.blocks, s.atimeMs, s.mtimeMs, s.ctimeMs, s.birthtimeMs];
    fs.writeFileSync("/tmp/f.txt", "hello");
    fs.mkdirSync("/tmp/d");
    fs.symlinkSync("/tmp/f.txt", "/tmp/l");
    const stats = ["/", "/bundle", "/tmp", "/dev/null", "/tmp/f.txt", "/tmp/d"].map((p) => shape(fs.statSync(p)));
    stats.push(shape(fs.lstatSync("/tmp/l")));
    fs.utimesSync("/tmp/f.txt", 5, 2000);
    const afterUtimes = shape(fs.statSync("/tmp/f.txt"));
    fs.utimesSync("/tmp/f.txt", 5, "1970-01-01T01:00:00.000Z");
    const big = fs.statSync("/tmp/f.txt", { bigint: true });
    fs.writeFileSync("/tmp/f.txt", "again");
    const afterWrite = fs.statSync("/tmp/f.txt").mtimeMs;
    const errors = [kind(() => fs.utimesSync("/tmp/f.txt", 1, {})), kind(() => fs.futimesSync(0, {})), res(() => fs.utimesSync("/tmp/f.txt", 1, new Date("x")))];
    const invalidDateToCallback = await new Promise((resolve) => fs.utimes("/tmp/f.txt", 1, new Date("x"), (e) => resolve(e?.name ?? "none")));
    const devs = [fs.statSync("/dev/null").dev, fs.statSync("/").dev, fs.statSync("/tmp/f.txt").dev];
    return { stats, afterUtimes, big: [big.mtimeMs, big.mtimeNs, big.ctimeNs, big.atimeNs].map(String), afterWrite, errors, invalidDateToCallback, devs };`;
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    stats: [[0, 16676, 1, 0, 0, 0, 0, 0, 0, 0], [0, 16676, 1, 0, 0, 0, 0, 0, 0, 0], [0, 16822, 1, 0, 0, 0, 0, 0, 0, 0], [0, 8630, 1, 0, 0, 0, 0, 0, 0, 0],
      [0, 33206, 1, 5, 0, 0, 0, 0, 0, 0], [0, 16822, 1, 0, 0, 0, 0, 0, 0, 0], [0, 41252, 1, 0, 0, 0, 0, 0, 0, 0]],
    afterUtimes: [0, 33206, 1, 5, 0, 0, 0, 2000, 2000, 0],
    big: ["3600000", "3600000000000", "3600000000000", "0"],
    afterWrite: 3600000,
    errors: [["TypeError", "ERR_INVALID_ARG_TYPE"], ["TypeError", "ERR_INVALID_ARG_TYPE"], ["TypeError", null, "The value cannot be converted because it is not a valid Date."]],
    invalidDateToCallback: "TypeError",
    devs: [1, 0, 0],
  });
});

test("descriptors: stdio always open (writes go to the log), per-request numbering from 3, EBADF's bare message", async (t) => {
  const body = `${PREFIX}
    const stdio = [fs.fstatSync(0).isFile(), fs.fstatSync(2).size, res(() => fs.closeSync(1)), fs.fstatSync(1).isFile(), fs.writeSync(1, "to the log\\n"), fs.readSync(0, Buffer.alloc(4))];
    const fd = fs.openSync("/tmp/first.txt", "w");
    const badFd = [res(() => fs.fstatSync(99)), res(() => fs.writeSync(99, "x")), res(() => fs.closeSync(99)), kind(() => fs.fstatSync(99, { bigint: "yes" }))];
    return { stdio, fd, badFd, stdin: [process.stdin instanceof fs.ReadStream, process.stdin.fd] };`;
  const logs = [];
  const out = await evalInWorker(t, body, { ...OPTIONS, onLog: (level, message) => logs.push([level, message]) });
  assert.deepEqual(out, {
    stdio: [true, 0, "ok", true, 11, 0],
    fd: 3,
    badFd: [["Error", "EBADF", "bad file descriptor"], ["Error", "EBADF", "bad file descriptor"], "ok", ["TypeError", "ERR_INVALID_ARG_TYPE"]],
    stdin: [true, 0],
  });
  assert.deepEqual(logs.filter(([, message]) => message === "to the log"), [["log", "to the log"]]);
  // Each request counts its descriptors afresh.
  assert.equal((await evalInWorker(t, `${PREFIX} return [fs.openSync("/tmp/a", "w"), fs.openSync("/tmp/b", "w")];`, OPTIONS)).join(), "3,4");
});

test("names: percent-encoding made canonical, the 4096-character and 48-segment limits, non-file module names left out of /bundle", async (t) => {
  const body = `${PREFIX}
    fs.writeFileSync("/tmp//?#a%FF", "pct");
    fs.writeFileSync("/tmp/f.txt", "x");
    fs.writeFileSync("/tmp/a b", "x");
    return {
      percent: [fs.existsSync("/tmp/%3f%23a%ff"), fs.readdirSync("/tmp").filter((n) => n.includes("%")).sort(), fs.existsSync("/tmp/%66.txt")],
      limits: [res(() => fs.openSync("/tmp/a".repeat(700), "r")), res(() => fs.statSync("/a".repeat(49))), fs.existsSync("/a".repeat(49))],
      bundle: fs.readdirSync("/bundle"),
    };`;
  assert.deepEqual(await evalInWorker(t, body, { ...OPTIONS, modules: { "abc:foo": { type: "text", content: "not a file" }, "b.txt": { type: "text", content: "a file" } } }), {
    percent: [true, ["%3F%23a%FF", "a%20b"], true],
    limits: [["Error", null, "File path is too long"], ["Error", null, "File path has too many segments"], false],
    bundle: ["b.txt", "eval-in-worker.js"],
  });
});

test("open makes a missing file (readFile does not); 128 MiB files; checks before descriptors and callbacks; a closed handle's stream ends", async (t) => {
  const body = `${PREFIX}
    fs.writeFileSync("/tmp/f.txt", "hello");
    const fd = fs.openSync("/tmp/f.txt", "r+");
    const created = fs.openSync("/tmp/made-by-open.bin");
    const openQuirks = [fs.existsSync("/tmp/made-by-open.bin"), fs.writeSync(created, "w"), res(() => fs.writeSync(created, Buffer.alloc(10), 0, 10, 134217720)), kind(() => fs.readFileSync("/tmp/not-made.txt")),
      res(() => fs.ftruncateSync(created, 0x08000001))];
    const checks = [res(() => fs.truncateSync("/tmp/f.txt", -1)), res(() => fs.ftruncate(fd, 4294967296, () => {})), res(() => fs.copyFileSync("/tmp/f.txt", "/tmp/g.txt", 123)), res(() => fs.copyFile("/tmp/f.txt", "/tmp/g.txt", null, () => {})),
      res(() => fs.copyFileSync("/tmp/f.txt", "/tmp/g.txt", fs.constants.COPYFILE_FICLONE_FORCE)), res(() => fs.readlinkSync("/tmp/f.txt", "bad-encoding")), res(() => fs.readFile("/tmp/f.txt", "bad-encoding", () => {})),
      res(() => fs.createReadStream("/tmp/f.txt", "bad-encoding")), kind(() => fs.appendFileSync("/tmp/f.txt", "x", { flush: "no" })), kind(() => fs.statfs("/nope", { bigint: 1 }, () => {}))];
    fs.writeFileSync("/tmp/stream.txt", "abc");
    const handle = await fs.promises.open("/tmp/stream.txt", "r");
    const stream = handle.readableWebStream({ autoClose: false });
    await handle.close();
    const afterClose = await stream.getReader().read();
    return { openQuirks, checks, afterClose: [afterClose.done, afterClose.value ?? null] };`;
  const mode = (received) => ["TypeError", "ERR_INVALID_ARG_VALUE", `The argument 'mode' must be one of: 0, 1, 4, 2. Received ${received}`];
  const encoding = ["TypeError", "ERR_INVALID_ARG_VALUE", "The property 'options.encoding' is invalid. Received 'bad-encoding'"];
  assert.deepEqual(await evalInWorker(t, body, OPTIONS), {
    openQuirks: [true, 1, ["Error", "EPERM", "File size limit exceeded"], ["Error", "ENOENT"], ["Error", "EPERM", "File size limit exceeded"]],
    checks: [
      ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "len" is out of range. It must be >= 0 && < 4294967296. Received -1'],
      ["RangeError", "ERR_OUT_OF_RANGE", 'The value of "len" is out of range. It must be >= 0 && < 4294967296. Received 4294967296'],
      mode(123), mode(null),
      ["Error", "ERR_UNSUPPORTED_OPERATION", "The requested operation is unsupported"],
      encoding, encoding, encoding,
      ["TypeError", "ERR_INVALID_ARG_TYPE"], ["TypeError", "ERR_INVALID_ARG_TYPE"],
    ],
    afterClose: [true, null],
  });
});
