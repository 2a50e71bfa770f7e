// Auxiliary workers of the Vitest integration: the `miniflare.workers` entries of cloudflareTest()
// (as @cloudflare/vitest-pool-workers takes them: `name`, `script`/`scriptPath`/`modules`,
// compatibility settings, `bindings`, `kvNamespaces`, `r2Buckets`, `d1Databases`,
// `serviceBindings`, `outboundService`) started as workerbox workers beside the runner, with
// fresh in-memory storage, so that the main worker's service bindings can reach them by name.
"use strict";

const fs = require("node:fs");
const path = require("node:path");

const { addMiniflareBindings } = require("./miniflare-options.js");

const TYPES = { ESModule: "esm", CommonJS: "commonjs", Text: "text", Data: "data", CompiledWasm: "wasm" };

/** The worker's code: { script, filename, format, modules }. */
function codeOf(entry, root) {
  const where = `cloudflareTest: miniflare.workers "${entry.name}"`;
  if (Array.isArray(entry.modules)) {
    const [main, ...rest] = entry.modules;
    if (!main) throw new TypeError(`${where}: modules is empty`);
    const text = (m) => (m.contents !== undefined ? m.contents : fs.readFileSync(path.resolve(root, m.path)));
    const modules = {};
    for (const m of rest) modules[m.path] = { type: TYPES[m.type] ?? "esm", content: text(m) };
    return { script: String(text(main)), filename: main.path, format: "module", modules };
  }
  if (typeof entry.scriptPath === "string") {
    const file = path.resolve(root, entry.scriptPath);
    if (!fs.existsSync(file)) throw new Error(`${where}: scriptPath ${file} does not exist (build it first, e.g. in a globalSetup)`);
    return { script: fs.readFileSync(file, "utf8"), filename: file, format: entry.modules ? "module" : undefined };
  }
  if (typeof entry.script === "string") return { script: entry.script, filename: `${entry.name}.js`, format: entry.modules ? "module" : undefined };
  throw new TypeError(`${where}: give script, scriptPath or modules`);
}

/**
 * Starts the auxiliary workers; resolves to { services, dispose } where `services` maps each
 * worker's name to it (for the main worker's service bindings).
 */
async function startAuxiliaryWorkers(entries, root, log) {
  const api = require("../../index.js");
  const started = new Map();
  try {
    for (const entry of entries ?? []) {
      if (entry === null || typeof entry !== "object" || typeof entry.name !== "string" || entry.name === "") {
        throw new TypeError("cloudflareTest: each miniflare.workers entry needs a name");
      }
      const bindings = {};
      addMiniflareBindings(bindings, entry, { where: `cloudflareTest: miniflare.workers "${entry.name}"`, api, services: (name) => started.get(name), selfName: entry.name });
      const worker = await api.createWorker({
        ...codeOf(entry, root),
        bindings,
        compatibilityDate: entry.compatibilityDate,
        compatibilityFlags: entry.compatibilityFlags,
        unsafeExperimental: true,
        ...(typeof entry.outboundService === "function" ? { outbound: entry.outboundService } : {}),
        onLog: (level, message) => log(level, `[${entry.name}] ${message}`),
      });
      started.set(entry.name, worker);
    }
  } catch (error) {
    await Promise.all([...started.values()].map((w) => w.dispose()));
    throw error;
  }
  return {
    services: Object.fromEntries(started),
    dispose: () => Promise.all([...started.values()].map((w) => w.dispose())),
  };
}

module.exports = { startAuxiliaryWorkers };
