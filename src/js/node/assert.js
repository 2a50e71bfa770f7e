// node:assert: Node's assertion functions and AssertionError (code ERR_ASSERTION, with actual,
// expected, operator and generatedMessage), as workerd has them: always strict (equal is
// strictEqual, deepEqual deepStrictEqual, as in Node's strict mode), with workerd's messages
// (its "[Diff] Actual / Expected" for strictEqual, Node's older "+ actual - expected" for deep
// comparisons; multi-line values are diffed line by line).

const { isDeepStrictEqual } = require("internal/comparisons");

const show = (value) => internals.inspect(value, { depth: 1000, quoteStrings: true });
// Deep comparisons inspect as workerd's AssertionError does: one line up to the break length.
const showCompact = (value) => internals.inspect(value, { depth: 1000, quoteStrings: true, compact: true });
const showExpanded = (value) => internals.inspect(value, { depth: 1000, quoteStrings: true, compact: false });

/** A line diff of two texts: "  " both, "+ " actual only, "- " expected only (LCS-based), or other marks. */
function lineDiff(actual, expected, [same, added, removed] = ["  ", "+ ", "- "]) {
  const a = Array.isArray(actual) ? actual : actual.split("\n");
  const b = Array.isArray(expected) ? expected : expected.split("\n");
  const lcs = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`${same}${a[i++]}`);
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(`${added}${a[i++]}`);
    } else {
      out.push(`${removed}${b[j++]}`);
    }
  }
  return out.join("\n");
}

class AssertionError extends Error {
  constructor(options) {
    if (options === null || typeof options !== "object") {
      const error = new TypeError(`The "options" argument must be of type object. Received ${options === null ? "null" : typeof options}`);
      error.code = "ERR_INVALID_ARG_TYPE";
      throw error;
    }
    const { message, actual, expected, operator } = options;
    super(message !== undefined ? String(message) : generated(actual, expected, operator));
    this.generatedMessage = message === undefined;
    this.code = "ERR_ASSERTION";
    this.actual = actual;
    this.expected = expected;
    this.operator = operator;
  }
  get name() {
    return "AssertionError";
  }
  toString() {
    return `${this.name} [${this.code}]: ${this.message}`;
  }
}

const HEADERS = {
  deepStrictEqual: "Expected values to be strictly deep-equal:",
  strictEqual: "Expected values to be strictly equal:",
  deepEqual: "Expected values to be loosely deep-equal:",
  notDeepStrictEqual: 'Expected "actual" not to be strictly deep-equal to:',
  notStrictEqual: 'Expected "actual" to be strictly unequal to:',
  notDeepEqual: 'Expected "actual" not to be loosely deep-equal to:',
};

/** workerd's strictEqual message: the values' inspections diffed ("-" actual, "+" expected). */
function strictEqualMessage(actual, expected) {
  const a = show(actual);
  const e = show(expected);
  if (a === e) return `Values have the same structure but are not reference-equal:\n\n${a.split("\n").map((line) => `    ${line}`).join("\n")}\n`;
  const strings = typeof actual === "string" && typeof expected === "string";
  // Strings are diffed by their lines, each but the last shown ending in an escaped newline.
  const lines = (text) => text.split("\n").map((line, i, all) => (i < all.length - 1 ? `${line}\\n` : line));
  const body = strings ? lineDiff(lines(actual), lines(expected), ["    ", "-   ", "+   "]) : lineDiff(a, e, ["    ", "-   ", "+   "]);
  return `Values are not strictly equal:\n\n\n[Diff] Actual / Expected\n\n\n${body}\n${strings ? "\n" : ""}`;
}

function generated(actual, expected, operator) {
  switch (operator) {
    case "strictEqual":
    case "deepStrictEqual": {
      const a = showCompact(actual);
      const e = showCompact(expected);
      if (!a.includes("\n") && !e.includes("\n") && a !== e) {
        // Node's older single-line form: short primitives side by side, else both lines, with
        // a caret under the first difference when they fit in 80 columns.
        const length = a.length + e.length;
        const primitive = (v) => typeof v !== "object" || v === null;
        if (length <= 12 && primitive(actual) && primitive(expected) && (actual !== 0 || expected !== 0)) return `${HEADERS[operator]}\n\n${a} !== ${e}\n`;
        let indicator = "";
        if (length > 12 && length < 80) {
          let i = 0;
          while (a[i] === e[i]) i++;
          if (i > 2) indicator = `\n  ${" ".repeat(i)}^`;
        }
        return `${HEADERS[operator]}\n+ actual - expected\n\n+ ${a}\n- ${e}${indicator}`;
      }
      return `${HEADERS[operator]}\n+ actual - expected\n\n${lineDiff(showExpanded(actual), showExpanded(expected))}\n`;
    }
    case "deepEqual":
      return `${HEADERS.deepEqual}\n\n${show(actual)}\n\nshould loosely deep-equal\n\n${show(expected)}`;
    case "notDeepStrictEqual":
    case "notStrictEqual":
    case "notDeepEqual": {
      const shown = show(actual);
      return shown.includes("\n") ? `${HEADERS[operator]}\n\n${shown}\n` : `${HEADERS[operator]} ${shown}`;
    }
    case "==":
    case "!=":
      return `${show(actual)} ${operator} ${show(expected)}`;
    default:
      return operator === undefined ? "Failed" : `${show(actual)} ${operator} ${show(expected)}`;
  }
}

function fail(actual, expected, message, operator) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ actual, expected, operator, message });
}

function innerOk(fn, argLength, value, message) {
  if (value) return;
  if (argLength === 0) message = "No value argument passed to `assert.ok()`";
  else if (message === undefined) message = "The expression evaluated to a falsy value:\n\n  assert.ok(" + show(value) + ")\n";
  else if (message instanceof Error) throw message;
  const error = new AssertionError({ actual: value, expected: true, message, operator: "==" });
  error.generatedMessage = message === undefined;
  throw error;
}

function ok(...args) {
  innerOk(ok, args.length, ...args);
}

const assert = function assert(...args) {
  innerOk(assert, args.length, ...args);
};

assert.ok = ok;
assert.AssertionError = AssertionError;
assert.fail = function (actual, expected, message, operator) {
  if (arguments.length === 0) fail(undefined, undefined, "Failed", "fail");
  if (arguments.length === 1) {
    if (actual instanceof Error) throw actual;
    throw new AssertionError({ message: actual, operator: "fail" });
  }
  fail(actual, expected, message, operator ?? "fail");
};
// workerd's messages for these are given, not generated (generatedMessage false).
assert.strictEqual = function strictEqual(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(actual, expected, message ?? strictEqualMessage(actual, expected), "strictEqual");
};
assert.notStrictEqual = function notStrictEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(actual, expected, message ?? "Expected actual to be strictly unequal to expected", "notStrictEqual");
};
assert.deepStrictEqual = function deepStrictEqual(actual, expected, message) {
  if (!isDeepStrictEqual(actual, expected)) fail(actual, expected, message, "deepStrictEqual");
};
assert.notDeepStrictEqual = function notDeepStrictEqual(actual, expected, message) {
  if (isDeepStrictEqual(actual, expected)) fail(actual, expected, message ?? "Expected actual to not be deeply strictly equal to expected", "notDeepStrictEqual");
};
// As in workerd, the loose comparisons are the strict ones (Node's strict mode).
assert.equal = function equal(actual, expected, message) {
  assert.strictEqual(actual, expected, message);
};
assert.notEqual = function notEqual(actual, expected, message) {
  assert.notStrictEqual(actual, expected, message);
};
assert.deepEqual = function deepEqual(actual, expected, message) {
  assert.deepStrictEqual(actual, expected, message);
};
assert.notDeepEqual = function notDeepEqual(actual, expected, message) {
  assert.notDeepStrictEqual(actual, expected, message);
};
/**
 * workerd's partial comparison: `expected`'s own enumerable keys (and symbols) must be in `actual`
 * with partially equal values, arrays by index, Set members and Map keys deep-strictly equal,
 * Date/RegExp/Error by value; other objects need the same prototype. A pair met again while
 * being compared (a cycle) counts as equal.
 */
function partiallyEqual(actual, expected, seen) {
  if (expected === null || typeof expected !== "object") return Object.is(actual, expected);
  if (actual === null || typeof actual !== "object") return false;
  let pairs = seen.get(actual);
  if (pairs?.has(expected)) return true;
  if (!pairs) seen.set(actual, (pairs = new Set()));
  pairs.add(expected);
  try {
    if (expected instanceof Date) return actual instanceof Date && actual.getTime() === expected.getTime();
    if (expected instanceof RegExp) return actual instanceof RegExp && actual.source === expected.source && actual.flags === expected.flags && actual.lastIndex === expected.lastIndex;
    if (expected instanceof Error) return actual instanceof Error && actual.name === expected.name && actual.message === expected.message;
    if (Array.isArray(expected)) {
      if (!Array.isArray(actual)) return false;
      return expected.every((value, i) => i in actual && partiallyEqual(actual[i], value, seen));
    }
    if (expected instanceof Set) {
      if (!(actual instanceof Set)) return false;
      for (const value of expected) if (![...actual].some((other) => isDeepStrictEqual(value, other))) return false;
      return true;
    }
    if (expected instanceof Map) {
      if (!(actual instanceof Map)) return false;
      for (const [key, value] of expected) {
        const entry = [...actual].find(([other]) => isDeepStrictEqual(key, other));
        if (!entry || !partiallyEqual(entry[1], value, seen)) return false;
      }
      return true;
    }
    if (Object.getPrototypeOf(actual) !== Object.getPrototypeOf(expected)) return false;
    const keys = [...Object.keys(expected), ...Object.getOwnPropertySymbols(expected).filter((s) => Object.prototype.propertyIsEnumerable.call(expected, s))];
    return keys.every((key) => key in actual && partiallyEqual(actual[key], expected[key], seen));
  } finally {
    pairs.delete(expected);
    if (pairs.size === 0) seen.delete(actual);
  }
}

assert.partialDeepStrictEqual = function partialDeepStrictEqual(actual, expected, message) {
  if (arguments.length < 2) {
    const error = new TypeError('The "actual" and "expected" arguments must be specified');
    error.code = "ERR_MISSING_ARGS";
    throw error;
  }
  if (partiallyEqual(actual, expected, new Map())) return;
  throw new AssertionError({ actual, expected, operator: "partialDeepStrictEqual", message: message ? `${message}` : "Expected actual to be partially deeply strictly equal to expected" });
};
assert.ifError = (value) => {
  if (value === null || value === undefined) return;
  const error = new AssertionError({ actual: value, expected: null, operator: "ifError", message: `ifError got unwanted exception: ${value instanceof Error ? value.message : show(value)}` });
  if (value instanceof Error) error.cause = value;
  throw error;
};

function matchText(string, regexp, message, name, wanted) {
  if (!(regexp instanceof RegExp)) {
    const error = new TypeError(`The "regexp" argument must be an instance of RegExp. Received ${typeof regexp}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  if (typeof string === "string" && regexp.test(string) === wanted) return;
  if (message instanceof Error) throw message;
  const generatedMessage = message === undefined;
  const text =
    message ??
    (typeof string !== "string"
      ? `The "string" argument must be of type string. Received type ${typeof string} (${show(string)})`
      : `The input ${wanted ? "did not match" : "was expected to not match"} the regular expression ${show(regexp)}. Input:\n\n${show(string)}\n`);
  const error = new AssertionError({ actual: string, expected: regexp, message: text, operator: name });
  error.generatedMessage = generatedMessage;
  throw error;
}
assert.match = (string, regexp, message) => matchText(string, regexp, message, "match", true);
assert.doesNotMatch = (string, regexp, message) => matchText(string, regexp, message, "doesNotMatch", false);

const NO_EXCEPTION = Symbol("no exception");

/** Whether `actual` (what was thrown) satisfies `expected` (class, RegExp, validator or object). */
function expectedMatches(actual, expected, message, fnName) {
  if (expected === undefined) return;
  if (typeof expected === "function") {
    if (expected.prototype !== undefined && actual instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) throw actual;
    if (expected.call({}, actual) === true) return;
    throw new AssertionError({ actual, expected, message: message ?? `The ${fnName === "rejects" ? "rejection" : "error"} validation function is expected to return "true". Received ${show(expected.call({}, actual))}`, operator: fnName });
  }
  if (expected instanceof RegExp) {
    if (expected.test(String(actual))) return;
    throw new AssertionError({ actual, expected, message: message ?? `The input did not match the regular expression ${show(expected)}. Input:\n\n${show(String(actual))}\n`, operator: fnName });
  }
  if (typeof expected === "object" && expected !== null) {
    const keys = Object.keys(expected);
    if (expected instanceof Error) keys.push("name", "message");
    for (const key of keys) {
      const want = expected[key];
      const got = actual?.[key];
      const same = want instanceof RegExp && typeof got === "string" ? want.test(got) : isDeepStrictEqual(got, want);
      if (!same) {
        throw new AssertionError({ actual, expected, message: message ?? `${HEADERS.deepStrictEqual}\n+ actual - expected\n\n  Comparison {\n+   ${key}: ${show(got)}\n-   ${key}: ${show(want)}\n  }\n`, operator: fnName });
      }
    }
    return;
  }
  const error = new TypeError(`The "expected" argument must be of type function or an instance of Error, RegExp, or Object. Received ${typeof expected}`);
  error.code = "ERR_INVALID_ARG_TYPE";
  throw error;
}

function splitArgs(expected, message) {
  return typeof expected === "string" ? [undefined, expected] : [expected, message];
}

assert.throws = (fn, expectedOrMessage, maybeMessage) => {
  if (typeof fn !== "function") {
    const error = new TypeError(`The "fn" argument must be of type function. Received ${typeof fn}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  const [expected, message] = splitArgs(expectedOrMessage, maybeMessage);
  let thrown = NO_EXCEPTION;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  if (thrown === NO_EXCEPTION) {
    const name = expected?.name ? ` (${expected.name})` : "";
    fail(undefined, expected, message ?? `Missing expected exception${name}.`, "throws");
  }
  expectedMatches(thrown, expected, message, "throws");
};

assert.doesNotThrow = (fn, expectedOrMessage, maybeMessage) => {
  const [, message] = splitArgs(expectedOrMessage, maybeMessage);
  try {
    fn();
  } catch (error) {
    fail(error, undefined, message !== undefined ? `Got unwanted exception: ${message}` : `Got unwanted exception.\nActual message: "${error?.message}"`, "doesNotThrow");
  }
};

async function settle(promiseOrFn) {
  const promise = typeof promiseOrFn === "function" ? promiseOrFn() : promiseOrFn;
  if (promise === null || typeof promise?.then !== "function") {
    const error = new TypeError(`The "promiseFn" argument must be of type function or an instance of Promise. Received ${typeof promise}`);
    error.code = "ERR_INVALID_ARG_TYPE";
    throw error;
  }
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return NO_EXCEPTION;
}

assert.rejects = async (promiseOrFn, expectedOrMessage, maybeMessage) => {
  const [expected, message] = splitArgs(expectedOrMessage, maybeMessage);
  const thrown = await settle(promiseOrFn);
  if (thrown === NO_EXCEPTION) {
    const name = expected?.name ? ` (${expected.name})` : "";
    fail(undefined, expected, message ?? `Missing expected rejection${name}.`, "rejects");
  }
  expectedMatches(thrown, expected, message, "rejects");
};

assert.doesNotReject = async (promiseOrFn, expectedOrMessage, maybeMessage) => {
  const [, message] = splitArgs(expectedOrMessage, maybeMessage);
  const thrown = await settle(promiseOrFn);
  if (thrown !== NO_EXCEPTION) {
    fail(thrown, undefined, message !== undefined ? `Got unwanted rejection: ${message}` : `Got unwanted rejection.\nActual message: "${thrown?.message}"`, "doesNotReject");
  }
};

/** assert in strict mode: equal/deepEqual (and their nots) are the strict ones. */
const strict = function strict(...args) {
  innerOk(strict, args.length, ...args);
};
Object.assign(strict, assert, {
  equal: assert.strictEqual,
  notEqual: assert.notStrictEqual,
  deepEqual: assert.deepStrictEqual,
  notDeepEqual: assert.notDeepStrictEqual,
});
strict.strict = strict;
assert.strict = strict;

module.exports = assert;
