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
