// MessageEvent, MessageChannel and MessagePort, as workerd has them (src/workerd/api/
// messagechannel.c++): two entangled ports in the same isolate; postMessage() structured-clones
// the data at once and the other port dispatches it as a "message" event in a microtask, in
// order. A port queues what it receives until it is started: by start(), by setting onmessage,
// or (as in Node.js and workerd) by adding a "message" listener; with no listener and no
// onmessage left it queues again. close() closes both ports and dispatches "close" on each;
// messages to a closed port are dropped. As in workerd, transfer lists are refused, and a
// message event's `source` is the port that received it. MessageChannel and MessagePort are
// globals from the expose_global_message_channel date (2025-08-15); node:worker_threads gets
// them from `internals` either way. (76_websocket.js uses this MessageEvent too.)

const { Event, EventTarget, DOMException } = globalThis;

class MessageEvent extends Event {
  #data;
  #lastEventId;
  #source;
  #origin = null;
  static {
    /** Gives an EventSource's message event the origin of its URL (src/js/87_eventsource.js). */
    internals.messageEventSetOrigin = (event, origin) => {
      event.#origin = origin;
    };
  }
  constructor(type, init = undefined) {
    init = internals.eventInit("MessageEvent", arguments.length, init);
    super(type, init);
    // workerd makes its Event subclasses trusted when a script constructs them (only Event is not).
    internals.eventMarkTrusted(this);
    this.#data = init.data;
    this.#lastEventId = init.lastEventId === undefined ? "" : String(init.lastEventId);
    this.#source = init.source instanceof MessagePort ? init.source : null;
  }
  get data() {
    return this.#data;
  }
  // workerd has no origin for messages within the isolate (nor for WebSocket messages): null;
  // an EventSource's messages have its URL's.
  get origin() {
    return this.#origin;
  }
  get lastEventId() {
    return this.#lastEventId;
  }
  get source() {
    return this.#source;
  }
  // Ports are never transferred, so no message carries any.
  get ports() {
    return NO_PORTS;
  }
  get [Symbol.toStringTag]() {
    return "MessageEvent";
  }
}

const NO_PORTS = Object.freeze([]);
const PENDING = 0, STARTED = 1, CLOSED = 2;
const PORT_TOKEN = Symbol("MessagePort");

/** cloudflare:workers' RpcTarget (src/js/84_rpc.js), found on first use. */
let rpcTarget;

/** The transfer list of postMessage(data, transfer | { transfer }), as an array. */
function transferList(options) {
  if (options === undefined || options === null) return [];
  if (typeof options !== "object") throw new TypeError("Failed to execute 'postMessage' on 'MessagePort': the options must be an array or an object.");
  const list = typeof options[Symbol.iterator] === "function" ? options : options.transfer;
  if (list === undefined) return [];
  if (list === null || typeof list[Symbol.iterator] !== "function") {
    throw new TypeError("Failed to execute 'postMessage' on 'MessagePort': the transfer list must be a sequence.");
  }
  return [...list];
}

class MessagePort extends EventTarget {
  #state = PENDING;
  #queue = [];
  #other = null;
  #onmessage = null;

  constructor(token) {
    if (token !== PORT_TOKEN) throw new TypeError("Illegal constructor");
    super();
    // `port.onmessage` is a handler of this port's "message" events.
    internals.eventTargetReflect(this, this);
  }

  static {
    internals.newMessagePorts = () => {
      const port1 = new MessagePort(PORT_TOKEN);
      const port2 = new MessagePort(PORT_TOKEN);
      port1.#other = port2;
      port2.#other = port1;
      return [port1, port2];
    };
  }

  postMessage(data = undefined, options = undefined) {
    if (!(#state in this)) throw new TypeError("Illegal invocation");
    if (transferList(options).length > 0) throw new Error("Transfer list is not supported");
    // As workerd: a Blob (serializable in the standard, not in workerd) and an RpcTarget cannot be posted.
    rpcTarget ??= internals.cloudflareModules?.workers().RpcTarget ?? null;
    const type = data instanceof Blob ? "Blob" : rpcTarget !== null && data instanceof rpcTarget ? data.constructor?.name ?? "RpcTarget" : null;
    if (type !== null) throw new DOMException(`Could not serialize object of type "${type}". This type does not support serialization.`, "DataCloneError");
    // Cloned now, even when nobody will receive it, so that an uncloneable value always throws.
    let copy;
    try {
      copy = ops.structuredClone(data);
    } catch (error) {
      if (error && error.name === "DataCloneError") throw new DOMException(error.message, "DataCloneError");
      throw error;
    }
    const other = this.#other;
    if (other !== null) other.#deliver(copy);
  }

  start() {
    if (!(#state in this)) throw new TypeError("Illegal invocation");
    if (this.#state !== PENDING) return;
    this.#state = STARTED;
    const queued = this.#queue;
    this.#queue = [];
    if (queued.length > 0) ops.queueMicrotask(() => queued.forEach((data) => this.#dispatchMessage(data)));
  }

  close() {
    if (!(#state in this)) throw new TypeError("Illegal invocation");
    if (this.#state === CLOSED) return;
    this.#state = CLOSED;
    this.#queue = [];
    const other = this.#other;
    this.#other = null;
    if (other !== null) other.close();
    this.dispatchEvent(new Event("close"));
  }

  get onmessage() {
    if (!(#state in this)) throw new TypeError("Illegal invocation");
    return this.#onmessage;
  }
  set onmessage(value) {
    if (!(#state in this)) throw new TypeError("Illegal invocation");
    if (value !== null && (typeof value === "object" || typeof value === "function")) {
      this.#onmessage = value;
      this.start();
    } else {
      this.#onmessage = null;
      this.#maybeStop();
    }
  }

  addEventListener(type, listener, options = undefined) {
    super.addEventListener(...arguments);
    if (String(type) === "message" && internals.eventListenerCount(this, "message") > 0) this.start();
  }
  removeEventListener(type, listener, options = undefined) {
    super.removeEventListener(...arguments);
    if (String(type) === "message") this.#maybeStop();
  }

  /** With no "message" listener and no onmessage left, a started port queues again. */
  #maybeStop() {
    if (this.#state === STARTED && this.#onmessage === null && internals.eventListenerCount(this, "message") === 0) {
      this.#state = PENDING;
    }
  }

  #deliver(data) {
    if (this.#state === PENDING) this.#queue.push(data);
    else if (this.#state === STARTED) ops.queueMicrotask(() => this.#dispatchMessage(data));
  }

  #dispatchMessage(data) {
    this.dispatchEvent(new MessageEvent("message", { data, source: this }));
  }

  get [Symbol.toStringTag]() {
    return "MessagePort";
  }
}

class MessageChannel {
  #port1;
  #port2;
  constructor() {
    [this.#port1, this.#port2] = internals.newMessagePorts();
  }
  get port1() {
    return this.#port1;
  }
  get port2() {
    return this.#port2;
  }
  get [Symbol.toStringTag]() {
    return "MessageChannel";
  }
}

internals.MessageEvent = MessageEvent;
internals.MessageChannel = MessageChannel;
internals.MessagePort = MessagePort;
internals.defineGlobal("MessageEvent", MessageEvent);
internals.defineGlobal("MessageChannel", MessageChannel);
internals.defineGlobal("MessagePort", MessagePort);

// Without expose_global_message_channel (dates before 2025-08-15) the two classes are not globals.
const prepareContext = internals.prepareContext;
internals.prepareContext = (function prepareMessagingContext(memoryMb, compatJson) {
  prepareContext(memoryMb, compatJson);
  if (!internals.compat.enabled.includes("expose_global_message_channel")) {
    delete globalThis.MessageChannel;
    delete globalThis.MessagePort;
  }
});
