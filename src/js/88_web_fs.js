// enable_web_file_system (experimental in workerd): the web file system's classes as globals
// and `navigator.storage`, for a worker with the flag. They live with node:fs's virtual
// filesystem (src/js/node/internal/webfs.js), loaded only for such a worker.

const previousPrepare = internals.prepareContext;
internals.prepareContext = (function prepareWebFsContext(memoryMb, compatJson) {
  previousPrepare(memoryMb, compatJson);
  if (!internals.feature("enable_web_file_system")) return;
  const webfs = internals.loadNodeModule("internal/webfs");
  for (const name of ["StorageManager", "FileSystemHandle", "FileSystemDirectoryHandle", "FileSystemFileHandle", "FileSystemWritableFileStream"]) {
    internals.defineGlobal(name, webfs[name]);
  }
  const navigator = globalThis.navigator;
  if (navigator !== undefined) {
    Object.defineProperty(Object.getPrototypeOf(navigator), "storage", { get: () => webfs.storage, enumerable: true, configurable: true });
  }
});
