// node:util's MIMEType and MIMEParams, as workerd has them: the MIME Sniffing standard's parser
// (type and subtype lowercased, parameter names too, the first of a repeated parameter kept),
// its serializer with workerd's one liberty (a space before a `boundary` parameter), and
// workerd's set(), which adds a parameter but leaves one already there as it is. A MIMEParams
// made with `new` is not tied to a type and holds nothing, as in Node and workerd.

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const QUOTED_OK = /^[\t\x20-\x7e\x80-\xff]*$/;

/** `text` parsed: { type, subtype, params: Map }, or null when it is not a MIME type (the runtime's parser, src/js/65_http.js). */
const parse = (text) => internals.parseMimeType(text);

function serializeParams(params) {
  let out = "";
  for (const [name, value] of params) {
    if (out !== "") out += ";";
    if (name === "boundary") out += " ";
    const quoted = value === "" || !TOKEN.test(value);
    out += `${name}=${quoted ? `"${value.replace(/["\\]/g, "\\$&")}"` : value}`;
  }
  return out;
}

const kParams = Symbol("params");
const kCreate = Symbol("create");

class MIMEParams {
  [kParams] = null; // the MIMEType's Map, or null for one made with `new`
  constructor(key = undefined, params = undefined) {
    if (key === kCreate) this[kParams] = params;
  }
  delete(name) {
    this[kParams]?.delete(String(name).toLowerCase());
  }
  get(name) {
    return this[kParams]?.get(String(name)) ?? null;
  }
  has(name) {
    return this[kParams]?.has(String(name)) ?? false;
  }
  set(name, value) {
    const params = this[kParams];
    if (params === null) return;
    name = String(name);
    value = String(value);
    if (!TOKEN.test(name) || !QUOTED_OK.test(value)) throw new TypeError("Not a valid MIME parameter");
    const key = name.toLowerCase();
    if (!params.has(key)) params.set(key, value);
  }
  *entries() {
    for (const [name, value] of this[kParams] ?? []) yield [name, value];
  }
  *keys() {
    for (const [name] of this.entries()) yield name;
  }
  *values() {
    for (const [, value] of this.entries()) yield value;
  }
  [Symbol.iterator]() {
    return this.entries();
  }
  toString() {
    return this[kParams] === null ? "" : serializeParams(this[kParams]);
  }
  toJSON() {
    return this.toString();
  }
  get [Symbol.toStringTag]() {
    return "MIMEParams";
  }
}

class MIMEType {
  #type;
  #subtype;
  #params;
  constructor(input) {
    const text = String(input);
    const parsed = parse(text);
    if (parsed === null) throw new TypeError(`Not a valid MIME type: ${text}`);
    this.#type = parsed.type;
    this.#subtype = parsed.subtype;
    this.#params = new MIMEParams(kCreate, parsed.params);
  }
  get type() {
    return this.#type;
  }
  set type(value) {
    value = String(value);
    if (!TOKEN.test(value)) throw new TypeError("Not a valid MIME type");
    this.#type = value.toLowerCase();
  }
  get subtype() {
    return this.#subtype;
  }
  set subtype(value) {
    value = String(value);
    if (!TOKEN.test(value)) throw new TypeError("Not a valid MIME type");
    this.#subtype = value.toLowerCase();
  }
  get essence() {
    return `${this.#type}/${this.#subtype}`;
  }
  get params() {
    return this.#params;
  }
  toString() {
    const params = this.#params.toString();
    return params === "" ? this.essence : `${this.essence};${params}`;
  }
  toJSON() {
    return this.toString();
  }
  get [Symbol.toStringTag]() {
    return "MIMEType";
  }
}
// Web IDL members are enumerable (workerd lists them on the prototype).
for (const Class of [MIMEType, MIMEParams]) {
  for (const key of Object.getOwnPropertyNames(Class.prototype)) {
    if (key !== "constructor") Object.defineProperty(Class.prototype, key, { enumerable: true });
  }
}

module.exports = { MIMEType, MIMEParams };
