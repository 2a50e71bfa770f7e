// A node:console `Console` for the Vitest runner: Vitest captures each test's console output by
// making a Console over its own writable streams, which workerd's node:console cannot make.
// Formatting is node:util's; groups indent, counters and timers keep their state per Console.
import { formatWithOptions } from "node:util";

const METHODS = ["log", "info", "debug", "dirxml", "warn", "error", "trace", "dir", "assert", "clear", "count", "countReset", "group", "groupCollapsed", "groupEnd", "table", "time", "timeEnd", "timeLog"];

export class Console {
  #stdout;
  #stderr;
  #inspectOptions;
  #indent = "";
  #counts = new Map();
  #timers = new Map();

  constructor(options, stderr, ignoreErrors) {
    if (options && typeof options.write === "function") options = { stdout: options, stderr, ignoreErrors };
    if (!options?.stdout || typeof options.stdout.write !== "function") throw new TypeError('The "stdout" argument must be a writable stream');
    this.#stdout = options.stdout;
    this.#stderr = options.stderr ?? this.#stdout;
    const colors = typeof options.colorMode === "boolean" ? options.colorMode : false;
    this.#inspectOptions = options.inspectOptions ?? { colors };
    for (const name of METHODS) this[name] = this[name].bind(this);
  }

  #write(stream, args) {
    const text = formatWithOptions(this.#inspectOptions, ...args);
    stream.write(`${this.#indent ? text.replace(/^/gm, this.#indent) : text}\n`);
  }

  log(...args) {
    this.#write(this.#stdout, args);
  }
  info(...args) {
    this.#write(this.#stdout, args);
  }
  debug(...args) {
    this.#write(this.#stdout, args);
  }
  dirxml(...args) {
    this.#write(this.#stdout, args);
  }
  warn(...args) {
    this.#write(this.#stderr, args);
  }
  error(...args) {
    this.#write(this.#stderr, args);
  }
  trace(...args) {
    const stack = new Error().stack.split("\n").slice(2).join("\n");
    this.#write(this.#stderr, [`Trace: ${formatWithOptions(this.#inspectOptions, ...args)}\n${stack}`]);
  }
  dir(item, options) {
    this.#write(this.#stdout, [formatWithOptions({ ...this.#inspectOptions, ...options }, item)]);
  }
  assert(condition, ...args) {
    if (!condition) this.#write(this.#stderr, args.length ? ["Assertion failed:", ...args] : ["Assertion failed"]);
  }
  clear() {}
  count(label = "default") {
    const count = (this.#counts.get(String(label)) ?? 0) + 1;
    this.#counts.set(String(label), count);
    this.#write(this.#stdout, [`${label}: ${count}`]);
  }
  countReset(label = "default") {
    this.#counts.delete(String(label));
  }
  group(...args) {
    if (args.length) this.#write(this.#stdout, args);
    this.#indent += "  ";
  }
  groupCollapsed(...args) {
    this.group(...args);
  }
  groupEnd() {
    this.#indent = this.#indent.slice(0, -2);
  }
  table(data, ...rest) {
    this.#write(this.#stdout, [data, ...rest]);
  }
  time(label = "default") {
    this.#timers.set(String(label), performance.now());
  }
  timeLog(label = "default", ...args) {
    const started = this.#timers.get(String(label));
    if (started === undefined) return this.#write(this.#stderr, [`Warning: No such label '${label}' for console.timeLog()`]);
    this.#write(this.#stdout, [`${label}: ${(performance.now() - started).toFixed(3)}ms`, ...args]);
  }
  timeEnd(label = "default") {
    this.timeLog(label);
    this.#timers.delete(String(label));
  }
}
