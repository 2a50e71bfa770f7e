// node:net's address classes: SocketAddress (an address, port, family and IPv6 flow label, with
// Node's validation and SocketAddress.parse) and BlockList (addresses, ranges and subnets of IPv4
// and IPv6 checked by numeric comparison; an IPv4 rule also matches its IPv4-mapped IPv6 form).
// Rules render as Node's strings ("Address: IPv4 1.2.3.4", "Range: …", "Subnet: …/24"), which
// `rules`, toJSON() and fromJSON() use.

function coded(Ctor, code, message) {
  const error = new Ctor(message);
  error.code = code;
  return error;
}
const describe = (value) => require("node:internal/errors").describeReceived(value);

let ipTests = null; // node:net's isIPv4/isIPv6 (loaded lazily: node:net requires this file)
const isIPv4 = (text) => (ipTests ??= require("node:net")).isIPv4(text);
const isIPv6 = (text) => (ipTests ??= require("node:net")).isIPv6(text);

/** An IPv4 address as a BigInt. */
function v4Value(text) {
  return text.split(".").reduce((sum, part) => (sum << 8n) | BigInt(Number(part)), 0n);
}
/** An IPv6 address (zone dropped, embedded IPv4 allowed) as a BigInt. */
function v6Value(text) {
  text = text.replace(/%.*$/, "");
  let tail = [];
  const dotted = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const v = v4Value(dotted[1]);
    tail = [Number(v >> 16n), Number(v & 0xffffn)].map((n) => n.toString(16));
    text = text.slice(0, -dotted[1].length) + "0:0";
  }
  let groups;
  if (text.includes("::")) {
    const [head, rest] = text.split("::");
    const a = head ? head.split(":") : [];
    const b = rest ? rest.split(":") : [];
    groups = [...a, ...Array(8 - a.length - b.length).fill("0"), ...b];
  } else {
    groups = text.split(":");
  }
  if (tail.length) groups.splice(6, 2, ...tail);
  return groups.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const MAPPED_PREFIX = 0xffffn << 32n;

function normalizeFamily(family, name = "options.family") {
  if (typeof family !== "string") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" argument must be of type string. Received ${describe(family)}`);
  const lower = family.toLowerCase();
  if (lower !== "ipv4" && lower !== "ipv6") throw coded(TypeError, "ERR_INVALID_ARG_VALUE", `The property '${name}' must be one of: 'ipv4', 'ipv6'. Received '${family}'`);
  return lower;
}

class SocketAddress {
  #address;
  #port;
  #family;
  #flowlabel;
  constructor(options = {}) {
    if (options === null || typeof options !== "object") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "options" argument must be of type object. Received ${describe(options)}`);
    const family = normalizeFamily(options.family ?? "ipv4");
    const address = options.address ?? (family === "ipv6" ? "::" : "127.0.0.1");
    if (typeof address !== "string") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "options.address" property must be of type string. Received ${describe(address)}`);
    if (family === "ipv4" ? !isIPv4(address) : !isIPv6(address)) throw coded(Error, "ERR_INVALID_ADDRESS", "Invalid socket address");
    const port = options.port === undefined ? 0 : typeof options.port === "string" && options.port.trim() !== "" ? Number(options.port) : options.port;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 0 || port > 65535) {
      throw coded(RangeError, "ERR_SOCKET_BAD_PORT", `options.port should be >= 0 and < 65536. Received ${typeof options.port === "string" ? `type string ('${options.port}')` : `type ${typeof options.port} (${String(options.port)})`}.`);
    }
    const flowlabel = options.flowlabel ?? 0;
    if (typeof flowlabel !== "number" || !Number.isInteger(flowlabel) || flowlabel < 0 || flowlabel > 0xffffffff) {
      throw coded(RangeError, "ERR_OUT_OF_RANGE", `The value of "options.flowlabel" is out of range. It must be >= 0 && <= 4294967295. Received ${String(flowlabel)}`);
    }
    this.#address = address;
    this.#port = port;
    this.#family = family;
    this.#flowlabel = flowlabel;
  }
  get address() {
    return this.#address;
  }
  get port() {
    return this.#port;
  }
  get family() {
    return this.#family;
  }
  get flowlabel() {
    return this.#flowlabel;
  }
  toJSON() {
    return { address: this.address, port: this.port, family: this.family, flowlabel: this.flowlabel };
  }
  static isSocketAddress(value) {
    return value instanceof SocketAddress;
  }
  /** "host:port" or "[v6]:port" to a SocketAddress; undefined when it is not one. */
  static parse(input) {
    if (typeof input !== "string") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "input" argument must be of type string. Received ${describe(input)}`);
    const match = /^\[([^\]]+)\](?::(\d+))?$/.exec(input) ?? /^([^:]+)(?::(\d+))?$/.exec(input);
    if (!match) return undefined;
    const [, address, port] = match;
    const family = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
    if (!family) return undefined;
    try {
      return new SocketAddress({ address, port: port === undefined ? 0 : Number(port), family });
    } catch {
      return undefined;
    }
  }
}

/** `address` (a string or SocketAddress) of `family` as { family, value, text }; throws when it is not one. */
function addressOf(address, family, name) {
  if (address instanceof SocketAddress) return { family: address.family, value: address.family === "ipv4" ? v4Value(address.address) : v6Value(address.address), text: address.address };
  if (typeof address !== "string") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "${name}" argument must be of type string or an instance of SocketAddress. Received ${describe(address)}`);
  family = normalizeFamily(family, "family");
  const valid = family === "ipv4" ? isIPv4(address) : isIPv6(address);
  if (!valid) throw coded(TypeError, "ERR_INVALID_IP_ADDRESS", `Invalid IP address: ${address}`);
  return { family, value: family === "ipv4" ? v4Value(address) : v6Value(address), text: address };
}

const label = (family) => (family === "ipv4" ? "IPv4" : "IPv6");

/** Whether a rule of `ruleFamily` over [low, high] covers `value` of `family`. */
function covers(ruleFamily, low, high, family, value) {
  if (ruleFamily === family) return value >= low && value <= high;
  // An IPv4 rule covers the IPv4-mapped IPv6 form of its addresses.
  if (ruleFamily === "ipv4" && family === "ipv6" && value >> 32n === 0xffffn) {
    const v4 = value - MAPPED_PREFIX;
    return v4 >= low && v4 <= high;
  }
  return false;
}

class BlockList {
  #rules = []; // { family, low, high, text }, newest first (Node lists them so)
  static isBlockList(value) {
    return value instanceof BlockList;
  }
  addAddress(address, family = "ipv4") {
    const a = addressOf(address, family, "address");
    this.#rules.unshift({ family: a.family, low: a.value, high: a.value, text: `Address: ${label(a.family)} ${a.text}` });
  }
  addRange(start, end, family = "ipv4") {
    const a = addressOf(start, family, "start");
    const b = addressOf(end, family, "end");
    if (a.family !== b.family || b.value < a.value) throw coded(TypeError, "ERR_INVALID_ARG_VALUE", "The argument 'start' is invalid. Received must not be greater than end");
    this.#rules.unshift({ family: a.family, low: a.value, high: b.value, text: `Range: ${label(a.family)} ${a.text}-${b.text}` });
  }
  addSubnet(network, prefix, family = "ipv4") {
    const a = addressOf(network, family, "network");
    const bits = a.family === "ipv4" ? 32 : 128;
    if (typeof prefix !== "number") throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "prefix" argument must be of type number. Received ${describe(prefix)}`);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
      throw coded(RangeError, "ERR_OUT_OF_RANGE", `The value of "prefix" is out of range. It must be >= 0 && <= ${bits}. Received ${prefix}`);
    }
    const hostBits = BigInt(bits - prefix);
    const low = (a.value >> hostBits) << hostBits;
    this.#rules.unshift({ family: a.family, low, high: low + (1n << hostBits) - 1n, text: `Subnet: ${label(a.family)} ${a.text}/${prefix}` });
  }
  check(address, family = "ipv4") {
    let a;
    try {
      a = addressOf(address, family, "address");
    } catch (error) {
      if (error.code === "ERR_INVALID_IP_ADDRESS") return false;
      throw error;
    }
    return this.#rules.some((rule) => covers(rule.family, rule.low, rule.high, a.family, a.value));
  }
  get rules() {
    return this.#rules.map((rule) => rule.text);
  }
  toJSON() {
    return this.rules;
  }
  /** Adds the rules `data` lists (strings as `rules` renders them, or a JSON text of such a list). */
  fromJSON(data) {
    const list = typeof data === "string" ? JSON.parse(data) : data;
    if (!Array.isArray(list)) throw coded(TypeError, "ERR_INVALID_ARG_TYPE", `The "data" argument must be an instance of Array. Received ${describe(data)}`);
    for (const rule of [...list].reverse()) {
      const match = /^(Address|Range|Subnet): (IPv4|IPv6) (.+)$/.exec(String(rule));
      if (!match) continue;
      const [, kind, fam, rest] = match;
      const family = fam.toLowerCase();
      if (kind === "Address") this.addAddress(rest, family);
      else if (kind === "Range") {
        const dash = rest.indexOf("-");
        this.addRange(rest.slice(0, dash), rest.slice(dash + 1), family);
      } else {
        const slash = rest.lastIndexOf("/");
        this.addSubnet(rest.slice(0, slash), Number(rest.slice(slash + 1)), family);
      }
    }
  }
}

module.exports = { SocketAddress, BlockList };
