"use strict";
// Workflows' persistence: each instance's row (status, params, output, error, pause flag) and
// its step records (finished steps' results, sleeps' deadlines, events waited for and events
// sent ahead of a wait), in the embedded SQLite layer: a NativeStore of kind "d1" (the same
// store a d1() binding is), in memory or in `dir/d1.sqlite3`. Values are V8-serialized bytes,
// kept as base64 text. Writes go in order through one chain; the engine (engine.js) decides
// what to write when.

const path = require("node:path");
const { NativeStore } = require("../../native.js");

const SCHEMA = [
  "CREATE TABLE IF NOT EXISTS workflow_instances (workflow TEXT NOT NULL, id TEXT NOT NULL, status TEXT NOT NULL, params TEXT, created INTEGER NOT NULL, output TEXT, error TEXT, paused INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (workflow, id))",
  "CREATE TABLE IF NOT EXISTS workflow_steps (workflow TEXT NOT NULL, id TEXT NOT NULL, key TEXT NOT NULL, value TEXT, PRIMARY KEY (workflow, id, key))",
  "CREATE TABLE IF NOT EXISTS workflow_events (seq INTEGER PRIMARY KEY AUTOINCREMENT, workflow TEXT NOT NULL, id TEXT NOT NULL, type TEXT NOT NULL, at INTEGER NOT NULL, payload TEXT)",
];

const b64 = (bytes) => (bytes === null || bytes === undefined ? null : Buffer.from(bytes).toString("base64"));
const unb64 = (text) => (text === null || text === undefined ? null : Buffer.from(text, "base64"));

class WorkflowStore {
  #store;
  #workflow;
  #chain;

  /** `dir`: the folder of the SQLite file, or undefined (in memory). `workflow`: the rows' owner. */
  constructor(dir, workflow) {
    this.#store = new NativeStore("d1", dir === undefined ? undefined : path.resolve(dir));
    this.#workflow = workflow;
    this.#chain = this.#run(SCHEMA.map((sql) => ({ sql, params: [] })));
  }

  /** Runs statements in order after every earlier one; resolves to each one's rows (as objects). */
  #run(queries) {
    const next = (this.#chain ?? Promise.resolve()).catch(() => {}).then(async () => {
      const answer = await this.#store.call("query", JSON.stringify({ queries }), null, Date.now());
      if (answer.errorMessage !== undefined && answer.errorMessage !== null) throw new Error(answer.errorMessage);
      const parsed = JSON.parse(answer.json);
      if (parsed.error) throw new Error(`workflow store: ${parsed.error}`);
      return parsed.results.map((r) => r.rows.map((row) => Object.fromEntries(r.columns.map((c, i) => [c, row[i]]))));
    });
    this.#chain = next;
    return next;
  }

  #q(sql, ...params) {
    return { sql, params: [this.#workflow, ...params] };
  }

  /** Every instance row: `{ id, status, params (bytes), created, output (bytes|null), hasOutput, error, paused }`. */
  async instances() {
    const [rows] = await this.#run([this.#q("SELECT id, status, params, created, output, error, paused FROM workflow_instances WHERE workflow = ?")]);
    return rows.map((r) => ({ id: r.id, status: r.status, params: unb64(r.params), created: r.created, output: unb64(r.output), hasOutput: r.output !== null, error: r.error === null ? null : JSON.parse(r.error), paused: r.paused === 1 }));
  }

  /** Adds instances; rejects (writing none) if an id exists. */
  async create(instances) {
    await this.#run(instances.map((i) => this.#q("INSERT INTO workflow_instances (workflow, id, status, params, created) VALUES (?, ?, 'queued', ?, ?)", i.id, b64(i.params), i.created)));
  }

  async setState(id, { status, output, error, paused }) {
    const sets = [];
    const params = [];
    if (status !== undefined) sets.push("status = ?"), params.push(status);
    if (output !== undefined) sets.push("output = ?"), params.push(b64(output));
    if (error !== undefined) sets.push("error = ?"), params.push(error === null ? null : JSON.stringify(error));
    if (paused !== undefined) sets.push("paused = ?"), params.push(paused ? 1 : 0);
    await this.#run([{ sql: `UPDATE workflow_instances SET ${sets.join(", ")} WHERE workflow = ? AND id = ?`, params: [...params, this.#workflow, id] }]);
  }

  /** Forgets an instance's steps and events (restart), and its output and error. */
  async clearSteps(id) {
    await this.#run([
      this.#q("DELETE FROM workflow_steps WHERE workflow = ? AND id = ?", id),
      this.#q("UPDATE workflow_instances SET output = NULL, error = NULL WHERE workflow = ? AND id = ?", id),
    ]);
  }

  /** An instance's step records: key → value (parsed JSON record). */
  async steps(id) {
    const [rows] = await this.#run([this.#q("SELECT key, value FROM workflow_steps WHERE workflow = ? AND id = ?", id)]);
    return new Map(rows.map((r) => [r.key, JSON.parse(r.value)]));
  }

  async setStep(id, key, record) {
    await this.#run([this.#q("INSERT OR REPLACE INTO workflow_steps (workflow, id, key, value) VALUES (?, ?, ?, ?)", id, key, JSON.stringify(record))]);
  }

  /** Events sent to an instance and not yet taken by a wait, oldest first. */
  async events(id) {
    const [rows] = await this.#run([this.#q("SELECT seq, type, at, payload FROM workflow_events WHERE workflow = ? AND id = ? ORDER BY seq", id)]);
    return rows.map((r) => ({ seq: r.seq, type: r.type, at: r.at, payload: unb64(r.payload) }));
  }

  async addEvent(id, event) {
    await this.#run([this.#q("INSERT INTO workflow_events (workflow, id, type, at, payload) VALUES (?, ?, ?, ?, ?)", id, event.type, event.at, b64(event.payload))]);
  }

  /** A wait took event `seq`: it leaves the queue and becomes the wait's record, in one transaction. */
  async takeEvent(id, seq, key, record) {
    await this.#run([this.#q("DELETE FROM workflow_events WHERE workflow = ? AND id = ? AND seq = ?", id, seq), this.#q("INSERT OR REPLACE INTO workflow_steps (workflow, id, key, value) VALUES (?, ?, ?, ?)", id, key, JSON.stringify(record))]);
  }

  /** Resolves once every write asked for so far is done. */
  written() {
    return this.#chain.then(
      () => {},
      () => {},
    );
  }
}

module.exports = { WorkflowStore, b64, unb64 };
