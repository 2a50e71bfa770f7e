"use strict";
// The dev registry: how separate `workerbox dev` processes find each other's workers. A folder
// per user (`$WORKERBOX_REGISTRY`, else `$XDG_RUNTIME_DIR/workerbox-registry`, else
// `<os.tmpdir()>/workerbox-registry-<uid>`) holds one JSON file per running worker,
// `<name>.json`: { name, pid, host, port, entrypoints, started }. A server writes its file when
// it listens and removes it when it closes; an entry whose pid is no longer alive is ignored
// (and removed). There is no leader process and no port to agree on: a lookup reads the file
// at call time, and fs.watch on the folder tells a waiting caller when a worker appears.
// It also owns the loopback transport for binding calls between processes (call(), readCall(),
// sendAnswer()): one POST per call to the other server's port, marked by a header, whose body
// and answer are a JSON head (4-byte big-endian length, then the JSON) followed by the call's
// bytes (V8-serialized arguments or results, or a request body), as they travel within a process.

const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** The registry folder for this user. */
function registryDir() {
  if (process.env.WORKERBOX_REGISTRY) return path.resolve(process.env.WORKERBOX_REGISTRY);
  if (process.env.XDG_RUNTIME_DIR) return path.join(process.env.XDG_RUNTIME_DIR, "workerbox-registry");
  const uid = typeof process.getuid === "function" ? process.getuid() : os.userInfo().username;
  return path.join(os.tmpdir(), `workerbox-registry-${uid}`);
}

/** A worker name as a file name: the characters a wrangler name may not hold are escaped. */
const fileOf = (dir, name) => path.join(dir, `${encodeURIComponent(name)}.json`);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/**
 * Writes this process's entry for worker `name` (the last server to start under a name wins,
 * as in wrangler's registry). Returns `unregister()`, which removes the file if it is still ours.
 */
function register(name, { host, port, entrypoints = [] }, dir = registryDir()) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = fileOf(dir, name);
  const entry = { name, pid: process.pid, host, port, entrypoints, started: Date.now() };
  // Written beside and renamed over, so a reader never sees half a file.
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(entry), { mode: 0o600 });
  fs.renameSync(temp, file);
  let done = false;
  return function unregister() {
    if (done) return;
    done = true;
    try {
      const now = JSON.parse(fs.readFileSync(file, "utf8"));
      if (now.pid === process.pid && now.port === port) fs.unlinkSync(file);
    } catch {
      // gone already, or another server's now
    }
  };
}

/** The live entry for worker `name`, or null (none, unreadable, or its process is gone). */
function lookup(name, dir = registryDir()) {
  const file = fileOf(dir, name);
  let entry;
  try {
    entry = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
  if (!entry || typeof entry.port !== "number" || typeof entry.pid !== "number") return null;
  if (!alive(entry.pid)) {
    try {
      fs.unlinkSync(file);
    } catch {}
    return null;
  }
  return entry;
}

/** Every live entry. */
function list(dir = registryDir()) {
  let names = [];
  try {
    names = fs.readdirSync(dir).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  return names.map((f) => lookup(decodeURIComponent(f.slice(0, -5)), dir)).filter(Boolean);
}

/**
 * Calls `onChange(name)` when an entry is written or removed (fs.watch on the folder); returns
 * `close()`. Lookups never depend on it: they read the file at call time.
 */
function watch(onChange, dir = registryDir()) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let watcher;
  try {
    watcher = fs.watch(dir, (event, file) => {
      if (file && String(file).endsWith(".json")) onChange(decodeURIComponent(String(file).slice(0, -5)));
    });
    watcher.on("error", () => {});
    watcher.unref();
  } catch {
    return () => {};
  }
  return () => watcher.close();
}

/** The request header that marks a binding call from another dev process (its value: the worker). */
const CALL_HEADER = "x-workerbox-dev-call";

function frame(head, bytes) {
  const json = Buffer.from(JSON.stringify(head), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  const tail = bytes == null ? Buffer.alloc(0) : Buffer.isBuffer(bytes) ? bytes : ArrayBuffer.isView(bytes) ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.from(bytes);
  return Buffer.concat([length, json, tail]);
}

function unframe(buffer, what) {
  if (buffer.length < 4 || buffer.readUInt32BE(0) > buffer.length - 4) throw new Error(`workerbox: a malformed ${what} between dev processes (${buffer.length} bytes)`);
  const end = 4 + buffer.readUInt32BE(0);
  const head = JSON.parse(buffer.subarray(4, end).toString("utf8"));
  return { head, bytes: head.hasBytes ? buffer.subarray(end) : null };
}

/**
 * Sends binding call `head` (JSON-able) with `bytes` to worker `name` of registry entry `entry`;
 * resolves to the other side's answer head and bytes. A process that does not answer rejects
 * with an error naming the worker, its pid and port.
 */
async function call(entry, name, head, bytes) {
  const host = entry.host.includes(":") ? `[${entry.host}]` : entry.host === "0.0.0.0" ? "127.0.0.1" : entry.host;
  let response;
  try {
    response = await fetch(`http://${host}:${entry.port}/`, {
      method: "POST",
      headers: { [CALL_HEADER]: name, "content-type": "application/octet-stream" },
      body: frame({ ...head, hasBytes: bytes != null }, bytes),
    });
  } catch (error) {
    throw new Error(`workerbox: worker ${JSON.stringify(name)} (registered by pid ${entry.pid} on port ${entry.port}) did not answer: ${error.cause?.message ?? error.message}`);
  }
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(body.toString("utf8").trim() || `workerbox: worker ${JSON.stringify(name)} answered ${response.status}`);
  return unframe(body, "binding call's answer");
}

/** Reads a binding call another process sent (see call()): its head and bytes. */
async function readCall(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return unframe(Buffer.concat(chunks), "binding call");
}

/** Answers a binding call with `head` and `bytes`. */
function sendAnswer(res, head, bytes) {
  const body = frame({ ...head, hasBytes: bytes != null }, bytes);
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": body.length }).end(body);
}

module.exports = { registryDir, register, lookup, list, watch, call, readCall, sendAnswer, CALL_HEADER };
