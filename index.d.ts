// Type definitions for workerbox's public API (index.js).

/** A JSON value usable as a plain `env` binding. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type LogLevel = "debug" | "log" | "info" | "warn" | "error";

export interface WorkerOptions {
  /** The worker's source: an ES module (`export default { fetch }`) or a service-worker script. */
  script: string;
  /** Name used in stack traces and error locations. Default `"worker.js"`. */
  filename?: string;
  /** Script format; detected from the script when omitted. */
  format?: "module" | "service-worker";
  /** `env` bindings (globals, for service-worker scripts). Plain JSON values for now. */
  bindings?: Record<string, JsonValue>;
  /** Receives every `console.*` line of the worker. Default: prints `[worker] …` on the host console. */
  onLog?: (level: LogLevel, message: string) => void;
  /** Allow `eval()` and `new Function()` inside the worker. Default `false`, as in production. */
  allowEval?: boolean;
}

/** A request as a plain object. */
export interface RequestInit {
  url: string | URL;
  method?: string;
  headers?: Headers | [string, string][] | Record<string, string | string[]>;
  body?: string | ArrayBuffer | ArrayBufferView | Blob | FormData | URLSearchParams | ReadableStream | null;
}

export type DispatchInput = Request | string | URL | RequestInit;

/** A running worker. */
export declare class Worker {
  private constructor();
  /** The script's format, as given or detected. */
  readonly format: "module" | "service-worker";
  readonly filename: string;
  readonly disposed: boolean;
  /** Same as `dispatch(worker, input)`. */
  dispatch(input: DispatchInput): Promise<Response>;
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

/** Sends a request to a worker and resolves to its response (Node's `Response`). */
export declare function dispatch(worker: Worker, input: DispatchInput): Promise<Response>;
