// Array built-ins that write millions of elements in one call, made stoppable.
//
// `Array.prototype.fill` and `Array.from` of an array-like without a mapping function run as one
// built-in call that never looks for a termination request. On a huge sparse array (`new
// Array(1e9).fill(0)`, `Array.from({ length: 1e9 })`: dictionary elements, one hash-table entry
// per element) such a call kept a core busy for 5-15 s after the worker's memory limit had
// stopped it, while its table grew the host by up to 1.35 GB; and with a CPU limit, the 2 s the
// watchdog allows terminated JS ran out first, so the worker was declared failed
// (ERR_WORKER_FAILED) instead of stopped for memory — sooner on a loaded machine.
//
// Here a long call (from LONG elements on) runs in bounded steps that a limit, or dispose(),
// can stop: `fill` hands the built-in CHUNK elements at a time from a JS loop (whose interrupt
// check takes the stop), and `Array.from` of an array-like has the built-in call a function
// of ours for each element (a call into JavaScript takes it too). Between steps the heap is
// compared with memoryMb (`ops.heapCheck`): such a table grows where no young-generation GC
// sees it, and V8's next full GC could come late. Results, the order of every observable step
// (argument conversions, reads of the array-like) and errors stay the built-ins' own; shorter
// calls, proxies, iterables and calls with a mapping function (which calls back into JS, where
// termination already applies) go to the built-ins unchanged. The wrappers keep the built-ins'
// names, lengths and `[native code]` source (`internals.disguise`, src/js/02_huge_strings.js).

/** From this many elements on, a call runs in bounded steps. */
const LONG = 2 ** 20;
/** Elements handed to the built-in `fill` at a time. */
const CHUNK = 2 ** 16;

const { apply, defineProperty } = Reflect;
const { isArray } = Array;
const { getOwnPropertyDescriptor, getPrototypeOf } = Object;
const ObjectPrototype = Object.prototype;
const ArrayConstructor = Array;
const iterator = Symbol.iterator;
const isProxy = ops.isProxy;
// Between steps: a full GC at once if the heap is over memoryMb (src/runtime/ops/heap.rs), so
// that the limit stops the loop at the next step rather than when V8 next collects.
const heapCheck = ops.heapCheck;
const { trunc, min, max } = Math;

/** ToIntegerOrInfinity (a BigInt or Symbol throws the TypeError ToNumber throws). */
function toIntegerOrInfinity(value) {
  const number = +value;
  return number !== number ? 0 : trunc(number);
}

/** A relative index (start or end) clamped to 0..len, as fill, slice and copyWithin take them. */
function relative(value, len) {
  const n = toIntegerOrInfinity(value);
  return n < 0 ? max(len + n, 0) : min(n, len);
}

/** Replaces `holder[key]` by `make(original)`, disguised as the original. */
function guard(holder, key, make) {
  const original = holder[key];
  const wrapper = internals.disguise(make(original), original, key);
  defineProperty(holder, key, { value: wrapper, writable: true, enumerable: false, configurable: true });
}

// Array.prototype.fill on an Array (not a proxy, whose traps would see the extra steps) of LONG
// elements or more: the specification's steps are ToObject, LengthOfArrayLike, start, end, then
// Set for each index in order. The length is read once (an Array's length is a data property:
// reading it again is not observable), start and end are converted once, here, and the
// built-in then fills CHUNK indices at a time with plain numbers. If a setter the fill ran
// (an index accessor on the prototype chain) shortened the array, the built-in would stop at
// the new length; those indices are then set one by one, as the specification does.
guard(Array.prototype, "fill", (fill) => ({
  fill(value, start, end) {
    if (!isArray(this) || isProxy(this)) return apply(fill, this, arguments);
    const len = this.length;
    if (len < LONG) return apply(fill, this, arguments);
    const from = relative(start, len);
    const to = end === undefined ? len : relative(end, len);
    for (let at = from; at < to; at += CHUNK) {
      const stop = min(at + CHUNK, to);
      if (this.length >= stop) {
        apply(fill, this, [value, at, stop]);
      } else {
        // Strict mode: a failed Set throws the TypeError the specification's Set(O, P, V, true) does.
        for (let i = at; i < stop; i++) this[i] = value;
      }
      heapCheck();
    }
    return this;
  },
}).fill);

// Array.from(arrayLike) on the plain Array constructor, without a mapping function, of an
// ordinary object (its prototype Object.prototype) with no @@iterator and a numeric `length`
// of LONG or more (`Array.from({ length: 1e9 })`): what the built-in checks first (@@iterator,
// length) is looked up here without running any getter. The built-in then runs with a mapping
// function of ours over a prototype-less stand-in of the same length (nothing of the user's
// runs for it), and the function reads `items[k]`: the same ArrayCreate(len), one Get of
// each index in order and CreateDataPropertyOrThrow of its value as the specification's
// array-like steps, at the built-in's speed, and the calls into JavaScript are where a stop
// takes effect.
guard(Array, "from", (from) => ({
  from(items, mapfn, thisArg) {
    // Arrays (and proxies of arrays) first, without a native call: the common case.
    if (this !== ArrayConstructor || mapfn !== undefined || typeof items !== "object" || items === null || isArray(items) || isProxy(items)) return apply(from, this, arguments);
    if (getPrototypeOf(items) !== ObjectPrototype || iterator in items) return apply(from, this, arguments);
    const length = getOwnPropertyDescriptor(items, "length");
    if (length === undefined || typeof length.value !== "number" || !(length.value >= LONG)) return apply(from, this, arguments);
    const standIn = { __proto__: null, length: length.value };
    const read = (_, k) => {
      if (k % CHUNK === 0) heapCheck();
      return items[k];
    };
    return apply(from, ArrayConstructor, [standIn, read]);
  },
}).from);
