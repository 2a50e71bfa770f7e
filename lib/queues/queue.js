"use strict";
// Queues, the binding: `queue(options)` makes a queue — the producer end workers send to
// (`env.Q.send()` / `sendBatch()` arrive here as binding calls) and the broker that delivers the
// messages in batches to a consumer worker's `queue()` handler: by `maxBatchSize` and
// `maxBatchTimeout`, with acks, retries (`maxRetries`, `retryDelay`, per-message delays) and a
// dead-letter queue. The messages themselves, in memory and (with `dir`) on disk, are the
// backlog's (backlog.js); their bytes are messages.js's.
//
// Delivery is event-driven: a send, a batch finishing, or one Node timer (the oldest ready
// message's batch deadline, or the next delayed message's due time) moves the queue; nothing
// polls. Timers hold Node's event loop open only for an in-memory queue whose consumer is alive
// (its messages would be lost at exit); a `dir` queue's timers never do, since its messages are
// on disk and the next process delivers them.
//
// Workers are the API's (lib/api.js): it hands this file, through setWorkerAccess(), how to tell
// a worker, run a batch in one and write to its log, so nothing here imports the API.

const { Binding, serviceBacked } = require("../bindings.js");
const { CONTENT_TYPES, shown, messageId, decodeBody } = require("./messages.js");
const { Backlog } = require("./backlog.js");
const producer = require("./producer.js");

const DELAY_LIMIT = 86400;

/** Whether a value is a worker of createWorker(): set by lib/api.js, which owns the workers. */
let isWorker = () => false;
/** Runs one batch in a worker: set by lib/api.js, which owns the workers' native handles. */
let runBatch = null;
/** Writes a line to a worker's onLog: set by lib/api.js too. */
let logTo = () => {};
function setWorkerAccess(access) {
  ({ isWorker, runBatch, log: logTo } = access);
}

/** Queues that name a worker as producer or consumer, so its dispose() can tell them. */
const queuesOfWorker = new WeakMap();

function workerDisposed(worker) {
  for (const q of queuesOfWorker.get(worker) ?? []) q._workerGone(worker);
  queuesOfWorker.delete(worker);
}

const NUMBER_OPTIONS = {
  maxBatchSize: { min: 1, max: 100, integer: true, fallback: 10, text: "an integer from 1 to 100" },
  maxBatchTimeout: { min: 0, max: 60, integer: false, fallback: 5, text: "a number of seconds from 0 to 60" },
  maxRetries: { min: 0, max: 100, integer: true, fallback: 3, text: "an integer from 0 to 100" },
  retryDelay: { min: 0, max: DELAY_LIMIT, integer: true, fallback: 0, text: `an integer number of seconds from 0 to ${DELAY_LIMIT}` },
  deliveryDelay: { min: 0, max: DELAY_LIMIT, integer: true, fallback: 0, text: `an integer number of seconds from 0 to ${DELAY_LIMIT}` },
};
const OPTION_NAMES = ["name", "dir", "consumer", "deadLetterQueue", "send", ...Object.keys(NUMBER_OPTIONS)];

/** What a handler decided, as workerd reports it, when nothing was decided. */
const NO_DECISIONS = { ackAll: false, retryBatch: { retry: false }, explicitAcks: [], retryMessages: [] };

/**
 * A queue binding. Give it to workers in `bindings` (the producers); its consumer is
 * `options.consumer`, or else the first live worker created with it.
 */
class Queue extends Binding {
  #name;
  #options;
  #backlog;
  #handler = null;
  #consumer;
  #deadLetter;
  /** Workers created with this binding, in creation order (consumer candidates). */
  #bound = [];
  #delivering = false;
  #batchTimer = null;
  #batchTimerAt = 0;
  #delayTimer = null;
  #delayTimerAt = 0;
  #flushing = false;
  #waiters = [];
  #stats = { sent: 0, delivered: 0, acked: 0, retried: 0, deadLettered: 0, dropped: 0, batches: 0, failedBatches: 0 };

  constructor(options) {
    super("queue", null);
    this.handler = this;
    this.#options = options;
    this.#name = options.name;
    this.#consumer = options.consumer;
    this.#deadLetter = options.deadLetterQueue;
    this.#handler = options.send ?? null;
    this.#backlog = new Backlog(options.dir);
    if (this.#consumer) this.#watch(this.#consumer);
    if (this.#name !== undefined) this.#load();
  }

  /** The queue's name (`batch.queue`): `options.name`, or the first binding name it was given. */
  get name() {
    return this.#name;
  }

  /** Counters since this binding was made. */
  get stats() {
    return { ...this.#stats, backlog: this.backlog };
  }

  /** Messages not yet acknowledged (ready, delayed or being delivered). */
  get backlog() {
    return this.#backlog.size;
  }

  /**
   * Resolves once the queue is empty: every message sent so far (delayed ones included) was
   * acknowledged, dead-lettered or dropped, and every disk write is done. Rejects if messages
   * wait while no live consumer is there to take them.
   */
  idle() {
    return this.#wait(false);
  }

  /**
   * Delivers every message that is ready now without waiting for maxBatchTimeout, and resolves
   * once none is ready or being delivered (messages retried without a delay are delivered
   * again first; delayed ones are not waited for). Rejects like idle() without a consumer.
   */
  flush() {
    this.#flushing = true;
    return this.#wait(true);
  }

  /** Sends a message from Node into this queue, as a worker's `env.QUEUE.send()` does. */
  send(body, options) {
    return producer.send((method, args, bytes) => this._hostCall(method, args, bytes), body, options);
  }

  /** Sends messages from Node into this queue, as a worker's `env.QUEUE.sendBatch()` does. */
  sendBatch(messages, options) {
    return producer.sendBatch((method, args, bytes) => this._hostCall(method, args, bytes), messages, options);
  }

  /**
   * The messages not yet acknowledged: `{ id, timestamp, contentType, body, attempts, state, due }`
   * each (`state`: "delivering", "ready" or "delayed"; bodies decoded), in delivery order.
   */
  pending() {
    return this.#backlog.list().map(([m, state]) => ({ id: m.id, timestamp: new Date(m.timestamp), contentType: m.contentType, body: decodeBody(m.contentType, m.body), attempts: m.attempts, state, due: new Date(m.due) }));
  }

  #wait(readyOnly) {
    const waiter = { readyOnly, resolve: null, reject: null };
    const promise = new Promise((resolve, reject) => Object.assign(waiter, { resolve, reject }));
    this.#waiters.push(waiter);
    this.#pump();
    return promise;
  }

  // ---- Binding plumbing (called by lib/api.js and lib/bindings.js) -----------------------------

  /** A worker was created with this binding under `name`. */
  _bound(worker, name) {
    if (this.#name === undefined) {
      this.#name = name;
      this.#load();
    }
    this.#bound.push(worker);
    this.#watch(worker);
    this.#pump();
  }

  /** A dead-letter queue that was never bound gets its name from the queue that feeds it. */
  _nameIfUnnamed(name) {
    if (this.#name !== undefined) return;
    this.#name = name;
    this.#load();
  }

  _workerGone(worker) {
    this.#bound = this.#bound.filter((w) => w !== worker);
    this.#pump();
    this.#settleWaiters();
  }

  /** A producer's send()/sendBatch(): `args.messages[i].size` bytes each, concatenated in `bytes`. */
  async _hostCall(method, args, bytes) {
    if (method === "metrics") return { json: JSON.stringify(this.#backlog.metrics()) };
    if (method !== "send") throw new TypeError(`unknown queue operation "${method}"`);
    const now = Date.now();
    let offset = 0;
    const messages = args.messages.map((m) => {
      if (!CONTENT_TYPES.has(m.contentType)) throw new TypeError(`Unsupported queue message content type: ${m.contentType}`);
      const body = Buffer.from(bytes ? bytes.subarray(offset, offset + m.size) : Buffer.alloc(0));
      offset += m.size;
      const delay = m.delaySeconds ?? args.delaySeconds ?? this.#options.deliveryDelay;
      return { id: messageId(), timestamp: now, contentType: m.contentType, body, attempts: 0, due: now + delay * 1000 };
    });
    if (this.#handler !== null) {
      await this.#handler(messages.map((m) => ({ id: m.id, timestamp: new Date(m.timestamp), contentType: m.contentType, body: decodeBody(m.contentType, m.body), delaySeconds: (m.due - now) / 1000 })));
    } else {
      await this._enqueue(messages);
    }
    this.#stats.sent += messages.length;
    return { json: JSON.stringify({ metadata: { metrics: this.#backlog.metrics() } }) };
  }

  /** Adds messages (made durable first when on disk); used by producers and dead-lettering. */
  async _enqueue(messages) {
    await this.#backlog.add(messages);
    this.#pump();
  }

  // ---- Delivery -------------------------------------------------------------------------------

  #watch(worker) {
    let set = queuesOfWorker.get(worker);
    if (!set) queuesOfWorker.set(worker, (set = new Set()));
    set.add(this);
  }

  #load() {
    this.#backlog.open(this.#name, () => this.#pump());
  }

  /** The worker that consumes this queue now, if any is alive. */
  #liveConsumer() {
    if (this.#consumer !== undefined) return this.#consumer.disposed ? null : this.#consumer;
    return this.#bound.find((w) => !w.disposed) ?? null;
  }

  /** Moves the queue along: due delayed messages become ready, a full or overdue batch goes out, the next timer is armed. */
  #pump() {
    const now = Date.now();
    this.#backlog.promoteDue(now);
    const consumer = this.#liveConsumer();
    const { maxBatchSize, maxBatchTimeout } = this.#options;
    const ready = this.#backlog.readyCount;
    if (consumer !== null && !this.#delivering && ready > 0) {
      const deadline = this.#backlog.firstReadyAt + maxBatchTimeout * 1000;
      if (ready >= maxBatchSize || this.#flushing || deadline <= now) {
        // #deliver handles its own failures; this catch only guards against a bug turning into
        // an unhandled rejection, which would end the host process.
        this.#deliver(consumer).catch((error) => process.emitWarning(`workerbox: queue "${this.#name}" delivery failed: ${error?.stack ?? error}`));
      }
    }
    if (this.#backlog.readyCount === 0 && !this.#delivering) this.#flushing = false;
    this.#settleWaiters();
    this.#armTimers(consumer, now);
  }

  #armTimers(consumer, now) {
    // The batch deadline of the oldest ready message (only while something could deliver it).
    const wantBatch = consumer !== null && !this.#delivering && this.#backlog.readyCount > 0 ? this.#backlog.firstReadyAt + this.#options.maxBatchTimeout * 1000 : 0;
    if (wantBatch !== this.#batchTimerAt || (this.#batchTimer !== null && this.#holds(consumer) !== this.#batchTimer.hasRef())) {
      if (this.#batchTimer !== null) clearTimeout(this.#batchTimer);
      this.#batchTimer = wantBatch === 0 ? null : this.#timer(() => ((this.#batchTimer = null), (this.#batchTimerAt = 0), this.#pump()), wantBatch - now, consumer);
      this.#batchTimerAt = wantBatch;
    }
    const wantDelay = this.#backlog.nextDue;
    if (wantDelay !== this.#delayTimerAt || (this.#delayTimer !== null && this.#holds(consumer) !== this.#delayTimer.hasRef())) {
      if (this.#delayTimer !== null) clearTimeout(this.#delayTimer);
      this.#delayTimer = wantDelay === 0 ? null : this.#timer(() => ((this.#delayTimer = null), (this.#delayTimerAt = 0), this.#pump()), wantDelay - now, consumer);
      this.#delayTimerAt = wantDelay;
    }
  }

  /**
   * Whether this queue's timers should hold Node's event loop open: while a consumer is alive
   * and the messages exist only in memory, or someone awaits idle() or flush().
   */
  #holds(consumer) {
    return consumer !== null && (!this.#backlog.onDisk || this.#waiters.length > 0);
  }

  #timer(fire, ms, consumer) {
    // setTimeout's limit is 2^31-1 ms; a later due time is re-armed when this one fires.
    const timer = setTimeout(fire, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
    if (!this.#holds(consumer)) timer.unref();
    return timer;
  }

  async #deliver(consumer) {
    const batch = this.#backlog.takeBatch(this.#options.maxBatchSize);
    this.#delivering = true;
    this.#stats.batches += 1;
    this.#stats.delivered += batch.length;
    let outcome;
    try {
      const messages = batch.map((m) => ({ id: m.id, timestamp: m.timestamp, attempts: m.attempts + 1, contentType: m.contentType }));
      // The metrics a batch carries count the messages still waiting, not the batch itself
      // (the oldest timestamp is that of the oldest unacknowledged message, this batch's included).
      const metrics = this.#backlog.metrics();
      metrics.backlogCount -= batch.length;
      metrics.backlogBytes -= batch.reduce((n, m) => n + m.body.byteLength, 0);
      outcome = await runBatch(consumer, this.#name, { messages, metadata: { metrics } }, batch.map((m) => m.body));
    } catch (error) {
      outcome = { outcome: "exception", error, decisions: NO_DECISIONS };
    }
    if (outcome.error && outcome.error.code !== "ERR_WORKER_DISPOSED") {
      logTo(consumer, "error", `queue "${this.#name}": a batch of ${batch.length} failed: ${outcome.error.stack ?? outcome.error.message}`);
    }
    try {
      await this.#settle(batch, outcome);
    } catch (error) {
      // A disk write failed: the messages stay where the disk says they are; report it.
      process.emitWarning(`workerbox: queue "${this.#name}" could not record a batch's outcome: ${error.message}`);
    }
    this.#backlog.batchDone();
    this.#delivering = false;
    this.#pump();
  }

  /** Applies a batch's outcome: acks, retries (or the dead-letter queue), per production's rules. */
  async #settle(batch, { outcome, error, decisions }) {
    if (error && error.code === "ERR_WORKER_DISPOSED") {
      // The consumer went away mid-batch: nothing was decided, nothing counts as an attempt.
      for (const m of batch) this.#backlog.place(m);
      return;
    }
    if (outcome !== "ok") this.#stats.failedBatches += 1;
    const acks = new Set(decisions.explicitAcks);
    const retries = new Map(decisions.retryMessages.map((r) => [r.msgId, r.delaySeconds]));
    const retryAll = decisions.retryBatch.retry || outcome !== "ok";
    const now = Date.now();
    const done = [];
    const again = [];
    const dead = [];
    for (const m of batch) {
      let delay;
      if (acks.has(m.id)) delay = null;
      else if (retries.has(m.id)) delay = retries.get(m.id) ?? decisions.retryBatch.delaySeconds ?? this.#options.retryDelay;
      else if (decisions.ackAll || !retryAll) delay = null;
      else delay = decisions.retryBatch.delaySeconds ?? this.#options.retryDelay;
      if (delay === null) {
        done.push(m);
        continue;
      }
      m.attempts += 1;
      if (m.attempts <= this.#options.maxRetries) {
        m.due = now + delay * 1000;
        again.push(m);
      } else {
        dead.push(m);
      }
    }
    done.forEach((m) => this.#backlog.uncounted(m));
    dead.forEach((m) => this.#backlog.uncounted(m));
    this.#stats.acked += done.length;
    this.#stats.retried += again.length;
    if (dead.length > 0) {
      if (this.#deadLetter !== undefined) {
        this.#stats.deadLettered += dead.length;
        logTo(this.#liveConsumer(), "warn", `queue "${this.#name}" moved ${dead.length} message(s) to the dead-letter queue "${this.#deadLetter.name}" after ${this.#options.maxRetries + 1} failed attempts`);
        this.#deadLetter._nameIfUnnamed(`${this.#name}-dlq`);
        await this.#deadLetter._enqueue(dead.map((m) => ({ id: m.id, timestamp: m.timestamp, contentType: m.contentType, body: m.body, attempts: 0, due: now })));
      } else {
        this.#stats.dropped += dead.length;
        const attempts = this.#options.maxRetries + 1;
        logTo(this.#liveConsumer(), "warn", `queue "${this.#name}" dropped ${dead.length} message(s) after ${attempts} failed attempt${attempts === 1 ? "" : "s"} (no deadLetterQueue): ${dead.map((m) => m.id).join(", ")}`);
      }
    }
    try {
      if (this.#backlog.onDisk && (done.length > 0 || again.length > 0 || dead.length > 0)) {
        await this.#backlog.persist({ retry: again, remove: [...done, ...dead] });
      }
    } finally {
      // Even if the disk write failed, the retried messages are still pending here.
      for (const m of again) this.#backlog.place(m);
    }
  }

  /** Whether a waiter is done: nothing ready or in delivery, and (for idle()) nothing delayed. */
  #done(readyOnly) {
    return !this.#delivering && this.#backlog.readyCount === 0 && (readyOnly || this.#backlog.delayedCount === 0);
  }

  #settleWaiters() {
    if (this.#waiters.length === 0) return;
    const live = this.#liveConsumer() !== null;
    const waiting = [];
    for (const waiter of this.#waiters) {
      if (this.#done(waiter.readyOnly)) {
        this.#backlog.written().then(() => waiter.resolve());
      } else if (!live && !this.#delivering) {
        waiter.reject(new Error(`queue "${this.#name}" has ${this.backlog} message(s) waiting but no live consumer worker (pass { consumer } or create a worker with this binding)`));
      } else {
        waiting.push(waiter);
      }
    }
    this.#waiters = waiting;
  }

  get [Symbol.toStringTag]() {
    return "Queue";
  }
}

/**
 * A queue binding. `queue()` keeps messages in memory; `queue({ dir })` keeps the backlog in
 * `dir/queues.sqlite3`. Consumer settings: `consumer`, `maxBatchSize`, `maxBatchTimeout`,
 * `maxRetries`, `retryDelay`, `deadLetterQueue`; producer: `name`, `deliveryDelay`; and
 * `send(messages)` to receive the messages in your own function instead.
 */
function queue(options = {}) {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new TypeError("queue(): options must be an object such as { maxBatchSize: 10, maxBatchTimeout: 5 }");
  }
  // A producer whose backing is a service spoken to in workerd's queue HTTP protocol.
  if (options.service !== undefined) {
    const other = Object.keys(options).filter((key) => key !== "service");
    if (other.length > 0) throw new TypeError(`queue(): options.service cannot be combined with ${other.join(", ")} (the service is the queue)`);
    return serviceBacked("queue_http", options.service, "queue()");
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key)) throw new TypeError(`queue(): unknown option "${key}" (known options: ${OPTION_NAMES.join(", ")})`);
  }
  const checked = { ...options };
  for (const [key, rule] of Object.entries(NUMBER_OPTIONS)) {
    const value = options[key];
    if (value === undefined) {
      checked[key] = rule.fallback;
      continue;
    }
    const ok = typeof value === "number" && Number.isFinite(value) && value >= rule.min && value <= rule.max && (!rule.integer || Number.isInteger(value));
    if (!ok) throw new TypeError(`queue(): options.${key} must be ${rule.text}, got ${shown(value)}`);
  }
  if (options.name !== undefined && (typeof options.name !== "string" || options.name === "")) {
    throw new TypeError(`queue(): options.name must be a non-empty string, got ${shown(options.name)}`);
  }
  if (options.dir !== undefined && (typeof options.dir !== "string" || options.dir === "")) {
    throw new TypeError("queue(): options.dir must be a folder path");
  }
  if (options.consumer !== undefined) {
    if (!isWorker(options.consumer)) throw new TypeError("queue(): options.consumer must be a worker returned by createWorker()");
  }
  if (options.deadLetterQueue !== undefined && !(options.deadLetterQueue instanceof Queue)) {
    throw new TypeError("queue(): options.deadLetterQueue must be another queue() binding");
  }
  if (options.send !== undefined) {
    if (typeof options.send !== "function") throw new TypeError("queue(): options.send must be a function (messages) => void that receives every sent message");
    const consumerOnly = ["dir", "consumer", "deadLetterQueue", "maxBatchSize", "maxBatchTimeout", "maxRetries", "retryDelay"].find((k) => options[k] !== undefined);
    if (consumerOnly) throw new TypeError(`queue(): options.${consumerOnly} has no effect with options.send (your function receives the messages; nothing is delivered to a consumer)`);
  }
  return new Queue(checked);
}

module.exports = { queue, Queue, setWorkerAccess, workerDisposed };
