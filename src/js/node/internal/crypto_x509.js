// node:crypto's X509Certificate and Certificate (SPKAC). A certificate is read natively
// (webcrypto/node_x509.rs, the x509-cert crate) into its parts; this file prints them as
// OpenSSL does for Node (names one attribute a line, "Sep  3 21:40:37 2022 GMT" dates, colon-
// separated fingerprints), checks hosts, e-mail addresses and IPs against the subject and its
// alternative names, and verifies signatures with node:crypto's verify(). SPKAC structures
// (Netscape's SignedPublicKeyAndChallenge) are read by a small DER walk.
const { Buffer } = require("node:buffer");
const { nodeError, invalidArgType, invalidArgValue, native } = require("node:internal/crypto_util");
const keys = require("node:internal/crypto_keys");

const kParts = Symbol("kParts");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
// Certificate signature algorithms: OID -> digest (null: the key's own, Ed25519).
const SIGNATURE_DIGESTS = {
  "1.2.840.113549.1.1.4": "md5",
  "1.2.840.113549.1.1.5": "sha1",
  "1.2.840.113549.1.1.14": "sha224",
  "1.2.840.113549.1.1.11": "sha256",
  "1.2.840.113549.1.1.12": "sha384",
  "1.2.840.113549.1.1.13": "sha512",
  "1.2.840.10045.4.1": "sha1",
  "1.2.840.10045.4.3.1": "sha224",
  "1.2.840.10045.4.3.2": "sha256",
  "1.2.840.10045.4.3.3": "sha384",
  "1.2.840.10045.4.3.4": "sha512",
  "1.3.101.112": null,
};

const isBytes = (value) => ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
const bytesOf = (value) => (value instanceof ArrayBuffer ? Buffer.from(value) : Buffer.from(value.buffer, value.byteOffset, value.byteLength));

function certificateDer(input) {
  if (typeof input !== "string" && !isBytes(input)) throw invalidArgType("buffer", "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", input);
  const bytes = typeof input === "string" ? Buffer.from(input) : bytesOf(input);
  const text = bytes.toString("latin1");
  const match = /-----BEGIN (?:X509 |TRUSTED )?CERTIFICATE-----([\s\S]*?)-----END (?:X509 |TRUSTED )?CERTIFICATE-----/.exec(text);
  if (match !== null) {
    const body = match[1].replace(/\s+/g, "");
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw invalidCertificate();
    return Buffer.from(body, "base64");
  }
  return Buffer.from(bytes);
}

function invalidCertificate() {
  return nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The argument 'buffer' is not a valid certificate");
}

const hex = (bytes, separator = "") => Array.from(bytes, (b) => b.toString(16).padStart(2, "0").toUpperCase()).join(separator);

function opensslDate(seconds) {
  const d = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${d.getUTCFullYear()} GMT`;
}

function nameObject(pairs) {
  const object = {};
  for (const [key, value] of pairs) {
    if (object[key] === undefined) object[key] = value;
    else if (Array.isArray(object[key])) object[key].push(value);
    else object[key] = [object[key], value];
  }
  return object;
}

function fingerprint(raw, algorithm) {
  const id = ops.nodeHashCreate(algorithm);
  ops.nodeHashUpdate(id, raw);
  return hex(ops.nodeHashDigest(id), ":");
}

function checkOptions(options) {
  if (options === undefined) return {};
  if (options === null || typeof options !== "object") throw invalidArgType("options", "of type object", options);
  for (const name of ["wildcards", "partialWildcards", "multiLabelWildcards", "singleLabelSubdomains"]) {
    if (options[name] !== undefined && typeof options[name] !== "boolean") throw invalidArgType(`options.${name}`, "of type boolean", options[name]);
  }
  if (options.subject !== undefined && !["default", "always", "never"].includes(options.subject)) {
    throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.subject' must be one of: 'default', 'always', 'never'. Received ${String(options.subject)}`);
  }
  return options;
}

function checkName(value, name) {
  if (typeof value !== "string") throw invalidArgType(name, "of type string", value);
  if (value.includes("\0")) throw invalidArgValue(name, value, "must not contain null bytes");
}

/** A DNS name pattern of the certificate against `host` (leftmost-label wildcards only). */
function hostMatches(pattern, host, wildcards) {
  const p = pattern.toLowerCase().replace(/\.$/, "");
  const h = host.toLowerCase().replace(/\.$/, "");
  if (p === h) return true;
  if (!wildcards || !p.startsWith("*.")) return false;
  const dot = h.indexOf(".");
  return dot > 0 && h.slice(dot + 1) === p.slice(2) && p.split(".").length > 2;
}

class X509Certificate {
  constructor(buffer) {
    const raw = certificateDer(buffer);
    let parts;
    try {
      parts = native("node", "x509Parse", { data: raw });
    } catch {
      throw invalidCertificate();
    }
    const [subject, issuer, notBefore, notAfter, serial, spki, ca, altNames, infoAccess, extKeyUsage, tbs, signatureAlgorithm, signature, subjectDer, issuerDer, subjectKeyId, authorityKeyId] = parts;
    this[kParts] = { raw, subject, issuer, notBefore, notAfter, serial, spki, ca, altNames, infoAccess, extKeyUsage, tbs, signatureAlgorithm, signature, subjectDer, issuerDer, subjectKeyId, authorityKeyId };
  }

  get subject() {
    return this[kParts].subject.map(([key, value]) => `${key}=${value}`).join("\n");
  }
  get issuer() {
    return this[kParts].issuer.map(([key, value]) => `${key}=${value}`).join("\n");
  }
  get subjectAltName() {
    const names = this[kParts].altNames;
    return names.length === 0 ? undefined : names.map(([kind, value]) => `${kind}:${value}`).join(", ");
  }
  get infoAccess() {
    const entries = this[kParts].infoAccess;
    return entries.length === 0 ? undefined : entries.map(([method, kind, value]) => `${method} - ${kind}:${value}\n`).join("");
  }
  get ca() {
    return this[kParts].ca;
  }
  get keyUsage() {
    const usage = this[kParts].extKeyUsage;
    return usage === false ? undefined : [...usage];
  }
  get validFrom() {
    return opensslDate(this[kParts].notBefore);
  }
  get validTo() {
    return opensslDate(this[kParts].notAfter);
  }
  get validFromDate() {
    return new Date(this[kParts].notBefore * 1000);
  }
  get validToDate() {
    return new Date(this[kParts].notAfter * 1000);
  }
  get serialNumber() {
    return hex(this[kParts].serial);
  }
  get fingerprint() {
    return fingerprint(this[kParts].raw, "sha1");
  }
  get fingerprint256() {
    return fingerprint(this[kParts].raw, "sha256");
  }
  get fingerprint512() {
    return fingerprint(this[kParts].raw, "sha512");
  }
  get raw() {
    return Buffer.from(this[kParts].raw);
  }
  get publicKey() {
    return keys.createPublicKey({ key: Buffer.from(this[kParts].spki), format: "der", type: "spki" });
  }
  get issuerCertificate() {
    return undefined;
  }

  checkHost(name, options) {
    checkName(name, "name");
    const { wildcards = true, subject = "default" } = checkOptions(options);
    const dns = this[kParts].altNames.filter(([kind]) => kind === "DNS").map(([, value]) => value);
    for (const pattern of subject === "always" ? [] : dns) if (hostMatches(pattern, name, wildcards)) return pattern;
    if (subject === "always" || (subject === "default" && dns.length === 0)) {
      for (const [key, value] of this[kParts].subject) if (key === "CN" && hostMatches(value, name, wildcards)) return value;
    }
    return undefined;
  }

  checkEmail(email, options) {
    checkName(email, "email");
    const { subject = "default" } = checkOptions(options);
    const emails = this[kParts].altNames.filter(([kind]) => kind === "email").map(([, value]) => value);
    for (const value of subject === "always" ? [] : emails) if (value.toLowerCase() === email.toLowerCase()) return value;
    if (subject === "always" || (subject === "default" && emails.length === 0)) {
      for (const [key, value] of this[kParts].subject) if (key === "emailAddress" && value.toLowerCase() === email.toLowerCase()) return value;
    }
    return undefined;
  }

  checkIP(ip) {
    if (typeof ip !== "string") throw invalidArgType("ip", "of type string", ip);
    const { isIP } = require("node:net");
    if (!isIP(ip)) throw invalidArgValue("ip", ip, "must be a valid IP address");
    const normalize = (value) => (value.includes(":") ? new URL(`http://[${value}]`).hostname : value);
    const wanted = normalize(ip);
    for (const [kind, value] of this[kParts].altNames) {
      if (kind === "IP Address" && normalize(value) === wanted) return ip;
    }
    return undefined;
  }

  checkIssued(otherCert) {
    if (!(otherCert instanceof X509Certificate)) throw invalidArgType("otherCert", "an instance of X509Certificate", otherCert);
    const mine = this[kParts];
    const theirs = otherCert[kParts];
    if (Buffer.compare(Buffer.from(mine.issuerDer), Buffer.from(theirs.subjectDer)) !== 0) return false;
    if (mine.authorityKeyId.length > 0 && theirs.subjectKeyId.length > 0 && Buffer.compare(Buffer.from(mine.authorityKeyId), Buffer.from(theirs.subjectKeyId)) !== 0) return false;
    return true;
  }

  checkPrivateKey(privateKey) {
    if (!(privateKey instanceof keys.KeyObject) || privateKey.type !== "private") throw invalidArgType("privateKey", "an instance of KeyObject of type private", privateKey);
    const spki = keys.createPublicKey(privateKey).export({ format: "der", type: "spki" });
    return Buffer.compare(spki, Buffer.from(this[kParts].spki)) === 0;
  }

  verify(publicKey) {
    if (!(publicKey instanceof keys.KeyObject) || publicKey.type !== "public") throw invalidArgType("publicKey", "an instance of KeyObject of type public", publicKey);
    const { signatureAlgorithm, tbs, signature } = this[kParts];
    const digest = SIGNATURE_DIGESTS[signatureAlgorithm];
    if (digest === undefined) return false;
    try {
      return require("node:crypto").verify(digest, Buffer.from(tbs), publicKey, Buffer.from(signature));
    } catch {
      return false;
    }
  }

  toString() {
    const base64 = Buffer.from(this[kParts].raw).toString("base64").replace(/.{64}/g, "$&\n").replace(/\n$/, "");
    return `-----BEGIN CERTIFICATE-----\n${base64}\n-----END CERTIFICATE-----\n`;
  }
  toJSON() {
    return this.toString();
  }

  toLegacyObject() {
    const parts = this[kParts];
    const object = { subject: nameObject(parts.subject), issuer: nameObject(parts.issuer) };
    if (parts.altNames.length > 0) object.subjectaltname = this.subjectAltName;
    if (parts.infoAccess.length > 0) {
      object.infoAccess = {};
      for (const [method, kind, value] of parts.infoAccess) (object.infoAccess[`${method} - ${kind}`] ??= []).push(value);
    }
    object.ca = parts.ca;
    const key = this.publicKey;
    if (key.asymmetricKeyType === "rsa") {
      const jwk = key.export({ format: "jwk" });
      object.modulus = hex(Buffer.from(jwk.n, "base64url"));
      object.bits = key.asymmetricKeyDetails.modulusLength;
      object.exponent = `0x${key.asymmetricKeyDetails.publicExponent.toString(16)}`;
    } else if (key.asymmetricKeyType === "ec") {
      const jwk = key.export({ format: "jwk" });
      object.pubkey = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x, "base64url"), Buffer.from(jwk.y, "base64url")]);
      object.bits = Buffer.from(jwk.x, "base64url").length * 8;
      object.asn1Curve = key.asymmetricKeyDetails.namedCurve;
      object.nistCurve = jwk.crv;
    }
    object.valid_from = this.validFrom;
    object.valid_to = this.validTo;
    object.fingerprint = this.fingerprint;
    object.fingerprint256 = this.fingerprint256;
    object.fingerprint512 = this.fingerprint512;
    if (parts.extKeyUsage !== false) object.ext_key_usage = [...parts.extKeyUsage];
    object.serialNumber = this.serialNumber;
    object.raw = this.raw;
    return object;
  }

  get [Symbol.toStringTag]() {
    return "X509Certificate";
  }
}

// --- SPKAC ---------------------------------------------------------------------------------

/** The elements of the DER value at `offset`: { tag, start (of the contents), end }. */
function derElement(bytes, offset) {
  if (offset + 2 > bytes.length) return undefined;
  const tag = bytes[offset];
  let length = bytes[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > bytes.length) return undefined;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
    start += count;
  }
  if (start + length > bytes.length) return undefined;
  return { tag, start, end: start + length, offset };
}

/** { spki, challenge, signed, algorithm, signature } of a base64 SPKAC, or undefined. */
function readSpkac(input) {
  if (typeof input !== "string" && !isBytes(input)) throw invalidArgType("spkac", "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", input);
  const der = Buffer.from(typeof input === "string" ? input : bytesOf(input).toString("latin1"), "base64");
  const outer = derElement(der, 0);
  if (outer?.tag !== 0x30) return undefined;
  const signed = derElement(der, outer.start);
  if (signed?.tag !== 0x30) return undefined;
  const spki = derElement(der, signed.start);
  if (spki?.tag !== 0x30) return undefined;
  const challenge = derElement(der, spki.end);
  if (challenge?.tag !== 0x16) return undefined;
  const algorithm = derElement(der, signed.end);
  if (algorithm?.tag !== 0x30) return undefined;
  const oid = derElement(der, algorithm.start);
  const signature = derElement(der, algorithm.end);
  if (oid?.tag !== 0x06 || signature?.tag !== 0x03) return undefined;
  return {
    spki: der.subarray(spki.offset, spki.end),
    challenge: der.subarray(challenge.start, challenge.end),
    signed: der.subarray(signed.offset, signed.end),
    oid: der.subarray(oid.start, oid.end),
    signature: der.subarray(signature.start + 1, signature.end),
  };
}

// The OIDs SPKACs are signed with, by their DER contents.
const SPKAC_DIGESTS = { "2a864886f70d010104": "md5", "2a864886f70d010105": "sha1", "2a864886f70d01010b": "sha256", "2a864886f70d01010c": "sha384", "2a864886f70d01010d": "sha512" };

function Certificate() {
  if (!(this instanceof Certificate)) return new Certificate();
}

function exportPublicKey(spkac) {
  const parts = readSpkac(spkac);
  if (parts === undefined) return Buffer.alloc(0);
  try {
    return Buffer.from(keys.createPublicKey({ key: parts.spki, format: "der", type: "spki" }).export({ format: "pem", type: "spki" }));
  } catch {
    return Buffer.alloc(0);
  }
}

function exportChallenge(spkac) {
  const parts = readSpkac(spkac);
  return parts === undefined ? Buffer.alloc(0) : Buffer.from(parts.challenge);
}

/** As in workerd (BoringSSL in FIPS mode), MD5-signed SPKACs do not verify. */
function verifySpkac(spkac) {
  const parts = readSpkac(spkac);
  if (parts === undefined) return false;
  const digest = SPKAC_DIGESTS[parts.oid.toString("hex")];
  if (digest === undefined || digest === "md5") return false;
  try {
    const key = keys.createPublicKey({ key: parts.spki, format: "der", type: "spki" });
    return require("node:crypto").verify(digest, parts.signed, key, parts.signature);
  } catch {
    return false;
  }
}

Object.assign(Certificate, { exportPublicKey, exportChallenge, verifySpkac });
Object.assign(Certificate.prototype, { exportPublicKey, exportChallenge, verifySpkac });

exports.X509Certificate = X509Certificate;
exports.Certificate = Certificate;
