// util.inspect's pieces that hold no state of an inspection (src/js/25_inspect.js is the
// engine): Node's styles and colors, quoting and escaping, the name Node shows for an object and
// the prefix it builds from it, a function's name, an array's columns, digit groups, array
// indices, the built-ins' own getters (read past anything a worker overrides) and which toString
// counts as built-in (for %s).

// Node's inspect.styles (each kind of value → a color's name) and inspect.colors (each name →
// its opening and closing SGR codes); util.inspect.styles/colors are these objects, so a worker
// that changes them changes what inspect prints.
const STYLES = { special: "cyan", number: "yellow", bigint: "yellow", boolean: "yellow", undefined: "grey", null: "bold", string: "green", symbol: "green", date: "magenta", regexp: "red", module: "underline" };
const COLORS = {
  reset: [0, 0], bold: [1, 22], dim: [2, 22], italic: [3, 23], underline: [4, 24], blink: [5, 25], inverse: [7, 27], hidden: [8, 28],
  strikethrough: [9, 29], doubleunderline: [21, 24], black: [30, 39], red: [31, 39], green: [32, 39], yellow: [33, 39], blue: [34, 39],
  magenta: [35, 39], cyan: [36, 39], white: [37, 39], bgBlack: [40, 49], bgRed: [41, 49], bgGreen: [42, 49], bgYellow: [43, 49],
  bgBlue: [44, 49], bgMagenta: [45, 49], bgCyan: [46, 49], bgWhite: [47, 49], framed: [51, 54], overlined: [53, 55], gray: [90, 39],
  redBright: [91, 39], greenBright: [92, 39], yellowBright: [93, 39], blueBright: [94, 39], magentaBright: [95, 39], cyanBright: [96, 39],
  whiteBright: [97, 39], bgGray: [100, 49], bgRedBright: [101, 49], bgGreenBright: [102, 49], bgYellowBright: [103, 49],
  bgBlueBright: [104, 49], bgMagentaBright: [105, 49], bgCyanBright: [106, 49], bgWhiteBright: [107, 49],
};
// Node's other names for some of them (not enumerable, as there).
for (const [alias, name] of Object.entries({ grey: "gray", blackBright: "gray", bgGrey: "bgGray", bgBlackBright: "bgGray", faint: "dim", crossedout: "strikethrough", strikeThrough: "strikethrough", crossedOut: "strikethrough", conceal: "hidden", swapColors: "inverse", swapcolors: "inverse", doubleUnderline: "doubleunderline" })) {
  Object.defineProperty(COLORS, alias, { get: () => COLORS[name], set: (codes) => (COLORS[name] = codes), configurable: true, enumerable: false });
}
internals.inspectStyles = STYLES;
internals.inspectColors = COLORS;

// East Asian wide characters take two columns (Node's getStringWidth), for aligning array columns.
const WIDE = /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/g;

/** `… n more item(s)` */
const more = (count, unit = "item") => `... ${count} more ${unit}${count > 1 ? "s" : ""}`;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const TypedArray = Object.getPrototypeOf(Uint8Array);

// Node's choice of quotes: single, else double when the text has single quotes, else backticks.
function quote(text) {
  let mark = "'";
  if (text.includes("'")) {
    if (!text.includes('"')) mark = '"';
    else if (!text.includes("`") && !text.includes("${")) mark = "`";
  }
  // Control characters as \xNN, a lone surrogate as \uXXXX (lower case), as Node escapes them.
  const special = mark === "'" ? /['\\\x00-\x1f\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g : /[\\\x00-\x1f\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const escaped = text.replace(special, (c) => ESCAPES[c] ?? (c.charCodeAt(0) >= 0xd800 ? `\\u${c.charCodeAt(0).toString(16)}` : `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`));
  return `${mark}${escaped}${mark}`;
}
const ESCAPES = { "'": "\\'", "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f", "\v": "\\v" };

/** `Symbol(description)`, its control characters, quotes and backslashes escaped as Node does in keys. */
const symbolText = (symbol) => symbol.toString().replace(/[\x00-\x1f'\\\x7f-\x9f]/g, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);


const isInstance = (value, ctor) => {
  try {
    return value instanceof ctor;
  } catch {
    return false;
  }
};
/**
 * The name Node shows for an object: the first own `constructor` up its prototype chain that is a
 * named function it is an instance of (null with no prototype).
 */
/** A function's: its prototype's `constructor` as read (null without a prototype). */
function functionConstructorName(fn) {
  try {
    const proto = Object.getPrototypeOf(fn);
    if (proto === null) return null;
    const ctor = proto.constructor;
    return typeof ctor === "function" && ctor.name ? ctor.name : "";
  } catch {
    return "";
  }
}
// The built-in prototypes and their constructors, as the bootstrap found them: an object that
// inherits from one is named by it even when a worker changed its `constructor` (as Node does).
const WELL_KNOWN = new Map();
for (const ctor of [Array, ArrayBuffer, Function, Map, Set, Object, RegExp, Date, DataView, Error, Boolean, Number, String, Promise, WeakMap, WeakSet, Object.getPrototypeOf(Uint8Array)]) {
  WELL_KNOWN.set(ctor.prototype, { name: ctor.name, ctor });
}
const hasInstance = Function.prototype[Symbol.hasInstance];

function constructorName(value, unnamed) {
  try {
    let first;
    for (let object = value; object !== null; ) {
      const known = WELL_KNOWN.get(object);
      if (known !== undefined && hasInstance.call(known.ctor, value)) return known.name;
      const descriptor = Object.getOwnPropertyDescriptor(object, "constructor");
      const ctor = descriptor?.value;
      // (A class whose static name is a symbol is named by it: `Symbol(name) {}`.)
      if (typeof ctor === "function" && ctor.name !== "" && (typeof ctor.name === "string" || typeof ctor.name === "symbol") && isInstance(value, ctor)) return String(ctor.name);
      object = Object.getPrototypeOf(object);
      if (first === undefined) first = object;
    }
    if (first === null) return null;
    // No named constructor up the chain: `unnamed` (src/js/25_inspect.js) adds what the
    // prototype is, as Node's `Name <prototype>`.
    return unnamed === undefined ? ops.constructorName(value) || "" : unnamed(value, first);
  } catch {
    return "";
  }
}

/**
 * Where the name Node shows for `value` comes from, when Node also lists (with showHidden) the
 * properties of the prototypes below it: `{ first }`, its first prototype (undefined when the
 * name is its own `constructor`'s); undefined when Node lists none (the name is its first
 * prototype's and a global class's, or it has no named constructor).
 */
function nameSource(value) {
  try {
    let first;
    for (let object = value; object !== null; ) {
      const known = WELL_KNOWN.get(object);
      if (known !== undefined && hasInstance.call(known.ctor, value)) return first !== object ? { first } : undefined;
      const ctor = Object.getOwnPropertyDescriptor(object, "constructor")?.value;
      if (typeof ctor === "function" && ctor.name !== "" && isInstance(value, ctor)) return first !== object || !builtInNameSet().has(ctor.name) ? { first } : undefined;
      object = Object.getPrototypeOf(object);
      if (first === undefined) first = object;
    }
  } catch {}
  return undefined;
}

/** A function's name as Node shows it (`[Function: f]`, `[class A extends B]`); `shownTag(value, name)` is the tag shown after a name. */
function formatFunction(fn, shownTag) {
  const source = Function.prototype.toString.call(fn);
  if (/^class[\s{]/.test(source)) {
    // `[class A [Tag] extends B]`, as Node names a class.
    const constructor = functionConstructorName(fn);
    let base = `class ${(Object.hasOwn(fn, "name") && fn.name) || "(anonymous)"}`;
    if (constructor !== "Function" && constructor !== null && constructor !== "") base += ` [${constructor}]`;
    const tag = shownTag(fn, constructor);
    if (tag !== "" && tag !== constructor) base += ` [${tag}]`;
    if (constructor === null) base += " extends [null prototype]";
    else if (Object.getPrototypeOf(fn).name) base += ` extends ${Object.getPrototypeOf(fn).name}`;
    return `[${base}]`;
  }
  // As Node's: the kind from what the function is (not its prototype), then its constructor's
  // name when that differs, and a toStringTag that is neither (unless it is an own enumerable).
  let kind = "Function";
  if (ops.valueIs("GeneratorFunction", fn)) kind = `Generator${kind}`;
  if (ops.valueIs("AsyncFunction", fn)) kind = `Async${kind}`;
  const constructor = functionConstructorName(fn);
  let base = `[${kind}${constructor === null ? " (null prototype)" : ""}${fn.name === "" || fn.name === undefined ? " (anonymous)" : `: ${String(fn.name)}`}]`;
  if (constructor !== null && constructor !== "" && constructor !== kind) base += ` ${constructor}`;
  const tag = fn[Symbol.toStringTag];
  if (typeof tag === "string" && tag !== "" && tag !== constructor && !Object.prototype.propertyIsEnumerable.call(fn, Symbol.toStringTag)) base += ` [${tag}]`;
  return base;
}

/**
 * Node's layout of an array of more than six entries: rows of aligned columns, about as wide as
 * tall. `width(entry)` is an entry's width shown; `indentation` the line's, Node's ctx.indentationLvl.
 */
function groupInColumns(output, values, extra, { width, breakLength, indentation, compactLevels }) {
  const count = output.length - extra;
  const lengths = output.slice(0, count).map(width);
  const total = lengths.reduce((sum, length) => sum + length + 2, 0);
  const longest = Math.max(...lengths);
  const cell = longest + 2;
  if (cell * 3 + indentation >= breakLength || (total / cell <= 5 && longest > 6)) return output;
  const bias = Math.sqrt(cell - total / output.length);
  const biased = Math.max(cell - 3 - bias, 1);
  const columns = Math.min(Math.round(Math.sqrt(2.5 * biased * count) / biased), Math.floor((breakLength - indentation) / cell), compactLevels * 4, 15);
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


/** Whether `key` is an array index (below 2 ** 32 - 1). */
const isIndex = (key) => typeof key === "string" && /^(0|[1-9]\d*)$/.test(key) && Number(key) < 4294967295;


/** `Name(size) [Tag] `, as Node prefixes a Map, Set, typed array… (`[Map: null prototype]`). */
function prefixOf(name, fallback, size, tag) {
  const base = name === null ? `[${fallback}${size}: null prototype] ` : `${name || fallback}${size} `;
  return tag !== "" && tag !== (name ?? fallback) ? `${base}[${tag}] ` : base;
}


const TypedArrayLength = Object.getOwnPropertyDescriptor(TypedArray.prototype, "length").get.call.bind(Object.getOwnPropertyDescriptor(TypedArray.prototype, "length").get);
const TypedArrayTag = Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get.call.bind(Object.getOwnPropertyDescriptor(TypedArray.prototype, Symbol.toStringTag).get);
const ArrayBufferLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get.call.bind(Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get);
// (SharedArrayBuffer is looked up when needed: the global is not there yet when this file runs.)
const SharedArrayBufferLength = (buffer) => {
  const getter = typeof SharedArrayBuffer === "function" ? Object.getOwnPropertyDescriptor(SharedArrayBuffer.prototype, "byteLength")?.get : undefined;
  return getter ? getter.call(buffer) : buffer.byteLength;
};
const MapSize = Object.getOwnPropertyDescriptor(Map.prototype, "size").get.call.bind(Object.getOwnPropertyDescriptor(Map.prototype, "size").get);
const SetSize = Object.getOwnPropertyDescriptor(Set.prototype, "size").get.call.bind(Object.getOwnPropertyDescriptor(Set.prototype, "size").get);
const MapEntries = Map.prototype.entries.call.bind(Map.prototype.entries);
const SetValues = Set.prototype.values.call.bind(Set.prototype.values);
const IteratorNext = (iterator) => Object.getPrototypeOf(iterator).next.call(iterator);


// The global classes whose toString %s counts as built-in (Node's builtInObjects).
let builtInNames;
/** The names of the global classes (read on first use, when the globals are all there). */
const builtInNameSet = () => (builtInNames ??= new Set(Object.getOwnPropertyNames(globalThis).filter((name) => /^[A-Z][a-zA-Z0-9]+$/.test(name))));
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
  const descriptor = Object.getOwnPropertyDescriptor(pointer, "constructor");
  return descriptor !== undefined && typeof descriptor.value === "function" && builtInNameSet().has(descriptor.value.name);
}

internals.inspectHelpers = { STYLES, COLORS, WIDE, more, IDENTIFIER, TypedArray, quote, ESCAPES, symbolText, isInstance, functionConstructorName, constructorName, nameSource, formatFunction, groupInColumns, groupDigits, separated, isIndex, prefixOf, TypedArrayLength, TypedArrayTag, ArrayBufferLength, SharedArrayBufferLength, MapSize, SetSize, MapEntries, SetValues, IteratorNext, builtInNameSet, hasBuiltInToString };
