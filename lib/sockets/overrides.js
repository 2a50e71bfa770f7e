"use strict";
// createWorker's `connectOverrides`: addresses the worker's outbound sockets (`connect()` from
// cloudflare:sockets, so node:net and node:tls too) dial in place of the ones asked for, as
// `{ "host:port": "host:port" }`. The worker still sees the address it asked for
// (`opened.remoteAddress`), TLS still checks the name it asked for, and the worker's `network`
// policy applies to the address dialed. Read inside the worker from its compat JSON
// (src/js/86_sockets.js); checked here.

/** `host:port` (an IPv6 host in brackets), with a port from 1 to 65535. */
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]/]+):([0-9]{1,5})$/;

function validAddress(text) {
  const m = typeof text === "string" ? ADDRESS.exec(text) : null;
  return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
}

/** The overrides as given (a plain object of addresses), or a TypeError naming the bad entry. */
function connectOverrides(value) {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new TypeError('createWorker: options.connectOverrides must be an object { "host:port": "host:port" } (the address connect() asks for → the one dialed)');
  }
  const out = {};
  for (const [from, to] of Object.entries(value)) {
    if (!validAddress(from)) throw new TypeError(`createWorker: options.connectOverrides key ${JSON.stringify(from)} is not an address "host:port" (an IPv6 host in brackets, port 1-65535)`);
    if (!validAddress(to)) throw new TypeError(`createWorker: options.connectOverrides[${JSON.stringify(from)}] must be an address "host:port" (an IPv6 host in brackets, port 1-65535), got ${JSON.stringify(to)}`);
    out[from] = to;
  }
  return out;
}

module.exports = { connectOverrides };
