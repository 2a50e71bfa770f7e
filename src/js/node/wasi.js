// node:wasi (enable_nodejs_wasi_module; implied by nodejs_compat from 2025-12-04): as in
// workerd, the WASI class exists but constructing it throws ERR_METHOD_NOT_IMPLEMENTED.
const { notImplementedClass } = require("node:internal/errors");
module.exports = { WASI: notImplementedClass("WASI") };
