#!/usr/bin/env node
// Installs workerbox as a user would: packs the root package and this platform's npm/<platform>/
// package (with its built .node copied in) into tarballs, installs both into an empty project in
// a temporary folder, and runs a worker there through `import { createWorker } from "workerbox"`.
// The release workflow runs it on each OS; locally: `node scripts/smoke-install.mjs` after
// `npm run build`. --bindings <dir>: where the built workerbox.*.node files are (default: here).
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const at = args.indexOf("--bindings");
const bindings = resolve(at >= 0 ? args[at + 1] : root);

// This machine's package, as lib/load-native.js names it.
const libc = process.platform === "linux" ? (process.report.getReport().header.glibcVersionRuntime ? "gnu" : "musl") : null;
const suffix = { win32: `win32-${process.arch}-msvc`, darwin: `darwin-${process.arch}`, linux: `linux-${process.arch}-${libc}` }[process.platform];
const pkgDir = join(root, "npm", suffix ?? "none");
if (!suffix || !existsSync(pkgDir)) {
  console.error(`no npm/ package for ${process.platform} ${process.arch}`);
  process.exit(1);
}
const binary = `workerbox.${suffix}.node`;
if (!existsSync(join(bindings, binary))) {
  console.error(`${binary} is not in ${bindings}: build it first (npm run build)`);
  process.exit(1);
}

const work = mkdtempSync(join(tmpdir(), "workerbox-smoke-"));
const shell = process.platform === "win32";
const npm = (argv, cwd) => execFileSync(shell ? "npm.cmd" : "npm", argv, { cwd, encoding: "utf8", shell }).trim();
try {
  // The platform package, packed from a copy so npm/<platform>/ stays free of binaries.
  const platformCopy = join(work, "platform");
  execFileSync(process.execPath, ["-e", `require("fs").cpSync(${JSON.stringify(pkgDir)}, ${JSON.stringify(platformCopy)}, { recursive: true })`]);
  copyFileSync(join(bindings, binary), join(platformCopy, binary));
  const platformTgz = join(work, npm(["pack", "--silent", "--pack-destination", work], platformCopy).split("\n").pop());
  const mainTgz = join(work, npm(["pack", "--silent", "--pack-destination", work], root).split("\n").pop());

  const app = join(work, "app");
  execFileSync(process.execPath, ["-e", `require("fs").mkdirSync(${JSON.stringify(app)})`]);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "smoke", private: true, type: "module" }));
  npm(["install", "--no-audit", "--no-fund", "--omit=optional", platformTgz, mainTgz], app);
  writeFileSync(
    join(app, "smoke.mjs"),
    `import { createWorker, dispatch } from "workerbox";
const worker = await createWorker({ script: "export default { fetch: (r, env) => new Response(env.GREETING + ' ' + new URL(r.url).pathname) }", bindings: { GREETING: "hello" } });
const res = await dispatch(worker, new Request("http://localhost/smoke"));
const text = await res.text();
await worker.dispose();
if (text !== "hello /smoke") { console.error("unexpected:", text); process.exit(1); }
console.log("smoke ok:", text);
`,
  );
  console.log(execFileSync(process.execPath, ["smoke.mjs"], { cwd: app, encoding: "utf8" }).trim());
  const installed = readdirSync(join(app, "node_modules")).filter((n) => n.startsWith("workerbox"));
  console.log(`installed: ${installed.join(", ")} (${process.platform} ${process.arch}${libc ? ` ${libc}` : ""})`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
