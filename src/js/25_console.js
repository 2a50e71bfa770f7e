// console: formats its arguments the way Node's util.format does (printf-style directives,
// then inspected values) and hands each line to the host through ops.log.

const MAX_DEPTH = 2;
const CUSTOM_INSPECT = Symbol.for("nodejs.util.inspect.custom");
// The depth limit of the inspection under way (util.inspect's `depth` option; 2 by default).
let maxDepth = MAX_DEPTH;
// Whether a string at the top is quoted (util.inspect) or not (console.log, util.format).
let quoteTopLevel = false;
// The objects a cycle leads back to in the inspection under way, with their `*n` numbers.
let circular = new Map();
// Whether every entry goes on its own line (util.inspect's compact: false, for assert's diffs).
let expanded = false;
// Whether any object that fits goes on one line, however deep (compact: true, assert's messages).
let oneLine = false;
// Whether non-enumerable own properties are shown too, as `[key]` (Node's showHidden): workerd
// inspects the values of its API objects' attributes that way (`usages: [ 'sign', [length]: 1 ]`).
let showHidden = false;
/** util.inspect's showProxy: a proxy shown as its target and handler. */
let showProxy = false;
/** util.inspect's getters: true, "get" or "set" reads accessors' values (see accessorText()). */
let getters = false;
/** util.inspect's colors: each kind of value in its ANSI style, as Node's inspect.styles. */
let colors = false;
const STYLES = { special: [36, 39], number: [33, 39], bigint: [33, 39], boolean: [33, 39], undefined: [90, 39], null: [1, 22], string: [32, 39], symbol: [32, 39], date: [35, 39], regexp: [31, 39], module: [4, 24] };
/** `text` in `style` when colors are on. */
function stylize(text, style) {
  if (!colors) return text;
  const [open, close] = STYLES[style];
  return `\x1b[${open}m${text}\x1b[${close}m`;
}
/** The length of `text` as shown (without color codes). */
const shownLength = (text) => (colors ? text.replace(/\x1b\[\d+m/g, "").length : text.length);
const MAX_ITEMS = 100;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const TypedArray = Object.getPrototypeOf(Uint8Array);

// Node's choice of quotes: single, else double when the text has single quotes, else backticks.
function quote(text) {
  let mark = "'";
  if (text.includes("'")) {
    if (!text.includes('"')) mark = '"';
    else if (!text.includes("`") && !text.includes("${")) mark = "`";
  }
  const escaped = text.replace(mark === "'" ? /['\\\x00-\x1f\x7f-\x9f]/g : /[\\\x00-\x1f\x7f-\x9f]/g, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
  return `${mark}${escaped}${mark}`;
}
const ESCAPES = { "'": "\\'", "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v" };

function formatKey(key) {
  // Node 24+ shows symbol keys bare (`Symbol(k): 2`); older Nodes bracketed them.
  if (typeof key === "symbol") return stylize(key.toString(), "symbol");
  return IDENTIFIER.test(key) ? key : stylize(quote(key), "string");
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

// util.inspect's numericSeparator: integer digits in groups of three joined by "_" (and the
// fraction's from its start), for numbers and bigints.
let numericSeparator = false;
const groupDigits = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, "_");
function separated(value) {
  if (typeof value === "bigint") return `${groupDigits(String(value))}n`;
  const text = String(value);
  if (!Number.isFinite(value) || text.includes("e")) return text;
  const integer = Math.trunc(value);
  const whole = groupDigits(String(integer)); // -0.5 is "0" here, as in Node
  if (integer === value) return whole;
  const fraction = text.slice(text.indexOf(".") + 1);
  return `${whole}.${fraction.replace(/(\d{3})(?=\d)/g, "$1_")}`;
}

function formatPrimitive(value, nested) {
  switch (typeof value) {
    case "string":
      return nested ? quote(value) : value;
    case "number":
      if (numericSeparator) return separated(value);
      return Object.is(value, -0) ? "-0" : String(value);
    case "bigint":
      if (numericSeparator) return separated(value);
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
  // As Node's: the kind from what the function is (not its prototype), then its constructor's
  // name when that differs, and a toStringTag that is neither (unless it is an own enumerable).
  let kind = "Function";
  if (ops.valueIs("GeneratorFunction", fn)) kind = `Generator${kind}`;
  if (ops.valueIs("AsyncFunction", fn)) kind = `Async${kind}`;
  const constructor = constructorName(fn);
  let base = `[${kind}${constructor === null ? " (null prototype)" : ""}${fn.name === "" || fn.name === undefined ? " (anonymous)" : `: ${String(fn.name)}`}]`;
  if (constructor !== null && constructor !== "" && constructor !== kind) base += ` ${constructor}`;
  const tag = fn[Symbol.toStringTag];
  if (typeof tag === "string" && tag !== "" && tag !== constructor && !Object.prototype.propertyIsEnumerable.call(fn, Symbol.toStringTag)) base += ` [${tag}]`;
  return base;
}

// Node's layout rules (breakLength 80, compact 3): entries go on one line when they fit and the
// object holds fewer than three levels of non-empty objects below it; arrays of more than six
// entries are laid out in aligned columns instead.
const BREAK_LENGTH = 80;
/** The line length of the inspection under way: util.inspect's `breakLength` (Infinity allowed). */
let breakLength = BREAK_LENGTH;
// The depth of the last non-empty object whose entries were formatted (Node's currentDepth).
let currentDepth = 0;

function fitsOneLine(output, start) {
  let total = output.length + start;
  if (total + output.length > breakLength) return false;
  for (const entry of output) {
    total += shownLength(entry);
    if (total > breakLength) return false;
  }
  return true;
}

/** Arrays of more than six entries: rows of aligned columns, about as wide as tall. */
function groupInColumns(output, depth, values, extra) {
  const count = output.length - extra;
  const lengths = output.slice(0, count).map(shownLength);
  const total = lengths.reduce((sum, length) => sum + length + 2, 0);
  const longest = Math.max(...lengths);
  const cell = longest + 2;
  const indentation = 2 * depth;
  if (cell * 3 + indentation >= breakLength || (total / cell <= 5 && longest > 6)) return output;
  const bias = Math.sqrt(cell - total / output.length);
  const biased = Math.max(cell - 3 - bias, 1);
  const columns = Math.min(Math.round(Math.sqrt(2.5 * biased * count) / biased), Math.floor((breakLength - indentation) / cell), 12, 15);
  if (columns <= 1) return output;
  const widths = [];
  for (let column = 0; column < columns; column++) {
    let width = 0;
    for (let i = column; i < output.length; i += columns) if (lengths[i] > width) width = lengths[i];
    widths.push(width + 2);
  }
  const numeric = values !== undefined && Array.from({ length: count }, (_, i) => values[i]).every((v) => typeof v === "number" || typeof v === "bigint");
  const rows = [];
  for (let i = 0; i < count; i += columns) {
    const last = Math.min(i + columns, count) - 1;
    let row = "";
    // Padded by the length shown (color codes take no room).
    const pad = (j, width) => " ".repeat(Math.max(0, width - lengths[j] - (j < last ? 2 : 0)));
    for (let j = i; j < last; j++) row += numeric ? `${pad(j, widths[j - i])}${output[j]}, ` : `${output[j]}, ${pad(j, widths[j - i])}`;
    row += numeric ? pad(last, widths[last - i] - 2) + output[last] : output[last];
    rows.push(row);
  }
  if (extra) rows.push(output[count]);
  return rows;
}

function wrap(prefix, items, open, close, depth = 0, arrayValues, extra = 0) {
  if (items.length === 0) return `${prefix}${open}${close}`;
  if (expanded) return `${prefix}${open}\n  ${items.map((i) => i.replace(/\n/g, "\n  ")).join(",\n  ")}\n${close}`;
  let output = items;
  if (arrayValues !== undefined && items.length > 6 && !oneLine) output = groupInColumns(items, depth, arrayValues, extra);
  // compact: true (assert's messages) puts any object that fits on one line, however deep.
  // (A prefix of several lines, an error's stack, puts the entries on lines of their own, as in Node.)
  if ((oneLine || currentDepth - depth < 3) && output.length === items.length && !prefix.includes("\n")) {
    const start = output.length + 2 * depth + shownLength(prefix) + open.length + 10;
    if (fitsOneLine(output, start)) {
      const joined = output.join(", ");
      if (!joined.includes("\n")) return `${prefix}${open} ${joined} ${close}`;
    }
  }
  // compact: true that does not fit: Node's `{ a,\n  b }`, its lines indented where they were made.
  if (oneLine) return `${prefix}${open} ${output.join(`,\n${" ".repeat(3 * depth + 2)}`)} ${close}`;
  return `${prefix}${open}\n  ${output.map((i) => i.replace(/\n/g, "\n  ")).join(",\n  ")}\n${close}`;
}

function ownEntries(value, seen, depth, skipIndices) {
  const items = [];
  for (const key of Reflect.ownKeys(value)) {
    if (skipIndices && typeof key === "string" && /^(0|[1-9]\d*)$/.test(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (!descriptor || (!descriptor.enumerable && !showHidden)) continue;
    items.push(entryText(key, descriptor, value, seen, depth));
  }
  return items;
}

/** `key: value` for one property (`[key]` when not enumerable); an accessor as Node shows it. */
function entryText(key, descriptor, receiver, seen, depth) {
  const shown = "value" in descriptor ? inspectValue(descriptor.value, seen, depth + 1) : accessorText(descriptor, receiver, seen, depth);
  const name = descriptor.enumerable ? formatKey(key) : `[${typeof key === "symbol" ? key.toString() : key}]`;
  // compact: true puts a value wider than the line under its key, as Node does.
  if (oneLine && shownLength(shown.replace(/\n/g, "")) > breakLength) return `${name}:\n${" ".repeat(3 * (depth + 1))}${shown}`;
  return `${name}: ${shown}`;
}

/** An accessor: `[Getter]`, or with util.inspect's `getters` its value read from `receiver` (`[Getter: 1]`, `[Getter] { … }`). */
function accessorText(descriptor, receiver, seen, depth) {
  const label = descriptor.get && descriptor.set ? "Getter/Setter" : descriptor.get ? "Getter" : "Setter";
  const wanted = getters === true || (getters === "get" && !descriptor.set) || (getters === "set" && descriptor.set);
  if (!descriptor.get || !wanted) return stylize(`[${label}]`, "special");
  try {
    const value = descriptor.get.call(receiver);
    if (value === null) return `[${label}: null]`;
    if (typeof value === "object" || typeof value === "function") return `[${label}] ${inspectValue(value, seen, depth + 1)}`;
    return `[${label}: ${formatPrimitive(value, true)}]`;
  } catch (error) {
    return `[${label}: <Inspection threw (${error?.message})>]`;
  }
}

/**
 * With showHidden, Node also shows the properties an instance gets from its classes' prototypes
 * (up to the first built-in one): accessors and values, not methods, as `[key]: …`.
 */
function prototypeEntries(value, seen, depth) {
  const items = [];
  const known = new Set(Reflect.ownKeys(value));
  builtInNames ??= new Set(Object.getOwnPropertyNames(globalThis).filter((name) => /^[A-Z][a-zA-Z0-9]+$/.test(name)));
  for (let proto = Object.getPrototypeOf(value); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const constructor = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
    if (typeof constructor === "function" && builtInNames.has(constructor.name) && globalThis[constructor.name] === constructor) break;
    for (const key of Reflect.ownKeys(proto)) {
      if (key === "constructor" || known.has(key)) continue;
      known.add(key);
      const descriptor = Object.getOwnPropertyDescriptor(proto, key);
      if (typeof descriptor.value === "function") continue;
      items.push(entryText(key, { ...descriptor, enumerable: false }, value, seen, depth));
    }
  }
  return items;
}

// ---- The runtime's API objects -----------------------------------------------------------------
// workerd shows its API objects by their attributes, in its own order, rather than by own
// properties (they have none): `Request { method: 'POST', … }`, internal state in brackets
// (`ReadableStream { locked: false, [state]: 'readable', … }`) and map-likes with their entries
// (`Headers(1) { 'a' => '1', [immutable]: false }`). src/js/93_inspect.js gives each class's shape.

/** API prototypes → { keys, internal?(object) → [[label, value]], entries?(object) → [[key, value]] }. */
const apiShapes = new Map();
/** Registers how instances of `Class` (and of subclasses without their own shape) are shown. */
internals.inspectAs = (Class, shape) => apiShapes.set(Class.prototype, shape);

function apiShape(value) {
  for (let proto = Object.getPrototypeOf(value); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const shape = apiShapes.get(proto);
    if (shape !== undefined) return shape;
  }
  return undefined;
}

/**
 * An API object as workerd's console shows it: its attributes (those that throw left out) and
 * internal state (non-enumerable, so in brackets) are copied onto a plain object, which is
 * inspected on its own with showHidden (so the name is not counted in the line's width, and
 * the levels below start afresh), and the name is put in front.
 */
function formatApiObject(value, shape, seen, depth) {
  const name = constructorName(value) || "Object";
  if (depth > maxDepth) return `[${name}]`;
  const record = {};
  for (const key of shape.keys) {
    try {
      if (key in value) record[key] = value[key];
    } catch {}
  }
  for (const [label, item] of shape.internal?.(value) ?? []) Object.defineProperty(record, label, { value: item, enumerable: false });
  const entries = shape.entries?.(value);
  const outer = [maxDepth, currentDepth, showHidden];
  maxDepth -= depth;
  currentDepth = 0;
  showHidden = true;
  seen.push(value);
  try {
    if (entries === undefined) return `${name} ${inspectValue(record, seen, 0)}`;
    // A map-like: `Headers(1) { 'a' => '1', [immutable]: false }`, laid out as workerd lays out
    // `Object(1) { … }` before it puts the class's name in.
    const items = entries.map(([key, item]) => `${inspectValue(key, seen, 1)} => ${inspectValue(item, seen, 1)}`);
    items.push(...ownEntries(record, seen, 0, false));
    return wrap(`Object(${entries.length}) `, items, "{", "}", 0).replace("Object", name);
  } finally {
    seen.pop();
    [maxDepth, currentDepth, showHidden] = outer;
  }
}

/** `Promise { 1 }`, `Promise { <pending> }`, `Promise { <rejected> Error: … }`, as in Node. */
function formatPromise(value, seen, depth) {
  const [state, result] = ops.promiseState(value);
  if (state === "pending") return "Promise { <pending> }";
  if (depth > maxDepth) return "[Promise]";
  seen.push(value);
  try {
    const shown = inspectValue(result, seen, depth + 1);
    return wrap("Promise ", [state === "rejected" ? `<rejected> ${shown}` : shown], "{", "}", depth);
  } finally {
    seen.pop();
  }
}

function inspectValue(value, seen, depth) {
  if (value === null) return stylize("null", "null");
  if (typeof value !== "object" && typeof value !== "function") {
    const quoted = depth > 0 || quoteTopLevel;
    const shown = formatPrimitive(value, quoted);
    return typeof value === "string" && !quoted ? shown : stylize(shown, typeof value);
  }
  const proxy = ops.proxyDetails(value);
  if (proxy !== undefined) return formatProxy(value, proxy, seen, depth);
  if (seen.includes(value)) {
    // The object a cycle leads back to gets `<ref *n>` in front of it (see below).
    if (!circular.has(value)) circular.set(value, circular.size + 1);
    return stylize(`[Circular *${circular.get(value)}]`, "special");
  }
  if (typeof value === "function") {
    // A function's own properties, shown as an object's (a cycle through them as one too).
    const base = formatFunction(value);
    if (depth > maxDepth) return stylize(base, "special");
    seen.push(value);
    try {
      const extra = ownEntries(value, seen, depth, false);
      const shown = extra.length ? wrap(`${base} `, extra, "{", "}", depth) : stylize(base, "special");
      return circular.has(value) ? `${stylize(`<ref *${circular.get(value)}>`, "special")} ${shown}` : shown;
    } finally {
      seen.pop();
    }
  }
  const custom = value[CUSTOM_INSPECT];
  if (typeof custom === "function" && custom !== inspect) {
    const options = { depth: maxDepth - depth, customInspect: true, colors, stylize: (text, style) => (STYLES[style] ? stylize(text, style) : text) };
    const shown = custom.call(value, maxDepth - depth, options, inspect);
    if (shown !== value) return typeof shown === "string" ? shown : inspectValue(shown, seen, depth);
  }
  const shape = apiShape(value);
  if (shape !== undefined) return formatApiObject(value, shape, seen, depth);
  if (value instanceof Error) {
    const stack = typeof value.stack === "string" ? value.stack : `${value.name}: ${value.message}`;
    // Nested, as Node shows it: the whole stack (in brackets when it has no frames), its lines
    // indented as compact: true indents them (the other layouts indent them in wrap()).
    // (At the top, an error with no stack at all, as Node brackets it: `[BadCustomError: foo]`.)
    let shown = typeof value.stack === "string" ? stack : `[${stack}]`;
    if (depth > 0) shown = !stack.includes("\n    at") ? `[${stack}]` : oneLine ? stack.replace(/\n/g, `\n${" ".repeat(3 * depth)}`) : stack;
    // Its own enumerable properties (all of them with showHidden) after it, as Node shows them.
    seen.push(value);
    let entries;
    try {
      entries = ownEntries(value, seen, depth, false);
    } finally {
      seen.pop();
    }
    if (entries.length === 0) return shown;
    if (oneLine && shown.includes("\n")) {
      const pad = " ".repeat(3 * depth + 2);
      return `{ ${shown}\n${pad}${entries.join(`,\n${pad}`)} }`;
    }
    return wrap(`${shown} `, entries, "{", "}", depth);
  }
  if (value instanceof Date) return stylize(Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString(), "date");
  if (value instanceof RegExp) return stylize(RegExp.prototype.toString.call(value), "regexp");
  if (value instanceof Promise) return formatPromise(value, seen, depth);
  if (value instanceof WeakMap || value instanceof WeakSet) return `${constructorName(value)} { <items unknown> }`;
  if (value instanceof Boolean || value instanceof Number || value instanceof String) {
    return `[${constructorName(value)}: ${inspectValue(value.valueOf(), seen, 1)}]`;
  }

  const name = constructorName(value);
  const isArray = Array.isArray(value);
  // (With showHidden an array always has one: its length.)
  const hasEntries = isArray || value instanceof TypedArray ? value.length > 0 || showHidden : value instanceof Map || value instanceof Set ? value.size > 0 : Reflect.ownKeys(value).some((key) => showHidden || Object.prototype.propertyIsEnumerable.call(value, key));
  // Past the depth limit an object is only named; an empty one is still shown whole, as in Node.
  if (depth > maxDepth && hasEntries) return stylize(isArray ? "[Array]" : `[${name || "Object"}]`, "special");
  seen.push(value);
  // Node counts only objects with entries toward the levels below (see wrap()).
  if (hasEntries) currentDepth = depth;
  try {
    const shown = formatEntries(value, seen, depth, name, isArray);
    return circular.has(value) ? `${stylize(`<ref *${circular.get(value)}>`, "special")} ${shown}` : shown;
  } finally {
    seen.pop();
  }
}

/** The entries of an object, array, typed array, buffer, Map or Set, laid out as Node does. */
function formatEntries(value, seen, depth, name, isArray) {
  if (isArray) {
    // Holes as Node shows them: `<n empty items>` for each run of them.
    const items = [];
    let holes = 0;
    let sparse = false;
    const hole = () => {
      sparse = true;
      items.push(`<${holes} empty item${holes > 1 ? "s" : ""}>`);
    };
    for (let i = 0; i < Math.min(value.length, MAX_ITEMS); i++) {
      if (!Object.hasOwn(value, i)) {
        holes++;
        continue;
      }
      if (holes > 0) hole();
      holes = 0;
      items.push(inspectValue(value[i], seen, depth + 1));
    }
    if (holes > 0) hole();
    const more = value.length > MAX_ITEMS ? 1 : 0;
    if (more) items.push(`... ${value.length - MAX_ITEMS} more item${value.length - MAX_ITEMS > 1 ? "s" : ""}`);
    const extra = ownEntries(value, seen, depth, true);
    return wrap(name === "Array" ? "" : `${name}(${value.length}) `, [...items, ...extra], "[", "]", depth, extra.length || sparse ? undefined : value, more);
  }
  if (value instanceof TypedArray) {
    const items = Array.from(value.subarray(0, MAX_ITEMS), (n) => formatPrimitive(n, true));
    const more = value.length > MAX_ITEMS ? 1 : 0;
    if (more) items.push(`... ${value.length - MAX_ITEMS} more item${value.length - MAX_ITEMS > 1 ? "s" : ""}`);
    if (showHidden) {
      // Node's showHidden extras for a typed array (its buffer only named, as Node shows it there).
      items.push(`[BYTES_PER_ELEMENT]: ${value.BYTES_PER_ELEMENT}`, `[length]: ${value.length}`, `[byteLength]: ${value.byteLength}`, `[byteOffset]: ${value.byteOffset}`, `[buffer]: ArrayBuffer { byteLength: ${value.buffer.byteLength} }`);
      return wrap(`${name}(${value.length}) `, items, "[", "]", depth);
    }
    return wrap(`${name}(${value.length}) `, items, "[", "]", depth, value, more);
  }
  if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer === "function" && value instanceof SharedArrayBuffer)) {
    const bytes = Array.from(new Uint8Array(value, 0, Math.min(value.byteLength, 50)), (b) => b.toString(16).padStart(2, "0"));
    const kind = value instanceof ArrayBuffer ? "ArrayBuffer" : "SharedArrayBuffer";
    return `${kind} { ${stylize("[Uint8Contents]", "special")}: <${bytes.join(" ")}${value.byteLength > 50 ? " ..." : ""}>, byteLength: ${stylize(String(value.byteLength), "number")} }`;
  }
  if (value instanceof Map) {
    const items = [...value].slice(0, MAX_ITEMS).map(([k, v]) => `${inspectValue(k, seen, depth + 1)} => ${inspectValue(v, seen, depth + 1)}`);
    return wrap(`Map(${value.size}) `, items, "{", "}", depth);
  }
  if (value instanceof Set) {
    const items = [...value].slice(0, MAX_ITEMS).map((v) => inspectValue(v, seen, depth + 1));
    return wrap(`Set(${value.size}) `, items, "{", "}", depth);
  }
  const items = ownEntries(value, seen, depth, false);
  if (showHidden) items.push(...prototypeEntries(value, seen, depth));
  const tag = value[Symbol.toStringTag];
  // A null-prototype object is named by what made it (V8's constructor name), as Node names it.
  let prefix = name === "Object" ? "" : name === null ? `[${ops.constructorName(value) || "Object"}: null prototype] ` : `${name || "Object"} `;
  if (typeof tag === "string" && tag !== name && tag !== "") prefix = `${prefix || "Object "}[${tag}] `;
  return wrap(prefix, items, "{", "}", depth);
}

/**
 * Node-style inspection of any value, for log lines and util.inspect: `options.depth` (default
 * 2; null or Infinity for no limit), and `[Symbol.for("nodejs.util.inspect.custom")]` methods.
 */
function inspect(value, options) {
  const previous = maxDepth;
  const depth = options?.depth;
  maxDepth = depth === null || depth === Infinity ? Infinity : typeof depth === "number" ? depth : MAX_DEPTH;
  const outer = [currentDepth, quoteTopLevel, circular, expanded, showHidden, oneLine, numericSeparator, breakLength, colors];
  currentDepth = 0;
  colors = options?.colors === true;
  breakLength = typeof options?.breakLength === "number" && options.breakLength > 0 ? options.breakLength : BREAK_LENGTH;
  numericSeparator = options?.numericSeparator === true;
  showHidden = options?.showHidden === true;
  quoteTopLevel = options?.quoteStrings === true;
  expanded = options?.compact === false;
  oneLine = options?.compact === true;
  circular = new Map();
  try {
    return inspectValue(value, [], 0);
  } catch (error) {
    return `<uninspectable: ${error && error.message}>`;
  } finally {
    maxDepth = previous;
    [currentDepth, quoteTopLevel, circular, expanded, showHidden, oneLine, numericSeparator, breakLength, colors] = outer;
  }
}

// The global classes whose toString %s counts as built-in (Node's builtInObjects).
let builtInNames;
/** Whether `value`'s toString is a built-in one (Node's hasBuiltInToString; a proxy counts as one). */
function hasBuiltInToString(value) {
  if (ops.isProxy(value)) return true;
  if (typeof value[Symbol.toPrimitive] === "function") return false;
  if (typeof value.toString !== "function") return true;
  if (Object.hasOwn(value, "toString")) return false;
  let pointer = value;
  do pointer = Object.getPrototypeOf(pointer);
  while (pointer !== null && !Object.hasOwn(pointer, "toString"));
  if (pointer === null) return true;
  builtInNames ??= new Set(Object.getOwnPropertyNames(globalThis).filter((name) => /^[A-Z][a-zA-Z0-9]+$/.test(name)));
  const descriptor = Object.getOwnPropertyDescriptor(pointer, "constructor");
  return descriptor !== undefined && typeof descriptor.value === "function" && builtInNames.has(descriptor.value.name);
}

/**
 * A proxy, shown without running any of its traps, as Node's inspect shows one: with showProxy its
 * target and handler (`Proxy [ target, handler ]`), else what the target's custom inspector
 * gives (called on the proxy) or `Proxy(target)`; a revoked one is `<Revoked Proxy>`.
 */
function formatProxy(value, proxy, seen, depth) {
  if (proxy === null) return "<Revoked Proxy>";
  const [target, handler] = proxy;
  if (showProxy) {
    if (depth > maxDepth) return "Proxy [Array]";
    return wrap("Proxy ", [inspectValue(target, seen, depth + 1), inspectValue(handler, seen, depth + 1)], "[", "]", depth);
  }
  if (target !== null && (typeof target === "object" || typeof target === "function") && !ops.isProxy(target)) {
    const custom = target[CUSTOM_INSPECT];
    if (typeof custom === "function" && custom !== inspect) {
      const shown = custom.call(value, maxDepth - depth, { depth: maxDepth - depth, customInspect: true, showProxy: false, colors, stylize: (text, style) => (STYLES[style] ? stylize(text, style) : text) }, inspect);
      if (shown !== value) return typeof shown === "string" ? shown : inspectValue(shown, seen, depth);
    }
  }
  return `${stylize("Proxy(", "special")}${inspectValue(target, seen, depth)}${stylize(")", "special")}`;
}

/** internals.inspect (util.inspect's): inspect() with Node's `showProxy` and `getters` options. */
function inspectWithProxies(value, options) {
  const previous = [showProxy, getters];
  showProxy = Boolean(options?.showProxy);
  getters = options?.getters ?? false;
  try {
    return inspect(value, options);
  } finally {
    [showProxy, getters] = previous;
  }
}

/** util.format: %s %d %i %f %j %o %O %c %% directives in a leading string, then the rest inspected. */
function format(args, options = undefined) {
  if (args.length === 0) return "";
  // util.format with util.inspect.defaultOptions.numericSeparator: %d, %i and %s of numbers too.
  if (options?.numericSeparator === true && !numericSeparator) {
    numericSeparator = true;
    try {
      return format(args, options);
    } finally {
      numericSeparator = false;
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

internals.inspect = inspectWithProxies;
internals.format = format;
internals.defineGlobal("console", console);
