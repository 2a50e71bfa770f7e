// The fuller `process` of enable_nodejs_process_v2 (on with nodejs_compat from 2025-09-15), as
// workerd's public process object has it: Node's version (workerd reports v22.19.0 and empty
// strings for the other `versions`), a fixed title/argv/pid/arch, cwd/chdir, hrtime, uptime 0,
// emitWarning, zeroed memory and resource usage, stdout/stderr that write to the worker's log,
// an empty stdin, and stubs that throw ERR_METHOD_NOT_IMPLEMENTED where workerd's do.
// `install(process)` adds all of it to node:process's object.

const { notImplemented, notImplementedError, invalidArgType } = require("node:internal/errors");

const NODE_VERSION = "22.19.0";
const VERSION_KEYS = ["node", "v8", "modules", "zlib", "brotli", "zstd", "ares", "napi", "llhttp", "nghttp2", "acorn", "ada", "simdutf", "nbytes", "ncrypto", "uvwasi", "uv", "openssl", "sqlite", "icu", "undici", "simdjson", "unicode", "cldr", "tz", "cjs_module_lexer", "amaro", "merve"];

// The working directory belongs to the request (the global scope has its own), as in workerd:
// every request starts in /bundle whatever the others or the top level changed it to.
const cwds = new Map();
const cwdKey = () => internals.flowEvent?.() ?? "global";
const currentCwd = () => cwds.get(cwdKey()) ?? "/bundle";

function resolveDir(path) {
  const parts = path.startsWith("/") ? [] : currentCwd().split("/").filter(Boolean);
  for (const part of path.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== "." && part !== "") parts.push(part);
  }
  return `/${parts.join("/")}`;
}

/** workerd's chdir errors: the message without the code, the path without its leading "/". */
function chdirError(code, text, path) {
  const error = new Error(path === undefined ? text : `${text}, chdir '${path}'`);
  error.code = code;
  error.syscall = "chdir";
  if (path !== undefined) error.path = path;
  return error;
}

function chdir(directory) {
  if (typeof directory !== "string") throw invalidArgType("directory", "string", directory);
  if (directory === "") throw chdirError("ENOENT", "no such file or directory");
  const target = resolveDir(directory);
  if (directory.length > 4096) throw chdirError("ENAMETOOLONG", "name too long", target.slice(1));
  const vfs = require("node:internal/vfs");
  let found;
  try {
    found = vfs.lookup(target, "chdir");
  } catch (error) {
    if (error?.code === "ENOTDIR") throw chdirError("ENOTDIR", "not a directory", target.slice(1));
    throw chdirError("ENOENT", "no such file or directory", target.slice(1));
  }
  if (found.node === undefined) throw chdirError("ENOENT", "no such file or directory", target.slice(1));
  if (found.node.kind !== "dir") throw chdirError("ENOTDIR", "not a directory", target.slice(1));
  const key = cwdKey();
  if (target === "/bundle") cwds.delete(key);
  else {
    // A request's entry stays until it goes back to /bundle; keep the table small regardless.
    if (cwds.size >= 1000 && !cwds.has(key)) cwds.delete(cwds.keys().next().value);
    cwds.set(key, target);
  }
}

function hrtime(time) {
  if (time !== undefined) {
    if (!Array.isArray(time)) throw invalidArgType("time", "tuple of integers", time);
    if (time.length !== 2) {
      const error = new RangeError(`The value of "time" is out of range. It must be 2. Received ${time.length}`);
      error.code = "ERR_OUT_OF_RANGE";
      throw error;
    }
  }
  const nanos = BigInt(Date.now()) * 1_000_000n;
  let seconds = Number(nanos / 1_000_000_000n);
  let rest = Number(nanos % 1_000_000_000n);
  if (time) {
    seconds -= time[0];
    rest -= time[1];
    if (rest < 0) {
      seconds -= 1;
      rest += 1e9;
    }
  }
  return [seconds, rest];
}
hrtime.bigint = function bigint() {
  return BigInt(Date.now()) * 1_000_000n;
};

function umask(mask) {
  if (mask !== undefined) {
    if (typeof mask === "string") {
      if (!/^[0-7]+$/.test(mask)) throw invalidMask(mask);
      mask = parseInt(mask, 8);
    } else if (typeof mask !== "number") {
      throw invalidArgType("mask", "number", mask);
    }
    if (mask < 0 || mask > 0xffffffff || !Number.isInteger(mask)) throw invalidMask(mask);
  }
  return 18; // Node's default umask (0o022); workers cannot change it
}

function invalidMask(mask) {
  const error = new TypeError(`The argument 'mask' must be a 32-bit unsigned integer or an octal string. Received ${JSON.stringify(mask)}`);
  error.code = "ERR_INVALID_ARG_VALUE";
  return error;
}

function eperm(syscall) {
  const error = new Error(`EPERM: operation not permitted, ${syscall}`);
  error.code = "EPERM";
  error.syscall = syscall;
  return error;
}

function emitWarning(warning, options, codeOrCtor, maybeCtor) {
  let type = "Warning";
  let code;
  let detail;
  let ctor;
  if (typeof options === "object" && options !== null && !Array.isArray(options)) {
    if (options.type) type = options.type;
    if (options.code) code = options.code;
    if (options.detail) detail = options.detail;
    ctor = options.ctor;
  } else if (typeof options === "string") {
    type = options;
    if (typeof codeOrCtor === "string") {
      code = codeOrCtor;
      if (typeof maybeCtor === "function") ctor = maybeCtor;
      else if (maybeCtor !== undefined) throw invalidArgType("ctor", "function", maybeCtor);
    } else if (typeof codeOrCtor === "function") ctor = codeOrCtor;
    else if (codeOrCtor !== undefined) throw invalidArgType("ctor", "function", codeOrCtor);
  } else if (typeof options === "function") ctor = options;
  else if (options !== undefined) throw invalidArgType("options", "object", options);
  let error;
  if (typeof warning === "string") {
    error = new (ctor || Error)(warning);
    error.name = type;
  } else if (warning instanceof Error) {
    error = warning;
    if (type !== "Warning") error.name = type;
  } else {
    throw invalidArgType("warning", "string or an instance of Error", warning);
  }
  if (code) error.code = code;
  if (typeof detail === "string") error.detail = detail;
  Error.captureStackTrace?.(error, ctor || emitWarning);
  queueMicrotask(() => process.emit("warning", error));
}

let process;

// stdout/stderr write to the worker's log (one log line per write, trailing newline dropped);
// stdin (below) is an empty fs.ReadStream. Made on first access, as they need node:stream.
function logStream(fd, log) {
  const { Writable } = require("node:stream");
  const stream = new Writable({
    write(chunk, encoding, callback) {
      const text = typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
      log(text.endsWith("\n") ? text.slice(0, -1) : text);
      callback();
    },
  });
  Object.assign(stream, { fd, readable: false, _type: "fs", _isStdio: true }); // isTTY undefined, as workerd's
  return stream;
}

const lazy = (object, name, make) => internals.lazyProperty(object, name, make, { enumerable: true });

const zeroes = (names) => Object.fromEntries(names.map((n) => [n, 0]));

function install(target) {
  process = target;
  const versions = Object.fromEntries(VERSION_KEYS.map((key) => [key, key === "node" ? NODE_VERSION : ""]));
  Object.assign(process, {
    version: `v${NODE_VERSION}`,
    versions,
    title: "workerd",
    argv: ["workerd"],
    argv0: "workerd",
    execArgv: [],
    execPath: "",
    arch: "x64",
    pid: 1,
    ppid: 0,
    exitCode: undefined,
    allowedNodeEnvironmentFlags: new Set(),
    release: { name: "node", lts: true, sourceUrl: "", headersUrl: "" },
    channel: null,
    connected: false,
    debugPort: 0,
    noDeprecation: false,
    traceDeprecation: false,
    throwDeprecation: false,
    sourceMapsEnabled: false,
    domain: null,
    moduleLoadList: [],
    _preload_modules: [],
    _exiting: false,
    // Node's IPC and listener fields, there (as workerd has them) but undefined.
    _channel: undefined,
    _disconnect: undefined,
    _handleQueue: undefined,
    _pendingMessage: undefined,
    _send: undefined,
    _maxListeners: undefined,
    config: {
      target_defaults: { default_configuration: "Release" },
      variables: { host_arch: "x64", target_arch: "x64", node_byteorder: "little", node_module_version: 127, napi_build_version: "9", v8_enable_i18n_support: 1, v8_enable_webassembly: 1, node_use_openssl: true, shlib_suffix: "so" },
    },
    cwd: () => currentCwd(),
    chdir,
    umask,
    hrtime,
    uptime: () => 0,
    emitWarning,
    abort: () => process.exit(1),
    reallyExit: (code) => process.exit(code || 0),
    memoryUsage: () => zeroes(["rss", "heapTotal", "heapUsed", "external", "arrayBuffers"]),
    resourceUsage: () =>
      zeroes(["userCPUTime", "systemCPUTime", "maxRSS", "sharedMemorySize", "unsharedDataSize", "unsharedStackSize", "minorPageFault", "majorPageFault", "swappedOut", "fsRead", "fsWrite", "ipcSent", "ipcReceived", "signalsCount", "voluntaryContextSwitches", "involuntaryContextSwitches"]),
    constrainedMemory: () => 0,
    availableMemory: () => 0,
    getegid: () => 0,
    getgid: () => 0,
    geteuid: () => 0,
    getuid: () => 0,
    getgroups: () => [0],
    setegid: (id) => { if (id !== 0) throw eperm("setegid"); },
    setgid: (id) => { if (id !== 0) throw eperm("setgid"); },
    seteuid: (id) => { if (id !== 0) throw eperm("seteuid"); },
    setuid: (id) => { if (id !== 0) throw eperm("setuid"); },
    setgroups: () => { throw eperm("setgroups"); },
    initgroups: () => { throw eperm("initgroups"); },
    setSourceMapsEnabled() {},
    getSourceMapsSupport: () => ({ enabled: false, nodeModules: false, generatedCode: false }),
    ref() {},
    unref() {},
    send: () => false,
    _rawDebug: (...args) => console.log(...args),
    _getActiveRequests: () => [],
    _getActiveHandles: () => [],
    _fatalException: () => false,
    _tickCallback() {},
    _debugProcess() {},
    _debugEnd() {},
    _startProfilerIdleNotifier() {},
    _stopProfilerIdleNotifier() {},
    kill: notImplemented("process.kill"),
    _kill: notImplemented("process._kill"),
    binding: notImplemented("process.binding"),
    _linkedBinding: notImplemented("process._linkedBinding"),
    dlopen: notImplemented("process.dlopen"),
    execve: notImplemented("process.execve"),
    cpuUsage: notImplemented("process.cpuUsage"),
    threadCpuUsage: notImplemented("process.threadCpuUsage"),
    getActiveResourcesInfo: notImplemented("process.getActiveResourcesInfo"),
    setUncaughtExceptionCaptureCallback: notImplemented("process.setUncaughtExceptionCaptureCallback"),
    hasUncaughtExceptionCaptureCallback: notImplemented("process.hasUncaughtExceptionCaptureCallback"),
    /** KEY=value lines of a dotenv file (`.env` in the working directory by default) into process.env. */
    loadEnvFile(path = ".env") {
      const text = require("node:fs").readFileSync(path, "utf8");
      Object.assign(process.env, require("node:util").parseEnv(text));
    },
    permission: { has: notImplemented("process.permission.has") },
    finalization: {
      register: notImplemented("process.finalization.register"),
      registerBeforeExit: notImplemented("process.finalization.registerBeforeExit"),
      unregister: notImplemented("process.finalization.unregister"),
    },
    report: {
      compact: false, directory: "", filename: "", reportOnFatalError: false, reportOnSignal: false,
      reportOnUncaughtException: false, excludeNetwork: false, excludeEnv: false, signal: "SIGUSR2",
      getReport: () => ({}),
      writeReport: notImplemented("process.report.writeReport"),
    },
  });
  // process.assert (removed from Node 23): workerd keeps it until remove_nodejs_compat_eol_v23.
  if (!internals.compat?.enabled.includes("remove_nodejs_compat_eol_v23")) {
    process.assert = (value, message) => require("node:assert").ok(value, message);
  }
  lazy(process, "stdout", () => logStream(1, (line) => console.log(line)));
  lazy(process, "stderr", () => logStream(2, (line) => console.error(line)));
  // stdin: as workerd's, an fs.ReadStream of descriptor 0, which is always empty.
  lazy(process, "stdin", () => require("node:fs").createReadStream(null, { fd: 0, autoClose: false }));
  process.openStdin = () => process.stdin;
  // Node's unhandledRejection / rejectionHandled events, from the global events.
  let rejections = false;
  process.on("newListener", (name) => {
    if (rejections || (name !== "unhandledRejection" && name !== "rejectionHandled")) return;
    rejections = true;
    globalThis.addEventListener?.("unhandledrejection", (event) => process.emit("unhandledRejection", event.reason, event.promise));
    globalThis.addEventListener?.("rejectionhandled", (event) => process.emit("rejectionHandled", event.promise));
  });
  return process;
}

module.exports = { install, notImplementedError };
