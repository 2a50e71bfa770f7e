// util.inspect's engine, shared by console (src/js/26_console.js), node:util and the runtime's
// messages: Node's layout of primitives, objects, arrays, typed arrays and buffers, Maps and
// Sets, errors, promises, proxies and functions, with its options (depth, colors/styles,
// showHidden, compact, breakLength, maxArrayLength, maxStringLength, sorted, getters,
// customInspect, numericSeparator) and [util.inspect.custom] methods.

const MAX_DEPTH = 2;
const CUSTOM_INSPECT = Symbol.for("nodejs.util.inspect.custom");
const { STYLES, COLORS, WIDE, more, IDENTIFIER, TypedArray, quote, ESCAPES, symbolText, isInstance, formatFunction, groupInColumns, groupDigits, separated, isIndex, prefixOf, TypedArrayLength, TypedArrayTag, ArrayBufferLength, SharedArrayBufferLength, MapSize, SetSize, MapEntries, SetValues, IteratorNext, builtInNameSet, hasBuiltInToString } = internals.inspectHelpers;
// The depth limit of the inspection under way (util.inspect's `depth` option; 2 by default).
let maxDepth = MAX_DEPTH;
// Whether a string at the top is quoted (util.inspect) or not (console.log, util.format).
let quoteTopLevel = false;
// The objects a cycle leads back to in the inspection under way, with their `*n` numbers.
let circular = new Map();
// How far the line breaks of the value being formatted are indented (Node's ctx.indentationLvl):
// each nested value adds 2 (3 for an object's property with compact: true) while it is formatted,
// and lines are indented from it, not re-indented by the levels around them.
let indentLvl = 0;
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
/** `text` in `style` when colors are on (as is when the style names no color). */
function stylize(text, style) {
  if (!colors) return userStylize === undefined ? text : userStylize(text, style);
  const codes = COLORS[STYLES[style]];
  if (codes === undefined) return text;
  return `\x1b[${codes[0]}m${text}\x1b[${codes[1]}m`;
}
/** The length of `text` as shown (without color codes). */
const shownLength = (text) => (colors ? text.replace(/\x1b\[\d+m/g, "").length : text.length);
const shownWidth = (text) => shownLength(text) + (text.match(WIDE)?.length ?? 0);
// util.inspect's maxArrayLength (entries of arrays, typed arrays, Sets, Maps; bytes of buffers)
// and maxStringLength; sorted; customInspect; a stylize function of the caller's own.
let MAX_ITEMS = 100;
let maxStringLength = Infinity;
let sorted = false;
let customInspect = true;
let userStylize;
/** The caller's options (a [util.inspect.custom]() method gets a copy: customOptionsFor()), and its `inspect`. */
let customOptions;
let customInspectFn;
/** The options a [util.inspect.custom]() method gets: the caller's, without the runtime's own, with stylize. */
function customOptionsFor() {
  const options = { ...customOptions };
  delete options.quoteStrings;
  delete options.inspect;
  delete options.throwErrors;
  options.stylize = stylize;
  return options;
}

function formatKey(key) {
  // Node 24+ shows symbol keys bare (`Symbol(k): 2`); older Nodes bracketed them.
  if (typeof key === "symbol") return stylize(symbolText(key), "symbol");
  return IDENTIFIER.test(key) ? key : stylize(quote(key), "string");
}

// util.inspect's numericSeparator: integer digits in groups of three joined by "_" (and the
// fraction's from its start), for numbers and bigints.
let numericSeparator = false;
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

// Node's layout rules (breakLength 80, compact 3): entries go on one line when they fit and the
// object holds fewer than three levels of non-empty objects below it; arrays of more than six
// entries are laid out in aligned columns instead.
const BREAK_LENGTH = 80;
/** The line length of the inspection under way: util.inspect's `breakLength` (Infinity allowed). */
let breakLength = BREAK_LENGTH;
// The depth of the last non-empty object whose entries were formatted (Node's currentDepth).
let currentDepth = 0;
// util.inspect's numeric `compact` (3 by default): how many inner levels go on one line, and a
// quarter of the most columns an array is laid out in.
let compactLevels = 3;

function fitsOneLine(output, start) {
  let total = output.length + start;
  if (total + output.length > breakLength) return false;
  for (const entry of output) {
    total += shownLength(entry);
    if (total > breakLength) return false;
  }
  return true;
}

function wrap(prefix, items, open, close, depth = 0, arrayValues, extra = 0) {
  if (items.length === 0) return `${prefix}${open}${close}`;
  const indentation = `\n${" ".repeat(indentLvl)}`;
  if (oneLine) {
    // compact: true (assert's messages): on one line when the entries fit, else Node's `{ a,\n  b }`
    // (a longer opening such as `Map(2) {` puts the first entry on a line of its own too).
    if (fitsOneLine(items, 0) && !prefix.includes("\n")) return `${prefix}${open} ${items.join(", ")} ${close}`;
    const first = prefix === "" && open.length === 1 ? " " : `${indentation}  `;
    return `${prefix}${open}${first}${items.join(`,${indentation}  `)} ${close}`;
  }
  let output = items;
  if (arrayValues !== undefined && items.length > 6 && !expanded) output = groupInColumns(items, arrayValues, extra, { width: shownWidth, breakLength, indentation: indentLvl, compactLevels });
  // (A prefix of several lines, an error's stack, puts the entries on lines of their own, as in Node.)
  if (!expanded && currentDepth - depth < compactLevels && output.length === items.length && !prefix.includes("\n")) {
    const start = output.length + indentLvl + shownLength(prefix) + open.length + 10;
    if (fitsOneLine(output, start)) {
      const joined = output.join(", ");
      if (!joined.includes("\n")) return `${prefix}${open} ${joined} ${close}`;
    }
  }
  return `${prefix}${open}${indentation}  ${output.join(`,${indentation}  `)}${indentation}${close}`;
}

/** `format()` with the indentation `diff` more (Node's; left as it is when format() throws, as Node's is). */
function nested(diff, format) {
  indentLvl += diff;
  const shown = format();
  indentLvl -= diff;
  return shown;
}

/** Text laid out from the left margin (workerd's inspectors', a custom inspect's, a stack), indented where it goes. */
const indented = (text) => (indentLvl === 0 ? text : text.replace(/\n/g, `\n${" ".repeat(indentLvl)}`));

function ownEntries(value, seen, depth, skipIndices, arrayExtras = false) {
  const items = [];
  const keys = Reflect.ownKeys(value);
  for (const key of keys) {
    if (skipIndices && isIndex(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (!descriptor || (!descriptor.enumerable && !showHidden)) continue;
    items.push(entryText(key, descriptor, value, seen, depth, arrayExtras));
  }
  if (sorted) items.sort(typeof sorted === "function" ? sorted : undefined);
  return items;
}

/** `key: value` for one property (`[key]` when not enumerable); an accessor as Node shows it. */
function entryText(key, descriptor, receiver, seen, depth, arrayExtras = false) {
  // (An object's property is indented 3 with compact: true, an array's extra key 2, as in Node.)
  const diff = oneLine && !arrayExtras ? 3 : 2;
  const shown = "value" in descriptor ? nested(diff, () => inspectValue(descriptor.value, seen, depth + 1)) : accessorText(descriptor, receiver, seen, depth);
  const name = descriptor.enumerable && key !== "__proto__" ? formatKey(key) : `[${typeof key === "symbol" ? stylize(symbolText(key), "symbol") : IDENTIFIER.test(key) && key !== "__proto__" ? key : stylize(quote(key), "string")}]`;
  // compact: true puts a value wider than the line under its key, as Node does.
  if (diff === 3 && "value" in descriptor && shownWidth(shown.replace(/\n/g, "")) > breakLength) return `${name}:\n${" ".repeat(indentLvl + 3)}${shown}`;
  return `${name}: ${shown}`;
}

/**
 * An accessor: `[Getter]`, or with util.inspect's `getters` its value read from `receiver`
 * (`[Getter: 1]`, `[Getter] { … }`). As workerd's: a getter that gives a function is shown as
 * what formatting it as a primitive throws, and the indentation added for the value stays when
 * that throws (the lines after it are indented 2 more).
 */
function accessorText(descriptor, receiver, seen, depth) {
  const label = descriptor.get && descriptor.set ? "Getter/Setter" : descriptor.get ? "Getter" : "Setter";
  const wanted = getters === true || (getters === "get" && !descriptor.set) || (getters === "set" && descriptor.set);
  if (!descriptor.get || !wanted) return stylize(`[${label}]`, "special");
  try {
    const value = descriptor.get.call(receiver);
    indentLvl += 2;
    let shown;
    if (value !== null && typeof value === "object") shown = `${stylize(`[${label}]`, "special")} ${inspectValue(value, seen, depth + 1)}`;
    else {
      if (typeof value === "function") Symbol.prototype.toString.call(value);
      shown = `${stylize(`[${label}:`, "special")} ${inspectValue(value, seen, depth + 1)}${stylize("]", "special")}`;
    }
    indentLvl -= 2;
    return shown;
  } catch (error) {
    const message = error instanceof Error || ops.valueIs("NativeError", error) ? error.message : String(error);
    return `${stylize(`[${label}:`, "special")} <Inspection threw (${message})>${stylize("]", "special")}`;
  }
}

/**
 * With showHidden, Node also shows the properties an object gets from the prototypes between it
 * and where its name comes from (when that is further up than its first prototype, or a class
 * that is not a global's), at most three of them and up to a global class's: accessors and
 * values, not methods, as `[key]: …`, dimmed with colors.
 */
function prototypeEntries(value, seen, depth) {
  const items = [];
  if (depth > maxDepth) return items;
  const from = internals.inspectHelpers.nameSource(value);
  if (from === undefined) return items;
  let object = from.first ?? value;
  let keys;
  const above = new Set();
  for (let layer = 0; layer < 3; layer++) {
    if (layer !== 0 || object === value) {
      object = Object.getPrototypeOf(object);
      if (object === null) return items;
      const constructor = Object.getOwnPropertyDescriptor(object, "constructor")?.value;
      if (typeof constructor === "function" && builtInNameSet().has(constructor.name)) return items;
    }
    if (layer !== 0) for (const key of keys) above.add(key);
    keys = Reflect.ownKeys(object);
    seen.push(value);
    for (const key of keys) {
      if (key === "constructor" || Object.hasOwn(value, key) || above.has(key)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(object, key);
      if (typeof descriptor?.value === "function") continue;
      const text = entryText(key, descriptor, value, seen, depth);
      items.push(colors ? `\x1b[2m${text}\x1b[22m` : text);
    }
    seen.pop();
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
  const outer = [maxDepth, currentDepth, showHidden, indentLvl];
  maxDepth -= depth;
  currentDepth = 0;
  showHidden = true;
  indentLvl = 0;
  seen.push(value);
  let shown;
  try {
    if (entries === undefined) shown = `${name} ${inspectValue(record, seen, 0)}`;
    else {
      // A map-like: `Headers(1) { 'a' => '1', [immutable]: false }`, laid out as workerd lays out
      // `Object(1) { … }` before it puts the class's name in.
      const items = nested(2, () => entries.map(([key, item]) => `${inspectValue(key, seen, 1)} => ${inspectValue(item, seen, 1)}`));
      items.push(...ownEntries(record, seen, 0, false));
      shown = wrap(`Object(${entries.length}) `, items, "{", "}", 0).replace("Object", name);
    }
  } finally {
    seen.pop();
    [maxDepth, currentDepth, showHidden, indentLvl] = outer;
  }
  // (Laid out from the left margin, then indented where it goes, as workerd's own inspectors' text.)
  return indented(shown);
}

/** `Promise { 1 }`, `Promise { <pending> }`, `Promise { <rejected> Error: … }`, as in Node. */
function formatPromise(value, seen, depth) {
  const [state, result] = ops.promiseState(value);
  if (state === "pending") return wrap(prefixOf(constructorName(value), "Promise", "", shownTag(value, constructorName(value))), [stylize("<pending>", "special"), ...ownEntries(value, seen, depth, false)], "{", "}", depth);
  if (depth > maxDepth) return "[Promise]";
  seen.push(value);
  try {
    const shown = nested(2, () => inspectValue(result, seen, depth + 1));
    return wrap(prefixOf(constructorName(value), "Promise", "", shownTag(value, constructorName(value))), [state === "rejected" ? `${stylize("<rejected>", "special")} ${shown}` : shown, ...ownEntries(value, seen, depth, false)], "{", "}", depth);
  } finally {
    seen.pop();
  }
}

/**
 * A quoted string: cut at maxStringLength; one longer than 16 characters that does not fit on the
 * line is split after each newline into `'…\n' +` pieces, one a line (not with compact: true).
 */
function formatString(value, depth) {
  let trailer = "";
  if (value.length > maxStringLength) {
    trailer = `... ${more(value.length - maxStringLength, "character").slice(4)}`;
    value = value.slice(0, Math.max(0, maxStringLength));
  }
  if (!oneLine && value.length > 16 && value.length > breakLength - indentLvl - 4 && value.includes("\n")) {
    const pieces = value.split(/(?<=\n)/).map((piece) => stylize(quote(piece), "string"));
    return pieces.join(` +\n${" ".repeat(indentLvl + 2)}`) + trailer;
  }
  return stylize(quote(value), "string") + trailer;
}

/** `[Number: 1]`, `[String: 'a']`, `[Symbol: Symbol(a)]`… (a subclass's name in brackets). */
function boxedPrimitive(value) {
  for (const [kind, Type] of [["NumberObject", Number], ["StringObject", String], ["BooleanObject", Boolean], ["BigIntObject", BigInt], ["SymbolObject", Symbol]]) {
    if (!ops.valueIs(kind, value)) continue;
    const primitive = Type.prototype.valueOf.call(value);
    const name = constructorName(value);
    const type = Type.name;
    const label = name === null ? `${type} (null prototype)` : name === type || name === "" ? type : `${type} (${name})`;
    const saved = colors;
    colors = false;
    const tag = shownTag(value, name);
    const shown = `[${label}: ${typeof primitive === "string" ? quote(primitive) : formatPrimitive(primitive, true)}]${tag !== "" && tag !== type ? ` [${tag}]` : ""}`;
    colors = saved;
    return { shown: stylize(shown, typeof primitive === "symbol" ? "symbol" : typeof primitive), type };
  }
  return undefined;
}

/** The toStringTag Node shows after the name (not an own one, which shows as a key). */
function shownTag(value, name) {
  const tag = value[Symbol.toStringTag];
  if (typeof tag !== "string" || tag === "" || tag === name) return "";
  const own = Object.getOwnPropertyDescriptor(value, Symbol.toStringTag);
  if (own !== undefined && (showHidden || own.enumerable)) return "";
  return tag;
}

/** `base { own keys }` when the object has own keys to show (all of them with showHidden), else `base`. */
function withOwnKeys(base, value, seen, depth, skipIndices) {
  if (depth > maxDepth) return base;
  seen.push(value);
  try {
    const items = ownEntries(value, seen, depth, skipIndices);
    return items.length ? wrapBase(base, items, depth) : base;
  } finally {
    seen.pop();
  }
}

/**
 * `base { entries }` (a function's, error's, date's… own keys after it); with compact: true,
 * Node's `{ base entries }`, on one line when it fits, else the entries on lines of their own.
 */
function wrapBase(base, items, depth) {
  if (!oneLine) return wrap(`${base} `, items, "{", "}", depth);
  if (fitsOneLine(items, 0) && !base.includes("\n")) return `{ ${base} ${items.join(", ")} }`;
  const indentation = `\n${" ".repeat(indentLvl)}`;
  return `{ ${base}${indentation}  ${items.join(`,${indentation}  `)} }`;
}

/**
 * An error as Node shows it: its stack (else Error.prototype.toString() of it; in brackets when
 * it has no frames), the name fixed up when it differs from the class's, then its own keys (those
 * the stack already shows left out) and a `[cause]` / `[errors]` it has.
 */
function formatError(error, seen, depth) {
  let stack;
  const rawStack = error.stack;
  if (!rawStack) stack = Error.prototype.toString.call(error);
  else if (typeof rawStack === "string") stack = rawStack;
  else {
    // A stack that is not a string is inspected with every entry on its own line, as Node does
    // (it formats it with no level, which never fits one line).
    const saved = [expanded, indentLvl];
    expanded = true;
    indentLvl = 0;
    try {
      stack = inspectValue(rawStack, seen, depth);
    } finally {
      [expanded, indentLvl] = saved;
    }
  }
  const keys = Reflect.ownKeys(error).filter((key) => showHidden || Object.prototype.propertyIsEnumerable.call(error, key));
  if (!showHidden) {
    for (const key of ["name", "message", "stack"]) {
      const at = keys.indexOf(key);
      if (at !== -1 && (typeof error[key] !== "string" || stack.includes(error[key]))) keys.splice(at, 1);
    }
  }
  if ("cause" in error && !keys.includes("cause")) keys.push("cause");
  if (Array.isArray(Object.getOwnPropertyDescriptor(error, "errors")?.value) && !keys.includes("errors")) keys.push("errors");
  stack = improveStack(stack, error);
  const message = typeof error.message === "string" ? error.message : "";
  let from = message ? stack.indexOf(message) : -1;
  if (from !== -1) from += message.length;
  if (stack.indexOf("\n    at", from) === -1) stack = `[${stack}]`;
  // The stack is indented where it goes, as Node indents it.
  stack = indented(stack);
  if (keys.length === 0) return stack;
  if (depth > maxDepth) return stack;
  seen.push(error);
  try {
    const items = keys.map((key) => {
      const descriptor = Object.getOwnPropertyDescriptor(error, key) ?? { value: error[key], enumerable: false };
      return entryText(key, descriptor, error, seen, depth);
    });
    return wrapBase(stack, items, depth);
  } finally {
    seen.pop();
  }
}

/** Node's name fix-up: `RangeError` for a name changed to a non-string, or an error of a subclass. */
function improveStack(stack, error) {
  const raw = error.name;
  const name = raw != null ? String(raw) : "Error";
  const constructor = constructorName(error);
  const prefix = () => prefixOf(constructor, "Error", "", shownTag(error, constructor)).slice(0, -1);
  if (raw != null && typeof raw !== "string") return stack.replace(name, `${name} [${prefix()}]`);
  const length = name.length;
  if (constructor === null || (name.endsWith("Error") && stack.startsWith(name) && (stack.length === length || stack[length] === ":" || stack[length] === "\n"))) {
    let fallback = "Error";
    let cut = length;
    if (constructor === null) {
      const start = /^([A-Z][a-z_ A-Z0-9[\]()-]+)(?::|\n\s+at)/.exec(stack) || /^([a-z_A-Z0-9-]*Error)$/.exec(stack);
      fallback = start?.[1] || "";
      cut = fallback.length;
      fallback ||= "Error";
    }
    const shown = constructor === null ? prefixOf(null, fallback, "", shownTag(error, null)).slice(0, -1) : prefix();
    if (name !== shown) {
      if (shown.includes(name)) stack = cut === 0 ? `${shown}: ${stack}` : `${shown}${stack.slice(cut)}`;
      else stack = `${shown} [${name}]${stack.slice(cut)}`;
    }
  }
  return stack;
}

/** `format()` with `value` on the stack of objects being shown (for cycles). */
function withSeen(value, seen, format) {
  seen.push(value);
  try {
    return format();
  } finally {
    seen.pop();
  }
}

/**
 * The entries V8 previews for an iterator or a weak collection, as Node lists them: at most
 * maxArrayLength; key/value pairs as `k => v` (weak) or `[ k, v ]` (an iterator's entries()).
 */
function previewItems(value, seen, depth, weak) {
  const [entries, isKeyValue] = ops.previewEntries(value) ?? [[], false];
  const count = isKeyValue ? entries.length / 2 : entries.length;
  const items = [];
  indentLvl += 2;
  for (let i = 0; i < Math.min(count, MAX_ITEMS); i++) {
    if (!isKeyValue) items.push(inspectValue(entries[i], seen, depth + 1));
    else if (weak) items.push(`${inspectValue(entries[2 * i], seen, depth + 1)} => ${inspectValue(entries[2 * i + 1], seen, depth + 1)}`);
    else items.push(wrap("", [inspectValue(entries[2 * i], seen, depth + 2), inspectValue(entries[2 * i + 1], seen, depth + 2)], "[", "]", depth + 1));
  }
  indentLvl -= 2;
  if (weak && !sorted) items.sort();
  if (count > MAX_ITEMS) items.push(more(count - MAX_ITEMS));
  return items;
}

/**
 * An object's name as Node shows it; with no named constructor up its chain, V8's name and what
 * its prototype is (`Object <[Object: null prototype] {}>`, `<Complex prototype>` too deep).
 */
const constructorName = (value) => internals.inspectHelpers.constructorName(value, (object, first) => unnamedConstructor(object, first, 0));
function unnamedConstructor(value, first, level) {
  const name = ops.constructorName(value) || "";
  if (level > maxDepth) return `${name} <Complex prototype>`;
  const inner = internals.inspectHelpers.constructorName(first, (object, next) => unnamedConstructor(object, next, level + 1));
  if (inner !== null) return `${name} <${inner}>`;
  return `${name} <${inspect(first, { depth: -1, customInspect: false, colors, quoteStrings: true })}>`;
}

function inspectValue(value, seen, depth) {
  if (value === null) return stylize("null", "null");
  if (typeof value !== "object" && typeof value !== "function") {
    const quoted = depth > 0 || quoteTopLevel;
    if (typeof value === "string" && quoted) return formatString(value, depth);
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
    const base = formatFunction(value, shownTag);
    if (depth > maxDepth) return stylize(base, "special");
    seen.push(value);
    try {
      const extra = ownEntries(value, seen, depth, false);
      if (showHidden) extra.push(...prototypeEntries(value, seen, depth));
      const shown = extra.length ? wrapBase(base, extra, depth) : stylize(base, "special");
      return circular.has(value) ? `${stylize(`<ref *${circular.get(value)}>`, "special")} ${shown}` : shown;
    } finally {
      seen.pop();
    }
  }
  const custom = customInspect ? value[CUSTOM_INSPECT] : undefined;
  if (typeof custom === "function" && custom !== inspect && custom !== customInspectFn) {
    const options = customOptionsFor();
    const shown = custom.call(value, maxDepth === Infinity && options.depth === null ? null : maxDepth - depth, options, customInspectFn ?? inspect);
    if (shown !== value) return typeof shown !== "string" ? inspectValue(shown, seen, depth) : indented(shown);
  }
  const shape = apiShape(value);
  if (shape !== undefined) return formatApiObject(value, shape, seen, depth);
  if (value instanceof Error || ops.valueIs("NativeError", value)) return formatError(value, seen, depth);
  // A Date or RegExp (a real one, not an object that only inherits from one), its own keys after it.
  // (`Foo /a/g` for a subclass's, `[RegExp: null prototype] /a/g` without a prototype.)
  if (ops.valueIs("Date", value)) {
    const time = Date.prototype.getTime.call(value);
    const name = constructorName(value);
    const prefix = prefixOf(name, "Date", "", shownTag(value, name));
    const text = Number.isNaN(time) ? "Invalid Date" : Date.prototype.toISOString.call(value);
    return withOwnKeys(stylize(prefix === "Date " ? text : `${prefix}${text}`, "date"), value, seen, depth, false);
  }
  if (ops.valueIs("RegExp", value)) {
    const name = constructorName(value);
    const prefix = prefixOf(name, "RegExp", "", shownTag(value, name));
    const text = RegExp.prototype.toString.call(name === null ? new RegExp(value) : value);
    return withOwnKeys(stylize(prefix === "RegExp " ? text : `${prefix}${text}`, "regexp"), value, seen, depth, false);
  }
  if (ops.valueIs("Promise", value)) return formatPromise(value, seen, depth);
  if (ops.valueIs("WeakMap", value) || ops.valueIs("WeakSet", value)) {
    // Its entries only with showHidden (in no particular order, so sorted), as Node shows them.
    const name = constructorName(value);
    const prefix = prefixOf(name, ops.valueIs("WeakMap", value) ? "WeakMap" : "WeakSet", "", shownTag(value, name));
    if (!showHidden) return wrap(prefix, [stylize("<items unknown>", "special"), ...ownEntries(value, seen, depth, false)], "{", "}", depth);
    if (depth > maxDepth) return stylize(`[${prefix.slice(0, -1)}]`, "special");
    return withSeen(value, seen, () => wrap(prefix, [...previewItems(value, seen, depth, true), ...ownEntries(value, seen, depth, false)], "{", "}", depth));
  }
  if (ops.valueIs("MapIterator", value) || ops.valueIs("SetIterator", value)) {
    // `[Map Iterator] { 'a' }` (`[Map Entries] { [ 'a', 1 ] }` for entries()), from where it is.
    const kind = ops.valueIs("MapIterator", value) ? "Map" : "Set";
    let tag = shownTag(value, null);
    if (tag !== `${kind} Iterator`) tag = `${tag === "" ? "" : `${tag}] [`}${kind} Iterator`;
    if (depth > maxDepth) return stylize("[Object]", "special");
    return withSeen(value, seen, () => {
      const [, isKeyValue] = ops.previewEntries(value) ?? [[], false];
      if (isKeyValue) tag = tag.replace(/ Iterator$/, " Entries");
      const shown = wrap(`[${tag}] `, [...previewItems(value, seen, depth, false), ...ownEntries(value, seen, depth, false), ...(showHidden ? prototypeEntries(value, seen, depth) : [])], "{", "}", depth);
      return circular.has(value) ? `${stylize(`<ref *${circular.get(value)}>`, "special")} ${shown}` : shown;
    });
  }
  const boxed = boxedPrimitive(value);
  if (boxed !== undefined) {
    if (depth > maxDepth) return boxed.shown;
    return withOwnKeys(boxed.shown, value, seen, depth, boxed.type === "String");
  }

  const name = constructorName(value);
  // (An array whose prototype has no iterator is shown as an object, keys and all, as in Node.)
  const isArray = Array.isArray(value) && (name === null || Symbol.iterator in value);
  // (With showHidden an array always has one: its length.)
  const isTyped = ops.valueIs("TypedArray", value);
  const hasOwnKeys = () => Reflect.ownKeys(value).some((key) => showHidden || Object.prototype.propertyIsEnumerable.call(value, key));
  const hasEntries = isArray ? value.length > 0 || showHidden : isTyped ? TypedArrayLength(value) > 0 || showHidden : ops.valueIs("Map", value) ? MapSize(value) > 0 || hasOwnKeys() : ops.valueIs("Set", value) ? SetSize(value) > 0 || hasOwnKeys() : hasOwnKeys();
  // Past the depth limit an object is only named; an empty one is still shown whole, as in Node.
  if (depth > maxDepth && hasEntries) return stylize(name === null ? `[${ops.constructorName(value) || "Object"}: null prototype]` : `[${prefixOf(name, isArray ? "Array" : "Object", "", shownTag(value, name)).slice(0, -1)}]`, "special");
  seen.push(value);
  // Node counts only objects with entries toward the levels below (see wrap()).
  if (hasEntries) currentDepth = depth;
  try {
    const shown = formatEntries(value, seen, depth, name, isArray);
    return circular.has(value) ? `${stylize(`<ref *${circular.get(value)}>`, "special")} ${shown}` : shown;
  } catch (error) {
    // Too deep for the stack (a long linked list with depth: Infinity): this object is named only, as Node does.
    if (!(error instanceof RangeError) || !String(error.message).includes("call stack")) throw error;
    return stylize(`[${name || "Object"}: Inspection interrupted prematurely. Maximum call stack size exceeded.]`, "special");
  } finally {
    seen.pop();
  }
}

/** The entries of an object, array, typed array, buffer, Map or Set, laid out as Node does. */
/** A typed array's buffer with showHidden, as Node shows it there: its byteLength and own keys, not its bytes. */
function typedArrayBuffer(buffer, seen, depth) {
  const items = [`byteLength: ${inspectValue(buffer.byteLength, seen, depth + 1)}`, ...ownEntries(buffer, seen, depth, false)];
  return items.length === 1 ? `ArrayBuffer { ${items[0]} }` : wrap("ArrayBuffer ", items, "{", "}", depth);
}

function formatEntries(value, seen, depth, name, isArray) {
  if (isArray) {
    // Holes as Node shows them: `<n empty items>` for each run of them (a run counts as one of
    // the maxArrayLength entries shown), found from the keys so that a huge sparse array is quick.
    const items = [];
    let output = 0;
    let index = 0;
    const length = value.length;
    const present = Object.keys(value).filter(isIndex).map(Number);
    let sparse = present.length < length;
    for (const at of sparse ? present : Array.from({ length }, (_, i) => i)) {
      if (output >= MAX_ITEMS) break;
      if (at > index) {
        const holes = at - index;
        items.push(`<${holes} empty item${holes > 1 ? "s" : ""}>`);
        output++;
        index = at;
        if (output >= MAX_ITEMS) break;
      }
      items.push(nested(2, () => inspectValue(value[at], seen, depth + 1)));
      output++;
      index = at + 1;
    }
    let remaining = 0;
    if (index < length && output < MAX_ITEMS) {
      const holes = length - index;
      items.push(`<${holes} empty item${holes > 1 ? "s" : ""}>`);
      index = length;
    }
    if (index < length) remaining = length - index;
    if (remaining) items.push(more(remaining));
    const extra = ownEntries(value, seen, depth, true, true);
    if (showHidden) extra.push(...prototypeEntries(value, seen, depth));
    const prefix = name === "Array" ? "" : prefixOf(name, "Array", `(${length})`, shownTag(value, name));
    return wrap(prefix, [...items, ...extra], "[", "]", depth, extra.length || sparse ? undefined : value, remaining ? 1 : 0);
  }
  if (ops.valueIs("TypedArray", value)) {
    // As workerd's: the real length's elements, but what remains and [length] from `length` as
    // read (none: `[]`), and numbers shown as bigints unless `length` is positive and the first is
    // a number. Without a prototype, a copy of it with its class's is read instead.
    const length = TypedArrayLength(value);
    const bound = name === null ? new globalThis[TypedArrayTag(value)](value) : value;
    const shownCount = Math.min(length, MAX_ITEMS);
    const remaining = bound.length - shownCount;
    const asNumbers = bound.length > 0 && typeof bound[0] === "number";
    const items = [];
    for (let i = 0; i < shownCount; i++) items.push(asNumbers ? stylize(formatPrimitive(bound[i], true), typeof bound[i]) : stylize(numericSeparator ? `${groupDigits(String(bound[i]))}n` : `${bound[i]}n`, "bigint"));
    if (remaining > 0) items.push(more(remaining));
    name = prefixOf(name, TypedArrayTag(value), `(${length})`, shownTag(value, name)).slice(0, -1);
    const extra = ownEntries(value, seen, depth, true, true);
    if (value.length === 0 && extra.length === 0 && !showHidden) return `${name} []`;
    if (showHidden) {
      // Node's showHidden extras for a typed array (its buffer only named, as Node shows it there).
      items.push(...nested(2, () => [`[BYTES_PER_ELEMENT]: ${inspectValue(bound.BYTES_PER_ELEMENT, seen, depth + 1)}`, `[length]: ${inspectValue(bound.length, seen, depth + 1)}`, `[byteLength]: ${inspectValue(bound.byteLength, seen, depth + 1)}`, `[byteOffset]: ${inspectValue(bound.byteOffset, seen, depth + 1)}`, `[buffer]: ${typedArrayBuffer(bound.buffer, seen, depth + 1)}`]));
      return wrap(`${name} `, [...items, ...extra], "[", "]", depth);
    }
    return wrap(`${name} `, [...items, ...extra], "[", "]", depth, extra.length ? undefined : value, remaining > 0 ? 1 : 0);
  }
  if (ops.valueIs("DataView", value)) {
    // Its byteLength, byteOffset and buffer (shown whole), then its own keys.
    const items = nested(oneLine ? 3 : 2, () => [`byteLength: ${inspectValue(value.byteLength, seen, depth + 1)}`, `byteOffset: ${inspectValue(value.byteOffset, seen, depth + 1)}`, `buffer: ${inspectValue(value.buffer, seen, depth + 1)}`]);
    return wrap(prefixOf(name, "DataView", "", shownTag(value, name)), [...items, ...ownEntries(value, seen, depth, false)], "{", "}", depth);
  }
  if (ops.valueIs("ArrayBuffer", value) || ops.valueIs("SharedArrayBuffer", value)) {
    const kind = ops.valueIs("ArrayBuffer", value) ? "ArrayBuffer" : "SharedArrayBuffer";
    const byteLength = `byteLength: ${inspectValue(value.byteLength, seen, depth + 1)}`;
    const extra = ownEntries(value, seen, depth, false);
    const prefix = prefixOf(name, kind, "", shownTag(value, name));
    if (value.detached) return wrap(prefix, ["(detached)", byteLength, ...extra], "{", "}", depth);
    const realLength = kind === "ArrayBuffer" ? ArrayBufferLength(value) : SharedArrayBufferLength(value);
    const shown = Math.min(realLength, MAX_ITEMS);
    let bytes = Array.from(new Uint8Array(value, 0, shown), (b) => b.toString(16).padStart(2, "0")).join(" ");
    if (realLength > shown) bytes += ` ${more(realLength - shown, "byte")}`;
    return wrap(prefix, [`${stylize("[Uint8Contents]", "special")}: <${bytes}>`, byteLength, ...extra], "{", "}", depth);
  }
  if (ops.valueIs("Map", value) || ops.valueIs("Set", value)) {
    // Read through the built-in iterators (not the object's own, maybe overridden, methods).
    const isMap = ops.valueIs("Map", value);
    const size = isMap ? MapSize(value) : SetSize(value);
    const iterator = isMap ? MapEntries(value) : SetValues(value);
    const items = [];
    indentLvl += 2;
    for (let i = 0; i < Math.min(size, MAX_ITEMS); i++) {
      const { value: entry } = IteratorNext(iterator);
      items.push(isMap ? `${inspectValue(entry[0], seen, depth + 1)} => ${inspectValue(entry[1], seen, depth + 1)}` : inspectValue(entry, seen, depth + 1));
    }
    indentLvl -= 2;
    if (size > MAX_ITEMS) items.push(more(size - MAX_ITEMS));
    if (sorted) items.sort(typeof sorted === "function" ? sorted : undefined);
    const prefix = prefixOf(name, isMap ? "Map" : "Set", `(${size})`, shownTag(value, name));
    return wrap(prefix, [...items, ...ownEntries(value, seen, depth, false), ...(showHidden ? prototypeEntries(value, seen, depth) : [])], "{", "}", depth);
  }
  const items = ownEntries(value, seen, depth, false);
  if (showHidden) items.push(...prototypeEntries(value, seen, depth));
  const tag = shownTag(value, name);
  // A null-prototype object is named by what made it (V8's constructor name), as Node names it.
  // (Without a prototype, V8's name for it, unless that is just its tag: `[Object: null prototype] [Foo] {}`.)
  const made = name === null ? ops.constructorName(value) || "Object" : "";
  let prefix = ops.valueIs("ArgumentsObject", value) ? "[Arguments] " : name === "Object" ? "" : name === null ? `[${made === tag ? "Object" : made}: null prototype] ` : `${name || "Object"} `;
  if (tag !== "") prefix = `${prefix || "Object "}[${tag}] `;
  return wrap(prefix, items, "{", "}", depth);
}

/**
 * Node-style inspection of any value, for log lines and util.inspect: `options.depth` (default
 * 2; null or Infinity for no limit), and `[Symbol.for("nodejs.util.inspect.custom")]` methods.
 */
function inspect(value, options) {
  const previous = maxDepth;
  const depth = options?.depth;
  // (An explicit depth: undefined is no limit, as in Node.)
  maxDepth = depth === null || depth === Infinity || (depth === undefined && options !== null && typeof options === "object" && "depth" in options) ? Infinity : typeof depth === "number" ? depth : MAX_DEPTH;
  const outer = [currentDepth, quoteTopLevel, circular, expanded, showHidden, oneLine, numericSeparator, breakLength, colors, MAX_ITEMS, maxStringLength, sorted, customInspect, userStylize, customOptions, customInspectFn, compactLevels, indentLvl];
  currentDepth = 0;
  indentLvl = 0;
  const limit = (n, fallback) => (n === null || n === Infinity ? Infinity : typeof n === "number" ? Math.max(0, n) : fallback);
  MAX_ITEMS = limit(options?.maxArrayLength, 100);
  maxStringLength = limit(options?.maxStringLength, Infinity);
  sorted = options?.sorted ?? false;
  customInspect = options?.customInspect !== false;
  userStylize = typeof options?.stylize === "function" ? options.stylize : undefined;
  customInspectFn = options?.inspect;
  customOptions = options;
  colors = options?.colors === true;
  breakLength = typeof options?.breakLength === "number" && options.breakLength > 0 ? options.breakLength : BREAK_LENGTH;
  numericSeparator = options?.numericSeparator === true;
  showHidden = options?.showHidden === true;
  quoteTopLevel = options?.quoteStrings === true;
  expanded = options?.compact === false;
  oneLine = options?.compact === true;
  compactLevels = typeof options?.compact === "number" ? options.compact : 3;
  circular = new Map();
  try {
    return inspectValue(value, [], 0);
  } catch (error) {
    // util.inspect lets what a getter throws through, as Node's; console shows it instead.
    if (options?.throwErrors) throw error;
    return `<uninspectable: ${error && error.message}>`;
  } finally {
    maxDepth = previous;
    [currentDepth, quoteTopLevel, circular, expanded, showHidden, oneLine, numericSeparator, breakLength, colors, MAX_ITEMS, maxStringLength, sorted, customInspect, userStylize, customOptions, customInspectFn, compactLevels, indentLvl] = outer;
  }
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
    return wrap("Proxy ", nested(2, () => [inspectValue(target, seen, depth + 1), inspectValue(handler, seen, depth + 1)]), "[", "]", depth);
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

internals.inspect = inspectWithProxies;
// What util.format and console (src/js/26_console.js) use.
internals.inspectParts = {
  inspect,
  formatPrimitive,
  hasBuiltInToString,
  get numericSeparator() {
    return numericSeparator;
  },
  set numericSeparator(on) {
    numericSeparator = on;
  },
};
