// How workerd's node:stream differs from the vendored readable-stream 4.8.0 (Node 18's streams),
// as text patches applied when a file of it loads (`internals.nodeStreamPatches(v24)`, used by
// 95_node.js). In both modes, as workerd (whose streams are Node 22's and later): the default
// high water mark is 64 KiB, and the stream states keep their flags and most values behind
// accessors on their prototypes, so a state's own keys are the same as there
// (`Object.keys(writable._writableState)`, `JSON.stringify`, `console.log`). What
// `enable_streams_nodejs_v24_compat` changes is described above STREAMS_V24.

/**
 * enable_streams_nodejs_v24_compat (a flag with no date): node:stream as Node 24 has it, where
 * workerd's flag changes it, as patches to readable-stream 4.8.0 (Node 18's streams) made when
 * the file is loaded. An unknown `defaultEncoding` is an ERR_UNKNOWN_ENCODING; a pipe whose
 * destination's write() throws destroys the destination with that error; write() tells of
 * backpressure after `_write()` ran; write and end callbacks get `null` for no error, and end(cb)
 * on an errored stream gets its error; a Transform that pushed null calls back on the next tick.
 */
const UNKNOWN_ENCODING = `((encoding) => {
  if (encoding != null && !require("buffer").Buffer.isEncoding(encoding)) throw new (require("../../ours/errors").codes.ERR_UNKNOWN_ENCODING)(encoding);
  return encoding || "utf8";
})(options && options.defaultEncoding)`;
// Texts both patch sets change: a write's callback and the end callbacks.
const WRITE_CALLBACK = "    state.pendingcb--\n    cb()\n";
const FINISH_CALLBACKS = "    onfinishCallbacks[i]()\n";
const STREAMS_V24 = {
  "readable-stream/lib/internal/streams/readable.js": [
    ["this.defaultEncoding = (options && options.defaultEncoding) || 'utf8'", `this.defaultEncoding = ${UNKNOWN_ENCODING}`],
    ["    const ret = dest.write(chunk)\n", "    let ret\n    try {\n      ret = dest.write(chunk)\n    } catch (error) {\n      dest.destroy(error)\n      return\n    }\n"],
  ],
  "readable-stream/lib/internal/streams/writable.js": [
    ["this.defaultEncoding = (options && options.defaultEncoding) || 'utf8'", `this.defaultEncoding = ${UNKNOWN_ENCODING}`],
    ["  const ret = state.length < state.highWaterMark\n  // We must ensure that previous needDrain will not be reset to false.\n  if (!ret) state.needDrain = true\n", "  let ret\n"],
    ["  return ret && !state.errored && !state.destroyed\n}\nfunction doWrite", "  ret = state.length < state.highWaterMark || state.length === 0\n  if (!ret) state.needDrain = true\n  return ret && !state.errored && !state.destroyed\n}\nfunction doWrite"],
    [WRITE_CALLBACK, WRITE_CALLBACK.replace("cb()", "cb(null)")],
    ["    if (err || state.finished) {\n      process.nextTick(cb, err)\n    } else {", "    if (err) {\n      process.nextTick(cb, err)\n    } else if (state.errored) {\n      process.nextTick(cb, state.errored)\n    } else if (state.finished) {\n      process.nextTick(cb, null)\n    } else {"],
    [FINISH_CALLBACKS, FINISH_CALLBACKS.replace("()", "(null)")],
  ],
  "readable-stream/lib/internal/streams/transform.js": [
    ["    if (\n      wState.ended ||", "    if (rState.ended) {\n      require('process').nextTick(callback)\n      return\n    }\n    if (\n      wState.ended ||"],
  ],
};

/** Without the flag, as workerd (Node 22's streams there): a write callback gets `undefined`, an end callback `null`. */
const STREAMS_V22 = {
  "readable-stream/lib/internal/streams/writable.js": [
    [WRITE_CALLBACK, WRITE_CALLBACK.replace("cb()", "cb(undefined)")],
    [FINISH_CALLBACKS, FINISH_CALLBACKS.replace("()", "(null)")],
  ],
};

/**
 * The accessors a state's prototype gets (inserted as code into readable.js and writable.js):
 * `flags` are bits of `this[kState]` (enumerable or not: workerd's WritableState flags are
 * enumerable unless enable_streams_nodejs_v24_compat is on); each of `values` is
 * `[name, symbol, default]`, kept under its symbol only once it differs from its default, as Node
 * keeps them (an errored stream's state then has its own `Symbol(kErroredValue)`).
 */
const DEFINE_STATE_LAYOUT = `function defineStateLayout(proto, kState, flags, values, enumerable) {
  flags.forEach((name, index) => {
    const bit = 1 << index
    Object.defineProperty(proto, name, {
      __proto__: null,
      enumerable,
      configurable: true,
      get() {
        return (this[kState] & bit) !== 0
      },
      set(value) {
        if (value) this[kState] |= bit
        else this[kState] &= ~bit
      }
    })
  })
  for (const [name, key, fallback] of values) {
    Object.defineProperty(proto, name, {
      __proto__: null,
      configurable: true,
      get() {
        const value = this[key]
        return value === undefined ? fallback : value
      },
      set(value) {
        if (value !== fallback || this[key] !== undefined) this[key] = value
      }
    })
  }
}
`;
const WRITABLE_FLAGS = ["objectMode", "finalCalled", "needDrain", "ending", "ended", "finished", "destroyed", "decodeStrings", "writing", "sync", "bufferProcessing", "constructed", "prefinished", "errorEmitted", "emitClose", "autoDestroy", "closed", "closeEmitted", "allBuffers", "allNoop"];

/** The layout patches, and the 64 KiB default high water mark (Node 22's), in both modes. */
function layoutPatches(v24) {
  const values = (names) => `[${names.map(([name, symbol, fallback]) => `['${name}', Symbol('${symbol}'), ${fallback}]`).join(", ")}]`;
  return {
    "readable-stream/lib/internal/streams/state.js": [["let defaultHighWaterMarkBytes = 16 * 1024", "let defaultHighWaterMarkBytes = 64 * 1024"]],
    "readable-stream/lib/internal/streams/writable.js": [
      // An object-mode write keeps the encoding it was given (none: undefined), as Node 22's.
      [
        "    cb = encoding\n    encoding = state.defaultEncoding\n  } else {\n    if (!encoding) encoding = state.defaultEncoding\n",
        "    cb = encoding\n    encoding = state.objectMode ? null : state.defaultEncoding\n  } else {\n    if (!encoding) encoding = state.objectMode ? encoding : state.defaultEncoding\n",
      ],
      // Chunks wait behind chunks already buffered (those written before the stream was constructed
      // flush on a later tick, which another write may come before here, where nextTick is a microtask).
      [
        "  if (state.writing || state.corked || state.errored || !state.constructed) {\n",
        "  if (state.writing || state.corked || state.errored || !state.constructed || state.bufferedIndex < state.buffered.length) {\n",
      ],
      ["const kOnFinished = Symbol('kOnFinished')\n", `const kOnFinished = Symbol('kOnFinished')\nconst kState = Symbol('kState')\nconst kBufferedValue = Symbol('kBufferedValue')\n`],
      ["function WritableState(options, stream, isDuplex) {\n", "function WritableState(options, stream, isDuplex) {\n  this[kState] = 0\n"],
      ["function resetBuffer(state) {", `${DEFINE_STATE_LAYOUT}defineStateLayout(WritableState.prototype, kState, ${JSON.stringify(WRITABLE_FLAGS)}, ${values([["errored", "kErroredValue", "null"], ["defaultEncoding", "kDefaultEncodingValue", "'utf8'"], ["writecb", "kWriteCbValue", "null"], ["afterWriteTickInfo", "kAfterWriteTickInfoValue", "null"]])}, ${!v24})
Object.defineProperty(WritableState.prototype, 'buffered', {
  __proto__: null,
  configurable: true,
  get() {
    return this[kBufferedValue]
  },
  set(value) {
    this[kBufferedValue] = value
  }
})
function resetBuffer(state) {`],
    ],
    "readable-stream/lib/internal/streams/readable.js": [
      ["this.state", "this[kState]", true],
      ["state.state", "state[kState]", true],
      ["const kPaused = Symbol('kPaused')\n", "const kPaused = Symbol('kPaused')\nconst kState = Symbol('kState')\n"],
      ["  this[kPaused] = null\n", ""],
      ["      return this[kPaused] !== false\n", "      return this[kPaused] === true\n"],
      ["function ReadableState(options, stream, isDuplex) {", `${DEFINE_STATE_LAYOUT}defineStateLayout(ReadableState.prototype, kState, [], ${values([["flowing", "kFlowingValue", "null"], ["errored", "kErroredValue", "null"], ["defaultEncoding", "kDefaultEncodingValue", "'utf8'"], ["decoder", "kDecoderValue", "null"], ["encoding", "kEncodingValue", "null"]])}, false)
function ReadableState(options, stream, isDuplex) {`],
    ],
  };
}

/** Every patch for `v24` (enable_streams_nodejs_v24_compat) or not, by file. */
function patchSets(v24) {
  const sets = layoutPatches(v24);
  for (const [path, patches] of Object.entries(v24 ? STREAMS_V24 : STREAMS_V22)) sets[path] = [...(sets[path] ?? []), ...patches];
  return sets;
}
const PATCHES = [patchSets(false), patchSets(true)];
internals.nodeStreamPatches = (v24) => PATCHES[v24 ? 1 : 0];
