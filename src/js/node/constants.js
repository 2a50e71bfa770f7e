// node:constants (deprecated in Node): os.constants' errno, signal, priority and dlopen numbers
// flattened into one object, as workerd exports them.
const { errno, signals, priority, dlopen } = require("node:internal/os_constants");
module.exports = { ...dlopen, ...errno, ...signals, ...priority };
