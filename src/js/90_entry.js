// The worker entry: receives requests from the host, runs the script's fetch handler (module
// `export default { fetch }` or service-worker `addEventListener("fetch", …)`), and hands the
// outcome back through `ops.respond` / `ops.respondError`. Also defines `FetchEvent` and the
// `ctx` (ExecutionContext) object handlers receive.

const { Event, Response } = globalThis;

let format = "module";
let env = Object.freeze({});
let handler = null;
let sawFetchListener = false;

// Wrap the global addEventListener to learn whether a service-worker script registered for
// "fetch", so start-up can fail clearly when none did.
const addGlobalListener = globalThis.addEventListener;
internals.defineGlobal("addEventListener", function addEventListener(type, listener, options) {
  if (String(type) === "fetch" && listener != null) sawFetchListener = true;
  return addGlobalListener(type, listener, options);
});

/** Keeps the worker's background work alive and reports its failures. */
function trackBackground(promise) {
  Promise.resolve(promise).catch((error) => internals.reportError(error));
}

class ExecutionContext {
  waitUntil(promise) {
    if (arguments.length === 0) throw new TypeError("waitUntil: 1 argument required, but only 0 present.");
    trackBackground(promise);
  }
  passThroughOnException() {
    // There is no origin to fall back to locally; errors are reported to the host instead.
  }
  get [Symbol.toStringTag]() {
    return "ExecutionContext";
  }
}

class FetchEvent extends Event {
  #request;
  #response = null;
  #dispatching = true;
  constructor(type, init = {}) {
    super(type, init);
    if (!init || !(init.request instanceof globalThis.Request)) {
      throw new TypeError("FetchEvent: init.request must be a Request");
    }
    this.#request = init.request;
  }
  get request() {
    return this.#request;
  }
  respondWith(response) {
    if (!this.#dispatching) {
      throw new internals.DOMException("respondWith() must be called synchronously from the event listener", "InvalidStateError");
    }
    if (this.#response !== null) {
      throw new internals.DOMException("respondWith() has already been called for this event", "InvalidStateError");
    }
    this.#response = Promise.resolve(response);
    this.stopImmediatePropagation();
  }
  waitUntil(promise) {
    trackBackground(promise);
  }
  passThroughOnException() {}
  static _finish(event) {
    event.#dispatching = false;
    return event.#response;
  }
  get [Symbol.toStringTag]() {
    return "FetchEvent";
  }
}
const finishEvent = FetchEvent._finish;
delete FetchEvent._finish;
internals.defineGlobal("FetchEvent", FetchEvent);

function describeValue(value) {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (typeof value === "object") {
    const name = value.constructor && value.constructor.name;
    return name ? `an object of type ${name}` : "an object";
  }
  return `a ${typeof value} (${String(value).slice(0, 40)})`;
}

/** Called by the native side once the user's script has loaded. Throws if there is no handler. */
internals.start = function start(envJson, scriptFormat, namespace) {
  format = scriptFormat;
  const bindings = JSON.parse(envJson);
  if (format === "module") {
    env = bindings;
    const exported = namespace.default;
    if (exported === undefined) {
      throw new TypeError("The worker module has no default export; expected `export default { fetch(request, env, ctx) { … } }`.");
    }
    if (exported === null || typeof exported.fetch !== "function") {
      throw new TypeError(`The worker module's default export has no fetch() handler (it is ${describeValue(exported)}); expected \`export default { fetch(request, env, ctx) { … } }\`.`);
    }
    handler = exported;
  } else {
    // Service-worker scripts see their bindings as globals.
    for (const name of Object.keys(bindings)) internals.defineGlobal(name, bindings[name]);
    if (!sawFetchListener) {
      throw new TypeError('The worker script registered no fetch handler; expected `addEventListener("fetch", (event) => event.respondWith(…))` or an ES module with `export default { fetch }`.');
    }
  }
};

function fail(id, error) {
  if (error !== null && typeof error === "object" && "message" in error) {
    const name = String(error.name ?? "Error");
    const message = String(error.message);
    const stack = typeof error.stack === "string" ? error.stack : `${name}: ${message}`;
    ops.respondError(id, name, message, stack);
  } else {
    const text = internals.inspect ? internals.inspect(error) : String(error);
    ops.respondError(id, "Error", `Uncaught ${text}`, `Error: Uncaught ${text}`);
  }
}

function respond(id, response) {
  if (!(response instanceof Response)) {
    fail(id, new TypeError(`The fetch handler must return a Response (or a Promise of one), but it returned ${describeValue(response)}.`));
    return;
  }
  if (response.type === "error") {
    fail(id, new TypeError("The fetch handler returned Response.error(), a network error."));
    return;
  }
  const parts = internals.responseParts(response);
  ops.respond(id, parts.status, parts.statusText, parts.headers, parts.body);
}

function runServiceWorker(request) {
  const event = new FetchEvent("fetch", { request });
  internals.globalEventTarget.dispatchEvent(event);
  const response = finishEvent(event);
  if (response === null) {
    throw new Error("No fetch event listener called event.respondWith(); there is no origin to pass the request on to.");
  }
  return response;
}

/** Called by the native side for every request. Never throws: outcomes go through ops. */
internals.dispatchFetch = function dispatchFetch(id, method, url, flatHeaders, body) {
  let result;
  try {
    const request = internals.newIncomingRequest(method, url, flatHeaders, body);
    result = format === "module" ? handler.fetch(request, env, new ExecutionContext()) : runServiceWorker(request);
  } catch (error) {
    fail(id, error);
    return;
  }
  Promise.resolve(result).then(
    (response) => {
      try {
        respond(id, response);
      } catch (error) {
        fail(id, error);
      }
    },
    (error) => fail(id, error),
  );
};
