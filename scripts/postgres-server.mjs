// A throwaway PostgreSQL server from Debian's `postgresql` binaries, for the tests and the bench
// that talk to a real database: a cluster made with initdb in a temp dir, started on a free
// loopback port (as the `postgres` user when run as root, since postgres refuses root), optionally
// with TLS from a given certificate, and stopped and removed by `stop()`. It owns nothing else.
//
//   import { postgresBin, startPostgres } from "../scripts/postgres-server.mjs";
//   const server = await startPostgres({ tls: { cert, key } });  // { port, url, base, dir, version, stop }
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { spawn, execFileSync } from "node:child_process";

/** The newest installed PostgreSQL's bin folder, or null. */
export function postgresBin() {
  const base = "/usr/lib/postgresql";
  const versions = fs.existsSync(base) ? fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, "bin", "initdb"))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], "bin") : null;
}

/** Why a test needing the server is skipped here, or false. */
export const POSTGRES_MISSING = postgresBin() === null ? "PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install -y postgresql)" : false;

const asRoot = () => process.getuid?.() === 0;
/** `[command, args]` running a server binary, as `postgres` when this process is root. */
const asServerUser = (command, args) => (asRoot() ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args]);

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster. `tls: { cert, key }` (PEM file paths) turns on `ssl`. Resolves to
 * `{ port, base, url, dir, version, stop }`: `base` is `postgresql://postgres@127.0.0.1:<port>`,
 * `url` the `postgres` database on it; `stop()` (async) shuts the server down and removes `dir`.
 */
export async function startPostgres({ tls = null, bin = postgresBin() } = {}) {
  if (bin === null) throw new Error(POSTGRES_MISSING);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-pg-"));
  const own = (...files) => asRoot() && execFileSync("chown", ["postgres", ...files]);
  const data = path.join(dir, "data");
  const settings = ["listen_addresses=127.0.0.1", "fsync=off"];
  let server = null;
  try {
    own(dir);
    execFileSync(...asServerUser(path.join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]), { stdio: "ignore" });
    if (tls) {
      // postgres wants the key private to its user.
      const cert = path.join(dir, "cert.pem");
      const key = path.join(dir, "key.pem");
      fs.copyFileSync(tls.cert, cert);
      fs.copyFileSync(tls.key, key);
      fs.chmodSync(key, 0o600);
      own(cert, key);
      settings.push("ssl=on", `ssl_cert_file=${cert}`, `ssl_key_file=${key}`);
    }
    const port = await freePort();
    const [command, args] = asServerUser(path.join(bin, "postgres"), ["-D", data, "-p", String(port), "-k", dir, ...settings.flatMap((s) => ["-c", s])]);
    server = spawn(command, args, { stdio: ["ignore", "ignore", "pipe"] });
    const exited = new Promise((resolve) => server.on("exit", resolve));
    let log = "";
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`postgres did not start in 20 s:\n${log}`)), 20_000);
      server.stderr.on("data", (chunk) => {
        log += chunk;
        if (log.includes("ready to accept connections")) {
          clearTimeout(timer);
          resolve();
        }
      });
      server.on("exit", (code) => reject(new Error(`postgres exited (${code}):\n${log}`)));
    });
    const base = `postgresql://postgres@127.0.0.1:${port}`;
    const stop = async () => {
      // pg_ctl signals the postmaster itself (a signal to runuser would not reach it).
      try {
        execFileSync(...asServerUser(path.join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w", "-t", "20"]), { stdio: "ignore" });
      } catch {
        server.kill("SIGKILL");
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      server.stderr.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return { port, base, url: `${base}/postgres`, dir, version: path.basename(path.dirname(bin)), stop };
  } catch (error) {
    server?.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
