// node:util: format/inspect (the runtime's Node-style formatter, shared with console),
// promisify/callbackify, inherits, deprecate, debuglog, isDeepStrictEqual, types, aborted, log,
// MIMEType/MIMEParams (node:internal/mime) and
// the legacy is* checks.

const types = require("node:util/types");
const { isDeepStrictEqual } = require("internal/comparisons");
const { describeReceived, notImplemented } = require("internal/errors");

function invalidArg(name, expected, value) {
  const error = new TypeError(`The "${name}" argument must be ${expected}. Received ${describeReceived(value)}`);
  error.code = "ERR_INVALID_ARG_TYPE";
  return error;
}

function inspect(value, options) {
  // The legacy signature: inspect(value, showHidden, depth, colors).
  if (typeof options !== "object" || options === null) {
    const legacy = {};
    if (typeof options === "boolean") legacy.showHidden = options;
    if (arguments.length > 2 && arguments[2] !== undefined) legacy.depth = arguments[2];
    if (arguments.length > 3 && arguments[3] !== undefined) legacy.colors = arguments[3];
    options = legacy;
  }
  return internals.inspect(value, { ...defaultOptions, ...options, quoteStrings: true, inspect, throwErrors: true });
}
inspect.custom = Symbol.for("nodejs.util.inspect.custom");
// Node's defaults; setting inspect.defaultOptions merges an object into them.
const defaultOptions = { showHidden: false, depth: 2, colors: false, customInspect: true, showProxy: false, maxArrayLength: 100, maxStringLength: 10000, breakLength: 80, compact: 3, sorted: false, getters: false, numericSeparator: false };
Object.defineProperty(inspect, "defaultOptions", {
  get: () => defaultOptions,
  set(options) {
    if (typeof options !== "object" || options === null) throw invalidArg("options", "of type object", options);
    Object.assign(defaultOptions, options);
  },
  enumerable: true,
  configurable: true,
});

const format = (...args) => internals.format(args, { numericSeparator: inspect.defaultOptions.numericSeparator });
const formatWithOptions = (options, ...args) => {
  if (typeof options !== "object" || options === null) throw invalidArg("inspectOptions", "of type object", options);
  return internals.format(args, { numericSeparator: options.numericSeparator ?? inspect.defaultOptions.numericSeparator, colors: options.colors === true });
};

const kCustomPromisify = Symbol.for("nodejs.util.promisify.custom");

function promisify(original) {
  if (typeof original !== "function") throw invalidArg("original", "of type function", original);
  if (original[kCustomPromisify]) {
    const fn = original[kCustomPromisify];
    if (typeof fn !== "function") throw invalidArg("util.promisify.custom", "of type function", fn);
    return Object.defineProperty(fn, kCustomPromisify, { value: fn, enumerable: false, writable: false, configurable: true });
  }
  function promisified(...args) {
    return new Promise((resolve, reject) => {
      Reflect.apply(original, this, [...args, (error, ...values) => (error ? reject(error) : resolve(values.length > 1 ? values : values[0]))]);
    });
  }
  Object.setPrototypeOf(promisified, Object.getPrototypeOf(original));
  Object.defineProperty(promisified, kCustomPromisify, { value: promisified, enumerable: false, writable: false, configurable: true });
  return Object.defineProperties(promisified, Object.getOwnPropertyDescriptors(original));
}
promisify.custom = kCustomPromisify;

function callbackify(original) {
  if (typeof original !== "function") throw invalidArg("original", "of type function", original);
  function callbackified(...args) {
    const callback = args.pop();
    if (typeof callback !== "function") {
      const error = new TypeError(`The last argument must be of type function. Received ${describeReceived(callback)}`);
      error.code = "ERR_INVALID_ARG_TYPE";
      throw error;
    }
    Reflect.apply(original, this, args).then(
      (value) => queueMicrotask(() => callback(null, value)),
      (reason) => {
        if (!reason) {
          const error = new Error("Promise was rejected with a falsy value");
          error.code = "ERR_FALSY_VALUE_REJECTION";
          error.reason = reason;
          reason = error;
        }
        queueMicrotask(() => callback(reason));
      },
    );
  }
  // As Node's: the original's own properties, with one more argument and "Callbackified" added to
  // the name; a plain function (an async original's prototype is not kept).
  const descriptors = Object.getOwnPropertyDescriptors(original);
  if (typeof descriptors.length?.value === "number") descriptors.length.value++;
  if (typeof descriptors.name?.value === "string") descriptors.name.value += "Callbackified";
  Object.defineProperties(callbackified, descriptors);
  return callbackified;
}

function inherits(ctor, superCtor) {
  // Node's checks, in its order: a missing constructor, then a super constructor without a prototype.
  if (ctor === undefined || ctor === null) throw invalidArg("ctor", "of type function", ctor);
  if (superCtor === undefined || superCtor === null) throw invalidArg("superCtor", "of type function", superCtor);
  if (superCtor.prototype === undefined) {
    const error = new TypeError(`The "superCtor.prototype" property must be of type object. Received undefined`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  Object.defineProperty(ctor, "super_", { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}

const warnedCodes = new Set();
function deprecate(fn, message, code) {
  if (typeof fn !== "function") throw invalidArg("fn", "of type function", fn);
  let warned = false;
  function deprecated(...args) {
    if (!warned && !(code !== undefined && warnedCodes.has(code))) {
      warned = true;
      if (code !== undefined) warnedCodes.add(code);
      console.warn(`${code ? `[${code}] ` : ""}DeprecationWarning: ${message}`);
    }
    return new.target ? Reflect.construct(fn, args, new.target) : Reflect.apply(fn, this, args);
  }
  Object.setPrototypeOf(deprecated, fn);
  if (fn.prototype) deprecated.prototype = fn.prototype;
  return deprecated;
}

/**
 * As in workerd, where there is no NODE_DEBUG: every section is on, and a message goes to
 * console.log as one string, `SECTION: message\n`. `callback` gets the logging function on first use.
 */
function debuglog(section, callback) {
  const prefix = String(section).toUpperCase();
  const debug = (...args) => console.log(`${prefix}: ${formatWithOptions({}, ...args)}\n`);
  let first = true;
  const logger = (...args) => {
    if (first) {
      first = false;
      if (typeof callback === "function") callback(debug);
    }
    return debug(...args);
  };
  Object.defineProperty(logger, "enabled", { get: () => true, configurable: true, enumerable: true });
  return logger;
}

/** Resolves when `signal` aborts (Node holds `resource` weakly; here it only must be an object). */
// As Node's and workerd's, an async function: a bad argument rejects the promise, not the call.
async function aborted(signal, resource) {
  if (signal === null || typeof signal !== "object" || typeof signal.addEventListener !== "function") throw invalidArg("signal", "an instance of AbortSignal", signal);
  if (resource === null || (typeof resource !== "object" && typeof resource !== "function")) throw invalidArg("resource", "of type object", resource);
  if (signal.aborted) return;
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** util.log: console.log("%s - %s", "<day> <Mon> <hh:mm:ss>", format(...args)), as workerd logs it. */
function log(...args) {
  const d = new Date();
  const two = (n) => String(n).padStart(2, "0");
  const time = `${d.getDate()} ${MONTHS[d.getMonth()]} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
  console.log("%s - %s", time, format(...args));
}

/**
 * The caller's stack as objects ({ functionName, scriptName, lineNumber, columnNumber, column }),
 * at most `frameCount` (1 to 200) of them; the runtime's own frames are left out.
 */
function getCallSites(frameCount = 8) {
  return callSites(frameCount, getCallSites);
}
/** The old name Node first gave getCallSites (workerd keeps both). */
function getCallSite(frameCount = 8) {
  return callSites(frameCount, getCallSite);
}
function callSites(frameCount, above) {
  if (typeof frameCount !== "number" || !(frameCount >= 1 && frameCount <= 200)) throw new Error("Frame count should be between 1 and 200 inclusive.");
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder = {};
  let sites;
  try {
    Error.stackTraceLimit = 200;
    Error.prepareStackTrace = (_, frames) => frames;
    Error.captureStackTrace(holder, above);
    sites = holder.stack;
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
  if (!Array.isArray(sites)) return [];
  return sites.slice(0, Math.trunc(frameCount)).map((site) => {
    const column = site.getColumnNumber();
    return { functionName: site.getFunctionName() ?? "", scriptName: site.getFileName() ?? "", lineNumber: site.getLineNumber(), columnNumber: column, column };
  });
}

function toUSVString(text) {
  return String(text).toWellFormed();
}

// An escape sequence: CSI, or OSC ended by BEL, ESC \ or ST.
// eslint-disable-next-line no-control-regex
const ANSI = /[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?(?:\u0007|\u001B\\|\u009C))|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g;
const stripVTControlCharacters = (text) => {
  if (typeof text !== "string") throw invalidArg("str", "of type string", text);
  return text.replace(ANSI, "");
};

// Node's inspect.colors and inspect.styles (src/js/25_inspect.js's, which inspect reads).
inspect.colors = internals.inspectColors;
inspect.styles = internals.inspectStyles;
const COLORS = inspect.colors;

/**
 * `text` in the styles `format` names (one or a list; "none" is none). A worker's output is never
 * a terminal, so with `validateStream` (the default) the text comes back unstyled, as in workerd;
 * the names are checked either way.
 */
function styleText(format, text, { validateStream = true, stream = undefined } = {}) {
  if (typeof text !== "string") throw invalidArg("text", "of type string", text);
  if (typeof validateStream !== "boolean") throw invalidArg("options.validateStream", "of type boolean", validateStream);
  // A stream given to be checked must be one (a web stream or a Node stream), as in Node.
  const isStream = (value) => value !== null && typeof value === "object" && ["pipe", "write", "getReader", "getWriter"].some((key) => typeof value[key] === "function");
  if (validateStream && stream !== undefined && !isStream(stream)) throw invalidArg("stream", "an instance of ReadableStream, WritableStream, or Stream", stream);
  let left = "";
  let right = "";
  for (const key of Array.isArray(format) ? format : [format]) {
    if (key === "none") continue;
    const codes = typeof key === "string" && Object.keys(COLORS).includes(key) ? COLORS[key] : undefined;
    if (codes === undefined) {
      const allowed = Object.keys(COLORS).map((name) => `'${name}'`).join(", ");
      const error = new TypeError(`The argument 'format' must be one of: ${allowed}. Received ${inspect(key)}`);
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    left += `\u001b[${codes[0]}m`;
    right = `\u001b[${codes[1]}m${right}`;
  }
  return validateStream ? text : `${left}${text}${right}`;
}

/**
 * A dotenv file's KEY=value pairs, line by line as workerd reads them: `#` lines and lines
 * without `=` are skipped, `export ` is dropped, a value in quotes may run over later lines up to
 * its closing quote (double quotes turn \\n into a newline), an unquoted value ends at `#`.
 */
function parseEnv(content) {
  if (typeof content !== "string") throw invalidArg("content", "of type string", content);
  const result = {};
  const lines = content.split("\n");
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    const start = line.trimStart();
    if (start === "" || start.startsWith("#")) continue;
    if (start.startsWith("export ")) line = line.slice(line.indexOf("export ") + 7);
    const equals = line.indexOf("=");
    if (equals < 0) continue;
    const key = line.slice(0, equals).trim();
    if (key === "") continue;
    let value = line.slice(equals + 1).trimStart();
    const quote = value[0];
    if (quote === '"' || quote === "'" || quote === "`") {
      const close = value.indexOf(quote, 1);
      let closed = close >= 0;
      if (closed) {
        value = value.slice(1, close);
      } else {
        // The closing quote may be on a later line; without one, the value is this line's rest.
        let text = value.slice(1);
        let end = -1;
        for (let j = i + 1; j < lines.length; j++) {
          const at = lines[j].indexOf(quote);
          text += "\n" + (at >= 0 ? lines[j].slice(0, at) : lines[j]);
          if (at >= 0) {
            end = j;
            break;
          }
        }
        closed = end >= 0;
        if (closed) {
          value = text;
          i = end;
        } else {
          value = value.length === 1 ? quote : value.slice(1);
        }
      }
      if (quote === '"' && closed) value = value.replaceAll("\\n", "\n");
    } else if (value !== "") {
      const hash = value.indexOf("#");
      value = (hash >= 0 ? value.slice(0, hash) : value).trimEnd();
    }
    result[key] = value;
  }
  return result;
}

Object.assign(exports, {
  log, _errnoException: notImplemented("_errnoException"), _exceptionWithHostPort: notImplemented("_exceptionWithHostPort"),
  format, formatWithOptions, inspect, promisify, callbackify, inherits, deprecate, debuglog, debug: debuglog, aborted, parseEnv, styleText,
  isDeepStrictEqual, types, toUSVString, getCallSites, getCallSite, stripVTControlCharacters, TextEncoder, TextDecoder,
  MIMEType: require("node:internal/mime").MIMEType, MIMEParams: require("node:internal/mime").MIMEParams,
  isArray: Array.isArray,
  isBoolean: (value) => typeof value === "boolean",
  isBuffer: (value) => require("node:buffer").Buffer.isBuffer(value),
  isDate: types.isDate,
  isError: (value) => types.isNativeError(value) || value instanceof Error,
  isFunction: (value) => typeof value === "function",
  isNull: (value) => value === null,
  isNullOrUndefined: (value) => value === null || value === undefined,
  isNumber: (value) => typeof value === "number",
  isObject: (value) => value !== null && typeof value === "object",
  isPrimitive: (value) => value === null || (typeof value !== "object" && typeof value !== "function"),
  isRegExp: types.isRegExp,
  isString: (value) => typeof value === "string",
  isSymbol: (value) => typeof value === "symbol",
  isUndefined: (value) => value === undefined,
});

// workerd drops the legacy is* checks (not isArray) once remove_nodejs_compat_eol_v23 is on.
if (internals.compat?.enabled.includes("remove_nodejs_compat_eol_v23")) {
  for (const name of ["isBoolean", "isBuffer", "isDate", "isError", "isFunction", "isNull", "isNullOrUndefined", "isNumber", "isObject", "isPrimitive", "isRegExp", "isString", "isSymbol", "isUndefined"]) {
    delete exports[name];
  }
}
