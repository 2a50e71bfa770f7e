// Translation of one parsed `.wd-test` config into a plan for workerbox: per worker service its
// modules (main module first, embeds read relative to the config), compatibility flags (those
// workerbox accepts), bindings as neutral descriptions (var / service / durable object / kv /
// r2 / queue / analytics engine / memory cache / outbound; a kv, queue or analytics engine
// binding naming a worker service carries it) and its global outbound; and the config's `tcp`
// sockets (each served by a worker's connect handler: run.mjs listens on a free loopback port
// for each and points the workers' connect() to the socket's address there). What cannot be carried over is listed in
// `gaps` (the test still runs without it) or makes the config `untranslatable` (with the reason).
// run.mjs turns the plan into createWorker options; nothing here touches workerbox.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const table = require("../../lib/compat-flags.json");
const FLAGS = new Map();
for (const f of table.flags) {
  if (f.enable) FLAGS.set(f.enable, f);
  if (f.disable) FLAGS.set(f.disable, f);
}

const MODULE_KINDS = { esModule: "esm", commonJsModule: "commonjs", text: "text", data: "data", json: "json", wasm: "wasm" };
const BINARY_KINDS = new Set(["data", "wasm"]);

class Untranslatable extends Error {}

/** An embed's or inline value's content: a string for text kinds, a Buffer for binary ones. */
function content(value, kind, dir, where) {
  if (value && typeof value === "object" && "embed" in value) {
    const file = path.resolve(dir, value.embed);
    if (!existsSync(file)) throw new Untranslatable(`${where}: embedded file ${value.embed} is missing`);
    const bytes = readFileSync(file);
    return BINARY_KINDS.has(kind) ? bytes : bytes.toString("utf8");
  }
  if (Buffer.isBuffer(value)) return BINARY_KINDS.has(kind) ? value : value.toString("utf8");
  if (typeof value === "string") return BINARY_KINDS.has(kind) ? Buffer.from(value, "utf8") : value;
  throw new Untranslatable(`${where}: unsupported value`);
}

/** The compatibility flags workerbox accepts, and those it drops with the reason. */
export function splitFlags(flags) {
  const kept = [];
  const dropped = [];
  for (const flag of flags ?? []) {
    const entry = FLAGS.get(flag);
    // Experimental flags are kept: workerd's tests run with --experimental, workerbox's workers
    // with unsafeExperimental.
    if (!entry) dropped.push(`${flag} (not in workerbox's flag table)`);
    else kept.push(flag);
  }
  return { kept, dropped };
}

function serviceRef(v) {
  if (typeof v === "string") return { service: v };
  if (v && typeof v === "object") return { service: v.name, entrypoint: v.entrypoint, props: v.props };
  return null;
}

/** The worker service a KV / R2 / queue binding names (its backing), or nothing (a local store). */
function backing(designator, services) {
  const ref = serviceRef(designator);
  return ref && services.get(ref.service)?.worker ? { service: ref.service, entrypoint: ref.entrypoint } : {};
}

function binding(b, services, where, gaps) {
  const name = b.name;
  const at = `${where} binding ${name}`;
  if ("text" in b) return { name, kind: "var", value: typeof b.text === "string" ? b.text : content(b.text, "text", where.dir, at) };
  if ("json" in b) {
    const text = typeof b.json === "string" ? b.json : content(b.json, "text", where.dir, at);
    return { name, kind: "var", value: JSON.parse(text) };
  }
  if ("data" in b) return { name, kind: "var", value: content(b.data, "data", where.dir, at) }; // bytes: an ArrayBuffer in env
  if ("service" in b) {
    const ref = serviceRef(b.service);
    const target = services.get(ref.service);
    if (!target) throw new Untranslatable(`${at}: names service "${ref.service}", which the config does not define`);
    // props = (json = "…"): the callee's ctx.props (service()'s props).
    let props;
    if (ref.props !== undefined) {
      if (typeof ref.props?.json === "string") props = JSON.parse(ref.props.json);
      else gaps.push(`${at}: service props other than (json = …) are not passed`);
    }
    if (target.worker) return { name, kind: "service", service: ref.service, entrypoint: ref.entrypoint, ...(props !== undefined ? { props } : {}) };
    // An external service at the address of one of the config's own sockets (workerd's
    // `loopback:` pairs, RPC over a real connection): a binding to the service that socket serves.
    const served = target.external?.address === undefined ? undefined : where.sockets?.get(target.external.address);
    if (served !== undefined && services.get(served.service)?.worker) return { name, kind: "service", service: served.service, entrypoint: served.entrypoint };
    if (target.network || target.external) return { name, kind: "network", address: target.external?.address ?? null };
    gaps.push(`${at}: service "${ref.service}" is a ${Object.keys(target).filter((k) => k !== "name").join("/")} service (omitted)`);
    return null;
  }
  if ("durableObjectNamespace" in b) {
    const v = b.durableObjectNamespace;
    const className = typeof v === "string" ? v : v.className;
    return { name, kind: "durableObject", className, service: typeof v === "string" ? null : v.serviceName ?? null };
  }
  // A KV namespace, R2 bucket, queue or Analytics Engine dataset names the service that backs it; when that
  // is one of the config's workers, the binding speaks workerd's HTTP protocol to it.
  if ("kvNamespace" in b) return { name, kind: "kv", ...backing(b.kvNamespace, services) };
  // An R2 bucket names the service that backs it (the bucket's name is that service's name).
  if ("r2Bucket" in b) {
    const backed = backing(b.r2Bucket, services);
    return { name, kind: "r2", ...backed, ...(backed.service !== undefined ? { bucket: backed.service } : {}) };
  }
  if ("r2Admin" in b) return { name, kind: "r2" };
  if ("queue" in b) return { name, kind: "queue", ...backing(b.queue, services) };
  if ("analyticsEngine" in b) {
    const ref = serviceRef(b.analyticsEngine);
    if (!services.get(ref?.service)?.worker) {
      gaps.push(`${at}: analyticsEngine service "${ref?.service}" is not a worker (omitted)`);
      return null;
    }
    return { name, kind: "analyticsEngine", dataset: ref.service, service: ref.service, entrypoint: ref.entrypoint };
  }
  if ("memoryCache" in b) {
    // workerd's unset limits are 0, which keeps nothing.
    const { maxKeys = 0, maxValueSize = 0, maxTotalValueSize = 0 } = b.memoryCache.limits ?? {};
    return { name, kind: "memoryCache", id: b.memoryCache.id, limits: { maxKeys, maxValueSize, maxTotalValueSize } };
  }
  // A Worker Loader (workerLoader = (id = "…")): createWorker's workerLoader({ id }).
  if ("workerLoader" in b) return { name, kind: "workerLoader", id: b.workerLoader?.id };
  if ("unsafeEval" in b) return { name, kind: "unsafeEval" };
  if ("fromEnvironment" in b) {
    const value = process.env[b.fromEnvironment];
    // Unset (workerd's test sidecar sets these), the binding is null, as workerd makes it.
    if (value === undefined) {
      gaps.push(`${at}: fromEnvironment ${b.fromEnvironment} is not set (workerd's test sidecar sets it): null, as in workerd`);
      return { name, kind: "var", value: null };
    }
    return { name, kind: "var", value };
  }
  const kind = Object.keys(b).find((k) => k !== "name") ?? "(none)";
  gaps.push(`${at}: binding kind "${kind}" is not supported by workerbox (omitted)`);
  return null;
}

/**
 * A `tcp` socket of the config served by one of its workers: `{ address, service, entrypoint }`
 * (`address` as the config has it, `*:8081` or `host:port`), or null with the reason in `gaps`.
 */
function tcpSocket(k, services, gaps) {
  const ref = serviceRef(k.service);
  const at = `socket ${k.name} (${k.address})`;
  if (!services.get(ref?.service)?.worker) {
    gaps.push(`${at}: tcp socket of service "${ref?.service}", which is not a worker (not carried over)`);
    return null;
  }
  if (typeof k.address !== "string" || !/^(\*|[^:]+|\[[^\]]+\]):[0-9]+$/.test(k.address)) {
    gaps.push(`${at}: tcp socket address is not host:port (not carried over)`);
    return null;
  }
  if (k.tcp?.tlsOptions !== undefined) gaps.push(`${at}: tcp socket's tlsOptions are not carried over (plain TCP)`);
  return { address: k.address, service: ref.service, entrypoint: ref.entrypoint ?? "default" };
}

/**
 * The plan for one config: { workers: [{ name, modules, flags, bindings, outbound, doClasses }],
 * tcp: [{ address, service, entrypoint }], gaps: [string], untranslatable: string | null }.
 * `dir` is the config's directory.
 */
export function translate(config, dir) {
  const gaps = [];
  const services = new Map();
  for (const s of config.services ?? []) services.set(s.name, s);
  const sockets = new Map();
  for (const k of config.sockets ?? []) if (typeof k.address === "string" && k.address.startsWith("loopback:")) sockets.set(k.address, serviceRef(k.service));
  const workers = [];
  try {
    for (const flag of config.v8Flags ?? []) if (flag !== "--expose-gc") gaps.push(`v8Flags ${flag} is not carried over`);
    // Extensions' modules (internal ones such as test:instrumentation-tail) are importable by
    // their names from every worker, as workerd registers them.
    const extensionModules = [];
    for (const ext of config.extensions ?? []) {
      for (const m of ext.modules ?? []) {
        const key = Object.keys(m).find((k) => k in MODULE_KINDS);
        if (!key) throw new Untranslatable(`extension module ${m.name}: kind ${Object.keys(m).filter((k) => k !== "name" && k !== "internal").join("/")} is not supported`);
        const kind = MODULE_KINDS[key];
        extensionModules.push({ name: m.name, kind, content: content(m[key], kind, dir, `extension module ${m.name}`) });
      }
    }
    for (const s of config.services ?? []) {
      if (!s.worker) continue;
      const w = s.worker;
      const where = Object.assign(`service ${s.name}`, { dir, sockets });
      if (w.serviceWorkerScript !== undefined) throw new Untranslatable(`${where}: a service-worker script (workerd's test runner only calls module exports)`);
      if (w.inherit !== undefined) throw new Untranslatable(`${where}: inherits another worker`);
      if (!Array.isArray(w.modules) || w.modules.length === 0) throw new Untranslatable(`${where}: no modules`);
      const modules = [];
      for (const m of w.modules) {
        const key = Object.keys(m).find((k) => k in MODULE_KINDS);
        if (!key) throw new Untranslatable(`${where} module ${m.name}: kind ${Object.keys(m).filter((k) => k !== "name").join("/")} is not supported`);
        const kind = MODULE_KINDS[key];
        modules.push({ name: m.name, kind, content: content(m[key], kind, dir, `${where} module ${m.name}`), namedExports: m.namedExports });
      }
      for (const m of extensionModules) if (!modules.some((own) => own.name === m.name)) modules.push(m);
      if (modules[0].kind !== "esm") throw new Untranslatable(`${where}: the main module is ${modules[0].kind}, not an ES module`);
      const { kept, dropped } = splitFlags(w.compatibilityFlags);
      for (const d of dropped) gaps.push(`${where}: flag ${d}`);
      const bindings = [];
      for (const b of w.bindings ?? []) {
        const t = binding(b, services, where, gaps);
        if (t) bindings.push(t);
      }
      let outbound = null;
      let outboundEntrypoint;
      if (w.globalOutbound !== undefined) {
        const ref = serviceRef(w.globalOutbound);
        const target = services.get(ref.service);
        if (target?.worker) {
          outbound = ref.service;
          if (ref.entrypoint !== undefined && ref.entrypoint !== "default") outboundEntrypoint = ref.entrypoint;
        }
        else if (!target?.network && !target?.external) gaps.push(`${where}: globalOutbound ${ref.service} is not a worker or network service`);
      }
      const doClasses = {};
      for (const ns of w.durableObjectNamespaces ?? []) doClasses[ns.className] = { sql: ns.enableSql === true, ephemeral: "ephemeralLocal" in ns };
      // Services a worker config names for itself, carried over when they are workers of the
      // config: the Cache API's backing (cacheApiOutbound), tail workers (`tails`, the legacy
      // tail() handler) and streaming tail workers (`streamingTails`, tailStream()).
      const workerService = (designator, what) => {
        const found = backing(designator, services);
        if (found.service === undefined) gaps.push(`${where}: ${what} ${serviceRef(designator)?.service} is not a worker service (not carried over)`);
        return found.service === undefined ? null : found;
      };
      const cacheService = w.cacheApiOutbound === undefined ? null : workerService(w.cacheApiOutbound, "cacheApiOutbound");
      const tails = (w.tails ?? []).map((t) => workerService(t, "tail")).filter(Boolean);
      const streamingTails = (w.streamingTails ?? []).map((t) => workerService(t, "streaming tail")).filter(Boolean);
      for (const key of ["durableObjectStorage", "limits", "moduleFallback"]) {
        if (w[key] === undefined) continue;
        if (key === "durableObjectStorage" && ("inMemory" in w[key] || "none" in w[key])) continue;
        gaps.push(`${where}: ${key} is not carried over`);
      }
      // --expose-gc becomes createWorker's unsafeExposeGc; other V8 flags have no per-worker form.
      const exposeGc = (config.v8Flags ?? []).includes("--expose-gc");
      workers.push({ name: s.name, modules, flags: kept, bindings, outbound, outboundEntrypoint, doClasses, exposeGc, cacheService, tails, streamingTails });
    }
    if (workers.length === 0) throw new Untranslatable("no worker services");
  } catch (e) {
    if (e instanceof Untranslatable || e instanceof SyntaxError) return { workers: [], tcp: [], gaps, untranslatable: e.message };
    throw e;
  }
  const tcp = (config.sockets ?? []).filter((k) => k.tcp !== undefined).map((k) => tcpSocket(k, services, gaps)).filter(Boolean);
  return { workers, tcp, gaps, untranslatable: null };
}
