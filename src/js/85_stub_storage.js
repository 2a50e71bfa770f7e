// Stubs kept as data: a service stub (a Fetcher: an env service binding, or
// ctx.exports.<Entrypoint>({ props })) or a Durable Object class (ctx.exports.<Class>({ props }))
// written into a value that outlives the call that holds it — a Durable Object's storage
// (allow_irrevocable_stub_storage) and the props of a ctx.exports binding — and made a working
// stub again where that value is read. As in workerd, such a stub is kept as what it names (the
// binding and its props, workerd's channel token), not as a reference: nothing else keeps it
// alive, and a stored one works after the object (or the process) starts again.
//
// A stub names one of the worker's own bindings, so it is read back in the worker that wrote it:
// a Durable Object's storage belongs to the worker of its class, and the props of a ctx.exports
// binding reach that worker's own entrypoint or class. A stub received over RPC stands for the
// same binding when the host tells that it is one of this worker's (lib/rpc.js describeBindings).

/** A kept stub's place: `{ [BINDING_KEY]: { binding, props } }` (props as encodeProps() gave them). */
const BINDING_KEY = "\u0000workerbox.binding";
/** Wraps a stored value that holds kept stubs: `{ [STORED_KEY]: value }`. */
const STORED_KEY = "\u0000workerbox.stored";
/** Wraps props that hold kept stubs: `{ [PROPS_KEY]: props }`. */
const PROPS_KEY = "\u0000workerbox.props";

const cloneError = (message) => new DOMException(message, "DataCloneError");
const DURABLE_STUB = 'Could not serialize object of type "DurableObject". This type does not support serialization.';
const NOT_RPC = "Remote RPC references can only be serialized for RPC.";

/** Whether `value` holds a function or an RpcTarget anywhere (only then is it walked again). */
function holdsStubs(value, seen = new Set()) {
  if (typeof value === "function") return true;
  if (value === null || typeof value !== "object" || seen.has(value) || ArrayBuffer.isView(value)) return false;
  if (value instanceof internals.rpc.RpcTarget) return true;
  seen.add(value);
  if (value instanceof Map) {
    for (const [key, item] of value) if (holdsStubs(key, seen) || holdsStubs(item, seen)) return true;
    return false;
  }
  if (value instanceof Set) {
    for (const item of value) if (holdsStubs(item, seen)) return true;
    return false;
  }
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(value)) if (holdsStubs(value[key], seen)) return true;
  return false;
}

/**
 * The binding a stub names, `{ binding, props }`, for a value kept in storage (`stored`: the
 * compat flag's check applies) or in props; throws workerd's DataCloneError for what cannot be kept.
 */
function describe(v, stored) {
  const { kTarget, kKind } = internals.rpc;
  const kind = v[kKind];
  if (kind === "RpcPromise" || kind === "RpcProperty") throw cloneError(`Could not serialize object of type "${kind}". This type does not support serialization.`);
  if (v[internals.kLoopbackNamespace] === true) throw cloneError("#<LoopbackDurableObjectNamespace> could not be cloned.");
  const target = v[kTarget];
  // A function, or a stub of `new RpcStub()`: V8's own message for a function, workerd's for a stub.
  if (target === undefined) throw cloneError(kind === "RpcStub" ? "#<RpcStub> could not be cloned." : `${Function.prototype.toString.call(v)} could not be cloned.`);
  let named = target;
  if (target.stub !== undefined) {
    // Received over RPC: a binding when the host said so, else an object passed by reference.
    named = target.described;
    if (named === undefined) throw cloneError("#<RpcStub> could not be cloned.");
    if (named.object === undefined && named.home !== true) {
      throw cloneError("This ServiceStub or Durable Object class stands for a binding of another worker; workerbox keeps only a worker's own bindings (its env service bindings and ctx.exports) as data.");
    }
  } else if (target.loaded === true) {
    // A facet's stub is a Durable Object stub; a loaded worker's entrypoint RPC already refuses.
    if (target.binding === "#rpc") throw cloneError(DURABLE_STUB);
    internals.rpc.marshal(v);
  }
  if (named.object !== undefined) throw cloneError(DURABLE_STUB);
  const isClass = named.binding.startsWith("#self-do:");
  if (named.binding.startsWith("#self:") && !Object.hasOwn(named, "props")) throw cloneError("#<LoopbackServiceStub> could not be cloned.");
  if (stored && !internals.feature("allow_irrevocable_stub_storage")) {
    throw cloneError(`${isClass ? "DurableObjectClass" : "ServiceStub"} cannot be serialized in this context.`);
  }
  return named.props === undefined ? { binding: named.binding } : { binding: named.binding, props: named.props };
}

/** `value` with each stub in it replaced by its place (plain objects, arrays, Maps and Sets are copied). */
function encode(value, stored) {
  const { copyValue, WALK_ON, RpcTarget } = internals.rpc;
  const visit = (v) => {
    if (typeof v === "function") return { [BINDING_KEY]: describe(v, stored) };
    if (ArrayBuffer.isView(v)) return v;
    if (v instanceof RpcTarget) throw cloneError(NOT_RPC);
    return WALK_ON;
  };
  return copyValue(value, { visit, nullProto: true });
}

/**
 * The stub a place stands for, made again in this worker (`stored`: read from storage, which
 * takes the compat flag still, as workerd's check on reading).
 */
function stubOf({ binding, props }, stored) {
  if (typeof binding !== "string") throw new TypeError("A kept stub's binding is missing.");
  const isClass = binding.startsWith("#self-do:");
  if (stored && !internals.feature("allow_irrevocable_stub_storage")) {
    throw cloneError(`${isClass ? "DurableObjectClass" : "ServiceStub"} cannot be deserialized in this context.`);
  }
  if (isClass) return internals.durableObjectClass({ binding, props });
  const stub = internals.makeBinding(binding, "service");
  return props === undefined ? stub : stub({ props });
}

/** `value` with each place in it made a stub again (containers copied, so the input is left as it was). */
function decode(value, stored) {
  const { copyValue, WALK_ON } = internals.rpc;
  const visit = (v) => {
    if (typeof v === "function" || ArrayBuffer.isView(v)) return v;
    if (Object.getPrototypeOf(v) === Object.prototype && Object.hasOwn(v, BINDING_KEY)) return stubOf(v[BINDING_KEY], stored);
    return WALK_ON;
  };
  return copyValue(value, { visit, nullProto: true });
}

const isWrapped = (value, key) => value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype && Object.hasOwn(value, key);

/**
 * Props given to ctx.exports.<Name>({ props }), as a binding keeps them (once, when it is made,
 * as workerd copies them then): unchanged without stubs; with service stubs or Durable Object
 * classes, those replaced by what they name, so that the props stay JSON-like data the host
 * carries to the callee (decodeProps() there). Functions, RpcTargets and stubs of objects are
 * refused, as in workerd.
 */
internals.encodeProps = (props) => {
  if (isWrapped(props, PROPS_KEY) || !holdsStubs(props)) return props;
  return { [PROPS_KEY]: encode(props, false) };
};

/** The ctx.props a callee gets for props encodeProps() gave: its stubs made again here. */
internals.decodeProps = (props) => (isWrapped(props, PROPS_KEY) ? decode(props[PROPS_KEY], false) : props);

/**
 * A Durable Object storage value's bytes; service stubs and Durable Object classes in it kept as
 * data. Values without a function in them (nearly all) are serialized at once: only one the
 * serializer refuses is walked (which costs about a seventh of a put of an object of objects).
 */
internals.storageSerialize = (value) => {
  try {
    return ops.serialize(value);
  } catch (error) {
    if (!holdsStubs(value)) throw error;
    return ops.serialize({ [STORED_KEY]: encode(value, true) });
  }
};

/** A stored value read back; the stubs kept in it made again. */
internals.storageDeserialize = (bytes) => {
  const value = ops.deserialize(bytes);
  return isWrapped(value, STORED_KEY) ? decode(value[STORED_KEY], true) : value;
};
