// cloudflare:sockets inside the worker: connect() and the Socket it returns, as workerd has them
// (address forms, secureTransport "off" | "on" | "starttls", allowHalfOpen, opened / closed,
// close(), startTls(), and workerd's messages for what goes wrong). The connection itself is a
// task on the worker's scheduler thread (src/runtime/sockets/), reached through the streamed
// fetch ops with the method CONNECT: ops.fetch opens it, ops.fetchRead pulls the next bytes
// (only when the readable is read: its high water mark is 0), ops.fetchWrite sends a chunk and
// resolves once the connection took it (so a writer to a slow peer waits), an empty chunk asks
// for the STARTTLS upgrade, null half-closes, and ops.fetchCancel closes.
//
// A socket belongs to the request (event) that opened it, as in workerd: reads and writes from
// another request's handler reject with workerd's "Cannot perform I/O on behalf of a different
// request" error and close() from there does nothing; when the owning event is over (response
// sent, waitUntil settled: internals.eventEndHooks) its connections are closed, their
// `closed` left pending as workerd leaves it (one the worker wrote to sends the rest first). A socket opened inside a Durable Object call
// belongs to no one event: it lives until it is closed (workerd gives each object one I/O context).
// The running event is the one of the async flow (internals.flowEvent, src/js/52_io_owner.js).

const { WritableStream } = globalThis;
const kConstruct = Symbol("Socket");
const WRITABLE_CLOSED = "This WritableStream has been closed.";
const READABLE_CLOSING = "This ReadableStream belongs to an object that is closing.";
const CANNOT_CONNECT = "proxy request failed, cannot connect to the specified address";
/** node:tls's per-socket TLS options under this key of connect()'s options (src/js/node/tls.js). */
const kNodeTls = Symbol("node:tls options");
const OTHER_REQUEST =
  "Cannot perform I/O on behalf of a different request. I/O objects (such as streams, request/response bodies, and others) created in the context of one request handler cannot be accessed from a different request's handler. This is a limitation of Cloudflare Workers which allows us to improve overall performance.";

/** Connections by the event that owns them, closed when it is over. */
const byEvent = new Map();
// When an event is over, after its own timers went (the linger timers finish() starts are the
// runtime's), its connections are closed.
internals.eventEndHooks.push((id) => {
  const conns = byEvent.get(id);
  if (conns !== undefined) {
    byEvent.delete(id);
    for (const conn of conns) conn.finish();
  }
});
/** How long a connection whose request is over may take to send what the worker wrote. */
const LINGER_MS = 10_000;

/** The event a socket opened now belongs to, or null (no event, or a Durable Object's). */
function currentOwner() {
  const id = internals.flowEvent();
  return id === undefined || internals.isDurableEvent(id) ? null : id;
}

/** workerd's error for I/O on a socket from another request than its own (`type` as workerd names it). */
function otherRequest(conn, type) {
  if (conn.owner === null || internals.flowEvent() === conn.owner) return null;
  return new Error(`${OTHER_REQUEST} (I/O type: ${type})`);
}

/** `{ hostname, port }` from connect()'s first argument, with workerd's messages. */
function parseAddress(address) {
  if (address !== null && typeof address === "object") {
    const port = address.port;
    if (typeof port !== "number" || !Number.isInteger(port)) throw new TypeError("The value cannot be converted because it is not an integer.");
    if (port < 0 || port > 65535) throw new TypeError("Specified address could not be parsed.");
    return { hostname: String(address.hostname), port };
  }
  const text = String(address);
  const colon = text.lastIndexOf(":");
  if (colon < 0 || (text.startsWith("[") && colon < text.indexOf("]"))) throw new TypeError("Specified address is missing port.");
  const hostname = text.slice(0, colon);
  const portText = text.slice(colon + 1);
  if (hostname === "" || !/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw new TypeError("Specified address could not be parsed.");
  return { hostname, port: Number(portText) };
}

function bytesOf(chunk) {
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError("This TransformStream is being used as a byte stream, but received a string on its writable side. If you wish to write a string, you'll probably want to explicitly UTF-8-encode it with TextEncoder.");
}

function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** One connection, shared by a socket and the one startTls() made of it. */
class Connection {
  constructor(id) {
    this.id = id;
    this.closed = false;
    this.owner = currentOwner();
    if (this.owner !== null) {
      let conns = byEvent.get(this.owner);
      if (conns === undefined) byEvent.set(this.owner, (conns = new Set()));
      conns.add(this);
    }
    /** The read in flight, if any (a byte stream pulls one at a time). */
    this.reading = null;
    /** While a STARTTLS upgrade waits for its outcome. */
    this.upgrade = null;
    /** The last write, which a STARTTLS request must follow. */
    this.lastWrite = Promise.resolve();
    /** Whether the worker wrote any bytes, and whether it ended its writes. */
    this.written = false;
    this.writesEnded = false;
  }
  /** The next `[json, chunk]` the connection reads; the upgrade's outcome is taken out. */
  read() {
    const read = (async () => {
      for (;;) {
        let answer;
        try {
          answer = await ops.fetchRead(this.id);
        } catch (error) {
          this.upgrade?.reject(error);
          throw error;
        }
        if (answer[0] !== '{"tls":true}') return answer;
        this.upgrade?.resolve();
        this.upgrade = null;
        return null;
      }
    })();
    this.reading = read;
    read.finally(() => {
      if (this.reading === read) this.reading = null;
    }).catch(() => {});
    return read;
  }
  close() {
    if (this.closed) return;
    this.closed = true;
    byEvent.get(this.owner)?.delete(this);
    ops.fetchCancel(this.id);
  }
  /**
   * The end of the request that owns the connection. A write resolves once the connection took
   * the chunk, before it reached the kernel, so a connection the worker wrote to first sends
   * the rest and its end (FIN), then waits for the peer's end (reading and dropping what comes)
   * for up to LINGER_MS before it closes; one it never wrote to closes at once.
   */
  finish() {
    if (this.closed) return;
    if (!this.written) return this.close();
    if (!this.writesEnded) {
      this.writesEnded = true;
      ops.fetchWrite(this.id, null).catch(() => {});
    }
    const timer = ops.timerStart(() => this.close(), LINGER_MS, false, true);
    const done = () => {
      ops.timerCancel(timer);
      this.close();
    };
    const drain = () => {
      if (this.closed) return ops.timerCancel(timer);
      ops.fetchRead(this.id).then(([json]) => (json === '{"done":true}' ? done() : drain()), done);
    };
    drain();
  }
}

class Socket {
  #conn;
  #readable;
  #readController = null;
  #writable;
  #writeController = null;
  #opened = deferred();
  #closed = deferred();
  #secureTransport;
  #allowHalfOpen;
  #hostname;
  #upgraded = false;
  #startTlsCalled = false;
  #done = false;
  #readEnded = false;
  #writeEnded = false;

  constructor(key, conn, { secureTransport, allowHalfOpen, hostname, opened }) {
    if (key !== kConstruct) throw new TypeError("Illegal constructor");
    if (internals.ownAccessors !== null) internals.ownAccessors(this);
    this.#conn = conn;
    this.#secureTransport = secureTransport;
    this.#allowHalfOpen = allowHalfOpen;
    this.#hostname = hostname;
    opened.then(
      (info) => this.#opened.resolve(info),
      (error) => this.#fail(error),
    );
    this.#readable = internals.internalStream(
      {
        type: "bytes",
        start: (controller) => void (this.#readController = controller),
        pull: (controller) => this.#pull(controller),
        cancel: () => {
          const foreign = otherRequest(this.#conn, "ReadableStreamSource");
          if (foreign !== null) throw foreign;
          this.#readEnded = true;
          this.#maybeClosed();
        },
      },
      { highWaterMark: 0 },
    );
    this.#writable = new WritableStream(
      {
        start: (controller) => void (this.#writeController = controller),
        write: (chunk) => this.#write(chunk),
        close: () => this.#endWrites(),
        abort: () => this.close(),
      },
      { highWaterMark: 1 },
    );
  }

  get readable() {
    return this.#readable;
  }
  get writable() {
    return this.#writable;
  }
  get closed() {
    return this.#closed.promise;
  }
  get opened() {
    return this.#opened.promise;
  }
  get upgraded() {
    return this.#upgraded;
  }
  get secureTransport() {
    return this.#secureTransport;
  }

  async #pull(controller) {
    const foreign = otherRequest(this.#conn, "ReadableStreamSource");
    if (foreign !== null) throw foreign;
    try {
      await this.#opened.promise;
    } catch {
      return; // #fail has ended the streams
    }
    if (this.#done) return;
    let answer;
    try {
      answer = await this.#conn.read();
    } catch (error) {
      if (this.#done) return;
      this.#fail(error);
      throw error;
    }
    if (this.#done) return;
    // The upgrade's outcome reached this (old) socket's read: it reads no more.
    if (answer === null) return;
    const [json, chunk] = answer;
    if (chunk !== null && chunk.byteLength > 0) {
      controller.enqueue(chunk);
      return;
    }
    if (json === '{"done":true}') {
      this.#readEnded = true;
      controller.close();
      controller.byobRequest?.respond(0);
      if (!this.#allowHalfOpen && !this.#writeEnded) {
        // The peer's end closes this side too (the connection already sent its own).
        this.#writeEnded = true;
        this.#writeController.error(new TypeError(WRITABLE_CLOSED));
      }
      this.#maybeClosed();
    }
  }

  async #write(chunk) {
    const foreign = otherRequest(this.#conn, "Writable");
    if (foreign !== null) throw foreign;
    const bytes = bytesOf(chunk);
    await this.#opened.promise;
    if (this.#done || this.#writeEnded) throw new TypeError(WRITABLE_CLOSED);
    if (bytes.byteLength === 0) return;
    this.#conn.written = true;
    // The connection keeps its own copy (the op copies), so the worker may reuse its buffer.
    const write = ops.fetchWrite(this.#conn.id, bytes);
    this.#conn.lastWrite = write.catch(() => {});
    try {
      await write;
    } catch {
      throw new TypeError(WRITABLE_CLOSED);
    }
  }

  async #endWrites() {
    const foreign = otherRequest(this.#conn, "Writable");
    if (foreign !== null) throw foreign;
    await this.#opened.promise;
    if (this.#done || this.#writeEnded) return;
    this.#writeEnded = true;
    this.#conn.writesEnded = true;
    await ops.fetchWrite(this.#conn.id, null).catch(() => {});
    this.#maybeClosed();
  }

  #maybeClosed() {
    if (this.#readEnded && this.#writeEnded && !this.#done) {
      this.#done = true;
      this.#conn.close();
      this.#closed.resolve(undefined);
    }
  }

  /** Stops this socket's streams (close(), an upgrade, a failure). */
  #detach(error) {
    this.#done = true;
    const readError = error ?? new TypeError(READABLE_CLOSING);
    const writeError = error ?? new TypeError(WRITABLE_CLOSED);
    try {
      if (!this.#readEnded) this.#readController.error(readError);
    } catch {}
    try {
      if (!this.#writeEnded) this.#writeController.error(writeError);
    } catch {}
    this.#readEnded = this.#writeEnded = true;
  }

  #fail(error) {
    if (this.#done) return;
    // As in workerd: opened and closed reject; reads end and writes find the stream closed.
    try {
      if (!this.#readEnded && this.#readController.byobRequest === null) this.#readController.close();
    } catch {}
    this.#readEnded = true;
    this.#detach(undefined);
    this.#conn.close();
    this.#opened.reject(error);
    this.#closed.reject(error);
  }

  close() {
    // From another request workerd does nothing and `closed` stays as it is.
    if (otherRequest(this.#conn, "Socket") !== null) return this.#closed.promise;
    if (!this.#done) {
      this.#detach(undefined);
      this.#conn.close();
      this.#opened.reject(new Error("The socket was closed before it opened."));
      this.#closed.resolve(undefined);
    }
    return this.#closed.promise;
  }

  startTls(options = undefined) {
    if (this.#secureTransport !== "starttls") throw new TypeError("The `secureTransport` socket option must be set to 'starttls' for startTls to be used.");
    if (this.#startTlsCalled) throw new TypeError("startTls can only be called once.");
    this.#startTlsCalled = true;
    const conn = this.#conn;
    const hostname = options?.expectedServerHostname ?? this.#hostname;
    if (hostname !== this.#hostname) throw new TypeError("startTls: expectedServerHostname other than the connected hostname is not supported by workerbox.");
    const upgrade = deferred();
    // From another request workerd's upgraded socket never opens.
    if (otherRequest(conn, "Socket") !== null) return new Socket(kConstruct, conn, { secureTransport: "on", allowHalfOpen: this.#allowHalfOpen, hostname, opened: new Promise(() => {}) });
    const opened = (async () => {
      const info = await this.#opened.promise;
      await conn.lastWrite;
      conn.upgrade = upgrade;
      await ops.fetchWrite(conn.id, new Uint8Array(0));
      // An old read still in flight takes the outcome; otherwise a read of its own does.
      await conn.reading?.catch(() => {});
      if (conn.upgrade === upgrade) conn.read().catch(() => {});
      await upgrade.promise;
      return info;
    })();
    this.#upgraded = true;
    this.#detach(undefined);
    // As in workerd, the old socket's `closed` resolves a task later, after what the caller did
    // with the new socket in the meantime (postgres.js tells an upgrade from a close that way).
    setTimeout(() => this.#closed.resolve(undefined), 0);
    return new Socket(kConstruct, conn, { secureTransport: "on", allowHalfOpen: this.#allowHalfOpen, hostname, opened });
  }
}

// workerd lists the constructor after the accessors and methods.
const socketConstructor = Object.getOwnPropertyDescriptor(Socket.prototype, "constructor");
delete Socket.prototype.constructor;
Object.defineProperty(Socket.prototype, "constructor", socketConstructor);

/** workerd's words after a failed connection to port 80 or 443 (not for a failed TLS handshake). */
function httpPortHint(error) {
  const message = String(error?.message);
  if (!message.startsWith(CANNOT_CONNECT) || message.includes("TLS handshake")) return error;
  return new Error(`${CANNOT_CONNECT}. It looks like you might be trying to connect to a HTTP-based service — consider using fetch instead${message.slice(CANNOT_CONNECT.length)}`);
}

/**
 * The address to dial for `remoteAddress`: another one when createWorker's `connectOverrides`
 * (the host's `internals.compat.connectOverrides`, `"host:port"` → `"host:port"`) lists it.
 */
function dialed(remoteAddress, hostname, port) {
  const to = internals.compat?.connectOverrides?.[remoteAddress];
  if (typeof to !== "string") return { hostname, port };
  const parsed = parseAddress(to);
  return { hostname: parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname, port: parsed.port };
}

function connect(address, options = undefined) {
  const { hostname, port } = parseAddress(address);
  const secureTransport = options?.secureTransport ?? "off";
  if (secureTransport !== "off" && secureTransport !== "on" && secureTransport !== "starttls") {
    throw new TypeError(`Unsupported value in secureTransport socket option: ${secureTransport}`);
  }
  // remoteAddress is the address as asked for, as in workerd; localAddress is the bound one.
  const remoteAddress = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
  const to = dialed(remoteAddress, hostname, port);
  const allowHalfOpen = options?.allowHalfOpen === true;
  const headers = ["hostname", to.hostname, "port", String(to.port), "secure-transport", secureTransport, "allow-half-open", String(allowHalfOpen)];
  const nodeTls = options?.[kNodeTls];
  // TLS to an overridden address still checks the name that was asked for.
  if (nodeTls?.servername) headers.push("tls-servername", String(nodeTls.servername));
  else if (to.hostname !== hostname) headers.push("tls-servername", hostname);
  if (nodeTls?.ca !== undefined) headers.push("tls-ca", String(nodeTls.ca));
  if (nodeTls?.rejectUnauthorized === false) headers.push("tls-verify", "false");
  const [id, pending] = ops.fetch("CONNECT", `${to.hostname}:${to.port}`, headers, true, "manual", false);
  const conn = new Connection(id);
  const opened = pending.then(
    ([json]) => ({ remoteAddress, localAddress: JSON.parse(json).localAddress }),
    (error) => {
      throw port === 80 || port === 443 ? httpPortHint(error) : error;
    },
  );
  return new Socket(kConstruct, conn, { secureTransport, allowHalfOpen, hostname, opened });
}

internals.socketConnect = connect;
internals.kNodeTls = kNodeTls;
const loadOtherCloudflareModule = internals.loadCloudflareModule;
let socketsModule;
internals.moreCloudflareModules.push("sockets");
internals.loadCloudflareModule = function loadCloudflareModule(name, dynamic) {
  if (name === "sockets") return (socketsModule ??= { connect });
  return loadOtherCloudflareModule(name, dynamic);
};
