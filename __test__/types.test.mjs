// TypeScript users: index.d.ts and workerbox/project's declarations type-check under strict
// settings (module nodenext, lib es2022 + dom, no skipLibCheck), with and without @types/node and
// with lib esnext; and a file of deliberate misuse is rejected, so the types are really checked.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { scaled, spawnNode, underEmulator } from "./child-node.mjs";

/** The type checks are the same on every CPU; under qemu-user tsc cannot start (see underEmulator). */
const skip = underEmulator("TypeScript 7's tsc is a native binary that tsc.js finds with import.meta.resolve (node_modules holds the x64 one; NODE_PATH does not apply) and execs itself, which qemu-user without binfmt_misc cannot");

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DIR = path.join(HERE, "fixtures", "types");
const TSC = path.join(HERE, "..", "node_modules", "typescript", "bin", "tsc");

async function tsc(config) {
  const child = spawnNode([TSC, "-p", path.join(DIR, config)], { cwd: DIR, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const [code] = await once(child, "exit", { signal: AbortSignal.timeout(scaled(60000)) });
  return { code, output };
}

for (const [config, what] of [["tsconfig.json", "lib es2022 + dom, no @types/node"], ["tsconfig.node.json", "lib es2022 + dom with @types/node"], ["tsconfig.esnext.json", "lib esnext + dom with @types/node"]]) {
  test(`tsc accepts the typed usage file (${what})`, { skip }, async () => {
    const { code, output } = await tsc(config);
    assert.equal(output, "");
    assert.equal(code, 0);
  });
}

test("tsc rejects misuse of the project APIs", { skip }, async () => {
  const { code, output } = await tsc("tsconfig.misuse.json");
  assert.notEqual(code, 0);
  const lines = output.trim().split("\n").filter((line) => line.startsWith("misuse.mts"));
  assert.deepEqual(lines.map((line) => line.slice(0, line.indexOf(":"))), ["misuse.mts(6,26)", "misuse.mts(7,61)", "misuse.mts(8,7)", "misuse.mts(9,29)"]);
});
