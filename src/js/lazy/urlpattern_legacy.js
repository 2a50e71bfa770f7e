// workerd's legacy URLPattern (the one a worker gets without `urlpattern_standard`: before
// 2025-05-01, or with `urlpattern_original`), in plain JavaScript. It follows workerd's own
// implementation (jsg/url.c++ and api/urlpattern.c++) rather than the WICG standard, quirks
// included: a pattern string is tokenized as UTF-8 bytes (error positions count bytes),
// constructor-string components it leaves out are "" rather than "*", a hostname pattern is
// canonicalized with a non-special scheme (so its case is kept), an init dictionary's baseURL fills
// in every component, a group that did not match is "", and each component's regexp is a
// JavaScript RegExp with the `u` flag (plus `i` with ignoreCase). The parsing half (tokenizer,
// pattern parser, regexp and pattern-string generation) is in urlpattern_legacy_parse.js and
// reaches this file as `internals.legacyUrlPatternParse`. This file owns the canonicalizers, the
// constructor-string parser, processInit and the class, which it leaves as
// `internals.LegacyURLPattern` (97_compat.js makes it the global). Both files are compiled only
// for a worker that gets this class (src/js/lazy/, `internals.legacyURLPattern()`).
"use strict";

// The standard URL class (the global may be workerd's older one, before url_standard).
const WhatwgURL = internals.URL;
const regexpExec = RegExp.prototype.exec;
const COMPONENT_NAMES = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const INIT_KEYS = [...COMPONENT_NAMES, "baseURL"];
const SPECIAL_SCHEMES = ["http", "https", "ws", "wss", "ftp"];

// urlpattern_legacy_parse.js, loaded just before this file (46_urlpattern.js).
const parser = internals.legacyUrlPatternParse;

// ---------------------------------------------------------------------------------------------
// URL helpers: workerd uses its own URL parser (ada) with setters that report failure; the
// WHATWG URL class only ignores a value it rejects, so a setter's success is judged by setting
// the same value on two URLs that differ in that member: they agree afterwards only if it took.

// workerd hands JavaScript strings to C++ as UTF-8 in which a lone surrogate keeps its own
// 3-byte sequence (which its URL parser then percent-encodes), and a string coming back turns each
// such byte into U+FFFD.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const hexByte = (byte) => `%${byte.toString(16).toUpperCase()}`;
const toKjString = (value) => String(value);
const fromKjString = (text) => text.replace(LONE_SURROGATE, "\ufffd\ufffd\ufffd");
const forUrl = (text) =>
  text.replace(LONE_SURROGATE, (c) => {
    const unit = c.charCodeAt(0);
    return hexByte(0xe0 | (unit >> 12)) + hexByte(0x80 | ((unit >> 6) & 0x3f)) + hexByte(0x80 | (unit & 0x3f));
  });

function parseUrl(input, base = undefined) {
  try {
    return base === undefined ? new WhatwgURL(forUrl(input)) : new WhatwgURL(forUrl(input), forUrl(base));
  } catch {
    return null;
  }
}

const TWIN_VALUES = { hostname: ["fake-url", "fake-url-twin"], port: ["", "1"] };

/** Sets `url[key] = value`; false if the URL rejected it (then `url` is unchanged). */
function setChecked(url, key, value) {
  const twin = new WhatwgURL(url.href);
  const [first, second] = TWIN_VALUES[key];
  twin[key] = twin[key] === first ? second : first;
  url[key] = forUrl(value);
  twin[key] = forUrl(value);
  return url[key] === twin[key];
}

const dummyUrl = () => new WhatwgURL("fake://dummy.test");
const withoutColon = (protocol) => (protocol.endsWith(":") ? protocol.slice(0, -1) : protocol);
const afterFirst = (text) => (text.length > 0 ? text.slice(1) : "");

// ---------------------------------------------------------------------------------------------
// Canonicalizers: each takes a piece of fixed pattern text and gives its canonical form, or
// null when the piece is not valid for its component.

function isForbiddenHostChar(c) {
  return "\0\t\n\r #%/:<>?@[\\]^|".includes(c);
}

function looksLikeIpv6(hostname) {
  if (hostname.length < 2) return false;
  return hostname[0] === "[" || ((hostname[0] === "{" || hostname[0] === "\\") && hostname[1] === "[");
}

function isValidHostnameInput(hostname) {
  return looksLikeIpv6(hostname) || ![...hostname].some(isForbiddenHostChar);
}

const canonicalize = {
  protocol(value) {
    if (value === "") return "";
    const url = parseUrl(`${value}://dummy.test`);
    return url === null ? null : withoutColon(url.protocol);
  },
  username(value) {
    if (value === "") return "";
    const url = dummyUrl();
    url.username = forUrl(value);
    return url.username;
  },
  password(value) {
    if (value === "") return "";
    const url = dummyUrl();
    url.password = forUrl(value);
    return url.password;
  },
  hostname(value) {
    if (value === "") return "";
    const url = dummyUrl();
    if (!isValidHostnameInput(value) || !setChecked(url, "hostname", value)) return null;
    return url.hostname;
  },
  ipv6Hostname(value) {
    return /^[0-9a-fA-F[\]:]*$/.test(value) ? value : null;
  },
  port(value) {
    if (value === "") return "";
    const url = dummyUrl();
    if (!setChecked(url, "port", value)) return null;
    return url.port;
  },
  pathname(value) {
    if (value === "") return "";
    const leadingSlash = value[0] === "/";
    const url = parseUrl(`fake://fake-url${leadingSlash ? "" : "/-"}${value}`);
    if (url === null) return null;
    const result = url.pathname;
    return leadingSlash || result.length < 2 ? result : result.slice(2);
  },
  opaquePathname(value) {
    if (value === "") return "";
    const url = parseUrl(`fake:${value}`);
    return url === null ? null : url.pathname;
  },
  search(value) {
    if (value === "") return "";
    const url = dummyUrl();
    url.search = forUrl(value);
    return afterFirst(url.search);
  },
  hash(value) {
    if (value === "") return "";
    const url = dummyUrl();
    url.hash = forUrl(value);
    return afterFirst(url.hash);
  },
};

// ---------------------------------------------------------------------------------------------
// Compiling components.

/** One component: its pattern string, regexp source and group names; or an error message. */
function compileComponent(input, canonicalizer, options) {
  const parts = parser.parsePattern(input === undefined ? "*" : input, canonicalizer, options);
  if (typeof parts === "string") return parts;
  return {
    pattern: parser.generatePatternString(parts, options),
    ...parser.generateRegex(parts, options),
  };
}

/**
 * Whether a protocol component's regexp matches one of the special schemes. workerd runs it
 * through C++'s std::regex (libc++, ECMAScript grammar: no lookbehind, named groups or escaped
 * letters beyond the classic ones), and a regexp that cannot compile there escapes as an internal
 * error. (The workerd that Miniflare 4.20260426 ships has no length limit here; newer sources give
 * up on regexps over 5120 characters and treat a failure as "no".)
 */
function protocolMatchesSpecialScheme(regex) {
  let compiled = null;
  if (libcxxAccepts(regex)) {
    try {
      compiled = new RegExp(regex);
    } catch {}
  }
  if (compiled === null) throw internalError();
  return SPECIAL_SCHEMES.some((scheme) => {
    const match = Reflect.apply(regexpExec, compiled, [scheme]);
    return match !== null && match[0] === scheme;
  });
}

/** Roughly what libc++'s ECMAScript std::regex refuses beyond what a JavaScript RegExp does. */
function libcxxAccepts(regex) {
  let inClass = false;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i];
    if (c === "\\") {
      const next = regex[++i];
      if (next === undefined || (/[a-zA-Z]/.test(next) && !"bBdDsSwWfnrtvcxu".includes(next))) return false;
    } else if (inClass) {
      if (c === "]") inClass = false;
    } else if (c === "[") {
      inClass = true;
      if (regex[i + 1] === "^") i++;
    } else if (c === "]" || c === "}" || (c === "(" && regex.startsWith("?<", i + 1))) {
      return false;
    } else if (c === "{") {
      const quantifier = /^\{\d+(,\d*)?\}/.exec(regex.slice(i));
      if (quantifier === null) return false;
      i += quantifier[0].length - 1;
    }
  }
  return true;
}

/** workerd's answer to a C++ exception it did not expect: an Error naming a random reference. */
function internalError() {
  let reference = "";
  for (let i = 0; i < 24; i++) reference += "0123456789abcdefghijklmnopqrstuvwxyz"[Math.floor(Math.random() * 36)];
  return new Error(`internal error; reference = ${reference}`);
}

/** Compiles a processed init into 8 components, or gives an error message. */
function compileInit(init) {
  const protocol = compileComponent(init.protocol, canonicalize.protocol, parser.COMPONENT_DEFAULT);
  if (typeof protocol === "string") return protocol;
  const special = protocolMatchesSpecialScheme(protocol.regex);
  const hostnameCanonicalizer = init.hostname !== undefined && looksLikeIpv6(init.hostname) ? canonicalize.ipv6Hostname : canonicalize.hostname;
  const { COMPONENT_DEFAULT, COMPONENT_HOSTNAME, COMPONENT_PATHNAME } = parser;
  const steps = [
    ["username", canonicalize.username, COMPONENT_DEFAULT],
    ["password", canonicalize.password, COMPONENT_DEFAULT],
    ["hostname", hostnameCanonicalizer, COMPONENT_HOSTNAME],
    ["port", canonicalize.port, COMPONENT_DEFAULT],
    ["pathname", special ? canonicalize.pathname : canonicalize.opaquePathname, special ? COMPONENT_PATHNAME : COMPONENT_DEFAULT],
    ["search", canonicalize.search, COMPONENT_DEFAULT],
    ["hash", canonicalize.hash, COMPONENT_DEFAULT],
  ];
  const components = [protocol];
  for (const [name, canonicalizer, options] of steps) {
    const component = compileComponent(init[name], canonicalizer, options);
    if (typeof component === "string") return component;
    components.push(component);
  }
  return components;
}

// ---------------------------------------------------------------------------------------------
// The constructor string: split into an init dictionary by walking its (lenient) tokens.

const STATE = { INIT: 0, PROTOCOL: 1, AUTHORITY: 2, USERNAME: 3, PASSWORD: 4, HOSTNAME: 5, PORT: 6, PATHNAME: 7, SEARCH: 8, HASH: 9, DONE: 10 };
const STATE_MEMBER = { 1: "protocol", 3: "username", 4: "password", 5: "hostname", 6: "port", 7: "pathname", 8: "search", 9: "hash" };

function parseConstructorString(input, baseUrl) {
  const result = { baseUrl };
  const { tokenize, decodeBytes, TOKEN } = parser;
  const { bytes, tokens } = tokenize(input, false);
  let state = STATE.INIT;
  let it = 0;
  let start = 0;
  let inc = 0;
  let depth = 0;
  let ipv6Depth = 0;

  const rewind = (newState = undefined) => {
    it = start;
    inc = 0;
    if (newState !== undefined) state = newState;
  };
  const componentString = () => decodeBytes(bytes.slice(tokens[start].index, tokens[it].index));
  const changeState = (newState, skip) => {
    const member = STATE_MEMBER[state];
    if (member !== undefined) result[member] = componentString();
    state = newState;
    it += skip;
    start = it;
    inc = 0;
  };
  const isPlainChar = (at, c) => {
    const token = tokens[at];
    return (token.type === TOKEN.CHAR || token.type === TOKEN.ESCAPED_CHAR || token.type === TOKEN.INVALID_CHAR) && token.single && token.value === c;
  };
  const isSearchPrefix = () => {
    if (isPlainChar(it, "?")) return true;
    const token = tokens[it];
    if (!(token.single && token.value === "?")) return false;
    if (it === 0) return true;
    const previous = tokens[it - 1].type;
    return previous !== TOKEN.NAME && previous !== TOKEN.REGEXP && previous !== TOKEN.CLOSE && previous !== TOKEN.ASTERISK;
  };
  const isHashPrefix = () => isPlainChar(it, "#");
  const isPathnameStart = () => isPlainChar(it, "/");

  while (it < tokens.length) {
    const token = tokens[it];
    inc = 1;
    if (token.type === TOKEN.END) {
      if (state === STATE.INIT) {
        rewind();
        if (isHashPrefix()) {
          changeState(STATE.HASH, 1);
        } else if (isSearchPrefix()) {
          changeState(STATE.SEARCH, 1);
          result.hash = "";
        } else {
          changeState(STATE.PATHNAME, 0);
          result.search = "";
          result.hash = "";
        }
        continue;
      }
      if (state === STATE.AUTHORITY) {
        rewind(STATE.HOSTNAME);
        continue;
      }
      changeState(STATE.DONE, 0);
      break;
    }
    if (token.type === TOKEN.OPEN) {
      depth++;
      it += inc;
      continue;
    }
    if (depth > 0) {
      if (token.type === TOKEN.CLOSE) {
        depth--;
      } else {
        it += inc;
        continue;
      }
    }

    switch (state) {
      case STATE.INIT:
        if (isPlainChar(it, ":")) {
          for (const name of COMPONENT_NAMES.slice(1)) result[name] = "";
          rewind(STATE.PROTOCOL);
        }
        break;
      case STATE.PROTOCOL:
        // workerd works out whether the protocol is a special scheme here (which can fail as an
        // internal error) but never uses the answer: the pathname is not defaulted to "/" and
        // "https:foo" is not an authority.
        if (isPlainChar(it, ":")) {
          const protocol = compileComponent(componentString(), canonicalize.protocol, parser.COMPONENT_DEFAULT);
          if (typeof protocol !== "string") protocolMatchesSpecialScheme(protocol.regex);
          if (isPlainChar(it + 1, "/") && isPlainChar(it + 2, "/")) changeState(STATE.AUTHORITY, 3);
          else changeState(STATE.PATHNAME, 1);
        }
        break;
      case STATE.AUTHORITY:
        if (isPlainChar(it, "@")) rewind(STATE.USERNAME);
        else if (isPathnameStart() || isSearchPrefix() || isHashPrefix()) rewind(STATE.HOSTNAME);
        break;
      case STATE.USERNAME:
        if (isPlainChar(it, ":")) changeState(STATE.PASSWORD, 1);
        else if (isPlainChar(it, "@")) changeState(STATE.HOSTNAME, 1);
        break;
      case STATE.PASSWORD:
        if (isPlainChar(it, "@")) changeState(STATE.HOSTNAME, 1);
        break;
      case STATE.HOSTNAME:
        if (isPlainChar(it, "[")) ipv6Depth++;
        else if (isPlainChar(it, "]")) ipv6Depth--;
        else if (isPlainChar(it, ":") && ipv6Depth === 0) changeState(STATE.PORT, 1);
        else if (isPathnameStart()) changeState(STATE.PATHNAME, 0);
        else if (isSearchPrefix()) changeState(STATE.SEARCH, 1);
        else if (isHashPrefix()) changeState(STATE.HASH, 1);
        break;
      case STATE.PORT:
        if (isPathnameStart()) changeState(STATE.PATHNAME, 0);
        else if (isSearchPrefix()) changeState(STATE.SEARCH, 1);
        else if (isHashPrefix()) changeState(STATE.HASH, 1);
        break;
      case STATE.PATHNAME:
        if (isSearchPrefix()) changeState(STATE.SEARCH, 1);
        else if (isHashPrefix()) changeState(STATE.HASH, 1);
        break;
      case STATE.SEARCH:
        if (isHashPrefix()) changeState(STATE.HASH, 1);
        break;
      default:
        break;
    }
    it += inc;
  }

  if (result.protocol === undefined && result.baseUrl === undefined) {
    return "Syntax error in URL Pattern: a relative pattern must have a base URL.";
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// processInit: an init dictionary made ready for compiling (pattern mode) or matching (URL mode).

function processInit(init, urlMode) {
  const result = {};
  let baseUrl = null;
  if (init.baseUrl !== undefined) {
    baseUrl = parseUrl(init.baseUrl);
    if (baseUrl === null) return "Invalid base URL.";
    result.protocol = withoutColon(baseUrl.protocol);
    result.username = baseUrl.username;
    result.password = baseUrl.password;
    result.hostname = baseUrl.hostname;
    result.port = baseUrl.port;
    result.pathname = parser.escapePatternString(baseUrl.pathname);
    result.search = parser.escapePatternString(afterFirst(baseUrl.search));
    result.hash = parser.escapePatternString(afterFirst(baseUrl.hash));
  }
  return urlMode ? processUrlInit(init, result, baseUrl) : processPatternInit(init, result, baseUrl);
}

function processPatternInit(init, result, baseUrl) {
  if (init.protocol !== undefined) result.protocol = init.protocol === "" ? "" : withoutColon(init.protocol);
  if (init.username !== undefined) result.username = init.username;
  if (init.password !== undefined) result.password = init.password;
  if (init.hostname !== undefined) result.hostname = init.hostname;
  if (init.port !== undefined) result.port = init.port;
  if (init.pathname !== undefined) {
    const pathname = init.pathname;
    if (pathname.length > 0 && (pathname[0] === "/" || ((pathname[0] === "\\" || pathname[0] === "{") && pathname[1] === "/"))) {
      result.pathname = pathname;
    } else if (baseUrl !== null) {
      const basePathname = baseUrl.pathname;
      const slash = basePathname.lastIndexOf("/");
      result.pathname = slash >= 0 ? basePathname.slice(0, slash + 1) + pathname : basePathname;
    } else {
      result.pathname = pathname;
    }
  }
  if (init.search !== undefined) result.search = init.search[0] === "?" ? init.search.slice(1) : init.search;
  if (init.hash !== undefined) result.hash = init.hash[0] === "#" ? init.hash.slice(1) : init.hash;
  return result;
}

function processUrlInit(init, result, baseUrl) {
  let url;
  let isAbsolute = false;
  if (init.protocol !== undefined) {
    const protocol = init.protocol;
    const empty = protocol === "";
    url = parseUrl(`${empty ? "fake:" : protocol}${empty || protocol.endsWith(":") ? "" : ":"}//a:b@fake-url`);
    if (url === null) return "Invalid URL protocol component";
    if (!empty) result.protocol = withoutColon(url.protocol);
    isAbsolute = true;
  } else if (result.protocol !== undefined) {
    url = new WhatwgURL(`${result.protocol}://fake-url`);
  } else {
    url = new WhatwgURL("fake://fake-url");
  }

  if (init.username !== undefined) {
    url.username = forUrl(init.username);
    result.username = url.username;
  }
  if (init.password !== undefined) {
    url.password = forUrl(init.password);
    result.password = url.password;
  }
  if (init.hostname !== undefined) {
    if (!isValidHostnameInput(init.hostname) || !setChecked(url, "hostname", init.hostname)) return "Invalid URL hostname component";
    result.hostname = url.hostname;
  }
  if (init.port !== undefined) {
    const port = init.port;
    if (port.length > 5 || !/^[0-9]*$/.test(port)) return "Invalid URL port component";
    if (port === "") url.port = "";
    else if (!setChecked(url, "port", port)) return "Invalid URL port component";
    result.port = url.port;
  }
  if (init.pathname !== undefined) {
    if (!isAbsolute && baseUrl !== null) {
      const resolved = parseUrl(init.pathname, baseUrl.href);
      if (resolved === null) return "Invalid URL pathname component";
      result.pathname = resolved.pathname;
    } else {
      url.pathname = forUrl(init.pathname);
      result.pathname = url.pathname;
    }
  }
  if (init.search !== undefined) {
    url.search = forUrl(init.search);
    result.search = afterFirst(url.search);
  }
  if (init.hash !== undefined) {
    url.hash = forUrl(init.hash);
    result.hash = afterFirst(url.hash);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The class.

/** A URLPatternInit dictionary as workerd reads one: each member given, as a string. */
function readInit(input) {
  const init = {};
  for (const key of INIT_KEYS) {
    const value = input[key];
    if (value !== undefined) init[key] = toKjString(value);
  }
  return init;
}

/** A constructor/exec input: a string, or (for an object, null or nothing) an init dictionary. */
function readInput(input) {
  if (input === undefined || input === null) return {};
  if (typeof input === "object" || typeof input === "function") return readInit(input);
  return toKjString(input);
}

function toPatternInit(init) {
  const { baseURL, ...rest } = init;
  return baseURL === undefined ? rest : { ...rest, baseUrl: baseURL };
}

function compileRegExp(source, ignoreCase) {
  try {
    return new RegExp(source, ignoreCase ? "ui" : "u");
  } catch {
    throw new TypeError("Invalid regular expression syntax.");
  }
}

// workerd's URLPattern is an API class, not a JavaScript one: calling it without `new` and
// using its members on another object fail with workerd's own messages, and its prototype has
// the component getters, then `test` and `exec` (all enumerable), then `constructor`.
const patterns = new WeakMap();

function componentsOf(pattern) {
  const components = patterns.get(pattern);
  if (components === undefined) {
    throw new TypeError("Illegal invocation: function called with incorrect `this` reference. See https://developers.cloudflare.com/workers/observability/errors/#illegal-invocation-errors for details.");
  }
  return components;
}

function URLPattern(input = undefined, baseURL = undefined, options = undefined) {
  if (new.target === undefined) {
    throw new TypeError("Failed to construct 'URLPattern': Please use the 'new' operator, this object constructor cannot be called as a function.");
  }
  input = readInput(input);
  let base;
  let ignoreCase;
  if (baseURL === null || typeof baseURL === "object" || typeof baseURL === "function") {
    ignoreCase = Boolean(baseURL?.ignoreCase);
  } else if (baseURL !== undefined) {
    base = toKjString(baseURL);
  }
  if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
    throw new TypeError("Failed to construct 'URLPattern': constructor parameter 3 is not of type 'URLPatternOptions'.");
  }
  if (ignoreCase === undefined && options !== undefined && options !== null) ignoreCase = Boolean(options.ignoreCase);
  ignoreCase = Boolean(ignoreCase);

  let init;
  if (typeof input === "string") {
    init = parseConstructorString(input, base);
    if (typeof init === "string") throw new TypeError(init);
  } else {
    init = toPatternInit(input);
  }
  const processed = processInit(init, false);
  if (typeof processed === "string") throw new TypeError(processed);
  const components = compileInit(processed);
  if (typeof components === "string") throw new TypeError(components);
  patterns.set(this, components.map(({ pattern, regex, names }) => ({ pattern, names, regexp: compileRegExp(regex, ignoreCase) })));
}

function exec(components, input, baseURL) {
  input = readInput(input);
  const base = baseURL === undefined ? undefined : toKjString(baseURL);
  let values;
  let inputs;
  if (typeof input === "string") {
    const url = parseUrl(input, base);
    if (url === null) return null;
    values = [withoutColon(url.protocol), url.username, url.password, url.hostname, url.port, url.pathname, afterFirst(url.search), afterFirst(url.hash)];
    inputs = base === undefined ? [fromKjString(input)] : [fromKjString(input), fromKjString(base)];
  } else {
    if (base !== undefined) throw new TypeError("A baseURL is not allowed when input is an object.");
    const copy = {};
    for (const key of INIT_KEYS) if (input[key] !== undefined) copy[key] = fromKjString(input[key]);
    inputs = [copy];
    const processed = processInit(toPatternInit(input), true);
    if (typeof processed === "string") throw new TypeError(processed);
    values = COMPONENT_NAMES.map((name) => processed[name] ?? "");
  }

  const result = { inputs };
  for (let i = 0; i < COMPONENT_NAMES.length; i++) {
    const { regexp, names } = components[i];
    const match = Reflect.apply(regexpExec, regexp, [values[i]]);
    if (match === null) return null;
    const groups = {};
    names.forEach((name, index) => {
      const value = match[index + 1];
      groups[name] = value === undefined ? "" : String(value);
    });
    result[COMPONENT_NAMES[i]] = { input: values[i], groups };
  }
  return result;
}

const prototypeMembers = {
  test(input = undefined, baseURL = undefined) {
    return exec(componentsOf(this), input, baseURL) !== null;
  },
  exec(input = undefined, baseURL = undefined) {
    return exec(componentsOf(this), input, baseURL);
  },
};

{
  const prototype = {};
  // One getter per component (protocol, username, …, hash), each the component's pattern string.
  COMPONENT_NAMES.forEach((name, index) => {
    const get = { [name]() { return componentsOf(this)[index].pattern; } }[name];
    Object.defineProperty(get, "name", { value: `get ${name}` });
    Object.defineProperty(prototype, name, { get, enumerable: true, configurable: true });
  });
  for (const name of ["test", "exec"]) {
    Object.defineProperty(prototype, name, { value: prototypeMembers[name], writable: true, enumerable: true, configurable: true });
  }
  Object.defineProperty(prototype, "constructor", { value: URLPattern, writable: true, enumerable: false, configurable: true });
  Object.defineProperty(prototype, Symbol.toStringTag, { value: "URLPattern", writable: true, enumerable: false, configurable: true });
  Object.defineProperty(URLPattern, "prototype", { value: prototype, writable: false });
}

internals.LegacyURLPattern = URLPattern;
