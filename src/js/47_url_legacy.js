// The URL and URLSearchParams that workerd had before url_standard (2022-10-31), for workers with
// an older compatibility date or the url_original flag: a URL is parsed the way KJ's URL parser
// does it (scheme and "//" authority required; hosts limited to letters, digits and ".-:[]_";
// path segments, query and fragment percent-decoded when parsed and encoded again when read;
// "." and ".." folded; no IDNA, no opaque paths), with workerd's getters and setters on top. The
// same parser gives fetch()'s and Response.redirect()'s URL handling before fetch_standard_url
// and response_redirect_url_standard (`internals.legacyHref`). The globals are swapped in per
// context by prepareContext() when url_standard is off.

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();
const HEX = "0123456789ABCDEF";
const SCHEME_START = /^[A-Za-z]$/;
const SCHEME_CHAR = /^[A-Za-z0-9+\-.]$/;
const HOST = /^[A-Za-z0-9.\-:[\]_]*$/;
const SPECIAL_PORTS = new Map([["http", "80"], ["https", "443"], ["ws", "80"], ["wss", "443"], ["ftp", "21"], ["file", ""]]);

// Which bytes each component keeps as they are when encoded (the rest become %XX).
const inRange = (b, from, to) => b >= from.charCodeAt(0) && b <= to.charCodeAt(0);
const oneOf = (b, chars) => chars.includes(String.fromCharCode(b));
const KEEP = {
  path: (b) => inRange(b, "@", "[") || inRange(b, "a", "z") || inRange(b, "0", ";") || inRange(b, "&", ".") || oneOf(b, "_!=]^|~$"),
  userInfo: (b) => inRange(b, "A", "Z") || inRange(b, "a", "z") || inRange(b, "0", "9") || inRange(b, "&", ".") || oneOf(b, "_!~$"),
  fragment: (b) => inRange(b, "?", "_") || inRange(b, "a", "~") || inRange(b, "&", ";") || oneOf(b, "!=#$"),
  form: (b) => inRange(b, "A", "Z") || inRange(b, "a", "z") || inRange(b, "0", "9") || oneOf(b, "-_.*"),
};

function encode(text, keep) {
  let out = "";
  for (const b of utf8.encode(text)) {
    if (keep(b)) out += String.fromCharCode(b);
    else if (keep === KEEP.form && b === 0x20) out += "+";
    else out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

const hexValue = (c) => (c === undefined ? -1 : "0123456789abcdef".indexOf(c.toLowerCase()));

/** Percent-decodes `text` (and "+" as a space when `plus`); `state.err` notes a bad escape. */
function decode(text, state, plus = false) {
  const bytes = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === "%") {
      i++;
      const high = hexValue(text[i]);
      if (high < 0 || text[i] === undefined) {
        state.err = true;
        continue;
      }
      i++;
      const low = hexValue(text[i]);
      if (low < 0 || text[i] === undefined) {
        state.err = true;
        bytes.push(high);
        continue;
      }
      i++;
      bytes.push((high << 4) | low);
    } else if (plus && c === "+") {
      bytes.push(0x20);
      i++;
    } else {
      const code = text.codePointAt(i);
      const char = String.fromCodePoint(code);
      bytes.push(...utf8.encode(char));
      i += char.length;
    }
  }
  return utf8Decoder.decode(new Uint8Array(bytes));
}

/** Cuts `text` at the first char in `stops`: [before, rest starting at that char]. */
function cut(text, stops) {
  for (let i = 0; i < text.length; i++) if (stops.includes(text[i])) return [text.slice(0, i), text.slice(i)];
  return [text, ""];
}

/** Splits at the first `c`: [before, after], or null when there is none. */
function splitOnce(text, c) {
  const at = text.indexOf(c);
  return at === -1 ? null : [text.slice(0, at), text.slice(at + 1)];
}

const DEFAULT_OPTIONS = { percentDecode: true, allowEmpty: false };

function part(text, state, options, plus = false) {
  return options.percentDecode ? decode(text, state, plus) : text;
}

function parseAuthority(record, authority, state, options) {
  const userpass = splitOnce(authority, "@");
  if (userpass !== null) {
    const [info, host] = userpass;
    const pair = splitOnce(info, ":");
    record.userInfo = pair === null
      ? { username: part(info, state, options), password: null }
      : { username: part(pair[0], state, options), password: part(pair[1], state, options) };
    authority = host;
  }
  record.host = part(authority, state, options);
  if (!HOST.test(record.host)) return false;
  record.host = record.host.toLowerCase();
  return true;
}

function parseQuery(record, text, state, options, keepEmpty) {
  do {
    text = text.slice(1);
    let piece;
    [piece, text] = cut(text, "&#");
    if (piece.length > 0 || keepEmpty) {
      const pair = splitOnce(piece, "=");
      record.query.push(pair === null
        ? { name: part(piece, state, options, true), value: null }
        : { name: part(pair[0], state, options, true), value: part(pair[1], state, options, true) });
    }
  } while (text.startsWith("&"));
  return text;
}

/** A path segment into `record` ("." and ".." folded, empty segments collapsed unless kept). */
function addSegment(record, segment, state, options, keepEmpty) {
  if (segment === "..") {
    record.path.pop();
    record.hasTrailingSlash = true;
  } else if ((segment === "" && !keepEmpty) || segment === ".") {
    record.hasTrailingSlash = true;
  } else {
    record.path.push(part(segment, state, options));
    record.hasTrailingSlash = false;
  }
}

/** Parses an absolute URL the way KJ does; null when it is not one. */
function parseAbsolute(text, options = DEFAULT_OPTIONS) {
  const record = { scheme: "", userInfo: null, host: "", path: [], hasTrailingSlash: false, query: [], fragment: null, options };
  const state = { err: false };
  const scheme = splitOnce(text, ":");
  if (scheme === null) return null;
  record.scheme = scheme[0].toLowerCase();
  text = scheme[1];
  if (!SCHEME_START.test(record.scheme[0] ?? "") || ![...record.scheme.slice(1)].every((c) => SCHEME_CHAR.test(c))) return null;
  if (!text.startsWith("//")) return null;
  let authority;
  [authority, text] = cut(text.slice(2), "/?#");
  if (!parseAuthority(record, authority, state, options)) return null;
  while (text.startsWith("/")) {
    let segment;
    [segment, text] = cut(text.slice(1), "/?#");
    addSegment(record, segment, state, options, options.allowEmpty && text.length > 0);
  }
  if (text.startsWith("?")) text = parseQuery(record, text, state, options, options.allowEmpty);
  if (text.startsWith("#")) record.fragment = part(text.slice(1), state, options);
  return state.err ? null : record;
}

function cloneRecord(record) {
  return {
    ...record,
    userInfo: record.userInfo === null ? null : { ...record.userInfo },
    path: [...record.path],
    query: record.query.map((q) => ({ ...q })),
  };
}

/** Parses `text` relative to `base` the way KJ does; null when that fails. */
function parseRelative(base, text) {
  if (text.length === 0) return cloneRecord(base);
  const options = base.options;
  const record = { scheme: base.scheme, userInfo: null, host: "", path: [], hasTrailingSlash: false, query: [], fragment: null, options };
  const state = { err: false };
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ":") {
      record.scheme = text.slice(0, i);
      text = text.slice(i + 1);
      break;
    }
    if (!SCHEME_CHAR.test(text[i])) break;
  }
  const newAuthority = text.startsWith("//");
  if (newAuthority) {
    let authority;
    [authority, text] = cut(text.slice(2), "/?#");
    if (!parseAuthority(record, authority, state, options)) return null;
  } else {
    record.host = base.host;
    record.userInfo = base.userInfo === null ? null : { ...base.userInfo };
  }
  const newPath = text.length > 0 && text[0] !== "?" && text[0] !== "#";
  if (newPath) {
    if (text[0] === "/") {
      text = text.slice(1);
      record.hasTrailingSlash = true;
    } else if (base.path.length > 0) {
      record.path = base.path.slice(0, base.path.length - (base.hasTrailingSlash ? 0 : 1));
      record.hasTrailingSlash = true;
    }
    for (;;) {
      let segment;
      [segment, text] = cut(text, "/?#");
      addSegment(record, segment, state, options, false);
      if (!text.startsWith("/")) break;
      text = text.slice(1);
    }
  } else if (!newAuthority) {
    record.path = [...base.path];
    record.hasTrailingSlash = base.hasTrailingSlash;
  }
  if (text.startsWith("?")) text = parseQuery(record, text, state, options, false);
  else if (!newAuthority && !newPath) record.query = base.query.map((q) => ({ ...q }));
  if (text.startsWith("#")) record.fragment = part(text.slice(1), state, options);
  return state.err ? null : record;
}

/** The URL as text; a host or path segment KJ cannot write is a TypeError, as in workerd. */
function serialize(record) {
  const enc = (text, keep) => (record.options.percentDecode ? encode(text, keep) : text);
  let out = `${record.scheme}://`;
  if (record.userInfo !== null) {
    out += enc(record.userInfo.username, KEEP.userInfo);
    if (record.userInfo.password !== null) out += `:${enc(record.userInfo.password, KEEP.userInfo)}`;
    out += "@";
  }
  if (!HOST.test(record.host)) throw new TypeError("Invalid hostname when stringifying URL.");
  out += record.host;
  for (const segment of record.path) {
    if ((segment === "" && !record.options.allowEmpty) || segment === "." || segment === "..") {
      throw new TypeError("Invalid pathname when stringifying URL.");
    }
    out += `/${enc(segment, KEEP.path)}`;
  }
  if (record.hasTrailingSlash) out += "/";
  record.query.forEach((q, i) => {
    out += `${i === 0 ? "?" : "&"}${enc(q.name, KEEP.form)}`;
    if (q.value !== null) out += `=${enc(q.value, KEEP.form)}`;
  });
  if (record.fragment !== null) out += `#${enc(record.fragment, KEEP.fragment)}`;
  return out;
}

/** Drops a trailing ":" and a port that is the scheme's default. */
function normalizePort(record) {
  const colon = record.host.indexOf(":");
  if (colon === -1) return;
  if (colon === record.host.length - 1) record.host = record.host.slice(0, colon);
  else if (SPECIAL_PORTS.get(record.scheme) === record.host.slice(colon + 1)) record.host = record.host.slice(0, colon);
}

/**
 * A URL string as workerd's fetch() (before fetch_standard_url) and Response.redirect() (before
 * response_redirect_url_standard) wrote it: parsed by KJ without percent-decoding, empty segments
 * kept. Null when KJ cannot parse it.
 */
internals.legacyHref = (text) => {
  const record = parseAbsolute(String(text), { percentDecode: false, allowEmpty: true });
  return record === null ? null : serialize(record);
};

let recordOf; // (url) -> its record, private to this file
let paramsFor; // (record) -> a URLSearchParams over it

class URL {
  #record;
  #params = null;
  static {
    recordOf = (url) => {
      if (url === null || typeof url !== "object" || !(#record in url)) throw new TypeError("Illegal invocation");
      return url.#record;
    };
  }
  constructor(url, base = undefined) {
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    if (arguments.length === 0) throw new TypeError("Failed to construct 'URL': 1 argument required, but only 0 present.");
    if (base !== undefined) {
      const parsedBase = parseAbsolute(String(base));
      if (parsedBase === null) throw new TypeError("Invalid base URL string.");
      const record = parseRelative(parsedBase, String(url));
      if (record === null) throw new TypeError("Invalid relative URL string.");
      this.#record = record;
    } else {
      const record = parseAbsolute(String(url));
      if (record === null) throw new TypeError("Invalid URL string.");
      this.#record = record;
    }
    normalizePort(this.#record);
  }
  /** Replaces the record's contents (a URLSearchParams keeps seeing the same record). */
  static #assign(record, next) {
    Object.assign(record, next);
  }
  /** Applies `change` to a copy; keeps the copy only when its text parses again. */
  static #reparse(record, change) {
    const copy = cloneRecord(record);
    change(copy);
    const parsed = parseAbsolute(serialize(copy));
    if (parsed !== null) URL.#assign(record, parsed);
  }
  get href() {
    return serialize(recordOf(this));
  }
  set href(value) {
    const parsed = parseAbsolute(String(value));
    if (parsed === null) throw new TypeError("Failed to set the 'href' property on 'URL': the provided value is not of type 'valid URL string'.");
    URL.#assign(recordOf(this), parsed);
  }
  get origin() {
    const { scheme, host } = recordOf(this);
    return SPECIAL_PORTS.has(scheme) && scheme !== "file" ? `${scheme}://${host}` : "null";
  }
  get protocol() {
    return `${recordOf(this).scheme}:`;
  }
  set protocol(value) {
    const record = recordOf(this);
    const scheme = String(value).split(":")[0];
    URL.#reparse(record, (copy) => void (copy.scheme = scheme));
    normalizePort(record);
  }
  get username() {
    const { userInfo } = recordOf(this);
    return userInfo === null ? "" : encode(userInfo.username, KEEP.userInfo);
  }
  set username(value) {
    URL.#reparse(recordOf(this), (copy) => {
      if (copy.userInfo === null) copy.userInfo = { username: String(value), password: null };
      else copy.userInfo.username = String(value);
    });
  }
  get password() {
    const { userInfo } = recordOf(this);
    return userInfo === null || userInfo.password === null ? "" : encode(userInfo.password, KEEP.userInfo);
  }
  set password(value) {
    const text = String(value);
    URL.#reparse(recordOf(this), (copy) => {
      if (copy.userInfo !== null) copy.userInfo.password = text.length > 0 ? text : null;
      else if (text.length > 0) copy.userInfo = { username: "", password: text };
    });
  }
  get host() {
    return recordOf(this).host;
  }
  set host(value) {
    const record = recordOf(this);
    let text = String(value);
    const colon = record.host.indexOf(":");
    if (colon !== -1) {
      const newColon = text.indexOf(":");
      if (newColon === -1) text += record.host.slice(colon);
      else if (newColon === text.length - 1) text += record.host.slice(colon + 1);
    }
    record.host = text;
    normalizePort(record);
  }
  get hostname() {
    const { host } = recordOf(this);
    const colon = host.indexOf(":");
    return colon === -1 ? host : host.slice(0, colon);
  }
  set hostname(value) {
    const record = recordOf(this);
    const text = String(value);
    const colon = record.host.indexOf(":");
    record.host = text.split(":")[0] + (colon === -1 ? "" : record.host.slice(colon));
  }
  get port() {
    const { host } = recordOf(this);
    const colon = host.indexOf(":");
    return colon === -1 ? "" : host.slice(colon + 1);
  }
  set port(value) {
    const record = recordOf(this);
    const colon = record.host.indexOf(":");
    record.host = colon === -1 ? `${record.host}:${value}` : `${record.host.slice(0, colon + 1)}${value}`;
    normalizePort(record);
  }
  get pathname() {
    const { path, hasTrailingSlash, scheme } = recordOf(this);
    if (path.length > 0) return path.map((segment) => `/${encode(segment, KEEP.path)}`).join("") + (hasTrailingSlash ? "/" : "");
    return hasTrailingSlash || SPECIAL_PORTS.has(scheme) ? "/" : "";
  }
  set pathname(value) {
    const record = recordOf(this);
    const state = { err: false };
    const next = { path: [], hasTrailingSlash: false };
    let text = String(value);
    const take = () => {
      let segment;
      [segment, text] = cut(text, "/");
      addSegment(next, segment, state, DEFAULT_OPTIONS, false);
    };
    if (!text.startsWith("/")) take();
    while (text.startsWith("/")) {
      text = text.slice(1);
      take();
    }
    if (!state.err) Object.assign(record, next);
  }
  get search() {
    const { query } = recordOf(this);
    if (query.length === 0) return "";
    return `?${query.map((q) => (q.value === null ? encode(q.name, KEEP.form) : `${encode(q.name, KEEP.form)}=${encode(q.value, KEEP.form)}`)).join("&")}`;
  }
  set search(value) {
    const record = recordOf(this);
    let text = String(value);
    if (text.startsWith("?")) text = text.slice(1);
    const state = { err: false };
    const query = [];
    for (const piece of text.split("&")) {
      if (piece.length === 0) continue;
      const pair = splitOnce(piece, "=");
      query.push(pair === null ? { name: decode(piece, state, true), value: null } : { name: decode(pair[0], state, true), value: decode(pair[1], state, true) });
    }
    if (!state.err) record.query = query;
  }
  get searchParams() {
    recordOf(this);
    return (this.#params ??= paramsFor(this.#record));
  }
  get hash() {
    const { fragment } = recordOf(this);
    return fragment === null || fragment === "" ? "" : `#${encode(fragment, KEEP.fragment)}`;
  }
  set hash(value) {
    const text = String(value);
    recordOf(this).fragment = decode(text.startsWith("#") ? text.slice(1) : text, { err: false });
  }
  toString() {
    return this.href;
  }
  toJSON() {
    return this.href;
  }
}

const makeParamsIterator = internals.iteratorFactory("URLSearchParams Iterator");

class URLSearchParams {
  #record;
  static {
    paramsFor = (record) => {
      const params = new URLSearchParams();
      params.#record = record;
      return params;
    };
    internals.isLegacySearchParams = (value) => value !== null && typeof value === "object" && #record in value;
  }
  constructor(init = undefined) {
    this.#record = { query: [] };
    if (init === undefined) return;
    if (init !== null && typeof init === "object" && #record in init) {
      this.#record.query = init.#record.query.map((q) => ({ ...q }));
    } else if (init !== null && (typeof init === "object" || typeof init === "function") && typeof init[Symbol.iterator] === "function") {
      for (const entry of init) {
        const pair = [...entry];
        if (pair.length !== 2) throw new TypeError("To initialize a URLSearchParams object from an array-of-arrays, each inner array must have exactly two elements.");
        this.#record.query.push({ name: String(pair[0]), value: String(pair[1]) });
      }
    } else if (init !== null && typeof init === "object") {
      for (const key of Object.keys(init)) this.#record.query.push({ name: key, value: String(init[key]) });
    } else {
      let text = String(init);
      if (text.startsWith("?")) text = text.slice(1);
      for (const piece of text.split("&")) {
        if (piece.length === 0) continue;
        const pair = splitOnce(piece, "=") ?? [piece, ""];
        this.#record.query.push({ name: decode(pair[0], { err: false }, true), value: decode(pair[1], { err: false }, true) });
      }
    }
  }
  static #query(params) {
    if (params === null || typeof params !== "object" || !(#record in params)) throw new TypeError("Illegal invocation");
    return params.#record;
  }
  get size() {
    return URLSearchParams.#query(this).query.length;
  }
  append(name, value) {
    URLSearchParams.#query(this).query.push({ name: String(name), value: String(value) });
  }
  delete(name) {
    const record = URLSearchParams.#query(this);
    const key = String(name);
    record.query = record.query.filter((q) => q.name !== key);
  }
  get(name) {
    const key = String(name);
    const found = URLSearchParams.#query(this).query.find((q) => q.name === key);
    return found === undefined ? null : found.value ?? "";
  }
  getAll(name) {
    const key = String(name);
    return URLSearchParams.#query(this).query.filter((q) => q.name === key).map((q) => q.value ?? "");
  }
  has(name) {
    const key = String(name);
    return URLSearchParams.#query(this).query.some((q) => q.name === key);
  }
  set(name, value) {
    const record = URLSearchParams.#query(this);
    const key = String(name);
    const first = record.query.findIndex((q) => q.name === key);
    if (first === -1) {
      record.query.push({ name: key, value: String(value) });
      return;
    }
    record.query[first].value = String(value);
    record.query = record.query.filter((q, i) => i <= first || q.name !== key);
  }
  sort() {
    const record = URLSearchParams.#query(this);
    record.query = record.query.map((q, i) => [q, i]).sort(([a, i], [b, j]) => (a.name < b.name ? -1 : a.name > b.name ? 1 : i - j)).map(([q]) => q);
  }
  forEach(callback, thisArg = undefined) {
    const record = URLSearchParams.#query(this);
    if (typeof callback !== "function") throw new TypeError("URLSearchParams.forEach: callback must be a function");
    for (let i = 0; i < record.query.length; i++) {
      const { name, value } = record.query[i];
      Reflect.apply(callback, thisArg ?? undefined, [value ?? "", name, this]);
    }
  }
  #iterate(pick) {
    const record = URLSearchParams.#query(this);
    let index = 0;
    return makeParamsIterator(() => {
      if (index >= record.query.length) return { value: undefined, done: true };
      const { name, value } = record.query[index++];
      return { value: pick(name, value ?? ""), done: false };
    });
  }
  entries() {
    return this.#iterate((name, value) => [name, value]);
  }
  keys() {
    return this.#iterate((name) => name);
  }
  values() {
    return this.#iterate((_, value) => value);
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  toString() {
    return URLSearchParams.#query(this).query.map((q) => `${encode(q.name, KEEP.form)}=${encode(q.value ?? "", KEEP.form)}`).join("&");
  }
  get [Symbol.toStringTag]() {
    return "URLSearchParams";
  }
}

Object.defineProperty(URL.prototype, Symbol.toStringTag, { value: "URL", configurable: true });
// Like the standard ones, they are platform objects structuredClone refuses.
ops.markUncloneable(URL.prototype);
ops.markUncloneable(URLSearchParams.prototype);

const previous = internals.prepareContext;
internals.prepareContext = (function prepareUrlContext(memoryMb, compatJson) {
  previous(memoryMb, compatJson);
  if (!internals.feature("url_standard")) {
    internals.defineGlobal("URL", URL);
    internals.defineGlobal("URLSearchParams", URLSearchParams);
  }
});
