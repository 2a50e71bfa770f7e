// How the Vitest integration's messages cross the WebSocket between Vitest (in Node) and the
// runner in the isolate: devalue's format (which keeps undefined, Dates, RegExps, Maps, Sets,
// BigInts and shared references), with errors and binary data added. Loaded on both sides.
import { stringify, parse } from "devalue";

const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError };

/** An error's own data properties that can cross (no functions or symbols). */
function ownData(error) {
  const out = {};
  for (const key of Object.keys(error)) {
    const value = error[key];
    if (typeof value !== "function" && typeof value !== "symbol") out[key] = value;
  }
  return out;
}

const reducers = {
  Error: (value) => value instanceof Error && [value.name, value.message, value.stack, "cause" in value ? value.cause : undefined, ownData(value)],
  ArrayBuffer: (value) => value instanceof ArrayBuffer && [...new Uint8Array(value)],
  Bytes: (value) => ArrayBuffer.isView(value) && !(value instanceof DataView) && [value.constructor.name, [...new Uint8Array(value.buffer, value.byteOffset, value.byteLength)]],
};

const revivers = {
  Error: ([name, message, stack, cause, own]) => {
    const Class = ERRORS[name] ?? Error;
    const error = Class === AggregateError ? new AggregateError([], message) : new Class(message);
    if (error.name !== name) Object.defineProperty(error, "name", { value: name, writable: true, configurable: true, enumerable: false });
    Object.defineProperty(error, "stack", { value: stack, writable: true, configurable: true, enumerable: false });
    if (cause !== undefined) error.cause = cause;
    return Object.assign(error, own);
  },
  ArrayBuffer: (bytes) => new Uint8Array(bytes).buffer,
  Bytes: ([type, bytes]) => {
    const Class = globalThis[type] ?? Uint8Array;
    const copy = new Uint8Array(bytes);
    return Class === Uint8Array ? copy : new Class(copy.buffer, 0, copy.byteLength / (Class.BYTES_PER_ELEMENT ?? 1));
  },
};

export function serialize(value) {
  return stringify(value, reducers);
}

export function deserialize(text) {
  return parse(text, revivers);
}
