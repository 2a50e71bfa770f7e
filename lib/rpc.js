"use strict";
// Workers RPC in the host: routes a call made through a service binding's stub to the worker
// (and entrypoint) the binding names, and a call on a stub (an RpcTarget or function passed by
// reference) back to the worker that holds the object. Owns the host-wide table of live stubs:
// a host id for each, naming the worker that holds the object and that worker's own id for it.
// Values stay V8-serialized bytes end to end; only the lists of stubs are rewritten here.
// A service bound to a plain Node object (not a worker) is called here directly, with Node's
// own V8 (de)serializer, and so is an object the host itself hands a worker by reference (the
// two sides of an inbound TCP connection: connectInto).

// node:v8 is loaded on first use (loading it with the package would slow every require).
let v8;
const nodeV8 = () => (v8 ??= require("node:v8"));
// Node's v8.serialize() writes typed arrays and Buffers as Node-only host objects; the plain
// Serializer writes them as V8 itself does, which is what a worker reads.
function serialize(value) {
  const serializer = new (nodeV8().Serializer)();
  serializer.writeHeader();
  serializer.writeValue(value);
  return serializer.releaseBuffer();
}

function deserialize(bytes) {
  const deserializer = new (nodeV8().Deserializer)(bytes);
  deserializer.readHeader();
  return deserializer.readValue();
}

/**
 * Host stub id → `{ worker, local }` (the worker holding the object and its id there), or
 * `{ worker, binding, object, name }` (a stub for `worker`'s binding `binding`: a service, or a
 * Durable Object of a namespace, passed over RPC), or `{ worker, host }` (an object of the host
 * handed to `worker`). `holders`: the workers the id was handed to, the only ones whose calls,
 * disposes and passings-on of it are taken (mayUse).
 */
const stubs = new Map();
let nextStub = 1;
/** The stub ids each worker holds, so that they go when it is disposed. */
const byWorker = new WeakMap();
/** worker → (its id for an object → how many host ids stand for it): it is let go at zero. */
const localHolds = new WeakMap();

let access = null;

/** lib/api.js hands over how to reach a worker's native handle and rebuild its errors. */
function setWorkerAccess(nativeOf, toError) {
  access = { nativeOf, toError };
}

/** Each worker's binding dispatcher (lib/bindings.js), for calls through its bindings' stubs. */
const dispatchers = new WeakMap();

function setDispatcher(worker, dispatcher) {
  dispatchers.set(worker, dispatcher);
}

function register(worker, target) {
  const id = nextStub++;
  stubs.set(id, { worker, ...target, holders: new WeakSet() });
  let held = byWorker.get(worker);
  if (held === undefined) byWorker.set(worker, (held = new Set()));
  held.add(id);
  if (target.local !== undefined) {
    let counts = localHolds.get(worker);
    if (counts === undefined) localHolds.set(worker, (counts = new Map()));
    counts.set(target.local, (counts.get(target.local) ?? 0) + 1);
  }
  return id;
}

/**
 * Whether worker `caller` may act on host stub `entry` (call it, read it, dispose or forget it, pass
 * it on): an object of the host only the worker it was handed to, any other stub the workers its
 * id was handed to (handTo). Node (`caller` undefined) may act on any. Another worker's id,
 * guessed or forged, is taken as an id that does not exist.
 */
function mayUse(entry, caller) {
  if (caller === undefined) return true;
  return entry.host !== undefined ? entry.worker === caller : entry.holders.has(caller);
}

/** The stub of host id `id` if `caller` may act on it (mayUse), else undefined. */
function usable(id, caller) {
  const entry = stubs.get(id);
  return entry !== undefined && mayUse(entry, caller) ? entry : undefined;
}

/** Host ids `ids` (numbers, or `{ stub }` as shortenHome/describeBindings name them) are handed to `worker`. */
function handTo(worker, ids) {
  if (worker === undefined || !Array.isArray(ids)) return;
  for (const id of ids) stubs.get(typeof id === "number" ? id : id?.stub)?.holders.add(worker);
}

/**
 * A binding call's answer to `worker` (lib/bindings.js createDispatcher): the host ids of the
 * stubs in it (callWorker() writes their list first) are the worker's to use from then on.
 */
function handedOut(answer, worker) {
  const json = answer?.json;
  if (worker !== undefined && typeof json === "string" && json.startsWith('{"stubs":[') && json[10] !== "]") handTo(worker, JSON.parse(json).stubs);
  return answer;
}

/** Who waits for host ids to go (whenReleased): id → resolvers. */
const releaseWaiters = new Map();

function releasedId(id) {
  const waiting = releaseWaiters.get(id);
  if (waiting === undefined) return;
  releaseWaiters.delete(id);
  for (const resolve of waiting) resolve();
}

/** Resolves once every host id of `ids` has been let go (disposed, forgotten, its worker gone). */
function whenReleased(ids) {
  const held = ids.filter((id) => stubs.has(id));
  return Promise.all(
    held.map(
      (id) =>
        new Promise((resolve) => {
          if (!releaseWaiters.has(id)) releaseWaiters.set(id, []);
          releaseWaiters.get(id).push(resolve);
        }),
    ),
  ).then(() => {});
}

/** Forgets host id `id`; true when it was the last for its worker's object. */
function unregister(id, entry) {
  stubs.delete(id);
  releasedId(id);
  byWorker.get(entry.worker)?.delete(id);
  if (entry.local === undefined) return false;
  const counts = localHolds.get(entry.worker);
  const left = (counts?.get(entry.local) ?? 1) - 1;
  if (left > 0) {
    counts.set(entry.local, left);
    return false;
  }
  counts?.delete(entry.local);
  return true;
}

/** Forgets the stubs a disposed worker held: calls on them fail with a clear error. */
function workerDisposed(worker) {
  for (const id of byWorker.get(worker) ?? []) {
    const entry = stubs.get(id);
    stubs.delete(id);
    releasedId(id);
    if (entry?.host !== undefined) disposeHost(entry.host);
  }
  byWorker.delete(worker);
  localHolds.delete(worker);
}

/**
 * The caller's stub list (`{ local }` it exports, `{ remote }` it passes on, `{ binding }` a
 * stub of one of its bindings) as host ids. With `dup` (a call's params under
 * rpc_params_dup_stubs, from 2026-01-20) a stub passed on gets a host id of its own, so the
 * receiver disposing it leaves the caller's usable; otherwise it is handed over (the receiver
 * disposing it when the call ends disposes the caller's too, as workerd's transfer did).
 * An entry marked `dup` (a result's stub its sender still holds otherwise: 84_rpc.js handOver)
 * gets a host id of its own too.
 */
function hostIds(caller, list, dup = false) {
  return (list ?? []).map((entry) => {
    if (entry.remote !== undefined) {
      // Another worker's id (not handed to the caller) is as one already gone.
      const target = usable(entry.remote, caller);
      if (target === undefined) throw new Error("An RPC stub passed in this call was already disposed.");
      if (!dup && entry.dup !== true) return entry.remote;
      const { worker, ...rest } = target;
      return register(worker, rest);
    }
    if (caller === undefined) throw new Error("RPC stubs can only be passed by a worker.");
    if (entry.binding !== undefined) return register(caller, { binding: entry.binding, object: entry.object, name: entry.name, props: entry.props });
    return register(caller, { local: entry.local });
  });
}

/**
 * A stub list for `receiver` with each stub of a binding (a service stub, a Durable Object class
 * or stub) named: `{ stub, binding: { binding, props, object, home } }`, `home` when it is one
 * of the receiver's own bindings, which the receiver may then keep as data (in Durable Object
 * storage, in props: src/js/85_stub_storage.js). Other ids stay as they are.
 */
function describeBindings(ids, receiver) {
  if (!Array.isArray(ids)) return ids;
  let out = ids;
  ids.forEach((id, i) => {
    const entry = typeof id === "number" ? stubs.get(id) : undefined;
    if (typeof entry?.binding !== "string") return;
    if (out === ids) out = [...ids];
    out[i] = { stub: id, binding: { binding: entry.binding, props: entry.props, object: entry.object, home: entry.worker === receiver } };
  });
  return out;
}

/** A call's answer for worker `caller`, the stubs of bindings in its result named (describeBindings). */
function describeAnswer(answer, caller) {
  // callWorker() writes the stub list first: an answer without stubs is left unparsed.
  if (caller === undefined || typeof answer?.json !== "string" || answer.json.startsWith('{"stubs":[]')) return answer;
  const parsed = JSON.parse(answer.json);
  const described = describeBindings(parsed.stubs, caller);
  return described === parsed.stubs ? answer : { ...answer, json: JSON.stringify({ ...parsed, stubs: described }) };
}

/** Runs `call` in `worker`; answers with the result bytes and the host ids of its stubs. */
async function callWorker(worker, call, bytes) {
  // The stubs it receives (and those of its entrypoint's props) are its to use from now on.
  handTo(worker, call.stubs);
  handTo(worker, call.propsValue?.stubs);
  handTo(worker, call.durableObject?.propsValue?.stubs);
  // The stubs of bindings it receives are named (describeBindings).
  if (Array.isArray(call.stubs) && call.stubs.length > 0) call = { ...call, stubs: describeBindings(call.stubs, worker) };
  const handle = access.nativeOf(worker);
  if (handle === undefined || handle.disposed) {
    throw Object.assign(new Error("The worker that RPC call goes to has been disposed."), { code: "ERR_WORKER_DISPOSED" });
  }
  const outcome = await handle.rpc(JSON.stringify(call), bytes ?? Buffer.alloc(0));
  // No result at all: the worker could not run the call (a NativeError).
  if (outcome.resultJson === undefined) return errorAnswer(access.toError(outcome));
  if (outcome.error) return errorAnswer(outcome.error);
  const { stubs: locals, thrown, released, releasing, contextGone } = JSON.parse(outcome.resultJson);
  // The result's stubs first: one that copies a stub the call let go (a dup() of an argument)
  // still finds it.
  const ids = hostIds(worker, locals);
  // The stubs the call received and let go when it ended: their owners learn it before the
  // answer goes back, so the caller's objects are disposed by the time its call resolves, as in
  // workerd.
  for (const id of released ?? []) await callStub("dispose", { stub: id }, null, worker).catch(() => {});
  // Those it let go while calls of its own on them were on their way come through the calls'
  // channel, after those calls (src/js/84_rpc.js release()): the answer waits for them.
  for (const id of releasing ?? []) await disposedThroughCalls(id);
  // thrown: the call threw, and the result is the error as a value (asked for by errorValue).
  // contextGone: the call went to an object of an aborted Durable Object (src/js/84_rpc.js send).
  return { json: JSON.stringify({ stubs: ids, ...(thrown === true ? { thrown } : {}), ...(contextGone === true ? { contextGone } : {}) }), bytes: outcome.result };
}

/** Host id → a dispose of it under way (callStub), until it is done. */
const disposing = new Map();

/** Resolves once host id `id` has been disposed (a dispose that may not have arrived yet). */
function disposedThroughCalls(id) {
  return whenReleased([id]).then(() => disposing.get(id));
}

/**
 * A call's answer for `caller`: a stub in its result that stands for one of the caller's own
 * objects, held by nothing else, is named with the caller's id for it (`{ stub, own }`), so that
 * the caller may use and dispose it locally (it then asks the host to `forget` the stub), as
 * Cap'n Proto shortens a capability that points back to its holder.
 */
function shortenHome(answer, caller) {
  if (caller === undefined || typeof answer.json !== "string") return answer;
  const parsed = JSON.parse(answer.json);
  if (!Array.isArray(parsed.stubs) || parsed.stubs.length === 0) return answer;
  const home = new Map();
  const shortened = parsed.stubs.map((id) => {
    const entry = stubs.get(id);
    if (entry === undefined || entry.worker !== caller || entry.local === undefined) return id;
    if ((localHolds.get(caller)?.get(entry.local) ?? 0) !== 1 || home.has(id)) return id;
    home.set(id, { stub: id, own: entry.local });
    return home.get(id);
  });
  // The stubs of bindings named too (describeAnswer's work, on the list parsed here).
  const described = describeBindings(shortened, caller);
  return home.size === 0 && described === shortened ? answer : { ...answer, json: JSON.stringify({ ...parsed, stubs: described }) };
}

/** Streaming tails' tracer (lib/tail/stream.js registers it as it loads: the tail folder uses this one, not the reverse). */
let tracer = null;
const traceEntrypointsWith = (given) => void (tracer = given);

/**
 * callWorker() for a call into one of a worker's entrypoints (a service binding's RPC call or
 * fetch): traced when the worker has streaming tails.
 */
function callEntrypoint(worker, call, bytes) {
  return tracer?.isTraced(worker) ? tracer.callWorker(worker, call, bytes, callWorker) : callWorker(worker, call, bytes);
}

const isWorker = (handler) => handler !== null && typeof handler === "object" && typeof handler.dispatch === "function";

/**
 * A method call through a service binding (`env.SVC.method(…)`): into the bound worker's
 * entrypoint, or on the bound Node object. `caller` is the worker that made the call.
 */
async function callService(handler, entrypoint, caller, args, bytes) {
  if (isWorker(handler)) {
    const call = { entrypoint: entrypoint ?? "default", path: args.path, kind: args.kind, stubs: hostIds(caller, args.stubs, args.dupStubs), ...(args.props !== undefined ? { props: args.props } : {}), ...errorValue(args) };
    return shortenHome(await callEntrypoint(handler, call, bytes), caller);
  }
  if (typeof handler === "function" || handler === null || typeof handler !== "object") {
    return failure(new TypeError("This service binding is a host function: it only has fetch(), no RPC methods."));
  }
  if ((args.stubs ?? []).length > 0) return failure(new TypeError("A service bound to a Node object cannot receive functions or RpcTargets."));
  try {
    let receiver = handler;
    for (const name of args.path.slice(0, -1)) receiver = await receiver?.[name];
    const last = args.path[args.path.length - 1];
    const member = receiver?.[last];
    let result;
    if (args.kind === "get") result = await member;
    else if (typeof member !== "function") throw new TypeError(`The RPC receiver does not implement the method "${last}".`);
    else result = await member.apply(receiver, deserialize(bytes));
    return { json: JSON.stringify({ stubs: [] }), bytes: serialize(result) };
  } catch (error) {
    return failure(error);
  }
}

/**
 * `fetch()` into a worker's receiver other than its default handler (`base`: a named
 * `entrypoint`, or a `durableObject`), with a binding call's request `args` and body `bytes`.
 * Answers as a service binding's fetch does: the response head as JSON and its body.
 */
async function fetchInto(worker, base, args, bytes, caller = undefined) {
  const parts = [args.method, args.url, args.headers, bytes ? new Uint8Array(bytes) : null];
  // token: names this fetch for cancelFetch() (its caller giving up).
  const call = { ...base, path: [], kind: "fetch", stubs: [], ...(typeof args.token === "string" ? { token: args.token } : {}) };
  const answer = await (base.entrypoint !== undefined ? callEntrypoint : callWorker)(worker, call, serialize(parts));
  const parsed = JSON.parse(answer.json);
  if (parsed.error) throw remoteError(parsed.error);
  let response = deserialize(answer.bytes);
  if (response !== null && typeof response === "object" && Object.hasOwn(response, SPECIAL_KEY)) response = response[SPECIAL_KEY];
  const head = { status: response.status, statusText: response.statusText, headers: response.headers };
  if (response.webSocket !== undefined) {
    // A WebSocket answer: a worker caller gets a socket joined to it, Node a HostWebSocket.
    const websocket = require("./websocket.js");
    if (caller === undefined) return { json: JSON.stringify(head), bytes: null, webSocket: websocket.forNode(worker, response.webSocket) };
    head.webSocket = websocket.relay(caller, worker, response.webSocket);
  }
  // A body of unknown length comes as an RPC stream (src/js/84_rpc_serve.js followBody): a worker
  // caller reads it through the stub itself (bodyStub), Node gets it read whole here.
  const place = response.body?.[STREAM_KEY];
  if (Array.isArray(place)) {
    const id = parsed.stubs[place[1][STUB_KEY]];
    handTo(caller, [id]);
    if (caller !== undefined) return { json: JSON.stringify({ ...head, bodyStub: id }), bytes: null };
    return { json: JSON.stringify(head), bytes: await readStubStream(id) };
  }
  return { json: JSON.stringify(head), bytes: response.body ? Buffer.from(response.body) : null };
}

/** Where src/js/84_rpc.js marks a value with places, and a stream's and a stub's place in it. */
const SPECIAL_KEY = "\u0000workerbox.rpc.special";
const STREAM_KEY = "\u0000workerbox.rpc.stream";
const STUB_KEY = "\u0000workerbox.rpc.stub";

/** Reads a worker's RPC stream (a StreamSource's stub, host id `id`) to its end, for Node; lets it go after. */
async function readStubStream(id) {
  const chunks = [];
  try {
    for (;;) {
      const out = await callStub("call", { stub: id, path: ["read"], kind: "call", stubs: [] }, serialize([]), undefined);
      const answer = JSON.parse(out.json);
      if (answer.error) throw remoteError(answer.error);
      let result = deserialize(out.bytes);
      if (result !== null && typeof result === "object" && Object.hasOwn(result, SPECIAL_KEY)) result = result[SPECIAL_KEY];
      if (result?.done !== false) break;
      chunks.push(Buffer.from(result.value.buffer, result.value.byteOffset, result.value.byteLength));
    }
  } finally {
    await callStub("dispose", { stub: id }, null, undefined).catch(() => {});
  }
  return Buffer.concat(chunks);
}

/**
 * The caller of fetch `token` into `worker` (fetchInto) gave up on it: the worker aborts that
 * request's signal (enable_request_signal). Resolves once it has run its abort handlers.
 */
async function cancelFetch(worker, token) {
  const handle = access.nativeOf(worker);
  if (typeof token !== "string" || handle === undefined || handle.disposed) return { json: "null" };
  await handle.rpc(JSON.stringify({ kind: "cancel", token }), Buffer.alloc(0)).catch(() => {});
  return { json: "null" };
}

/** A call, fetch() or dispose on a stub (`#rpc`), from worker `caller`. */
async function callStub(method, args, bytes, caller) {
  // A call on a Durable Object facet (ctx.facets, lib/facets.js).
  if (method === "rpc" && args.facet !== undefined) return require("./facets.js").callFacet(args, bytes, caller, (id) => usable(id, caller));
  // A worker reaches only the stubs handed to it: another's id is answered as one that is gone.
  const entry = usable(args.stub, caller);
  // A dispose is kept while it runs, for an answer waiting for it (disposedThroughCalls).
  if (method === "dispose" && entry !== undefined && !disposing.has(args.stub)) {
    let done;
    disposing.set(args.stub, new Promise((resolve) => (done = resolve)));
    return callStub(method, args, bytes, caller).finally(() => {
      disposing.delete(args.stub);
      done();
    });
  }
  // The caller took a stub of its own object home (84_rpc.js stubFor): the host forgets it
  // without disposing the object, which the caller now holds itself.
  if (method === "forget") {
    if (entry !== undefined) unregister(args.stub, entry);
    return { json: "null" };
  }
  if (method === "dispose") {
    if (entry === undefined) return { json: "null" };
    const last = unregister(args.stub, entry);
    if (entry.host !== undefined) disposeHost(entry.host);
    const handle = access.nativeOf(entry.worker);
    if (last && handle !== undefined && !handle.disposed) {
      await handle.rpc(JSON.stringify({ kind: "dispose", stub: entry.local }), Buffer.alloc(0)).catch(() => {});
    }
    return { json: "null" };
  }
  if (method !== "call" && method !== "fetch") throw new TypeError(`unknown RPC operation "${method}"`);
  if (entry === undefined) {
    if (method === "fetch") throw new Error("The RPC stub was disposed, or the worker holding its object is gone.");
    return failure(new Error("The RPC stub was disposed, or the worker holding its object is gone."));
  }
  const { stub, ...rest } = args;
  // An object of the host (only the worker it was handed to gets this far: usable()).
  if (entry.host !== undefined) return callHost(entry.host, method, rest, bytes);
  if (entry.binding !== undefined) return callThroughBinding(entry, method, rest, bytes, caller);
  if (method === "fetch") return fetchInto(entry.worker, { stub: entry.local }, rest, bytes, caller);
  return shortenHome(await callWorker(entry.worker, { stub: entry.local, path: args.path, kind: args.kind, stubs: hostIds(caller, args.stubs, args.dupStubs), ...errorValue(args) }, bytes), caller);
}

/**
 * A call on a stub of a binding passed over RPC: made as its owner would make it through the
 * binding (the stubs in it already turned into host ids, so they mean the same to the owner).
 */
async function callThroughBinding(entry, method, args, bytes, caller) {
  const dispatcher = dispatchers.get(entry.worker);
  const handle = access.nativeOf(entry.worker);
  if (dispatcher === undefined || handle === undefined || handle.disposed) {
    const gone = new Error("The worker whose binding this RPC stub stands for has been disposed.");
    if (method === "fetch") throw gone;
    return failure(gone);
  }
  // ctx.exports.<Entrypoint>({ props }) passed on: its calls carry those props still.
  const forwarded = { ...args, object: entry.object, name: entry.name, ...(entry.props !== undefined ? { props: entry.props } : {}) };
  if (method === "call") {
    const ids = hostIds(caller, args.stubs);
    // The owner makes the call for the caller: the stubs in it are the owner's to pass on.
    handTo(entry.worker, ids);
    forwarded.stubs = ids.map((id) => ({ remote: id }));
  }
  const out = await dispatcher(entry.binding, method === "call" ? "rpc" : "fetch", JSON.stringify(forwarded), bytes);
  if (out.errorName !== undefined) {
    if (method === "fetch") throw Object.assign(new Error(out.errorMessage), { name: out.errorName });
    return errorAnswer({ name: out.errorName, message: out.errorMessage });
  }
  return { json: out.json, bytes: out.bytes };
}

/** An error thrown in a worker, as Node's own error of that kind, with the worker's stack. */
function remoteError({ name, message, stack }) {
  const Kind = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError }[name] ?? Error;
  const error = new Kind(message);
  if (Kind === Error && name !== "Error") Object.defineProperty(error, "name", { value: name, writable: true, configurable: true, enumerable: false });
  if (typeof stack === "string" && stack !== "") error.stack = stack;
  return error;
}

/** Runs a host object's disposer (its worker let go of it), once; what it throws is dropped. */
function disposeHost(object) {
  const dispose = object[Symbol.dispose];
  if (typeof dispose !== "function") return;
  try {
    Reflect.apply(dispose, object, []);
  } catch {
    // The worker no longer waits on it.
  }
}

/**
 * A worker's call on an object the host handed it by reference (`{ host }`): one of its own
 * methods, with the worker's arguments; what it returns (or throws) is the call's answer.
 */
async function callHost(object, method, args, bytes) {
  const name = args.path?.length === 1 ? args.path[0] : undefined;
  if (method !== "call" || args.kind !== "call" || typeof name !== "string" || typeof object[name] !== "function" || !Object.hasOwn(object, name)) {
    const error = new TypeError(`The RPC receiver does not implement the method "${args.path?.join(".")}".`);
    if (method === "fetch") throw error;
    return failure(error);
  }
  if ((args.stubs ?? []).length > 0) return failure(new TypeError("An object of the host cannot receive functions or RpcTargets."));
  try {
    let params = bytes && bytes.length > 0 ? deserialize(bytes) : [];
    if (params !== null && typeof params === "object" && Object.hasOwn(params, SPECIAL_KEY)) params = params[SPECIAL_KEY];
    const result = await Reflect.apply(object[name], object, Array.isArray(params) ? params : []);
    return { json: JSON.stringify({ stubs: [] }), bytes: serialize(result) };
  } catch (error) {
    return failure(error);
  }
}

/**
 * A `connect` event into `worker`'s entrypoint (workerd's connect handler) for a connection the
 * host holds: the handler's socket reads by calling `source.read()` (→ `{ done, value }`) and
 * `source.cancel()`, and writes by calling `sink.write(bytes)`, `sink.close()`, `sink.abort()`;
 * each object's `[Symbol.dispose]()` runs when the worker lets go of it. Resolves once the
 * handler has returned; rejects with its error.
 */
async function connectInto(worker, { entrypoint = "default", props, address = "" } = {}, source, sink) {
  const ids = [register(worker, { host: source }), register(worker, { host: sink })];
  const args = [{ [STREAM_KEY]: ["readable", { [STUB_KEY]: 0 }] }, { [STREAM_KEY]: ["writable", { [STUB_KEY]: 1 }] }, address, { inbound: true }];
  const call = { entrypoint, path: [], kind: "connect", stubs: ids, ...(props !== undefined ? { props } : {}) };
  let answer;
  try {
    answer = await callEntrypoint(worker, call, serialize({ [SPECIAL_KEY]: args }));
  } catch (error) {
    // The worker never took the streams (disposed): they are let go here.
    for (const id of ids) {
      const entry = stubs.get(id);
      if (entry === undefined) continue;
      unregister(id, entry);
      disposeHost(entry.host);
    }
    throw error;
  }
  const parsed = JSON.parse(answer.json);
  if (parsed.error) throw remoteError(parsed.error);
}

/**
 * A stub used from Node: property reads build a path, a call sends it with
 * `call(path, "call", args)`, and `await stub.prop` reads it with `call(path, "get", [])`. The
 * members of `local` (say, `fetch` and `id`) are answered by `local` itself.
 */
function nodeStub(call, local = {}, path = []) {
  return new Proxy(function rpcStub() {}, {
    get(_, name) {
      if (path.length === 0 && Object.hasOwn(local, name)) return local[name];
      if (name === "then") return path.length === 0 ? undefined : (ok, fail) => call(path, "get", []).then(ok, fail);
      if (typeof name === "symbol") return undefined;
      return nodeStub(call, local, [...path, name]);
    },
    apply(_, __, args) {
      return call(path, "call", args);
    },
  });
}

/** A worker caller's `errorValue` (an error thrown comes back as a value: src/js/84_rpc_serve.js), passed on. */
const errorValue = (args) => (args.errorValue === true ? { errorValue: true } : {});

/** An answer that makes the caller's promise reject with this error's name, message and stack. */
const errorAnswer = ({ name, message, stack }) => ({ json: JSON.stringify({ error: { name, message, stack } }) });

const failure = (error) => (error instanceof Error ? errorAnswer(error) : errorAnswer({ name: "Error", message: String(error) }));

module.exports = { setWorkerAccess, setDispatcher, traceEntrypointsWith, callService, callStub, callWorker, hostIds, fetchInto, cancelFetch, connectInto, workerDisposed, isWorker, serialize, deserialize, remoteError, nodeStub };
// A traced JS RPC call's outcome waits for its result's stubs to go (lib/tail/stream.js).
module.exports.whenReleased = whenReleased;
// Durable Object calls name the stubs of bindings in their results too (lib/durable.js).
module.exports.describeAnswer = describeAnswer;
// A worker acts only on the host ids handed to it (answers: lib/bindings.js; a loaded worker's env and outbound: lib/worker-loader.js).
module.exports.handTo = handTo;
module.exports.handedOut = handedOut;
