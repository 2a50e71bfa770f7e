"use strict";
// Hyperdrive bindings as workerbox runs them locally, the way wrangler dev and Miniflare do: the
// binding is the local database's connection (its `localConnectionString`, or wrangler's
// CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_<BINDING> variable over it), and `env.<BINDING>`
// has `connectionString`, `host`, `port`, `user`, `password` and `database` of that connection.
// The worker's driver connects to it directly with connect() from cloudflare:sockets
// (docs/sockets.md), or through the binding's own connect() (a socket to that database, as
// workerd's Hyperdrive binding gives); TLS is as the connection string's sslmode says.

/** The binding's value for a connection URL; `where` names it in errors. */
function hyperdrive(connectionString, where = "hyperdrive()") {
  let url;
  try {
    url = new URL(String(connectionString));
  } catch {
    throw new TypeError(`${where}: "${connectionString}" is not a connection URL (postgres://user:password@host:port/database)`);
  }
  const defaultPort = { "postgres:": 5432, "postgresql:": 5432, "mysql:": 3306 }[url.protocol];
  if (defaultPort === undefined) throw new TypeError(`${where}: "${url.protocol}" is not a Hyperdrive scheme (postgres:, postgresql: or mysql:)`);
  const parts = {
    connectionString: String(connectionString),
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port ? Number(url.port) : defaultPort,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: decodeURIComponent(url.pathname.slice(1)),
  };
  // What a worker gets (as JSON): the same parts, marked, so that the isolate makes it a
  // Hyperdrive object with connect() (src/js/89_local_bindings.js). In Node it stays plain.
  Object.defineProperty(parts, "toJSON", { value: () => ({ ...parts, [HYPERDRIVE_MARK]: true }) });
  return parts;
}

/** The key that marks a Hyperdrive binding's parts in the env JSON (read in src/js/89_local_bindings.js). */
const HYPERDRIVE_MARK = "__workerboxHyperdrive";

/** The variable wrangler reads for binding `name`'s local connection (and its older name). */
function localConnectionFromEnv(name, env = process.env) {
  return env[`CLOUDFLARE_HYPERDRIVE_LOCAL_CONNECTION_STRING_${name}`] ?? env[`WRANGLER_HYPERDRIVE_LOCAL_CONNECTION_STRING_${name}`];
}

module.exports = { hyperdrive, localConnectionFromEnv };
