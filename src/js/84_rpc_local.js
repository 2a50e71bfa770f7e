// `new RpcStub(value)` of cloudflare:workers: a stub for an RpcTarget, function or plain object of
// this worker, whose calls follow the RPC rules (arguments and results copied, only class members
// of an RpcTarget reachable, pipelining, dup() and [Symbol.dispose]()) without leaving the
// isolate. 84_rpc.js uses its holders (a stub of this kind sent over RPC, an own export come
// home) through `internals.rpcLocal`.

const { kKind, kLocal, kTarget, protoTrap, started, DISPOSED, RpcTarget } = internals.rpc;

/**
 * A stub for `holder.value`, an object of this worker: calls go as RPC calls would (arguments and
 * results copied as structured clones, RpcTargets and functions in them passed as stubs, only
 * prototype members of an RpcTarget reachable, promise pipelining), but stay in this isolate.
 */
function localStub(holder, path) {
  const kind = path.length > 0 ? "RpcProperty" : "RpcStub";
  return new Proxy(function rpcStub() {}, {
    getPrototypeOf: protoTrap(kind),
    get(_, name) {
      if (name === kKind) return kind;
      if (name === kLocal) return path.length === 0 ? holder : undefined;
      if (path.length === 0) {
        if (name === Symbol.dispose) return () => disposeHolder(holder);
        if (name === "dup") {
          return () => {
            if (holder.disposed) throw new Error(DISPOSED);
            return localStub(dupHolder(holder), []);
          };
        }
      }
      if (name === "then") return path.length === 0 ? undefined : (ok, fail) => callLocal(holder, path, "get", []).then(ok, fail);
      if (typeof name === "symbol") return undefined;
      return localStub(holder, [...path, name]);
    },
    apply(_, __, args) {
      return started(callLocal(holder, path, "call", args));
    },
  });
}

/** One more reference to a local stub's object (what its dup() holds). */
function dupHolder(holder) {
  holder.count.n++;
  return { value: holder.value, disposed: false, count: holder.count };
}

/** Lets go of one reference; the last calls the object's own `[Symbol.dispose]()`. */
function disposeHolder(holder) {
  if (holder.disposed) return;
  holder.disposed = true;
  if (--holder.count.n > 0) return;
  // An own export come home (stubFor) releases the export instead.
  if (holder.count.last !== undefined) holder.count.last();
  else holder.value?.[Symbol.dispose]?.();
}

const newLocalStub = (value) => localStub({ value, disposed: false, count: { n: 1 } }, []);

/** A value as it arrives over RPC in this worker: cloned, with RpcTargets and functions made stubs. */
function passLocal(v, seen = new Map()) {
  if (typeof v === "function") return v[kTarget] !== undefined || v[kLocal] !== undefined ? v : newLocalStub(v);
  if (v === null || typeof v !== "object") return v;
  if (v instanceof RpcTarget) return newLocalStub(v);
  if (seen.has(v)) return seen.get(v);
  const proto = Object.getPrototypeOf(v);
  if (Array.isArray(v) || proto === Object.prototype || proto === null) {
    const out = Array.isArray(v) ? [] : {};
    seen.set(v, out);
    for (const key of Object.keys(v)) out[key] = passLocal(v[key], seen);
    return out;
  }
  return ops.deserialize(ops.serialize(v));
}

async function callLocal(holder, path, kind, args) {
  if (holder.disposed) throw new Error(DISPOSED);
  return passLocal(await internals.rpc.invoke(holder.value, path, kind, passLocal(args)));
}

/** cloudflare:workers' RpcStub: `new RpcStub(value)` of an RpcTarget or function (or another stub, duplicated). */
class RpcStub {
  constructor(value) {
    if (typeof value === "function" && (value[kLocal] !== undefined || value[kTarget] !== undefined)) return value.dup();
    if (value === null || (typeof value !== "object" && typeof value !== "function")) {
      throw new TypeError("Failed to construct 'JsRpcStub': constructor parameter 1 is not of type 'JsObject'.");
    }
    // Plain objects (their own properties reachable), functions and RpcTargets, as in workerd.
    const proto = Object.getPrototypeOf(value);
    if (typeof value !== "function" && !(value instanceof RpcTarget) && proto !== Object.prototype && proto !== null) {
      throw new TypeError("RpcStubs can only wrap plain objects, functions, and RpcTarget derivatives.");
    }
    return newLocalStub(value);
  }
}

internals.rpc.RpcStub = RpcStub;
internals.rpcLocal = { localStub, dupHolder, disposeHolder };
