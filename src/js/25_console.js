// console: formats its arguments the way Node's util.format does (printf-style directives,
// then inspected values) and hands each line to the host through ops.log.

const MAX_DEPTH = 2;
const MAX_ITEMS = 100;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const TypedArray = Object.getPrototypeOf(Uint8Array);

function quote(text) {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'").replace(/\n/g, "\\n")}'`;
}

function formatKey(key) {
  if (typeof key === "symbol") return `[${key.toString()}]`;
  return IDENTIFIER.test(key) ? key : quote(key);
}

function constructorName(value) {
  try {
    const proto = Object.getPrototypeOf(value);
    if (proto === null) return null;
    const ctor = proto.constructor;
    return typeof ctor === "function" && ctor.name ? ctor.name : "";
  } catch {
    return "";
  }
}

function formatPrimitive(value, nested) {
  switch (typeof value) {
    case "string":
      return nested ? quote(value) : value;
    case "number":
      return Object.is(value, -0) ? "-0" : String(value);
    case "bigint":
      return `${value}n`;
    case "symbol":
      return value.toString();
    case "undefined":
      return "undefined";
    default:
      return String(value);
  }
}

function formatFunction(fn) {
  const source = Function.prototype.toString.call(fn);
  if (source.startsWith("class")) return `[class ${fn.name || "(anonymous)"}]`;
  const kind = fn.constructor && fn.constructor.name !== "Function" ? fn.constructor.name : "Function";
  return fn.name ? `[${kind}: ${fn.name}]` : `[${kind} (anonymous)]`;
}

function wrap(prefix, items, open, close) {
  if (items.length === 0) return `${prefix}${open}${close}`;
  const oneLine = `${prefix}${open} ${items.join(", ")} ${close}`;
  if (oneLine.length <= 72 && !items.some((i) => i.includes("\n"))) return oneLine;
  return `${prefix}${open}\n  ${items.map((i) => i.replace(/\n/g, "\n  ")).join(",\n  ")}\n${close}`;
}

function ownEntries(value, seen, depth, skipIndices) {
  const items = [];
  for (const key of Reflect.ownKeys(value)) {
    if (skipIndices && typeof key === "string" && /^(0|[1-9]\d*)$/.test(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (!descriptor || !descriptor.enumerable) continue;
    const shown = "value" in descriptor ? inspectValue(descriptor.value, seen, depth + 1) : descriptor.get && descriptor.set ? "[Getter/Setter]" : descriptor.get ? "[Getter]" : "[Setter]";
    items.push(`${formatKey(key)}: ${shown}`);
  }
  return items;
}

function inspectValue(value, seen, depth) {
  if (value === null) return "null";
  if (typeof value !== "object" && typeof value !== "function") return formatPrimitive(value, depth > 0);
  if (typeof value === "function") {
    const base = formatFunction(value);
    const extra = depth <= MAX_DEPTH ? ownEntries(value, seen, depth, false) : [];
    return extra.length ? wrap(`${base} `, extra, "{", "}") : base;
  }
  if (seen.includes(value)) return "[Circular *1]";
  if (value instanceof Error) {
    const stack = typeof value.stack === "string" ? value.stack : `${value.name}: ${value.message}`;
    return depth > 0 ? `[${stack}]`.replace(/^\[([^\n]*)\n[\s\S]*\]$/, "[$1]") : stack;
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
  if (value instanceof RegExp) return RegExp.prototype.toString.call(value);
  if (value instanceof Promise) return "Promise { <unknown> }";
  if (value instanceof WeakMap || value instanceof WeakSet) return `${constructorName(value)} { <items unknown> }`;
  if (value instanceof Boolean || value instanceof Number || value instanceof String) {
    return `[${constructorName(value)}: ${inspectValue(value.valueOf(), seen, 1)}]`;
  }

  const name = constructorName(value);
  const isArray = Array.isArray(value);
  if (depth > MAX_DEPTH) return isArray ? "[Array]" : `[${name || "Object"}]`;
  seen.push(value);
  try {
    if (isArray) {
      const items = value.slice(0, MAX_ITEMS).map((item) => inspectValue(item, seen, depth + 1));
      if (value.length > MAX_ITEMS) items.push(`... ${value.length - MAX_ITEMS} more items`);
      items.push(...ownEntries(value, seen, depth, true));
      return wrap(name === "Array" ? "" : `${name}(${value.length}) `, items, "[", "]");
    }
    if (value instanceof TypedArray) {
      const items = Array.from(value.subarray(0, MAX_ITEMS), (n) => formatPrimitive(n, true));
      if (value.length > MAX_ITEMS) items.push(`... ${value.length - MAX_ITEMS} more items`);
      return wrap(`${name}(${value.length}) `, items, "[", "]");
    }
    if (value instanceof ArrayBuffer) {
      const bytes = Array.from(new Uint8Array(value, 0, Math.min(value.byteLength, 50)), (b) => b.toString(16).padStart(2, "0"));
      return `ArrayBuffer { [Uint8Contents]: <${bytes.join(" ")}${value.byteLength > 50 ? " ..." : ""}>, byteLength: ${value.byteLength} }`;
    }
    if (value instanceof Map) {
      const items = [...value].slice(0, MAX_ITEMS).map(([k, v]) => `${inspectValue(k, seen, depth + 1)} => ${inspectValue(v, seen, depth + 1)}`);
      return wrap(`Map(${value.size}) `, items, "{", "}");
    }
    if (value instanceof Set) {
      const items = [...value].slice(0, MAX_ITEMS).map((v) => inspectValue(v, seen, depth + 1));
      return wrap(`Set(${value.size}) `, items, "{", "}");
    }
    const items = ownEntries(value, seen, depth, false);
    const tag = value[Symbol.toStringTag];
    let prefix = name === "Object" ? "" : name === null ? "[Object: null prototype] " : `${name || "Object"} `;
    if (typeof tag === "string" && tag !== name && tag !== "") prefix = `${prefix || "Object "}[${tag}] `;
    return wrap(prefix, items, "{", "}");
  } finally {
    seen.pop();
  }
}

/** Node-style inspection of any value, for log lines. */
function inspect(value) {
  try {
    return inspectValue(value, [], 0);
  } catch (error) {
    return `<uninspectable: ${error && error.message}>`;
  }
}

/** util.format: %s %d %i %f %j %o %O %c %% directives in a leading string, then the rest inspected. */
function format(args) {
  if (args.length === 0) return "";
  const first = args[0];
  let rest = 1;
  let out = "";
  if (typeof first === "string") {
    out = first.replace(/%[sdifjoOc%]/g, (directive) => {
      if (directive === "%%") return "%";
      if (rest >= args.length) return directive;
      const arg = args[rest++];
      switch (directive) {
        case "%s":
          return typeof arg === "string" ? arg : typeof arg === "bigint" ? `${arg}n` : typeof arg === "object" && arg !== null ? inspectValue(arg, [], 1) : formatPrimitive(arg, false);
        case "%d":
          return typeof arg === "bigint" ? `${arg}n` : typeof arg === "symbol" ? "NaN" : formatPrimitive(Number(arg), false);
        case "%i":
          return typeof arg === "bigint" ? `${arg}n` : typeof arg === "symbol" ? "NaN" : String(parseInt(arg, 10));
        case "%f":
          return typeof arg === "symbol" ? "NaN" : String(parseFloat(arg));
        case "%j":
          try {
            return JSON.stringify(arg);
          } catch {
            return "[Circular]";
          }
        case "%o":
        case "%O":
          return inspect(arg);
        case "%c":
          return "";
      }
      return directive;
    });
  } else {
    out = inspect(first);
  }
  for (; rest < args.length; rest++) {
    const arg = args[rest];
    out += " " + (typeof arg === "string" ? arg : inspect(arg));
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

const console = {
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
    const n = (counts.get(label) ?? 0) + 1;
    counts.set(label, n);
    emit("info", [`${label}: ${n}`]);
  },
  countReset: (label = "default") => counts.delete(label),
  group: (...args) => {
    if (args.length) emit("log", args);
    groupIndent += "  ";
  },
  groupCollapsed: (...args) => console.group(...args),
  groupEnd: () => {
    groupIndent = groupIndent.slice(2);
  },
  time: (label = "default") => timers.set(label, Date.now()),
  timeLog: (label = "default", ...args) => {
    if (timers.has(label)) emit("info", [`${label}: ${Date.now() - timers.get(label)}ms`, ...args]);
  },
  timeEnd: (label = "default") => {
    if (!timers.has(label)) return;
    emit("info", [`${label}: ${Date.now() - timers.get(label)}ms`]);
    timers.delete(label);
  },
};
Object.defineProperty(console, Symbol.toStringTag, { value: "console", configurable: true });

internals.inspect = inspect;
internals.format = format;
internals.defineGlobal("console", console);
