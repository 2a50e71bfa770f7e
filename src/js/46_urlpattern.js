// URLPattern (WICG URLPattern standard), compiled and matched by the `urlpattern` crate; the
// compiled pattern is freed when the URLPattern object is collected. A worker without
// `urlpattern_standard` (before 2025-05-01, or with `urlpattern_original`) gets workerd's legacy
// URLPattern instead (src/js/lazy/urlpattern_legacy*.js, loaded by `internals.legacyURLPattern()`
// only for such a worker).

const COMPONENTS = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const freed = new FinalizationRegistry((id) => ops.urlPatternDrop(id));

/** A constructor/exec input as a string, or an init dictionary of the members given (as strings). */
function inputInit(input) {
  // URLPatternInit members and string inputs are USVStrings: lone surrogates become U+FFFD.
  if (typeof input === "string") return input.toWellFormed();
  if (input === null || typeof input !== "object") throw new TypeError("URLPattern: the input must be a string or a URLPatternInit object.");
  const init = {};
  for (const key of [...COMPONENTS, "baseURL"]) {
    if (input[key] !== undefined) init[key] = String(input[key]).toWellFormed();
  }
  return init;
}

/**
 * An exec()/test() init as workerd matches it: its search and hash lose their leading "?"/"#"
 * and are then canonicalized by ada's setters, which drop one more (so "??" matches as "").
 */
function matchedInit(init) {
  if (typeof init === "string") return init;
  const out = { ...init };
  if (out.search?.startsWith("?")) out.search = out.search.slice(1);
  if (out.hash?.startsWith("#")) out.hash = out.hash.slice(1);
  return out;
}

class URLPattern {
  #id;
  #parts;
  #hasRegExpGroups;

  constructor(input = {}, baseURL = undefined, options = undefined) {
    if (baseURL !== null && typeof baseURL === "object") {
      options = baseURL;
      baseURL = undefined;
    }
    const [id, parts, hasRegExpGroups] = ops.urlPatternCreate(JSON.stringify(inputInit(input)), baseURL === undefined ? undefined : String(baseURL), Boolean(options?.ignoreCase));
    this.#id = id;
    this.#parts = parts;
    this.#hasRegExpGroups = hasRegExpGroups;
    freed.register(this, id);
  }

  test(input = {}, baseURL = undefined) {
    return this.exec(input, baseURL) !== null;
  }

  exec(input = {}, baseURL = undefined) {
    if (typeof input !== "string" && baseURL !== undefined) throw new TypeError("URLPattern: a base URL may only be given with a string input.");
    const init = inputInit(input);
    const json = ops.urlPatternExec(this.#id, JSON.stringify(matchedInit(init)), baseURL === undefined ? undefined : String(baseURL));
    if (json === null) return null;
    const result = JSON.parse(json);
    // A group that did not participate in the match is undefined (JSON can only say null).
    for (const name of COMPONENTS) {
      const groups = result[name]?.groups;
      if (groups) for (const key of Object.keys(groups)) if (groups[key] === null) groups[key] = undefined;
    }
    // As workerd's: a dictionary (or a URL object) is given back as the members it read.
    result.inputs = baseURL === undefined ? [typeof input === "string" ? input : init] : [input, String(baseURL)];
    return result;
  }

  get [Symbol.toStringTag]() {
    return "URLPattern";
  }

  // One getter per component: protocol, username, …, hash; then hasRegExpGroups.
  static {
    COMPONENTS.forEach((name, index) => {
      Object.defineProperty(this.prototype, name, {
        get() {
          return this.#parts[index];
        },
        enumerable: true,
        configurable: true,
      });
    });
    Object.defineProperty(this.prototype, "hasRegExpGroups", {
      get() {
        return this.#hasRegExpGroups;
      },
      enumerable: true,
      configurable: true,
    });
  }
}

internals.defineGlobal("URLPattern", URLPattern);

/** workerd's legacy URLPattern class, compiled in this context on first use (97_compat.js). */
internals.legacyURLPattern = function legacyURLPattern() {
  if (internals.LegacyURLPattern === undefined) {
    ops.lazyScript("urlpattern_legacy_parse")(internals, ops);
    ops.lazyScript("urlpattern_legacy")(internals, ops);
  }
  return internals.LegacyURLPattern;
};
