// WebAssembly's promise APIs, compiled on the isolate thread.
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
// inside the module. A memory a module declares for itself is not covered (see README).

function installWasm(wasm, maxPages) {
  const { Module, Instance, Memory } = wasm;
  // `new Module` checks its argument and throws V8's TypeError/CompileError, which becomes the
  // rejection, as with the native API.
  const compile = (bytes) => Promise.resolve().then(() => new Module(bytes));
  const instantiate = (source, imports) =>
    Promise.resolve().then(() => {
      if (source instanceof Module) return new Instance(source, imports);
      const module = new Module(source);
      return { module, instance: new Instance(module, imports) };
    });
  for (const [name, fn] of [["compile", compile], ["instantiate", instantiate]]) {
    Object.defineProperty(fn, "name", { value: name });
    Object.defineProperty(wasm, name, { value: fn, writable: true, enumerable: false, configurable: true });
  }
  // Memory with its maximum capped; the same prototype, so `instanceof` and methods are V8's.
  const BoundedMemory = function (descriptor) {
    if (new.target === undefined) throw new TypeError("WebAssembly.Memory must be invoked with 'new'");
    if (descriptor !== null && typeof descriptor === "object" && !descriptor.shared) {
      const maximum = descriptor.maximum === undefined ? Infinity : Number(descriptor.maximum);
      if (!(maximum <= maxPages)) descriptor = { ...descriptor, maximum: Math.max(maxPages, Number(descriptor.initial) || 0) };
    }
    return Reflect.construct(Memory, [descriptor], new.target === BoundedMemory ? Memory : new.target);
  };
  BoundedMemory.prototype = Memory.prototype;
  Object.defineProperty(Memory.prototype, "constructor", { value: BoundedMemory, writable: true, enumerable: false, configurable: true });
  Object.defineProperty(BoundedMemory, "length", { value: 1 });
  Object.defineProperty(BoundedMemory, "name", { value: "Memory" });
  Object.defineProperty(wasm, "Memory", { value: BoundedMemory, writable: true, enumerable: false, configurable: true });
}

// Called by the native side in every new context, before the user's script loads.
internals.prepareContext = function prepareContext(memoryMb, compatJson) {
  // The compatibility features that are on (lib/compat.js), known before the script's imports
  // load node: modules that look at them (node:process); internals.start sets it again.
  internals.compat = JSON.parse(compatJson);
  if (typeof WebAssembly === "object") installWasm(WebAssembly, memoryMb * 16);
};
