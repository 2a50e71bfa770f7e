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

function installWasm(wasm) {
  const { Module, Instance } = wasm;
  const isModule = (value) => {
    try {
      Module.exports(value);
      return true;
    } catch {
      return false;
    }
  };
  // `new Module` checks its argument and throws V8's TypeError/CompileError, which becomes the
  // rejection, as with the native API.
  const compile = (bytes) => Promise.resolve().then(() => new Module(bytes));
  const instantiate = (source, imports) =>
    Promise.resolve().then(() => {
      if (isModule(source)) return new Instance(source, imports);
      const module = new Module(source);
      return { module, instance: new Instance(module, imports) };
    });
  for (const [name, fn] of [["compile", compile], ["instantiate", instantiate]]) {
    Object.defineProperty(fn, "name", { value: name });
    Object.defineProperty(wasm, name, { value: fn, writable: true, enumerable: false, configurable: true });
  }
}

// Called by the native side in every new context, before the user's script loads.
internals.prepareContext = function prepareContext() {
  if (typeof WebAssembly === "object") installWasm(WebAssembly);
};
