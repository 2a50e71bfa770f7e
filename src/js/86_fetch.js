// fetch(): outbound HTTP from the worker. Requests go to the worker's scheduler thread
// (reqwest) — or, when the host gave createWorker an `outbound` handler, to that handler, the
// way a service binding's requests do. An AbortSignal cancels a request in flight.

const { Request, URL } = globalThis;
const OUTBOUND = "#outbound";
let intercepted = false;

/** Called by the entry when the host passed an `outbound` handler. */
internals.interceptOutbound = () => {
  intercepted = true;
};

function abortedPromise(signal) {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

async function fetch(input, init = undefined) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'fetch': 1 argument required, but only 0 present.");
  const request = new Request(input, init);
  const signal = request.signal;
  signal.throwIfAborted();
  const protocol = new URL(request.url).protocol;
  if (protocol !== "http:" && protocol !== "https:") {
    throw new TypeError(`fetch: unsupported protocol "${protocol}" in ${request.url} (only http: and https: are supported)`);
  }
  if (intercepted) {
    return Promise.race([internals.fetchThroughHost(OUTBOUND, request), abortedPromise(signal)]);
  }
  const headers = [];
  for (const [name, value] of internals.headersList(request.headers)) headers.push(name, value);
  const body = request.method === "GET" || request.method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
  const [id, pending] = ops.fetch(request.method, request.url, headers, body, request.redirect);
  // The native promise settles even after an abort (with an AbortError); nothing waits on it then.
  pending.catch(() => {});
  const cancel = () => ops.fetchCancel(id);
  signal.addEventListener("abort", cancel, { once: true });
  try {
    const [json, bytes] = await Promise.race([pending, abortedPromise(signal)]);
    const head = JSON.parse(json);
    return internals.newFetchResponse(head.status, head.statusText, head.headers, request.method === "HEAD" ? null : bytes, head.url, head.redirected);
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

internals.defineGlobal("fetch", fetch);
