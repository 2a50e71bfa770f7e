// The streams' error messages, as workerd words them (web-streams-polyfill's own texts are
// reworded at build time: build.rs, reword_stream_errors). Every expected message was printed by
// workerd (Miniflare 4.20260426.0) from the same code. The worker runs on loopback only and is
// disposed when the test ends.
import { test } from "node:test";
import assert from "node:assert/strict";
import { evalInWorker } from "./helpers.mjs";

const BODY = `
  const out = {};
  const msg = async (f) => { try { const v = f(); if (v && typeof v.then === "function") await v; return "ok"; } catch (e) { return e?.name + ": " + e?.message; } };
  const rejected = async (p) => { try { await p; return "fulfilled"; } catch (e) { return e?.name + ": " + e?.message; } };
  { const rs = new ReadableStream(); const r = rs.getReader(); const closed = r.closed; r.releaseLock(); out.readerReleasedClosed = await rejected(closed); out.readerReadAfterRelease = await msg(() => r.read()); }
  { const rs = new ReadableStream(); rs.getReader(); out.lockedGetReader = await msg(() => rs.getReader()); out.lockedCancel = await msg(() => rs.cancel()); }
  { const ws = new WritableStream(); const w = ws.getWriter(); const closed = w.closed; w.releaseLock(); out.writerReleasedClosed = await rejected(closed); out.writerWriteAfterRelease = await msg(() => w.write("x")); }
  { const ws = new WritableStream(); ws.getWriter(); out.lockedGetWriter = await msg(() => ws.getWriter()); out.lockedAbort = await msg(() => ws.abort()); }
  { let c; new ReadableStream({ start(x) { c = x; } }); c.close(); out.enqueueAfterClose = await msg(() => c.enqueue("a")); out.closeTwice = await msg(() => c.close()); }
  { const ws = new WritableStream(); const w = ws.getWriter(); await w.close(); out.writeAfterClose = await msg(() => w.write("x")); }
  { const ts = new TransformStream(); const w = ts.writable.getWriter(); ts.readable.cancel("gone"); out.tsWriteAfterCancel = await msg(() => w.write("x")); }
  { const rs = new ReadableStream(); out.pipeToNonStream = await msg(() => rs.pipeTo({})); }
  { const rs = new ReadableStream({ type: "bytes" }); const r = rs.getReader({ mode: "byob" }); out.byobZero = await msg(() => r.read(new Uint8Array(0))); }
  { let c; new ReadableStream({ start(x) { c = x; } }); c.error(new Error("e")); out.closeErrored = await msg(() => c.close()); out.enqueueErrored = await msg(() => c.enqueue("a")); }
  { let c; new ReadableStream({ start(x) { c = x; } }, { highWaterMark: 0 }); c.enqueue("a"); c.close(); out.closeRequested = await msg(() => c.close()); out.enqueueCloseRequested = await msg(() => c.enqueue("b")); }
  { const ws = new WritableStream(); ws.getWriter(); out.lockedClose = await msg(() => ws.close()); }
  { const ws = new WritableStream({ write() { return new Promise(() => {}); } }); const w = ws.getWriter(); w.write("a"); w.close(); out.writeWhileClosing = await msg(() => w.write("x")); }
  { let tc; const ts = new TransformStream({ start(c) { tc = c; } }); await ts.readable.cancel("x"); out.tsEnqueueAfterCancel = await msg(() => tc.enqueue("a")); }
  { const rs = new ReadableStream(); const r = rs.getReader(); r.releaseLock(); out.cancelReleased = await msg(() => r.cancel()); }
  { const ws = new WritableStream(); const w = ws.getWriter(); w.releaseLock(); out.closeReleased = await msg(() => w.close()); out.abortReleased = await msg(() => w.abort()); }
  return out;`;

test("stream errors are worded as workerd's: released readers and writers, locked and closed streams, enqueue, pipeTo, BYOB reads", async (t) => {
  assert.deepEqual(await evalInWorker(t, BODY), {
    readerReleasedClosed: "TypeError: This ReadableStream reader has been released.",
    readerReadAfterRelease: "TypeError: This ReadableStream reader has been released.",
    lockedGetReader: "TypeError: This ReadableStream is currently locked to a reader.",
    lockedCancel: "TypeError: This ReadableStream is currently locked to a reader.",
    writerReleasedClosed: "TypeError: This WritableStream writer has been released.",
    writerWriteAfterRelease: "TypeError: This WritableStream writer has been released.",
    lockedGetWriter: "TypeError: This WritableStream is currently locked to a writer.",
    lockedAbort: "TypeError: This WritableStream is currently locked to a writer.",
    enqueueAfterClose: "TypeError: Unable to enqueue",
    closeTwice: "TypeError: This ReadableStream is closed.",
    writeAfterClose: "TypeError: This WritableStream has been closed.",
    tsWriteAfterCancel: "undefined: undefined",
    pipeToNonStream: "TypeError: Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'.",
    byobZero: "TypeError: You must call read() on a \"byob\" reader with a positive-sized TypedArray object.",
    closeErrored: "TypeError: This ReadableStream is closed.",
    enqueueErrored: "TypeError: Unable to enqueue",
    closeRequested: "TypeError: This ReadableStream is closed.",
    enqueueCloseRequested: "TypeError: Unable to enqueue",
    lockedClose: "TypeError: This WritableStream is currently locked to a writer.",
    writeWhileClosing: "TypeError: This ReadableStream is closed.",
    tsEnqueueAfterCancel: "TypeError: The readable side of this TransformStream is no longer readable.",
    cancelReleased: "TypeError: This ReadableStream reader has been released.",
    closeReleased: "TypeError: This WritableStream writer has been released.",
    abortReleased: "TypeError: This WritableStream writer has been released."
  });
});

test("queuing strategies as workerd takes them (build.rs, workerd_stream_strategies); pedantic_wpt keeps the Streams Standard's checks", async (t) => {
  const body = `
    const msg = (f) => { try { f(); return "ok"; } catch (e) { return e.name + ": " + e.message; } };
    const size = new ByteLengthQueuingStrategy({ highWaterMark: 1 }).size;
    return {
      negative: msg(() => new ReadableStream(undefined, { highWaterMark: -1 })),
      notNumber: msg(() => new WritableStream(undefined, { highWaterMark: "foo" })),
      bytesWithSize: msg(() => new ReadableStream({ type: "bytes" }, { size() { return 1; } })),
      sizeOfNothing: msg(() => size()) === "ok" ? String(size()) : msg(() => size()),
      asyncSize: await new ReadableStream({ pull(c) { c.enqueue(1); } }, { async size() { return 1; } }).getReader().read().then(() => "read", (e) => e.name + ": " + e.message),
    };`;
  assert.deepEqual(await evalInWorker(t, body), {
    negative: "TypeError: The value cannot be converted because it is negative and this API expects a positive bigint.",
    notNumber: "TypeError: The value cannot be converted because it is not an integer.",
    bytesWithSize: "ok",
    sizeOfNothing: "undefined",
    asyncSize: "TypeError: The value cannot be converted because it is not an integer.",
  });
  assert.deepEqual(await evalInWorker(t, body, { compatibilityFlags: ["pedantic_wpt"] }), {
    negative: "RangeError: Invalid highWaterMark",
    notNumber: "RangeError: Invalid highWaterMark",
    bytesWithSize: "RangeError: The strategy for a byte stream cannot have a size function",
    sizeOfNothing: "TypeError: Cannot read properties of undefined (reading 'byteLength')",
    asyncSize: "RangeError: Size must be a finite, non-NaN, non-negative number.",
  });
});
