// Type definitions for workerbox/vitest (lib/vitest/index.js): the drop-in for
// @cloudflare/vitest-pool-workers. Vitest's and Vite's own types come from the project's copies.

import type { JsonValue } from "../../index.js";

type MaybePromise<T> = T | Promise<T>;

export interface WorkersPoolOptions {
  /** The worker's main module (default: the wrangler configuration's `main`); `SELF` calls it. */
  main?: string;
  /** The wrangler configuration whose bindings, vars and compatibility settings the tests get. */
  wrangler?: { configPath?: string; environment?: string };
  experimental?: {
    /**
     * The worker is described by a `cloudflare.config.ts` (wrangler's experimental config:
     * `defineWorker` from `wrangler/experimental-config`) instead of a wrangler file: `true` for the
     * one in the project root, or `{ configPath }` relative to it. Not with `wrangler`.
     */
    newConfig?: boolean | { configPath?: string };
  };
  /** Accepted for compatibility and ignored with a warning: every binding runs locally. */
  remoteBindings?: boolean;
  /**
   * Each test starts from the storage (KV, R2, D1, Durable Objects) the file's `beforeAll` hooks
   * left, and what it writes is undone after it. Default false: writes carry over to the file's
   * next tests.
   */
  isolatedStorage?: boolean;
  /** Overrides, as @cloudflare/vitest-pool-workers takes them (the ones workerbox honours). */
  miniflare?: {
    /** Plain bindings (JSON values) over the configuration's vars. */
    bindings?: Record<string, JsonValue>;
    compatibilityDate?: string;
    compatibilityFlags?: string[];
    [option: string]: unknown;
  };
}

export interface WorkerPoolOptionsContext {
  /** A value provided by Vitest's `globalSetup` (`project.provide()`). */
  inject<T = unknown>(key: string): T;
}

/** A D1 migration as `applyD1Migrations()` in `cloudflare:test` takes it. */
export interface D1Migration {
  name: string;
  queries: string[];
}

/** The Vite plugin that runs a project's tests inside workerbox isolates. */
export declare function cloudflareTest(options?: WorkersPoolOptions | ((ctx: WorkerPoolOptionsContext) => MaybePromise<WorkersPoolOptions>)): { name: string; [hook: string]: unknown };

/** The pool itself, for Vitest's `poolRunner` (cloudflareTest() sets it). */
export declare function cloudflarePool(options?: WorkersPoolOptions | ((ctx: WorkerPoolOptionsContext) => MaybePromise<WorkersPoolOptions>)): { name: string; createPoolWorker(options: unknown): unknown };

/** Reads the `.sql` files of a migrations folder, in order, split into queries. */
export declare function readD1Migrations(migrationsPath: string): Promise<D1Migration[]>;

/** A Vitest configuration in @cloudflare/vitest-pool-workers' Vitest 3 form (`test.poolOptions.workers`). */
export interface WorkersConfig {
  test?: { poolOptions?: { workers?: WorkersPoolOptions | ((ctx: WorkerPoolOptionsContext) => MaybePromise<WorkersPoolOptions>); [option: string]: unknown }; [option: string]: unknown };
  plugins?: unknown[];
  [option: string]: unknown;
}
type WorkersConfigInput = WorkersConfig | Promise<WorkersConfig> | ((env: { command: string; mode: string }) => MaybePromise<WorkersConfig>);

/** The Vitest 3 form (`@cloudflare/vitest-pool-workers/config`): becomes `plugins: [cloudflareTest(test.poolOptions.workers)]`. */
export declare function defineWorkersConfig<T extends WorkersConfigInput>(config: T): T;
/** defineWorkersConfig for one project of a Vitest workspace. */
export declare function defineWorkersProject<T extends WorkersConfigInput>(config: T): T;
