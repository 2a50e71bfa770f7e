// console: formats its arguments the way Node's util.format does (printf-style directives,
// then inspected values, src/js/25_inspect.js) and hands each line to the host through ops.log.

const parts = internals.inspectParts;
const { inspect, formatPrimitive, hasBuiltInToString } = parts;

/** util.format: %s %d %i %f %j %o %O %c %% directives in a leading string, then the rest inspected. */
function format(args, options = undefined) {
  if (args.length === 0) return "";
  // util.format with util.inspect.defaultOptions.numericSeparator: %d, %i and %s of numbers too.
  if (options?.numericSeparator === true && !parts.numericSeparator) {
    parts.numericSeparator = true;
    try {
      return format(args, options);
    } finally {
      parts.numericSeparator = false;
    }
  }
  const first = args[0];
  let rest = 1;
  let out = "";
  // util.formatWithOptions({ colors: true }): the values inspected are colored (not %s's, %d's, …).
  const withColors = options?.colors === true;
  if (typeof first === "string") {
    out = first.replace(/%[sdifjoOc%]/g, (directive) => {
      if (directive === "%%") return "%";
      if (rest >= args.length) return directive;
      const arg = args[rest++];
      switch (directive) {
        case "%s":
          // Node's rule: an object whose toString is a built-in one is inspected one level deep,
          // any other value is String() of it (numbers and bigints as inspect shows them).
          if (typeof arg === "number" || typeof arg === "bigint") return formatPrimitive(arg, false);
          if (typeof arg !== "object" || arg === null || !hasBuiltInToString(arg)) return typeof arg === "symbol" ? arg.toString() : String(arg);
          return inspect(arg, { depth: 0 });
        case "%d":
          return typeof arg === "bigint" ? formatPrimitive(arg, false) : typeof arg === "symbol" ? "NaN" : formatPrimitive(Number(arg), false);
        case "%i":
          return typeof arg === "bigint" ? formatPrimitive(arg, false) : typeof arg === "symbol" ? "NaN" : formatPrimitive(parseInt(arg, 10), false);
        case "%f":
          return typeof arg === "symbol" ? "NaN" : formatPrimitive(parseFloat(arg), false);
        case "%j":
          try {
            return JSON.stringify(arg);
          } catch (error) {
            // Only a cycle is shown as such (V8's "Converting circular structure" TypeError);
            // anything else a toJSON() throws goes on, as in Node.
            if (error instanceof TypeError && /circular structure/i.test(error.message)) return "[Circular]";
            throw error;
          }
        case "%o":
          // Node's %o: with non-enumerable properties (an array's [length]), four levels deep.
          return inspect(arg, { showHidden: true, depth: 4, quoteStrings: true, colors: withColors });
        case "%O":
          return inspect(arg, { quoteStrings: true, colors: withColors }); // a string quoted, as inspect shows one
        case "%c":
          return "";
      }
      return directive;
    });
  } else {
    out = inspect(first, { colors: withColors });
  }
  for (; rest < args.length; rest++) {
    const arg = args[rest];
    out += " " + (typeof arg === "string" ? arg : inspect(arg, { colors: withColors }));
  }
  return out;
}

let groupIndent = "";
const counts = new Map();
const timers = new Map();

function emit(level, args) {
  let text = format(args);
  if (groupIndent) text = groupIndent + text.replace(/\n/g, `\n${groupIndent}`);
  ops.log(level, text);
}

// A Web IDL namespace: its [[Prototype]] is an empty object that inherits from Object.prototype.
const console = Object.assign(Object.create({}), {
  log: (...args) => emit("log", args),
  info: (...args) => emit("info", args),
  warn: (...args) => emit("warn", args),
  error: (...args) => emit("error", args),
  debug: (...args) => emit("debug", args),
  trace: (...args) => {
    const stack = new Error().stack.split("\n").slice(2).join("\n");
    emit("log", [`Trace${args.length ? ": " + format(args) : ""}\n${stack}`]);
  },
  dir: (value) => emit("log", [inspect(value)]),
  dirxml: (...args) => emit("log", args),
  table: (data) => emit("log", [inspect(data)]),
  assert: (condition, ...args) => {
    if (!condition) emit("error", args.length ? ["Assertion failed:", ...args] : ["Assertion failed"]);
  },
  count: (label = "default") => {
    label = String(label);
    const n = (counts.get(label) ?? 0) + 1;
    counts.set(label, n);
    emit("info", [`${label}: ${n}`]);
  },
  countReset: (label = "default") => {
    counts.delete(String(label));
  },
  group: (...args) => {
    if (args.length) emit("log", args);
    groupIndent += "  ";
  },
  groupCollapsed: (...args) => console.group(...args),
  groupEnd: () => {
    groupIndent = groupIndent.slice(2);
  },
  time: (label = "default") => {
    timers.set(String(label), Date.now());
  },
  timeLog: (label = "default", ...args) => {
    label = String(label);
    if (timers.has(label)) emit("info", [`${label}: ${Date.now() - timers.get(label)}ms`, ...args]);
  },
  timeEnd: (label = "default") => {
    label = String(label);
    if (!timers.has(label)) return;
    emit("info", [`${label}: ${Date.now() - timers.get(label)}ms`]);
    timers.delete(label);
  },
});
// What workerd's console also has and a worker's log has no use for: they do nothing here.
for (const name of ["clear", "profile", "profileEnd", "timeStamp"]) console[name] = { [name]: () => {} }[name];
// console.context(name): a console-like object with the same methods (lines go to the same log).
console.context = () => ({ ...console });
Object.defineProperty(console, Symbol.toStringTag, { value: "console", configurable: true });

// V8's own console tells an attached debugger (DevTools' console panel). In the contexts of a
// worker with an inspector (only there: it is a call more per line), each of ours calls it too.
const v8Console = globalThis.console;
internals.attachV8Console = () => {
  if (!v8Console || v8Console === console) return;
  for (const name of Object.keys(console)) {
    const ours = console[name];
    const theirs = v8Console[name];
    if (typeof theirs !== "function" || name === "groupCollapsed") continue;
    const both = (...args) => {
      Reflect.apply(theirs, v8Console, args);
      return ours(...args);
    };
    Object.defineProperty(both, "name", { value: name });
    console[name] = both;
  }
};

internals.format = format;
internals.defineGlobal("console", console);
