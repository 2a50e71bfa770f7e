// URLPattern (WICG URLPattern standard), compiled and matched by the `urlpattern` crate; the
// compiled pattern is freed when the URLPattern object is collected. A worker without
// `urlpattern_standard` (before 2025-05-01, or with `urlpattern_original`) gets workerd's legacy
// URLPattern instead (src/js/lazy/urlpattern_legacy*.js, loaded by `internals.legacyURLPattern()`
// only for such a worker).

const COMPONENTS = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const freed = new FinalizationRegistry((id) => ops.urlPatternDrop(id));

/** A constructor/exec input as JSON for the native side: a string, or an init dictionary. */
function inputJson(input) {
  // URLPatternInit members and string inputs are USVStrings: lone surrogates become U+FFFD.
  if (typeof input === "string") return JSON.stringify(input.toWellFormed());
  if (input === null || typeof input !== "object") throw new TypeError("URLPattern: the input must be a string or a URLPatternInit object.");
  const init = {};
  for (const key of [...COMPONENTS, "baseURL"]) {
    if (input[key] !== undefined) init[key] = String(input[key]).toWellFormed();
  }
  return JSON.stringify(init);
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
    const [id, parts, hasRegExpGroups] = ops.urlPatternCreate(inputJson(input), baseURL === undefined ? undefined : String(baseURL), Boolean(options?.ignoreCase));
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
    const json = ops.urlPatternExec(this.#id, inputJson(input), baseURL === undefined ? undefined : String(baseURL));
    if (json === null) return null;
    const result = JSON.parse(json);
    // A group that did not participate in the match is undefined (JSON can only say null).
    for (const name of COMPONENTS) {
      const groups = result[name]?.groups;
      if (groups) for (const key of Object.keys(groups)) if (groups[key] === null) groups[key] = undefined;
    }
    result.inputs = baseURL === undefined ? [input] : [input, String(baseURL)];
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
