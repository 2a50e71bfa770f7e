#!/usr/bin/env node
// Runs a build command (napi build, cargo test, …) with `RUSTY_V8_ARCHIVE` pointing at the
// prebuilt V8 static library when the `v8` crate cannot download it.
//
// An explicit `RUSTY_V8_ARCHIVE` in the environment always wins. Otherwise, if the library for
// the pinned crate version is in `../shared/v8-152/` beside this checkout (how offline machines
// and CI provide it), that absolute path is used. With neither, the crate downloads its own.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LIBRARY = "librusty_v8_release_x86_64-unknown-linux-gnu.a.gz";
const CANDIDATES = [resolve(root, "..", "shared", "v8-152", LIBRARY)];

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/with-v8.mjs <command> [args…]");
  process.exit(2);
}
const env = { ...process.env };
if (!env.RUSTY_V8_ARCHIVE) {
  const found = CANDIDATES.find((file) => existsSync(file));
  if (found) env.RUSTY_V8_ARCHIVE = found;
} else if (!existsSync(env.RUSTY_V8_ARCHIVE)) {
  console.error(`RUSTY_V8_ARCHIVE names ${env.RUSTY_V8_ARCHIVE}, which does not exist`);
  process.exit(1);
}
// `npx`-style lookup: tools installed in node_modules/.bin are found by name.
env.PATH = [resolve(root, "node_modules", ".bin"), env.PATH].join(process.platform === "win32" ? ";" : ":");
const result = spawnSync(command, args, { stdio: "inherit", env, cwd: root, shell: process.platform === "win32" });
if (result.error) {
  console.error(`could not run ${command}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
