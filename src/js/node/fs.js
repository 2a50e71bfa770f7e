// node:fs (enable_nodejs_fs_module; implied by nodejs_compat from 2025-09-15). workerd gives
// Workers a virtual filesystem (the bundle read-only under /bundle, a per-request /tmp);
// workerbox has none yet, so importing node:fs works and fs.constants, F_OK…X_OK and
// existsSync() (always false) are real, but every file operation fails with
// ERR_METHOD_NOT_IMPLEMENTED: thrown by the *Sync functions, passed to the callback of the
// callback ones, and a rejection from fs.promises (node:fs/promises). See README.
const { notImplementedError, notImplementedClass, invalidArgType } = require("node:internal/errors");

const constants = Object.freeze({"UV_FS_SYMLINK_DIR":1, "UV_FS_SYMLINK_JUNCTION":2, "O_RDONLY":0, "O_WRONLY":1, "O_RDWR":2, "UV_DIRENT_UNKNOWN":0, 
  "UV_DIRENT_FILE":1, "UV_DIRENT_DIR":2, "UV_DIRENT_LINK":3, "UV_DIRENT_FIFO":4, "UV_DIRENT_SOCKET":5, 
  "UV_DIRENT_CHAR":6, "UV_DIRENT_BLOCK":7, "EXTENSIONLESS_FORMAT_JAVASCRIPT":0, "EXTENSIONLESS_FORMAT_WASM":1, 
  "S_IFMT":61440, "S_IFREG":32768, "S_IFDIR":16384, "S_IFCHR":8192, "S_IFBLK":24576, "S_IFIFO":4096, "S_IFLNK":40960, 
  "S_IFSOCK":49152, "O_CREAT":64, "O_EXCL":128, "UV_FS_O_FILEMAP":0, "O_NOCTTY":256, "O_TRUNC":512, "O_APPEND":1024, 
  "O_DIRECTORY":65536, "O_NOATIME":262144, "O_NOFOLLOW":131072, "O_SYNC":1052672, "O_DSYNC":4096, "O_DIRECT":16384, 
  "O_NONBLOCK":2048, "S_IRWXU":448, "S_IRUSR":256, "S_IWUSR":128, "S_IXUSR":64, "S_IRWXG":56, "S_IRGRP":32, "S_IWGRP":16, 
  "S_IXGRP":8, "S_IRWXO":7, "S_IROTH":4, "S_IWOTH":2, "S_IXOTH":1, "F_OK":0, "R_OK":4, "W_OK":2, "X_OK":1, 
  "UV_FS_COPYFILE_EXCL":1, "COPYFILE_EXCL":1, "UV_FS_COPYFILE_FICLONE":2, "COPYFILE_FICLONE":2, 
  "UV_FS_COPYFILE_FICLONE_FORCE":4, "COPYFILE_FICLONE_FORCE":4});

const CALLBACK = ["access", "appendFile", "chmod", "chown", "close", "copyFile", "cp", "fchmod", "fchown", "fdatasync", "fstat",
  "fsync", "ftruncate", "futimes", "glob", "lchmod", "lchown", "link", "lstat", "lutimes", "mkdir", "mkdtemp", "open",
  "opendir", "read", "readFile", "readdir", "readlink", "readv", "realpath", "rename", "rm", "rmdir", "stat", "statfs",
  "symlink", "truncate", "unlink", "utimes", "write", "writeFile", "writev"];
const SYNC = ["accessSync", "appendFileSync", "chmodSync", "chownSync", "closeSync", "copyFileSync", "cpSync", "fchmodSync",
  "fchownSync", "fdatasyncSync", "fstatSync", "fsyncSync", "ftruncateSync", "futimesSync", "globSync", "lchmodSync",
  "lchownSync", "linkSync", "lstatSync", "lutimesSync", "mkdirSync", "mkdtempSync", "openSync", "opendirSync",
  "readFileSync", "readSync", "readdirSync", "readlinkSync", "readvSync", "realpathSync", "renameSync", "rmSync",
  "rmdirSync", "statSync", "statfsSync", "symlinkSync", "truncateSync", "unlinkSync", "utimesSync", "writeFileSync",
  "writeSync", "writevSync"];
const PROMISES = ["access", "appendFile", "chmod", "chown", "copyFile", "cp", "lchmod", "lchown", "link", "lstat", "lutimes", "mkdir",
  "mkdtemp", "open", "opendir", "readFile", "readdir", "readlink", "realpath", "rename", "rm", "rmdir", "stat", "statfs",
  "symlink", "truncate", "unlink", "utimes", "writeFile"];

function callbackStub(name) {
  return {
    [name](...args) {
      const callback = args.at(-1);
      if (typeof callback !== "function") throw invalidArgType("cb", "function", callback);
      const error = notImplementedError(`fs.${name}`);
      queueMicrotask(() => callback(error));
    },
  }[name];
}
function syncStub(name) {
  return { [name]() { throw notImplementedError(`fs.${name}`); } }[name];
}
function promiseStub(name) {
  return { async [name]() { throw notImplementedError(`fs.promises.${name}`); } }[name];
}

const promises = { constants };
for (const name of PROMISES) promises[name] = promiseStub(name);
promises.watch = syncStub("promises.watch");

const fs = {
  constants,
  F_OK: constants.F_OK,
  R_OK: constants.R_OK,
  W_OK: constants.W_OK,
  X_OK: constants.X_OK,
  promises,
  existsSync: () => false,
  exists(path, callback) {
    queueMicrotask(() => callback(false));
  },
  Stats: notImplementedClass("Stats"),
  Dirent: notImplementedClass("Dirent"),
  Dir: notImplementedClass("Dir"),
  ReadStream: notImplementedClass("ReadStream"),
  WriteStream: notImplementedClass("WriteStream"),
};
fs.FileReadStream = fs.ReadStream;
fs.FileWriteStream = fs.WriteStream;
for (const name of CALLBACK) fs[name] = callbackStub(name);
for (const name of SYNC) fs[name] = syncStub(name);
for (const name of ["createReadStream", "createWriteStream", "watch", "watchFile", "unwatchFile", "openAsBlob"]) fs[name] = syncStub(name);
module.exports = fs;
