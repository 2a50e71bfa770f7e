// crypto.getRandomValues and crypto.randomUUID (Web Crypto's non-subtle part), navigator,
// scheduler.wait and structuredClone. `crypto.subtle` and `crypto.DigestStream` are added to
// Crypto.prototype by 79_subtle.js.

const INTEGER_ARRAYS = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];

class Crypto {
  getRandomValues(array) {
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
class Navigator {
  get userAgent() {
    return "Cloudflare-Workers";
  }
  get hardwareConcurrency() {
    return 1;
  }
  get [Symbol.toStringTag]() {
    return "Navigator";
  }
}
internals.defineGlobal("navigator", new Navigator());
internals.defineGlobal("scheduler", {
  wait(ms, options = undefined) {
    const signal = options && options.signal;
    return new Promise((resolve, reject) => {
      if (signal && signal.aborted) return reject(signal.reason);
      const id = setTimeout(resolve, Number(ms) || 0);
      if (signal) signal.addEventListener("abort", () => { clearTimeout(id); reject(signal.reason); }, { once: true });
    });
  },
});

// structuredClone, through V8's serializer (see ops/clone.rs).
internals.defineGlobal("structuredClone", function structuredClone(value, options = undefined) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  if (options && options.transfer !== undefined && [...options.transfer].length > 0) {
    throw new internals.DOMException("structuredClone: transferring objects is not supported", "DataCloneError");
  }
  try {
    return ops.structuredClone(value);
  } catch (error) {
    if (error && error.name === "DataCloneError") throw new internals.DOMException(error.message, "DataCloneError");
    throw error;
  }
});
