// send_email bindings (sendEmail(), wrangler's `send_email`) with EmailMessage from
// cloudflare:email: the envelope checked against destination_address /
// allowed_destination_addresses / allowed_sender_addresses and the message's headers checked, with
// the messages Miniflare 4.20260426.0 gave for the same sends (noted beside them); sent mail kept
// as .eml files in a folder (the worker's log names each) or in memory; message builder objects.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sendEmail, dispatch } from "../index.js";
import { evalInWorker, useWorker } from "./helpers.mjs";

const RAW = "From: me@example.com\\r\\nTo: to@example.com\\r\\nMessage-ID: <x@example.com>\\r\\nSubject: hi\\r\\n\\r\\nbody";

test("send() checks the envelope and the message as Miniflare does", async (t) => {
  const EMAIL = sendEmail({ allowedDestinationAddresses: ["to@example.com"] });
  const out = await evalInWorker(t, `const { EmailMessage } = await import("cloudflare:email");
    const out = [];
    const t = async (f) => { try { out.push(await f()); } catch (e) { out.push(e.name + ": " + e.message); } };
    const raw = "${RAW}";
    await t(async () => Object.keys(await env.EMAIL.send(new EmailMessage("me@example.com", "to@example.com", raw))));
    await t(() => env.EMAIL.send(new EmailMessage("me@example.com", "other@example.com", raw)));
    await t(() => env.EMAIL.send(new EmailMessage("you@example.com", "to@example.com", raw)));
    await t(() => env.EMAIL.send(new EmailMessage("me@example.com", "to@example.com", "From: me@example.com\\r\\nTo: to@example.com\\r\\n\\r\\nx")));
    await t(() => env.EMAIL.send(new EmailMessage("me@example.com", "to@example.com", "Received: x\\r\\nFrom: me@example.com\\r\\nMessage-ID: <y@e>\\r\\n\\r\\nx")));
    await t(async () => (await env.EMAIL.send(new EmailMessage("me@example.com", "to@example.com", "From: Me <me@example.com>\\r\\nMessage-ID: <y@e>\\r\\n\\r\\nx"))).messageId);
    await t(() => env.EMAIL.send({ nothing: true }));
    const m = new EmailMessage("a@b", "c@d", "raw");
    out.push(m.from, m.to);
    await t(() => new EmailMessage("a@b"));
    return out;`, { bindings: { EMAIL } });
  assert.deepEqual(out.slice(0, 5), [
    ["messageId"],
    "Error: email to other@example.com not allowed",
    "Error: From: header does not match mail from", // the sender is allowed (no list), the header names another
    "Error: invalid message-id",
    "Error: invalid headers set",
  ]);
  // Production's shape: <36 alphanumerics@the sender's domain>.
  assert.match(out[5], /^<[A-Za-z0-9]{36}@example\.com>$/);
  assert.equal(out[6], "TypeError: send(): the message must be an EmailMessage (from cloudflare:email) or { from, to, subject, text?, html? }");
  assert.deepEqual(out.slice(7), ["a@b", "c@d", "TypeError: Failed to construct 'EmailMessage': 3 arguments required, but only 1 present."]);
  const sent = EMAIL.sent();
  assert.deepEqual(sent.map((m) => [m.from, m.to, m.file]), [["me@example.com", "to@example.com", null], ["me@example.com", "to@example.com", null]]);
  assert.equal(sent[0].raw.toString(), RAW.replaceAll("\\r\\n", "\r\n"));
});

test("with dir, each message is an .eml file and the worker's log names it; a streamed raw message too", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "workerbox-email-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const EMAIL = sendEmail({ destinationAddress: "ops@example.com", allowedSenderAddresses: ["app@example.com"], dir });
  const logs = [];
  const worker = await useWorker(t, { bindings: { EMAIL }, onLog: (level, message) => logs.push(message), script: `import { EmailMessage } from "cloudflare:email";
    export default { async fetch(request, env) {
      const to = new URL(request.url).searchParams.get("to");
      const from = new URL(request.url).searchParams.get("from") ?? "app@example.com";
      const text = "From: " + from + "\\r\\nTo: " + to + "\\r\\nMessage-ID: <1@example.com>\\r\\nSubject: alert\\r\\n\\r\\ndisk full\\r\\n";
      const raw = new ReadableStream({ start(c) { const bytes = new TextEncoder().encode(text); c.enqueue(bytes.slice(0, 10)); c.enqueue(bytes.slice(10)); c.close(); } });
      try {
        const { messageId } = await env.EMAIL.send(new EmailMessage(from, to, raw));
        return new Response(messageId);
      } catch (e) { return new Response(e.message, { status: 400 }); }
    } };` });
  const ok = await dispatch(worker, "http://localhost/?to=ops@example.com");
  assert.equal(ok.status, 200);
  const files = fs.readdirSync(dir);
  assert.equal(files.length, 1);
  assert.match(files[0], /^[0-9a-f-]{36}\.eml$/);
  assert.equal(fs.readFileSync(path.join(dir, files[0]), "utf8"), "From: app@example.com\r\nTo: ops@example.com\r\nMessage-ID: <1@example.com>\r\nSubject: alert\r\n\r\ndisk full\r\n");
  assert.ok(logs.some((line) => line === `send_email binding called with the following message:\n  Email: ${path.join(dir, files[0])}`), logs.join("\n"));
  assert.equal(EMAIL.sent()[0].file, path.join(dir, files[0]));
  const wrongTo = await dispatch(worker, "http://localhost/?to=ceo@example.com");
  assert.equal(await wrongTo.text(), "email to ceo@example.com not allowed");
  const wrongFrom = await dispatch(worker, "http://localhost/?to=ops@example.com&from=evil@example.com");
  assert.equal(await wrongFrom.text(), "email from evil@example.com not allowed");
  assert.equal(fs.readdirSync(dir).length, 1, "refused messages are not written");
});

test("a message builder object is checked and written as a MIME message", async (t) => {
  const EMAIL = sendEmail({ allowedDestinationAddresses: ["a@example.com", "b@example.com"] });
  const out = await evalInWorker(t, `const out = [];
    const t = async (f) => { try { out.push(await f()); } catch (e) { out.push(e.name + ": " + e.message); } };
    await t(async () => typeof (await env.EMAIL.send({ from: { name: "App", email: "app@example.com" }, to: ["a@example.com", "b@example.com"], subject: "Hello", text: "plain body", html: "<p>html</p>", attachments: [{ filename: "r.txt", type: "text/plain", disposition: "attachment", content: "report" }] })).messageId);
    await t(() => env.EMAIL.send({ from: "app@example.com", to: ["a@example.com", "c@example.com"], subject: "x", text: "y" }));
    await t(() => env.EMAIL.send({ from: 5, to: "a@example.com" }));
    return out;`, { bindings: { EMAIL } });
  assert.deepEqual(out, ["string", "Error: email to c@example.com not allowed", "TypeError: send(): from must be an address string or { name, email }"]);
  const [message] = EMAIL.sent();
  assert.equal(message.from, "app@example.com");
  assert.equal(message.to, "a@example.com, b@example.com");
  const raw = message.raw.toString();
  assert.match(raw, /^From: "App" <app@example\.com>\r\nTo: a@example\.com, b@example\.com\r\n/);
  assert.match(raw, /\r\nSubject: Hello\r\n/);
  assert.ok(raw.includes(`Message-ID: ${message.messageId}\r\n`));
  assert.ok(raw.includes(Buffer.from("plain body").toString("base64")));
  assert.ok(raw.includes(Buffer.from("<p>html</p>").toString("base64")));
  assert.ok(raw.includes('Content-Disposition: attachment; filename="r.txt"'));
});

test("sendEmail() options are checked as wrangler checks send_email entries", () => {
  assert.throws(() => sendEmail({ destinationAddress: "a@b", allowedDestinationAddresses: ["a@b"] }), /give either destinationAddress or allowedDestinationAddresses, not both/);
  assert.throws(() => sendEmail({ allowedDestinationAddresses: "a@b" }), { name: "TypeError", message: "sendEmail(): allowedDestinationAddresses must be an array of addresses" });
  assert.throws(() => sendEmail({ dir: "" }), /dir must be a folder path/);
});
