"use strict";
// Loads the native addon (../native.js, which `napi build --js native.js` generates and
// overwrites) and, when no binary fits this machine, replaces napi-rs's "Failed to load native
// binding" with an error naming the platform detected and the package that holds its binary
// (or saying that workerbox publishes none for it). The original error stays as `cause`.

// napi-rs's package suffix of each platform workerbox publishes (package.json napi.targets).
const PACKAGES = {
  "darwin-arm64": "darwin-arm64",
  "darwin-x64": "darwin-x64",
  "win32-x64": "win32-x64-msvc",
  "linux-x64-glibc": "linux-x64-gnu",
  "linux-x64-musl": "linux-x64-musl",
  "linux-arm64-glibc": "linux-arm64-gnu",
  "linux-arm64-musl": "linux-arm64-musl",
};

/** glibc or musl on Linux, as napi-rs's loader decides it (process.report's glibc version). */
function linuxLibc() {
  try {
    const header = process.report?.getReport?.().header;
    return header?.glibcVersionRuntime ? "glibc" : "musl";
  } catch {
    return "glibc";
  }
}

/** What the loader saw: `{ platform, arch, libc, key, pkg }` (pkg null: none published). */
function detect(platform = process.platform, arch = process.arch) {
  const libc = platform === "linux" ? linuxLibc() : null;
  const key = libc ? `${platform}-${arch}-${libc}` : `${platform}-${arch}`;
  const suffix = PACKAGES[key];
  return { platform, arch, libc, key, pkg: suffix ? `workerbox-${suffix}` : null };
}

function explain(cause) {
  const { platform, arch, libc, pkg } = detect();
  const where = `${platform} ${arch}${libc ? ` (${libc})` : ""}`;
  const message = pkg
    ? `workerbox could not load its native addon for ${where}: install ${pkg} (npm installs it as ` +
      `an optional dependency of workerbox; with --no-optional or --omit=optional, or a lockfile ` +
      `made on another platform, it is missing): npm install ${pkg}`
    : `workerbox has no native addon for ${where}: published platforms are ` +
      `${Object.values(PACKAGES).join(", ")} (see docs/platforms.md)`;
  const error = new Error(message, { cause });
  error.code = "WORKERBOX_NO_NATIVE_ADDON";
  return error;
}

let native;
try {
  native = require("../native.js");
} catch (error) {
  throw explain(error);
}
module.exports = native;
