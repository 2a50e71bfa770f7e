// What the embedded npm packages get for `require("abort-controller")`: the runtime's own
// AbortController and AbortSignal.
module.exports = { AbortController, AbortSignal, default: AbortController };
