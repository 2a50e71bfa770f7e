// URL and URLSearchParams. Parsing and every setter go to ada (the `ada-url` crate; ops.urlParse /
// ops.urlSet), so behaviour follows the WHATWG URL Standard; this file keeps the parsed
// components and the two-way link between a URL and its searchParams.

const HREF = 0, ORIGIN = 1, PROTOCOL = 2, USERNAME = 3, PASSWORD = 4, HOST = 5, HOSTNAME = 6, PORT = 7, PATHNAME = 8, SEARCH = 9, HASH = 10;

function needArgs(args, count, what) {
  if (args.length < count) {
    throw new TypeError(`Failed to execute '${what}': ${count} argument${count > 1 ? "s" : ""} required, but only ${args.length} present.`);
  }
}

let setParamsFromUrl; // (params, query) -> void, private to this file
let attachParams; // (params, url) -> void

/** Web IDL's USVString: lone surrogates become U+FFFD. */
const usv = (value) => internals.domString(value).toWellFormed();
const makeParamsIterator = internals.iteratorFactory("URLSearchParams Iterator");

class URLSearchParams {
  #list = [];
  #url = null;

  constructor(init = undefined) {
    if (init === undefined || init === null) return;
    if (typeof init === "object" || typeof init === "function") {
      const method = init[Symbol.iterator];
      if (method !== undefined && method !== null) {
        if (typeof method !== "function") throw new TypeError("Failed to construct 'URLSearchParams': The object's @@iterator is not callable.");
        for (const pair of { [Symbol.iterator]: () => method.call(init) }) {
          const items = typeof pair === "string" ? null : [...pair];
          if (items === null || items.length !== 2) {
            throw new TypeError("Failed to construct 'URLSearchParams': Each query pair must be an iterable [name, value] tuple");
          }
          this.#list.push([usv(items[0]), usv(items[1])]);
        }
      } else {
        // A record<USVString, USVString>: keys that become equal once well-formed keep the first
        // one's place and the last one's value.
        const record = new Map();
        for (const key of Reflect.ownKeys(init)) {
          const descriptor = Object.getOwnPropertyDescriptor(init, key);
          if (!descriptor || !descriptor.enumerable) continue;
          // workerd skips symbol keys (an own [Symbol.iterator] = undefined leaves the rest as a
          // record); with pedantic_wpt, Web IDL's TypeError.
          if (typeof key === "symbol") {
            if (internals.feature("pedantic_wpt")) throw new TypeError("Failed to construct 'URLSearchParams': record keys must be strings.");
            continue;
          }
          record.set(usv(key), usv(init[key]));
        }
        this.#list = [...record];
      }
    } else {
      let text = usv(init);
      if (text.startsWith("?")) text = text.slice(1);
      this.#parse(text);
    }
  }

  #parse(text) {
    const flat = ops.formParse(text);
    this.#list = [];
    for (let i = 0; i < flat.length; i += 2) this.#list.push([flat[i], flat[i + 1]]);
  }

  #update() {
    if (this.#url !== null) internals.urlSetQueryFromParams(this.#url, this.toString());
  }

  static {
    setParamsFromUrl = (params, query) => params.#parse(query);
    attachParams = (params, url) => {
      params.#url = url;
    };
  }

  get size() {
    return this.#list.length;
  }
  append(name, value) {
    needArgs(arguments, 2, "append");
    this.#list.push([usv(name), usv(value)]);
    this.#update();
  }
  delete(name, value = undefined) {
    needArgs(arguments, 1, "delete");
    name = usv(name);
    // The value argument came with urlsearchparams_delete_has_value_arg (2023-07-01).
    if (!internals.feature("urlsearchparams_delete_has_value_arg")) value = undefined;
    const match = value === undefined ? ([k]) => k === name : ([k, v]) => k === name && v === usv(value);
    this.#list = this.#list.filter((pair) => !match(pair));
    this.#update();
  }
  get(name) {
    needArgs(arguments, 1, "get");
    name = usv(name);
    const found = this.#list.find(([k]) => k === name);
    return found ? found[1] : null;
  }
  getAll(name) {
    needArgs(arguments, 1, "getAll");
    name = usv(name);
    return this.#list.filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name, value = undefined) {
    needArgs(arguments, 1, "has");
    name = usv(name);
    if (!internals.feature("urlsearchparams_delete_has_value_arg")) value = undefined;
    return value === undefined ? this.#list.some(([k]) => k === name) : this.#list.some(([k, v]) => k === name && v === usv(value));
  }
  set(name, value) {
    needArgs(arguments, 2, "set");
    name = usv(name);
    value = usv(value);
    const index = this.#list.findIndex(([k]) => k === name);
    if (index === -1) {
      this.#list.push([name, value]);
    } else {
      this.#list[index][1] = value;
      this.#list = this.#list.filter(([k], i) => i <= index || k !== name);
    }
    this.#update();
  }
  sort() {
    // Stable sort by UTF-16 code units of the names.
    const indexed = this.#list.map((pair, i) => [pair, i]);
    indexed.sort(([a, i], [b, j]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : i - j));
    this.#list = indexed.map(([pair]) => pair);
    this.#update();
  }
  forEach(callback, thisArg = undefined) {
    if (typeof callback !== "function") throw new TypeError("URLSearchParams.forEach: callback must be a function");
    for (let i = 0; i < this.#list.length; i++) {
      const [k, v] = this.#list[i];
      callback.call(thisArg, v, k, this);
    }
  }
  // Live iterators over the list, by index (Web IDL's pair iterators).
  #iterate(pick) {
    let index = 0;
    return makeParamsIterator(() => {
      if (index >= this.#list.length) return { value: undefined, done: true };
      return { value: pick(this.#list[index++]), done: false };
    });
  }
  entries() {
    return this.#iterate(([k, v]) => [k, v]);
  }
  keys() {
    return this.#iterate(([k]) => k);
  }
  values() {
    return this.#iterate(([, v]) => v);
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  toString() {
    return ops.formSerialize(this.#list.flat());
  }
  get [Symbol.toStringTag]() {
    return "URLSearchParams";
  }
}

function parseOrThrow(url, base) {
  url = internals.domString(url);
  if (base !== undefined) base = internals.domString(base);
  const parts = base === undefined ? ops.urlParse(url) : ops.urlParse(url, base);
  if (parts === null) {
    throw new TypeError(`Invalid URL: ${JSON.stringify(url)}${base === undefined ? "" : ` (base ${JSON.stringify(base)})`}`);
  }
  return parts;
}

class URL {
  #parts;
  #params = null;

  constructor(url, base = undefined) {
    needArgs(arguments, 1, "URL");
    this.#parts = parseOrThrow(url, base);
  }

  static canParse(url, base = undefined) {
    return (base === undefined ? ops.urlParse(internals.domString(url)) : ops.urlParse(internals.domString(url), internals.domString(base))) !== null;
  }

  static parse(url, base = undefined) {
    try {
      return new URL(url, base);
    } catch {
      return null;
    }
  }

  // Declared in workerd, which has no blob: URLs: both throw.
  static createObjectURL() {
    throw new Error("URL.createObjectURL() is not implemented");
  }
  static revokeObjectURL() {
    throw new Error("URL.revokeObjectURL() is not implemented");
  }

  #set(field, value) {
    value = internals.domString(value);
    const parts = ops.urlSet(this.#parts[HREF], field, value);
    if (parts === null) throw new TypeError(`Invalid URL: ${JSON.stringify(value)}`);
    this.#parts = parts;
    if (this.#params !== null && (field === "href" || field === "search")) {
      setParamsFromUrl(this.#params, this.#parts[SEARCH].slice(1));
    }
  }

  static {
    // An empty query removes the "?" entirely, as the search setter does.
    internals.urlSetQueryFromParams = (url, query) => {
      url.#parts = ops.urlSet(url.#parts[HREF], "search", query);
    };
  }

  get href() {
    return this.#parts[HREF];
  }
  set href(value) {
    this.#set("href", value);
  }
  get origin() {
    return (this.#parts[ORIGIN] ??= ops.urlOrigin(this.#parts[HREF]));
  }
  get protocol() {
    return this.#parts[PROTOCOL];
  }
  set protocol(value) {
    this.#set("protocol", value);
  }
  get username() {
    return this.#parts[USERNAME];
  }
  set username(value) {
    this.#set("username", value);
  }
  get password() {
    return this.#parts[PASSWORD];
  }
  set password(value) {
    this.#set("password", value);
  }
  get host() {
    return this.#parts[HOST];
  }
  set host(value) {
    this.#set("host", value);
  }
  get hostname() {
    return this.#parts[HOSTNAME];
  }
  set hostname(value) {
    this.#set("hostname", value);
  }
  get port() {
    return this.#parts[PORT];
  }
  set port(value) {
    this.#set("port", value);
  }
  get pathname() {
    return this.#parts[PATHNAME];
  }
  set pathname(value) {
    this.#set("pathname", value);
  }
  get search() {
    return this.#parts[SEARCH];
  }
  set search(value) {
    this.#set("search", value);
  }
  get hash() {
    return this.#parts[HASH];
  }
  set hash(value) {
    this.#set("hash", value);
  }
  get searchParams() {
    if (this.#params === null) {
      this.#params = new URLSearchParams(this.#parts[SEARCH]);
      attachParams(this.#params, this);
    }
    return this.#params;
  }
  toString() {
    return this.#parts[HREF];
  }
  toJSON() {
    return this.#parts[HREF];
  }
  get [Symbol.toStringTag]() {
    return "URL";
  }
}

// Platform objects that structuredClone refuses (a DataCloneError), as the URL Standard says.
ops.markUncloneable(URL.prototype);
ops.markUncloneable(URLSearchParams.prototype);
// The runtime's own code uses these, whatever url_standard makes the globals (src/js/47_url_legacy.js).
internals.URL = URL;
internals.URLSearchParams = URLSearchParams;
internals.defineGlobal("URL", URL);
internals.defineGlobal("URLSearchParams", URLSearchParams);
