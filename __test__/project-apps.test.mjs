// Real libraries served by workerbox dev: a partyserver chat (WebSocket rooms on SQLite Durable
// Objects with hibernation): two clients in one room see each other's messages, and a client
// that joins later gets the history, kept across a restart of the dev server.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { startDevServer } from "../lib/project/index.js";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** The fixture in a temporary folder, with this repository's node_modules (partyserver) beside it. */
function partyChat(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-party-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(root, "__test__", "fixtures", "party-chat"), dir, { recursive: true });
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}

/** A client in room `room` (partyserver's /parties/<party>/<room>), collecting what it gets. */
function join(server, room, name) {
  return new Promise((resolve, reject) => {
    const url = new URL(`/parties/chat/${room}?_pk=${name}`, server.url.replace("http", "ws"));
    const ws = new WebSocket(url);
    const got = [];
    ws.on("message", (data) => got.push(JSON.parse(data.toString())));
    ws.once("open", () => resolve({ ws, got }));
    ws.once("error", reject);
    ws.once("unexpected-response", (req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

async function until(check, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${check}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("a partyserver chat: messages reach everyone in the room, history survives a restart", async (t) => {
  const dir = partyChat(t);
  const lines = [];
  let server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line) });
  const ada = await join(server, "lobby", "ada");
  const lin = await join(server, "lobby", "lin");
  const other = await join(server, "elsewhere", "max");
  ada.ws.send("hello from ada");
  await until(() => ada.got.length === 2 && lin.got.length === 2);
  assert.deepEqual(ada.got, [{ type: "history", history: [] }, { type: "message", from: "ada", text: "hello from ada" }]);
  assert.deepEqual(lin.got[1], { type: "message", from: "ada", text: "hello from ada" });
  lin.ws.send("and lin");
  await until(() => ada.got.length === 3);
  assert.equal(ada.got[2].text, "and lin");
  assert.deepEqual(other.got, [{ type: "history", history: [] }], "another room hears nothing");
  for (const client of [ada, lin, other]) client.ws.close();
  await server.close();

  // A new dev server (a new worker) on the same state folder: the room's SQLite history is there.
  server = await startDevServer(dir, { port: 0, watch: false, log: (line) => lines.push(line) });
  t.after(() => server.close());
  const late = await join(server, "lobby", "late");
  await until(() => late.got.length === 1);
  assert.deepEqual(late.got[0], { type: "history", history: ["hello from ada", "and lin"] });
  late.ws.close();
  assert.ok(lines.filter((line) => /GET \/parties\/chat\/lobby 101/.test(line)).length >= 3, lines.join("\n"));
});
