// AbortSignals over RPC (enable_abortsignal_rpc), both sides: what a sent signal leaves with
// its sender, the signal its receiver gets, and workerd's test hook `signal.skipReleaseForTest()`
// (under the `experimental` flag, as in workerd). 84_rpc.js writes and reads a signal's place
// in a value; this file says what it stands for.
//
// As in workerd, the sender holds a reference to a trigger on the receiver's side: the receiver
// hands a function of its own (the sink) to the sender's `subscribe` function, which keeps a stub
// of it and calls it with `{ reason }` when the signal aborts, or with `{ release: true }` before
// letting it go when it never will (the request that sent the signal is over, or the receiver
// let go of `subscribe`). A sink let go of without that release — by skipReleaseForTest(), or
// through the host — aborts the received signal with workerd's "implicitly aborted" error, as
// workerd's does when the capability to its trigger is dropped unreleased.

const LOST = "An AbortSignal received over RPC was implicitly aborted because the connection back to its trigger was lost.";

/** A sent AbortSignal → the receivers' sinks held for it (each `{ sink, release() }`). */
const sinksOf = new WeakMap();
/** Request id → the sinks held for the signals it sent: released when it is over. */
const sinksByEvent = new Map();

/**
 * Lets go of a held sink, after calling it with `last` (`{ release: true }`, or `{ reason }` when
 * its signal aborted); with `last` null (unclean) it is not called, and `into`, a call's answer
 * lists, carries the release.
 */
function letGo(entry, last = { release: true }, into = undefined) {
  if (entry.gone) return;
  entry.gone = true;
  entry.signal.removeEventListener("abort", entry.onAbort);
  sinksOf.get(entry.signal)?.delete(entry);
  sinksByEvent.get(entry.origin)?.delete(entry);
  if (last !== null) Promise.resolve(entry.sink(last)).catch(() => {});
  // After that call (84_rpc.js release() keeps the order).
  internals.rpc.release(entry.sink[internals.rpc.kTarget], into);
}

/**
 * What an AbortSignal sent over RPC leaves here: `subscribe(sink)`, which the receiver calls once
 * with its sink; the sink is called with `{ reason }` when the signal aborts. The request sending
 * the signal holds the sinks: they are released when it is over, as workerd's IoContext holds
 * the trigger's client.
 */
function trigger(signal) {
  const origin = internals.flowEvent();
  const entries = new Set();
  const subscribe = (sink) => {
    if (typeof sink !== "function" || sink[internals.rpc.kTarget]?.stub === undefined) return;
    const entry = { signal, origin, sink: sink.dup(), gone: false };
    // The sink lives as long as the request that sent the signal, not the call that brought it.
    internals.rpc.unown(entry.sink);
    entry.onAbort = () => letGo(entry, { reason: signal.reason });
    if (internals.signalAborted(signal)) return entry.onAbort();
    signal.addEventListener("abort", entry.onAbort, { once: true });
    entries.add(entry);
    let live = sinksOf.get(signal);
    if (live === undefined) sinksOf.set(signal, (live = new Set()));
    live.add(entry);
    if (origin !== undefined && internals.eventRunning(origin)) {
      let held = sinksByEvent.get(origin);
      if (held === undefined) sinksByEvent.set(origin, (held = new Set()));
      held.add(entry);
    }
  };
  // The receiver let go of subscribe: its sinks are released.
  subscribe[Symbol.dispose] = () => {
    for (const entry of entries) letGo(entry);
    entries.clear();
  };
  return subscribe;
}

internals.eventEndHooks.push((id) => {
  const held = sinksByEvent.get(id);
  if (held === undefined) return;
  sinksByEvent.delete(id);
  for (const entry of held) letGo(entry);
});

/** The AbortSignal a receiver gets for one sent over RPC: `subscribeStub` is the stub of trigger()'s function. */
function receive(reason, subscribeStub) {
  if (subscribeStub === undefined) return AbortSignal.abort(reason);
  const controller = new AbortController();
  const signal = controller.signal;
  let released = false;
  const lose = () => {
    if (!released) internals.signalAbort(signal, new DOMException(LOST, "AbortError"));
  };
  const sink = (message) => {
    if (message?.release === true) released = true;
    else if (message !== null && typeof message === "object" && "reason" in message) internals.signalAbort(signal, message.reason);
  };
  // Let go of without a release first: the connection back to the trigger was lost.
  sink[Symbol.dispose] = lose;
  Promise.resolve(subscribeStub(sink)).catch(lose);
  return signal;
}

/**
 * `signal.skipReleaseForTest()`: the sinks held for this signal are let go without a release, so
 * that their signals abort as lost, as workerd's test hook drops its trigger clients. Within an
 * RPC call, the call's answer lets them go (84_rpc_serve.js), so that the caller holding such a
 * signal sees it aborted when the call resolves.
 */
function skipReleaseForTest() {
  const live = sinksOf.get(this);
  if (live === undefined) return;
  sinksOf.delete(this);
  const into = internals.rpc.currentCall();
  for (const entry of [...live]) letGo(entry, null, into);
}

const previousPrepare = internals.prepareContext;
internals.prepareContext = (function prepareSignalContext(memoryMb, compatJson) {
  previousPrepare(memoryMb, compatJson);
  // A test hook workerd has under its `experimental` flag only.
  if (internals.feature("experimental")) {
    Object.defineProperty(AbortSignal.prototype, "skipReleaseForTest", { value: skipReleaseForTest, writable: true, enumerable: false, configurable: true });
  }
});

internals.rpcSignal = { trigger, receive };
