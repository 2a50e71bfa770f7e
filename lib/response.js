"use strict";
// The Response that dispatch() resolves to when the worker's answer came back as whole bytes
// (every response that is not streamed). It is Node's own Response, subclassed so that the
// bytes are not turned into a ReadableStream unless somebody asks for `body`: Node's Response
// constructor builds a byte stream and copies the bytes for every body, and text() then reads
// them back through that stream: about a quarter of a hello-world dispatch (measured on Node 24,
// 12.1 → 8.8 µs p50 without them; see bench/dispatch.mjs).
//
// The body methods answer from the bytes directly while the body is untouched. Anything else
// (the `body` stream, blob(), formData(), a method called on a body already used) goes to a
// Node Response holding the same bytes, made on first need, so every result and every error is
// Node's own. The one thing that differs: Node's Response.prototype methods called with one of
// these as `this` see the empty body the subclass was constructed with (docs/api.md: dispatch).
// Constructed by anyone else (`new response.constructor(body, init)`), it is Node's Response
// through and through.

/**
 * The class, made on first use: reading `globalThis.Response` makes Node load its fetch
 * implementation (20-25 ms on Node 24), which a process that never dispatches (RPC only, a test
 * run) should not pay when it loads workerbox.
 */
let BufferedResponse = null;

/** A Response holding `bytes` (a Uint8Array it may keep: the caller lets go of it). */
function bufferedResponse(bytes, init) {
  BufferedResponse ??= defineClass();
  return new BufferedResponse(bytes, init, FAST);
}

/** What marks a construction as ours (with bytes); any other is Node's constructor as it is. */
const FAST = Symbol("bufferedResponse");

function defineClass() {
  const NodeResponse = globalThis.Response;
  const decoder = new TextDecoder();
  const hasBytes = typeof NodeResponse.prototype.bytes === "function";

  class Response extends NodeResponse {
    /** Made by bufferedResponse() (or a clone of one): the methods below answer for the body. */
    #fast;
    /** The body while nothing has read it; null once a method took it (the body is used) or
     * `real` holds it. */
    #bytes;
    /** Other responses (clones) hold the same bytes: hand out copies only. */
    #shared;
    /** The Node Response that answers for the body once the fast path no longer can. */
    #real = null;

    /** With `fast` (FAST), `body` is a Uint8Array this object may keep (the caller lets go of it). */
    constructor(body = null, init = undefined, fast = undefined, shared = false) {
      const ours = fast === FAST;
      super(ours ? null : body, init);
      this.#fast = ours;
      this.#bytes = ours ? body : null;
      this.#shared = shared;
    }

    /** The Node Response with this body, consumed already when the fast path consumed it. */
    #node() {
      if (this.#real === null) {
        const used = this.#bytes === null;
        this.#real = new NodeResponse(this.#bytes ?? new Uint8Array(0), this.#init());
        this.#bytes = null;
        if (used) this.#real.arrayBuffer().catch(() => {});
      }
      return this.#real;
    }

    /** The bytes for a fast-path read, or null when the read must go to the Node Response. */
    #take() {
      const bytes = this.#bytes;
      this.#bytes = null;
      return bytes;
    }

    /** Status, status text and headers, for another Response like this one. */
    #init() {
      return { status: this.status, statusText: this.statusText, headers: this.headers };
    }

    get body() {
      if (!this.#fast) return super.body;
      return this.#node().body;
    }

    get bodyUsed() {
      if (!this.#fast) return super.bodyUsed;
      return this.#real === null ? this.#bytes === null : this.#real.bodyUsed;
    }

    text() {
      if (!this.#fast) return super.text();
      const bytes = this.#take();
      if (bytes === null) return this.#node().text();
      return Promise.resolve(decoder.decode(bytes));
    }

    json() {
      if (!this.#fast) return super.json();
      const bytes = this.#take();
      if (bytes === null) return this.#node().json();
      try {
        return Promise.resolve(JSON.parse(decoder.decode(bytes)));
      } catch (error) {
        return Promise.reject(error);
      }
    }

    arrayBuffer() {
      if (!this.#fast) return super.arrayBuffer();
      const bytes = this.#take();
      if (bytes === null) return this.#node().arrayBuffer();
      return Promise.resolve(ownBuffer(bytes, this.#shared));
    }

    bytes() {
      if (!this.#fast) return super.bytes();
      const taken = this.#take();
      if (taken === null) return this.#node().bytes();
      return Promise.resolve(new Uint8Array(ownBuffer(taken, this.#shared)));
    }

    blob() {
      if (!this.#fast) return super.blob();
      return this.#node().blob();
    }

    formData() {
      if (!this.#fast) return super.formData();
      return this.#node().formData();
    }

    clone() {
      if (!this.#fast) return super.clone();
      if (this.#bytes === null) {
        // Node's clone: its error for a used body, or a branch of the stream already handed out.
        const branch = this.#node().clone();
        return new NodeResponse(branch.body, this.#init());
      }
      this.#shared = true;
      return new Response(this.#bytes, this.#init(), FAST, true);
    }
  }

  // Node 20's Response has no bytes(); neither does this one there.
  if (!hasBytes) delete Response.prototype.bytes;
  return Response;
}

/** An ArrayBuffer with `bytes`: theirs when nothing else holds it, a copy otherwise. */
function ownBuffer(bytes, shared) {
  const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  if (whole && !shared && !(bytes.buffer instanceof SharedArrayBuffer)) return bytes.buffer;
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

module.exports = { bufferedResponse };
