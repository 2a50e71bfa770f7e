// workerd's unsafe APIs: the unsafe-eval binding (`env.UNSAFE.eval(code, name)`, `newFunction`,
// `newAsyncFunction`, `newWasmModule`; createWorker's `unsafeEval()` binding, workerd's
// `unsafeEval` one), which compiles code whatever the worker's eval setting, and the
// `workerd:unsafe` / `workerd:unsafe-eval` modules, which workerd gives under the experimental
// unsafe_module flag. Code compiles through ops.runScript's forced form (src/runtime/ops/node.rs).

const kUnsafe = Symbol("construct");

function nameOf(name, fallback) {
  return name === undefined ? fallback : String(name);
}

/** Compiles and runs `code` as a classic script named `name`, eval allowed or not. */
function compile(code, name) {
  return ops.runScript(String(code), name, 0, 0, true);
}

/** A function made from `body` and `params`, called `name` (workerd: "anonymous"). */
function makeFunction(kind, body, name, params) {
  const fnName = nameOf(name, "anonymous");
  const list = params.map(String).join(", ");
  const fn = compile(`(${kind} (${list}\n) {\n${String(body)}\n})`, fnName);
  Object.defineProperty(fn, "name", { value: fnName, configurable: true });
  return fn;
}

class UnsafeEval {
  constructor(token) {
    if (token !== kUnsafe) throw new TypeError("Illegal constructor");
  }

  /** Runs `script` in the global scope (no access to the caller's) and returns its value. */
  eval(script, name) {
    return compile(script, nameOf(name, "evalScript"));
  }

  newFunction(script, name, ...args) {
    return makeFunction("function", script, name, args);
  }

  newAsyncFunction(script, name, ...args) {
    return makeFunction("async function", script, name, args);
  }

  newWasmModule(src) {
    if (!(src instanceof ArrayBuffer) && !ArrayBuffer.isView(src)) {
      throw new TypeError("Failed to execute 'newWasmModule' on 'UnsafeEval': parameter 1 is not of type 'ArrayBuffer or ArrayBufferView'.");
    }
    return new WebAssembly.Module(src);
  }
}
Object.defineProperty(UnsafeEval.prototype, Symbol.toStringTag, { value: "UnsafeEval", configurable: true });

class UnsafeModule {
  constructor(token) {
    if (token !== kUnsafe) throw new TypeError("Illegal constructor");
  }

  /** workerd's test autogates: none is on here (WORKERD_ALL_AUTOGATES is workerd's test switch). */
  isTestAutogateEnabled() {
    return false;
  }
}
Object.defineProperty(UnsafeModule.prototype, Symbol.toStringTag, { value: "UnsafeModule", configurable: true });

function unsafeModule(specifier, make) {
  return () => {
    if (!internals.feature("unsafe_module")) {
      throw internals.noSuchModule(specifier, "It needs the experimental unsafe_module compatibility flag.");
    }
    return make();
  };
}
internals.cloudflareModules["workerd:unsafe"] = unsafeModule("workerd:unsafe", () => new UnsafeModule(kUnsafe));
internals.cloudflareModules["workerd:unsafe-eval"] = unsafeModule("workerd:unsafe-eval", () => new UnsafeEval(kUnsafe));

const makeOtherBinding = internals.makeBinding;
internals.makeBinding = function makeBinding(name, kind) {
  return kind === "unsafe_eval" ? new UnsafeEval(kUnsafe) : makeOtherBinding(name, kind);
};
