// node:http's OutgoingMessage, shaped as workerd's (the base of ServerResponse): headers are kept
// by setHeader() and friends, rendered at writeHead()/first write into `_header` (the HTTP/1.1
// head text Node builds), and body chunks go through `_send()`/`_writeRaw()` into a small
// corkable queue. Nothing reaches a socket: the first `_send()` announces the head with a
// `_headersSent` event ({ statusCode, statusMessage, headers } parsed from a status line) and
// the queue hands written chunks to `this[kDeliver]` (ServerResponse turns them into the fetch
// Response's body; the first one may start with the head text, whose length
// `writtenHeaderBytes` says). Chunked encoding is only a flag here (no chunk framing is added).

const { Writable } = require("node:stream");
const { Buffer } = require("node:buffer");
const { invalidArgType } = require("node:internal/errors");

const kOutHeaders = Symbol("kOutHeaders");
const kUniqueHeaders = Symbol("kUniqueHeaders");
const kHighWaterMark = Symbol("kHighWaterMark");
const kDeliver = Symbol("kDeliver");

const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/;
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
const CHUNKED = /(?:^|\W)chunked(?:$|\W)/i;
const CONNECTION_CLOSE = /(?:^|\W)close(?:$|\W)/i;
const STATUS_LINE = /^HTTP\/\d+\.\d+ (\d+) (.*)$/;

function codedError(Type, code, message) {
  const error = new Type(message);
  error.code = code;
  return error;
}

function validateHeaderName(name, label = "Header name") {
  if (typeof name !== "string" || !name || !TOKEN.test(name)) {
    throw codedError(TypeError, "ERR_INVALID_HTTP_TOKEN", `${label} must be a valid HTTP token ["${name}"]`);
  }
}
function validateHeaderValue(name, value) {
  if (value === undefined) throw codedError(TypeError, "ERR_HTTP_INVALID_HEADER_VALUE", `Invalid value "${value}" for header "${name}"`);
  if (INVALID_HEADER_CHAR.test(String(value))) throw codedError(TypeError, "ERR_INVALID_CHAR", `Invalid character in header content ["${name}"]`);
}

const headersSent = (action) => codedError(Error, "ERR_HTTP_HEADERS_SENT", `Cannot ${action} headers after they are sent to the client`);
const byteLength = (chunk, encoding) => (typeof chunk === "string" ? Buffer.byteLength(chunk, encoding ?? undefined) : chunk.byteLength);

function parseUniqueHeadersOption(headers) {
  if (!Array.isArray(headers)) return null;
  const unique = new Set();
  for (const header of headers) for (const name of [].concat(header)) unique.add(String(name).toLowerCase());
  return unique;
}

/** Node's Date header value. */
const utcDate = () => new Date().toUTCString();

/**
 * The corkable queue behind an OutgoingMessage: while corked, writes wait (and count in
 * writableLength); uncorked, they are delivered at once. Callbacks run in a microtask.
 */
class Queue {
  corked = 0;
  pending = [];
  constructor(deliver) {
    this.deliver = deliver;
  }
  write(data, encoding, callback, skip = 0) {
    const entry = { data, encoding, skip, length: data?.length ?? 0 };
    if (this.corked > 0) this.pending.push(entry);
    else this.deliver([entry]);
    if (callback) queueMicrotask(() => callback());
  }
  cork() {
    this.corked++;
  }
  uncork() {
    if (this.corked > 0) this.corked--;
    if (this.corked === 0 && this.pending.length) this.deliver(this.pending.splice(0));
  }
  get length() {
    let total = 0;
    for (const entry of this.pending) total += entry.length;
    return total;
  }
}

class OutgoingMessage extends Writable {
  constructor(req = undefined, options = undefined) {
    super();
    this.req = req;
    this[kOutHeaders] = null;
    this[kHighWaterMark] = options?.highWaterMark ?? 65536;
    this[kDeliver] = null;
    this._rejectNonStandardBodyWrites = options?.rejectNonStandardBodyWrites ?? false;
    this._queue = new Queue((entries) => this[kDeliver]?.(entries));
    this._corked = 0;
    this._chunked = []; // body chunks held by cork() once the head went out
    this._chunkedLength = 0;
    this._needDrain = false;
    this._errored = null;
    this._bytesWritten = 0;
    this.outputData = [];
    this.outputSize = 0;
    this.writtenHeaderBytes = 0;
    this.strictContentLength = false;
    this.chunkedEncoding = false;
    this.sendDate = false;
    this.shouldKeepAlive = true;
    this.finished = false;
    this.useChunkedEncodingByDefault = true;
    this.maxRequestsOnConnectionReached = false;
    this._closed = false;
    this._headerSent = false;
    this._onPendingData = () => {};
    this._header = null;
    this._contentLength = null;
    this._hasBody = true;
    this._removedContLen = false;
    this._removedConnection = false;
    this._removedTE = false;
    this._last = false;
    this._defaultKeepAlive = true;
    this._maxRequestsPerSocket = undefined;
    this._keepAliveTimeout = 0;
    this._destroyed = false;
  }

  // Writable's accessors answer from this message's own state (Writable's machinery is unused).
  get destroyed() {
    return this._destroyed;
  }
  set destroyed(value) {
    this._destroyed = Boolean(value);
  }
  get writable() {
    return true; // Node's legacy: still true after end()
  }
  set writable(_value) {}
  get writableLength() {
    const queued = this._header !== null || this._headerSent ? this._queue.length : 0;
    return this.outputSize + queued + this._chunkedLength;
  }
  get writableCorked() {
    return this._corked;
  }
  get writableNeedDrain() {
    return !this.destroyed && !this.finished && this._needDrain;
  }
  get writableEnded() {
    return this.finished;
  }
  get writableHighWaterMark() {
    return this[kHighWaterMark];
  }
  get writableObjectMode() {
    return false;
  }
  get errored() {
    return this._errored;
  }
  get closed() {
    return this._closed;
  }
  get headersSent() {
    return Boolean(this._header);
  }

  cork() {
    this._corked++;
    this._queue.cork();
  }
  uncork() {
    if (this._corked > 0) this._corked--;
    this._queue.uncork();
    if (this._corked > 0 || this._chunked.length === 0) return;
    const held = this._chunked.splice(0);
    this._chunkedLength = 0;
    for (const { data, encoding, callback } of held) this._send(data ?? "", encoding, callback);
  }

  setHeader(name, value) {
    if (this._header) throw headersSent("set");
    validateHeaderName(name);
    validateHeaderValue(name, value);
    this[kOutHeaders] ??= { __proto__: null };
    this[kOutHeaders][name.toLowerCase()] = [name, value];
    return this;
  }
  setHeaders(headers) {
    if (this.headersSent) throw headersSent("set");
    if (Array.isArray(headers) || typeof headers !== "object" || headers === null || typeof headers.keys !== "function" || typeof headers.get !== "function") {
      throw invalidArgType("headers", "Headers or Map", headers);
    }
    const cookies = [];
    for (const [key, value] of headers) {
      if (key === "set-cookie") cookies.push(...[].concat(value));
      else this.setHeader(key, value);
    }
    if (cookies.length) this.setHeader("set-cookie", cookies);
    return this;
  }
  appendHeader(name, value) {
    if (this._header) throw headersSent("append");
    validateHeaderName(name);
    validateHeaderValue(name, value);
    const entry = this[kOutHeaders]?.[name.toLowerCase()];
    if (!entry) return this.setHeader(name, value);
    entry[1] = [].concat(entry[1], value);
    return this;
  }
  getHeader(name) {
    if (typeof name !== "string") throw invalidArgType("name", "string", name);
    return this[kOutHeaders]?.[name.toLowerCase()]?.[1];
  }
  hasHeader(name) {
    if (typeof name !== "string") throw invalidArgType("name", "string", name);
    return Boolean(this[kOutHeaders]?.[name.toLowerCase()]);
  }
  removeHeader(name) {
    if (typeof name !== "string") throw invalidArgType("name", "string", name);
    if (this._header) throw headersSent("remove");
    const key = name.toLowerCase();
    if (key === "connection") this._removedConnection = true;
    else if (key === "content-length") this._removedContLen = true;
    else if (key === "transfer-encoding") this._removedTE = true;
    else if (key === "date") this.sendDate = false;
    if (this[kOutHeaders]) delete this[kOutHeaders][key];
  }
  getHeaderNames() {
    return this[kOutHeaders] ? Object.keys(this[kOutHeaders]) : [];
  }
  getRawHeaderNames() {
    return this[kOutHeaders] ? Object.values(this[kOutHeaders]).map(([name]) => name) : [];
  }
  getHeaders() {
    const out = { __proto__: null };
    for (const [key, [, value]] of Object.entries(this[kOutHeaders] ?? {})) out[key] = value;
    return out;
  }
  flushHeaders() {
    if (!this._header) this._implicitHeader();
    this._send("");
  }
  pipe(destination) {
    this.emit("error", codedError(Error, "ERR_STREAM_CANNOT_PIPE", "Cannot pipe, not readable"));
    return destination;
  }
  _implicitHeader() {
    throw codedError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The _implicitHeader() method is not implemented");
  }
  _renderHeaders() {
    if (this._header) throw headersSent("render");
    const out = {};
    for (const [name, value] of Object.values(this[kOutHeaders] ?? {})) out[name] = value;
    return out;
  }

  /** Renders the head: `firstLine`, then the headers, then what Node adds (Date, Connection, framing). */
  _storeHeader(firstLine, headers) {
    const state = { connection: false, contLen: false, te: false, date: false, expect: false, trailer: false, text: firstLine };
    if (headers !== null && headers !== undefined) {
      if (headers === this[kOutHeaders]) {
        for (const key in headers) this.#processHeader(state, headers[key][0], headers[key][1], false);
      } else if (Array.isArray(headers)) {
        if (headers.length && Array.isArray(headers[0])) {
          for (const [name, value] of headers) this.#processHeader(state, name, value, true);
        } else {
          if (headers.length % 2 !== 0) throw codedError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'headers' is invalid. Received ${internals.inspect(headers)}`);
          for (let i = 0; i < headers.length; i += 2) this.#processHeader(state, headers[i], headers[i + 1], true);
        }
      } else {
        for (const key of Object.keys(headers)) this.#processHeader(state, key, headers[key], true);
      }
    }
    let text = state.text;
    if (this.sendDate && !state.date) text += `Date: ${utcDate()}\r\n`;
    if (this.chunkedEncoding && (this.statusCode === 204 || this.statusCode === 304)) {
      this.chunkedEncoding = false;
      this.shouldKeepAlive = false;
    }
    if (this._removedConnection) {
      this._last = !this.shouldKeepAlive;
    } else if (!state.connection) {
      const keepAlive = this.shouldKeepAlive && (state.contLen || this.useChunkedEncodingByDefault || this.agent);
      if (keepAlive && this.maxRequestsOnConnectionReached) {
        text += "Connection: close\r\n";
      } else if (keepAlive) {
        text += "Connection: keep-alive\r\n";
        if (this._keepAliveTimeout && this._defaultKeepAlive) {
          const max = this._maxRequestsPerSocket > 0 ? `, max=${this._maxRequestsPerSocket}` : "";
          text += `Keep-Alive: timeout=${Math.floor(this._keepAliveTimeout / 1000)}${max}\r\n`;
        }
      } else {
        this._last = true;
        text += "Connection: close\r\n";
      }
    }
    if (!state.contLen && !state.te) {
      if (!this._hasBody) {
        this.chunkedEncoding = false;
      } else if (!this.useChunkedEncodingByDefault) {
        this._last = true;
      } else if (!state.trailer && !this._removedContLen && typeof this._contentLength === "number") {
        text += `Content-Length: ${this._contentLength}\r\n`;
      } else if (!this._removedTE) {
        text += "Transfer-Encoding: chunked\r\n";
        this.chunkedEncoding = true;
      } else {
        this._last = true;
      }
    }
    this._header = `${text}\r\n`;
    this._headerSent = false;
    if (state.expect) this._send("");
  }

  #processHeader(state, name, value, validate) {
    if (validate) validateHeaderName(name);
    const lower = String(name).toLowerCase();
    // A Content-Disposition beside a Content-Length goes out as its UTF-8 bytes read as Latin-1.
    if (lower === "content-disposition" && this._contentLength) {
      const recode = (item) => String(Buffer.from(String(item), "latin1"));
      value = Array.isArray(value) ? value.map(recode) : recode(value);
    }
    if (Array.isArray(value)) {
      const joined = (value.length >= 2 && lower === "cookie") || this[kUniqueHeaders]?.has(lower);
      if (!joined) {
        for (const item of value) this.#storeHeader(state, name, item, validate);
        return;
      }
      value = value.join("; ");
    }
    this.#storeHeader(state, name, String(value), validate);
  }

  #storeHeader(state, name, value, validate) {
    if (validate) validateHeaderValue(name, value);
    state.text += `${name}: ${value}\r\n`;
    const lower = name.toLowerCase();
    if (lower === "connection") {
      state.connection = true;
      this._removedConnection = false;
      if (CONNECTION_CLOSE.test(value)) this._last = true;
      else this.shouldKeepAlive = true;
    } else if (lower === "transfer-encoding") {
      state.te = true;
      this._removedTE = false;
      if (CHUNKED.test(value)) this.chunkedEncoding = true;
    } else if (lower === "content-length") {
      state.contLen = true;
      this._contentLength = Number(value);
      this._removedContLen = false;
    } else if (lower === "date" || lower === "expect" || lower === "trailer") {
      state[lower] = true;
    } else if (lower === "keep-alive") {
      this._defaultKeepAlive = false;
    }
  }

  /** Sends `data`, preceded the first time by the head (announced as `_headersSent`). */
  _send(data, encoding = undefined, callback = undefined, _byteLength = undefined) {
    let skip = 0;
    if (!this._headerSent && this._header !== null) {
      const head = this._header;
      if (typeof data === "string" && (!encoding || encoding === "utf8" || encoding === "latin1")) {
        data = head + data;
        skip = head.length;
      } else {
        this.outputData.unshift({ data: head, encoding: "latin1", callback: null, skip: head.length });
        this.outputSize += head.length;
      }
      this._headerSent = true;
      this.writtenHeaderBytes = head.length;
      const [statusLine, ...lines] = head.split("\r\n");
      const match = STATUS_LINE.exec(statusLine);
      if (match) {
        const headers = new Headers();
        for (const line of lines) {
          if (!line) continue;
          const colon = line.indexOf(": ");
          headers.append(line.slice(0, colon), line.slice(colon + 2));
        }
        this.emit("_headersSent", { statusCode: Number(match[1]), statusMessage: match[2], headers });
      }
    }
    return this.#writeRaw(data, encoding, callback, skip);
  }

  _writeRaw(data, encoding = undefined, callback = undefined) {
    return this.#writeRaw(data, encoding, callback, 0);
  }

  #writeRaw(data, encoding, callback, skip) {
    if (this.destroyed) return false;
    if (typeof encoding === "function") [callback, encoding] = [encoding, undefined];
    if (this._header !== null || this._headerSent) {
      if (this.outputData.length) this.#flushOutput();
      this._queue.write(data, encoding, callback, skip);
      return this._queue.corked > 0 || this._queue.length < this[kHighWaterMark];
    }
    this.outputData.push({ data, encoding, callback, skip });
    this.outputSize += data.length;
    return this.outputSize < this[kHighWaterMark];
  }

  #flushOutput() {
    this._queue.cork();
    for (const { data, encoding, callback, skip } of this.outputData) this._queue.write(data, encoding, callback, skip);
    this._queue.uncork();
    this.outputData = [];
    this.outputSize = 0;
  }

  write(chunk, encoding = undefined, callback = undefined) {
    if (typeof encoding === "function") [callback, encoding] = [encoding, null];
    const ok = this.#write(chunk, encoding, callback, false);
    if (!ok) this._needDrain = true;
    return ok;
  }

  end(chunk = undefined, encoding = undefined, callback = undefined) {
    if (typeof chunk === "function") [callback, chunk, encoding] = [chunk, null, null];
    else if (typeof encoding === "function") [callback, encoding] = [encoding, null];
    if (chunk) {
      if (this.finished) {
        this.#onError(codedError(Error, "ERR_STREAM_WRITE_AFTER_END", "write after end"), typeof callback === "function" ? callback : () => {});
        return this;
      }
      this._queue.cork();
      this.#write(chunk, encoding, null, true);
    } else if (this.finished) {
      if (typeof callback === "function") {
        if (this.writableFinished) callback(codedError(Error, "ERR_STREAM_ALREADY_FINISHED", "Cannot call end after a stream was finished"));
        else this.once("finish", callback);
      }
      return this;
    } else if (!this._header) {
      this._queue.cork();
      this._contentLength = 0;
      this._implicitHeader();
    }
    if (typeof callback === "function") this.once("finish", callback);
    if (this.#strictLength() && this._bytesWritten !== this._contentLength) {
      throw codedError(Error, "ERR_HTTP_CONTENT_LENGTH_MISMATCH", `Response body's content-length of ${this._bytesWritten} byte(s) does not match the content-length of ${this._contentLength} byte(s) set in header`);
    }
    const finish = () => this.emit("finish");
    if ((this._hasBody && this.chunkedEncoding) || !this._headerSent || this.writableLength || chunk) this._send("", "latin1", finish);
    else queueMicrotask(finish);
    this._queue.uncork();
    this._corked = 1;
    this.uncork();
    this.finished = true;
    this._writableState.finished = true;
    this._writableState.corked = 1;
    if (this.outputData.length === 0) this.emit("prefinish");
    return this;
  }

  destroy(error = undefined, _callback = undefined) {
    if (this.destroyed) return this;
    if (error !== undefined && error !== null) this.emit("error", error);
    this.destroyed = true;
    this._errored = error;
    return this;
  }

  #strictLength() {
    return this.strictContentLength && this._contentLength !== null && this._hasBody && !this._removedContLen && !this.chunkedEncoding && !this.hasHeader("transfer-encoding");
  }

  #onError(error, callback) {
    if (this.destroyed) return;
    queueMicrotask(() => {
      callback(error);
      if (!this.destroyed) this.emit("error", error);
    });
  }

  #write(chunk, encoding, callback, fromEnd) {
    if (typeof callback !== "function") callback = () => {};
    if (chunk === null) throw codedError(TypeError, "ERR_STREAM_NULL_VALUES", "May not write null values to stream");
    if (typeof chunk !== "string" && !(chunk instanceof Uint8Array)) throw invalidArgType("chunk", "string or an instance of Buffer or Uint8Array", chunk);
    let error;
    if (this.finished) error = codedError(Error, "ERR_STREAM_WRITE_AFTER_END", "write after end");
    else if (this.destroyed) error = codedError(Error, "ERR_STREAM_DESTROYED", "Cannot call write after a stream was destroyed");
    if (error) {
      if (!this.destroyed) this.#onError(error, callback);
      else queueMicrotask(() => callback(error));
      return false;
    }
    let length;
    if (this.strictContentLength) {
      length = byteLength(chunk, encoding);
      const total = this._bytesWritten + length;
      if (this.#strictLength() && (fromEnd ? total !== this._contentLength : total > (this._contentLength ?? 0))) {
        throw codedError(Error, "ERR_HTTP_CONTENT_LENGTH_MISMATCH", `Response body's content-length of ${total} byte(s) does not match the content-length of ${this._contentLength ?? 0} byte(s) set in header`);
      }
      this._bytesWritten = total;
    }
    if (!this._header) {
      if (fromEnd) this._contentLength = length ??= byteLength(chunk, encoding);
      this._implicitHeader();
    }
    if (!this._hasBody) {
      if (this._rejectNonStandardBodyWrites) throw codedError(Error, "ERR_HTTP_BODY_NOT_ALLOWED", "Adding content for this request method or response status is not allowed.");
      queueMicrotask(callback);
      return true;
    }
    // Writes made in one turn go out together (Node corks the socket until the next tick).
    if (!fromEnd && this._queue.corked === 0) {
      this._queue.cork();
      queueMicrotask(() => this._queue.uncork());
    }
    if (this.chunkedEncoding && chunk.length !== 0 && this._corked && this._headerSent) {
      this._chunked.push({ data: chunk, encoding, callback });
      this._chunkedLength += length ?? byteLength(chunk, encoding);
      return this._chunkedLength < this[kHighWaterMark];
    }
    return this._send(chunk, encoding, callback, length);
  }
}

module.exports = { OutgoingMessage, validateHeaderName, validateHeaderValue, parseUniqueHeadersOption, kOutHeaders, kUniqueHeaders, kHighWaterMark, kDeliver, utcDate, codedError };
