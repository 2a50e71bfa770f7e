// Loopback servers and trust settings the socket tests share: the self-signed test certificate
// in fixtures/sockets/, `listen()` (a Node server on a free loopback port, closed with its
// connections when the test ends), a STARTTLS echo server, and `trustTestCertificate()` (sets
// or clears NODE_EXTRA_CA_CERTS for one test, which workers created after it read, restoring it).
import fs from "node:fs";
import path from "node:path";
import tls from "node:tls";
import net from "node:net";
import { fileURLToPath } from "node:url";

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "sockets");
export const CERT_FILE = path.join(FIXTURES, "cert.pem");
export const KEY = fs.readFileSync(path.join(FIXTURES, "key.pem"));
export const CERT = fs.readFileSync(CERT_FILE);

/** Listens on a free loopback port for the rest of the test; returns the port. */
export async function listen(t, server) {
  const sockets = new Set();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("secureConnection", (socket) => socket.on("error", () => {}));
  server.on("tlsClientError", () => {});
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise((resolve) => server.close(resolve));
  });
  return server.address().port;
}

/** NODE_EXTRA_CA_CERTS for the rest of the test: the test certificate, or none (`trusted` false). */
export function trustTestCertificate(t, trusted = true) {
  const previous = process.env.NODE_EXTRA_CA_CERTS;
  t.after(() => (previous === undefined ? delete process.env.NODE_EXTRA_CA_CERTS : (process.env.NODE_EXTRA_CA_CERTS = previous)));
  if (trusted) process.env.NODE_EXTRA_CA_CERTS = CERT_FILE;
  else delete process.env.NODE_EXTRA_CA_CERTS;
}

/** A server answering "STARTTLS\r\n" with "OK\r\n", then echoing over TLS with the test certificate; its port. */
export function starttlsEchoServer(t) {
  return listen(t, net.createServer((socket) => {
    socket.once("data", (data) => {
      if (String(data) !== "STARTTLS\r\n") return socket.end("NO\r\n");
      socket.write("OK\r\n", () => {
        const secure = new tls.TLSSocket(socket, { isServer: true, key: KEY, cert: CERT });
        secure.on("error", () => {});
        secure.pipe(secure);
      });
    });
  }));
}
