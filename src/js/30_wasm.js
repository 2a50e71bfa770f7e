// WebAssembly's promise APIs (and compileStreaming/instantiateStreaming from a Response),
// compiled on the isolate thread, and Wasm memories capped at the worker's memoryMb.
//
// V8 compiles `WebAssembly.compile()`/`instantiate()` on background threads and finishes the
// job with a task posted to the isolate's foreground runner. A worker's isolate thread sleeps
// on its inbox between messages and only runs such tasks at the end of a turn, so a request
// awaiting one would stall (V8 15 dropped the `--no-wasm-async-compilation` flag workerbox used
// before). These replacements compile synchronously inside a microtask and settle the same
// promises, which is what that flag did. Results and errors are V8's own.
//
// V8 adds `WebAssembly` to each context as it is made, not to the startup snapshot, so the
// replacements are installed per context, by `internals.prepareContext()`, before the user's
// script runs.
//
// WebAssembly memories are not ArrayBuffer allocations (V8 reserves and commits them itself), so
// the worker's `memoryMb` budget does not see them. A `WebAssembly.Memory` made by the script
// gets a `maximum` of at most `memoryMb` (in 64 KiB pages), which also bounds `memory.grow`
// inside the module. A memory a module declares for itself gets the same maximum: the module's
// bytes are rewritten before V8 compiles them (`ops.wasmCapMemories`, runtime/wasm_memory.rs),
// here for `new WebAssembly.Module`, `compile` and `instantiate`, and natively for `.wasm`
// modules the script imports.

// The per-context steps below are function expressions in parentheses: V8 compiles those when
// the file loads, so the startup snapshot keeps them compiled and a create does not compile them
// again (about 0.25 ms of a 3 ms create). 47_url_legacy, 75_messaging, 97_compat and 98_pedantic
// wrap theirs the same way.
const installWasm = (function installWasm(wasm, maxPages) {
  const { Module, Instance, Memory } = wasm;
  const brands = [ArrayBuffer, globalThis.SharedArrayBuffer].filter(Boolean)
    .map((type) => Object.getOwnPropertyDescriptor(type.prototype, "byteLength").get);
  const isBuffer = (value) => brands.some((getter) => {
    try {
      Reflect.apply(getter, value, []);
      return true;
    } catch {
      return false;
    }
  });
  // The module's bytes with its own memories capped (a copy), or `source` as it was.
  const capped = (source) => {
    const view = ArrayBuffer.isView(source) ? source : isBuffer(source) ? new Uint8Array(source) : undefined;
    return (view && ops.wasmCapMemories(view)) ?? source;
  };
  // Module with the bytes capped; the same prototype and statics, so `instanceof`,
  // `Module.exports()` and the methods are V8's.
  const BoundedModule = function (bytes, ...rest) {
    if (new.target === undefined) throw new TypeError("WebAssembly.Module must be invoked with 'new'");
    return Reflect.construct(Module, [capped(bytes), ...rest], new.target === BoundedModule ? Module : new.target);
  };
  for (const key of Reflect.ownKeys(Module)) {
    if (key !== "prototype" && key !== "name" && key !== "length") Object.defineProperty(BoundedModule, key, Object.getOwnPropertyDescriptor(Module, key));
  }
  BoundedModule.prototype = Module.prototype;
  Object.defineProperty(Module.prototype, "constructor", { value: BoundedModule, writable: true, enumerable: false, configurable: true });
  internals.disguise(BoundedModule, Module);
  Object.defineProperty(wasm, "Module", { value: BoundedModule, writable: true, enumerable: false, configurable: true });

  // `new Module` checks its argument and throws V8's TypeError/CompileError, which becomes the
  // rejection, as with the native API.
  const compile = (bytes, ...rest) => Promise.resolve().then(() => new BoundedModule(bytes, ...rest));
  const instantiate = (source, imports, ...rest) =>
    Promise.resolve().then(() => {
      if (source instanceof Module) return new Instance(source, imports);
      const module = new BoundedModule(source, ...rest);
      return { module, instance: new Instance(module, imports) };
    });
  for (const [name, fn] of [["compile", compile], ["instantiate", instantiate]]) {
    internals.disguise(fn, wasm[name]);
    Object.defineProperty(wasm, name, { value: fn, writable: true, enumerable: false, configurable: true });
  }

  // compileStreaming/instantiateStreaming (the WebAssembly Web API): V8 has them only when the
  // embedder hooks up streaming compilation, which workerd does not (with its dynamic Wasm
  // compilation off, production has neither). Here, as in browsers, the source is a Response or
  // a promise of one, whose Content-Type must be exactly `application/wasm` and whose status
  // must be ok; its body is read whole, then compiled as `compile()` does.
  const ResponseClass = globalThis.Response;
  const responseBytes = async (source, method) => {
    const response = await source;
    const fail = (message) => new TypeError(`WebAssembly.${method}(): ${message}`);
    if (!(response instanceof ResponseClass)) throw fail("Argument 0 must be provided and must be a Response");
    const type = response.headers.get("content-type");
    if (type === null || type.replace(/^[\t ]+|[\t ]+$/g, "").toLowerCase() !== "application/wasm") {
      throw fail(`Incorrect response MIME type ${JSON.stringify(type ?? "")}. Expected 'application/wasm'.`);
    }
    if (!response.ok) throw fail(`HTTP status code is not ok (${response.status})`);
    if (response.bodyUsed) throw fail("The response body has already been used");
    return response.arrayBuffer();
  };
  const compileStreaming = async function compileStreaming(source) {
    return compile(await responseBytes(source, "compileStreaming"));
  };
  const instantiateStreaming = async function instantiateStreaming(source, imports = undefined) {
    return instantiate(await responseBytes(source, "instantiateStreaming"), imports);
  };
  for (const [name, fn] of [["compileStreaming", compileStreaming], ["instantiateStreaming", instantiateStreaming]]) {
    Object.defineProperty(fn, "length", { value: 1, configurable: true });
    Object.defineProperty(wasm, name, { value: fn, writable: true, enumerable: false, configurable: true });
  }
  // Memory with its maximum capped; the same prototype, so `instanceof` and methods are V8's.
  const BoundedMemory = function (descriptor) {
    if (new.target === undefined) throw new TypeError("WebAssembly.Memory must be invoked with 'new'");
    // (A shared memory without a maximum is V8's TypeError, so it is left for V8 to refuse.)
    if (descriptor !== null && typeof descriptor === "object" && !(descriptor.shared && descriptor.maximum === undefined)) {
      const maximum = descriptor.maximum === undefined ? Infinity : Number(descriptor.maximum);
      if (!(maximum <= maxPages)) descriptor = { ...descriptor, maximum: Math.max(maxPages, Number(descriptor.initial) || 0) };
    }
    return Reflect.construct(Memory, [descriptor], new.target === BoundedMemory ? Memory : new.target);
  };
  BoundedMemory.prototype = Memory.prototype;
  Object.defineProperty(Memory.prototype, "constructor", { value: BoundedMemory, writable: true, enumerable: false, configurable: true });
  internals.disguise(BoundedMemory, Memory);
  Object.defineProperty(wasm, "Memory", { value: BoundedMemory, writable: true, enumerable: false, configurable: true });
});

// Called by the native side in every new context, before the user's script loads.
internals.prepareContext = (function prepareContext(memoryMb, compatJson) {
  // The compatibility features that are on (lib/compat.js), known before the script's imports
  // load node: modules that look at them (node:process); internals.start sets it again.
  internals.compat = JSON.parse(compatJson);
  internals.features = new Set(internals.compat.enabled);
  if (typeof WebAssembly === "object") installWasm(WebAssembly, memoryMb * 16);
  internals.limitJsonNesting(memoryMb);
});
