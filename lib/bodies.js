"use strict";
// Bodies streamed between Node and one worker, answering the worker's `#body` calls.
//
// - Request bodies (Node → worker): dispatch() registers the Node ReadableStream under a new
//   id; the worker's `request.body` pulls it with `read` calls, one chunk per call, so the
//   worker reads only as fast as it consumes, and `cancel` cancels the Node stream.
// - Response bodies (worker → Node): the worker names a stream id in its response and pushes
//   chunks with `write`. One that produces nothing for `limits.bodyIdleMs` while its reader
//   waits errors with ERR_BODY_STALLED. Each write is answered only when the Node ReadableStream handed to
//   the caller wants more (backpressure), or with `{ cancelled }` once the caller cancelled it,
//   which cancels the worker's stream. `close` and `error` end it; `reset` (the worker was
//   disposed or restarted) errors every open one.

const HIGH_WATER_BYTES = 64 * 1024;

function workerError(args) {
  const error = new Error(args.message);
  if (args.name && args.name !== "Error") Object.defineProperty(error, "name", { value: args.name, writable: true, configurable: true, enumerable: false });
  if (args.stack) error.stack = args.stack;
  return error;
}

/** How long a response body may produce nothing while its reader waits, by default (ms). */
const DEFAULT_BODY_IDLE_MS = 100_000;

function bodyStalled(ms) {
  const error = new Error(`The worker's response body produced nothing for ${ms} ms while it was being read, and was given up on (limits.bodyIdleMs).`);
  error.code = "ERR_BODY_STALLED";
  return error;
}

function bodyAborted(reason) {
  const error = new Error(`The worker stopped before the response body was complete: ${reason}`);
  error.code = "ERR_BODY_ABORTED";
  return error;
}

/** One response body on its way from the worker to a Node ReadableStream. */
class OutgoingBody {
  controller = null;
  /** Set by responseStream(): called on every write (restarts the stall timer). */
  onProgress = null;
  /** Chunks written before the Node stream existed. */
  early = [];
  /** Resolves the worker's pending write once the reader wants more. */
  release = null;
  cancelled = false;
  reason = undefined;
  /** How the body ended before the Node stream existed: { close } or { error }. */
  ending = null;

  attach(controller) {
    this.controller = controller;
    for (const chunk of this.early) controller.enqueue(chunk);
    this.early = [];
    if (this.ending?.error) controller.error(this.ending.error);
    else if (this.ending) controller.close();
  }

  /** Resolves when the reader can take more: at once if it can already. */
  wanted() {
    if (this.cancelled) return Promise.resolve();
    if (this.controller !== null && this.controller.desiredSize > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.release = resolve;
    });
  }

  wake() {
    const release = this.release;
    this.release = null;
    release?.();
  }
}

class HostBodies {
  /** `limits.bodyIdleMs`: how long a response body may stall while read (0: no bound). */
  #idleMs;
  #requests = new Map(); // id -> ReadableStreamDefaultReader
  #unheld = new Set(); // ids of #requests that do not hold Node's event loop open
  #responses = new Map(); // id -> OutgoingBody
  // Response bodies Node cancelled while no write was waiting: id -> reason. The worker's next
  // call for the id (a write, or its close or error) is answered from here, and removes it.
  #cancelled = new Map();
  #nextRequest = 1;
  #closed = null; // Error once the worker is gone
  #keepAlive = null;

  /**
   * Tells the worker to cancel response body `id`'s stream: (id, reason) => Promise<boolean>,
   * true when that stopped a pump waiting on its stream (which will then not call again).
   */
  #cancelInWorker;

  constructor(idleMs = DEFAULT_BODY_IDLE_MS, cancelInWorker = async () => false) {
    this.#idleMs = idleMs;
    this.#cancelInWorker = cancelInWorker;
  }

  /**
   * Keeps Node's event loop alive while a body is open: the worker's calls arrive through a
   * thread-safe function that does not hold the loop open by itself.
   */
  #holdLoop() {
    // #unheld is a subset of #requests' ids (#dropRequest forgets both).
    const open = this.#responses.size + this.#requests.size - this.#unheld.size > 0;
    if (open && this.#keepAlive === null) this.#keepAlive = setInterval(() => {}, 2 ** 30);
    else if (!open && this.#keepAlive !== null) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = null;
    }
  }

  /**
   * Registers a Node ReadableStream as a body the worker reads (a request's, or the answer of a
   * service binding's fetch); returns the id the worker reads it by. `holdLoop: false`: the open
   * body alone does not keep Node's event loop alive (an answer its caller never reads).
   */
  addRequestBody(stream, { holdLoop = true } = {}) {
    const id = this.#nextRequest++;
    if (!holdLoop) this.#unheld.add(id);
    this.#requests.set(id, stream.getReader());
    this.#holdLoop();
    return id;
  }

  /** Forgets request body `id` (the worker is done with it). */
  #dropRequest(id) {
    this.#requests.delete(id);
    this.#unheld.delete(id);
    this.#holdLoop();
  }

  /** Lets go of a request body the worker did not read to the end. */
  releaseRequestBody(id, reason = "the response was complete") {
    const reader = this.#requests.get(id);
    if (reader === undefined) return;
    this.#dropRequest(id);
    reader.cancel(reason).catch(() => {});
  }

  #outgoing(id) {
    let body = this.#responses.get(id);
    if (body === undefined) {
      body = new OutgoingBody();
      this.#responses.set(id, body);
      this.#holdLoop();
    }
    return body;
  }

  /** The Node ReadableStream for response body `id`; `onEnd` runs once it closes, errors or is cancelled. */
  responseStream(id, onEnd) {
    const bodies = this;
    const body = this.#outgoing(id);
    let ended = false;
    let stallTimer = null;
    const end = () => {
      if (ended) return;
      ended = true;
      clearTimeout(stallTimer);
      this.#responses.delete(id);
      this.#holdLoop();
      onEnd();
    };
    // The reader gave up (cancelled, or the body stalled): a write waiting now is answered
    // `cancelled` by wake(). Otherwise the worker's pump is either waiting on its own stream,
    // which may never give another chunk (a stuck stream, a far timer), so the worker is told
    // now and cancels it; or between a read and its next write, which is answered from
    // #cancelled.
    const giveUp = (reason) => {
      body.cancelled = true;
      body.reason = reason;
      if (body.release === null && body.ending === null) {
        const cancelled = bodies.#cancelled;
        cancelled.set(id, reason ?? null);
        bodies.#cancelInWorker(id, reason).then(
          (stopped) => {
            if (stopped) cancelled.delete(id);
          },
          () => {},
        );
      }
      body.wake();
      end();
    };
    // A body that produces nothing for idleMs while its reader wants more is given up on: the
    // reader gets ERR_BODY_STALLED and the worker's next write is answered as cancelled. Time
    // the reader spends not reading is not counted against the worker.
    const idleMs = this.#idleMs;
    const watch = () => {
      if (idleMs === 0 || ended) return;
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        if (ended) return;
        if (body.controller === null || body.controller.desiredSize <= 0) return watch();
        const error = bodyStalled(idleMs);
        try {
          body.controller.error(error);
        } catch {}
        giveUp(error.message);
      }, idleMs);
    };
    body.onProgress = watch;
    body.onEnd = end;
    if (this.#closed !== null && body.ending === null) body.ending = { error: this.#closed };
    return new ReadableStream(
      {
        start(controller) {
          body.attach(controller);
          if (body.ending) end();
          else watch();
        },
        pull() {
          body.wake();
        },
        cancel(reason) {
          giveUp(reason === undefined ? undefined : String(reason instanceof Error ? reason.message : reason));
        },
      },
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  /** Answers one `#body` call from the worker: `{ json, bytes? }`. */
  async call(method, args, bytes) {
    switch (method) {
      case "read": {
        const reader = this.#requests.get(args.stream);
        if (reader === undefined) throw new TypeError("The request body is no longer available (the request has completed or its body was cancelled).");
        let result;
        try {
          result = await reader.read();
        } catch (error) {
          this.#dropRequest(args.stream);
          throw error;
        }
        if (result.done) {
          this.#dropRequest(args.stream);
          return { json: '{"done":true}' };
        }
        const chunk = result.value;
        if (!(chunk instanceof Uint8Array)) {
          this.releaseRequestBody(args.stream, "bad chunk");
          throw new TypeError(`dispatch: a request body stream must produce Uint8Array chunks, got ${chunk === null ? "null" : typeof chunk}`);
        }
        return { json: "{}", bytes: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) };
      }
      case "cancel":
        this.releaseRequestBody(args.stream, args.reason);
        return { json: "null" };
      case "write": {
        if (this.#cancelled.has(args.stream)) {
          const reason = this.#cancelled.get(args.stream);
          this.#cancelled.delete(args.stream);
          return { json: JSON.stringify({ cancelled: true, reason }) };
        }
        const body = this.#outgoing(args.stream);
        if (!body.cancelled && bytes) {
          // Copy: the native buffer is only lent for the duration of this call.
          const chunk = new Uint8Array(bytes);
          if (body.controller !== null) body.controller.enqueue(chunk);
          else body.early.push(chunk);
        }
        body.onProgress?.();
        await body.wanted();
        return { json: body.cancelled ? JSON.stringify({ cancelled: true, reason: body.reason ?? null }) : "{}" };
      }
      case "close":
      case "error": {
        if (this.#cancelled.delete(args.stream)) return { json: "null" };
        // The call may overtake the dispatch's answer (they come through different queues):
        // then the ending waits for responseStream().
        const body = this.#outgoing(args.stream);
        const ending = method === "close" ? { close: true } : { error: workerError(args) };
        if (body.controller === null) {
          body.ending = ending;
        } else {
          if (ending.error) body.controller.error(ending.error);
          else body.controller.close();
          body.onEnd?.();
        }
        return { json: "null" };
      }
      case "reset":
        this.#reset(args.reason);
        return { json: "null" };
      default:
        throw new Error(`unknown body-stream call "${method}"`);
    }
  }

  /** The worker is gone (disposed) or was restarted: end every stream it was part of. */
  #reset(reason) {
    const error = bodyAborted(reason);
    this.#cancelled.clear();
    for (const id of [...this.#requests.keys()]) this.releaseRequestBody(id, reason);
    for (const [id, body] of [...this.#responses]) {
      if (body.controller === null) {
        body.ending = { error };
      } else {
        try {
          body.controller.error(error);
        } catch {}
        body.onEnd?.();
      }
      body.cancelled = true;
      body.wake();
      if (body.controller !== null) this.#responses.delete(id);
    }
    this.#holdLoop();
  }

  /** Called when the worker is disposed: later streams fail at once. */
  close(reason) {
    this.#reset(reason);
    this.#closed = bodyAborted(reason);
  }
}

module.exports = { HostBodies };
