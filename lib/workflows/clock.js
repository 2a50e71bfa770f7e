"use strict";
// The clock of one workflow binding: what "now" is for its instances, and their timers (sleeps,
// retry delays, step timeouts, waitForEvent timeouts). Real time by default, moved ahead by
// `advance(ms)`; with `manual`, timers fire only when a test advances the clock (so a sleep of a
// day takes no time). Node timers back the real clock: unref'd when the state is on disk (the
// next process picks it up), and re-armed past setTimeout's 2^31-1 ms limit. Nothing polls.

const MAX_TIMER_MS = 2 ** 31 - 1;

class Clock {
  #offset = 0;
  #manual;
  #hold;
  #timers = new Set();
  #armedListeners = [];

  /** `manual`: timers fire only through advance(); `hold`: real timers keep Node's event loop open. */
  constructor({ manual = false, hold = false } = {}) {
    this.#manual = manual;
    this.#hold = hold;
  }

  now() {
    return Date.now() + this.#offset;
  }

  /** Calls `fire` at clock time `at`; `info` describes the timer (pending()). Returns a cancel function. */
  at(at, fire, info = {}) {
    const timer = { at, fire, info, handle: null };
    this.#timers.add(timer);
    this.#arm(timer);
    const listeners = this.#armedListeners;
    this.#armedListeners = [];
    for (const listener of listeners) listener(timer.info);
    return () => this.#cancel(timer);
  }

  #arm(timer) {
    // Due already (a deadline stored by an earlier run): it fires at once, with either clock.
    if (timer.at <= this.now()) {
      timer.handle = setTimeout(() => this.#fire(timer), 0);
      if (!this.#hold) timer.handle.unref();
      return;
    }
    if (this.#manual) return;
    const wait = Math.max(0, timer.at - this.now());
    timer.handle = setTimeout(() => (wait > MAX_TIMER_MS ? this.#arm(timer) : this.#fire(timer)), Math.min(wait, MAX_TIMER_MS));
    if (!this.#hold) timer.handle.unref();
  }

  #cancel(timer) {
    clearTimeout(timer.handle);
    this.#timers.delete(timer);
  }

  #fire(timer) {
    if (!this.#timers.has(timer)) return;
    this.#cancel(timer);
    timer.fire();
  }

  /** The timers waiting: `{ at, ...info }` each, soonest first. */
  pending() {
    return [...this.#timers].sort((a, b) => a.at - b.at).map((t) => ({ at: t.at, ...t.info }));
  }

  /** Moves the clock `ms` ahead and fires the timers now due, soonest first. */
  advance(ms) {
    if (!(typeof ms === "number" && Number.isFinite(ms) && ms >= 0)) throw new TypeError(`advance(): ms must be a number of milliseconds of at least 0, got ${String(ms)}`);
    this.#offset += ms;
    const due = [...this.#timers].filter((t) => t.at <= this.now()).sort((a, b) => a.at - b.at);
    for (const timer of due) this.#fire(timer);
    // Real timers not yet due are re-armed for the new time.
    if (!this.#manual) for (const timer of this.#timers) clearTimeout(timer.handle), this.#arm(timer);
  }

  /**
   * Resolves with the soonest timer for which `accept(info)` is true once one is set (at once if
   * one is).
   */
  async nextTimer(accept = () => true) {
    for (;;) {
      const found = this.pending().find(accept);
      if (found !== undefined) return found;
      await new Promise((resolve) => this.#armedListeners.push(resolve));
    }
  }

  /** Cancels every timer (the binding is closed). */
  clear() {
    for (const timer of this.#timers) clearTimeout(timer.handle);
    this.#timers.clear();
  }
}

module.exports = { Clock };
