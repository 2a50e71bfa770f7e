// Deep equality as Node's assert and util.isDeepStrictEqual define it: strict mode compares
// prototypes, type tags and primitives with Object.is; loose mode (assert.deepEqual) uses ==
// for primitives and ignores prototypes. Maps and Sets match entries regardless of order, cycles
// are followed once, Errors compare their name and message, views compare their bytes.

const { valueIs } = ops;
const tag = (value) => Object.prototype.toString.call(value);
const enumerableKeys = (value, strict) => {
  const keys = Object.keys(value);
  if (strict) for (const symbol of Object.getOwnPropertySymbols(value)) if (Object.prototype.propertyIsEnumerable.call(value, symbol)) keys.push(symbol);
  return keys;
};

const BOXED = [
  ["NumberObject", Number.prototype.valueOf],
  ["StringObject", String.prototype.valueOf],
  ["BooleanObject", Boolean.prototype.valueOf],
  ["BigIntObject", BigInt.prototype.valueOf],
  ["SymbolObject", Symbol.prototype.valueOf],
];

function isDeepEqual(a, b, strict, memo) {
  if (strict ? Object.is(a, b) : a == b || (a !== a && b !== b)) return true; // eslint-disable-line eqeqeq
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
    if (strict || typeof a === "object" || typeof b === "object" || (a === null) !== (b === null)) return false;
    return false;
  }
  if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (tag(a) !== tag(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;

  if (valueIs("Date", a)) {
    if (!valueIs("Date", b) || Date.prototype.getTime.call(a) !== Date.prototype.getTime.call(b)) return false;
  } else if (valueIs("RegExp", a)) {
    if (!valueIs("RegExp", b) || a.source !== b.source || a.flags !== b.flags || a.lastIndex !== b.lastIndex) return false;
  } else if (valueIs("NativeError", a) || a instanceof Error) {
    if (!(valueIs("NativeError", b) || b instanceof Error) || a.message !== b.message || a.name !== b.name) return false;
  } else if (ArrayBuffer.isView(a)) {
    if (!ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false;
    if (!strict && (a instanceof Float32Array || a instanceof Float64Array)) {
      for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    } else {
      const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    }
  } else if (valueIs("ArrayBuffer", a) || valueIs("SharedArrayBuffer", a)) {
    if (a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a);
    const y = new Uint8Array(b);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  } else if (BOXED.some(([kind]) => valueIs(kind, a))) {
    // Each side unboxed by its own type's valueOf (a boxed value's prototype may be another's).
    const [kind, unbox] = BOXED.find(([name]) => valueIs(name, a));
    if (!valueIs(kind, b) || !Object.is(unbox.call(a), unbox.call(b))) return false;
  } else if (valueIs("WeakMap", a) || valueIs("WeakSet", a) || valueIs("Promise", a)) {
    return false;
  }

  // Cycles: a pair seen before on this path is taken as equal.
  memo ??= { a: new Map(), b: new Map(), depth: 0 };
  const seenA = memo.a.get(a);
  if (seenA !== undefined) {
    const seenB = memo.b.get(b);
    if (seenB !== undefined) return seenA === seenB;
  }
  memo.depth++;
  memo.a.set(a, memo.depth);
  memo.b.set(b, memo.depth);
  try {
    return sameKeysAndValues(a, b, strict, memo);
  } finally {
    memo.a.delete(a);
    memo.b.delete(b);
  }
}

function sameKeysAndValues(a, b, strict, memo) {
  const keysA = enumerableKeys(a, strict);
  const keysB = enumerableKeys(b, strict);
  if (keysA.length !== keysB.length) return false;
  for (const key of keysA) {
    if (!Object.prototype.propertyIsEnumerable.call(b, key)) return false;
    if (!isDeepEqual(a[key], b[key], strict, memo)) return false;
  }
  if (Array.isArray(a) && a.length !== b.length) return false;
  if (valueIs("Map", a)) {
    if (!valueIs("Map", b) || a.size !== b.size) return false;
    const unmatched = [...b];
    outer: for (const [key, value] of a) {
      if ((typeof key !== "object" || key === null) && b.has(key)) {
        if (!isDeepEqual(value, b.get(key), strict, memo)) return false;
        const index = unmatched.findIndex(([k]) => Object.is(k, key));
        unmatched.splice(index, 1);
        continue;
      }
      for (let i = 0; i < unmatched.length; i++) {
        if (isDeepEqual(key, unmatched[i][0], strict, memo) && isDeepEqual(value, unmatched[i][1], strict, memo)) {
          unmatched.splice(i, 1);
          continue outer;
        }
      }
      return false;
    }
  } else if (valueIs("Set", a)) {
    if (!valueIs("Set", b) || a.size !== b.size) return false;
    const unmatched = [...b];
    outer: for (const value of a) {
      if ((typeof value !== "object" || value === null) && b.has(value)) {
        unmatched.splice(unmatched.findIndex((v) => Object.is(v, value)), 1);
        continue;
      }
      for (let i = 0; i < unmatched.length; i++) {
        if (isDeepEqual(value, unmatched[i], strict, memo)) {
          unmatched.splice(i, 1);
          continue outer;
        }
      }
      return false;
    }
  }
  return true;
}

exports.isDeepStrictEqual = (a, b) => isDeepEqual(a, b, true);
exports.isDeepEqual = (a, b) => isDeepEqual(a, b, false);
