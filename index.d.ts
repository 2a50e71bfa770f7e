// Type definitions for workerbox's public API (index.js).

declare global {
  // `Symbol.asyncDispose` is declared here too, as @types/node does, so these types check in
  // projects whose `lib` predates esnext.disposable (e.g. ["es2022", "dom"]).
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/** A JSON value usable as a plain `env` binding. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type LogLevel = "debug" | "log" | "info" | "warn" | "error";

/** Resource limits; every field is optional and has a default. */
export interface WorkerLimits {
  /** Events (requests, scheduled events) running at once in the isolate; more wait in a FIFO queue. Default 1000. */
  maxInFlight?: number;
  /** Events allowed to wait; beyond this `dispatch` rejects with `code: "ERR_OVERLOADED"`. Default 10000. */
  maxQueued?: number;
  /** Wall-clock bound on one event once it starts, in ms (`0`: none). Rejects with `code: "ERR_WALL_LIMIT"`. Default 30000. */
  wallMs?: number;
  /** CPU time per request (its handler, timers and binding callbacks, summed), in ms (`0`: none). `code: "ERR_CPU_LIMIT"`. Default 30000. */
  cpuMs?: number;
  /** V8 heap limit and, separately, the ArrayBuffer memory cap, in MB (16–16384). `code: "ERR_MEMORY_LIMIT"`. Default 128. */
  memoryMb?: number;
  /** How long one binding call may wait for its host handler, in ms (`0`: forever). Default 30000. */
  bindingMs?: number;
  /** How long an event's `ctx.waitUntil()` work may run after its response before it is cancelled with a logged warning (`0`: no bound); never more than a non-zero `wallMs`. Default 30000, as in production. */
  waitUntilMs?: number;
  /** How long a streamed response body may produce nothing while it is being read, in ms, before the read fails with `code: "ERR_BODY_STALLED"` and the worker's stream is cancelled (`0`: no bound). Default 100000, Cloudflare's 100-second proxy timeout. */
  bodyIdleMs?: number;
}

export interface WorkerOptions {
  /** The worker's source: an ES module (`export default { fetch }`) or a service-worker script. */
  script: string;
  /** Name used in stack traces and error locations. Default `"worker.js"`. */
  filename?: string;
  /** Script format; detected from the script when omitted. */
  format?: "module" | "service-worker";
  /**
   * `env` bindings (globals, for service-worker scripts): plain JSON values become vars, bytes
   * an `ArrayBuffer` (workerd's data binding); `kv()`, `storage()`, `d1()` and `service()` (or a
   * `Worker`) become binding objects.
   */
  bindings?: Record<string, JsonValue | ArrayBuffer | ArrayBufferView | Binding | Worker>;
  /** Receives every `console.*` line of the worker. Default: prints `[worker] …` on the host console. */
  onLog?: (level: LogLevel, message: string) => void;
  /** Allow `eval()` and `new Function()` inside the worker. Default `false`, as in production. */
  allowEval?: boolean;
  limits?: WorkerLimits;
  /**
   * `"open"` (default, for local development): `fetch()` may reach any address. `"public"`: no
   * loopback, private, link-local (incl. 169.254.169.254) or other non-public addresses, checked
   * after DNS resolution and on every redirect.
   */
  network?: "open" | "public";
  /**
   * Addresses `connect()` (cloudflare:sockets, node:net, node:tls) dials in place of the ones
   * asked for: `{ "host:port": "host:port" }` (an IPv6 host in brackets). The worker still sees
   * the address it asked for, and TLS checks that name. See docs/sockets.md.
   */
  connectOverrides?: Record<string, string>;
  /**
   * Modules the script may import, by name (paths relative to `filename` resolve against it).
   * `.js`/`.mjs`: ES module; `.wasm`: WebAssembly.Module; `.json`: parsed JSON; other strings:
   * text; other bytes: ArrayBuffer. Or give the type explicitly.
   */
  modules?: Record<string, string | ArrayBuffer | ArrayBufferView | { type: "esm" | "commonjs" | "wasm" | "text" | "data" | "json"; content: string | ArrayBuffer | ArrayBufferView }>;
  /**
   * Loads, on demand, what an `import`, `import()` or `require()` names that `modules` does not
   * have (and `node:` modules workerbox lacks): `undefined` when there is no such module. The
   * worker's thread waits for the answer (at most `limits.bindingMs`). See docs/runtime.md.
   */
  loadModule?: (specifier: string, referrer: string, details: { kind: "import" | "require" }) => MaybePromise<LoadedModule | string | undefined | null>;
  /**
   * The modules `loadModule` gives are the host's own code (as workerbox/vitest's runner is): they
   * import every `node:` module workerbox has, whatever the compatibility date and flags. The
   * worker's own code — its script, `modules`, and code it evaluates — still sees only what its
   * flags give (globals included). Needs `loadModule`. Default false.
   */
  trustLoadedModules?: boolean;
  /**
   * The module of `modules` that counts as the worker's main module too (`import.meta.main` is
   * true in it), when the script only wraps it, as a test runner's harness does.
   */
  mainModule?: string;
  /**
   * Tail workers: after each fetch this worker handles, each consumer gets a list of one trace
   * item shaped as Cloudflare's TraceItem (a worker's `tail(events)` handler, or a function
   * called in Node). See docs/bindings.md, "Tail workers".
   */
  tailConsumers?: (Worker | Binding | ((events: any[]) => void))[];
  /**
   * Streaming tail workers (workerd's `streamingTails`): each fetch or JS RPC invocation of this
   * worker calls their `tailStream(onsetEvent, env, ctx)` export, and the handler it returns gets
   * the invocation's later events (log, exception, return, outcome…) in order. A function is
   * called in Node as `tailStream(onsetEvent)`. See docs/bindings.md, "Streaming tail workers".
   */
  streamingTails?: (Worker | Binding | ((onsetEvent: any) => unknown))[];
  /**
   * Serve this worker to Chrome DevTools / VS Code (Chrome DevTools Protocol): `true` is
   * `{ port: 9229, host: "127.0.0.1" }`. One port serves many workers (listed by `name`, default
   * `filename`); `waitForDebugger` holds the script's start until a client runs it. See docs/api.md.
   */
  inspector?: boolean | { port?: number; host?: string; name?: string; waitForDebugger?: boolean };
  /** A source map of `script` (object or JSON): errors from the worker name the original files, and DevTools gets it. */
  sourceMap?: string | { version: number; sources: string[]; mappings: string; [key: string]: unknown };
  /**
   * The store behind the worker's `caches` (default: a fresh in-memory store per worker); or
   * `{ service }`, a cache service spoken to over HTTP as workerd's cacheApiOutbound is.
   */
  cache?:
    | {
        match(cache: string, url: string): MaybePromise<CacheEntry | null>;
        put(cache: string, url: string, entry: CacheEntry): MaybePromise<void>;
        delete(cache: string, url: string): MaybePromise<boolean>;
      }
    | { service: BackingService };
  /**
   * Answers the worker's `fetch()` calls in the host (Node's Request/Response) instead of the
   * network; or a `service()` binding, whose worker (entrypoint) answers them.
   */
  outbound?: ((request: Request) => Response | Promise<Response>) | Binding;
  /** Reuse V8's compiled code for a script loaded before in this process (default true). */
  codeCache?: boolean;
  /** Also keep the code cache in this directory. */
  cacheDir?: string;
  /**
   * `"shared"` (default, production semantics): one global scope; concurrent requests share the
   * script's module state. `"per-request"`: every request (and cron event) runs in a fresh
   * context where the script is evaluated anew, so no state leaks between requests — for tests.
   * The isolate stays warm and the next context is built while the worker is idle.
   */
  isolation?: "shared" | "per-request";
  /**
   * Per-request mode: how many request contexts one isolate serves before it is replaced by a
   * fresh one (default 1000). An isolate is also replaced after a request fails or an error goes
   * uncaught. Replacement waits until no request is running.
   */
  maxReuse?: number;
  /**
   * Take a warm spare from the process-wide pool when one is ready for these options, and keep
   * one booting for next time (default true). `false` opts this create out. See `configurePool`.
   */
  pool?: boolean;
  /**
   * Workers' compatibility date, `"YYYY-MM-DD"` (not in the future). Default: the newest date
   * workerbox's flag table knows (`"2026-08-22"`). Features whose workerd enable date is on or
   * before it are on.
   */
  compatibilityDate?: string;
  /**
   * workerd's compatibility flags (`"nodejs_compat"`, `"no_global_navigator"`, …). An unknown,
   * contradictory, or (without `unsafeExperimental`) experimental flag is a TypeError. As in workerd, some flags imply others
   * from a date (`nodejs_compat` brings `nodejs_compat_v2` from 2024-09-23,
   * `nodejs_compat_populate_process_env` from 2025-04-01, `enable_nodejs_process_v2` and the
   * fs/os modules from 2025-09-15, …). See docs/compatibility.md for what each changes here.
   */
  compatibilityFlags?: string[];
  /**
   * Accept workerd's experimental compatibility flags (those workerd takes only with
   * `--experimental`, e.g. `"service_binding_extra_handlers"`), as Miniflare and Cloudflare's
   * Vitest pool run workerd. Such a feature is on only when its flag is given. Default false.
   */
  unsafeExperimental?: boolean;
  /**
   * `globalThis.gc()` runs a full garbage collection in this worker, as V8's `--expose-gc` gives it
   * (workerd's tests pass that flag). For leak tests; never for production code. Default false.
   */
  unsafeExposeGc?: boolean;
}

/** A cron trigger for the worker's `scheduled()` handler. */
/** A module `loadModule` found: its canonical name (a path or URL), type and source. */
export interface LoadedModule {
  /** What relative imports inside it resolve against; default: the specifier. */
  name?: string;
  /** Default: from `name`'s extension (a string without one is an ES module). */
  type?: "esm" | "commonjs" | "wasm" | "text" | "data" | "json";
  content: string | ArrayBuffer | ArrayBufferView;
  /**
   * Imports resolved ahead (e.g. the module's static import graph): `referrer` (a module's
   * name) imports `specifier` as module `name`; `content` omitted for a module sent in the
   * same answer. Linking then needs no further call to `loadModule`.
   */
  dependencies?: { referrer: string; specifier: string; name: string; type?: LoadedModule["type"]; content?: string | ArrayBuffer | ArrayBufferView }[];
}

export interface ScheduledInput {
  type: "scheduled";
  /** The cron pattern the handler sees as `controller.cron`. Default `""`. */
  cron?: string;
  /** Default: now. */
  scheduledTime?: Date | number;
}

export interface ScheduledResult {
  outcome: "ok" | "exception";
  /** Whether the handler called `controller.noRetry()`. */
  noRetry: boolean;
  /** The handler's error, when `outcome` is `"exception"`. */
  error?: Error;
}

/** A request as a plain object. */
export interface RequestInit {
  url: string | URL;
  method?: string;
  headers?: Headers | [string, string][] | Record<string, string | string[]>;
  body?: string | ArrayBuffer | ArrayBufferView | Blob | FormData | URLSearchParams | ReadableStream | null;
}

export type DispatchInput =
  | Request
  | string
  | URL
  | (RequestInit & {
      url: string | URL;
      type?: "fetch";
      /** What the worker sees as `request.cf`, laid over its default (Miniflare's) key by key. */
      cf?: Record<string, unknown>;
    });

/** A cached response as the Cache API's store keeps it. */
export interface CacheEntry {
  status: number;
  statusText: string;
  /** `[name, value, name, value, …]` */
  headers: string[];
  body: Uint8Array;
  /** Milliseconds since the epoch after which the entry is not served. */
  expires: number;
}

/** A binding definition made by `kv()`, `storage()`, `d1()` or `service()`. */
export interface Binding {
  /** Your handlers (or the service's function or worker); null for an embedded store. */
  readonly handler: unknown;
  /** The embedded SQLite store answering the binding natively; null when handlers answer it. */
  readonly store: unknown;
}

type MaybePromise<T> = T | Promise<T>;

/** Workers' KVNamespace API, as `kv().namespace()` gives it in Node. */
export interface KVNamespace {
  get(key: string, options?: "text" | { type?: "text" }): Promise<string | null>;
  get<T = unknown>(key: string, options: "json" | { type: "json" }): Promise<T | null>;
  get(key: string, options: "arrayBuffer" | { type: "arrayBuffer" }): Promise<ArrayBuffer | null>;
  get(key: string, options: "stream" | { type: "stream" }): Promise<ReadableStream | null>;
  get(keys: string[], options?: "text" | "json" | { type?: "text" | "json" }): Promise<Map<string, unknown>>;
  getWithMetadata<M = unknown>(key: string, options?: "text" | "json" | "arrayBuffer" | "stream" | { type?: "text" | "json" | "arrayBuffer" | "stream" }): Promise<{ value: unknown; metadata: M | null; cacheStatus: null }>;
  put(key: string, value: string | ArrayBuffer | ArrayBufferView | ReadableStream | Blob, options?: { expiration?: number; expirationTtl?: number; metadata?: unknown }): Promise<void>;
  delete(key: string): Promise<void>;
  list<M = unknown>(options?: { prefix?: string; limit?: number; cursor?: string }): Promise<{ keys: { name: string; expiration?: number; metadata?: M }[]; list_complete: boolean; cursor?: string }>;
}

/** What `kv()` returns: a binding for createWorker, and the same namespace in Node. */
export interface KVBinding extends Binding {
  /**
   * The namespace as a KVNamespace in Node: the one the workers given this binding see (same
   * validation and errors; calls run in a small internal worker made on the first one).
   */
  namespace(): KVNamespace;
}

/** What `storage()` returns: a binding for createWorker, and the same bucket in Node. */
export interface StorageBinding extends Binding {
  /** The bucket as an R2Bucket in Node: the one the workers given this binding see. */
  bucket(): R2Bucket;
}

/** The KV handler contract (sync or async), for `kv({ get, put, delete, list })`. */
export interface KVHandlers {
  get(key: string): MaybePromise<null | string | Uint8Array | { value: string | Uint8Array | ArrayBuffer; metadata?: unknown; expiration?: number }>;
  /** `expiration` is in seconds since the epoch. */
  put(key: string, value: Uint8Array, options: { expiration?: number; metadata?: unknown }): MaybePromise<void>;
  delete(key: string): MaybePromise<void>;
  list(options: { prefix: string; limit: number; cursor?: string }): MaybePromise<{
    keys: { name: string; expiration?: number; metadata?: unknown }[];
    list_complete: boolean;
    cursor?: string;
  }>;
}

/** A stored object as a storage handler returns it; missing etag/size are computed. */
export interface StoredObject {
  key?: string;
  value: string | Uint8Array | ArrayBuffer;
  httpMetadata?: Record<string, string | number>;
  customMetadata?: Record<string, string>;
  /** Milliseconds since the epoch, or a Date. */
  uploaded?: number | Date;
  etag?: string;
  version?: string;
}

/** The object-storage handler contract; ranges, conditionals and list paging are done for you. */
export interface StorageHandlers {
  get(key: string): MaybePromise<StoredObject | null>;
  put(key: string, value: Uint8Array, options: { httpMetadata: Record<string, string | number>; customMetadata: Record<string, string> }): MaybePromise<StoredObject | void>;
  delete(key: string): MaybePromise<void>;
  /** Every object (with its key); the dispatcher filters, sorts and pages. */
  list(): MaybePromise<Iterable<StoredObject & { key: string }>>;
}

/**
 * A KV namespace: in memory, in the SQLite file `dir/kv.sqlite3` (shared with every binding and
 * process using that folder), or answered by your handlers.
 */
export declare function kv(options?: { dir?: string } | KVHandlers): KVBinding;
/**
 * A KV namespace whose backing is a service, spoken to in workerd's KV HTTP protocol (as a workerd
 * `kvNamespace` naming a service): see docs/bindings.md, "Bindings backed by a service".
 */
export declare function kv(options: { service: BackingService }): Binding;
/** A service a binding speaks workerd's HTTP protocol to: a worker, a `service()` binding or a fetch handler. */
export type BackingService = Worker | Binding | ((request: Request) => MaybePromise<Response>) | { fetch(request: Request): MaybePromise<Response> };
/**
 * An object storage bucket with R2's API: in memory, in the SQLite file `dir/storage.sqlite3`
 * (shared with every binding and process using that folder), or answered by your handlers.
 */
export declare function storage(options?: { dir?: string } | StorageHandlers): StorageBinding;
/**
 * An R2 bucket whose backing is a service, spoken to in workerd's R2 binding protocol (as a
 * workerd `r2Bucket` naming a service; `bucket` names it in spans): see docs/bindings.md,
 * "Bindings backed by a service".
 */
export declare function storage(options: { service: BackingService; bucket?: string }): Binding;
/** A D1 value as it travels: numbers, strings, null, and blobs as arrays of bytes. */
export type D1Value = number | string | null | number[];

/** What a D1 query reports, as production D1's `meta`. */
export interface D1Meta {
  duration: number;
  changes: number;
  last_row_id: number;
  changed_db: boolean;
  size_after: number;
  rows_read: number;
  rows_written: number;
  [key: string]: unknown;
}

export interface D1Result<T = Record<string, unknown>> {
  success: true;
  meta: D1Meta;
  results: T[];
}

export interface D1ExecResult {
  count: number;
  duration: number;
}

export interface D1PreparedStatement {
  readonly statement: string;
  readonly params: D1Value[];
  /** Numbers, strings, booleans (as 1/0), null, ArrayBuffer / views / byte arrays (blobs); anything else throws D1_TYPE_ERROR. */
  bind(...values: unknown[]): D1PreparedStatement;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  first<T = unknown>(column: string): Promise<T | null>;
  all<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  run<T = Record<string, unknown>>(): Promise<D1Result<T>>;
  raw<T = unknown[]>(options?: { columnNames?: boolean }): Promise<T[]>;
}

export interface D1DatabaseSession {
  prepare(sql: string): D1PreparedStatement;
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
  getBookmark(): string | null;
}

/** D1's database API, as `env.DB` has it in a worker and `binding.database()` in Node. */
export interface D1Database {
  prepare(sql: string): D1PreparedStatement;
  /** Runs the statements in one transaction: all take effect or none. */
  batch<T = Record<string, unknown>>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]>;
  /** Runs SQL one line at a time (a statement may not span lines), in one transaction. */
  exec(sql: string): Promise<D1ExecResult>;
  withSession(constraintOrBookmark?: string): D1DatabaseSession;
}

/**
 * The handler contract for `d1({ query })`: run the statements in order, atomically, and return
 * one `{ columns, rows, meta? }` per statement (blobs may be Uint8Array/ArrayBuffer). A thrown
 * error becomes `D1_ERROR: <its message>`; give it a numeric `index` to name the failing statement.
 */
export interface D1Handlers {
  query(statements: { sql: string; params: D1Value[] }[]): MaybePromise<{ columns: string[]; rows: unknown[][]; meta?: Partial<D1Meta> }[]>;
}

/** A D1 binding definition; `database()` is the same database for Node. */
export interface D1Binding extends Binding {
  database(): D1Database;
}

/**
 * A D1 database: in memory, in the SQLite file `dir/d1.sqlite3` (shared with every binding and
 * process using that folder), or answered by your `query` handler. `timeoutMs` (default 30000)
 * bounds each call to the embedded database; a query running longer is interrupted.
 */
export declare function d1(options?: { dir?: string; timeoutMs?: number } | D1Handlers): D1Binding;

/** A Hyperdrive binding's value in the worker: the local database's connection (docs/sockets.md). */
export interface HyperdriveBinding {
  connectionString: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}
/** A Hyperdrive binding for `bindings` that connects to `connectionString` (postgres:// or mysql://), as wrangler dev's localConnectionString. */
export declare function hyperdrive(connectionString: string): HyperdriveBinding;

/**
 * workerd's Worker Loader: in the worker, `env.NAME.get(name, getCode)` and `env.NAME.load(code)`
 * make workers from code at run time, each a workerbox worker of its own (docs/bindings.md).
 * Loaders with the same `id` share the workers they load (within one parent worker).
 */
export declare function workerLoader(options?: { id?: string }): Binding;

/** A rate limiter binding (`env.LIMITER.limit({ key })` in the worker; docs/bindings.md). */
export interface RateLimitBinding extends Binding {
  readonly limitValue: number;
  readonly period: 10 | 60;
  readonly namespace: string | undefined;
  /** Counts one call for `key` against the workers' counters. */
  limit(options: { key?: string }): Promise<{ success: boolean }>;
  /** Forgets every count (of the shared namespace, for a named one). */
  reset(): void;
}
/** A rate limiter: `limit` calls per key in each fixed window of `period` seconds (10 or 60, default 60). */
export declare function rateLimit(options: { limit: number; period?: 10 | 60; namespace?: string } | { simple: { limit: number; period?: 10 | 60 }; namespace?: string }): RateLimitBinding;

/** workerd's in-memory cache binding (`env.CACHE.read(key, fallback)` in the worker). */
export interface MemoryCacheBinding extends Binding {
  readonly limits: { maxKeys: number; maxValueSize: number; maxTotalValueSize: number };
  readonly id: string | undefined;
  /** How many entries it holds and their serialized size. */
  stats(): { keys: number; bytes: number };
  /** Forgets every entry (of every binding sharing the id). */
  reset(): void;
}
/**
 * An in-memory cache, as workerd's `memoryCache` binding: values are V8-serialized, at most `maxKeys`
 * entries of at most `maxValueSize` bytes each and `maxTotalValueSize` in all (least recently read go
 * first). Bindings with the same `id` share entries.
 */
export declare function memoryCache(options?: { limits?: { maxKeys?: number; maxValueSize?: number; maxTotalValueSize?: number }; id?: string }): MemoryCacheBinding;
/**
 * workerd's unsafe-eval binding: in the worker, `env.NAME.eval(code, name?)`, `newFunction(body,
 * name?, ...params)`, `newAsyncFunction(body, name?, ...params)` and `newWasmModule(bytes)` compile
 * code whether or not the worker allows eval. For tests and tools that need it.
 */
export declare function unsafeEval(): Binding;

/** A data point as written by `writeDataPoint()`, read back in Node (blobs written as bytes are Buffers). */
export interface AnalyticsEngineDataPoint {
  dataset: string;
  /** Milliseconds since the epoch, when the worker wrote it. */
  timestamp: number;
  index1: string | Uint8Array;
  blobs: (string | Uint8Array | null)[];
  doubles: number[];
}
/** An Analytics Engine dataset binding (`env.AE.writeDataPoint(point)` in the worker). */
export interface AnalyticsEngineBinding extends Binding {
  readonly dataset: string;
  /** `<dir>/<dataset>.jsonl`, or null in memory. */
  readonly file: string | null;
  dataPoints(): Promise<AnalyticsEngineDataPoint[]>;
  clear(): Promise<void>;
}
export declare function analyticsEngine(options?: { dataset?: string; dir?: string }): AnalyticsEngineBinding;
/** A dataset whose data points are POSTed to a service, as workerd's analyticsEngine binding does. */
export declare function analyticsEngine(options: { dataset?: string; service: BackingService }): Binding;

/** A message a worker sent through a send_email binding. */
export interface SentEmail {
  from: string;
  to: string;
  messageId: string;
  /** The .eml file it was written to, or null without `dir`. */
  file: string | null;
  raw: Uint8Array;
}
/** A send_email binding (`env.EMAIL.send(new EmailMessage(from, to, raw))` in the worker). */
export interface SendEmailBinding extends Binding {
  sent(): SentEmail[];
}
export declare function sendEmail(options?: { destinationAddress?: string; allowedDestinationAddresses?: string[]; allowedSenderAddresses?: string[]; dir?: string }): SendEmailBinding;

/** A Secrets Store secret binding (`await env.SECRET.get()` in the worker). */
export interface SecretsStoreSecretBinding extends Binding {
  readonly secretName: string;
  get(): Promise<string>;
}
export declare function secretsStoreSecret(options: { value?: string; get?: () => string | null | undefined | Promise<string | null | undefined>; secretName?: string }): SecretsStoreSecretBinding;

/** The version metadata binding's value: `{ id, tag, timestamp }` as wrangler dev gives it. */
export declare function versionMetadata(options?: { id?: string; tag?: string; timestamp?: string }): { id: string; tag: string; timestamp: string };

/** A migration: its file name and its statements. */
export interface D1Migration {
  name: string;
  queries: string[];
}

/** The `.sql` files of folder `dir` in name order, each split into statements. */
export declare function readD1Migrations(dir: string): Promise<D1Migration[]>;
/**
 * Applies the migrations `db` has not recorded yet in `table` (default `d1_migrations`, as
 * wrangler), each with its record in one batch; resolves to the names applied.
 */
export declare function applyD1Migrations(db: D1Database | D1Binding, migrations: D1Migration[], table?: string): Promise<string[]>;

/** Options of `durableObject()`. */
export interface DurableObjectOptions {
  /** The worker that exports the class; by default, the worker the binding is given to. */
  worker?: Worker;
  /** Keep each object's storage in `<dir>/<className>/<id>.sqlite3` instead of in memory. */
  dir?: string;
  /**
   * Whether `ctx.storage.sql` is available (default true, as for a class created by a
   * `new_sqlite_classes` migration; false as for `new_classes`).
   */
  sql?: boolean;
  /** Evict an object's live instance after this many ms without calls (default 70000; `Infinity`: never). */
  evictAfterMs?: number;
  /**
   * Miniflare's name for the namespace, `<script>-<Class>`: ids become workerd's and each
   * object's storage is workerd's own file, `<dir>/<uniqueKey>/<id>.sqlite`, as `wrangler dev`
   * keeps it (loadProject() gives it; docs/durable-objects.md).
   */
  uniqueKey?: string;
}

/**
 * A stub for one object, used from Node: `fetch()` and the object's RPC methods, whose
 * arguments and results are structured clones. Give the class as `T` for typed methods.
 */
export type DurableObjectNodeStub<T = unknown> = {
  readonly id: string;
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
} & (unknown extends T
  ? { [method: string]: any }
  : { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : Promise<Awaited<T[K]>> });

/** What `durableObject()` returns: a binding for createWorker, and an API for Node on its objects. */
export interface DurableObjectNamespaceBinding extends Binding {
  readonly className: string;
  /** The id `env.NAME.idFromName(name)` gives in the worker (64 hex digits). */
  idFromName(name: string): string;
  /** The ids of the objects that have storage. */
  ids(): Promise<string[]>;
  /** A stub for object `id`, from Node. */
  get<T = unknown>(id: string): DurableObjectNodeStub<T>;
  /**
   * Runs `callback(instance, state, arg)` inside object `id` and resolves to its result. The
   * callback is sent as source and runs in the worker: it sees only its arguments.
   */
  runInDurableObject<R, A = undefined>(id: string, callback: (instance: any, state: any, arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>>;
  /** Runs object `id`'s alarm now, if one is set; resolves to whether it ran. */
  runAlarm(id: string): Promise<boolean>;
  /** Drops the live instance of object `id` (or of all objects); storage stays. Resolves to how many. */
  evict(id?: string): Promise<number>;
}

/**
 * A Durable Object namespace binding (`env.NAME.idFromName()`, `get(id)`, `getByName()`) for the
 * exported class `className`: one live instance per id, its storage on embedded SQLite (KV and
 * SQL APIs), alarms run by the host.
 */
export declare function durableObject(className: string, options?: DurableObjectOptions): DurableObjectNamespaceBinding;

/** A mark of the storage of a worker's in-memory stores, from `checkpointStorage()`. */
export interface StorageCheckpoint {
  /** Brings every store back to the mark (Durable Objects' live instances are dropped); the mark stays. */
  rollback(): Promise<void>;
  /** Drops the mark, keeping the stores as they are. */
  release(): Promise<void>;
}

/**
 * Marks the state of the in-memory `kv()`, `storage()`, `d1()` and `durableObject()` bindings among
 * `bindings` (a worker's bindings, its Durable Object namespaces bound to a running worker), so
 * that a test's writes can be undone: a savepoint held open in each store. Checkpoints nest.
 * Bindings backed by handlers are left out; a store kept in a file is an error.
 */
export declare function checkpointStorage(bindings: Record<string, unknown>): Promise<StorageCheckpoint>;

/** Options of `service()`. */
export interface ServiceOptions {
  /** With a worker: the exported `WorkerEntrypoint` class to bind instead of the default export. */
  entrypoint?: string;
}

/**
 * A service binding: `env.NAME.fetch()` calls `handler(request)` with Node's Request, or another
 * worker; `env.NAME.method(…)` calls an RPC method of the worker's entrypoint, or of a Node object
 * (arguments and results are structured clones).
 */
export declare function service(
  handler: ((request: Request) => MaybePromise<Response>) | { fetch(request: Request): MaybePromise<Response> } | Worker | object,
  options?: ServiceOptions,
): Binding;

export interface ListenTcpOptions {
  /** The port to listen on; `0` (default): a free one. */
  port?: number;
  /** The address to listen on. Default `"127.0.0.1"`. */
  host?: string;
  /** The export whose `connect(socket)` handles each connection. Default `"default"`. */
  entrypoint?: string;
  /** The handler's `ctx.props` (JSON). */
  props?: unknown;
  /** A handler that throws (or rejects); without it the error goes to the worker's `onLog`. */
  onError?: (error: Error) => void;
}

/** What `worker.listenTcp()` resolves to. */
export interface TcpListener {
  readonly port: number;
  readonly host: string;
  /** `host:port` (an IPv6 address in brackets), ready for `connectOverrides` or a client. */
  readonly address: string;
  /** Connections open now. */
  readonly connections: number;
  /** Stops listening and closes the open connections. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A running worker. */
export declare class Worker {
  private constructor();
  /** The script's format, as given or detected. */
  readonly format: "module" | "service-worker";
  readonly filename: string;
  readonly disposed: boolean;
  /** The DevTools WebSocket URL of a worker created with `inspector` (else null). */
  readonly inspectorUrl: string | null;
  /** Same as `dispatch(worker, input)`. */
  dispatch(input: DispatchInput): Promise<Response>;
  dispatch(input: ScheduledInput): Promise<ScheduledResult>;
  dispatch(input: QueueInput): Promise<QueueResult>;
  /**
   * Listens for TCP connections and hands each to the entrypoint's `connect(socket)` handler, as
   * a workerd `tcp` socket does. Resolves once listening. See docs/sockets.md, "Inbound TCP".
   */
  listenTcp(options?: ListenTcpOptions): Promise<TcpListener>;
  /** Resolves once every `ctx.waitUntil()` promise registered so far has settled. */
  waitUntilSettled(): Promise<void>;
  /** Stops the worker: requests in flight reject, threads are joined. Calling it twice is harmless. */
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Errors from a worker keep the worker's `name`, `message` and `stack`. Script errors at start-up
 * carry the location; runtime failures carry a `code` such as `"ERR_WORKER_DISPOSED"`.
 */
export interface WorkerError extends Error {
  code?: string;
  fileName?: string;
  lineNumber?: number;
  columnNumber?: number;
}

/** Starts a worker; resolves once its script has loaded, rejects with the script's error otherwise. */
export declare function createWorker(options: WorkerOptions): Promise<Worker>;

/**
 * Sends a request to a worker and resolves to its response (Node's `Response`). Rejects with the
 * handler's error, or with a `code` of `ERR_NEVER_RESPONDS` (the handler's promise can never
 * settle), `ERR_CPU_LIMIT`, `ERR_WALL_LIMIT`, `ERR_MEMORY_LIMIT`, `ERR_WORKER_RECYCLED` (another
 * request on the same isolate hit a limit), `ERR_OVERLOADED`, `ERR_WORKER_FAILED` or `ERR_WORKER_DISPOSED`.
 */
export declare function dispatch(worker: Worker, input: DispatchInput): Promise<Response & { webSocket?: HostWebSocket }>;

/**
 * The host's end of a worker's WebSocket: what `dispatch()` of an upgrade request gives in
 * `webSocket` when the worker answers `new Response(null, { status: 101, webSocket })` (the
 * response then has `status` 101). Call `accept()`, then `send()` and `close()`; events
 * "message" (`data`: a string or an ArrayBuffer) and "close" (`code`, `reason`, `wasClean`).
 */
export interface HostWebSocket extends EventTarget {
  accept(): void;
  send(message: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  readonly readyState: 0 | 1 | 2 | 3;
}

/** Runs the worker's `scheduled(controller, env, ctx)` handler (and its `waitUntil` work). */
export declare function dispatch(worker: Worker, input: ScheduledInput): Promise<ScheduledResult>;

/** How V8's code cache has fared in this process so far. */
export declare function codeCacheStats(): { hits: number; misses: number; rejected: number; stored: number };

/** Settings of the process-wide warm pool; see `configurePool`. */
export interface PoolSettings {
  /** Spares kept ready per known script (same options). `0` turns pooling off. Default 1. */
  spares: number;
  /** A spare not taken within this many ms is disposed (`0`: never). Default 10000. */
  idleMs: number;
  /** Spares across all scripts; over it the least recently created scripts lose theirs. Default 16. */
  maxTotal: number;
}

/** What the warm pool holds and has done in this process. */
export interface PoolStats {
  /** Spares booted and waiting to be taken. */
  ready: number;
  /** Spares booting (or about to). */
  booting: number;
  /** Creates answered by a ready spare. */
  hits: number;
  /** Creates (with pooling on) that found no spare and booted cold. */
  misses: number;
  /** Spares disposed after idling past `idleMs`. */
  reclaimed: number;
  /** Spares disposed to stay within `maxTotal` or because `spares` was lowered. */
  evicted: number;
  /** Spares whose boot failed (dropped; the cold create reports script errors). */
  failed: number;
}

/**
 * Tunes the warm pool: spares are workers booted ahead (isolate made, script loaded, top level
 * run) so that `createWorker` for options seen before is a sub-millisecond hand-off. Each spare
 * costs about 2 MB. Omitted fields keep their value; non-negative integers only. Lowering
 * `spares` or `maxTotal` disposes the spares beyond them. Returns the settings now in force.
 */
export declare function configurePool(settings: Partial<PoolSettings>): PoolSettings;

/** How the warm pool stands: `{ ready, booting, hits, misses, reclaimed, evicted, failed }`. */
export declare function poolStats(): PoolStats;

/** Disposes every spare (ready or booting); resolves once their threads are joined. */
export declare function clearPool(): Promise<void>;

export { loadProject, startDevServer, getPlatformProxy, readConfig } from "./lib/project/index.js";
export type { Project, LoadProjectOptions, ProjectConfig, DevServer, DevServerOptions, PlatformProxy, PlatformProxyOptions, UnsupportedBinding } from "./lib/project/index.js";

// R2 (lib/r2/types.d.ts), Queues (lib/queues/types.d.ts) and Workflows (lib/workflows/types.d.ts)
// have files of their own.
export * from "./lib/r2/types.js";
import type { R2Bucket } from "./lib/r2/types.js";
export * from "./lib/queues/types.js";
export * from "./lib/workflows/types.js";
import type { QueueInput, QueueResult } from "./lib/queues/types.js";

/** Runs the worker's `queue(batch, env, ctx)` handler on one batch and resolves to what it acked and retried. */
export declare function dispatch(worker: Worker, input: QueueInput): Promise<QueueResult>;
