// HTMLRewriter (Cloudflare Workers API): a streaming HTML rewriter backed by the lol_html crate.
// Each transform's rewriter runs as a native coroutine on this thread (see
// src/runtime/rewriter.rs): when lol_html reaches content a handler asked for, an op returns a
// "handler call" event with the rewriter suspended, this file runs the JS handler (awaiting it if
// it returns a promise) and then resumes the rewriter. The tokens handed to handlers (Element,
// Text, …) forward their methods to the suspended rewriter, and stop working once their handler
// has returned.

const ResponseClass = globalThis.Response;
const HeadersClass = globalThis.Headers;
const ReadableStreamClass = globalThis.ReadableStream;
const { TextDecoder } = globalThis;

// Handler flags, as src/runtime/rewriter.rs reads them.
const ON_ELEMENT = 1;
const ON_COMMENTS = 2;
const ON_TEXT = 4;
const ON_DOCTYPE = 8;
const ON_END = 16;

const TOKEN_KEY = Symbol("content token");
const STALE = "This content token is no longer valid. Content tokens are only valid during the execution of the relevant content handler.";

// A rewriter the stream was collected with, without ending or cancelling it: free its coroutine.
const freed = new FinalizationRegistry((id) => ops.rewriterDrop(id));

/** `{ html: true }` → true; anything else inserts the content as text (escaped). */
function isHtml(options) {
  return options !== undefined && options !== null && Boolean(options.html);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The text of streamed content (a ReadableStream or a Response's body), which must be UTF-8. */
async function streamedText(content) {
  const stream = content instanceof ResponseClass ? content.body : content;
  if (stream === null) return "";
  const parts = [];
  for await (const chunk of stream) parts.push(internals.chunkBytes(chunk));
  let size = 0;
  for (const part of parts) size += part.byteLength;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.byteLength;
  }
  try {
    return utf8.decode(bytes);
  } catch {
    throw new TypeError("Parser error: Invalid UTF-8");
  }
}

/**
 * Inserted content: a string, or (as in workerd) a ReadableStream or Response whose body is read
 * whole before the rewriter goes on (a promise of its text in the queue; see settleQueue()).
 */
function contentOf(content) {
  if (content instanceof ReadableStreamClass || content instanceof ResponseClass) {
    const text = streamedText(content);
    text.catch(() => {});
    return text;
  }
  return String(content);
}

/** Waits for the streamed content in the queued calls; the queue then holds only strings. */
async function settleQueue(queue) {
  for (let i = 1; i < queue.length; i += 4) {
    if (typeof queue[i] !== "string") queue[i] = await queue[i];
  }
  return queue;
}

let invalidate;
let sessionOf;

/** Base of the objects handed to handlers: bound to one transform and one handler call. */
class ContentToken {
  #session;
  #alive = true;
  constructor(key, session) {
    if (key !== TOKEN_KEY) throw new TypeError("Illegal constructor");
    this.#session = session;
  }
  static {
    invalidate = (token) => {
      token.#alive = false;
    };
    /** The token's transform, once the token is known to be valid. */
    sessionOf = (token) => {
      if (!(#alive in token) || !token.#alive) throw new TypeError(STALE);
      return token.#session;
    };
  }
}

/**
 * Runs a token method in the suspended rewriter now (one round trip), after the queued ones: for
 * getters and for methods that can fail.
 */
function callToken(token, method, a = "", b = "", html = false) {
  const session = sessionOf(token);
  // The queued calls before streamed content still waiting to be read go first; the rest wait.
  let ready = 0;
  while (ready < session.queue.length && typeof session.queue[ready + 1] === "string") ready += 4;
  const queued = session.queue.slice(0, ready);
  session.queue = session.queue.slice(ready);
  try {
    return ops.rewriterCall(session.id, method, String(a), String(b), html, queued);
  } catch (error) {
    // lol_html's refusals (a bad tag name, comment text, …) say so, as in workerd.
    if (error instanceof TypeError && !error.message.startsWith("Parser error: ")) throw new TypeError(`Parser error: ${error.message}`);
    throw error;
  }
}

/** Queues a token method that cannot fail; it is sent with the next round trip. */
function queueCall(token, method, a = "", b = "", html = false) {
  const session = sessionOf(token);
  session.queue.push(method, typeof a === "string" ? a : a instanceof Promise ? a : String(a), String(b), html ? "1" : "");
}

const asciiLowercase = (s) => s.replace(/[A-Z]+/g, (c) => c.toLowerCase());

/** lol_html's rule for attribute names (with UTF-8, the only other failure cannot happen). */
function checkAttributeName(name) {
  if (name === "") throw new TypeError("Parser error: Attribute name can't be empty.");
  const bad = /[ \n\r\t\f/>=]/.exec(name);
  if (bad) throw new TypeError(`Parser error: \`${bad[0]}\` character is forbidden in the attribute name`);
}

/** Queues an insertion of `content` (text, or HTML with `{ html: true }`) and returns the token. */
function insert(token, method, content, options) {
  queueCall(token, method, contentOf(content), "", isHtml(options));
  return token;
}

/** What elements, end tags, text chunks and comments share: content around them, replacing and removing them. */
class SiblingContentToken extends ContentToken {
  before(content, options) {
    return insert(this, "before", content, options);
  }
  after(content, options) {
    return insert(this, "after", content, options);
  }
  replace(content, options) {
    return insert(this, "replace", content, options);
  }
  remove() {
    queueCall(this, "remove");
    return this;
  }
}

const MUTATED = "The attributes of this element have been modified during iteration. You must create a new iterator after modifying attributes.";
const ITERATOR_PROTOTYPE = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
let invalidateIterator;

/**
 * `element.attributes`: an iterator over [name, value] pairs that, as workerd's, stops working
 * when its handler returns or the element's attributes change (setAttribute/removeAttribute).
 */
class AttributesIterator {
  #element;
  #list;
  #index = 0;
  #mutated = false;
  constructor(key, element, list) {
    if (key !== TOKEN_KEY) throw new TypeError("Illegal constructor");
    this.#element = element;
    this.#list = list;
  }
  static {
    invalidateIterator = (iterator) => {
      iterator.#mutated = true;
    };
  }
  next() {
    sessionOf(this.#element);
    if (this.#mutated) throw new Error(MUTATED);
    if (this.#index >= this.#list.length) return { done: true, value: undefined };
    const [name, value] = this.#list[this.#index++];
    return { done: false, value: [name, value] };
  }
  [Symbol.iterator]() {
    return this;
  }
}
Object.setPrototypeOf(AttributesIterator.prototype, ITERATOR_PROTOTYPE);

class Element extends SiblingContentToken {
  // What lol_html reported with the handler call, until a change makes it stale (null).
  #tagName;
  #namespaceURI;
  #attributes;
  #iterators = [];
  #mutated() {
    this.#attributes = null;
    for (const iterator of this.#iterators) invalidateIterator(iterator);
    this.#iterators = [];
  }
  constructor(key, session, tagName, namespaceURI, flatAttributes) {
    super(key, session);
    this.#tagName = tagName;
    this.#namespaceURI = namespaceURI;
    this.#attributes = [];
    for (let i = 0; i < flatAttributes.length; i += 2) this.#attributes.push([flatAttributes[i], flatAttributes[i + 1]]);
  }
  #attributeList() {
    sessionOf(this);
    if (this.#attributes === null) this.#attributes = callToken(this, "attributes");
    return this.#attributes;
  }
  get tagName() {
    sessionOf(this);
    if (this.#tagName === null) this.#tagName = callToken(this, "tagName");
    return this.#tagName;
  }
  set tagName(name) {
    callToken(this, "setTagName", name);
    this.#tagName = null;
  }
  get namespaceURI() {
    sessionOf(this);
    return this.#namespaceURI;
  }
  get attributes() {
    const iterator = new AttributesIterator(TOKEN_KEY, this, this.#attributeList());
    this.#iterators.push(iterator);
    return iterator;
  }
  get removed() {
    return callToken(this, "removed");
  }
  getAttribute(name) {
    const key = asciiLowercase(String(name));
    const hit = this.#attributeList().find(([n]) => n === key);
    return hit === undefined ? null : hit[1];
  }
  hasAttribute(name) {
    const key = asciiLowercase(String(name));
    return this.#attributeList().some(([n]) => n === key);
  }
  setAttribute(name, value) {
    name = String(name);
    sessionOf(this);
    checkAttributeName(name);
    queueCall(this, "setAttribute", name, String(value));
    this.#mutated();
    return this;
  }
  removeAttribute(name) {
    queueCall(this, "removeAttribute", String(name));
    this.#mutated();
    return this;
  }
  prepend(content, options) {
    return insert(this, "prepend", content, options);
  }
  append(content, options) {
    return insert(this, "append", content, options);
  }
  setInnerContent(content, options) {
    return insert(this, "setInnerContent", content, options);
  }
  removeAndKeepContent() {
    queueCall(this, "removeAndKeepContent");
    return this;
  }
  onEndTag(handler) {
    const session = sessionOf(this);
    if (typeof handler !== "function") throw new TypeError("Element.onEndTag: the handler must be a function.");
    const token = session.nextEndTag++;
    session.endTags.set(token, handler);
    try {
      callToken(this, "onEndTag", token);
    } catch (error) {
      session.endTags.delete(token);
      throw error;
    }
  }
  get [Symbol.toStringTag]() {
    return "Element";
  }
}

class EndTag extends SiblingContentToken {
  get name() {
    return callToken(this, "name");
  }
  set name(name) {
    callToken(this, "setName", name);
  }
  get [Symbol.toStringTag]() {
    return "EndTag";
  }
}

class Text extends SiblingContentToken {
  #text;
  #last;
  constructor(key, session, text, last) {
    super(key, session);
    this.#text = text;
    this.#last = last;
  }
  get text() {
    sessionOf(this);
    return this.#text;
  }
  get lastInTextNode() {
    sessionOf(this);
    return this.#last;
  }
  get removed() {
    return callToken(this, "removed");
  }
  get [Symbol.toStringTag]() {
    return "Text";
  }
}

class Comment extends SiblingContentToken {
  get removed() {
    return callToken(this, "removed");
  }
  get text() {
    return callToken(this, "text");
  }
  set text(text) {
    callToken(this, "setText", text);
  }
  get [Symbol.toStringTag]() {
    return "Comment";
  }
}

class Doctype extends ContentToken {
  #name;
  #publicId;
  #systemId;
  constructor(key, session, name, publicId, systemId) {
    super(key, session);
    this.#name = name;
    this.#publicId = publicId;
    this.#systemId = systemId;
  }
  get name() {
    sessionOf(this);
    return this.#name;
  }
  get publicId() {
    sessionOf(this);
    return this.#publicId;
  }
  get systemId() {
    sessionOf(this);
    return this.#systemId;
  }
  get removed() {
    return callToken(this, "removed");
  }
  remove() {
    queueCall(this, "remove");
    return this;
  }
  get [Symbol.toStringTag]() {
    return "Doctype";
  }
}

class DocumentEnd extends ContentToken {
  append(content, options) {
    return insert(this, "append", content, options);
  }
  get [Symbol.toStringTag]() {
    return "DocumentEnd";
  }
}

/** Copies the handler functions of `handlers` (read once, as Workers does). */
function pickHandlers(handlers, names, what) {
  if (handlers === null || typeof handlers !== "object") throw new TypeError(`${what}: the handlers must be an object.`);
  const picked = { receiver: handlers };
  for (const name of names) {
    const fn = handlers[name];
    if (fn === undefined) continue;
    if (typeof fn !== "function") throw new TypeError(`${what}: the '${name}' handler must be a function.`);
    picked[name] = fn;
  }
  return picked;
}

/** Finds the JS handler and token for a handler-call event. */
function handlerFor(session, kind, index, a, b, c) {
  switch (kind) {
    case "element": {
      const h = session.elements[index].handlers;
      return [h.element, h.receiver, new Element(TOKEN_KEY, session, a, b, c)];
    }
    case "comments": {
      const h = session.elements[index].handlers;
      return [h.comments, h.receiver, new Comment(TOKEN_KEY, session)];
    }
    case "text": {
      const h = session.elements[index].handlers;
      return [h.text, h.receiver, new Text(TOKEN_KEY, session, a, b)];
    }
    case "docComments": {
      const h = session.document[index];
      return [h.comments, h.receiver, new Comment(TOKEN_KEY, session)];
    }
    case "docText": {
      const h = session.document[index];
      return [h.text, h.receiver, new Text(TOKEN_KEY, session, a, b)];
    }
    case "doctype": {
      const h = session.document[index];
      return [h.doctype, h.receiver, new Doctype(TOKEN_KEY, session, a, b, c)];
    }
    case "end": {
      const h = session.document[index];
      return [h.end, h.receiver, new DocumentEnd(TOKEN_KEY, session)];
    }
    case "endTag": {
      const handler = session.endTags.get(index);
      session.endTags.delete(index);
      return [handler, undefined, new EndTag(TOKEN_KEY, session)];
    }
    default:
      throw new TypeError(`HTMLRewriter: unexpected event '${kind}'.`);
  }
}

/** Output is passed on in chunks of about this many bytes (see drive()). */
const COALESCE = 64 * 1024;

/**
 * Handles rewriter events until the rewriter wants more input ("ready") or has ended ("done"):
 * passes output on and runs the handlers it asks for. Returns whether any output was enqueued.
 */
async function drive(session, event, controller) {
  let produced = false;
  // Output between handler calls comes in small pieces: it is passed on in one chunk when the
  // rewriter wants more input or has ended, when it reaches COALESCE bytes, and before waiting
  // on an asynchronous handler (so that what is ready is not held back by I/O).
  const pending = [];
  let size = 0;
  const flush = () => {
    if (size === 0 || session.cancelled) {
      pending.length = 0;
      size = 0;
      return;
    }
    let chunk = pending[0];
    if (pending.length > 1) {
      chunk = new Uint8Array(size);
      let at = 0;
      for (const part of pending) {
        chunk.set(part, at);
        at += part.byteLength;
      }
    }
    pending.length = 0;
    size = 0;
    controller.enqueue(chunk);
    produced = true;
  };
  for (;;) {
    const [output, kind, index, a, b, c] = event;
    if (output.byteLength > 0 && !session.cancelled) {
      pending.push(ArrayBuffer.isView(output) ? output : new Uint8Array(output));
      size += output.byteLength;
      if (size >= COALESCE) flush();
    }
    if (kind === "ready" || kind === "done") {
      flush();
      return produced;
    }
    if (kind === "error") throw new TypeError(`HTMLRewriter: ${a}`);
    const [handler, receiver, token] = handlerFor(session, kind, index, a, b, c);
    try {
      const result = Reflect.apply(handler, receiver, [token]);
      if (result !== null && (typeof result === "object" || typeof result === "function") && typeof result.then === "function") {
        flush();
        await result;
      }
    } finally {
      invalidate(token);
    }
    if (session.cancelled) return produced;
    const queued = session.queue;
    session.queue = [];
    if (queued.some((item) => typeof item !== "string")) {
      flush();
      await settleQueue(queued);
      if (session.cancelled) return produced;
    }
    event = ops.rewriterResume(session.id, queued);
  }
}

/** Reads `reader` to its end, dropping what comes. */
async function drain(reader) {
  try {
    for (;;) if ((await reader.read()).done) return;
  } catch {}
}

/** The rewritten body: pulls the source, feeds the rewriter, runs handlers, enqueues output. */
function rewrittenBody(source, elements, document) {
  const flat = [];
  for (const { selector, handlers } of elements) {
    const flags = (handlers.element ? ON_ELEMENT : 0) | (handlers.comments ? ON_COMMENTS : 0) | (handlers.text ? ON_TEXT : 0);
    flat.push(selector, String(flags));
  }
  const documentFlags = document.map((h) =>
    String((h.doctype ? ON_DOCTYPE : 0) | (h.comments ? ON_COMMENTS : 0) | (h.text ? ON_TEXT : 0) | (h.end ? ON_END : 0)),
  );
  const session = { id: 0, elements, document, endTags: new Map(), nextEndTag: 1, queue: [], cancelled: false, ended: false };
  const reader = source.getReader();
  const close = () => {
    if (session.ended) return;
    session.ended = true;
    ops.rewriterDrop(session.id);
    freed.unregister(session);
  };
  const stream = new ReadableStreamClass(
    {
      start() {
        session.id = ops.rewriterCreate(flat, documentFlags, internals.feature("html_rewriter_treats_esi_include_as_void_tag"));
      },
      async pull(controller) {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (session.cancelled) return;
            let event;
            if (done) {
              event = ops.rewriterEnd(session.id);
            } else if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
              event = ops.rewriterWrite(session.id, ArrayBuffer.isView(value) ? value : new Uint8Array(value));
            } else {
              throw new TypeError("HTMLRewriter: the response body must be a stream of bytes (Uint8Array chunks).");
            }
            const produced = await drive(session, event, controller);
            if (session.cancelled) return;
            if (done) {
              close();
              controller.close();
              return;
            }
            if (produced) return;
          }
        } catch (error) {
          close();
          // The output fails; as in workerd, what is still written to the source is taken (and
          // dropped) rather than refused, so its writer does not see the rewriter's error.
          drain(reader);
          throw error;
        }
      },
      cancel(reason) {
        session.cancelled = true;
        close();
        // As in workerd, whose rewriter learns that its output is gone when it next writes: the
        // source is cancelled once its next chunk (or its end) has come.
        reader.read().then(
          () => reader.cancel(reason).catch(() => {}),
          () => {},
        );
      },
    },
    // As in workerd, the source is pumped through the rewriter from the start, not only when the
    // output is read: up to this much output waits for a reader before the pump pauses.
    { highWaterMark: COALESCE, size: (chunk) => chunk.byteLength },
  );
  freed.register(stream, session.id, session);
  return stream;
}

const NOT_ASCII_COMPATIBLE = new Set(["utf-16le", "utf-16be", "iso-2022-jp"]);

/**
 * Refuses a charset lol_html cannot rewrite, with workerd's errors. (A known ASCII-compatible
 * charset other than UTF-8 is rewritten as UTF-8 here: see docs/compatibility.md.)
 */
function checkCharset(contentType) {
  if (contentType === null) return;
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType);
  if (match === null) return;
  const label = match[1] ?? match[2];
  let encoding;
  try {
    encoding = new TextDecoder(label).encoding;
  } catch {
    throw new TypeError("Parser error: Unknown character encoding has been provided.");
  }
  if (NOT_ASCII_COMPATIBLE.has(encoding)) throw new TypeError("Parser error: Expected ASCII-compatible encoding.");
}

class HTMLRewriter {
  #elements = [];
  #document = [];

  on(selector, handlers) {
    selector = String(selector);
    ops.rewriterCheckSelector(selector);
    this.#elements.push({ selector, handlers: pickHandlers(handlers, ["element", "comments", "text"], "HTMLRewriter.on") });
    return this;
  }

  onDocument(handlers) {
    this.#document.push(pickHandlers(handlers, ["doctype", "comments", "text", "end"], "HTMLRewriter.onDocument"));
    return this;
  }

  transform(response) {
    if (!(response instanceof ResponseClass)) throw new TypeError("HTMLRewriter.transform: the argument must be a Response.");
    const headers = new HeadersClass(response.headers);
    headers.delete("content-length");
    const init = { status: response.status, statusText: response.statusText, headers };
    const source = response.body;
    if (source === null) return new ResponseClass(null, init);
    checkCharset(response.headers.get("content-type"));
    return new ResponseClass(rewrittenBody(source, [...this.#elements], [...this.#document]), init);
  }

  get [Symbol.toStringTag]() {
    return "HTMLRewriter";
  }
}

internals.defineGlobal("HTMLRewriter", HTMLRewriter);
