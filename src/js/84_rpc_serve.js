// Workers RPC, the serving side: `internals.dispatchRpc`, which the native side calls for every
// call from the host into this worker (into its entrypoints, its Durable Objects, and the objects
// it handed out by reference), and `invoke`, which finds the member a call names as workerd's
// rules allow (class members of entrypoints and RpcTargets, own properties of plain objects and
// functions, descending into stubs) and calls or reads it. Marshalling and the calling side are
// 84_rpc.js's (shared through `internals.rpc`).

const { marshalAsync, marshal, unmarshal, release, releaseExport, handOver, onAllReleased, exportStates, exportEvents, exported, kTarget, kKind, RpcTarget, WorkerEntrypoint, DurableObject } = internals.rpc;

/** Names that are never reachable over RPC, whatever the receiver. */
const HIDDEN = new Set(["constructor", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"]);
/** Names a call may not name on an entrypoint (or Durable Object), as workerd reserves them. */
const RESERVED_ENTRYPOINT = new Set(["fetch", "connect", "alarm", "webSocketMessage", "webSocketClose", "webSocketError", "dup", "constructor"]);
/** Names a call may not name on an object passed by reference. */
const RESERVED_TARGET = new Set(["dup", "constructor"]);
const STUB_KINDS = new Set(["RpcStub", "ServiceStub", "DurableObjectStub"]);

/**
 * Reads `name` of a receiver as RPC allows it, by `mode`: "class" (an entrypoint, Durable Object
 * or RpcTarget: members of its class, from its prototype chain, never own fields), "own" (a plain
 * object or function: its own properties), "handlers" (an object of handlers: its properties
 * other than Object.prototype's), "stub" (a stub: the remote property, checked over there).
 */
function rpcMember(receiver, name, mode) {
  if (mode === "stub") return receiver[name];
  if (typeof name !== "string" || HIDDEN.has(name)) return undefined;
  if (mode === "own") return Object.hasOwn(receiver, name) ? receiver[name] : undefined;
  if (mode === "class") {
    // Instance fields of an entrypoint or RpcTarget stay private, also one shadowing a class
    // member (workerd fails the lookup); anything else it reads as (through its prototype chain,
    // or a Proxy's traps) is public, unless it is Object.prototype's own member, as in workerd.
    if (Object.hasOwn(receiver, name)) return undefined;
    const value = receiver[name];
    return value === Object.prototype[name] ? undefined : value;
  }
  if (name in Object.prototype) return undefined;
  return receiver[name];
}

const lookupFailure = (name) => new TypeError(`The RPC receiver does not implement the method "${name}".`);

/**
 * How a value reached on a call's path (at `name`) is read further, as workerd decides: a plain
 * object or a function by its own properties, an RpcTarget (or a Proxy whose prototype chain says
 * it is one) by its class, a stub (or a property of one, once inside a stub) remotely. Anything
 * else (a primitive, an instance of another class, a pipelined RpcPromise) has no members.
 */
function modeOf(v, name, inStub) {
  if (v === null || (typeof v !== "object" && typeof v !== "function")) throw lookupFailure(name);
  const kind = v[kKind];
  if (STUB_KINDS.has(kind) || (inStub && kind === "RpcProperty")) return "stub";
  if (kind === "RpcPromise" || kind === "RpcProperty") throw lookupFailure(name);
  if (Object.getPrototypeOf(v) === Object.prototype) return "own";
  if (v instanceof RpcTarget) return "class";
  if (typeof v === "function") return "own";
  throw lookupFailure(name);
}

/** The mode a call's root is read in (see rpcMember), and the names reserved on it. */
function rootMode(root) {
  if (root instanceof WorkerEntrypoint || root instanceof DurableObject) return ["class", RESERVED_ENTRYPOINT];
  if (root instanceof RpcTarget) return ["class", RESERVED_TARGET];
  return [root?.[kKind] !== undefined ? "stub" : "own", RESERVED_TARGET];
}

const HANDLER_ARITY =
  "over RPC because it has the wrong number of arguments. A simple function handler can only be called over RPC if it has exactly the arguments (arg, env, ctx), where only the first argument comes from the client. To support multi-argument RPC functions, use class-based syntax (extending WorkerEntrypoint) instead.";
const HANDLER_ARGS =
  "with the wrong number of arguments. When calling a top-level handler function that is not declared as part of a class, you must always send exactly one argument. In order to support variable numbers of arguments, the server must use class-based syntax (extending WorkerEntrypoint) instead.";

/**
 * A call into a function of an object of handlers (`export default { method(arg, env, ctx) {} }`):
 * one argument from the client, then env and ctx, as workerd calls them.
 */
function callHandler(fn, receiver, name, args, envCtx) {
  if (Math.max(fn.length, 3) !== 3) throw new TypeError(`Cannot call handler function "${name}" ${HANDLER_ARITY}`);
  if (args.length !== 1) throw new TypeError(`Attempted to call RPC function "${name}" ${HANDLER_ARGS}`);
  return Reflect.apply(fn, receiver, [args[0], envCtx.env, envCtx.ctx]);
}

/**
 * Runs a call (`kind` "call") or property read ("get") of `path` on `root`, with workerd's
 * lookup rules and errors. `envCtx`: the root is an object of handlers, whose functions get env
 * and ctx after the caller's one argument.
 */
function invoke(root, path, kind, args, envCtx = undefined) {
  if (path.length === 0) {
    if (typeof root !== "function") throw new TypeError("The RPC receiver is not a function.");
    return Reflect.apply(root, undefined, args);
  }
  let [mode, reserved] = envCtx !== undefined ? ["handlers", RESERVED_ENTRYPOINT] : rootMode(root);
  let receiver = root;
  let inStub = mode === "stub";
  const member = (i) => {
    const name = path[i];
    if (reserved.has(name)) throw new TypeError(`'${name}' is a reserved method and cannot be called over RPC.`);
    const value = rpcMember(receiver, name, mode);
    // A property that reads as undefined fails as a missing method does, as in workerd.
    if (value === undefined) throw i === 0 ? missingMember(receiver, name, true) : lookupFailure(name);
    return value;
  };
  for (let i = 0; i < path.length - 1; i++) {
    const next = member(i);
    mode = modeOf(next, path[i], inStub);
    if (mode === "stub") inStub = true;
    receiver = next;
  }
  const last = path[path.length - 1];
  const value = member(path.length - 1);
  if (kind === "get") return value;
  if (typeof value !== "function") throw new TypeError(`"${path.join(".")}" is not a function.`);
  if (envCtx !== undefined && path.length === 1) return callHandler(value, receiver, last, args, envCtx);
  return Reflect.apply(value, receiver, args);
}
internals.rpc.invoke = invoke;

/**
 * The error for a member `name` the receiver does not offer over RPC. A stand-in main module
 * (workerbox/vitest's runner, `__workerboxMissingMember`) may word it for the receivers it calls
 * into, as Cloudflare's Vitest pool words it for the classes it wraps.
 */
function missingMember(receiver, name, atRoot) {
  const explain = atRoot ? internals.namespace?.__workerboxMissingMember : undefined;
  const error = typeof explain === "function" ? explain(receiver, name) : undefined;
  return error instanceof Error ? error : new TypeError(`The RPC receiver does not implement the method "${name}".`);
}

/** An object of handlers as a call's root: its functions get env and ctx after the argument. */
class HandlerRoot {
  constructor(handlers, envCtx) {
    this.handlers = handlers;
    this.envCtx = envCtx;
  }
}

/** The receiver of a call into entrypoint `name` ("default" or a named export). */
function entrypoint(name, ctx, kind, supplied) {
  const namespace = internals.namespace ?? {};
  const value = namespace[name] ?? supplied;
  if (internals.isEntrypointClass(value)) return new value(ctx, internals.workerEnv);
  // An object of handlers (the default export or a named one) takes fetch() calls, as in workerd.
  if (value !== null && typeof value === "object" && kind === "fetch") {
    return { fetch: (request) => value.fetch(request, internals.workerEnv, ctx) };
  }
  // And connect() calls (a socket to its connect handler), as in workerd.
  if (value !== null && typeof value === "object" && kind === "connect") {
    return { connect: typeof value.connect === "function" ? (socket) => value.connect(socket, internals.workerEnv, ctx) : undefined };
  }
  // Its other functions take RPC calls with env and ctx added (callHandler), as in workerd.
  if (value !== null && typeof value === "object") return new HandlerRoot(value, { env: internals.workerEnv, ctx });
  if (value === undefined) throw new TypeError(`The worker has no entrypoint named "${name}".`);
  throw new TypeError(
    `The receiving Worker does not allow its methods to be called over RPC: its ${name === "default" ? "default export" : `export "${name}"`} is not a class extending WorkerEntrypoint from "cloudflare:workers".`,
  );
}

/** Fetches under way with enable_request_signal, by the caller's token: their signal's controller and event. */
const incomingFetches = new Map();

/**
 * The caller gave up on fetch `token` before its response: its request.signal aborts with
 * workerd's "The client has disconnected", in the async flow of the fetch's own event (whose
 * I/O objects the abort handlers use). Settles once the waitUntil work those handlers started
 * has, or after a second, so that the caller's rejection comes after their effects.
 */
function cancelIncomingFetch(token) {
  const incoming = incomingFetches.get(token);
  if (incoming === undefined) return undefined;
  incomingFetches.delete(token);
  const { controller, event } = incoming;
  const abort = () => controller.abort(new DOMException("The client has disconnected", "AbortError"));
  const started = internals.collectBackground(() => (event === undefined ? abort() : ops.runAsEvent(event, () => internals.enterEventFrame(event, abort))));
  if (started.length === 0) return undefined;
  return new Promise((resolve) => {
    const timer = ops.timerStart(resolve, 1000, false, true);
    Promise.allSettled(started).then(() => {
      ops.timerCancel(timer);
      resolve();
    });
  });
}

/** A `fetch()` through a binding to a named entrypoint: the request arrives as plain parts. */
async function serveFetch(receiver, [method, url, headers, body], token = undefined) {
  if (typeof receiver.fetch !== "function") throw new TypeError("The entrypoint has no fetch() handler.");
  const list = [];
  for (let i = 0; i + 1 < headers.length; i += 2) list.push([headers[i], headers[i + 1]]);
  // enable_request_signal: request.signal aborts when the caller gives up before the response
  // (cancelIncomingFetch); subrequests leave it behind unless request_signal_passthrough.
  let signal;
  if (token !== undefined && internals.feature("enable_request_signal")) {
    const controller = new AbortController();
    signal = controller.signal;
    if (!internals.feature("request_signal_passthrough")) internals.ignoredForSubrequests.add(signal);
    incomingFetches.set(token, { controller, event: internals.flowEvent() });
  }
  // The request is over for request.signal once its response is whole (or it failed).
  const over = () => token !== undefined && incomingFetches.delete(token);
  let response;
  try {
    // As workerd delivers it: an incoming request (redirect "manual", immutable headers).
    response = await receiver.fetch(internals.asIncoming(new Request(url, { method, headers: list, body, signal })));
    if (!(response instanceof Response)) throw new TypeError("The entrypoint's fetch() handler must return a Response.");
    if (response.type === "error") throw new TypeError("Return value from serve handler must not be an error response (like Response.error())");
  } catch (error) {
    over();
    throw error;
  }
  const flat = [];
  for (const [k, v] of internals.headersList(response.headers)) flat.push(k, v);
  if (response.webSocket !== null) {
    over();
    return { status: 101, statusText: response.statusText, headers: flat, body: null, webSocket: internals.webSocketForHost(response.webSocket) };
  }
  // A body of unknown length (a stream the handler goes on feeding) crosses as an RPC stream,
  // read as the caller reads it; the caller cancelling it is the client going away.
  const stream = response.body;
  if (stream !== null && !internals.sizedStreams.has(stream) && !internals.fixedLengths.has(stream)) {
    const follower = internals.rpcStreams.follow(stream, over, () => (token === undefined ? undefined : cancelIncomingFetch(token)));
    return { status: response.status, statusText: response.statusText, headers: flat, body: follower };
  }
  try {
    const bytes = stream === null ? null : new Uint8Array(await response.arrayBuffer());
    return { status: response.status, statusText: response.statusText, headers: flat, body: bytes };
  } finally {
    over();
  }
}

/** Whether `call` goes into an object of handlers whose ctx workerd reuses (the flag above). */
function reusesCtx(call) {
  if (!internals.feature("nonclass_entrypoint_reuses_ctx_across_invocations") || call.durableObject !== undefined || call.stub !== undefined) return false;
  const value = internals.namespace?.[call.entrypoint ?? "default"];
  return value !== null && typeof value === "object";
}

const DURABLE_HOST_CALLS = new Set(["alarm", "run", "evict", "ids", "alarms", "checkpoint"]);

/** Called by the native side for every RPC call into this worker. Never throws. */
internals.dispatchRpc = function dispatchRpc(id, callJson, argsBytes) {
  const { ctx, work } = internals.eventContext(id);
  let leave = null;
  /** Stubs that came in as arguments: released when the call is over, unless dup()ed. */
  const received = [];
  const call = JSON.parse(callJson);
  /** The Durable Object state the call runs in (into it, or into an object it handed out): its abort fails the call. */
  let durable;
  const run = async () => {
    if (call.kind === "dispose") return releaseExport(call.stub);
    // A WebSocket message or close from the host.
    if (call.kind === "ws") return internals.webSocketEvent(call, argsBytes);
    // The host gave up on a response body (lib/bodies.js).
    if (call.kind === "body") return internals.cancelResponseBody(call.stream, call.reason);
    // The caller of a fetch gave up on it.
    if (call.kind === "cancel") return cancelIncomingFetch(call.token);
    const args = unmarshal(argsBytes, call.stubs ?? [], received);
    // A binding's props are the callee's ctx.props; with nonclass_entrypoint_reuses_ctx_across_invocations
    // workerd gives an object of handlers (not a class) one ctx made without them.
    // Service stubs and Durable Object classes in them were kept as data (85_stub_storage.js).
    if (call.props !== undefined && !reusesCtx(call)) internals.setContextProps(ctx, internals.decodeProps(call.props));
    // Props a loader gave a loaded worker's entrypoint (lib/worker-loader.js): an RPC value, stubs and all.
    if (call.propsValue !== undefined) internals.setContextProps(ctx, unmarshal(Uint8Array.fromBase64(call.propsValue.bytes), call.propsValue.stubs));
    // The host's own calls on Durable Objects (alarms, runInDurableObject, eviction, listing).
    if (call.durableObject !== undefined && DURABLE_HOST_CALLS.has(call.kind)) return internals.durableHostCall(call, args);
    let root;
    if (call.durableObject !== undefined) {
      const entered = await internals.durableObjectFor(call.durableObject, call.session);
      durable = entered.state;
      leave = entered.release;
      root = entered.instance;
      if (call.kind !== "fetch" && !(root instanceof DurableObject)) {
        throw new TypeError(
          'The receiving Durable Object does not support RPC, because its class was not declared with `extends DurableObject`. In order to enable RPC, make sure your class extends the special class `DurableObject`, which can be imported from the module "cloudflare:workers".',
        );
      }
    } else if (call.stub !== undefined) {
      if (!exported.has(call.stub)) throw new Error("The RPC stub was disposed: the object it pointed to is gone.");
      root = exported.get(call.stub);
      durable = exportStates.get(call.stub);
      // Aborted already: the reason (the caller's stub is cut off with it, so its later calls get
      // workerd's CONTEXT_GONE there, while those already sent get the reason, as in workerd).
      if (durable?._aborted !== undefined) throw durable._aborted;
    } else {
      const name = call.entrypoint ?? "default";
      // Entrypoint classes a stand-in main module (workerbox/vitest's runner) supplies on demand.
      const supply = internals.namespace?.__workerboxEntrypoint;
      const supplied = internals.namespace?.[name] === undefined && typeof supply === "function" ? await supply(name) : undefined;
      root = entrypoint(name, ctx, call.kind, supplied);
    }
    const answer = () => {
      if (call.kind === "fetch") return serveFetch(root, args, call.token);
      if (call.kind === "connect") return internals.rpcStreams.serveConnect(root, args);
      // (Tested by class: an entrypoint instance may answer any property, as workerbox/vitest's runner does.)
      if (root instanceof HandlerRoot) return invoke(root.handlers, call.path, call.kind, args, root.envCtx);
      return invoke(root, call.path, call.kind, args);
    };
    return durable === undefined ? answer() : durable._abortable(answer());
  };
  // Received stubs go before the answer does, so the caller sees its objects let go (their
  // disposers run) by the time its call resolves, as in workerd.
  // The answer names them (`released`, `releasing`: 84_rpc.js release()): the host lets them go
  // before the caller sees it.
  let passedOn = new Set();
  const releaseReceived = (into = undefined) => {
    for (const stub of received.splice(0)) {
      const target = stub[kTarget];
      if (target?.stub !== undefined && !passedOn.has(target)) release(target, into);
    }
  };
  /**
   * The host stubs the call lets go of before its answer is seen (84_rpc.js release()): those it
   * received, and others it let go of meanwhile for that to be so (84_rpc_signal.js).
   */
  const record = { released: [], releasing: [], answered: false };
  const lists = () => {
    record.answered = true;
    return { released: record.released, releasing: record.releasing };
  };
  // The call runs, and answers, in its flow (inCallFlow).
  const serve = () => run()
    .then(async (result) => {
      const prepared = await marshalAsync(result);
      const { bytes, stubs, passed } = prepared;
      // A received stub handed back itself in the result now belongs to the caller (a dup() of
      // it is another stub: the received one still goes).
      passedOn = new Set(passed);
      handOver(prepared);
      // A result holding objects of this call (RpcTargets, functions) keeps the call's context
      // open until the caller has let them all go; then the result's own [Symbol.dispose]() runs
      // and the context ends (its other stubs let go), as workerd tears it down.
      const held = stubs.filter((entry) => entry.local !== undefined).map((entry) => entry.local);
      if (held.length > 0) {
        const letGo = internals.holdEvent(id);
        const dispose = result !== null && typeof result === "object" ? result[Symbol.dispose] : undefined;
        onAllReleased(held, () => {
          try {
            if (typeof dispose === "function") Reflect.apply(dispose, result, []);
          } catch (error) {
            internals.reportError(error);
          } finally {
            letGo();
          }
        });
      }
      releaseReceived(record);
      ops.respondRpc(id, bytes, JSON.stringify({ stubs, ...lists() }));
    })
    .catch((error) => {
      const thrown = call.errorValue === true ? thrownValue(error) : null;
      if (thrown !== null) {
        releaseReceived(record);
        // A call on an object an aborted Durable Object handed out: its stub is cut off (84_rpc.js send).
        const contextGone = call.stub !== undefined && durable?._aborted !== undefined;
        return ops.respondRpc(id, thrown.bytes, JSON.stringify({ stubs: thrown.stubs, thrown: true, ...lists(), ...(contextGone ? { contextGone } : {}) }));
      }
      releaseReceived();
      // No answer to carry them: the host lets them go now.
      for (const stub of lists().released) internals.hostCall("#rpc", "dispose", { stub }).catch(() => {});
      const [name, message, stack] = internals.errorParts(error);
      ops.respondRpc(id, undefined, undefined, name, message, stack);
    })
    .finally(() => {
      leave?.();
      releaseReceived();
      work.responded(false);
    });
  inCallFlow(record, originOf(call, id), serve);
};

/** The async flow's key for the RPC call it serves (its record: internals.rpc.currentCall()). */
const kCall = Symbol("workerbox.rpc.call");

/**
 * The release lists (`{ released, releasing }`) of the answer of the RPC call whose async flow
 * is running, until it is answered; else undefined.
 */
internals.rpc.currentCall = () => {
  const frame = ops.continuationGet();
  const record = frame instanceof Map ? frame.get(kCall) : undefined;
  return record === undefined || record.answered ? undefined : record;
};

/**
 * The request a call on an object this worker handed out runs as: the one whose flow exported
 * the object, while it still runs, as workerd runs such calls in the I/O context that made the
 * object (so its I/O objects, AsyncLocalStorage snapshots and timers are that request's). A
 * Durable Object's objects, and objects of requests that are over, run as the call itself.
 */
function originOf(call, id) {
  if (call.stub === undefined || (call.kind !== "call" && call.kind !== "get" && call.kind !== "fetch")) return undefined;
  const origin = exportEvents.get(call.stub);
  if (origin === undefined || origin === id || internals.isDurableEvent?.(origin) || !internals.eventRunning(origin)) return undefined;
  return origin;
}

/**
 * Runs `fn` in the flow of call `record`, as request `origin` when given (originOf). Only
 * signal.skipReleaseForTest() (under `experimental`) reads the record from the flow, so without
 * that flag no frame is made for it.
 */
function inCallFlow(record, origin, fn) {
  const serve = origin === undefined ? fn : () => ops.runAsEvent(origin, () => internals.enterEventFrame(origin, fn));
  if (!internals.feature("experimental")) return serve();
  const previous = ops.continuationGet();
  const frame = new Map(previous instanceof Map ? previous : undefined);
  frame.set(kCall, record);
  ops.continuationSet(frame);
  try {
    return serve();
  } finally {
    ops.continuationSet(previous);
  }
}

/**
 * An error a call threw, as the value the caller makes its error from (84_rpc.js remoteError):
 * name and message, and under enhanced_error_serialization its other own properties, as workerd
 * sends them. Null when it cannot be sent so (not an Error, or a property that cannot be cloned):
 * the error then goes back as name, message and stack.
 */
function thrownValue(error) {
  if (!(error instanceof Error)) return null;
  const props = {};
  if (internals.feature("enhanced_error_serialization")) {
    for (const key of Object.keys(error)) if (key !== "stack" && key !== "message" && key !== "name") props[key] = error[key];
  }
  try {
    const { bytes, stubs } = marshal({ name: String(error.name), message: String(error.message), props });
    return { bytes, stubs };
  } catch {
    return null;
  }
}
