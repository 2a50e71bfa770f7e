//! Build script: napi-rs link settings (and, for musl, the version script that keeps the addon's
//! exports to napi's entry points), the list of JS bootstrap files in `src/js/` (embedded
//! in load order, which is their file-name order), and the WHATWG streams implementation
//! embedded from the `web-streams-polyfill` npm package (installed by `npm ci`).

use std::{
  env, fs,
  path::{Path, PathBuf},
};

fn main() {
  #[cfg(feature = "node")]
  napi_build::setup();
  #[cfg(feature = "node")]
  napi_only_exports();

  let js_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("src/js");
  println!("cargo:rerun-if-changed={}", js_dir.display());
  let mut files: Vec<PathBuf> = fs::read_dir(&js_dir)
    .expect("src/js")
    .map(|e| e.unwrap().path())
    .filter(|p| p.extension().is_some_and(|e| e == "js"))
    .collect();
  files.sort();
  let mut out = String::from("/// JS bootstrap files as (name, source), in load order.\npub const BOOTSTRAP_FILES: &[(&str, &str)] = &[\n");
  for path in files {
    println!("cargo:rerun-if-changed={}", path.display());
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    out.push_str(&format!("  ({name:?}, include_str!({:?})),\n", path.display().to_string()));
  }
  out.push_str("];\n");

  // `node:` modules for `nodejs_compat` (src/js/node/<name>.js, subfolders for `stream/promises`
  // and the like), compiled only when imported.
  embed_folder(&mut out, &js_dir.join("node"), "/// `node:` modules as (name without `node:`, source), for `nodejs_compat`.\npub const NODE_MODULES");
  // Bootstrap code that only some workers need (an old compatibility date's implementations):
  // src/js/lazy/<name>.js, compiled in a worker's context when it asks (`ops.lazyScript`), so
  // the startup snapshot, and every other worker, does not carry it.
  embed_folder(&mut out, &js_dir.join("lazy"), "/// Lazily compiled bootstrap files as (name, source).\npub const LAZY_FILES");
  vendored(&mut out);
  runtime_sources_id();

  let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
  let streams = manifest.join("node_modules/web-streams-polyfill/dist/ponyfill.js");
  println!("cargo:rerun-if-changed={}", streams.display());
  if !streams.exists() {
    panic!(
      "{} is missing: workerbox embeds the web-streams-polyfill npm package as the isolate's WHATWG streams. Run `npm ci` first.",
      streams.display()
    );
  }
  // One check is made to ask first: WritableStream's RangeError for an underlying sink's `type`
  // is pedantic_wpt's (workerd took any type without it); src/js/98_pedantic.js answers.
  let source = fs::read_to_string(&streams).unwrap();
  let check = r#"if(void 0!==o.type)throw new RangeError("Invalid type is specified")"#;
  assert_eq!(source.matches(check).count(), 1, "web-streams-polyfill: WritableStream's sink type check not found");
  let source = source.replacen(check, r#"if(void 0!==o.type&&exports.pedanticWpt())throw new RangeError("Invalid type is specified")"#, 1);
  let source = workerd_stream_schedule(&source);
  let source = workerd_stream_sources(&source);
  let source = reword_stream_errors(&source);
  let source = workerd_stream_strategies(&source);
  let source = hide_stream_slots(&source);
  let source = hook_stream_creation(&source);
  let patched = PathBuf::from(env::var("OUT_DIR").unwrap()).join("web-streams-polyfill.js");
  fs::write(&patched, source).unwrap();
  out.push_str(&format!(
    "/// web-streams-polyfill's UMD build (`exports.ReadableStream`, …), with `exports.pedanticWpt()` asked before its sink type check and its fields symbol-keyed (`exports.slots`).\npub const STREAMS_PONYFILL: &str = include_str!({:?});\n",
    patched.display().to_string()
  ));
  fs::write(PathBuf::from(env::var("OUT_DIR").unwrap()).join("bootstrap_files.rs"), out).unwrap();
}

/// Gives web-streams-polyfill's streams workerd's schedule (`WritableImpl` in workerd's
/// `api/streams/standard.c++`, compared with workerd on the same code), where it changes what
/// user code sees, not only when:
/// - a sink or source without `start()` is started at once, in the constructor, so a first
///   write reaches the sink within `write()`, and a first `pull()` comes within the constructor;
/// - a sink's result is taken as it is: a native promise is not wrapped again (two microtasks
///   fewer, as workerd's `jsg::Promise`), for readable streams too;
/// - a sink without `write()`/`close()` is done with them at once without `pedantic_wpt`
///   (`exports.pedanticWpt()`, src/js/98_pedantic.js), one microtask later with it; a sink
///   without `abort()` is done at once in both;
/// - after a write, the next queued one starts a microtask later;
/// - `releaseLock()` rejects the writes still queued ("This WritableStream writer has been
///   released.") and takes them out of the queue; the one in progress goes on;
/// - a TransformStream makes its readable side first (its start, and so its first pull, comes
///   first), a transformer's `start()` is done a microtask after it returns, a `transform()` or
///   `flush()` two microtasks after its promise (workerd's continuation hands back a resolved
///   promise), and the default transform at once;
/// - a TransformStream's `flush()`, `cancel()` or the writable side's abort that reaches another
///   of them synchronously (a `flush()` that cancels the readable side) gets workerd's answer at
///   once instead of waiting for itself.
/// Each text must occur exactly once, or the build fails.
fn workerd_stream_schedule(source: &str) -> String {
  let patches: &[(&str, &str)] = &[
    // The promise helpers: a sink's native promise is used as it is; `$wbs_done` (a sink step
    // done already) runs its continuation at once.
    ("function d(e){return c(t=>t(e))}", "function d(e){return a(e)}"),
    ("function h(e,t,r){b(b(e,t,r),void 0,o)}", "function h(e,t,r){if(e===$wbs_done){if(void 0!==t)try{t(void 0)}catch(e){o(e)}return}b(b(e,t,r),void 0,o)}"),
    // WritableStream's constructor: the defaults of a sink's missing members.
    (
      "i=void 0!==t.start?()=>t.start(n):()=>{};a=void 0!==t.write?e=>t.write(e,n):()=>d(void 0);s=void 0!==t.close?()=>t.close():()=>d(void 0);l=void 0!==t.abort?e=>t.abort(e):()=>d(void 0);",
      "const $wbs_q=$wbs_syncDefaultSink();i=void 0!==t.start?()=>t.start(n):$wbs_now;a=void 0!==t.write?e=>t.write(e,n):$wbs_q?$wbs_now:()=>d(void 0);s=void 0!==t.close?()=>t.close():$wbs_q?$wbs_now:()=>d(void 0);l=void 0!==t.abort?e=>t.abort(e):$wbs_now;",
    ),
    // SetUpWritableStreamDefaultController: a start already done is not waited for.
    ("h(d(r()),()=>(t._started=!0,Gt(t),null)", "h($wbs_lift(r()),()=>(t._started=!0,Gt(t),null)"),
    // ProcessWrite's success: the next write a microtask later.
    (
      "if(Ce(e),!zt(r)&&\"writable\"===t){const t=Jt(e);Ft(r,t)}return Gt(e),null}",
      "if(Ce(e),!zt(r)&&\"writable\"===t){const t=Jt(e);Ft(r,t)}return $wbs_advance(e,r),null}",
    ),
    // WritableStreamDefaultWriter.prototype.releaseLock
    (
      "releaseLock(){if(!Lt(this))throw tr(\"releaseLock\");void 0!==this._ownerWritableStream&&Yt(this)}",
      "releaseLock(){if(!Lt(this))throw tr(\"releaseLock\");void 0!==this._ownerWritableStream&&$wbs_release(this)}",
    ),
    // TransformStream's finish steps (flush, cancel from the readable side, abort from the
    // writable side): marked while their algorithm runs, and answered at once when re-entered.
    // Without pedantic_wpt, the writable side's close runs flush() whether or not a cancel or
    // abort has begun, and does not keep them from running.
    (
      "if(void 0!==t._finishPromise)return t._finishPromise;",
      "if($wbs_syncDefaultSink())return $wbs_legacyClose(e,t);if(void 0!==t._finishPromise)return t._finishing?$wbs_reentered(e,\"close\"):t._finishPromise;",
    ),
    // What the finish steps do once their algorithm is done: workerd lets go of the readable
    // side when it errors the transform, so the standard's "is the other side errored" checks
    // never reject there: a flush that succeeds closes the readable side and fulfils, an abort
    // errors it and fulfils, a cancel errors the writable side and fulfils.
    (
      "h(o,()=>(\"errored\"===r._state?_o(t,r._storedError):(Rr(r._readableStreamController),ho(t)),null)",
      "h(o,()=>(Rr(r._readableStreamController),h(a(void 0),()=>(ho(t),null)),null)",
    ),
    (
      "h(n,()=>(\"errored\"===o._state?_o(r,o._storedError):(Pr(o._readableStreamController,t),ho(r)),null)",
      "h(n,()=>(Pr(o._readableStreamController,t),ho(r),null)",
    ),
    ("const o=t._flushAlgorithm();", "t._finishing=!0;const o=t._flushAlgorithm();t._finishing=!1;"),
    (
      "if(void 0!==r._finishPromise)return r._finishPromise;const o=e._readable;r._finishPromise=c((e,t)=>{r._finishPromise_resolve=e,r._finishPromise_reject=t});const n=r._cancelAlgorithm(t);",
      "if(void 0!==r._finishPromise)return r._finishing?$wbs_reentered(e,\"abort\",t):r._finishPromise;const o=e._readable;r._finishPromise=c((e,t)=>{r._finishPromise_resolve=e,r._finishPromise_reject=t});r._finishing=!0;const n=r._cancelAlgorithm(t);r._finishing=!1;",
    ),
    (
      "if(void 0!==r._finishPromise)return r._finishPromise;const o=e._writable;r._finishPromise=c((e,t)=>{r._finishPromise_resolve=e,r._finishPromise_reject=t});const n=r._cancelAlgorithm(t);",
      "if(void 0!==r._finishPromise)return r._finishing?$wbs_reentered(e,\"cancel\"):r._finishPromise;const o=e._writable;r._finishPromise=c((e,t)=>{r._finishPromise_resolve=e,r._finishPromise_reject=t});const $wbs_l=$wbs_syncDefaultSink();r._finishing=!0;const n=r._cancelAlgorithm(t);r._finishing=!1;",
    ),
    // The readable side's cancel; without pedantic_wpt its algorithms are let go only once it
    // is done (so a close under way still flushes), and it errors the writable side at once,
    // even with a close in progress (workerd's `doError`).
    (
      "return uo(r),h(n,()=>(\"errored\"===o._state?_o(r,o._storedError):(Xt(o._writableStreamController,t),ao(e),ho(r)),null)",
      "return $wbs_l||uo(r),h(n,()=>(uo(r),$wbs_l?$wbs_doError(o,t):Xt(o._writableStreamController,t),ao(e),ho(r),null)",
    ),
    // InitializeTransformStream: the readable side first, as workerd makes them, so its start
    // (and first pull, which lifts the backpressure) comes before the writable side's and a
    // write made at once reaches transform() a microtask sooner.
    (
      "e._writable=function(e,t,r,o,n=1,i=()=>1){const a=Object.create(WritableStream.prototype);return qt(a),Ht(a,Object.create(WritableStreamDefaultController.prototype),e,t,r,o,n,i),a}(a,s,u,l,r,o),e._readable=Fr(a,d,f,n,i),",
      "e._readable=Fr(a,d,f,n,i),e._writable=function(e,t,r,o,n=1,i=()=>1){const a=Object.create(WritableStream.prototype);return qt(a),Ht(a,Object.create(WritableStreamDefaultController.prototype),e,t,r,o,n,i),a}(a,s,u,l,r,o),",
    ),
    // TransformStream's constructor: a transformer's start() is done a microtask after it
    // returns, as workerd's (without one, at once).
    (
      "void 0!==i.start?b(i.start(this._transformStreamController)):b(void 0)",
      "void 0!==i.start?$wbs_startDone(i.start(this._transformStreamController),b):b(void 0)",
    ),
    // PerformTransform: a transformer's transform() is done when its promise and then workerd's
    // own resolved promise have settled (two microtasks more than the standard's).
    (
      "function fo(e,t){return p(e._transformAlgorithm(t),void 0,t=>{throw no(e._controlledTransformStream,t),t})}",
      "function fo(e,t){const $wbs_x=e._transformAlgorithm(t);return $wbs_x===$wbs_plain?$wbs_x:p($wbs_x,()=>a(void 0),t=>{throw no(e._controlledTransformStream,t),t})}",
    ),
    // The default transform (none given) enqueues and is done: workerd hands back one resolved
    // promise and no continuation.
    ("e=>{try{return co(r,e),d(void 0)}catch(e){return f(e)}}", "e=>{try{return co(r,e),$wbs_plain}catch(e){return f(e)}}"),
    // ReadableStream's constructor and its controllers' set-up: a source without `start()` is
    // started at once, in the constructor (so a first `pull()` comes within it), as workerd's.
    ("i=void 0!==t.start?()=>t.start(n):()=>{},a=void 0!==t.pull?()=>t.pull(n):()=>d(void 0)", "i=void 0!==t.start?()=>t.start(n):$wbs_now,a=void 0!==t.pull?()=>t.pull(n):()=>d(void 0)"),
    ("h(d(r()),()=>(t._started=!0,gr(t),null)", "h($wbs_lift(r()),()=>(t._started=!0,gr(t),null)"),
    ("n=void 0!==t.start?()=>t.start(o):()=>{},i=void 0!==t.pull", "n=void 0!==t.start?()=>t.start(o):$wbs_now,i=void 0!==t.pull"),
    ("h(d(r()),()=>(t._started=!0,ke(t),null)", "h($wbs_lift(r()),()=>(t._started=!0,ke(t),null)"),
  ];
  // Names the helpers below rely on, checked to mean what they assume.
  for text in ["const i=Promise,a=Promise.resolve.bind(i)", "const Qt={}"] {
    assert_eq!(source.matches(text).count(), 1, "web-streams-polyfill: {text:?} was not found exactly once (workerd_stream_schedule)");
  }
  let mut out = source.to_string();
  for (text, replacement) in patches {
    assert_eq!(out.matches(text).count(), 1, "web-streams-polyfill: {text:?} was not found exactly once (workerd_stream_schedule)");
    out = out.replacen(text, replacement, 1);
  }
  // Hoisted into the factory; `._name` fields become symbols in `hide_stream_slots`. Gt is
  // WritableStreamDefaultControllerAdvanceQueueIfNeeded, Ft UpdateBackpressure, Jt
  // GetBackpressure, zt CloseQueuedOrInFlight, Yt WriterRelease, w the SimpleQueue, Qt the
  // close marker, no TransformStreamError, Rr/Pr ReadableStreamDefaultControllerClose/Error, Xt
  // WritableStreamDefaultControllerErrorIfNeeded, ir WriterRejectClosed, p
  // transformPromiseWith, f a rejected promise.
  let helpers = r#"const $wbs_exports=e,$wbs_syncDefaultSink=()=>{const f=$wbs_exports.pedanticWpt;return void 0!==f&&!f()},$wbs_done=Object.freeze({}),$wbs_plain=Promise.resolve(),$wbs_now=()=>$wbs_done,$wbs_lift=v=>v===$wbs_done?v:d(v);function $wbs_advance(c,s){const q=c._queue;if("erroring"===s._state||0===q.length||q.peek().value===Qt)return void Gt(c);h(a(void 0),()=>{const t=s._state;return("writable"===t||"erroring"===t)&&Gt(c),null})}function $wbs_release(writer){const s=writer._ownerWritableStream,t=s._state,requests=s._writeRequests;if(("writable"!==t&&"erroring"!==t)||0===requests.length)return void Yt(writer);const c=s._writableStreamController,reason=new TypeError("This WritableStream writer has been released."),kept=new w();let inFlight=void 0!==s._inFlightWriteRequest,left=requests.length;c._queue.forEach(entry=>{if(inFlight)inFlight=!1,kept.push(entry);else if(left>0&&entry.value!==Qt)left--,c._queueTotalSize-=entry.size;else kept.push(entry)});c._queue=kept,c._queueTotalSize<0&&(c._queueTotalSize=0),s._writeRequests=new w(),requests.forEach(r=>r._reject(reason)),Yt(writer),"writable"!==s._state||zt(s)||Ft(s,Jt(c))}function $wbs_startDone(result,resolve){h(a(result),()=>(resolve(void 0),null),x=>(resolve(f(x)),null))}function $wbs_legacyClose(s,t){const r=s._readable,flush=t._flushAlgorithm,done=()=>(Rr(r._readableStreamController),null);return void 0===flush?(done(),a(void 0)):p(p(flush(),done,x=>{throw no(s,x),x}),void 0)}function $wbs_doError(s,reason){if(void 0===s._inFlightCloseRequest||"writable"!==s._state)return void Xt(s._writableStreamController,reason);s._state="errored",s._storedError=reason;const writer=s._writer;void 0!==writer&&ir(writer,reason)}function $wbs_reentered(s,step,reason){const r=s._readable,wr=s._writable;if("abort"===step)return no(s,reason),f(reason);if("close"===step&&("errored"===wr._state||"erroring"===wr._state))return f(wr._storedError);return"errored"===r._state?f(r._storedError):a(void 0)}"#;
  let strict = UMD_FACTORY_START;
  assert_eq!(out.matches(strict).count(), 1, "web-streams-polyfill: the UMD factory's start was not found");
  out.replacen(strict, &format!("{strict}{helpers}"), 1)
}

/// What workerd does with an underlying source, sink or transformer that the polyfill does
/// otherwise (compared with workerd on the same code):
/// - a `start()` that throws errors the stream with what it threw instead of throwing from the
///   constructor (`ReadableStream`, `WritableStream`, `TransformStream`);
/// - a read that takes what is queued does not call `pull()`;
/// - a default read of a byte stream with an `autoAllocateChunkSize` takes up to that many queued
///   bytes at once, in a buffer of that size;
/// - `pipeTo()` writes a chunk a microtask after reading it, and not once its signal aborted it;
///   `exports.isPiping()` tells whether a write is `pipeTo()`'s;
/// - a default controller's strategy `size()` is asked for a chunk that goes straight to a read;
/// - a WritableStream's abort() gives the first abort's promise each time;
/// - a `tee()` branch's `cancel()` does not wait for the other branch's, and a byte stream's
///   branches read whole chunks from the source;
/// - cancelling one of the runtime's streams rejects the reads waiting on it;
/// - a few errors are thrown, not returned as a rejected promise, before capture_async_api_throws;
/// - the `ReadableStream` constructor hands the stream, the source and its converted dictionary
///   to `exports.onSource(stream, source, dict)` before the controller is set up (src/js/50_streams.js
///   gives a byte stream workerd's default `autoAllocateChunkSize` and takes `expectedLength`),
///   and the `TransformStream` constructor hands itself and the transformer to
///   `exports.onTransformer(transform, transformer)` at its end (`expectedLength`).
/// Each text must occur as often as said, or the build fails.
fn workerd_stream_sources(source: &str) -> String {
  let patches: &[(&str, &str, usize)] = &[
    // The three controllers' set-up (after `workerd_stream_schedule`): the start algorithm.
    ("h($wbs_lift(r()),", "h($wbs_lift($wbs_start(r)),", 3),
    (
      "void 0!==i.start?$wbs_startDone(i.start(this._transformStreamController),b):b(void 0)}",
      "void 0!==i.start?$wbs_startDone($wbs_start(()=>i.start(this._transformStreamController)),b):b(void 0);$wbs_hook(\"onTransformer\",this,e,void 0)}",
      1,
    ),
    ("if(Ir(this),\"bytes\"===o.type){", "if(Ir(this),$wbs_hook(\"onSource\",this,e,o),\"bytes\"===o.type){", 1),
    // A default read of a byte stream with an autoAllocateChunkSize and bytes queued: one
    // buffer of that size filled from as many queued chunks as fit (the last one split), as
    // workerd's byte queue does, rather than the first queued chunk as it is.
    (
      "[C](e){const t=this._controlledReadableByteStream;if(this._queueTotalSize>0)return void Ke(this,e);",
      "[C](e){const t=this._controlledReadableByteStream;if(this._queueTotalSize>0)return void(void 0!==this._autoAllocateChunkSize?$wbs_fillAuto(this,e):Ke(this,e));",
      1,
    ),
    // ReadableStreamCancel: a stream of the runtime's ("internal" in workerd) rejects the reads
    // waiting on it with the reason (`exports.cancelRejectsReads(stream, reason)` says with what,
    // or undefined for the standard's: they end, done).
    (
      "function Yr(e,r){if(e._disturbed=!0,\"closed\"===e._state)return d(void 0);if(\"errored\"===e._state)return f(e._storedError);xr(e);",
      "function Yr(e,r){if(e._disturbed=!0,\"closed\"===e._state)return d(void 0);if(\"errored\"===e._state)return f(e._storedError);$wbs_cancelReads(e,r);xr(e);",
      1,
    ),
    // respondWithNewView() with a view on a SharedArrayBuffer (which cannot be transferred): a
    // TypeError, as workerd's, before the buffer's size is compared.
    (
      "if(fe(e.buffer))throw new TypeError(\"The given view's buffer has been detached and so cannot be used as a response\");rt(",
      "if(fe(e.buffer))throw new TypeError(\"The given view's buffer has been detached and so cannot be used as a response\");if(\"undefined\"!=typeof SharedArrayBuffer&&e.buffer instanceof SharedArrayBuffer)throw new TypeError(\"Unable to use non-detachable ArrayBuffer.\");rt(",
      1,
    ),
    // pipeTo()'s writes (the pipe's read requests' chunk steps): made a microtask after the read,
    // as workerd's pipe loop writes once its read's promise settled, and not made once the pipe's
    // signal has aborted it (`_wbsAborted`, set by the abort algorithm), so a chunk whose read
    // set off the abort (through the source's pull()) is not written; `exports.isPiping()` is
    // true while one is made, for the runtime's writables to word their errors as workerd's pipe.
    ("_chunkSteps(e){this._state._currentWrite=b(xt(this._state._writer,e),void 0,t)", "_chunkSteps(e){this._state._currentWrite=b($wbs_pipeWrite(this._state,e),void 0,t)", 2),
    ("if(S=()=>{const r=void 0!==i.reason?i.reason:new br(\"Aborted\",\"AbortError\")", "if(S=()=>{l._wbsAborted=!0;const r=void 0!==i.reason?i.reason:new br(\"Aborted\",\"AbortError\")", 1),
    // ReadableStreamDefaultControllerEnqueue: the strategy's size() is asked for every chunk,
    // also one that goes straight to a waiting read (a size() that errors the stream, or
    // throws, leaves that read rejected), as workerd asks it.
    ("if(Mr(r)&&J(r)>0)X(r,t,!1);else{", "if(Mr(r)&&J(r)>0)$wbs_sized(e,t)&&X(r,t,!1);else{", 1),
    // WritableStreamAbort: the first abort's promise is the answer to every later one (the
    // standard resolves one made once the stream errored), as workerd keeps it.
    ("function Bt(e,t){var r;", "function Bt(e,t){if(void 0!==e._wbsAbort)return e._wbsAbort;const x=$wbs_abort(e,t);return e._wbsAbort=x}function $wbs_abort(e,t){var r;", 1),
    // A read that takes its chunk (or bytes) from the queue does not call pull(), as workerd's
    // queue does not (the standard pulls again to fill the queue up to the high water mark);
    // pull() comes when a read waits on an empty queue, and then until the queue is full again.
    (
      "this._closeRequested&&0===this._queue.length?(wr(this),xr(t)):gr(this),e._chunkSteps(r)}else",
      "this._closeRequested&&0===this._queue.length&&(wr(this),xr(t)),e._chunkSteps(r)}else",
      1,
    ),
    (
      "function Ke(e,t){const r=e._queue.shift();e._queueTotalSize-=r.byteLength,xe(e);",
      "function Ke(e,t){const r=e._queue.shift();e._queueTotalSize-=r.byteLength,$wbs_drained(e);",
      1,
    ),
    ("if(Me(e,d)){const t=Fe(d);return xe(e),void o._chunkSteps(t)}", "if(Me(e,d)){const t=Fe(d);return $wbs_drained(e),void o._chunkSteps(t)}", 1),
    // A byte stream's tee(): a branch's pull reads whole chunks from the source (a default read)
    // and both branches queue them, so each branch's BYOB reads are filled to their own sizes
    // (the standard reads into the pulling branch's view and gives the other branch that much).
    // The source keeps the branch that pulled last (`_wbsTeeBranch`): its byobRequest.atLeast is
    // that branch's readAtLeast() (src/js/50_streams.js).
    (
      "const e=Ze(o._readableStreamController);return null===e?p():y(e._view,!1),d(void 0)}",
      "return e._wbsTeeBranch=o,p(),d(void 0)}",
      1,
    ),
    (
      "const e=Ze(n._readableStreamController);return null===e?p():y(e._view,!0),d(void 0)}",
      "return e._wbsTeeBranch=n,p(),d(void 0)}",
      1,
    ),
    // tee(): a branch's cancel() is done at once, not when the other branch is cancelled too;
    // the last branch cancelled cancels the source and waits for it, as in workerd.
    (
      "function _(t){if(u=!0,r=t,f){const t=ue([r,o]),n=Yr(e,t);a(n)}return b}",
      "function _(t){if(u=!0,r=t,f){const t=ue([r,o]),n=Yr(e,t);return a(n),b}return d(void 0)}",
      1,
    ),
    (
      "function p(t){if(f=!0,o=t,u){const t=ue([r,o]),n=Yr(e,t);a(n)}return b}",
      "function p(t){if(f=!0,o=t,u){const t=ue([r,o]),n=Yr(e,t);return a(n),b}return d(void 0)}",
      1,
    ),
    (
      "function w(o){if(f=!0,t=o,b){const o=ue([t,r]),n=Yr(e,o);i(n)}return h}",
      "function w(o){if(f=!0,t=o,b){const o=ue([t,r]),n=Yr(e,o);return i(n),h}return d(void 0)}",
      1,
    ),
    (
      "function R(o){if(b=!0,r=o,f){const o=ue([t,r]),n=Yr(e,o);i(n)}return h}",
      "function R(o){if(b=!0,r=o,f){const o=ue([t,r]),n=Yr(e,o);return i(n),h}return d(void 0)}",
      1,
    ),
    // Errors workerd throws from a promise-returning method rather than returning a rejected
    // promise, unless capture_async_api_throws (`exports.asyncThrows()`, src/js/50_streams.js):
    // pipeTo()'s destination that is missing or not a WritableStream (a TypeError, not a
    // string as the polyfill rejects with when it is missing), a second close() of a writable.
    (
      "if(void 0===e)return f(\"Parameter 1 is required in 'pipeTo'.\");if(!Et(e))return f(new TypeError(\"ReadableStream.prototype.pipeTo's first argument must be a WritableStream\"));",
      "if(void 0===e||!Et(e))return $wbs_thrown(new TypeError(\"ReadableStream.prototype.pipeTo's first argument must be a WritableStream\"));",
      1,
    ),
    ("zt(e)?f(new TypeError(\"Cannot close an already-closing stream\"))", "zt(e)?$wbs_thrown(new TypeError(\"Cannot close a writer that is already being closed\"))", 1),
    ("zt(this)?f(new TypeError(\"Cannot close an already-closing stream\"))", "zt(this)?$wbs_thrown(new TypeError(\"Cannot close a writer that is already being closed\"))", 1),
  ];
  let mut out = source.to_string();
  for (text, replacement, count) in patches {
    assert_eq!(out.matches(text).count(), *count, "web-streams-polyfill: {text:?} was not found {count} time(s) (workerd_stream_sources)");
    out = out.replace(text, replacement);
  }
  // `f` is the polyfill's rejected-promise helper; `$wbs_exports` comes from `workerd_stream_schedule`.
  let helpers = r#"let $wbs_piping=!1;e.isPiping=()=>$wbs_piping;function $wbs_pipeWrite(s,c){return b(a(void 0),()=>{if(!s._wbsAborted){$wbs_piping=!0;try{return xt(s._writer,c)}finally{$wbs_piping=!1}}})}function $wbs_start(r){try{return r()}catch(x){return f(x)}}function $wbs_hook(name,a,b,c){const g=$wbs_exports[name];void 0!==g&&g(a,b,c)}function $wbs_fillAuto(c,t){const size=c._autoAllocateChunkSize,q=c._queue;let buffer;try{buffer=new ArrayBuffer(size)}catch(x){return void t._errorSteps(x)}const all=new Uint8Array(buffer);let n=0;for(;n<size&&q.length>0;){const r=q.peek(),k=Math.min(size-n,r.byteLength);all.set(new Uint8Array(r.buffer,r.byteOffset,k),n),n+=k,k===r.byteLength?q.shift():(r.byteOffset+=k,r.byteLength-=k)}c._queueTotalSize-=n,$wbs_drained(c),t._chunkSteps(new Uint8Array(buffer,0,n))}function $wbs_drained(c){0===c._queueTotalSize&&c._closeRequested&&(Ue(c),xr(c._controlledReadableByteStream))}function $wbs_cancelReads(s,r){const g=$wbs_exports.cancelRejectsReads;if(void 0===g)return;const x=g(s,r),k=s._reader;void 0!==x&&void 0!==k&&(te(k)?ne(k,x):bt(k)&&_t(k,x))}function $wbs_sized(c,chunk){try{c._strategySizeAlgorithm(chunk)}catch(x){throw Pr(c,x),x}const s=c._controlledReadableStream;return"readable"===s._state&&Mr(s)&&J(s)>0}function $wbs_thrown(x){const g=$wbs_exports.asyncThrows;if(void 0!==g&&g())throw x;return f(x)}"#;
  let strict = UMD_FACTORY_START;
  assert_eq!(out.matches(strict).count(), 1, "web-streams-polyfill: the UMD factory's start was not found");
  out.replacen(strict, &format!("{strict}{helpers}"), 1)
}

/// workerd's wording for the stream errors user code meets most (compared with workerd on the
/// same code): a released reader or writer, a locked stream, a closed one, an enqueue that cannot
/// be taken. Each polyfill text (a JS expression inside `new TypeError(…)`) must occur at least
/// once, and every occurrence is replaced, or the build fails.
fn reword_stream_errors(source: &str) -> String {
  const READER_RELEASED: &str = r#""This ReadableStream reader has been released.""#;
  const WRITER_RELEASED: &str = r#""This WritableStream writer has been released.""#;
  const READER_LOCKED: &str = r#""This ReadableStream is currently locked to a reader.""#;
  const WRITER_LOCKED: &str = r#""This WritableStream is currently locked to a writer.""#;
  let words: &[(&str, &str)] = &[
    (r#""Reader was released and can no longer be used to monitor the stream's closedness""#, READER_RELEASED),
    (r#""Cannot "+e+" a stream using a released reader""#, READER_RELEASED),
    (r#""Writer was released and can no longer be used to monitor the stream's closedness""#, WRITER_RELEASED),
    (r#""Cannot "+e+" a stream using a released writer""#, WRITER_RELEASED),
    (r#""This stream has already been locked for exclusive reading by another reader""#, READER_LOCKED),
    (r#""Cannot cancel a stream that already has a reader""#, READER_LOCKED),
    (r#""This stream has already been locked for exclusive writing by another writer""#, WRITER_LOCKED),
    (r#""Cannot abort a stream that already has a writer""#, WRITER_LOCKED),
    (r#""Cannot close a stream that already has a writer""#, WRITER_LOCKED),
    // workerd names the wrong stream for a write while closing; the polyfill says one thing for both.
    (r#""The stream is closing or closed and cannot be written to""#, r#""closed"===i?"This WritableStream has been closed.":"This ReadableStream is closed.""#),
    (r#""The stream is not in a state that permits enqueue""#, r#""Unable to enqueue""#),
    (r#""The stream is not in a state that permits close""#, r#""This ReadableStream is closed.""#),
    (r#""Readable side is not in a state that permits enqueue""#, r#""The readable side of this TransformStream is no longer readable.""#),
    (r#""ReadableStream.prototype.pipeTo's first argument must be a WritableStream""#, r#""Failed to execute 'pipeTo' on 'ReadableStream': parameter 1 is not of type 'WritableStream'.""#),
    (r#""view must have non-zero byteLength""#, r#""You must call read() on a \"byob\" reader with a positive-sized TypedArray object.""#),
    (r#""This BYOB request has been invalidated""#, r#""This ReadableStreamBYOBRequest has been invalidated.""#),
    // A released reader's pending reads; a byte chunk that is empty or detached (one enqueued
    // before: enqueue() transfers its buffer).
    (r#""Reader was released""#, READER_RELEASED),
    (r#""chunk must have non-zero byteLength""#, r#""Cannot enqueue a zero-length ArrayBuffer.""#),
    (r#""chunk's buffer must have non-zero byteLength""#, r#""Cannot enqueue a zero-length ArrayBuffer.""#),
    (r#""chunk's buffer is detached and so cannot be enqueued""#, r#""Cannot enqueue a zero-length ArrayBuffer.""#),
  ];
  let mut out = source.to_string();
  for (text, replacement) in words {
    let wrapped = format!("new TypeError({text})");
    assert!(out.contains(&wrapped), "web-streams-polyfill: the error {text} was not found");
    out = out.replace(&wrapped, &format!("new TypeError({replacement})"));
  }
  out
}

/// Queuing strategies as workerd takes them (its highWaterMark is a Web IDL unsigned integer), unless
/// pedantic_wpt (`exports.pedanticWpt()`) asks for the Streams Standard's checks: an invalid
/// highWaterMark is workerd's `TypeError` rather than a `RangeError`; a byte stream ignores a
/// strategy's `size` rather than refusing it; `ByteLengthQueuingStrategy`'s `size` of a value
/// without a `byteLength` (or of nothing) is `undefined` rather than a `TypeError`; a size
/// algorithm's result that is not a size (a promise, NaN, a negative number) errors the stream
/// with workerd's `TypeError`.
fn workerd_stream_strategies(source: &str) -> String {
  let patches: &[(&str, &str)] = &[
    (
      r#"if(Te(r)||r<0)throw new RangeError("Invalid highWaterMark");return r}"#,
      r#"if(Te(r)||r<0){if(exports.pedanticWpt())throw new RangeError("Invalid highWaterMark");throw new TypeError(Te(r)||r===-1/0?"The value cannot be converted because it is not an integer.":"The value cannot be converted because it is negative and this API expects a positive bigint.")}return r}"#,
    ),
    (
      r#"if(void 0!==r.size)throw new RangeError("The strategy for a byte stream cannot have a size function");"#,
      r#"if(void 0!==r.size&&exports.pedanticWpt())throw new RangeError("The strategy for a byte stream cannot have a size function");"#,
    ),
    (
      r#"if("number"!=typeof(o=r)||Te(o)||o<0||r===1/0)throw new RangeError("Size must be a finite, non-NaN, non-negative number.");"#,
      r#"if("number"!=typeof(o=r)||Te(o)||o<0||r===1/0){if(exports.pedanticWpt?.())throw new RangeError("Size must be a finite, non-NaN, non-negative number.");throw new TypeError(o<0&&o!==-1/0?"The value cannot be converted because it is negative and this API expects a positive bigint.":"The value cannot be converted because it is not an integer.")}"#,
    ),
    (r#"const Vr=e=>e.byteLength;"#, r#"const Vr=e=>exports.pedanticWpt?.()?e.byteLength:e?.byteLength;"#),
  ];
  let mut out = source.to_string();
  for (text, replacement) in patches {
    assert_eq!(out.matches(text).count(), 1, "web-streams-polyfill: {text} was not found once");
    out = out.replacen(text, replacement, 1);
  }
  out
}

/// The addon exports napi's entry points only: it shares Node's process, and the `v8` crate's
/// `extern "C"` glue (`v8__*`, …), which rustc exports from a cdylib, must stay local. On Linux
/// gnu and macOS the linker wrapper of .cargo/config.toml (scripts/link-napi-only.sh) trims
/// rustc's export list. musl addons are linked with cargo-zigbuild (`napi build -x`), which sets
/// its own linker, so for musl a version script of napi's names is given as well; zig's linker
/// applies it over rustc's (`npm run check:platforms` links a probe library to prove it).
#[cfg(feature = "node")]
fn napi_only_exports() {
  let var = |name: &str| env::var(name).unwrap_or_default();
  if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "musl" {
    return;
  }
  let map = PathBuf::from(var("OUT_DIR")).join("napi-only.map");
  fs::write(&map, "{\n  global:\n    napi_*;\n    node_api_*;\n  local:\n    *;\n};\n").expect("napi-only.map");
  println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
}

/// Where the polyfill's UMD factory body starts/// Where the polyfill's UMD factory body starts (its parameter `e` is `exports`): the patches
/// below declare what they add right after it.
const UMD_FACTORY_START: &str = "(this,function(e){\"use strict\";";

/// Makes web-streams-polyfill's internal fields (`stream._state`, `writer._readyPromise`, …)
/// symbol-keyed, as workerd's streams keep their state out of sight: as string-keyed fields
/// they were enumerable own properties of every stream, reader, writer and controller, so
/// `Object.keys` listed them, `console.log` printed them and `JSON.stringify` of a stream threw
/// on their cycles. Each name read as a property (`._name`) becomes one symbol, and every place
/// the minified bundle uses it as a key is rewritten: `x._name` → `x[$wb_name]`, `"_name"` (its
/// `hasOwnProperty` brand checks) → `$wb_name`, an object-literal key `{_name:` / `,_name:` and a
/// class method `}_name(` → `[$wb_name]`. Any other use of such a name fails the build, so a
/// new polyfill release that writes one differently is caught here. The symbols are declared at
/// the top of the bundle's factory and handed out as `exports.slots` (by their `_name`), for
/// the bootstrap files that reach into the polyfill.
fn hide_stream_slots(source: &str) -> String {
  use std::collections::BTreeSet;
  let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
  let bytes = source.as_bytes();
  // Every `_name` token: (start, end) with no identifier character either side.
  let mut tokens = Vec::new();
  let mut i = 0;
  while i < bytes.len() {
    if bytes[i] == b'_' && (i == 0 || !ident(bytes[i - 1])) {
      let mut end = i + 1;
      while end < bytes.len() && ident(bytes[end]) {
        end += 1;
      }
      if end > i + 1 {
        tokens.push((i, end));
      }
      i = end;
    } else {
      i += 1;
    }
  }
  let names: BTreeSet<&str> = tokens.iter().filter(|&&(s, _)| s > 0 && bytes[s - 1] == b'.').map(|&(s, e)| &source[s..e]).collect();
  assert!(names.contains("_state") && names.contains("_readableStreamController"), "web-streams-polyfill: its internal fields were not found");
  let mut out = String::with_capacity(source.len() + names.len() * 64);
  let mut copied = 0;
  let mut unknown = Vec::new();
  for &(start, end) in &tokens {
    let name = &source[start..end];
    if !names.contains(name) {
      continue;
    }
    let before = bytes[start - 1];
    let after = bytes.get(end).copied().unwrap_or(b' ');
    let (from, to, text) = match (before, after) {
      (b'.', _) => (start - 1, end, format!("[$wb{name}]")),
      (b'"', b'"') => (start - 1, end + 1, format!("$wb{name}")),
      (b'{' | b',', b':') | (b'}', b'(') => (start, end, format!("[$wb{name}]")),
      _ => {
        unknown.push(source[start.saturating_sub(20)..(end + 20).min(source.len())].to_string());
        continue;
      }
    };
    out.push_str(&source[copied..from]);
    out.push_str(&text);
    copied = to;
  }
  out.push_str(&source[copied..]);
  assert!(unknown.is_empty(), "web-streams-polyfill: a field is used in a way hide_stream_slots does not rewrite: {unknown:?}");
  let strict = UMD_FACTORY_START;
  assert_eq!(out.matches(strict).count(), 1, "web-streams-polyfill: the UMD factory's start was not found");
  let declarations: Vec<String> = names.iter().map(|n| format!("$wb{n}=Symbol({:?})", &n[1..])).collect();
  let slots: Vec<String> = names.iter().map(|n| format!("{n}:$wb{n}")).collect();
  let head = format!("{strict}const {};e.slots=Object.freeze({{__proto__:null,{}}});", declarations.join(","), slots.join(","));
  out.replacen(strict, &head, 1)
}

/// Lets the bootstrap see each stream, reader and writer web-streams-polyfill makes, however it
/// makes it (constructor, `tee()`, a TransformStream's sides): `exports.onCreate(object)` is
/// called, when set, before the object's fields are (src/js/97_compat.js sets it before
/// workers_api_getters_setters_on_prototype's date, to give them workerd's own attributes). The
/// places are the polyfill's initialisers, found by their first field assignments (after
/// `hide_stream_slots`); each must occur exactly once or the build fails.
fn hook_stream_creation(source: &str) -> String {
  let hooks = [
    // InitializeReadableStream, InitializeWritableStream
    (r#"{e[$wb_state]="readable",e[$wb_reader]=void 0"#, r#"{$wb_onCreate(e),e[$wb_state]="readable",e[$wb_reader]=void 0"#),
    (r#"{e[$wb_state]="writable",e[$wb_storedError]=void 0"#, r#"{$wb_onCreate(e),e[$wb_state]="writable",e[$wb_storedError]=void 0"#),
    // InitializeTransformStream (its first statement after a nested function; the readable side
    // is made first, see `workerd_stream_schedule`)
    (r#"}e[$wb_readable]=Fr("#, r#"}$wb_onCreate(e);e[$wb_readable]=Fr("#),
    // ReadableStreamReaderGenericInitialize (both readers), the writer's constructor
    (r#"{e[$wb_ownerReadableStream]=t,t[$wb_reader]=e,"#, r#"{$wb_onCreate(e),e[$wb_ownerReadableStream]=t,t[$wb_reader]=e,"#),
    (r#"this[$wb_ownerWritableStream]=e,e[$wb_writer]=this;"#, r#"$wb_onCreate(this),this[$wb_ownerWritableStream]=e,e[$wb_writer]=this;"#),
  ];
  let mut out = source.to_string();
  for (text, replacement) in hooks {
    assert_eq!(out.matches(text).count(), 1, "web-streams-polyfill: the place to hook {text:?} was not found exactly once");
    out = out.replacen(text, replacement, 1);
  }
  let strict = UMD_FACTORY_START;
  out.replacen(strict, &format!("{strict}const $wb_onCreate=o=>{{const f=e.onCreate;if(f!==void 0)f(o)}};"), 1)
}

/// Embeds every `.js` file under `dir` as `<declaration>: &[(&str, &str)]` of (path relative to
/// `dir` without `.js`, source).
fn embed_folder(out: &mut String, dir: &Path, declaration: &str) {
  println!("cargo:rerun-if-changed={}", dir.display());
  let mut files = Vec::new();
  collect(dir, dir, ".js", &mut files);
  out.push_str(&format!("{declaration}: &[(&str, &str)] = &[\n"));
  for (name, path) in files {
    println!("cargo:rerun-if-changed={}", path.display());
    out.push_str(&format!("  ({:?}, include_str!({:?})),\n", name.trim_end_matches(".js"), path.display().to_string()));
  }
  out.push_str("];\n");
}

/// The files under `dir` whose names end with `suffix`, as (path relative to `root` with `/`,
/// path), sorted; folders of packages' tests, examples and builds are skipped.
fn collect(root: &Path, dir: &Path, suffix: &str, out: &mut Vec<(String, PathBuf)>) {
  let Ok(entries) = fs::read_dir(dir) else { return };
  let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
  paths.sort();
  for path in paths {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if path.is_dir() {
      if !matches!(name.as_str(), "node_modules" | "test" | "tests" | "bench" | "benchmarks" | "example" | "examples" | "build" | "dist" | ".github") {
        collect(root, &path, suffix, out);
      }
    } else if name.ends_with(suffix) {
      let rel = path.strip_prefix(root).unwrap().components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/");
      out.push((rel, path));
    }
  }
}

/// npm packages the `node:` modules are built on, embedded file by file (CommonJS, loaded by
/// src/js/95_node.js): (package, entry file relative to the package).
const VENDORED: &[(&str, &str)] = &[
  ("buffer", "index.js"),
  ("base64-js", "index.js"),
  ("ieee754", "index.js"),
  ("events", "events.js"),
  ("readable-stream", "lib/ours/browser.js"),
  ("string_decoder", "lib/string_decoder.js"),
  ("safe-buffer", "index.js"),
  ("path-browserify", "index.js"),
];

/// `VENDOR_FILES` (path `<package>/<file>`, source) and `VENDOR_MAINS` (package, entry path).
fn vendored(out: &mut String) {
  let modules = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("node_modules");
  out.push_str("/// Files of the npm packages behind the `node:` modules, as (`<package>/<file>`, source).\npub const VENDOR_FILES: &[(&str, &str)] = &[\n");
  for (package, main) in VENDORED {
    let dir = modules.join(package);
    println!("cargo:rerun-if-changed={}", dir.display());
    if !dir.join(main).exists() {
      panic!("{} is missing: workerbox embeds the npm package {package:?} for nodejs_compat. Run `npm ci` first.", dir.join(main).display());
    }
    let mut files = Vec::new();
    collect(&dir, &dir, ".js", &mut files);
    for (rel, path) in files {
      out.push_str(&format!("  (\"{package}/{rel}\", include_str!({:?})),\n", path.display().to_string()));
    }
  }
  out.push_str("];\n/// Each vendored package's entry file, as (package, `<package>/<file>`).\npub const VENDOR_MAINS: &[(&str, &str)] = &[\n");
  for (package, main) in VENDORED {
    out.push_str(&format!("  ({package:?}, \"{package}/{main}\"),\n"));
  }
  out.push_str("];\n");
}

/// `WORKERBOX_RUNTIME_SOURCES`: a hash of the Rust sources under `src/runtime/`, part of the
/// startup snapshot's cache key (src/runtime/isolate/snapshot.rs). What the snapshot holds depends on
/// that code too (how the bootstrap is compiled and run), not only on the JS sources and the
/// package version, so a build that changes it must not reuse a snapshot saved by another.
fn runtime_sources_id() {
  use std::hash::Hasher;
  let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap()).join("src/runtime");
  println!("cargo:rerun-if-changed={}", root.display());
  let mut files = Vec::new();
  collect(&root, &root, ".rs", &mut files);
  // SipHash with fixed keys: the same sources give the same id on every build.
  #[allow(deprecated)]
  let mut hash = std::hash::SipHasher::new();
  for (name, path) in files {
    hash.write(name.as_bytes());
    hash.write(&fs::read(&path).unwrap());
  }
  println!("cargo:rustc-env=WORKERBOX_RUNTIME_SOURCES={:016x}", hash.finish());
}
