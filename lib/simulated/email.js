"use strict";
// send_email bindings as wrangler dev simulates them: `sendEmail({ destinationAddress,
// allowedDestinationAddresses, allowedSenderAddresses, dir })` is the binding a worker gets as
// `env.EMAIL`. `send(new EmailMessage(from, to, raw))` is checked as Miniflare checks it (the
// envelope against the allowed addresses, then the message: it must have a Message-ID, a From
// header naming the envelope's sender and no Received header) and kept: as `<dir>/<uuid>.eml`,
// whose path the worker's log names, or in memory without `dir`. A message builder object
// (`send({ from, to, subject, text, html, attachments })`) is checked the same way and written
// as a MIME message. `sent()` lists what was sent, from Node.

// node:crypto loads on first use, not with the runtime (~3-5 ms of a start).
const crypto = { randomBytes: (n) => require("node:crypto").randomBytes(n), randomUUID: () => require("node:crypto").randomUUID() };
const fs = require("node:fs");
const path = require("node:path");
const { Binding } = require("../bindings.js");

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A Message-ID shaped as production's send_email answers: `<36 alphanumerics@sender's domain>`. */
function messageIdFor(sender) {
  const id = Array.from(crypto.randomBytes(36), (b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join("");
  return `<${id}@${sender.slice(sender.lastIndexOf("@") + 1)}>`;
}

/** The header fields of a raw message, unfolded: [[lowercased name, value], …]; null when it has none. */
function parseHeaders(bytes) {
  const text = Buffer.from(bytes).toString("latin1");
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? text : text.slice(0, end);
  const fields = [];
  for (const line of head.split(/\r?\n/)) {
    if (line === "") continue;
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields[fields.length - 1][1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0 || !/^[\x21-\x39\x3b-\x7e]+$/.test(line.slice(0, colon).trim())) return null;
    fields.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  return fields.length > 0 ? fields : null;
}

/** The bare address of an address field (`Name <a@b>` or `a@b`). */
function bareAddress(value) {
  const angle = /<([^>]*)>\s*$/.exec(value);
  return (angle ? angle[1] : value).trim();
}

function formatAddress({ name, email }) {
  return name ? `"${name.replace(/["\\]/g, "\\$&")}" <${email}>` : email;
}

/** A MIME message from a message builder (text and/or HTML, attachments). */
function compose(builder, messageId) {
  const lines = [`From: ${formatAddress(builder.from)}`, `To: ${builder.to.map(formatAddress).join(", ")}`];
  if (builder.cc) lines.push(`Cc: ${builder.cc.map(formatAddress).join(", ")}`);
  if (builder.replyTo) lines.push(`Reply-To: ${formatAddress(builder.replyTo)}`);
  lines.push(`Subject: ${builder.subject}`, `Message-ID: ${messageId}`, `Date: ${new Date().toUTCString()}`, "MIME-Version: 1.0");
  for (const [name, value] of Object.entries(builder.headers ?? {})) lines.push(`${name}: ${value}`);
  const parts = [];
  if (builder.text !== undefined) parts.push(["text/plain; charset=utf-8", Buffer.from(builder.text, "utf8"), []]);
  if (builder.html !== undefined) parts.push(["text/html; charset=utf-8", Buffer.from(builder.html, "utf8"), []]);
  for (const a of builder.attachments ?? []) {
    const content = a.content.text !== undefined ? Buffer.from(a.content.text, "utf8") : Buffer.from(a.content.base64 ?? a.content, "base64");
    const extra = [`Content-Disposition: ${a.disposition}; filename="${a.filename.replace(/"/g, "")}"`];
    if (a.contentId) extra.push(`Content-ID: <${a.contentId}>`);
    parts.push([a.type, content, extra]);
  }
  const boundary = `workerbox-${crypto.randomBytes(12).toString("hex")}`;
  lines.push(`Content-Type: multipart/mixed; boundary="${boundary}"`, "");
  for (const [type, content, extra] of parts) {
    lines.push(`--${boundary}`, `Content-Type: ${type}`, "Content-Transfer-Encoding: base64", ...extra, "", ...(content.toString("base64").match(/.{1,76}/g) ?? []), "");
  }
  lines.push(`--${boundary}--`, "");
  return Buffer.from(lines.join("\r\n"), "utf8");
}

class SendEmailBinding extends Binding {
  #sent = [];

  constructor(options) {
    super("send_email", null);
    this.destinationAddress = options.destinationAddress;
    this.allowedDestinationAddresses = options.allowedDestinationAddresses;
    this.allowedSenderAddresses = options.allowedSenderAddresses;
    this.dir = options.dir === undefined ? undefined : path.resolve(options.dir);
  }

  #checkRecipient(to) {
    if (this.destinationAddress !== undefined && to !== this.destinationAddress) throw new Error(`email to ${to} not allowed`);
    if (this.allowedDestinationAddresses !== undefined && !this.allowedDestinationAddresses.includes(to)) throw new Error(`email to ${to} not allowed`);
  }

  #checkSender(from) {
    if (this.allowedSenderAddresses !== undefined && !this.allowedSenderAddresses.includes(from)) throw new Error(`email from ${from} not allowed`);
  }

  /** Keeps a sent message; the answer names where, for the worker's log line. */
  async #keep(from, to, raw, messageId) {
    let file = null;
    if (this.dir !== undefined) {
      await fs.promises.mkdir(this.dir, { recursive: true });
      file = path.join(this.dir, `${crypto.randomUUID()}.eml`);
      await fs.promises.writeFile(file, raw);
    }
    this.#sent.push({ from, to, messageId, file, raw: Buffer.from(raw) });
    return { json: JSON.stringify({ messageId, file: file === null ? "Email: kept in memory (no dir)" : `Email: ${file}` }) };
  }

  async answer(method, args, bytes) {
    if (method === "send") {
      const { from, to } = args;
      this.#checkSender(from);
      this.#checkRecipient(to);
      const raw = bytes ?? Buffer.alloc(0);
      const fields = parseHeaders(raw);
      if (fields === null) throw new Error("could not parse email: no header fields");
      const header = (name) => fields.find(([n]) => n === name)?.[1];
      if (header("message-id") === undefined) throw new Error("invalid message-id");
      if (header("from") === undefined || bareAddress(header("from")) !== from) throw new Error("From: header does not match mail from");
      if (header("received") !== undefined) throw new Error("invalid headers set");
      return this.#keep(from, to, raw, messageIdFor(from));
    }
    if (method === "build") {
      this.#checkSender(args.from.email);
      for (const recipient of args.to) this.#checkRecipient(recipient.email);
      const messageId = messageIdFor(args.from.email);
      return this.#keep(args.from.email, args.to.map((r) => r.email).join(", "), compose(args, messageId), messageId);
    }
    throw new TypeError(`unknown send_email operation "${method}"`);
  }

  /** The messages sent so far, oldest first: `{ from, to, messageId, file, raw }` (raw: a Buffer). */
  sent() {
    return this.#sent.map((m) => ({ ...m }));
  }
}

function addressList(value, where) {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw new TypeError(`${where} must be an array of addresses`);
  return [...value];
}

/** A send_email binding: `sendEmail({ destinationAddress?, allowedDestinationAddresses?, allowedSenderAddresses?, dir? })`. */
function sendEmail(options = {}) {
  if (options === null || typeof options !== "object") throw new TypeError("sendEmail(): options must be an object");
  const { destinationAddress, dir } = options;
  if (destinationAddress !== undefined && typeof destinationAddress !== "string") throw new TypeError("sendEmail(): destinationAddress must be an address string");
  if (destinationAddress !== undefined && options.allowedDestinationAddresses !== undefined) throw new TypeError("sendEmail(): give either destinationAddress or allowedDestinationAddresses, not both (as wrangler requires)");
  if (dir !== undefined && (typeof dir !== "string" || dir === "")) throw new TypeError("sendEmail(): dir must be a folder path");
  return new SendEmailBinding({
    destinationAddress,
    allowedDestinationAddresses: addressList(options.allowedDestinationAddresses, "sendEmail(): allowedDestinationAddresses"),
    allowedSenderAddresses: addressList(options.allowedSenderAddresses, "sendEmail(): allowedSenderAddresses"),
    dir,
  });
}

module.exports = { sendEmail, SendEmailBinding, parseHeaders };
