// node:dns: workerd resolves names over DNS-over-HTTPS (Cloudflare's 1.1.1.1); workerbox does
// not, so every lookup and resolve* call fails with ERR_METHOD_NOT_IMPLEMENTED — through its
// callback, or as a rejection in dns.promises (see docs/compatibility.md), after lookup()'s
// arguments are checked as Node checks them. The result-order and server
// settings are kept, and the error codes (dns.NOTFOUND, …) are Node's.
const { notImplementedError, invalidArgType } = require("node:internal/errors");

const CODES = ["NODATA", "FORMERR", "SERVFAIL", "NOTFOUND", "NOTIMP", "REFUSED", "BADQUERY", "BADNAME", "BADFAMILY", "BADRESP",
  "CONNREFUSED", "TIMEOUT", "EOF", "FILE", "NOMEM", "DESTRUCTION", "BADSTR", "BADFLAGS", "NONAME", "BADHINTS", "NOTINITIALIZED",
  "LOADIPHLPAPI", "ADDRGETNETWORKPARAMS", "CANCELLED"];
const METHODS = ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny", "resolveCaa", "resolveCname", "resolveMx",
  "resolveNaptr", "resolveNs", "resolvePtr", "resolveSoa", "resolveSrv", "resolveTxt", "reverse"];

let resultOrder = "verbatim";
let servers = ["1.1.1.1", "2606:4700:4700::1111", "1.0.0.1", "2606:4700:4700::1001"];
const settings = {
  getServers: () => [...servers],
  setServers(list) {
    if (!Array.isArray(list)) throw invalidArgType("servers", "Array", list);
    servers = list.map(String);
  },
  getDefaultResultOrder: () => resultOrder,
  setDefaultResultOrder(order) {
    if (!["ipv4first", "ipv6first", "verbatim"].includes(order)) {
      const error = new TypeError(`The argument 'dnsOrder' must be one of: 'verbatim', 'ipv4first', 'ipv6first'. Received ${JSON.stringify(order)}`);
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    resultOrder = order;
  },
};

function oneOf(value, name, allowed, property = true) {
  if (allowed.includes(value)) return;
  const shown = allowed.map((item) => (typeof item === "string" ? `'${item}'` : String(item))).join(", ");
  const received = typeof value === "symbol" || typeof value === "function" || (typeof value === "object" && value !== null) ? internals.inspect(value) : typeof value === "string" ? `'${value}'` : typeof value === "bigint" ? `${value}n` : String(value);
  const error = new TypeError(`The ${property ? "property" : "argument"} '${name}' must be one of: ${shown}. Received ${received}`);
  error.code = "ERR_INVALID_ARG_VALUE";
  throw error;
}

/** lookup()'s argument checks, as Node makes them (before anything is looked up). */
function validateLookup(hostname, options, callback, argc, withCallback) {
  if (hostname && typeof hostname !== "string") throw invalidArgType("hostname", "string", hostname);
  const needCallback = (fn) => {
    if (withCallback && typeof fn !== "function") throw invalidArgType("callback", "function", fn);
  };
  if (typeof options === "function" && withCallback) return;
  if (typeof options === "number") {
    needCallback(callback);
    oneOf(options, "family", [0, 4, 6], false);
    return;
  }
  if (options !== undefined && options !== null && typeof options !== "object") {
    needCallback(argc === 2 ? options : callback);
    throw invalidArgType("options", "integer or object", options);
  }
  needCallback(callback);
  if (options?.hints !== undefined && options?.hints !== null && typeof options.hints !== "number") throw invalidArgType("options.hints", "number", options.hints);
  if (options?.family !== undefined && options?.family !== null && options.family !== "IPv4" && options.family !== "IPv6") oneOf(options.family, "options.family", [0, 4, 6]);
  for (const name of ["all", "verbatim"]) {
    if (options?.[name] !== undefined && options?.[name] !== null && typeof options[name] !== "boolean") throw invalidArgType(`options.${name}`, "boolean", options[name]);
  }
  if (options?.order !== undefined && options?.order !== null) oneOf(options.order, "options.order", ["ipv4first", "ipv6first", "verbatim"]);
}

function callbackStyle(name) {
  return function (...args) {
    if (name === "lookup") validateLookup(args[0], args[1], args[2], args.length, true);
    const callback = args.at(-1);
    if (typeof callback !== "function") throw invalidArgType("callback", "function", callback);
    const error = notImplementedError(`dns.${name}`);
    queueMicrotask(() => callback(error));
    return {};
  };
}
function promiseStyle(name) {
  return (...args) => {
    if (name === "lookup") validateLookup(args[0], args[1], undefined, args.length, false);
    return Promise.reject(notImplementedError(`dns.promises.${name}`));
  };
}

function build(style) {
  const api = { ...settings };
  for (const code of CODES) api[code] = code === "CANCELLED" ? "ECANCELLED" : `E${code}`;
  for (const method of METHODS) api[method] = style(method);
  class Resolver {
    cancel() {}
    getServers() { return settings.getServers(); }
    setServers(list) { settings.setServers(list); }
    setLocalAddress() {}
  }
  for (const method of METHODS) if (method !== "lookup" && method !== "lookupService") Resolver.prototype[method] = api[method];
  Object.defineProperty(Resolver, "name", { value: "Resolver" });
  api.Resolver = Resolver;
  api.ADDRCONFIG = 1024;
  api.ALL = 256;
  api.V4MAPPED = 2048;
  return api;
}

module.exports = build(callbackStyle);
module.exports.promises = build(promiseStyle);
