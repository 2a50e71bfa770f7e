// EventSource (HTML Standard's server-sent events), as workerd has it (src/workerd/api/
// eventsource.c++): `new EventSource(url, { fetcher })` fetches `url` (through the given service
// binding, or the global fetch) with `accept: text/event-stream` and `cache-control: no-cache`
// (and `last-event-id` once an id was seen), checks the answer (a 2xx status and a
// text/event-stream content type, or it fails for good), and parses the body as an event stream
// into "message" (or named) MessageEvents. When the body ends the source reconnects after the
// reconnection time (2 s; a `retry:` field sets it, kept between 1 and 10 s); an answer with no
// body is retried once. `EventSource.from(readable)` parses a stream the worker has, without
// reconnecting. As in workerd, withCredentials must be false, close() is also Symbol.dispose,
// and any `on<type>` property of the source is a handler for events of that type.

const { Event, EventTarget, DOMException, MessageEvent, ErrorEvent, AbortController, URL, TextDecoder, Headers, ReadableStream } = globalThis;
const { setTimeout, clearTimeout, fetch: globalFetch } = globalThis;
const streamSlot = internals.streams.slots;

const CONNECTING = 0, OPEN = 1, CLOSED = 2;
const DEFAULT_RECONNECTION_MS = 2000, MIN_RECONNECTION_MS = 1000, MAX_RECONNECTION_MS = 10000;
const TOKEN = Symbol("EventSource.from");

/** The lines of an event stream, fed in chunks of bytes: the event-stream grammar's parser. */
class EventStreamParser {
  #source;
  #decoder = new TextDecoder("utf-8", { ignoreBOM: false });
  #kept = "";
  #pendingCr = false; // the last chunk ended with "\r": a "\n" starting the next one belongs to it
  #message = null; // { data: [], event: undefined }
  constructor(source) {
    this.#source = source;
  }

  /** Parses `bytes`; returns the messages completed by them. */
  write(bytes) {
    let text = this.#decoder.decode(bytes, { stream: true });
    if (this.#pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.#pendingCr = false;
    const messages = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.#line(this.#kept + text.slice(start, i), messages);
      this.#kept = "";
      if (c === 13) {
        if (i + 1 === text.length) this.#pendingCr = true;
        else if (text.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.#kept += text.slice(start);
    return messages;
  }

  #line(line, messages) {
    if (line.length === 0) {
      if (this.#message !== null) {
        messages.push({ ...this.#message, id: internals.eventSourceLastId(this.#source) });
        this.#message = null;
      }
      return;
    }
    if (line[0] === ":") return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value[0] === " ") value = value.slice(1);
    this.#message ??= { data: [], event: undefined };
    if (field === "data") this.#message.data.push(value);
    else if (field === "event") this.#message.event = value;
    else if (field === "id") internals.eventSourceSetLastId(this.#source, value);
    else if (field === "retry" && /^[0-9]+$/.test(value) && Number(value) <= 0xffffffff) {
      internals.eventSourceSetRetry(this.#source, Number(value));
    }
  }
}

function isEventStream(contentType) {
  if (contentType === null) return false;
  const essence = contentType.split(";")[0].trim().toLowerCase();
  return essence === "text/event-stream";
}

function abortError(message) {
  return new DOMException(message, "AbortError");
}

class EventSource extends EventTarget {
  #url = null; // a URL, or null for EventSource.from()
  #fetcher = undefined;
  #readyState = CONNECTING;
  #lastEventId = "";
  #reconnectMs = DEFAULT_RECONNECTION_MS;
  #previousNoBody = false;
  #closeCalled = false;
  #controller = new AbortController();
  #timer = undefined;
  #onopen = null;
  #onmessage = null;
  #onerror = null;

  static {
    internals.eventSourceLastId = (source) => source.#lastEventId;
    internals.eventSourceSetLastId = (source, id) => {
      source.#lastEventId = id;
    };
    internals.eventSourceSetRetry = (source, ms) => {
      source.#reconnectMs = Math.max(Math.min(ms, MAX_RECONNECTION_MS), MIN_RECONNECTION_MS);
    };
  }

  constructor(url, init = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'EventSource': 1 argument required, but only 0 present.");
    super();
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    internals.eventTargetReflect(this, this);
    if (url === TOKEN) return;
    if (init !== undefined && init !== null && typeof init !== "object") {
      throw new TypeError("Failed to construct 'EventSource': the init must be an object.");
    }
    if (init?.withCredentials !== undefined && Boolean(init.withCredentials)) {
      throw new DOMException("The init.withCredentials option is not supported. It must be false or undefined.", "NotSupportedError");
    }
    const text = String(url);
    let parsed;
    try {
      parsed = new URL(text);
    } catch {
      throw new DOMException(`Cannot open an EventSource to '${text}'. The URL is invalid.`, "SyntaxError");
    }
    const fetcher = init?.fetcher;
    if (fetcher !== undefined && fetcher !== null && typeof fetcher?.fetch !== "function") {
      throw new TypeError("Failed to construct 'EventSource': init.fetcher must be a Fetcher (a service binding).");
    }
    this.#url = parsed;
    this.#fetcher = fetcher ?? undefined;
    this.#start();
  }

  /** An EventSource reading the event stream `readable` (not reconnecting). */
  static from(readable) {
    if (!(readable instanceof ReadableStream)) throw new TypeError("EventSource.from: the argument must be a ReadableStream.");
    if (readable.locked) throw new TypeError("This ReadableStream is locked.");
    if (readable[streamSlot._disturbed] === true) throw new TypeError("This ReadableStream has already been read from.");
    const source = new EventSource(TOKEN);
    source.#run(readable, false);
    return source;
  }

  get url() {
    return this.#url === null ? "" : this.#url.href;
  }
  get withCredentials() {
    return false;
  }
  get readyState() {
    return this.#readyState;
  }
  get onopen() {
    return this.#onopen;
  }
  set onopen(value) {
    this.#onopen = typeof value === "object" || typeof value === "function" ? value : null;
  }
  get onmessage() {
    return this.#onmessage;
  }
  set onmessage(value) {
    this.#onmessage = typeof value === "object" || typeof value === "function" ? value : null;
  }
  get onerror() {
    return this.#onerror;
  }
  set onerror(value) {
    this.#onerror = typeof value === "object" || typeof value === "function" ? value : null;
  }

  close() {
    if (this.#closeCalled) return;
    this.#closeCalled = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#controller.abort();
    this.#readyState = CLOSED;
  }

  [Symbol.dispose]() {
    this.close();
  }

  get [Symbol.toStringTag]() {
    return "EventSource";
  }

  #notifyError(error, reconnecting = false) {
    if (this.#readyState === CLOSED) return;
    this.#controller.abort(error);
    this.#readyState = reconnecting ? CONNECTING : CLOSED;
    this.dispatchEvent(new ErrorEvent("error", { error, message: String(error?.message ?? error) }));
  }

  #notifyOpen() {
    if (this.#readyState === CLOSED) return;
    this.#readyState = OPEN;
    this.dispatchEvent(new Event("open"));
  }

  #notifyMessages(messages) {
    for (const message of messages) {
      if (this.#readyState === CLOSED) return;
      const data = message.data.join("\n");
      if (data.length === 0) continue;
      const event = new MessageEvent(message.event ?? "message", { data, lastEventId: message.id });
      if (this.#url !== null) internals.messageEventSetOrigin(event, this.#url.origin);
      this.dispatchEvent(event);
    }
  }

  #reconnect() {
    // A source closed by an error handler stays closed (workerd would set it connecting again).
    if (this.#closeCalled) return;
    this.#readyState = CONNECTING;
    this.#controller = new AbortController();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#start();
    }, this.#reconnectMs);
  }

  async #start() {
    if (this.#readyState === CLOSED) return;
    const headers = new Headers({ accept: "text/event-stream", "cache-control": "no-cache" });
    if (this.#lastEventId !== "") headers.set("last-event-id", this.#lastEventId);
    const init = { headers, signal: this.#controller.signal };
    let response;
    try {
      response = this.#fetcher !== undefined ? await this.#fetcher.fetch(this.#url.href, init) : await globalFetch(this.#url.href, init);
    } catch (error) {
      this.#notifyError(error);
      return;
    }
    if (this.#readyState === CLOSED) return;
    if (!response.ok) {
      this.#notifyError(abortError(`The response status code was ${response.status}.`));
      return;
    }
    const contentType = response.headers.get("content-type");
    if (contentType === null) {
      this.#notifyError(abortError("No content type header was present in the response."));
      return;
    }
    if (!isEventStream(contentType)) {
      this.#notifyError(abortError(`The content type '${contentType}' is invalid.`));
      return;
    }
    if (response.redirected) {
      try {
        this.#url = new URL(response.url);
      } catch {}
    }
    if (response.body === null) {
      if (this.#previousNoBody) {
        this.#notifyError(new Error("The server provided no content."));
      } else {
        this.#previousNoBody = true;
        this.#notifyError(new Error("The server provided no content. Will try reconnecting."), true);
        this.#reconnect();
      }
      return;
    }
    this.#run(response.body, true);
  }

  async #run(readable, withReconnection) {
    this.#notifyOpen();
    const parser = new EventStreamParser(this);
    const reader = readable.getReader();
    const signal = this.#controller.signal;
    const onAbort = () => reader.cancel(signal.reason).catch(() => {});
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (this.#readyState === CLOSED) return;
        if (!(value instanceof Uint8Array)) throw new TypeError("The event stream must be a stream of bytes (Uint8Array chunks).");
        const messages = parser.write(value);
        // workerd hands the parsed messages to the source in a later task.
        if (messages.length > 0) await null;
        this.#notifyMessages(messages);
      }
    } catch (error) {
      if (this.#readyState !== CLOSED && !signal.aborted) this.#notifyError(error);
      return;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    if (this.#readyState === CLOSED) return;
    this.#notifyError(new Error("The server disconnected."), withReconnection);
    if (withReconnection) this.#reconnect();
  }
}

Object.defineProperties(EventSource, {
  CONNECTING: { value: CONNECTING, enumerable: true },
  OPEN: { value: OPEN, enumerable: true },
  CLOSED: { value: CLOSED, enumerable: true },
});
Object.defineProperties(EventSource.prototype, {
  CONNECTING: { value: CONNECTING, enumerable: true },
  OPEN: { value: OPEN, enumerable: true },
  CLOSED: { value: CLOSED, enumerable: true },
});

internals.defineGlobal("EventSource", EventSource);
