"use strict";
// The messages one queue holds: ready ones (a FIFO), delayed ones (by due time) and the batch
// being delivered; the backlog metrics production reports (count, bytes, oldest timestamp); and,
// for a queue with `dir`, their copy on disk (dir/queues.sqlite3, src/runtime/store/queue.rs):
// writes in order and batched, and the file followed for messages other processes add. What to
// deliver when, and what a consumer's answer does to a message, is the binding's (queue.js).

const path = require("node:path");

class Backlog {
  /** The queue's name (its rows on disk); set by open(). */
  #name;
  #dir;
  #store = null;
  // Messages ready now (a FIFO: array plus head index), delayed ones (sorted by due time), and
  // the batch being delivered.
  #ready = [];
  #head = 0;
  #delayed = [];
  #inFlight = [];
  // Metrics kept as messages come and go, so a send costs the same with a long backlog: bytes,
  // and the oldest timestamp (recomputed only after the oldest message leaves).
  #bytes = 0;
  #oldestAt = 0;
  #oldestStale = false;
  #writes = null;
  #writeChain = Promise.resolve();
  #opened = false;
  /** Ids on their way to disk from this process, which following the file must not place twice. */
  #arriving = new Set();
  /** Watches the backlog file for messages other processes add (a platform proxy, a test). */
  #follower = null;
  #followTimer = null;

  /** `dir`: the folder of the backlog file, or undefined (in memory only). */
  constructor(dir) {
    if (dir !== undefined) {
      const { NativeQueueStore } = require("../../native.js");
      this.#dir = path.resolve(dir);
      this.#store = new NativeQueueStore(this.#dir);
    }
  }

  /** Whether the messages are on disk (a later process delivers what this one leaves). */
  get onDisk() {
    return this.#store !== null;
  }

  /** Messages not yet acknowledged (ready, delayed or being delivered). */
  get size() {
    return this.#ready.length - this.#head + this.#delayed.length + this.#inFlight.length;
  }

  get readyCount() {
    return this.#ready.length - this.#head;
  }

  get delayedCount() {
    return this.#delayed.length;
  }

  /** When the oldest ready message became ready (ms), or 0 when none is. */
  get firstReadyAt() {
    return this.readyCount > 0 ? this.#ready[this.#head].readyAt : 0;
  }

  /** The next delayed message's due time (ms), or 0 when none waits. */
  get nextDue() {
    return this.#delayed.length > 0 ? this.#delayed[0].due : 0;
  }

  /** Resolves once every disk write asked for so far is done (failed ones included). */
  written() {
    return this.#writeChain;
  }

  /**
   * The queue has its name: on disk, its stored messages are placed and the file followed;
   * `onArrive` is called when messages another process wrote have been placed.
   */
  open(name, onArrive) {
    if (this.#opened || this.#store === null) return;
    this.#opened = true;
    this.#name = name;
    this.#pickUp();
    this.#follow(onArrive);
  }

  /** Adds messages (made durable first when on disk). */
  async add(messages) {
    if (this.#store !== null) {
      for (const m of messages) this.#arriving.add(m.id);
      try {
        await this.persist({ add: messages });
      } finally {
        for (const m of messages) this.#arriving.delete(m.id);
      }
    }
    for (const m of messages) {
      this.counted(m);
      this.place(m);
    }
  }

  /** Places the stored messages this queue does not hold yet (all of them, the first time). */
  #pickUp() {
    // Messages leaving (acked, dead-lettered) are still in #inFlight until their removal is on disk.
    const held = new Set(this.#arriving);
    for (let i = this.#head; i < this.#ready.length; i++) held.add(this.#ready[i].id);
    for (const m of this.#delayed) held.add(m.id);
    for (const m of this.#inFlight) held.add(m.id);
    let added = 0;
    for (const row of this.#store.load(this.#name)) {
      if (held.has(row.id)) continue;
      const m = { id: row.id, timestamp: row.timestamp, contentType: row.contentType, body: row.body, attempts: row.attempts, due: row.due };
      this.counted(m);
      this.place(m);
      added++;
    }
    return added;
  }

  /**
   * Follows the backlog file: messages another process sends to this queue (say, a framework's
   * dev server through getPlatformProxy()) are picked up and delivered here. The watch does not
   * hold Node's event loop open.
   */
  #follow(onArrive) {
    try {
      this.#follower = require("node:fs").watch(this.#dir, { persistent: false }, (event, file) => {
        if ((file && !String(file).startsWith("queues.sqlite3")) || this.#followTimer !== null) return;
        this.#followTimer = setTimeout(() => {
          this.#followTimer = null;
          try {
            if (this.#pickUp() > 0) onArrive();
          } catch {}
        }, 20);
        this.#followTimer.unref();
      });
      this.#follower.on("error", () => {});
    } catch {
      // A folder that cannot be watched: messages from other processes wait for a restart.
    }
  }

  /** Puts a message among the ready ones, or the delayed ones if it is not due yet. */
  place(message) {
    const now = Date.now();
    if (message.due <= now) {
      message.readyAt = now;
      this.#ready.push(message);
      return;
    }
    // Insert by due time (binary search; equal times keep their order).
    let low = 0;
    let high = this.#delayed.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#delayed[mid].due <= message.due) low = mid + 1;
      else high = mid;
    }
    this.#delayed.splice(low, 0, message);
  }

  /** Delayed messages due by `now` become ready. */
  promoteDue(now) {
    while (this.#delayed.length > 0 && this.#delayed[0].due <= now) {
      const message = this.#delayed.shift();
      message.readyAt = now;
      this.#ready.push(message);
    }
  }

  /** Takes up to `count` ready messages as the batch being delivered. */
  takeBatch(count) {
    const batch = this.#ready.slice(this.#head, this.#head + count);
    this.#head += batch.length;
    if (this.#head > 1024 && this.#head * 2 > this.#ready.length) {
      this.#ready = this.#ready.slice(this.#head);
      this.#head = 0;
    }
    this.#inFlight = batch;
    return batch;
  }

  /** The batch's outcome is applied (its messages acked, placed again or gone). */
  batchDone() {
    this.#inFlight = [];
  }

  /** The messages held, with their state: the batch being delivered, the ready ones in order, the delayed ones by due time. */
  list() {
    return [
      ...this.#inFlight.map((message) => [message, "delivering"]),
      ...this.#ready.slice(this.#head).map((message) => [message, "ready"]),
      ...this.#delayed.map((message) => [message, "delayed"]),
    ];
  }

  /** `{ backlogCount, backlogBytes, oldestMessageTimestamp }` (ms; 0 when empty), as production reports them. */
  metrics() {
    return { backlogCount: this.size, backlogBytes: this.#bytes, oldestMessageTimestamp: this.#oldest() };
  }

  /** The oldest pending message's timestamp (ms), 0 when none. */
  #oldest() {
    if (this.#oldestStale) {
      let oldest = 0;
      const consider = (m) => (oldest === 0 || m.timestamp < oldest) && (oldest = m.timestamp);
      for (let i = this.#head; i < this.#ready.length; i++) consider(this.#ready[i]);
      this.#delayed.forEach(consider);
      this.#inFlight.forEach(consider);
      this.#oldestAt = oldest;
      this.#oldestStale = false;
    }
    return this.#oldestAt;
  }

  /** A message joined the backlog (sent, loaded from disk, dead-lettered in). */
  counted(m) {
    this.#bytes += m.body.byteLength;
    if (!this.#oldestStale && (this.#oldestAt === 0 || m.timestamp < this.#oldestAt)) this.#oldestAt = m.timestamp;
  }

  /** A message left the backlog (acked, dead-lettered out, dropped). */
  uncounted(m) {
    this.#bytes -= m.body.byteLength;
    if (m.timestamp === this.#oldestAt) this.#oldestStale = true;
  }

  /**
   * Writes changes to the backlog file: `{ add, retry, remove }`, lists of messages. Writes go
   * one at a time, in order; changes made while one is running are committed together by the
   * next (one fsync for many messages).
   */
  persist(changes) {
    if (this.#writes === null) {
      const writes = (this.#writes = { add: [], retry: [], remove: [], done: null });
      writes.done = this.#writeChain.then(() => {
        this.#writes = null;
        return this.#store.write(
          this.#name,
          writes.add.map((m) => ({ id: m.id, timestamp: m.timestamp, contentType: m.contentType, body: m.body, attempts: m.attempts, due: m.due })),
          writes.retry.map((m) => ({ id: m.id, attempts: m.attempts, due: m.due })),
          writes.remove.map((m) => m.id),
        );
      });
      this.#writeChain = writes.done.catch(() => {});
    }
    const writes = this.#writes;
    if (changes.add) writes.add.push(...changes.add);
    if (changes.retry) writes.retry.push(...changes.retry);
    if (changes.remove) writes.remove.push(...changes.remove);
    return writes.done;
  }
}

module.exports = { Backlog };
