"use strict";
// Workflows, what tests change in a run (introspection, introspect.js): per instance, the
// modifications a test asked for — sleeps and retry delays skipped, a step.do's result or errors
// or timeouts mocked per attempt, events supplied, event waits timed out at once — and the
// sessions of introspectWorkflow(), whose modifications go to every instance created while they
// last. The engine (engine.js) asks this file at each step; nothing here is stored on disk.
//
// Steps are chosen as Cloudflare's introspection API chooses them: `{ name, index? }`, the
// index-th step of that kind and name in the run (1 when left out) — the engine's step keys
// (`do:<count>:<name>`, `sleep:…`, `wait:…`) carry the same count.

const rpc = require("../rpc.js");

function selector(step, what) {
  if (step === null || typeof step !== "object" || typeof step.name !== "string") {
    throw new TypeError(`${what}: the step must be an object { name: string, index?: number }, got ${JSON.stringify(step)}`);
  }
  if (step.index !== undefined && !(Number.isInteger(step.index) && step.index >= 1)) {
    throw new TypeError(`${what}: the step's index must be an integer of at least 1 (1 is the first step of that name), got ${JSON.stringify(step.index)}`);
  }
  return `${step.name}\u0000${step.index ?? 1}`;
}

function selectors(steps, what) {
  if (steps === undefined) return null;
  if (!Array.isArray(steps)) throw new TypeError(`${what}: the steps must be an array of { name, index? } (or left out for all)`);
  return steps.map((s) => selector(s, what));
}

/** The selector of an engine step key `kind:count:name`. */
function selectorOfKey(key) {
  const first = key.indexOf(":");
  const second = key.indexOf(":", first + 1);
  return `${key.slice(second + 1)}\u0000${key.slice(first + 1, second)}`;
}

const times = (n, what) => {
  if (n === undefined) return undefined;
  if (!(Number.isInteger(n) && n >= 1)) throw new TypeError(`${what}: times must be an integer of at least 1, got ${JSON.stringify(n)}`);
  return n;
};

/**
 * One modification, checked, in the form both the Node API and workerbox/vitest's isolate
 * send: `{ type, step?, steps?, value?, error?, times?, event? }` (a value is V8-serialized
 * bytes by now).
 */
function checkOperation(op) {
  const what = op?.type ?? "modify()";
  switch (op?.type) {
    case "disableSleeps":
    case "disableRetryDelays":
      return { type: op.type, steps: selectors(op.steps, `${what}()`) };
    case "mockStepResult":
      return { type: op.type, step: selector(op.step, "mockStepResult()"), bytes: op.bytes };
    case "mockStepError": {
      const error = op.error;
      if (error === null || typeof error !== "object" || typeof error.message !== "string") throw new TypeError("mockStepError(): the error must be an Error (or { name, message })");
      return { type: op.type, step: selector(op.step, "mockStepError()"), error: { name: typeof error.name === "string" ? error.name : "Error", message: error.message }, times: times(op.times, "mockStepError()") };
    }
    case "forceStepTimeout":
      return { type: op.type, step: selector(op.step, "forceStepTimeout()"), times: times(op.times, "forceStepTimeout()") };
    case "forceEventTimeout":
      return { type: op.type, step: selector(op.step, "forceEventTimeout()") };
    case "mockEvent": {
      if (op.event === null || typeof op.event !== "object" || typeof op.event.type !== "string") throw new TypeError("mockEvent(): the event must be an object { type: string, payload }");
      return { type: op.type, eventType: op.event.type, bytes: op.bytes };
    }
  }
  throw new TypeError(`unknown Workflow modification ${JSON.stringify(op?.type)}`);
}

/** A modification from Node: values become V8-serialized bytes. */
function operationFromNode(op) {
  if (op.type === "mockStepResult") return checkOperation({ ...op, bytes: rpc.serialize(op.value) });
  if (op.type === "mockEvent") return checkOperation({ ...op, bytes: op.event?.payload === undefined ? null : rpc.serialize(op.event.payload) });
  return checkOperation(op);
}

class InstanceMocks {
  allSleeps = false;
  sleeps = new Set();
  allRetryDelays = false;
  retryDelays = new Set();
  /** selector → { bytes } */
  results = new Map();
  /** selector → { always, byAttempt: Map<attempt, what>, next } (what: { error } or { timeout: true }) */
  failures = new Map();
  eventTimeouts = new Set();
  /** [{ type, bytes }] — each answers one wait of its type per run. */
  events = [];
  used = new Set();

  apply(op) {
    switch (op.type) {
      case "disableSleeps":
        if (op.steps === null) this.allSleeps = true;
        else for (const s of op.steps) this.sleeps.add(s);
        return;
      case "disableRetryDelays":
        if (op.steps === null) this.allRetryDelays = true;
        else for (const s of op.steps) this.retryDelays.add(s);
        return;
      case "mockStepResult":
        if (this.results.has(op.step)) throw new Error(`[WorkflowIntrospector] Trying to mock step '${op.step.split("\u0000")[0]}' multiple times!`);
        this.results.set(op.step, { bytes: op.bytes });
        return;
      case "mockStepError":
      case "forceStepTimeout": {
        const name = op.step.split("\u0000")[0];
        if (this.results.has(op.step)) {
          throw new Error(`[WorkflowIntrospector] Trying to ${op.type === "mockStepError" ? "mock error on" : "force timeout on"} step '${name}' after mocking its result!`);
        }
        const what = op.type === "mockStepError" ? { error: op.error } : { timeout: true };
        let entry = this.failures.get(op.step);
        if (entry === undefined) this.failures.set(op.step, (entry = { always: null, byAttempt: new Map(), next: 1 }));
        if (op.times === undefined) entry.always ??= what;
        else for (let i = 0; i < op.times; i++) entry.byAttempt.set(entry.next++, what);
        return;
      }
      case "forceEventTimeout":
        this.eventTimeouts.add(op.step);
        return;
      case "mockEvent":
        this.events.push({ type: op.eventType, bytes: op.bytes });
        return;
    }
  }

  /** What attempt `attempt` of step.do `key` does instead of its callback, or null. */
  forAttempt(key, attempt) {
    const sel = selectorOfKey(key);
    const failure = this.failures.get(sel);
    const forced = failure?.always ?? failure?.byAttempt.get(attempt);
    if (forced) return forced;
    const result = this.results.get(sel);
    return result ? { value: result.bytes } : null;
  }

  sleepDisabled(key) {
    return this.allSleeps || this.sleeps.has(selectorOfKey(key));
  }

  retryDelayDisabled(key) {
    return this.allRetryDelays || this.retryDelays.has(selectorOfKey(key));
  }

  eventTimesOut(key) {
    return this.eventTimeouts.has(selectorOfKey(key));
  }

  /** A mocked event of `type` this run has not used yet (it is used now), or null. */
  takeEvent(type) {
    const index = this.events.findIndex((e, i) => e.type === type && !this.used.has(i));
    if (index === -1) return null;
    this.used.add(index);
    return this.events[index];
  }

  /** A restarted run gets the mocked events again. */
  restarted() {
    this.used.clear();
  }
}

/** The modifications of one workflow binding's instances, and its introspectWorkflow() sessions. */
class Mocks {
  #byInstance = new Map();
  #sessions = new Set();

  of(id) {
    return this.#byInstance.get(id) ?? null;
  }

  ensure(id) {
    let mocks = this.#byInstance.get(id);
    if (mocks === undefined) this.#byInstance.set(id, (mocks = new InstanceMocks()));
    return mocks;
  }

  drop(id) {
    this.#byInstance.delete(id);
  }

  /** A session of introspectWorkflow(): `{ operations, ids }`; instances created from now on join it. */
  startSession() {
    const session = { operations: [], ids: [] };
    this.#sessions.add(session);
    return session;
  }

  endSession(session) {
    this.#sessions.delete(session);
  }

  /** Instance `id` was just created (before its run starts): the live sessions' modifications apply. */
  created(id) {
    for (const session of this.#sessions) {
      session.ids.push(id);
      const mocks = this.ensure(id);
      for (const op of session.operations) mocks.apply(op);
    }
  }
}

module.exports = { Mocks, checkOperation, operationFromNode };
