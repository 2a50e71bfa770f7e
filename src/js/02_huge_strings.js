// Guards on the string built-ins that would abort the whole process on a huge string.
//
// V8 aborts (a "Fatal JavaScript invalid size error", no embedder callback, no exception) when a
// built-in asks for an array longer than FixedArray's maximum, 2^27 - 2 elements in this build.
// Strings can be four times that long, and `'a'.repeat(2 ** 28)` costs almost nothing until it
// is used, so `split('')`, `match(/a/g)`, `replace(/a/g, fn)` and `JSON.parse` of a long enough
// string each killed the host, whatever `memoryMb` said. Below that length the same calls end
// as ERR_MEMORY_LIMIT (they allocate through the heap, where the worker's limit applies).
//
// The wrappers here throw a RangeError instead, before the built-in runs, only when the string
// is long enough that the result could pass that maximum; otherwise they call the built-in with
// the same arguments, after the same conversions in the same order. Other array producers
// (spread, Array.from, Object.keys, the array copy methods, typed arrays) grow their result
// through the heap and meet the memory limit instead; probed in a child process each
// (__test__/memory-bombs.test.mjs keeps them).
//
// The wrappers keep the built-ins' names and lengths, and `Function.prototype.toString` shows
// them as native code (`internals.disguise`, which other files use for their replacements too).

/** Results with this many elements or more could pass V8's FixedArray maximum (2^27 - 2). */
const MAX_ELEMENTS = 2 ** 27 - 16;

const nativeToString = Function.prototype.toString;
const disguised = new WeakMap();

/** Makes `wrapper` look like `original`: name, length, and its source text as native code. */
internals.disguise = function disguise(wrapper, original, name = original.name) {
  Object.defineProperty(wrapper, "name", { value: name, configurable: true });
  Object.defineProperty(wrapper, "length", { value: original.length, configurable: true });
  disguised.set(wrapper, original);
  return wrapper;
};

const toString = {
  toString() {
    return Reflect.apply(nativeToString, disguised.get(this) ?? this, []);
  },
}.toString;
internals.disguise(toString, nativeToString);
Object.defineProperty(Function.prototype, "toString", { value: toString, writable: true, enumerable: false, configurable: true });

function tooLong(what, length, stackTop) {
  const error = new RangeError(
    `Invalid array length: ${what} on a string of ${length} characters could make more elements than an array can hold (workerbox refuses it: V8 would abort the process)`,
  );
  Error.captureStackTrace(error, stackTop);
  return error;
}

/** Whether `text` holds `MAX_ELEMENTS - 1` or more copies of the non-empty `separator`. */
function tooManyParts(text, separator) {
  if (text.length / separator.length + 1 < MAX_ELEMENTS) return false;
  let count = 0;
  for (let at = text.indexOf(separator); at !== -1; at = text.indexOf(separator, at + separator.length)) {
    if (++count + 1 >= MAX_ELEMENTS) return true;
  }
  return false;
}

/** Replaces `holder[key]` by `make(original)`, disguised as the original. */
function guard(holder, key, make) {
  const original = holder[key];
  const name = typeof key === "symbol" ? `[${key.description}]` : key;
  const wrapper = internals.disguise(make(original), original, name);
  Object.defineProperty(holder, key, { value: wrapper, writable: true, enumerable: false, configurable: true });
}

// String.prototype.split with a separator that has no @@split (a string, a number, …): the
// result has as many elements as separators found, or as characters for "". A separator with
// @@split (a RegExp) is handed to it as the specification says, so a RegExp's own guard below
// applies. The steps are the specification's: @@split lookup, ToString(this), ToUint32(limit),
// ToString(separator); the built-in then repeats the last three on values they no longer change.
guard(String.prototype, "split", (split) => ({
  split(separator, limit) {
    if (this === undefined || this === null || separator === undefined || separator === null) {
      return Reflect.apply(split, this, arguments);
    }
    if (typeof separator === "object" || typeof separator === "function") {
      const splitter = separator[Symbol.split];
      if (splitter !== undefined && splitter !== null) {
        if (typeof splitter !== "function") return Reflect.apply(split, this, arguments);
        return Reflect.apply(splitter, separator, [this, limit]);
      }
    }
    if (typeof separator === "symbol") return Reflect.apply(split, this, arguments);
    const text = `${this}`;
    const lim = limit === undefined ? undefined : limit >>> 0;
    const sep = `${separator}`;
    if (text.length + 1 >= MAX_ELEMENTS && (lim === undefined || lim >= MAX_ELEMENTS)) {
      if (sep === "" ? text.length >= MAX_ELEMENTS : tooManyParts(text, sep)) throw tooLong("split()", text.length, wrapperOf.split);
    }
    return Reflect.apply(split, text, [sep, lim]);
  },
}).split);

// The RegExp methods that collect every match (or every piece) into one array before they
// return: refused on strings that could have that many matches. `this` must be an object
// (the built-in's TypeError otherwise); the string is converted first, as the built-in does.
for (const [symbol, what] of [[Symbol.split, "a RegExp split()"], [Symbol.match, "a RegExp match()"], [Symbol.replace, "a RegExp replace()"]]) {
  guard(RegExp.prototype, symbol, (original) => {
    const wrapper = {
      method(string, ...rest) {
        if (this === null || (typeof this !== "object" && typeof this !== "function")) return Reflect.apply(original, this, arguments);
        const text = `${string}`;
        if (text.length + 1 >= MAX_ELEMENTS) throw tooLong(what, text.length, wrapper);
        return Reflect.apply(original, this, [text, ...rest]);
      },
    }.method;
    return wrapper;
  });
}

// JSON.parse: an array needs two characters an element ("0,"), so only a text of twice the
// maximum can make one too long.
guard(JSON, "parse", (parse) => ({
  parse(text, reviver) {
    const source = `${text}`;
    if (source.length >= 2 * MAX_ELEMENTS) throw tooLong("JSON.parse()", source.length, wrapperOf.parse);
    return Reflect.apply(parse, JSON, arguments.length > 1 ? [source, reviver] : [source]);
  },
}).parse);

// The installed wrappers, for Error.captureStackTrace (which hides their own frame).
const wrapperOf = { split: String.prototype.split, parse: JSON.parse };
