// Packaging: `npm pack` of the main package and of the platform package (npm/linux-x64-gnu with
// the built addon) install into an empty project offline, without Rust, and both require() and
// import of "workerbox" create a worker that answers a request.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { emulated, nodeCommand, scaled } from "./child-node.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function run(command, args, cwd) {
  return execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: scaled(120_000), env: { ...process.env, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" } });
}

test("npm pack of workerbox and its platform package install offline and work with require and import", { timeout: scaled(240_000) }, (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-pack-"));
  t.after(() => fs.rmSync(work, { recursive: true, force: true }));
  const platform = path.join(work, "platform");
  // This Node's CPU: x64 here, arm64 under npm run test:arm64, where npm itself runs on the
  // host's x64 Node and refuses the arm64 package (EBADPLATFORM) unless forced.
  const target = `linux-${process.arch}-gnu`;
  fs.cpSync(path.join(root, "npm", target), platform, { recursive: true });
  fs.copyFileSync(path.join(root, `workerbox.${target}.node`), path.join(platform, `workerbox.${target}.node`));
  const mainTarball = path.join(work, JSON.parse(run(npm, ["pack", "--json", "--pack-destination", work], root))[0].filename);
  const platformTarball = path.join(work, JSON.parse(run(npm, ["pack", "--json", "--pack-destination", work], platform))[0].filename);

  // The package's own dependencies are packed from node_modules too: an offline install has their
  // tarballs in npm's cache (npm ci put them there) but not their registry metadata, which npm
  // would need to resolve a version range. Given as tarballs, they satisfy workerbox's ranges.
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
  const depTarballs = Object.keys(pkg.dependencies ?? {}).map((name) => {
    const dir = path.join(root, "node_modules", name);
    return path.join(work, JSON.parse(run(npm, ["pack", "--json", "--ignore-scripts", "--pack-destination", work, dir], work))[0].filename);
  });

  const app = path.join(work, "app");
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true }));
  run(npm, ["install", "--offline", "--no-package-lock", ...(emulated() ? ["--force"] : []), mainTarball, platformTarball, ...depTarballs], app);

  const script = `export default { fetch(request) { return new Response("hello from " + new URL(request.url).pathname) } }`;
  fs.writeFileSync(path.join(app, "cjs.cjs"), `const { createWorker, dispatch } = require("workerbox");
    (async () => { const w = await createWorker({ script: ${JSON.stringify(script)}, onLog() {} });
      console.log(await (await dispatch(w, "http://localhost/cjs")).text()); await w.dispose(); })();`);
  fs.writeFileSync(path.join(app, "esm.mjs"), `import { createWorker, dispatch } from "workerbox";
    import { loadProject } from "workerbox/project";
    const w = await createWorker({ script: ${JSON.stringify(script)}, onLog() {} });
    console.log(await (await dispatch(w, "http://localhost/esm")).text(), typeof loadProject); await w.dispose();`);
  assert.equal(run(...nodeCommand(["cjs.cjs"]), app).trim(), "hello from /cjs");
  assert.equal(run(...nodeCommand(["esm.mjs"]), app).trim(), "hello from /esm function");
  // Nothing was built: the installed tree has no Rust sources or build output.
  assert.ok(!fs.existsSync(path.join(app, "node_modules", "workerbox", "Cargo.toml")));
  assert.ok(!fs.existsSync(path.join(app, "node_modules", "workerbox", "target")));
});
