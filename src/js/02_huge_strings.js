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
// them as native code (`internals.disguise`, which other files use for their replacements too),
// as it does every function of the runtime's own (`ops.runtimeFunction`).

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

const { apply } = Reflect;
const { getOwnPropertyDescriptor } = Object;
const runtimeFunction = ops.runtimeFunction;

/**
 * The runtime's own functions (API classes, their methods, `fetch`, …) read as native code, as
 * workerd's are: `function name() { [native code] }`, with no name for an accessor. Libraries
 * that test for native functions (`isNativeFunction(fetch)`) then take the path they take on
 * Workers. The worker's own functions keep their source.
 */
function nativeForm(target, shown) {
  const name = getOwnPropertyDescriptor(shown, "name")?.value ?? getOwnPropertyDescriptor(target, "name")?.value;
  const plain = typeof name === "string" && !/^(get|set) /.test(name) ? name : "";
  return `function ${plain}() { [native code] }`;
}

/**
 * A function's source text as V8 has it (of the original, for a disguised wrapper), for the
 * runtime's own checks (97_compat.js tells its classes apart).
 */
internals.functionSource = (fn) => apply(nativeToString, disguised.get(fn) ?? fn, []);

const toString = {
  toString() {
    const target = disguised.get(this) ?? this;
    if (typeof target === "function" && runtimeFunction(target)) return nativeForm(target, this);
    return apply(nativeToString, target, []);
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
        // See regexpReplaceLong below.
        if (symbol === Symbol.replace && text.length >= LONG_REPLACE) return regexpReplaceLong(this, text, rest[0]);
        return Reflect.apply(original, this, [text, ...rest]);
      },
    }.method;
    return wrapper;
  });
}

// RegExp.prototype[@@replace] on a long string: V8's built-in replaces every match of a global
// RegExp in one call that, like replaceAll above, never looks for a termination request. From
// LONG_REPLACE characters on, the specification's steps run here instead (RegExpExec, lastIndex
// and AdvanceStringIndex for empty matches, then each replacement: the replacer's arguments or
// GetSubstitution with $1-$99 and $<name>), where limits.cpuMs and dispose() can stop them.
const regexpExec = RegExp.prototype.exec;
const LONG_REPLACE = 2 ** 20;
const JOIN_PIECES = 2 ** 16;

/** A long result built from pieces, joined a bounded number at a time. */
function joiner() {
  let done = "";
  let batch = [];
  return {
    add(...parts) {
      batch.push(...parts);
      if (batch.length >= JOIN_PIECES) {
        done += batch.join("");
        batch = [];
      }
    },
    result: () => done + batch.join(""),
  };
}

function toLength(value) {
  const n = Math.trunc(Number(value));
  return Number.isNaN(n) || n <= 0 ? 0 : Math.min(n, Number.MAX_SAFE_INTEGER);
}

function toIntegerOrInfinity(value) {
  const n = Math.trunc(Number(value));
  return Number.isNaN(n) ? 0 : n;
}

function execFor(rx, text) {
  const exec = rx.exec;
  if (typeof exec === "function") {
    const result = Reflect.apply(exec, rx, [text]);
    if (result !== null && typeof result !== "object" && typeof result !== "function") throw new TypeError("RegExp exec method returned something other than an Object or null");
    return result;
  }
  return Reflect.apply(regexpExec, rx, [text]);
}

/** GetSubstitution: `template` with its $ patterns filled in. */
function substitution(matched, text, position, captures, named, template) {
  let out = "";
  let i = 0;
  while (i < template.length) {
    const dollar = template.indexOf("$", i);
    if (dollar === -1 || dollar === template.length - 1) {
      out += template.slice(i);
      break;
    }
    out += template.slice(i, dollar);
    const next = template[dollar + 1];
    i = dollar + 2;
    if (next === "$") out += "$";
    else if (next === "&") out += matched;
    else if (next === "`") out += text.slice(0, position);
    else if (next === "'") out += text.slice(Math.min(position + matched.length, text.length));
    else if (next >= "0" && next <= "9") {
      const two = template[dollar + 2];
      let index = Number(next);
      let width = 1;
      if (two >= "0" && two <= "9" && index * 10 + Number(two) >= 1 && index * 10 + Number(two) <= captures.length) {
        index = index * 10 + Number(two);
        width = 2;
      }
      if (index >= 1 && index <= captures.length) {
        out += captures[index - 1] ?? "";
        i = dollar + 1 + width;
      } else {
        out += "$" + next;
      }
    } else if (next === "<" && named !== undefined) {
      const close = template.indexOf(">", dollar + 2);
      if (close === -1) {
        out += "$<";
      } else {
        const value = named[template.slice(dollar + 2, close)];
        if (value !== undefined) out += `${value}`;
        i = close + 1;
      }
    } else {
      out += "$" + next;
    }
  }
  return out;
}

function regexpReplaceLong(rx, text, replaceValue) {
  const functional = typeof replaceValue === "function";
  const template = functional ? undefined : `${replaceValue}`;
  const flags = `${rx.flags}`;
  const global = flags.includes("g");
  const fullUnicode = global && (flags.includes("u") || flags.includes("v"));
  if (global) rx.lastIndex = 0;
  const results = [];
  for (;;) {
    const result = execFor(rx, text);
    if (result === null) break;
    results.push(result);
    if (!global) break;
    if (`${result[0]}` === "") {
      const at = toLength(rx.lastIndex);
      const wide = fullUnicode && at + 1 < text.length && text.codePointAt(at) > 0xffff;
      rx.lastIndex = at + (wide ? 2 : 1);
    }
  }
  const out = joiner();
  let next = 0;
  for (const result of results) {
    const count = Math.max(toLength(result.length) - 1, 0);
    const matched = `${result[0]}`;
    const position = Math.max(Math.min(toIntegerOrInfinity(result.index), text.length), 0);
    const captures = [];
    for (let n = 1; n <= count; n++) {
      const capture = result[n];
      captures.push(capture === undefined ? undefined : `${capture}`);
    }
    const groups = result.groups;
    let replacement;
    if (functional) {
      const args = [matched, ...captures, position, text];
      if (groups !== undefined) args.push(groups);
      replacement = `${Reflect.apply(replaceValue, undefined, args)}`;
    } else {
      replacement = substitution(matched, text, position, captures, groups === undefined ? undefined : Object(groups), template);
    }
    if (position >= next) {
      out.add(text.slice(next, position), replacement);
      next = position + matched.length;
    }
  }
  if (next < text.length) out.add(text.slice(next));
  return out.result();
}

// JSON.parse: an array needs two characters an element ("0,"), so only a text of twice the
// maximum can make one too long.
//
// Nesting is the other way JSON.parse grows the host: V8's parser keeps a frame per open `[` or
// `{` in a C++ vector, outside the heap and its limits (about 40 bytes each, 80 while the vector
// doubles): `JSON.parse('['.repeat(1e7))` grew the host by 660 MB under memoryMb 128 before it
// threw its SyntaxError, and no heap limit or near-heap-limit callback sees that memory. So a
// text that nests deeper than JSON_LEVELS_PER_MB × memoryMb levels (a million at the default
// 128 MB: about 85 MB of frames) is refused with a RangeError before V8 parses it. Only a text
// with that many `[`/`{` characters in all is scanned (counted with indexOf, a few ms for 7 MB;
// the full scan, which skips string contents, about a third of the parse's time).
const JSON_LEVELS_PER_MB = 8192;
let maxJsonDepth = Infinity;

/** Sets the nesting JSON.parse accepts from the worker's memoryMb (per context, prepareContext). */
internals.limitJsonNesting = (memoryMb) => {
  maxJsonDepth = memoryMb > 0 ? memoryMb * JSON_LEVELS_PER_MB : Infinity;
};

/** Whether `text` has more than `limit` `[` and `{` characters in all (strings included). */
function manyOpeners(text, limit) {
  let count = 0;
  for (const opener of ["[", "{"]) {
    for (let at = text.indexOf(opener); at !== -1; at = text.indexOf(opener, at + 1)) {
      if (++count > limit) return true;
    }
  }
  return false;
}

/** Whether JSON `text` opens more than `limit` arrays or objects inside each other. */
function nestsDeeper(text, limit) {
  if (text.length <= limit || !manyOpeners(text, limit)) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // A string: its brackets do not count; skip to the closing quote (past escapes).
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 92) i++;
        else if (d === 34) break;
      }
    } else if (c === 91 || c === 123) {
      if (++depth > limit) return true;
    } else if (c === 93 || c === 125) {
      depth--;
    }
  }
  return false;
}

guard(JSON, "parse", (parse) => ({
  parse(text, reviver) {
    const source = `${text}`;
    if (source.length >= 2 * MAX_ELEMENTS) throw tooLong("JSON.parse()", source.length, wrapperOf.parse);
    if (nestsDeeper(source, maxJsonDepth)) {
      const error = new RangeError(
        `JSON.parse(): the text nests arrays and objects more than ${maxJsonDepth} levels deep; V8 would hold about 80 bytes per level outside the heap, past limits.memoryMb (workerbox refuses it)`,
      );
      Error.captureStackTrace(error, wrapperOf.parse);
      throw error;
    }
    return Reflect.apply(parse, JSON, arguments.length > 1 ? [source, reviver] : [source]);
  },
}).parse);

// String.prototype.replaceAll with a search string (not a RegExp): V8 finds and copies every
// match in one built-in call that never looks for a termination request, so on a string of tens
// of millions of characters neither limits.cpuMs nor dispose() could stop it (the worker was
// declared failed, and a core stayed busy for half a minute). On long strings the same steps
// run here in JavaScript, which a limit can stop: the matches are found with indexOf, and each
// replacement is made by the same GetSubstitution as the RegExp path above (a string pattern
// has no captures). Shorter strings, RegExp patterns and objects with @@replace go to the
// built-in as before.
guard(String.prototype, "replaceAll", (replaceAll) => ({
  replaceAll(searchValue, replaceValue) {
    if (this === undefined || this === null || searchValue === undefined || searchValue === null || typeof searchValue === "object" || typeof searchValue === "function" || typeof searchValue === "symbol") {
      return Reflect.apply(replaceAll, this, arguments);
    }
    const text = `${this}`;
    if (text.length < LONG_REPLACE) return Reflect.apply(replaceAll, text, [searchValue, replaceValue]);
    const search = `${searchValue}`;
    const functional = typeof replaceValue === "function";
    const replacement = functional ? undefined : `${replaceValue}`;
    const step = Math.max(1, search.length);
    // A string pattern has no captures: GetSubstitution leaves $1 and $<name> as they are.
    const substitute = (at) => (functional ? `${replaceValue(search, at, text)}` : substitution(search, text, at, [], undefined, replacement));
    const out = joiner();
    let end = 0;
    // One pass: the replacer cannot change the string, so finding all matches first (as the
    // specification words it) and replacing as they are found give the same calls and result.
    for (let at = text.indexOf(search, 0); at !== -1; ) {
      out.add(text.slice(end, at), substitute(at));
      end = at + search.length;
      const from = at + step;
      // An empty search string also matches at the very end, once.
      if (from > text.length) break;
      at = text.indexOf(search, from);
    }
    out.add(text.slice(end));
    return out.result();
  },
}).replaceAll);

// The installed wrappers, for Error.captureStackTrace (which hides their own frame).
const wrapperOf = { split: String.prototype.split, parse: JSON.parse };
