// Types of workerbox's Workflows (lib/workflows/): the `workflow()` binding, its engine's clock
// and timers, and the instance handles Node gets.
import type { Binding, Worker } from "../../index.js";

/** The state of a Workflow instance, as production reports it (`instance.status()`). */
export interface WorkflowInstanceStatus {
  status: "queued" | "running" | "paused" | "errored" | "terminated" | "complete" | "waiting" | "waitingForPause" | "unknown";
  error?: { name: string; message: string };
  output?: unknown;
}

/** An instance handle from Node (`workflow().create()` / `get()`), as `env.WF.get(id)` gives one in a worker. */
export interface WorkflowInstanceHandle {
  readonly id: string;
  status(): Promise<WorkflowInstanceStatus>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  terminate(): Promise<void>;
  restart(): Promise<void>;
  sendEvent(event: { type: string; payload?: unknown }): Promise<void>;
}

export interface WorkflowOptions {
  /** The exported class that extends WorkflowEntrypoint from "cloudflare:workers". */
  className: string;
  /** The workflow's name (its rows on disk). Default: the first binding name it is given under. */
  name?: string;
  /** Keep the instances in `dir/d1.sqlite3`: a binding recreated on the folder resumes them. */
  dir?: string;
  /** The worker that exports the class (it must be given the binding too). Default: the first live worker given it. */
  worker?: Worker;
  /** "manual": timers (sleeps, retry delays, timeouts) fire only through advance() / runNextTimer(). Default "real". */
  clock?: "real" | "manual";
}

/** A timer of a workflow's instances (`workflow().timers()`). */
export interface WorkflowTimer {
  at: number;
  instance: string;
  kind: "sleep" | "retry" | "timeout" | "waitForEvent";
  step: string;
  attempt?: number;
  delay?: number;
}

/** A Workflow binding (`env.WF.create()` & co. in the worker) and its engine. */
export interface Workflow extends Binding {
  readonly className: string;
  create(options?: { id?: string; params?: unknown }): Promise<WorkflowInstanceHandle>;
  createBatch(batch: { id?: string; params?: unknown }[]): Promise<WorkflowInstanceHandle[]>;
  get(id: string): Promise<WorkflowInstanceHandle>;
  ids(): Promise<string[]>;
  /** Resolves with the status once instance `id` is in one of `status`. */
  waitForStatus(id: string, status: WorkflowInstanceStatus["status"] | WorkflowInstanceStatus["status"][], options?: { timeoutMs?: number }): Promise<WorkflowInstanceStatus>;
  /** The instances' clock: real time plus what advance() added. */
  now(): number;
  advance(ms: number): void;
  timers(): WorkflowTimer[];
  /** The soonest timer of `kind` once one is set; without `kind`, any but a step timeout. */
  nextTimer(kind?: WorkflowTimer["kind"] | ((timer: WorkflowTimer) => boolean)): Promise<WorkflowTimer>;
  /** Waits for the next timer, moves the clock to it and resolves with it. */
  runNextTimer(kind?: WorkflowTimer["kind"] | ((timer: WorkflowTimer) => boolean)): Promise<WorkflowTimer>;
  /** Stops this process's runs and timers (the stored state stays). */
  close(): void;
}

/** A Workflow binding for an exported WorkflowEntrypoint class. */
export declare function workflow(options: WorkflowOptions): Workflow;
