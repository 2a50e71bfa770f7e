"use strict";
// WebSockets in the host. A worker's socket end that left in a 101 Response (or in a fetch()
// answer to another worker) is an endpoint here: a worker and the socket id it gave
// (src/js/76_websocket.js). Each endpoint has a partner: a HostWebSocket that Node code uses
// (what dispatch() resolves to for an upgrade), or an endpoint in another worker (a WebSocket
// a Durable Object returned to the worker that called it). Messages from a worker arrive as
// `#ws` binding calls; messages to a worker go as RPC events (`kind: "ws"`).

const MAX_MESSAGE_BYTES = 32 << 20;
const EMPTY = Buffer.alloc(0);

let nativeOf = null;
let hold = () => {};

/**
 * lib/api.js hands over how to reach a worker's native handle, and how an open host socket holds
 * Node's event loop open (`hold(+1)` / `hold(-1)`), as a real socket does.
 */
function setWorkerAccess(access, holdLoop) {
  nativeOf = access;
  hold = holdLoop;
}

/** worker → (socket id → endpoint). */
const endpoints = new WeakMap();
let nextHostId = 1;

function endpointsOf(worker) {
  let table = endpoints.get(worker);
  if (table === undefined) endpoints.set(worker, (table = new Map()));
  return table;
}

function endpoint(worker, id) {
  const table = endpointsOf(worker);
  let found = table.get(id);
  // `backlog`: what the worker sent before the endpoint had a partner (its answer and its first
  // messages travel separately).
  // `inbox`: for a socket handed to a worker, what came for it before the worker accepted it
  // (null once accepted, or for a worker's own sockets).
  if (found === undefined) table.set(id, (found = { worker, id, partner: null, closed: false, backlog: [], inbox: null }));
  return found;
}

/** Sends an event to the worker side of endpoint `e`; a worker that cannot take it closes the partner. */
function toWorker(e, call, bytes = EMPTY) {
  const handle = nativeOf(e.worker);
  if (handle === undefined || handle.disposed) return Promise.resolve(gone(e, "the worker was disposed"));
  return handle
    .rpc(JSON.stringify({ kind: "ws", socket: e.id, ...call }), bytes)
    .then((outcome) => {
      if (outcome.resultJson === undefined || outcome.error) gone(e, outcome.error?.message ?? outcome.message ?? "the worker could not take the message");
    })
    .catch((error) => gone(e, error.message));
}

/** The worker side of `e` is gone: its partner sees an abnormal close. */
function gone(e, why) {
  if (e.closed) return;
  e.closed = true;
  endpointsOf(e.worker).delete(e.id);
  deliverClose(e.partner, 1006, `workerbox: ${why}`, false);
}

function deliverMessage(partner, text, bytes) {
  if (partner instanceof HostWebSocket) partner._receive(text ? bytes.toString("utf8") : new Uint8Array(bytes).buffer);
  else if (partner !== null && !partner.closed) {
    // A socket handed to a worker waits for that worker to accept() it: until then it may
    // still pass it on (return it in its own Response) instead.
    if (partner.inbox !== null) partner.inbox.push({ type: "message", text, bytes });
    else toWorker(partner, { type: "message", text }, bytes);
  }
}

/**
 * A close for `partner`; `after` runs once it has taken it. A worker's end takes it as an event:
 * until that has run, what the worker sends (from the message events before it) still goes out,
 * as a WebSocket is only closed for sending once its close has been received.
 */
function deliverClose(partner, code, reason, wasClean, after = null) {
  if (partner instanceof HostWebSocket) {
    partner._receiveClose(code, reason, wasClean);
    after?.();
  } else if (partner !== null && !partner.closed) {
    if (partner.inbox !== null) {
      partner.inbox.push({ type: "close", code, reason, wasClean });
      return void after?.();
    }
    if (partner.closing === true) return void after?.();
    partner.closing = true;
    const done = () => {
      partner.closed = true;
      endpointsOf(partner.worker).delete(partner.id);
      after?.();
    };
    toWorker(partner, { type: "close", code, reason, wasClean }).then(done, done);
  } else after?.();
}

/** Delivers kept messages and closes to `to`, in order. */
function replay(items, to) {
  for (const item of items) {
    if (item.type === "message") deliverMessage(to, item.text, item.bytes);
    else deliverClose(to, item.code, item.reason, item.wasClean);
  }
}

/** Joins endpoint `e` to `partner` and hands over what `e` sent before it had one. */
function join(e, partner) {
  e.partner = partner;
  const backlog = e.backlog;
  e.backlog = [];
  for (const send of backlog) send();
}

/** `#ws` calls from a worker: send and close on one of its host-linked sockets. */
function fromWorker(worker, method, args, bytes) {
  const e = endpoint(worker, args.socket);
  if (e.closed) return { json: "null" };
  if (e.partner === null) {
    e.backlog.push(() => fromWorker(worker, method, args, bytes));
    return { json: "null" };
  }
  if (method === "accept") {
    const inbox = e.inbox ?? [];
    e.inbox = null;
    replay(inbox, e);
  } else if (method === "send") deliverMessage(e.partner, args.text === true, bytes ?? EMPTY);
  else if (method === "close") {
    const code = args.code ?? 1000;
    const reason = args.reason ?? "";
    // The other side answers the close, which completes the handshake for the worker's end; until
    // it has taken the close, what it sends (from the messages before it) still arrives here.
    // The worker's close() call is answered once its own close is on its way to it, so that the
    // worker is not left with nothing pending in between (it may be awaiting that close).
    return new Promise((resolve) => {
      const finish = () => {
        if (!e.closed) {
          e.closed = true;
          endpointsOf(worker).delete(e.id);
          toWorker(e, { type: "close", code, reason, wasClean: true });
        }
        resolve({ json: "null" });
      };
      deliverClose(e.partner, code, reason, true, finish);
    });
  } else throw new TypeError(`unknown WebSocket operation "${method}"`);
  return { json: "null" };
}

/**
 * The socket `worker` answered with (its id `id`), for Node: a HostWebSocket. An end that
 * `worker` only passed on from another worker is joined to that worker's end directly.
 */
function forNode(worker, id) {
  let e = endpoint(worker, id);
  let early = [];
  if (e.partner !== null && !(e.partner instanceof HostWebSocket)) {
    // Passed through: the worker never accepted it. Node talks to the original end, and gets
    // what came for the worker meanwhile.
    endpointsOf(worker).delete(id);
    early = e.inbox ?? [];
    e.closed = true;
    e = e.partner;
  }
  const socket = new HostWebSocket(e);
  e.partner = socket;
  replay(early, socket);
  join(e, socket);
  return socket;
}

/**
 * The socket `from` answered with (id `id`), handed to the worker `caller`: a new socket id
 * for `caller`, its end joined to `from`'s.
 */
function relay(caller, from, id) {
  return joinToCaller(caller, endpoint(from, id));
}

/** A HostWebSocket from a dispatch() answer, handed on to worker `caller` (a service binding's fetch()). */
function relayHostSocket(caller, socket) {
  return joinToCaller(caller, socket._takeEndpoint());
}

/** A new socket id for `caller`, its end joined to `source`; it waits for the caller's accept(). */
function joinToCaller(caller, source) {
  const hostId = `h${nextHostId++}`;
  const mine = endpoint(caller, hostId);
  mine.inbox = [];
  join(mine, source);
  join(source, mine);
  return hostId;
}

/** A disposed worker's sockets close for their partners. */
function workerDisposed(worker) {
  for (const e of [...(endpoints.get(worker)?.values() ?? [])]) gone(e, "the worker was disposed");
  endpoints.delete(worker);
}

class MessageEventLike extends Event {
  constructor(type, data) {
    super(type);
    this.data = data;
  }
}

class CloseEventLike extends Event {
  constructor(code, reason, wasClean) {
    super("close");
    this.code = code;
    this.reason = reason;
    this.wasClean = wasClean;
  }
}

/**
 * The host's end of a worker's WebSocket, shaped like workerd's (and Miniflare's): call
 * `accept()`, then `send()`, `close()`, and listen for "message" (`data`: a string or an
 * ArrayBuffer) and "close" (`code`, `reason`, `wasClean`) events.
 */
class HostWebSocket extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  static READY_STATE_CONNECTING = 0;
  static READY_STATE_OPEN = 1;
  static READY_STATE_CLOSING = 2;
  static READY_STATE_CLOSED = 3;
  #endpoint;
  #accepted = false;
  #pending = [];
  #state = 1;
  #closeSent = false;

  #held = true;

  constructor(e) {
    super();
    this.#endpoint = e;
    hold(+1);
  }

  /** Closed (or handed on): it no longer holds Node's event loop open. */
  #release() {
    if (!this.#held) return;
    this.#held = false;
    hold(-1);
  }

  /** Starts delivering events (those that came before are delivered now). */
  accept() {
    if (this.#accepted) throw new TypeError("accept() was already called on this WebSocket.");
    this.#accepted = true;
    const pending = this.#pending;
    this.#pending = [];
    for (const deliver of pending) deliver();
  }

  send(message) {
    if (!this.#accepted) throw new TypeError("You must call accept() on this WebSocket before sending messages.");
    if (this.#closeSent || this.#state === 3) throw new TypeError("Can't call WebSocket send() after close().");
    let text = false;
    let bytes;
    if (typeof message === "string") {
      text = true;
      bytes = Buffer.from(message, "utf8");
    } else if (message instanceof ArrayBuffer) bytes = Buffer.from(new Uint8Array(message));
    else if (ArrayBuffer.isView(message)) bytes = Buffer.from(new Uint8Array(message.buffer, message.byteOffset, message.byteLength));
    else throw new TypeError("WebSocket.send: the message must be a string, an ArrayBuffer or an ArrayBufferView.");
    if (bytes.byteLength > MAX_MESSAGE_BYTES) throw new RangeError(`WebSocket message too large: ${bytes.byteLength} bytes (at most ${MAX_MESSAGE_BYTES}).`);
    if (!this.#endpoint.closed) toWorker(this.#endpoint, { type: "message", text }, bytes);
  }

  close(code = 1000, reason = "") {
    if (this.#closeSent || this.#state === 3) return;
    this.#closeSent = true;
    this.#state = 2;
    const e = this.#endpoint;
    if (!e.closed) {
      e.closed = true;
      endpointsOf(e.worker).delete(e.id);
      toWorker(e, { type: "close", code, reason: String(reason), wasClean: true });
    }
    // The worker's side answers at once (its end completes the handshake by itself).
    this._receiveClose(code, String(reason), true);
  }

  get readyState() {
    return this.#state;
  }

  #deliver(fire) {
    if (this.#accepted) fire();
    else this.#pending.push(fire);
  }

  _receive(data) {
    if (this.#state === 3) return;
    this.#deliver(() => this.dispatchEvent(new MessageEventLike("message", data)));
  }

  _receiveClose(code, reason, wasClean) {
    if (this.#state === 3) return;
    const fire = () => {
      if (this.#state === 3) return;
      this.#state = 3;
      this.dispatchEvent(new CloseEventLike(code, reason, wasClean));
    };
    // The connection is over: it no longer holds the event loop, even before accept().
    this.#release();
    if (this.#accepted) fire();
    else this.#pending.push(fire);
  }

  /** Hands this socket's worker end to someone else (a worker, through a relay); this object stops. */
  _takeEndpoint() {
    if (this.#accepted) throw new TypeError("An accept()ed WebSocket cannot be handed on.");
    this.#state = 3;
    this.#release();
    return this.#endpoint;
  }

  get [Symbol.toStringTag]() {
    return "WebSocket";
  }
}

/**
 * What dispatch() resolves to for a 101 answer: a Response-like object (Node's Response refuses
 * status 101) with `status`, `statusText`, `headers` and `webSocket`.
 */
class WebSocketResponse {
  constructor(statusText, headers, webSocket) {
    this.status = 101;
    this.statusText = statusText || "Switching Protocols";
    this.headers = headers;
    this.webSocket = webSocket;
    this.ok = false;
    this.body = null;
    this.bodyUsed = false;
    this.redirected = false;
    this.type = "default";
    this.url = "";
  }
  async text() {
    return "";
  }
  async arrayBuffer() {
    return new ArrayBuffer(0);
  }
  get [Symbol.toStringTag]() {
    return "Response";
  }
}

module.exports = { setWorkerAccess, fromWorker, forNode, relay, relayHostSocket, workerDisposed, HostWebSocket, WebSocketResponse, HEADER: "x-workerbox-websocket" };
