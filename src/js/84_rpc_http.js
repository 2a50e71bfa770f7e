// Requests and Responses as Workers RPC values, as workerd sends them: a Request's URL, method,
// headers, redirect mode, `cf` and body; a Response's status, status text, headers, `cf` and
// body. The body is read whole before the value is written (84_rpc.js marshalAsync); the
// receiver gets a new Request or Response over those bytes.

/**
 * Signals of incoming requests (enable_request_signal) that subrequests leave behind, as workerd's
 * IGNORE_FOR_SUBREQUESTS signals (unless request_signal_passthrough): a fetch() of such a request,
 * or of one made from it, is not aborted by it, and a Request sent over RPC goes without it.
 */
internals.ignoredForSubrequests = new WeakSet();

/** A token naming one fetch through the host, so that giving up on it can name it too (85_bindings.js). */
const randomUUID = crypto.randomUUID.bind(crypto);
internals.randomToken = () => randomUUID();

/** The signal a subrequest for `request` follows: a never-aborting one in place of an ignored one. */
internals.subrequestSignal = (request) => {
  const signal = request.signal;
  return internals.ignoredForSubrequests.has(signal) ? internals.newAbortSignal() : signal;
};

/** A Request's or Response's place inside a serialized value: `{ [KEY]: [kind, …parts] }`. */
const KEY = "\u0000workerbox.rpc.http";

/** Reads `message`'s body into `parts[at]` (null when it has none), pushing the read onto `pending`. */
function readInto(message, parts, at, pending) {
  if (message.body === null) return;
  pending.push(message.arrayBuffer().then((buffer) => (parts[at] = new Uint8Array(buffer))));
}

internals.rpcHttp = {
  KEY,

  /**
   * The place for `v` when it is a Request or Response, else undefined. `walk` places a
   * Request's signal (under enable_abortsignal_rpc, as an AbortSignal sent on its own crosses).
   */
  encode(v, pending, walk) {
    if (v instanceof Request) {
      const signal = internals.feature("enable_abortsignal_rpc") && !internals.ignoredForSubrequests.has(v.signal) ? walk(v.signal) : null;
      const parts = ["request", v.url, v.method, new Headers(v.headers), v.redirect, v.cf ?? null, null, signal];
      readInto(v, parts, 6, pending);
      return { [KEY]: parts };
    }
    if (v instanceof Response) {
      // Response.error() (status 0, which no constructor takes) crosses as itself.
      if (v.type === "error") return { [KEY]: ["error"] };
      const parts = ["response", v.status, v.statusText, new Headers(v.headers), v.cf ?? null, null];
      readInto(v, parts, 5, pending);
      return { [KEY]: parts };
    }
    return undefined;
  },

  /** The Request or Response a place stands for (`walk` turns the signal's place back). */
  decode(place, walk) {
    const parts = place[KEY];
    if (parts[0] === "request") {
      const [, url, method, headers, redirect, cf, body, signal] = parts;
      const received = signal === null || signal === undefined ? null : walk(signal);
      return new Request(url, { method, headers, redirect, ...(cf === null ? {} : { cf }), ...(received === null ? {} : { signal: received }), body });
    }
    if (parts[0] === "error") return Response.error();
    const [, status, statusText, headers, cf, body] = parts;
    return new Response(body, { status, statusText, headers, ...(cf === null ? {} : { cf }) });
  },
};
