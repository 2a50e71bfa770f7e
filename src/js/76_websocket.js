// WebSockets inside the worker: `WebSocketPair`, `WebSocket` (accept, send, close, message /
// close / error events, attachments), outbound connections (`new WebSocket(url)`, and
// `fetch()` with `Upgrade: websocket`, made on the scheduler thread by
// src/runtime/websocket_client.rs through the fetch ops) and the link to the host. The two ends of a pair talk to
// each other in the isolate; once one end leaves in a 101 Response (or arrives from another
// worker through a fetch() answer), its partner talks to the host instead, by a socket id:
// messages out go as `#ws` host calls, messages in arrive as RPC events (`kind: "ws"`, see
// internals.webSocketEvent). The host end is lib/websocket.js.

const { URL } = internals; // the WHATWG URL, whatever url_standard makes the global one

const kSocket = Symbol("websocket");
const wsEncoder = new TextEncoder();
const wsDecoder = new TextDecoder();
/** The largest message one send() may carry, as in production (32 MiB). */
const MAX_MESSAGE_BYTES = 32 << 20;
const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/** Sockets whose partner is at the host, by socket id. */
const hostLinked = new Map();
let nextSocketId = 1;

/** The global MessageEvent (src/js/75_messaging.js). */
const MessageEventImpl = internals.MessageEvent;

/** Where header `name` (lower case) is in a flat `[name, value, …]` list, or -1. */
function headerIndex(flat, name) {
  for (let i = 0; i + 1 < flat.length; i += 2) if (String(flat[i]).toLowerCase() === name) return i;
  return -1;
}

/** A flat `[name, value, …]` header list without `name` (lower case). */
function withoutHeader(flat, name) {
  const kept = [];
  for (let i = 0; i + 1 < flat.length; i += 2) if (String(flat[i]).toLowerCase() !== name) kept.push(flat[i], flat[i + 1]);
  return kept;
}

/**
 * The extension a 101 Response leaving for the host asks the client's connection to use, as
 * workerd decides it: from web_socket_compression (2023-08-15), the worker's own
 * `Sec-WebSocket-Extensions` ("" for none), else whatever the client offered; before, none.
 * Changes the flat response header list in place; the host (e.g. `workerbox dev`) negotiates
 * from it.
 */
internals.webSocketAnswerExtensions = (responseHeaders, requestHeaders) => {
  const name = "sec-websocket-extensions";
  if (!internals.feature("web_socket_compression")) {
    for (let i = headerIndex(responseHeaders, name); i !== -1; i = headerIndex(responseHeaders, name)) responseHeaders.splice(i, 2);
  } else if (headerIndex(responseHeaders, name) === -1) {
    const offered = headerIndex(requestHeaders, name);
    if (offered !== -1) responseHeaders.push(name, requestHeaders[offered + 1]);
  }
};

class CloseEvent extends Event {
  #code;
  #reason;
  #wasClean;
  constructor(type, init = {}) {
    super(type, init);
    // workerd makes its Event subclasses trusted when a script constructs them (only Event is not).
    internals.eventMarkTrusted(this);
    this.#code = init.code ?? 0;
    // A USVString, as the HTML standard types it: lone surrogates become U+FFFD.
    this.#reason = String(init.reason ?? "").toWellFormed();
    this.#wasClean = init.wasClean ?? false;
  }
  get code() {
    return this.#code;
  }
  get reason() {
    return this.#reason;
  }
  get wasClean() {
    return this.#wasClean;
  }
}

/** A message as bytes plus whether it is text. */
function messageOf(data) {
  if (typeof data === "string") return { text: true, bytes: wsEncoder.encode(data) };
  if (data instanceof ArrayBuffer) return { text: false, bytes: new Uint8Array(data.slice(0)) };
  if (ArrayBuffer.isView(data)) return { text: false, bytes: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)) };
  throw new TypeError("WebSocket.send: the message must be a string, an ArrayBuffer or an ArrayBufferView.");
}

function checkClose(code, reason) {
  if (code !== undefined && code !== 1000 && !(Number.isInteger(code) && code >= 3000 && code <= 4999)) {
    // Without pedantic_wpt workerd takes any code from 1000 to 4999 but the four that RFC 6455
    // keeps from Close frames (1004, 1005, 1006, 1015); with it, the standard's 1000 or 3000-4999.
    const legacyOk = Number.isInteger(code) && code > 1000 && code < 3000 && ![1004, 1005, 1006, 1015].includes(code);
    if (!legacyOk || internals.feature("pedantic_wpt")) {
      throw new DOMException(`WebSocket.close: the code must be 1000 or between 3000 and 4999, got ${code}.`, "InvalidAccessError");
    }
  }
  // The 123-byte limit came with websocket_close_reason_byte_limit (2026-03-03).
  if (reason !== undefined && internals.feature("websocket_close_reason_byte_limit") && wsEncoder.encode(String(reason)).length > 123) {
    throw new DOMException("WebSocket.close: the reason must be at most 123 bytes of UTF-8.", "SyntaxError");
  }
}

class WebSocket extends EventTarget {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;
  // workerd's names for the same values (libraries such as partyserver use them).
  static READY_STATE_CONNECTING = CONNECTING;
  static READY_STATE_OPEN = OPEN;
  static READY_STATE_CLOSING = CLOSING;
  static READY_STATE_CLOSED = CLOSED;
  // "blob" from websocket_standard_binary_type (2026-03-17); before, binary messages were always
  // ArrayBuffers unless binaryType is set to "blob".
  #binaryType = internals.feature("websocket_standard_binary_type") ? "blob" : "arraybuffer";
  #state = OPEN;
  /** A close came from the partner before this end sent one (only without auto-reply). */
  #closeReceived = false;
  #accepted = false;
  /** accept()'s allowHalfOpen when given (undefined: the compatibility flag's default). */
  #allowHalfOpen = undefined;
  /** Events that came before accept(). */
  #pending = [];
  /** The other end in this isolate, or null when the partner is at the host (`#hostId`). */
  #peer = null;
  #hostId = null;
  /** Given away (returned in a Response): this object no longer takes part. */
  #detached = false;
  #attachment = undefined;
  #closeSent = false;

  /**
   * The event this socket belongs to while it talks to the outside (host-linked or outbound):
   * its id, and the release of the hold that keeps that event (and its timers) open until the
   * socket closes, as a WebSocket keeps its request's context alive in workerd.
   */
  #origin = undefined;
  #release = null;
  /** The request it belongs to: send() and close() from another throw (src/js/52_io_owner.js). */
  #owner = internals.ioOwner();

  /** An outbound connection: its fetch id once connected, and the chain its frames go out on. */
  #remote = null;
  #writes = Promise.resolve();
  #protocol = "";
  /** `Sec-WebSocket-Extensions` as the server answered it (null once open without one). */
  #extensions = null;
  #url = null;

  /** `new WebSocket(url, protocols)`: connects out; "open" fires once the server accepted. */
  constructor(url, protocols = undefined) {
    super();
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    if (url === kSocket) return;
    if (arguments.length === 0) throw new TypeError("Failed to construct 'WebSocket': 1 argument required, but only 0 present.");
    const parsed = URL.parse(String(url));
    if (parsed === null || !["ws:", "wss:", "http:", "https:"].includes(parsed.protocol)) {
      throw new DOMException(`Failed to construct 'WebSocket': the URL ${String(url)} is invalid (use ws: or wss:).`, "SyntaxError");
    }
    if (parsed.hash !== "") throw new DOMException("Failed to construct 'WebSocket': the URL contains a fragment.", "SyntaxError");
    const list = protocols === undefined ? [] : Array.isArray(protocols) ? protocols.map(String) : [String(protocols)];
    // Each subprotocol must be an HTTP token, and none may repeat (WHATWG; workerd's SyntaxError).
    const seen = new Set();
    for (const protocol of list) {
      if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(protocol)) throw new DOMException(`Failed to construct 'WebSocket': The subprotocol '${protocol}' is invalid.`, "SyntaxError");
      if (seen.has(protocol)) throw new DOMException(`Failed to construct 'WebSocket': The subprotocol '${protocol}' is duplicated.`, "SyntaxError");
      seen.add(protocol);
    }
    this.#url = parsed.href;
    this.#state = CONNECTING;
    this.#accepted = true;
    this.#extensions = "";
    const headers = ["upgrade", "websocket"];
    if (list.length > 0) headers.push("sec-websocket-protocol", list.join(", "));
    // Offered as browsers do, from web_socket_compression (2023-08-15).
    if (internals.feature("web_socket_compression")) headers.push("sec-websocket-extensions", "permessage-deflate");
    const [id, pending] = ops.fetch("GET", parsed.href, headers, true, "manual", true);
    pending.then(
      ([json]) => {
        const head = JSON.parse(json);
        if (head.status !== 101) throw new Error(`the server answered ${head.status} instead of switching protocols`);
        this.#openRemote(id, head);
        this.dispatchEvent(new Event("open"));
      },
    ).catch((error) => {
      this.#receiveError(error);
      this.#receiveClose(1006, String(error?.message ?? error), false);
    });
  }

  /** Connected: reads messages until the close, and takes its protocol from the answer. */
  #openRemote(id, head) {
    this.#remote = id;
    this.#state = OPEN;
    this.#holdEvent();
    const answered = (name) => {
      const at = headerIndex(head.headers, name);
      return at === -1 ? null : head.headers[at + 1];
    };
    this.#protocol = answered("sec-websocket-protocol");
    if (this.#extensions !== null) this.#extensions = answered("sec-websocket-extensions");
    (async () => {
      for (;;) {
        const [json, bytes] = await ops.fetchRead(id);
        const message = JSON.parse(json);
        if (message.type === "close") {
          this.#remote = null;
          this.#receiveClose(message.code, message.reason, message.code !== 1006);
          return;
        }
        this.#receive(message.type === "text" ? wsDecoder.decode(bytes) : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      }
    })().catch((error) => {
      this.#remote = null;
      this.#receiveClose(1006, String(error?.message ?? error), false);
    });
  }

  /** Sends one tagged frame on an outbound connection, after the ones before it. */
  #sendRemote(tag, bytes) {
    const id = this.#remote;
    const frame = new Uint8Array(bytes.byteLength + 1);
    frame[0] = tag;
    frame.set(bytes, 1);
    this.#writes = this.#writes.then(() => ops.fetchWrite(id, frame)).catch(() => {});
  }

  static {
    /** `fetch()` with `Upgrade: websocket`: a 101 Response whose webSocket must be accept()ed. */
    internals.fetchWebSocket = async (url, flatHeaders) => {
      // Before web_socket_compression (2023-08-15) workerd drops the offer, so no extension is agreed.
      if (!internals.feature("web_socket_compression")) flatHeaders = withoutHeader(flatHeaders, "sec-websocket-extensions");
      const [id, pending] = ops.fetch("GET", url, flatHeaders, true, "manual", true);
      const [json, bytes] = await pending;
      const head = JSON.parse(json);
      if (head.status !== 101) return internals.newFetchResponse(head.status, head.statusText, head.headers, bytes, head.url ?? url, false);
      const socket = new WebSocket(kSocket);
      socket.#url = url;
      socket.#openRemote(id, head);
      return new Response(null, { status: 101, statusText: head.statusText, headers: head.headers.reduce((list, v, i, all) => (i % 2 === 0 ? [...list, [v, all[i + 1]]] : list), []), webSocket: socket });
    };
    internals.newWebSocketPair = () => {
      const a = new WebSocket(kSocket);
      const b = new WebSocket(kSocket);
      a.#peer = b;
      b.#peer = a;
      // A WebSocketPair's ends negotiate nothing: workerd's extensions is "" for them.
      a.#extensions = b.#extensions = "";
      return [a, b];
    };
    internals.isWebSocket = (value) => value !== null && typeof value === "object" && #state in value;
    /**
     * The socket id the host uses for `client`, an end leaving in a 101 Response: its partner
     * now talks to the host. An end that came from the host keeps its id.
     */
    internals.webSocketForHost = (client) => {
      if (client.#detached) throw new TypeError("This WebSocket was already returned in another Response.");
      if (client.#accepted) throw new TypeError("A WebSocket that was accept()ed cannot be returned in a Response; return the other end of the WebSocketPair.");
      client.#detached = true;
      if (client.#hostId !== null) {
        hostLinked.delete(client.#hostId);
        client.#unhold();
        return client.#hostId;
      }
      const partner = client.#peer;
      const id = `w${nextSocketId++}`;
      client.#peer = null;
      if (partner !== null) {
        partner.#peer = null;
        partner.#hostId = id;
        hostLinked.set(id, partner);
        partner.#holdEvent();
      }
      client.#forwardPending(id);
      return id;
    };
    /** A socket whose partner is the host's socket `id` (a WebSocket from another worker's answer). */
    internals.webSocketFromHost = (id) => {
      const socket = new WebSocket(kSocket);
      socket.#hostId = id;
      hostLinked.set(id, socket);
      socket.#holdEvent();
      return socket;
    };
    /** A message or close from the host for socket `call.socket` (an RPC event). */
    internals.webSocketEvent = (call, bytes) => {
      const socket = hostLinked.get(call.socket);
      if (socket === undefined) throw new Error(`WebSocket ${call.socket} is gone from this worker.`);
      if (call.type === "message") {
        socket.#receive(call.text ? wsDecoder.decode(bytes) : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      } else if (call.type === "close") {
        hostLinked.delete(call.socket);
        socket.#receiveClose(call.code ?? 1005, call.reason ?? "", call.wasClean !== false);
      } else if (call.type === "error") {
        hostLinked.delete(call.socket);
        socket.#receiveError(new Error(call.message ?? "WebSocket error"));
        socket.#receiveClose(1006, call.message ?? "", false);
      }
    };
  }

  /** Starts delivering events to this end (messages that came before are delivered now). */
  accept(options = undefined) {
    if (this.#detached) throw new TypeError("This WebSocket was returned in a Response; use the other end of the pair.");
    if (this.#accepted) throw new TypeError("accept() was already called on this WebSocket.");
    // accept({ allowHalfOpen }): whether a close that comes in is answered by itself (false,
    // the default under web_socket_auto_reply_to_close) or left to the script's close().
    const allowHalfOpen = options === undefined || options === null ? undefined : options.allowHalfOpen;
    if (allowHalfOpen !== undefined) this.#allowHalfOpen = Boolean(allowHalfOpen);
    this.#accepted = true;
    // A socket that came from the host: the host now sends what it kept for it.
    if (this.#hostId !== null) internals.hostCall("#ws", "accept", { socket: this.#hostId }).catch(() => {});
    const pending = this.#pending;
    this.#pending = [];
    for (const item of pending) queueMicrotask(() => this.#fireInOrigin(item));
  }

  send(message) {
    internals.checkIo(this.#owner, "Native");
    if (!this.#accepted) throw new TypeError("You must call accept() on this WebSocket before sending messages.");
    if (this.#state === CLOSED || this.#closeSent) throw new TypeError("Can't call WebSocket send() after close().");
    const { text, bytes } = messageOf(message);
    if (bytes.byteLength > MAX_MESSAGE_BYTES) throw new RangeError(`WebSocket message too large: ${bytes.byteLength} bytes (at most ${MAX_MESSAGE_BYTES}).`);
    if (this.#state === CONNECTING) throw new DOMException("WebSocket.send: the connection is not open yet.", "InvalidStateError");
    if (this.#remote !== null) {
      this.#sendRemote(text ? 0 : 1, bytes);
    } else if (this.#hostId !== null) {
      internals.hostCall("#ws", "send", { socket: this.#hostId, text }, bytes).catch(() => {});
    } else if (this.#peer !== null) {
      const peer = this.#peer;
      peer.#receive(text ? message : bytes.buffer);
    }
  }

  close(code = undefined, reason = undefined) {
    internals.checkIo(this.#owner, "Native");
    checkClose(code, reason);
    if (this.#closeSent || this.#state === CLOSED) return;
    this.#closeSent = true;
    this.#state = CLOSING;
    const sentCode = code ?? 1005;
    const sentReason = reason === undefined ? "" : String(reason);
    if (this.#remote !== null) {
      const reasonBytes = wsEncoder.encode(sentReason);
      const payload = new Uint8Array(2 + reasonBytes.byteLength);
      new DataView(payload.buffer).setUint16(0, code ?? 1000);
      payload.set(reasonBytes, 2);
      this.#sendRemote(2, payload);
    } else if (this.#hostId !== null) {
      internals.hostCall("#ws", "close", { socket: this.#hostId, code: code ?? 1000, reason: sentReason }).catch(() => {});
    } else if (this.#peer !== null) {
      this.#peer.#receiveClose(sentCode, sentReason, true);
    }
    if (this.#closeReceived) this.#state = CLOSED;
  }

  /** Keeps the running event open while this socket talks to the outside. */
  #holdEvent() {
    if (this.#release !== null) return;
    const { id, release } = internals.holdCurrentEvent();
    this.#origin = id;
    this.#release = release;
  }

  #unhold() {
    const release = this.#release;
    this.#release = () => {};
    release?.();
  }

  /** Delivers an event now (in a microtask) if accepted, else keeps it for accept(). */
  #deliver(item) {
    if (this.#detached) return;
    if (this.#accepted) queueMicrotask(() => this.#fireInOrigin(item));
    else this.#pending.push(item);
  }

  /** Fires as part of the event the socket belongs to: timers its listeners set are that event's. */
  #fireInOrigin(item) {
    if (this.#origin === undefined) this.#fire(item);
    else ops.runAsEvent(this.#origin, () => internals.enterEventFrame(this.#origin, () => this.#fire(item)));
  }

  #fire(item) {
    if (item.type === "message") {
      const data = this.#binaryType === "blob" && item.data instanceof ArrayBuffer ? new Blob([item.data]) : item.data;
      if (this.#state !== CLOSED) this.dispatchEvent(new MessageEventImpl("message", { data }));
    } else if (item.type === "close") {
      if (this.#state === CLOSED) return;
      this.#unhold();
      if (!this.#closeSent && (this.#allowHalfOpen ?? !internals.feature("web_socket_auto_reply_to_close"))) {
        // Half-open (before web_socket_auto_reply_to_close, 2026-04-07, or accept({ allowHalfOpen:
        // true })): no close goes back by itself (the script calls close()), and readyState is
        // CLOSING during the close event.
        this.#state = CLOSING;
        this.#closeReceived = true;
        this.dispatchEvent(new CloseEvent("close", { code: item.code, reason: item.reason, wasClean: item.wasClean }));
        return;
      }
      this.#state = CLOSED;
      // The closing handshake completes by itself: the partner sees this end close too.
      if (!this.#closeSent && this.#peer !== null) this.#peer.#receiveClose(item.code, item.reason, item.wasClean);
      this.#closeSent = true;
      this.dispatchEvent(new CloseEvent("close", { code: item.code, reason: item.reason, wasClean: item.wasClean }));
    } else {
      // An error is followed by a close event (code 1006), which ends the socket.
      const event = new Event("error");
      Object.defineProperty(event, "error", { value: item.error });
      this.dispatchEvent(event);
    }
  }

  #receive(data) {
    if (this.#state === CLOSED) return;
    this.#deliver({ type: "message", data });
  }

  #receiveClose(code, reason, wasClean) {
    if (this.#state === CLOSED) return;
    this.#deliver({ type: "close", code, reason, wasClean });
  }

  #receiveError(error) {
    this.#deliver({ type: "error", error });
  }

  /** What reached this end before it left for the host goes on to the host, in order. */
  #forwardPending(id) {
    for (const item of this.#pending) {
      if (item.type === "message") {
        const { text, bytes } = messageOf(item.data);
        internals.hostCall("#ws", "send", { socket: id, text }, bytes).catch(() => {});
      } else if (item.type === "close") {
        internals.hostCall("#ws", "close", { socket: id, code: item.code, reason: item.reason }).catch(() => {});
      }
    }
    this.#pending = [];
  }

  get readyState() {
    return this.#state;
  }
  get url() {
    return this.#url;
  }
  get protocol() {
    return this.#protocol;
  }
  get extensions() {
    return this.#extensions;
  }
  /** How binary messages arrive: "arraybuffer" (the default) or "blob". */
  get binaryType() {
    return this.#binaryType;
  }
  set binaryType(value) {
    if (value === "arraybuffer" || value === "blob") this.#binaryType = value;
  }
  /** Keeps a structured clone of `value` with the socket (the hibernation API's attachment). */
  serializeAttachment(value) {
    this.#attachment = ops.serialize(value);
  }
  deserializeAttachment() {
    return this.#attachment === undefined ? null : ops.deserialize(this.#attachment);
  }
  get [Symbol.toStringTag]() {
    return "WebSocket";
  }
}

class WebSocketPair {
  constructor() {
    const [client, server] = internals.newWebSocketPair();
    this[0] = client;
    this[1] = server;
  }
  /** `const [client, server] = new WebSocketPair()`, as in workerd. */
  *[Symbol.iterator]() {
    yield this[0];
    yield this[1];
  }
  get [Symbol.toStringTag]() {
    return "WebSocketPair";
  }
}

// The ready-state constants are on the prototype too (instances read `ws.OPEN`), as in workerd.
for (const [name, value] of [["CONNECTING", CONNECTING], ["OPEN", OPEN], ["CLOSING", CLOSING], ["CLOSED", CLOSED]]) {
  for (const key of [name, `READY_STATE_${name}`]) Object.defineProperty(WebSocket.prototype, key, { value, writable: false, enumerable: true, configurable: true });
}
internals.defineGlobal("WebSocket", WebSocket);
internals.defineGlobal("WebSocketPair", WebSocketPair);
internals.defineGlobal("CloseEvent", CloseEvent);
