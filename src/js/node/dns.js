// node:dns: workerd resolves names over DNS-over-HTTPS (Cloudflare's 1.1.1.1); workerbox does
// not, so every lookup and resolve* call fails with ERR_METHOD_NOT_IMPLEMENTED — through its
// callback, or as a rejection in dns.promises (see docs/compatibility.md). The result-order and server
// settings are kept, and the error codes (dns.NOTFOUND, …) are Node's.
const { notImplementedError, invalidArgType } = require("node:internal/errors");

const CODES = ["NODATA", "FORMERR", "SERVFAIL", "NOTFOUND", "NOTIMP", "REFUSED", "BADQUERY", "BADNAME", "BADFAMILY", "BADRESP",
  "CONNREFUSED", "TIMEOUT", "EOF", "FILE", "NOMEM", "DESTRUCTION", "BADSTR", "BADFLAGS", "NONAME", "BADHINTS", "NOTINITIALIZED",
  "LOADIPHLPAPI", "ADDRGETNETWORKPARAMS", "CANCELLED"];
const METHODS = ["lookup", "lookupService", "resolve", "resolve4", "resolve6", "resolveAny", "resolveCaa", "resolveCname", "resolveMx",
  "resolveNaptr", "resolveNs", "resolvePtr", "resolveSoa", "resolveSrv", "resolveTxt", "reverse"];

let resultOrder = "verbatim";
let servers = ["1.1.1.1", "[2606:4700:4700::1111]", "1.0.0.1", "[2606:4700:4700::1001]"];
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

function callbackStyle(name) {
  return function (...args) {
    const callback = args.at(-1);
    if (typeof callback !== "function") throw invalidArgType("callback", "function", callback);
    const error = notImplementedError(`dns.${name}`);
    queueMicrotask(() => callback(error));
    return {};
  };
}
function promiseStyle(name) {
  return async () => {
    throw notImplementedError(`dns.promises.${name}`);
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
