// workerd:rtti's probe: the script of the worker src/runtime/ops/rtti.rs starts with the
// compatibility date and flags exportTypes was given. Its one response describes what that
// worker has, read by introspection (workerbox has no type registry as workerd's C++ does): the
// global scope (its functions, and its classes with their constructors, methods and their
// `length`, accessors, static members, base class, iterability) and the exports of each built-in
// module of CANDIDATES (put in front of this file by the op) that the worker may import. Types
// are not known to JavaScript, so there are none: src/js/89_rtti.js encodes every one as
// `unknown`, except a reference to a class described here.

const SKIPPED_STATICS = new Set(["length", "name", "prototype", "caller", "arguments"]);
// JavaScript's own globals (V8's, not the runtime's API; workerd's registry lists none of them).
const LANGUAGE_GLOBALS = new Set(["globalThis", "Infinity", "NaN", "undefined", "eval", "isFinite", "isNaN", "parseFloat", "parseInt", "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape", "Object", "Function", "Array", "Number", "Boolean", "String", "Symbol", "BigInt", "Date", "Promise", "RegExp", "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError", "SuppressedError", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "Proxy", "Reflect", "JSON", "Math", "Atomics", "Intl", "Iterator", "DisposableStack", "AsyncDisposableStack", "WebAssembly"]);

/** Whether `value` is a class (a constructor with a capitalized name), not a plain function. */
function isClass(value) {
  return typeof value === "function" && typeof value.name === "string" && /^[A-Z]/.test(value.name) && (typeof value.prototype === "object" || typeof value.prototype === "function") && value.prototype !== null;
}

/** Members of `object`'s own properties: methods, accessors (properties), values. */
function ownMembers(object, { isStatic = false, prototype = false, skip = new Set() } = {}) {
  const members = [];
  for (const key of Reflect.ownKeys(object)) {
    if (typeof key === "symbol" || skip.has(key)) continue;
    const descriptor = Reflect.getOwnPropertyDescriptor(object, key);
    if (descriptor === undefined) continue;
    if (typeof descriptor.value === "function" && !isClass(descriptor.value)) members.push({ kind: "method", name: key, args: descriptor.value.length, static: isStatic });
    else if (isStatic && Number.isInteger(descriptor.value) && !descriptor.writable) members.push({ kind: "constant", name: key, value: descriptor.value });
    else members.push({ kind: "property", name: key, readonly: "value" in descriptor ? !descriptor.writable : descriptor.set === undefined, prototype, structure: isClass(descriptor.value) ? descriptor.value.name : null });
  }
  return members;
}

/** An iterator method's description (`[Symbol.iterator]`'s name and length), or null. */
function iteratorOf(prototype, symbol) {
  const method = prototype[symbol];
  return typeof method === "function" ? { name: method.name.replace(/^\[Symbol\.(async)?[iI]terator\]$/, "") || "iterator", args: method.length } : null;
}

/** A class: its constructor's arguments, statics, prototype members, base class and iterability. */
function describeClass(C, qualifier) {
  const base = Object.getPrototypeOf(C);
  return {
    name: C.name,
    fullyQualifiedName: `${qualifier}::${C.name}`,
    members: [{ kind: "constructor", args: C.length }, ...ownMembers(C, { isStatic: true, skip: SKIPPED_STATICS }), ...ownMembers(C.prototype, { prototype: true, skip: new Set(["constructor"]) })],
    extends: base !== Function.prototype && typeof base === "function" && base.name ? base.name : null,
    iterator: iteratorOf(C.prototype, Symbol.iterator),
    asyncIterator: iteratorOf(C.prototype, Symbol.asyncIterator),
  };
}

/** A group of structures: `main` (an object's members, classes referred to by name) and each class found in it. */
function describeScope(name, object, qualifier, skip = new Set()) {
  const classes = new Map();
  const members = [];
  for (const member of ownMembers(object, { skip })) {
    members.push(member);
    if (member.kind === "property" && member.structure !== null && !classes.has(member.structure)) classes.set(member.structure, describeClass(object[member.name], qualifier));
  }
  return { name, fullyQualifiedName: qualifier, members, extends: null, iterator: null, asyncIterator: null, classes: [...classes.values()] };
}

async function describe() {
  // (Named as workerd names its global scope, and workerbox's own messages do.)
  const global = describeScope("ServiceWorkerGlobalScope", globalThis, "workerbox", LANGUAGE_GLOBALS);
  const groups = [{ name: "global-scope", structures: [global, ...global.classes] }];
  const modules = [];
  for (const specifier of CANDIDATES) {
    let namespace;
    try {
      namespace = await import(specifier);
    } catch {
      continue; // not a module this worker's date and flags give
    }
    const scope = describeScope(specifier, namespace, specifier);
    groups.push({ name: specifier, structures: [scope, ...scope.classes] });
    modules.push({ specifier, structureName: specifier });
  }
  for (const group of groups) for (const structure of group.structures) delete structure.classes;
  return { groups, modules };
}

export default {
  async fetch() {
    return new Response(JSON.stringify(await describe()), { headers: { "content-type": "application/json" } });
  },
};
