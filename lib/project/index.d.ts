// Type definitions for workerbox/project (lib/project/index.js): project configuration,
// bundling, the dev server and the platform proxy.

import type { Binding, JsonValue, LogLevel, Worker, WorkerOptions } from "../../index.js";

type MaybePromise<T> = T | Promise<T>;
type ServiceTarget = Worker | ((request: Request) => MaybePromise<Response>) | { fetch(request: Request): MaybePromise<Response> };

/** One problem in a configuration file. */
export interface ConfigProblem {
  file: string;
  /** 1-based line of the key, when it can be told. */
  line?: number;
  /** The key path, e.g. `kv_namespaces[1].binding`. */
  key?: string;
  message: string;
}

/** A bad configuration file; `message` lists every problem as `file:line: key: message`. */
export declare class ConfigError extends Error {
  readonly name: "ConfigError";
  readonly problems: ConfigProblem[];
  readonly file?: string;
  readonly line?: number;
  readonly key?: string;
}

/** esbuild failed; `message` names each file and line. */
export declare class BuildError extends Error {
  readonly name: "BuildError";
  readonly errors: unknown[];
}

export interface AssetsConfig {
  directory: string;
  binding?: string;
  htmlHandling: "auto-trailing-slash" | "force-trailing-slash" | "drop-trailing-slash" | "none";
  notFoundHandling: "none" | "404-page" | "single-page-application";
  runWorkerFirst: boolean | string[];
}

/** A configuration as readConfig() normalises it (paths absolute). */
export interface ProjectConfig {
  file: string;
  root: string;
  /** The folder of the user's own configuration (differs from `root` when redirected). */
  projectRoot: string;
  /** The user's configuration file, when `.wrangler/deploy/config.json` redirected to `file`. */
  redirectedFrom?: string;
  /** A custom build: `build.command`, run in `cwd`, again on changes under `watchDirs`. */
  build?: { command: string; cwd: string; watchDirs: string[] };
  env?: string;
  name?: string;
  main?: string;
  mainFile?: string;
  compatibilityDate?: string;
  compatibilityFlags?: string[];
  minify?: boolean;
  noBundle?: boolean;
  tsconfig?: string;
  cpuMs?: number;
  define?: Record<string, string>;
  alias?: Record<string, string>;
  rules: { type: "ESModule" | "CommonJS" | "Text" | "Data" | "CompiledWasm"; globs: string[]; fallthrough: boolean }[];
  crons: string[];
  assets?: AssetsConfig;
  dev?: { port?: number; ip?: string };
  /** Workers that receive this one's trace items (served beside it: startDevServers). */
  tailConsumers: { service: string; environment?: string }[];
  /** Streaming tail workers (`streaming_tail_consumers`). */
  streamingTailConsumers: { service: string }[];
  migrations: { tag: string; newClasses: string[]; newSqliteClasses: string[]; deletedClasses: string[]; renamedClasses: { from: string; to: string }[] }[];
  bindings: {
    vars: Record<string, JsonValue>;
    kv: { binding: string; id: string }[];
    r2: { binding: string; bucket: string }[];
    d1: { binding: string; databaseName: string; databaseId: string; migrationsDir: string; migrationsTable: string }[];
    durableObjects: { binding: string; className: string; scriptName?: string }[];
    queues: { producers: { binding: string; queue: string; deliveryDelay?: number }[]; consumers: { queue: string; deadLetterQueue?: string; [setting: string]: unknown }[] };
    services: { binding: string; service: string; environment?: string; entrypoint?: string }[];
    ratelimits: { binding: string; namespace: string; limit: number; period: 10 | 60 }[];
    analyticsEngine: { binding: string; dataset: string }[];
    sendEmail: { binding: string; destinationAddress?: string; allowedDestinationAddresses?: string[]; allowedSenderAddresses?: string[] }[];
    secretsStore: { binding: string; storeId: string; secretName: string }[];
    versionMetadata: { binding: string }[];
  };
  /** Secrets from `.dev.vars` (or `.env` files). */
  secrets: Record<string, string>;
  secretFiles: string[];
  warnings: (ConfigProblem & { text: string })[];
}

/** Reads and checks a project's configuration (a folder or a config file); throws ConfigError. */
/**
 * Reads a project's configuration. `redirect` (default true) follows `.wrangler/deploy/config.json`
 * to the configuration a build wrote, as wrangler does; `requireMain: false` accepts a `main`
 * that does not exist yet (a custom build makes it).
 */
export declare function readConfig(target?: string, options?: { env?: string; redirect?: boolean; requireMain?: boolean }): ProjectConfig;

/** A binding the configuration asks for that workerbox cannot provide (yet). */
export interface UnsupportedBinding {
  key: string;
  binding: string;
  reason: string;
}

export interface LoadProjectOptions {
  /** The `env.<name>` section to apply. */
  env?: string;
  /**
   * As wrangler's `--persist-to`: local state lives in `<persistTo>/v3` (default
   * `<root>/.wrangler/state/v3`, where `wrangler dev` keeps it), or `false` to keep it in memory.
   */
  persistTo?: string | false;
  /** The state folder itself (getPlatformProxy's `persist.path`), instead of `persistTo`. */
  statePath?: string;
  /** Targets for service bindings, by service name. */
  services?: Record<string, ServiceTarget>;
  /** Extra plain bindings, over the config's vars and secrets. */
  vars?: Record<string, JsonValue>;
  /** The worker's console lines, stacks mapped to the original sources. */
  onLog?: (level: LogLevel, message: string) => void;
  /** `false`: do not apply the D1 databases' pending migrations on load. */
  migrate?: boolean;
  /** `false`: skip the first bundle (`options` stays null until `rebuild()`). */
  build?: boolean;
  /** `true`: rebuilds reuse one esbuild context (faster); end it with the project's `dispose()`. */
  incremental?: boolean;
  /**
   * `true`: keep the last bundle under `.wrangler/tmp/workerbox-bundle/` and start from it when
   * nothing it was built from changed (`startDevServer`: default true; false also keeps V8's
   * compiled code off the disk).
   */
  cache?: boolean;
  /** Keeps the stores made (KV, R2, D1, queues, Durable Objects) to reuse them when loading again. */
  storeCache?: Map<string, unknown>;
}

/** D1 migrations applied while loading a project. */
export interface AppliedMigrations {
  /** The D1 binding's name. */
  binding: string;
  /** Its migrations_dir. */
  dir: string;
  /** The files applied now, in order (empty when none was pending). */
  applied: string[];
}

export interface AssetHandler {
  readonly directory: string;
  readonly size: number;
  refresh(): number;
  /** What `env.ASSETS.fetch()` answers: every rule applied, 404 when nothing matches. */
  fetch(request: Request | string | URL): Promise<Response>;
  /** The router in front of a worker: a Response, or null to send the request to the worker. */
  route(request: Request, hasWorker: boolean): Response | null;
}

export interface Project {
  name?: string;
  /** The folder of the configuration in use (a build's output folder when redirected). */
  root: string;
  /** The folder of the user's own configuration: state lives under it. */
  projectRoot: string;
  configFile: string;
  /** The user's configuration file, when `.wrangler/deploy/config.json` redirected to `configFile`. */
  redirectedFrom?: string;
  env?: string;
  config: ProjectConfig;
  /** Where local state persists (`.wrangler/state/v3`, shared with wrangler), or null (memory). */
  stateDir: string | null;
  /** What this load took over: state of the old `.workerbox/state` layout, wrangler's R2 data. */
  stateNotes: string[];
  warnings: string[];
  unsupported: UnsupportedBinding[];
  bindings: Record<string, JsonValue | Binding>;
  assets: AssetHandler | null;
  crons: string[];
  /** Options for createWorker(), or null for an assets-only project. */
  options: (WorkerOptions & { modules: NonNullable<WorkerOptions["modules"]> }) | null;
  /** Files the last bundle read. */
  inputs: string[];
  /** The D1 migrations applied on load (none with `migrate: false`). */
  migrations: AppliedMigrations[];
  /** Bundles again (same bindings); resolves to the new options. */
  rebuild(): Promise<Project["options"]>;
  /** Ends what `incremental` keeps open (esbuild's context); `rebuild()` still works after. */
  dispose(): Promise<void>;
  /** With `cache`: how the last bundle fared (`hit`, `miss` or `corrupt` with why; `built`: a rebuild). */
  cache?: { status: "hit" | "miss" | "corrupt" | "built"; message?: string } | null;
  /** With `cache`: resolves when the last build's cache writes are done, with how the save went. */
  settled(): Promise<{ saved: true } | { skipped: string } | undefined>;
  /** Maps an error from this project's worker back to the original files and lines. */
  mapError<E>(error: E): E;
}

/** Reads a project, bundles its worker (esbuild) and builds its bindings. */
export declare function loadProject(target?: string, options?: LoadProjectOptions): Promise<Project>;

/** Starts the project's worker; start-up errors name the original source lines. */
export declare function startWorker(project: Project, extra?: Partial<WorkerOptions>): Promise<Worker>;

/** Bundles `config.mainFile` with esbuild into `<root>/.workerbox/bundle/`. */
export declare function bundle(config: ProjectConfig, options?: { outdir?: string }): Promise<{ script: string; filename: string; modules: Record<string, { type: string; content: Uint8Array }>; inputs: string[]; warnings: string[] }>;

export declare function createAssetHandler(assets: Partial<AssetsConfig> & { directory: string }): AssetHandler;

export interface DevServerOptions extends Omit<LoadProjectOptions, "onLog"> {
  /** Default: the config's dev.port, else 8787; 0 picks a free port. */
  port?: number;
  /** Default: the config's dev.ip, else 127.0.0.1. */
  host?: string;
  /** Rebuild on file changes (default true). */
  watch?: boolean;
  /** Colored output (default: stdout is a TTY and NO_COLOR is not set). */
  color?: boolean;
  /** Where lines go (default console.log). */
  log?: (line: string) => void;
  /** Print a line per request (default true). */
  logRequests?: boolean;
  /** Serve the worker to DevTools (Chrome DevTools Protocol) on this port (true: 9229), loopback only. */
  inspect?: boolean | number;
}

/** The dev server (an EventEmitter; typed without @types/node so these types need none). */
export interface DevServer {
  readonly url: string;
  readonly port: number;
  readonly project: Project;
  readonly worker: Worker | null;
  /** Node's http.Server. */
  readonly server: { close(callback?: (error?: Error) => void): unknown; address(): unknown };
  /** Reloads the configuration and rebuilds. */
  reload(changed?: string[]): Promise<void>;
  /** Stops watching, closes the server and its connections and disposes the worker. */
  close(): Promise<void>;
  on(event: "reload", listener: (event: { ok: boolean; error?: Error; changed: string[] }) => void): this;
  on(event: "request", listener: (event: { method: string; path: string; status: number; ms: number }) => void): this;
  on(event: "assets", listener: (event: { files: string[] }) => void): this;
  on(event: string, listener: (...args: any[]) => void): this;
  once(event: string, listener: (...args: any[]) => void): this;
  off(event: string, listener: (...args: any[]) => void): this;
}

/** Serves a project on localhost, as `workerbox dev` does. */
export declare function startDevServer(dir?: string, options?: DevServerOptions): Promise<DevServer>;

/** Options of startDevServers and loadProjects: the dev registry's folder (default: per user). */
export interface MultiWorkerOptions {
  registryDir?: string;
}

/**
 * Serves several workers (`workerbox dev -c a -c b`): the first on `port`, the others on free
 * loopback ports; their bindings reach each other, and workers of other dev processes through
 * the dev registry.
 */
export declare function startDevServers(targets: string[], options?: DevServerOptions & MultiWorkerOptions): Promise<{ servers: DevServer[]; primary: DevServer; readonly url: string; server(name: string): DevServer | null; close(): Promise<void> }>;

/** loadProject() of several configs whose bindings reach each other; start() creates the workers. */
export declare function loadProjects(targets: string[], options?: LoadProjectOptions & MultiWorkerOptions): Promise<{ projects: Project[]; start(extra?: Partial<WorkerOptions>): Promise<{ workers: Record<string, Worker>; dispose(): Promise<void> }> }>;

// The Node-side KV and R2 clients are the API's (`kv().namespace()`, `storage().bucket()`).
export type { KVNamespace, R2Bucket, R2Object, R2ObjectBody, R2HttpMetadata, R2Conditional } from "../../index.js";

export interface PlatformProxyOptions {
  /** A config file or project folder (default "."). */
  configPath?: string;
  /** The `env.<name>` section to apply. */
  environment?: string;
  /** true (default): `<root>/.wrangler/state/v3`; false: memory; `{ path }`: that folder. */
  persist?: boolean | { path: string };
  /** Use an already loaded project (e.g. a dev server's), sharing its stores in this process. */
  project?: Project;
  services?: Record<string, ServiceTarget>;
}

export interface PlatformProxy<Env = Record<string, unknown>> {
  env: Env;
  cf: Record<string, unknown>;
  ctx: { waitUntil(promise: Promise<unknown>): void; passThroughOnException(): void; props: Record<string, unknown> };
  /** A no-op Cache API, as in wrangler's getPlatformProxy. */
  caches: { default: ProxyCache; open(name: string): Promise<ProxyCache> };
  /** Bindings of the config that `env` leaves out, and why. */
  unsupported: UnsupportedBinding[];
  warnings: string[];
  dispose(): Promise<void>;
}

export interface ProxyCache {
  match(request: Request | string): Promise<Response | undefined>;
  put(request: Request | string, response: Response): Promise<void>;
  delete(request: Request | string): Promise<boolean>;
}

/** A project's bindings as Node objects: `{ env, cf, ctx, caches, dispose }`. */
export declare function getPlatformProxy<Env = Record<string, unknown>>(options?: PlatformProxyOptions): Promise<PlatformProxy<Env>>;

export declare const configKeys: { supported: string[]; unsupported: string[]; deployOnly: string[] };
