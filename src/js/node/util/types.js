// node:util/types: type checks by V8's own brand checks (ops.valueIs), so a forged
// Symbol.toStringTag or prototype does not fool them, as in Node.
const is = (kind) => (value) => ops.valueIs(kind, value);
const typed = (Ctor) => (value) => ops.valueIs("TypedArray", value) && Object.prototype.toString.call(value) === `[object ${Ctor}]`;

for (const kind of [
  "Proxy", "External", "ModuleNamespaceObject", "ArgumentsObject", "GeneratorObject", "GeneratorFunction", "AsyncFunction",
  "MapIterator", "SetIterator", "NativeError", "NumberObject", "StringObject", "BooleanObject", "BigIntObject", "SymbolObject",
  "Promise", "Date", "RegExp", "Map", "Set", "WeakMap", "WeakSet", "ArrayBuffer", "SharedArrayBuffer", "DataView", "TypedArray",
]) {
  exports[`is${kind}`] = is(kind);
}
for (const name of ["Uint8Array", "Uint8ClampedArray", "Uint16Array", "Uint32Array", "Int8Array", "Int16Array", "Int32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
  exports[`is${name}`] = typed(name);
}
exports.isAnyArrayBuffer = (value) => ops.valueIs("ArrayBuffer", value) || ops.valueIs("SharedArrayBuffer", value);
exports.isArrayBufferView = (value) => ArrayBuffer.isView(value);
exports.isBoxedPrimitive = (value) => ["NumberObject", "StringObject", "BooleanObject", "BigIntObject", "SymbolObject"].some((kind) => ops.valueIs(kind, value));
exports.isWeakRef = (value) => {
  try {
    WeakRef.prototype.deref.call(value);
    return true;
  } catch {
    return false;
  }
};
exports.isCryptoKey = (value) => typeof CryptoKey === "function" && value instanceof CryptoKey;
/** A node:crypto KeyObject, of any kind (SecretKeyObject, PublicKeyObject, … derive from KeyObject). */
exports.isKeyObject = (value) => {
  if (value === null || typeof value !== "object" || typeof value.export !== "function") return false;
  for (let proto = Object.getPrototypeOf(value); proto !== null; proto = Object.getPrototypeOf(proto)) {
    if (Object.hasOwn(proto, "constructor") && proto.constructor?.name === "KeyObject") return true;
  }
  return false;
};
