"use strict";
// Analytics Engine datasets, kept locally: `analyticsEngine({ dataset, dir? })` is the binding a
// worker gets as `env.AE`; each `writeDataPoint()` (checked in the worker as workerd checks it,
// src/js/89_local_bindings.js) becomes a row here: in memory, or appended as one line of JSON to
// `<dir>/<dataset>.jsonl`. `dataPoints()` reads them back in Node, in the order written. Wrangler
// dev keeps nothing (its local dataset is a no-op); production is only queried through its SQL
// API, which this does not offer.
//
// A line: {"dataset","timestamp" (ms),"index1","blobs":[string | {"base64"} | null],"doubles":[…]}.

const fs = require("node:fs");
const path = require("node:path");
const { Binding } = require("../bindings.js");

const safeName = (name) => String(name).replace(/[^\w.-]/g, "_").slice(0, 120) || "_";

/** A stored blob as Node reads it: a string, a Buffer for bytes, or null. */
const decodeBlob = (blob) => (blob !== null && typeof blob === "object" ? Buffer.from(blob.base64, "base64") : blob);

function decode(row) {
  return { dataset: row.dataset, timestamp: row.timestamp, index1: decodeBlob(row.index1), blobs: row.blobs.map(decodeBlob), doubles: row.doubles };
}

class AnalyticsEngineBinding extends Binding {
  #rows = [];
  #file = null;
  /** Appends in order: each write waits for the one before it. */
  #writing = Promise.resolve();

  constructor(dataset, dir) {
    super("analytics_engine", null);
    this.dataset = dataset;
    if (dir !== undefined) {
      fs.mkdirSync(dir, { recursive: true });
      this.#file = path.join(path.resolve(dir), `${safeName(dataset)}.jsonl`);
    }
  }

  /** The file data points are appended to (null: in memory). */
  get file() {
    return this.#file;
  }

  answer(method, args) {
    if (method !== "write") throw new TypeError(`unknown Analytics Engine operation "${method}"`);
    const row = { dataset: this.dataset, timestamp: args.timestamp, index1: args.index1, blobs: args.blobs, doubles: args.doubles };
    if (this.#file === null) {
      this.#rows.push(row);
      return { json: "null" };
    }
    const line = `${JSON.stringify(row)}\n`;
    this.#writing = this.#writing.then(() => fs.promises.appendFile(this.#file, line));
    return this.#writing.then(() => ({ json: "null" }));
  }

  /** Every data point written so far, oldest first: `{ dataset, timestamp, index1, blobs, doubles }`. */
  async dataPoints() {
    await this.#writing.catch(() => {});
    if (this.#file === null) return this.#rows.map(decode);
    let text;
    try {
      text = await fs.promises.readFile(this.#file, "utf8");
    } catch (error) {
      if (error.code === "ENOENT") return [];
      throw error;
    }
    return text.split("\n").filter((line) => line !== "").map((line) => decode(JSON.parse(line)));
  }

  /** Forgets every data point (and empties the file). */
  async clear() {
    await this.#writing.catch(() => {});
    this.#rows = [];
    if (this.#file !== null) await fs.promises.rm(this.#file, { force: true });
  }
}

/** An Analytics Engine dataset binding: `analyticsEngine({ dataset?, dir? })`. */
function analyticsEngine(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("analyticsEngine(): options must be an object such as { dataset: \"events\", dir: \".workerbox/ae\" }");
  const { dataset = "dataset", dir } = options;
  if (typeof dataset !== "string" || dataset === "") throw new TypeError("analyticsEngine(): dataset must be a non-empty string");
  // Backed by a service (workerd's analyticsEngine binding): each data point is POSTed to it.
  if (options.service !== undefined) return require("../bindings.js").serviceBacked(`analytics_engine_http:${dataset}`, options.service, "analyticsEngine()");
  if (dir !== undefined && (typeof dir !== "string" || dir === "")) throw new TypeError("analyticsEngine(): dir must be a folder path");
  return new AnalyticsEngineBinding(dataset, dir);
}

module.exports = { analyticsEngine, AnalyticsEngineBinding };
