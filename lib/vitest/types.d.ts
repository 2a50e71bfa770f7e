// Types of the `cloudflare:test` module that workerbox/vitest gives tests (reference them with
// `"types": ["workerbox/vitest/types"]` in tsconfig.json, beside @cloudflare/workers-types).
// `Cloudflare.Env` is the project's env type (declare it, or generate it with `wrangler types`).

declare namespace Cloudflare {
  interface Env {}
}

declare module "cloudflare:test" {
  /**
   * The env type of the Vitest 3 form (@cloudflare/vitest-pool-workers 0.12 and before), which
   * projects augment with `interface ProvidedEnv extends Env {}`; `Cloudflare.Env` too.
   */
  export interface ProvidedEnv extends Cloudflare.Env {}
  /** The test isolate's bindings (the wrangler configuration's, with `miniflare.bindings`). */
  export const env: ProvidedEnv;
  /** The worker's default entrypoint, plus `scheduled()` and `queue()`. */
  export const SELF: Fetcher & Record<string, any>;

  export function createExecutionContext(): ExecutionContext;
  export function waitOnExecutionContext(ctx: ExecutionContext): Promise<void>;
  export function createScheduledController(options?: { scheduledTime?: Date | number; cron?: string }): ScheduledController;
  export function createMessageBatch<Body = unknown>(queueName: string, messages: { id: string; timestamp: Date | number; attempts?: number; body: Body }[]): MessageBatch<Body>;
  export function getQueueResult(
    batch: MessageBatch,
    ctx: ExecutionContext,
  ): Promise<{ outcome: string; retryBatch: { retry: boolean }; ackAll: boolean; retryMessages: { msgId: string }[]; explicitAcks: string[] }>;

  export interface D1Migration {
    name: string;
    queries: string[];
  }
  export function applyD1Migrations(db: D1Database, migrations: D1Migration[], migrationsTableName?: string): Promise<void>;

  export function runInDurableObject<O extends DurableObject, R>(stub: DurableObjectStub, callback: (instance: O, state: DurableObjectState) => R | Promise<R>): Promise<R>;
  export function runDurableObjectAlarm(stub: DurableObjectStub): Promise<boolean>;
  export function listDurableObjectIds(namespace: DurableObjectNamespace): Promise<DurableObjectId[]>;
  export function evictDurableObject(stub: DurableObjectStub): Promise<void>;
  export function evictAllDurableObjects(): Promise<void>;
  export function abortAllDurableObjects(): Promise<void>;
  /** Deletes the data of every binding (KV, R2, D1 tables, Durable Object storage). */
  export function reset(): Promise<void>;

  /** A step of a run: the `index`-th step of that name (1 when left out). */
  export interface WorkflowStepSelector {
    name: string;
    index?: number;
  }
  export interface WorkflowInstanceModifier {
    disableSleeps(steps?: WorkflowStepSelector[]): Promise<void>;
    disableRetryDelays(steps?: WorkflowStepSelector[]): Promise<void>;
    mockStepResult(step: WorkflowStepSelector, stepResult: unknown): Promise<void>;
    mockStepError(step: WorkflowStepSelector, error: Error, times?: number): Promise<void>;
    forceStepTimeout(step: WorkflowStepSelector, times?: number): Promise<void>;
    mockEvent(event: { type: string; payload: unknown }): Promise<void>;
    forceEventTimeout(step: WorkflowStepSelector): Promise<void>;
  }
  export interface WorkflowInstanceIntrospector {
    modify(fn: (m: WorkflowInstanceModifier) => Promise<void>): Promise<WorkflowInstanceIntrospector>;
    waitForStepResult(step: WorkflowStepSelector): Promise<unknown>;
    waitForStatus(status: string): Promise<void>;
    getOutput(): Promise<unknown>;
    getError(): Promise<{ name: string; message: string }>;
    dispose(): Promise<void>;
    [Symbol.asyncDispose](): Promise<void>;
  }
  export interface WorkflowIntrospector {
    modifyAll(fn: (m: WorkflowInstanceModifier) => Promise<void>): Promise<void>;
    get(): Promise<WorkflowInstanceIntrospector[]>;
    dispose(): Promise<void>;
    [Symbol.asyncDispose](): Promise<void>;
  }
  /** Changes and watches instance `instanceId` of a Workflow binding (it may be created later). */
  export function introspectWorkflowInstance(workflow: Workflow, instanceId: string): Promise<WorkflowInstanceIntrospector>;
  /** Changes and watches every instance of a Workflow binding created from now until dispose(). */
  export function introspectWorkflow(workflow: Workflow): Promise<WorkflowIntrospector>;
}
