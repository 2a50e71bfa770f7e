// One memory-reducing garbage collection of the Vitest process's own heap once no runner has been
// alive for 200 ms: at the end of a run's test files (or of a watch-mode rerun). Carrying every
// module the tests import to the isolates, and their results back, grows Node's heap (its young
// generation to its largest, 32 MB, and the old one with garbage); V8 keeps those pages until a
// collection that reduces memory, which an idle process may not get for a long time — and the
// typecheck Vitest starts after the test files (`typecheck.enabled`: a `tsc` of 170–230 MB) meets
// them at its own peak. The inspector's `HeapProfiler.collectGarbage` (an in-process session, no
// flag needed) runs V8's low-memory collection: the young generation shrinks to its minimum and
// free pages go back to the system. On workers-qb's suite the Vitest process then holds 201–222 MB
// while tsc runs instead of 251–260 (Node's heap 32 MB instead of 72–75), and the run's peak is
// 374–403 MB instead of 432–437. Vitest starts a file's runner before it stops the last one's,
// so none alive means the files are done; tsc starts about 100 ms later and peaks at its end, 1–3 s
// on, so the collection comes early in it (after a second it came after tsc's peak on a quiet
// machine, where the whole typecheck took under a second: the Vitest process met it at 249–259 MB,
// and at 204–219 with 200 ms). A run without typecheck exits 60–160 ms after its last runner, mostly
// before the collection. The collection runs while nothing waits on the process; while files run,
// the pool forces none (a plain full GC after each file cost time and saved little, and
// a plain full GC at the end gave no memory back: V8 kept the pages).
"use strict";

/** How long without a runner before the collection (runners overlap between files, see above). */
const IDLE_MS = 200;

let alive = 0;
let timer = null;

/** V8's low-memory collection of this process's heap, through an in-process inspector session. */
function collectGarbage() {
  let session;
  try {
    const { Session } = require("node:inspector");
    session = new Session();
    session.connect();
    // (Disconnected on a later turn: disconnecting inside the answer's callback made Node 20's
    // main thread spin.)
    session.post("HeapProfiler.collectGarbage", () => setImmediate(() => session.disconnect()));
  } catch {
    // No inspector in this Node (built without it): nothing to do.
    try {
      session?.disconnect();
    } catch {}
  }
}

/** A runner is starting: no collection while one starts or lives. */
function runnerStarted() {
  alive++;
  clearTimeout(timer);
  timer = null;
}

/** A runner ended (or failed to start): with none left, one collection after IDLE_MS unless another starts. */
function runnerEnded() {
  alive = Math.max(0, alive - 1);
  if (alive > 0) return;
  clearTimeout(timer);
  timer = setTimeout(() => {
    timer = null;
    if (alive === 0) collectGarbage();
  }, IDLE_MS);
  // The process may end before then (a run without typecheck): the timer does not hold it.
  timer.unref();
}

module.exports = { runnerStarted, runnerEnded, IDLE_MS };
