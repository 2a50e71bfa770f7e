// node:_stream_wrap (enable_nodejs_stream_wrap_module; implied by nodejs_compat from
// 2026-01-29): Node's internal JSStreamSocket; it wraps a socket handle, which Workers do not
// have, so constructing it throws ERR_METHOD_NOT_IMPLEMENTED.
const { Duplex } = require("node:stream");
const { notImplementedClass } = require("node:internal/errors");
module.exports = notImplementedClass("JSStreamSocket", Duplex);
