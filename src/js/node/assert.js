// node:assert: Node's assertion functions and AssertionError (code ERR_ASSERTION, with actual,
// expected, operator and generatedMessage). Messages follow current Node's (22+) wording; the multi-line
// diffs Node prints for deep comparisons are shortened to both values inspected.

const { isDeepStrictEqual, isDeepEqual } = require("internal/comparisons");

const show = (value) => internals.inspect(value, { depth: 1000, quoteStrings: true });
const showExpanded = (value) => internals.inspect(value, { depth: 1000, quoteStrings: true, compact: false });

/** A line diff of two texts: "  " both, "+ " actual only, "- " expected only (LCS-based). */
function lineDiff(actual, expected) {
  const a = actual.split("\n");
  const b = expected.split("\n");
  const lcs = Array.from({ length: a.length + 1 }, () => new Array(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(`+ ${a[i++]}`);
    } else {
      out.push(`- ${b[j++]}`);
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

function generated(actual, expected, operator) {
  switch (operator) {
    case "strictEqual":
    case "deepStrictEqual": {
      const a = show(actual);
      const e = show(expected);
      if (!a.includes("\n") && !e.includes("\n") && (typeof actual !== "object" || actual === null) && (typeof expected !== "object" || expected === null)) {
        return `${HEADERS[operator]}\n\n${a} !== ${e}\n`;
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
assert.equal = (actual, expected, message) => {
  if (!(actual == expected || (actual !== actual && expected !== expected))) fail(actual, expected, message, "=="); // eslint-disable-line eqeqeq
};
assert.notEqual = (actual, expected, message) => {
  if (actual == expected || (actual !== actual && expected !== expected)) fail(actual, expected, message, "!="); // eslint-disable-line eqeqeq
};
assert.strictEqual = (actual, expected, message) => {
  if (!Object.is(actual, expected)) fail(actual, expected, message, "strictEqual");
};
assert.notStrictEqual = (actual, expected, message) => {
  if (Object.is(actual, expected)) fail(actual, expected, message, "notStrictEqual");
};
assert.deepEqual = (actual, expected, message) => {
  if (!isDeepEqual(actual, expected)) fail(actual, expected, message, "deepEqual");
};
assert.notDeepEqual = (actual, expected, message) => {
  if (isDeepEqual(actual, expected)) fail(actual, expected, message, "notDeepEqual");
};
assert.deepStrictEqual = (actual, expected, message) => {
  if (!isDeepStrictEqual(actual, expected)) fail(actual, expected, message, "deepStrictEqual");
};
assert.notDeepStrictEqual = (actual, expected, message) => {
  if (isDeepStrictEqual(actual, expected)) fail(actual, expected, message, "notDeepStrictEqual");
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
