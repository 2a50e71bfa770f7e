// node:os (enable_nodejs_os_module; implied by nodejs_compat from 2025-09-15): workerd's fixed
// answers for a Worker, which has no host to describe — linux/x64, one CPU it does not list,
// zero memory and load, /tmp/ as home and temp dir — and Linux's os.constants.

const { Buffer } = require("node:buffer");
const osConstants = require("node:internal/os_constants");
const { invalidArgType } = require("node:internal/errors");

function checkNumber(value, name) {
  if (typeof value !== "number") throw invalidArgType(name, "number", value);
}

const constants = Object.freeze(Object.assign(Object.create(null), { UV_UDP_REUSEADDR: 4 }, osConstants));

const os = {
  EOL: "\n",
  devNull: "/dev/null",
  constants,
  availableParallelism: () => 1,
  arch: () => "x64",
  cpus: () => [],
  endianness: () => "LE",
  freemem: () => 0,
  totalmem: () => 0,
  getPriority(pid) {
    if (pid !== undefined) checkNumber(pid, "pid");
    return 0;
  },
  setPriority(pid, priority) {
    checkNumber(pid, "pid");
    if (priority !== undefined) checkNumber(priority, "priority");
  },
  homedir: () => "/tmp/",
  tmpdir: () => "/tmp/",
  hostname: () => "localhost",
  loadavg: () => [0, 0, 0],
  machine: () => "x86_64",
  networkInterfaces: () => ({}),
  platform: () => "linux",
  release: () => "",
  version: () => "",
  type: () => "Linux",
  uptime: () => 0,
  userInfo(options = {}) {
    if (typeof options !== "object" || options === null) throw invalidArgType("options", "object", options);
    const { encoding = null } = options;
    if (encoding !== null && encoding !== "buffer" && !Buffer.isEncoding(encoding)) {
      const error = new TypeError(`The property 'options.encoding' must be a valid encoding. Received ${JSON.stringify(encoding)}`);
      error.code = "ERR_INVALID_ARG_VALUE";
      throw error;
    }
    return {};
  },
};
module.exports = os;
