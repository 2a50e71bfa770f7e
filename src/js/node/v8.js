// node:v8 (enable_nodejs_v8_module; implied by nodejs_compat from 2026-03-17): workerd gives no
// view of the engine, so statistics are zeroes or empty and everything else (heap snapshots,
// flags, serialize/deserialize, promise hooks, coverage) throws ERR_METHOD_NOT_IMPLEMENTED.
const { notImplemented, notImplementedClass, notImplementedMethods } = require("node:internal/errors");

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
  getCppHeapStatistics: () => ({ committed_size_bytes: 0, resident_size_bytes: 0, used_size_bytes: 0, space_statistics: [], type_names: [], detail_level: "brief" }),
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
for (const name of ["writeHeapSnapshot", "getHeapSnapshot", "setFlagsFromString", "isStringOneByteRepresentation", "setHeapSnapshotNearHeapLimit",
  "serialize", "deserialize", "queryObjects", "takeCoverage", "stopCoverage"]) {
  module.exports[name] = notImplemented(name);
}
