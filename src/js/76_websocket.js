// WebSockets inside the worker: `WebSocketPair`, `WebSocket` (accept, send, close, message /
// close / error events, attachments) and the link to the host. The two ends of a pair talk to
// each other in the isolate; once one end leaves in a 101 Response (or arrives from another
// worker through a fetch() answer), its partner talks to the host instead, by a socket id:
// messages out go as `#ws` host calls, messages in arrive as RPC events (`kind: "ws"`, see
// internals.webSocketEvent). The host end is lib/websocket.js.

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

class MessageEventImpl extends Event {
  #data;
  constructor(type, init = {}) {
    super(type, init);
    this.#data = init.data;
  }
  get data() {
    return this.#data;
  }
}

class CloseEvent extends Event {
  #code;
  #reason;
  #wasClean;
  constructor(type, init = {}) {
    super(type, init);
    this.#code = init.code ?? 0;
    this.#reason = init.reason ?? "";
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
    throw new DOMException(`WebSocket.close: the code must be 1000 or between 3000 and 4999, got ${code}.`, "InvalidAccessError");
  }
  if (reason !== undefined && wsEncoder.encode(String(reason)).length > 123) {
    throw new DOMException("WebSocket.close: the reason must be at most 123 bytes of UTF-8.", "SyntaxError");
  }
}

class WebSocket extends EventTarget {
  static CONNECTING = CONNECTING;
  static OPEN = OPEN;
  static CLOSING = CLOSING;
  static CLOSED = CLOSED;
  #state = OPEN;
  #accepted = false;
  /** Events that came before accept(). */
  #pending = [];
  /** The other end in this isolate, or null when the partner is at the host (`#hostId`). */
  #peer = null;
  #hostId = null;
  /** Given away (returned in a Response): this object no longer takes part. */
  #detached = false;
  #attachment = undefined;
  #closeSent = false;

  constructor(url, protocols = undefined) {
    if (url !== kSocket) {
      throw new TypeError("new WebSocket(url): outbound WebSocket connections are not supported by workerbox yet; use a WebSocketPair to accept connections.");
    }
    super();
  }

  static {
    internals.newWebSocketPair = () => {
      const a = new WebSocket(kSocket);
      const b = new WebSocket(kSocket);
      a.#peer = b;
      b.#peer = a;
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
        return client.#hostId;
      }
      const partner = client.#peer;
      const id = `w${nextSocketId++}`;
      client.#peer = null;
      if (partner !== null) {
        partner.#peer = null;
        partner.#hostId = id;
        hostLinked.set(id, partner);
      }
      client.#forwardPending(id);
      return id;
    };
    /** A socket whose partner is the host's socket `id` (a WebSocket from another worker's answer). */
    internals.webSocketFromHost = (id) => {
      const socket = new WebSocket(kSocket);
      socket.#hostId = id;
      hostLinked.set(id, socket);
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
      }
    };
  }

  /** Starts delivering events to this end (messages that came before are delivered now). */
  accept() {
    if (this.#detached) throw new TypeError("This WebSocket was returned in a Response; use the other end of the pair.");
    if (this.#accepted) throw new TypeError("accept() was already called on this WebSocket.");
    this.#accepted = true;
    // A socket that came from the host: the host now sends what it kept for it.
    if (this.#hostId !== null) internals.hostCall("#ws", "accept", { socket: this.#hostId }).catch(() => {});
    const pending = this.#pending;
    this.#pending = [];
    for (const item of pending) queueMicrotask(() => this.#fire(item));
  }

  send(message) {
    if (!this.#accepted) throw new TypeError("You must call accept() on this WebSocket before sending messages.");
    if (this.#state === CLOSED || this.#closeSent) throw new TypeError("Can't call WebSocket send() after close().");
    const { text, bytes } = messageOf(message);
    if (bytes.byteLength > MAX_MESSAGE_BYTES) throw new RangeError(`WebSocket message too large: ${bytes.byteLength} bytes (at most ${MAX_MESSAGE_BYTES}).`);
    if (this.#hostId !== null) {
      internals.hostCall("#ws", "send", { socket: this.#hostId, text }, bytes).catch(() => {});
    } else if (this.#peer !== null) {
      const peer = this.#peer;
      peer.#receive(text ? message : bytes.buffer);
    }
  }

  close(code = undefined, reason = undefined) {
    checkClose(code, reason);
    if (this.#closeSent || this.#state === CLOSED) return;
    this.#closeSent = true;
    this.#state = CLOSING;
    const sentCode = code ?? 1005;
    const sentReason = reason === undefined ? "" : String(reason);
    if (this.#hostId !== null) {
      internals.hostCall("#ws", "close", { socket: this.#hostId, code: code ?? 1000, reason: sentReason }).catch(() => {});
    } else if (this.#peer !== null) {
      this.#peer.#receiveClose(sentCode, sentReason, true);
    }
  }

  /** Delivers an event now (in a microtask) if accepted, else keeps it for accept(). */
  #deliver(item) {
    if (this.#detached) return;
    if (this.#accepted) queueMicrotask(() => this.#fire(item));
    else this.#pending.push(item);
  }

  #fire(item) {
    if (item.type === "message") {
      if (this.#state !== CLOSED) this.dispatchEvent(new MessageEventImpl("message", { data: item.data }));
    } else if (item.type === "close") {
      if (this.#state === CLOSED) return;
      this.#state = CLOSED;
      // The closing handshake completes by itself: the partner sees this end close too.
      if (!this.#closeSent && this.#peer !== null) this.#peer.#receiveClose(item.code, item.reason, item.wasClean);
      this.#closeSent = true;
      this.dispatchEvent(new CloseEvent("close", { code: item.code, reason: item.reason, wasClean: item.wasClean }));
    } else {
      this.#state = CLOSED;
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
    return null;
  }
  get protocol() {
    return null;
  }
  get extensions() {
    return null;
  }
  get binaryType() {
    return "arraybuffer";
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
  get [Symbol.toStringTag]() {
    return "WebSocketPair";
  }
}

internals.defineGlobal("WebSocket", WebSocket);
internals.defineGlobal("WebSocketPair", WebSocketPair);
internals.defineGlobal("CloseEvent", CloseEvent);
if (typeof globalThis.MessageEvent !== "function") internals.defineGlobal("MessageEvent", MessageEventImpl);
