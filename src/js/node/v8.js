// node:v8 (enable_nodejs_v8_module; implied by nodejs_compat from 2026-03-17): workerd gives no
// view of the engine, so statistics are zeroes or empty and everything else (heap snapshots,
// flags, serialize/deserialize, promise hooks, coverage) throws ERR_METHOD_NOT_IMPLEMENTED, after
// checking its arguments as workerd does.
const { notImplemented, notImplementedError, notImplementedClass, notImplementedMethods, invalidArgType } = require("node:internal/errors");

const zeroes = (names) => Object.fromEntries(names.map((n) => [n, 0]));
const Serializer = notImplementedClass("Serializer");
const Deserializer = notImplementedClass("Deserializer");

module.exports = {
  cachedDataVersionTag: () => 0,
  getHeapStatistics: () =>
    zeroes(["total_heap_size", "total_heap_size_executable", "total_physical_size", "total_available_size", "used_heap_size", "heap_size_limit",
      "malloced_memory", "peak_malloced_memory", "does_zap_garbage", "number_of_native_contexts", "number_of_detached_contexts",
      "total_global_handles_size", "used_global_handles_size", "external_memory", "total_allocated_bytes"]),
  getHeapSpaceStatistics: () => [],
  getHeapCodeStatistics: () => zeroes(["code_and_metadata_size", "bytecode_and_metadata_size", "external_script_source_size", "cpu_profiler_metadata_size"]),
  getCppHeapStatistics(type = "detailed") {
    if (type !== "brief" && type !== "detailed") throw argValue(`The argument 'type' must be one of: 'brief', 'detailed'. Received ${describe(type)}`);
    return { committed_size_bytes: 0, resident_size_bytes: 0, used_size_bytes: 0, space_statistics: [], type_names: [], detail_level: type };
  },
  Serializer,
  Deserializer,
  DefaultSerializer: notImplementedClass("DefaultSerializer", Serializer),
  DefaultDeserializer: notImplementedClass("DefaultDeserializer", Deserializer),
  GCProfiler: class GCProfiler {
    start() { throw require("node:internal/errors").notImplementedError("GCProfiler.start"); }
    stop() { throw require("node:internal/errors").notImplementedError("GCProfiler.stop"); }
  },
  promiseHooks: notImplementedMethods("promiseHooks", ["createHook", "onInit", "onBefore", "onAfter", "onSettled"]),
  startupSnapshot: notImplementedMethods("startupSnapshot", ["addSerializeCallback", "addDeserializeCallback", "setDeserializeMainFunction"], { isBuildingSnapshot: () => false }),
};
for (const name of ["serialize", "deserialize", "takeCoverage", "stopCoverage"]) {
  module.exports[name] = notImplemented(name);
}

// The rest check their arguments first, as workerd's do, and then throw ERR_METHOD_NOT_IMPLEMENTED.
const describe = (value) => (typeof value === "string" ? `'${value}'` : String(value));
const argValue = (message) => Object.assign(new TypeError(message), { code: "ERR_INVALID_ARG_VALUE" });
const checkType = (value, name, type) => {
  const ok = type === "object" ? value !== null && typeof value === "object" && !Array.isArray(value) : typeof value === type;
  if (!ok) throw invalidArgType(name, type === "object" ? "object" : type, value);
};
function snapshotOptions(options = {}) {
  checkType(options, "options", "object");
  const { exposeInternals = false, exposeNumericValues = false } = options;
  checkType(exposeInternals, "options.exposeInternals", "boolean");
  checkType(exposeNumericValues, "options.exposeNumericValues", "boolean");
}
const refuse = (name) => {
  throw notImplementedError(name);
};
Object.assign(module.exports, {
  writeHeapSnapshot(filename, options) {
    if (filename !== undefined) checkType(filename, "filename", "string");
    snapshotOptions(options);
    refuse("writeHeapSnapshot");
  },
  getHeapSnapshot(options) {
    snapshotOptions(options);
    refuse("getHeapSnapshot");
  },
  setFlagsFromString(flags) {
    checkType(flags, "flags", "string");
    refuse("setFlagsFromString");
  },
  isStringOneByteRepresentation(content) {
    checkType(content, "content", "string");
    refuse("isStringOneByteRepresentation");
  },
  setHeapSnapshotNearHeapLimit(limit) {
    checkType(limit, "limit", "number");
    if (!Number.isInteger(limit) || limit < 1 || limit > 4294967295) {
      throw Object.assign(new RangeError(`The value of "limit" is out of range. It must be ${Number.isInteger(limit) ? ">= 1 && <= 4294967295" : "an integer"}. Received ${limit}`), { code: "ERR_OUT_OF_RANGE" });
    }
    refuse("setHeapSnapshotNearHeapLimit");
  },
  queryObjects(ctor, options = {}) {
    checkType(ctor, "constructor", "function");
    checkType(options, "options", "object");
    const format = options.format || "count";
    if (format !== "count" && format !== "summary") throw argValue(`The argument 'options.format' is invalid. Received ${describe(format)}`);
    refuse("queryObjects");
  },
});
