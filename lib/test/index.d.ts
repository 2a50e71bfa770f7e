// Type definitions for workerbox/test (lib/test/index.js): node:test helpers.

import type { Worker, WorkerOptions, ScheduledResult, QueueInputMessage } from "../../index.js";
import type { LoadProjectOptions, Project } from "../project/index.js";

/** A test context whose after() runs when the test ends (node:test's `t`). */
export interface TestContextLike {
  after(fn: () => unknown): unknown;
}

export interface TestWorker {
  readonly worker: Worker;
  /** A request to the worker; relative URLs resolve against http://localhost/. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Runs the worker's scheduled() handler. */
  scheduled(options?: { cron?: string; scheduledTime?: Date | number }): Promise<ScheduledResult>;
  /** Runs the worker's queue() handler on one batch. */
  queue(queueName: string, messages: QueueInputMessage[]): Promise<unknown>;
}

/** A worker for one test, disposed when the test ends. */
export declare function useWorker(t: TestContextLike, options: WorkerOptions): Promise<TestWorker>;

/** A project for one test: fresh in-memory storage, its worker, and its bindings in Node. */
export declare function useProject(
  t: TestContextLike,
  dir?: string,
  options?: Omit<LoadProjectOptions, "persistTo"> & { outbound?: WorkerOptions["outbound"] },
): Promise<TestWorker & { env: Record<string, any>; project: Project }>;

type MockAnswer = Response | ((request: Request) => Response | Promise<Response>);

/** An `outbound` handler answering the worker's fetch() by route; `calls` records each request. */
export declare function mockFetch(routes: Record<string, MockAnswer>): ((request: Request) => Promise<Response>) & { calls: { method: string; url: string }[] };

/** A step of a run: the `index`-th step.do / sleep / waitForEvent of that name (1 when left out). */
export interface WorkflowStepSelector {
  name: string;
  index?: number;
}

/** What a modify() / modifyAll() callback may change in runs (Cloudflare's WorkflowInstanceModifier). */
export interface WorkflowInstanceModifier {
  disableSleeps(steps?: WorkflowStepSelector[]): Promise<void>;
  disableRetryDelays(steps?: WorkflowStepSelector[]): Promise<void>;
  mockStepResult(step: WorkflowStepSelector, stepResult: unknown): Promise<void>;
  mockStepError(step: WorkflowStepSelector, error: Error, times?: number): Promise<void>;
  forceStepTimeout(step: WorkflowStepSelector, times?: number): Promise<void>;
  mockEvent(event: { type: string; payload: unknown }): Promise<void>;
  forceEventTimeout(step: WorkflowStepSelector): Promise<void>;
}

/** One instance, watched and changed (waits reject after `timeoutMs`, default 60000). */
export interface WorkflowInstanceIntrospector {
  readonly id: string;
  modify(fn: (m: WorkflowInstanceModifier) => Promise<void> | void): Promise<WorkflowInstanceIntrospector>;
  waitForStepResult(step: WorkflowStepSelector, options?: { timeoutMs?: number }): Promise<unknown>;
  waitForStatus(status: string, options?: { timeoutMs?: number }): Promise<void>;
  getOutput(): Promise<unknown>;
  getError(): Promise<{ name: string; message: string }>;
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Every instance created from introspectWorkflow() until dispose(). */
export interface WorkflowIntrospector {
  modifyAll(fn: (m: WorkflowInstanceModifier) => Promise<void> | void): Promise<void>;
  get(): Promise<WorkflowInstanceIntrospector[]>;
  dispose(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Changes and watches instance `instanceId` of a workflow() binding (it may be created later). */
export declare function introspectWorkflowInstance(workflow: object, instanceId: string): Promise<WorkflowInstanceIntrospector>;

/** Changes and watches every instance of a workflow() binding created from now on. */
export declare function introspectWorkflow(workflow: object): Promise<WorkflowIntrospector>;
