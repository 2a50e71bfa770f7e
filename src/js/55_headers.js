// Headers, with the Fetch Standard's semantics: a header list of [lowercase name, value] in
// insertion order, validation of names and values, and iteration that is sorted and combined
// (except set-cookie, which stays one entry per value). Guards make some lists immutable.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const LEADING_TRAILING_WS = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const FORBIDDEN_VALUE = /[\0\r\n]/;

function checkName(name) {
  name = internals.domString(name);
  if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: "${name}"`);
  return name.toLowerCase();
}

function normalizeValue(name, value) {
  value = internals.domString(value).replace(LEADING_TRAILING_WS, "");
  if (FORBIDDEN_VALUE.test(value)) throw new TypeError(`Invalid header value for "${name}": it contains NUL, CR or LF`);
  return value;
}

function needArgs(args, count, what) {
  if (args.length < count) {
    throw new TypeError(`Failed to execute '${what}' on 'Headers': ${count} argument${count > 1 ? "s" : ""} required, but only ${args.length} present.`);
  }
}

const makeIterator = internals.iteratorFactory("Headers Iterator");

class Headers {
  #list = [];
  #immutable = false;

  constructor(init = undefined) {
    if (init === undefined) return;
    if (init === null || (typeof init !== "object" && typeof init !== "function")) {
      throw new TypeError("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'.");
    }
    const method = init[Symbol.iterator];
    if (method !== undefined && method !== null) {
      if (typeof method !== "function") throw new TypeError("Failed to construct 'Headers': The object's @@iterator is not callable.");
      for (const pair of { [Symbol.iterator]: () => method.call(init) }) {
        const items = typeof pair === "string" ? null : [...pair];
        if (items === null || items.length !== 2) {
          throw new TypeError("Failed to construct 'Headers': Each header pair must be an iterable [name, value] tuple.");
        }
        this.append(items[0], items[1]);
      }
    } else {
      for (const key of Reflect.ownKeys(init)) {
        const descriptor = Object.getOwnPropertyDescriptor(init, key);
        if (!descriptor || !descriptor.enumerable) continue;
        if (typeof key === "symbol") throw new TypeError("Failed to construct 'Headers': header names must be strings.");
        this.append(key, init[key]);
      }
    }
  }

  #checkMutable() {
    if (this.#immutable) throw new TypeError("Can't modify immutable headers.");
  }

  static {
    internals.headersSetImmutable = (headers) => {
      headers.#immutable = true;
      return headers;
    };
    internals.headersList = (headers) => headers.#list;
    internals.headersImmutable = (headers) => headers.#immutable;
    internals.headersFromList = (list) => {
      const headers = new Headers();
      headers.#list = list;
      return headers;
    };
  }

  append(name, value) {
    needArgs(arguments, 2, "append");
    const key = checkName(name);
    const normalized = normalizeValue(name, value);
    this.#checkMutable();
    this.#list.push([key, normalized]);
  }

  delete(name) {
    needArgs(arguments, 1, "delete");
    const key = checkName(name);
    this.#checkMutable();
    this.#list = this.#list.filter(([k]) => k !== key);
  }

  get(name) {
    needArgs(arguments, 1, "get");
    const key = checkName(name);
    const values = [];
    for (const [k, v] of this.#list) if (k === key) values.push(v);
    return values.length === 0 ? null : values.join(", ");
  }

  getSetCookie() {
    const values = [];
    for (const [k, v] of this.#list) if (k === "set-cookie") values.push(v);
    return values;
  }

  /** workerd's extension: `getAll("set-cookie")`. */
  getAll(name) {
    const key = checkName(name);
    if (key !== "set-cookie") throw new TypeError('getAll() can only be used with the header name "Set-Cookie".');
    return this.getSetCookie();
  }

  has(name) {
    needArgs(arguments, 1, "has");
    const key = checkName(name);
    return this.#list.some(([k]) => k === key);
  }

  set(name, value) {
    needArgs(arguments, 2, "set");
    const key = checkName(name);
    const normalized = normalizeValue(name, value);
    this.#checkMutable();
    const index = this.#list.findIndex(([k]) => k === key);
    if (index === -1) {
      this.#list.push([key, normalized]);
    } else {
      this.#list[index] = [key, normalized];
      this.#list = this.#list.filter(([k], i) => i <= index || k !== key);
    }
  }

  /**
   * The sorted-and-combined view that iteration exposes. Without http_headers_getsetcookie
   * (before 2023-03-01) set-cookie is combined like any other header, as workerd did then.
   */
  #sorted() {
    const names = [...new Set(this.#list.map(([k]) => k))].sort();
    const out = [];
    const separateCookies = internals.feature("http_headers_getsetcookie");
    for (const name of names) {
      if (name === "set-cookie" && separateCookies) {
        for (const [k, v] of this.#list) if (k === name) out.push([k, v]);
      } else {
        out.push([name, this.get(name)]);
      }
    }
    return out;
  }

  forEach(callback, thisArg = undefined) {
    if (typeof callback !== "function") throw new TypeError("Headers.forEach: callback must be a function");
    for (const [k, v] of this.#sorted()) callback.call(thisArg, v, k, this);
  }

  // Iterators are live, as Web IDL's are: each step takes the next index of the sorted-and-combined
  // view of the list as it is at that moment (so changes made while iterating are seen).
  #iterate(pick) {
    let index = 0;
    return makeIterator(() => {
      const view = this.#sorted();
      if (index >= view.length) return { value: undefined, done: true };
      return { value: pick(view[index++]), done: false };
    });
  }
  entries() {
    return this.#iterate((pair) => pair);
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
  get [Symbol.toStringTag]() {
    return "Headers";
  }
}

internals.defineGlobal("Headers", Headers);
