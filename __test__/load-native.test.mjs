// lib/load-native.js: when no native binary fits the platform, the error names the platform
// Node reports and the package to install (or that none is published). A child process with
// process.platform/process.arch redefined before anything loads stands for the other machine.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnNodeSync } from "./child-node.mjs";
import { fileURLToPath } from "node:url";

const loader = fileURLToPath(new URL("../lib/load-native.js", import.meta.url));

function loadAs(platform, arch) {
  const script = `
    Object.defineProperty(process, "platform", { value: ${JSON.stringify(platform)} });
    Object.defineProperty(process, "arch", { value: ${JSON.stringify(arch)} });
    try { require(${JSON.stringify(loader)}); console.log(JSON.stringify({ loaded: true })); }
    catch (e) { console.log(JSON.stringify({ message: e.message, code: e.code, cause: !!e.cause })); }`;
  const r = spawnNodeSync(["-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

test("a published platform without its package installed: names the platform and the package", () => {
  const out = loadAs("darwin", "arm64");
  assert.equal(out.code, "WORKERBOX_NO_NATIVE_ADDON");
  assert.match(out.message, /for darwin arm64: install workerbox-darwin-arm64/);
  assert.match(out.message, /npm install workerbox-darwin-arm64$/);
  assert.equal(out.cause, true);
});

test("Windows x64 maps to the msvc package", () => {
  assert.match(loadAs("win32", "x64").message, /for win32 x64: install workerbox-win32-x64-msvc/);
});

test("an unpublished platform: says so and lists what is published", () => {
  const out = loadAs("freebsd", "x64");
  assert.match(out.message, /^workerbox has no native addon for freebsd x64: published platforms are darwin-arm64, /);
});

test("this machine's own platform loads", () => {
  assert.deepEqual(loadAs(process.platform, process.arch), { loaded: true });
});
