// A node:console `Console` for the Vitest runner: Vitest captures each test's console output by
// making a Console over its own writable streams. Formatting is node:util's; what has no stream
// of its own (timers, counters, groups, tables) goes to the worker's console.
import { formatWithOptions } from "node:util";

const base = globalThis.console;

export class Console {
  #stdout;
  #stderr;
  #inspectOptions;

  constructor(options, stderr, ignoreErrors) {
    if (options && typeof options.write === "function") options = { stdout: options, stderr, ignoreErrors };
    this.#stdout = options?.stdout;
    this.#stderr = options?.stderr ?? this.#stdout;
    const colors = typeof options?.colorMode === "boolean" ? options.colorMode : false;
    this.#inspectOptions = options?.inspectOptions ?? { colors };
    for (const name of ["log", "info", "debug", "warn", "error", "trace", "dir", "assert", "clear", "count", "countReset", "group", "groupCollapsed", "groupEnd", "table", "time", "timeEnd", "timeLog", "dirxml"]) {
      this[name] = this[name].bind(this);
    }
  }

  #write(stream, args) {
    if (stream === undefined) return base.log(...args);
    stream.write(`${formatWithOptions(this.#inspectOptions, ...args)}\n`);
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
    if (!condition) this.#write(this.#stderr, ["Assertion failed", ...args]);
  }
  clear() {}
  count(label) {
    base.count(label);
  }
  countReset(label) {
    base.countReset(label);
  }
  group(...args) {
    base.group(...args);
  }
  groupCollapsed(...args) {
    base.groupCollapsed(...args);
  }
  groupEnd() {
    base.groupEnd();
  }
  table(...args) {
    base.table(...args);
  }
  time(label) {
    base.time(label);
  }
  timeEnd(label) {
    base.timeEnd(label);
  }
  timeLog(...args) {
    base.timeLog(...args);
  }
}
