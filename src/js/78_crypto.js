// crypto.getRandomValues and crypto.randomUUID (Web Crypto's non-subtle part), navigator,
// scheduler.wait and structuredClone. `crypto.subtle` and `crypto.DigestStream` are added to
// Crypto.prototype by 79_subtle.js.

const INTEGER_ARRAYS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

class Crypto {
  getRandomValues(array) {
    if (!(this instanceof Crypto)) throw new TypeError("Illegal invocation"); // as workerd: not callable unbound
    if (!INTEGER_ARRAYS.some((Type) => array instanceof Type)) {
      throw new internals.DOMException("The data provided must be an integer-typed array.", "TypeMismatchError");
    }
    if (array.byteLength > 65536) {
      throw new internals.DOMException(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536).`, "QuotaExceededError");
    }
    ops.fillRandom(array);
    return array;
  }

  randomUUID() {
    const b = new Uint8Array(16);
    ops.fillRandom(b);
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    const hex = Array.from(b, (n) => n.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  get [Symbol.toStringTag]() {
    return "Crypto";
  }
}

internals.Crypto = Crypto;
internals.defineGlobal("Crypto", Crypto);
internals.defineGlobal("crypto", new Crypto());

// navigator and scheduler.wait, as production Workers has them.
const NAVIGATOR_TOKEN = Symbol("navigator");
class Navigator {
  constructor(token) {
    if (token !== NAVIGATOR_TOKEN) throw new TypeError("Illegal constructor");
  }
  get userAgent() {
    return "Cloudflare-Workers";
  }
  get hardwareConcurrency() {
    return 1;
  }
  get platform() {
    return "";
  }
  /**
   * Sends `body` to `url` in a POST in the background (the running event's waitUntil work), as
   * workerd does; outside any request (the top level) it sends nothing and answers false.
   */
  sendBeacon(url, body = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'sendBeacon' on 'Navigator': 1 argument required, but only 0 present.");
    url = String(url);
    if (internals.flowEvent() === undefined) return false;
    internals.trackBackground(internals.fetch(url, { method: "POST", body }));
    return true;
  }
  get [Symbol.toStringTag]() {
    return "Navigator";
  }
}
internals.defineGlobal("navigator", new Navigator(NAVIGATOR_TOKEN));
internals.defineGlobal("Navigator", Navigator);
// A worker's global scope has no origin of its own: workerd's `origin` is "null".
internals.defineGlobal("origin", "null");
// `scheduler` is an instance of workerd's Scheduler class (which is not a global).
class Scheduler {
  wait(ms, options = undefined) {
    const signal = options && options.signal;
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) return reject(signal.reason);
      const id = setTimeout(resolve, Number(ms) || 0);
      if (signal) signal.addEventListener("abort", () => { clearTimeout(id); reject(signal.reason); }, { once: true });
    });
  }
  get [Symbol.toStringTag]() {
    return "Scheduler";
  }
}
internals.defineGlobal("scheduler", new Scheduler());

// structuredClone, through V8's serializer (see ops/clone.rs). As in workerd, the transfer list
// may hold ArrayBuffers and views (a view moves its buffer); they are detached and their memory
// moved to the copy. Anything else there is a TypeError, a SharedArrayBuffer, a buffer
// WebAssembly uses or a detached one a DataCloneError; the same buffer twice moves once.
const arrayBufferBrand = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, "byteLength").get;
const viewBuffer = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), "buffer").get;
const dataViewBuffer = Object.getOwnPropertyDescriptor(DataView.prototype, "buffer").get;

/** The ArrayBuffer behind a transfer-list item, or undefined for a SharedArrayBuffer. */
function transferable(item) {
  let buffer = item;
  if (ArrayBuffer.isView(item)) buffer = Reflect.apply(item instanceof DataView ? dataViewBuffer : viewBuffer, item, []);
  else if (item === null || typeof item !== "object") throw new TypeError("Object is not transferable");
  try {
    Reflect.apply(arrayBufferBrand, buffer, []);
    return buffer;
  } catch {
    if (typeof SharedArrayBuffer === "function" && buffer instanceof SharedArrayBuffer) return undefined;
    throw new TypeError("Object is not transferable");
  }
}

internals.defineGlobal("structuredClone", function structuredClone(value, options = undefined) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  const transfer = [];
  if (options !== undefined && options !== null) {
    if (typeof options !== "object" && typeof options !== "function") {
      throw new TypeError("Failed to execute 'structuredClone': the options must be an object.");
    }
    const list = options.transfer;
    if (list !== undefined) {
      if (list === null || typeof list !== "object" || typeof list[Symbol.iterator] !== "function") {
        throw new TypeError("Failed to execute 'structuredClone': options.transfer must be a sequence.");
      }
      for (const item of list) {
        const buffer = transferable(item);
        if (buffer === undefined) throw new internals.DOMException("Object is not transferable.", "DataCloneError");
        if (!transfer.includes(buffer)) transfer.push(buffer);
      }
    }
  }
  try {
    return transfer.length === 0 ? ops.structuredClone(value) : ops.structuredClone(value, transfer);
  } catch (error) {
    if (error && error.name === "DataCloneError") throw new internals.DOMException(error.message, "DataCloneError");
    throw error;
  }
});
