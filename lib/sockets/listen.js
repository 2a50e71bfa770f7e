"use strict";
// Inbound TCP for a worker: `worker.listenTcp()` (lib/api.js) listens with Node's `net` and hands
// each accepted connection to an entrypoint's `connect(socket)` handler, as a workerd config's
// `sockets = [(… tcp = (), service = …)]` does. The handler's socket reads and writes the
// connection through two host objects passed by reference (lib/rpc.js connectInto): a read takes
// what Node has buffered (Node stops reading from the kernel while nothing is taken, so a client
// that sends faster than the worker reads is held back by TCP), and a write resolves once Node
// has handed the bytes to the kernel. As in workerd: the client's end ends the socket's readable
// and, once the worker has read it, closes its writable too (the socket is not half-open); the
// handler's return (or throw) closes the connection; a client that resets the connection errors
// the worker's reads with "Network connection lost.". The connection has no wall-clock limit (a
// connect event has none) and its reads and writes no bindingMs; the handler keeps a `wait()`
// call pending while the connection is open for it, so that it is not taken for hung meanwhile.

const net = require("node:net");
const rpc = require("../rpc.js");

/** workerd's errors, as the worker sees them. */
const CONNECTION_LOST = "Network connection lost.";
const WRITABLE_CLOSED = "This WritableStream has been closed.";
/** Node's read buffer per connection (a worker's read takes at most this much at once). */
const READ_BUFFER = 64 * 1024;
/** How long a connection whose handler is over may take to send what is still queued. */
const LINGER_MS = 10_000;

/** The listeners of each worker, closed when it is disposed. */
const listeners = new WeakMap();

/** One accepted connection: the `source` the worker reads and the `sink` it writes. */
class Connection {
  #socket;
  /** The worker has read the client's end: its writable is closed. */
  #writableClosed = false;
  #ended = false;
  #lost = false;
  /** A read waiting for data: its settle function, or null. */
  #waiting = null;
  /** Resolves once the connection is over for the worker (see source.wait()). */
  #over;
  #overNow;

  constructor(socket) {
    this.#socket = socket;
    this.#over = new Promise((resolve) => (this.#overNow = resolve));
    socket.setNoDelay(true);
    socket.on("readable", () => this.#wake());
    socket.on("end", () => {
      this.#ended = true;
      this.#wake();
    });
    // A reset, or any error: the connection is lost for the worker's reads and writes.
    socket.on("error", () => {
      this.#lost = true;
      this.#wake();
    });
    socket.on("close", () => {
      if (!this.#ended) this.#lost = true;
      this.#wake();
      this.#overNow();
    });
    const connection = this;
    this.source = {
      read: () => this.#read(),
      cancel: () => this.#stopReading(),
      // The worker's handler keeps this call pending while the connection is open for it: until
      // it has read the client's end or the connection's loss, the client is gone, or the
      // handler is over. Meanwhile the event has I/O under way (not hung, as in workerd).
      wait: () => this.#over,
      [Symbol.dispose]() {
        connection.#stopReading();
      },
    };
    this.sink = {
      write: (bytes) => this.#write(bytes),
      close: () => this.#end(),
      abort: () => this.#end(),
      [Symbol.dispose]() {
        connection.#end().catch(() => {});
      },
    };
  }

  #wake() {
    const settle = this.#waiting;
    if (settle === null) return;
    this.#waiting = null;
    settle();
  }

  /** The next chunk the client sent (`{ done: false, value }`), or `{ done: true }` at its end. */
  #read() {
    return new Promise((resolve, reject) => {
      const attempt = () => {
        const chunk = this.#socket.destroyed ? null : this.#socket.read();
        // A copy: Node's chunk may be a view of a larger pooled buffer, which would all be sent.
        if (chunk !== null) return resolve({ done: false, value: new Uint8Array(chunk) });
        if (this.#ended) {
          this.#clientEnded();
          this.#overNow();
          return resolve({ done: true });
        }
        if (this.#lost) {
          this.#overNow();
          return reject(new Error(CONNECTION_LOST));
        }
        this.#waiting = attempt;
      };
      attempt();
    });
  }

  /** The worker read the client's end: its writable closes after what it already wrote, as workerd's socket does without allowHalfOpen. */
  #clientEnded() {
    if (this.#writableClosed) return;
    this.#writableClosed = true;
    if (!this.#socket.destroyed && !this.#socket.writableEnded) this.#socket.end();
  }

  /** The worker gave up reading: what the client sends is no longer taken. */
  #stopReading() {
    this.#socket.removeAllListeners("readable");
    this.#socket.resume();
  }

  #write(bytes) {
    if (this.#writableClosed || this.#socket.writableEnded) return Promise.reject(new TypeError(WRITABLE_CLOSED));
    if (this.#lost || this.#socket.destroyed) return Promise.reject(new Error(CONNECTION_LOST));
    if (!(bytes instanceof Uint8Array)) return Promise.reject(new TypeError("This WritableStream only takes bytes."));
    return new Promise((resolve, reject) => {
      this.#socket.write(bytes, (error) => (error ? reject(new Error(CONNECTION_LOST)) : resolve()));
    });
  }

  /** Sends the worker's end (after what it wrote); resolves once it is sent. */
  #end() {
    this.#writableClosed = true;
    const socket = this.#socket;
    if (socket.destroyed) return Promise.resolve();
    if (socket.writableFinished) return Promise.resolve();
    return new Promise((resolve) => {
      socket.once("finish", resolve);
      socket.once("close", resolve);
      if (!socket.writableEnded) socket.end();
    });
  }

  /**
   * The handler is over: the worker's end goes after what it wrote, then the connection is
   * closed (what the client still sends is refused), as workerd drops it.
   */
  finish() {
    this.#overNow();
    const socket = this.#socket;
    if (socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    if (socket.writableFinished) return close();
    socket.once("finish", close);
    if (!socket.writableEnded) socket.end();
  }

  destroy() {
    this.#overNow();
    this.#socket.destroy();
  }
}

/** Checks listenTcp()'s options; a TypeError names the one that is wrong. */
function validate(options) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== "object") throw new TypeError("listenTcp: options must be an object: { port, host, entrypoint, props, onError }");
  const known = new Set(["port", "host", "entrypoint", "props", "onError"]);
  for (const key of Object.keys(options)) if (!known.has(key)) throw new TypeError(`listenTcp: unknown option "${key}" (known: ${[...known].join(", ")})`);
  const { port = 0, host = "127.0.0.1", entrypoint = "default", props, onError } = options;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`listenTcp: options.port must be an integer from 0 to 65535 (0: any free port), got ${JSON.stringify(port)}`);
  if (typeof host !== "string" || host === "") throw new TypeError(`listenTcp: options.host must be a non-empty string (the address to listen on), got ${JSON.stringify(host)}`);
  if (typeof entrypoint !== "string" || entrypoint === "") throw new TypeError(`listenTcp: options.entrypoint must be the name of an export of the worker, got ${JSON.stringify(entrypoint)}`);
  if (onError !== undefined && typeof onError !== "function") throw new TypeError("listenTcp: options.onError must be a function (error) => void");
  if (props !== undefined) {
    try {
      JSON.stringify(props);
    } catch (error) {
      throw new TypeError(`listenTcp: options.props must be JSON-serializable (the handler's ctx.props): ${error.message}`);
    }
  }
  return { port, host, entrypoint, props, onError };
}

/**
 * Listens on `host:port` and runs `worker`'s `entrypoint` connect handler for each connection.
 * Resolves to `{ port, host, address, connections, close() }` once listening.
 * `log` is the worker's log (handler errors go there unless `onError` takes them).
 */
async function listenTcp(worker, options, log) {
  const { port, host, entrypoint, props, onError } = validate(options);
  if (worker.disposed) throw Object.assign(new Error("listenTcp: the worker has been disposed"), { code: "ERR_WORKER_DISPOSED" });
  const open = new Set();
  /** close()'s promise once it was called. */
  let closing = null;
  const report = (error) => {
    if (onError !== undefined) {
      try {
        onError(error);
      } catch (thrown) {
        console.error("workerbox: listenTcp's onError threw:", thrown);
      }
      return;
    }
    log?.("error", `Uncaught (in promise) ${error?.stack ?? error}`);
  };
  const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true, highWaterMark: READ_BUFFER }, (socket) => {
    const connection = new Connection(socket);
    open.add(connection);
    socket.once("close", () => open.delete(connection));
    const address = `${socket.localAddress?.includes(":") ? `[${socket.localAddress}]` : socket.localAddress}:${socket.localPort}`;
    rpc.connectInto(worker, { entrypoint, props, address }, connection.source, connection.sink).then(
      () => connection.finish(),
      (error) => {
        connection.finish();
        // Once the listener closes (or the worker goes), the handlers' failures are its doing.
        if (closing === null && error?.code !== "ERR_WORKER_DISPOSED") report(error);
      },
    );
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Errors of accepted sockets are the connections' own; the server's own after listen() are reported.
  server.on("error", report);
  const bound = server.address();
  const listener = {
    port: bound.port,
    host: bound.address,
    address: `${bound.family === "IPv6" ? `[${bound.address}]` : bound.address}:${bound.port}`,
    /** Connections open now. */
    get connections() {
      return open.size;
    },
    /** Stops listening and closes the connections still open; resolves once the server is closed. */
    close() {
      closing ??= new Promise((resolve) => {
        listeners.get(worker)?.delete(listener);
        server.close(() => resolve());
        for (const connection of open) connection.destroy();
      });
      return closing;
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
  let own = listeners.get(worker);
  if (own === undefined) listeners.set(worker, (own = new Set()));
  own.add(listener);
  return listener;
}

/** A disposed worker's listeners close (their connections with them). */
function workerDisposed(worker) {
  const own = listeners.get(worker);
  if (own === undefined) return Promise.resolve();
  listeners.delete(worker);
  return Promise.all([...own].map((listener) => listener.close())).then(() => {});
}

module.exports = { listenTcp, workerDisposed };
