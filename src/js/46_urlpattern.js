// URLPattern (WICG URLPattern standard), compiled and matched by the `urlpattern` crate; the
// compiled pattern is freed when the URLPattern object is collected. A worker without
// `urlpattern_standard` (before 2025-05-01, or with `urlpattern_original`) gets workerd's legacy
// URLPattern instead: the same class built with `legacy` set, which has no `hasRegExpGroups`,
// gives a group that did not match as "", accepts a baseURL beside an init dictionary, and has
// its constructor input processed by src/runtime/ops/urlpattern_legacy.rs.

const COMPONENTS = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const freed = new FinalizationRegistry((id) => ops.urlPatternDrop(id));

/** A constructor/exec input as JSON for the native side: a string, or an init dictionary. */
function inputJson(input, legacy) {
  // The legacy one takes null as {} and any other primitive as a string.
  if (legacy && (input === null || input === undefined)) input = {};
  else if (legacy && typeof input !== "object" && typeof input !== "function") input = String(input);
  // URLPatternInit members and string inputs are USVStrings: lone surrogates become U+FFFD.
  if (typeof input === "string") return JSON.stringify(input.toWellFormed());
  if (input === null || typeof input !== "object") throw new TypeError("URLPattern: the input must be a string or a URLPatternInit object.");
  const init = {};
  for (const key of [...COMPONENTS, "baseURL"]) {
    if (input[key] !== undefined) init[key] = String(input[key]).toWellFormed();
  }
  return JSON.stringify(init);
}

/** A legacy exec's init dictionary: its members as strings (a URL object gives all of its). */
function legacyMatchInit(input) {
  const init = {};
  for (const key of [...COMPONENTS, "baseURL"]) {
    if (input[key] !== undefined) init[key] = String(input[key]).toWellFormed();
  }
  return init;
}

/** `init` with each component it leaves out taken from its baseURL (a bad baseURL matches nothing). */
function legacyWithBase(init) {
  if (init.baseURL === undefined) return init;
  let base;
  try {
    base = new URL(init.baseURL);
  } catch {
    return init;
  }
  const filled = { ...init };
  for (const key of COMPONENTS) {
    if (filled[key] === undefined) filled[key] = key === "search" || key === "hash" ? base[key].slice(1) : base[key];
  }
  return filled;
}

function defineURLPattern(legacy) {
  // A group that did not participate in the match: undefined (JSON can only say null); "" in the legacy one.
  const unmatched = legacy ? "" : undefined;
  return class URLPattern {
    #id;
    #parts;
    #hasRegExpGroups;

    constructor(input = {}, baseURL = undefined, options = undefined) {
      if (baseURL !== null && typeof baseURL === "object") {
        options = baseURL;
        baseURL = undefined;
      }
      const [id, parts, hasRegExpGroups] = ops.urlPatternCreate(inputJson(input, legacy), baseURL === undefined ? undefined : String(baseURL), Boolean(options?.ignoreCase), legacy);
      this.#id = id;
      this.#parts = parts;
      this.#hasRegExpGroups = hasRegExpGroups;
      freed.register(this, id);
    }

    test(input = {}, baseURL = undefined) {
      return this.exec(input, baseURL) !== null;
    }

    exec(input = {}, baseURL = undefined) {
      if (legacy && typeof input !== "string" && (input === null || typeof input !== "object")) input = input == null ? {} : String(input);
      if (typeof input !== "string" && baseURL !== undefined) {
        throw new TypeError(legacy ? "A baseURL is not allowed when input is an object." : "URLPattern: a base URL may only be given with a string input.");
      }
      let json;
      if (legacy && typeof input !== "string") {
        // The legacy one reports the dictionary it read, and takes every member it leaves out from its baseURL.
        input = legacyMatchInit(input);
        json = ops.urlPatternExec(this.#id, JSON.stringify(legacyWithBase(input)), undefined);
      } else {
        json = ops.urlPatternExec(this.#id, inputJson(input, legacy), baseURL === undefined ? undefined : String(baseURL));
      }
      if (json === null) return null;
      const result = JSON.parse(json);
      for (const name of COMPONENTS) {
        const groups = result[name]?.groups;
        if (groups) for (const key of Object.keys(groups)) if (groups[key] === null) groups[key] = unmatched;
      }
      result.inputs = baseURL === undefined ? [input] : [input, String(baseURL)];
      return result;
    }

    get [Symbol.toStringTag]() {
      return "URLPattern";
    }

    // One getter per component: protocol, username, …, hash; and hasRegExpGroups, which the
    // legacy one does not have.
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
      if (!legacy) {
        Object.defineProperty(this.prototype, "hasRegExpGroups", {
          get() {
            return this.#hasRegExpGroups;
          },
          enumerable: true,
          configurable: true,
        });
      }
    }
  };
}

internals.defineGlobal("URLPattern", defineURLPattern(false));
// 97_compat.js makes it the global without urlpattern_standard.
internals.LegacyURLPattern = defineURLPattern(true);
