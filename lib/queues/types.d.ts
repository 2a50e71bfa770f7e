// Types of workerbox's queues (lib/queues/): the `queue()` binding, what Node sees of its
// messages, and the input and result of `dispatch(worker, { type: "queue" })` (declared in
// index.d.ts, beside dispatch's other forms).
import type { Binding, BackingService, Worker } from "../../index.js";

type MaybePromise<T> = T | Promise<T>;

/** A message for `dispatch(worker, { type: "queue" })`. */
export interface QueueInputMessage {
  body: unknown;
  /** Default: 32 random hex digits. */
  id?: string;
  /** Default: now. */
  timestamp?: Date | number;
  /** Default 1. */
  attempts?: number;
  /** How the body crosses into the worker: `"v8"` (structured clone, the default), `"json"`, `"text"` or `"bytes"`. */
  contentType?: "text" | "bytes" | "json" | "v8";
}

/** Runs the worker's `queue(batch, env, ctx)` handler on one batch. */
export interface QueueInput {
  type: "queue";
  /** `batch.queue`. Default `"queue"`. */
  queue?: string;
  /** 1 to 100 messages. */
  messages: QueueInputMessage[];
}

/** What the handler decided (workerd's queue event result; `getQueueResult()`'s shape in Cloudflare's Vitest pool). */
export interface QueueResult {
  outcome: "ok" | "exception";
  ackAll: boolean;
  retryBatch: { retry: boolean; delaySeconds?: number };
  explicitAcks: string[];
  retryMessages: { msgId: string; delaySeconds?: number }[];
  /** The handler's error, when `outcome` is `"exception"`. */
  error?: Error;
}

/** A sent message as `queue({ send })` receives it, its body decoded. */
export interface SentQueueMessage {
  id: string;
  timestamp: Date;
  contentType: "text" | "bytes" | "json" | "v8";
  body: unknown;
  delaySeconds: number;
}

export interface QueueOptions {
  /** `batch.queue` and the row key on disk. Default: the first binding name it is given under. */
  name?: string;
  /** Keep unacknowledged messages in `dir/queues.sqlite3`; a queue recreated on the folder delivers them. */
  dir?: string;
  /** The consumer worker. Default: the first live worker created with this binding. */
  consumer?: Worker;
  /** 1–100, default 10. */
  maxBatchSize?: number;
  /** Seconds a partial batch waits, 0–60 (fractions allowed), default 5. */
  maxBatchTimeout?: number;
  /** Retries after the first delivery, 0–100, default 3; then the dead-letter queue (or dropped). */
  maxRetries?: number;
  /** Another queue() that receives messages out of retries. */
  deadLetterQueue?: Queue;
  /** Seconds a retried message waits unless retry() says otherwise, default 0. */
  retryDelay?: number;
  /** Default delaySeconds for sends, default 0. */
  deliveryDelay?: number;
  /** Receive every sent message in your own function instead (no consumer delivery). */
  send?: (messages: SentQueueMessage[]) => MaybePromise<unknown>;
}

/** A queue binding (`env.NAME.send()` / `sendBatch()` in the worker) and its broker. */
export interface Queue extends Binding {
  readonly name: string | undefined;
  /** Messages not yet acknowledged: ready, delayed or being delivered. */
  readonly backlog: number;
  readonly stats: { sent: number; delivered: number; acked: number; retried: number; deadLettered: number; dropped: number; batches: number; failedBatches: number; backlog: number };
  /** Resolves once every message (delayed ones too) is acked, dead-lettered or dropped; rejects if messages wait with no live consumer. */
  idle(): Promise<void>;
  /** Delivers the ready messages now (ignoring maxBatchTimeout) and resolves once none is ready or in delivery. */
  flush(): Promise<void>;
  /** Sends a message from Node, as a worker's `env.QUEUE.send()` does (same limits). */
  send(body: unknown, options?: { contentType?: "json" | "text" | "bytes" | "v8"; delaySeconds?: number }): Promise<void>;
  /** Sends messages from Node, as a worker's `env.QUEUE.sendBatch()` does (same limits). */
  sendBatch(messages: { body: unknown; contentType?: "json" | "text" | "bytes" | "v8"; delaySeconds?: number }[], options?: { delaySeconds?: number }): Promise<void>;
  /** The messages not yet acknowledged, in delivery order, bodies decoded. */
  pending(): PendingQueueMessage[];
}

/** A message a queue holds (`queue().pending()`). */
export interface PendingQueueMessage {
  id: string;
  timestamp: Date;
  contentType: "text" | "bytes" | "json" | "v8";
  body: unknown;
  /** Deliveries so far. */
  attempts: number;
  /** "delivering": in a batch now; "ready": waiting for the next batch; "delayed": not due yet. */
  state: "delivering" | "ready" | "delayed";
  /** When it is (or was) due for delivery. */
  due: Date;
}

/** A queue: producers send to it from `env`, its consumer's `queue()` handler receives batches. */
export declare function queue(options?: QueueOptions): Queue;
/** A producer whose backing is a service, spoken to in workerd's queue HTTP protocol. */
export declare function queue(options: { service: BackingService }): Binding;
