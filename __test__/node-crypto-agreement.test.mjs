// node:crypto's key agreement, raw RSA, encrypted keys, DSA keys and the extra cipher modes,
// checked against this process's Node: DiffieHellman (RFC 3526 groups, given primes, exchanges
// with Node), ECDH (secrets with Node's keys, point conversion), privateEncrypt/publicDecrypt,
// PKCS #8 with a passphrase both ways, OpenSSL's legacy encrypted PEM, DSA key details, AES-ECB/
// OFB and ChaCha20-Poly1305 ciphertexts, and HKDF/PBKDF2 over digests crypto.subtle lacks.
import { test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import { dispatch } from "../index.js";
import { useWorker, collectKeyJobs } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

// The self-signed RSA certificate node-crypto.test.mjs reads too.
const CERTIFICATE = fs.readFileSync(new URL("./fixtures/self-signed-cert.pem", import.meta.url), "utf8");

const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const dsa = crypto.generateKeyPairSync("dsa", { modulusLength: 2048, divisorLength: 256 });
collectKeyJobs();
const nodeDh = crypto.getDiffieHellman("modp14");
nodeDh.generateKeys();
const nodeEcdh = crypto.createECDH("prime256v1");
nodeEcdh.generateKeys();

const INPUT = {
  nodeDhPublic: nodeDh.getPublicKey("hex"),
  nodeEcdhPublic: nodeEcdh.getPublicKey("hex"),
  nodeEcdhCompressed: nodeEcdh.getPublicKey("hex", "compressed"),
  rsaPrivate: rsa.privateKey.export({ format: "pem", type: "pkcs8" }),
  rsaPublic: rsa.publicKey.export({ format: "pem", type: "spki" }),
  rsaLegacyEncrypted: rsa.privateKey.export({ format: "pem", type: "pkcs1", cipher: "aes-256-cbc", passphrase: "legacy" }),
  rsaPkcs8Encrypted: rsa.privateKey.export({ format: "pem", type: "pkcs8", cipher: "aes-128-cbc", passphrase: "modern" }),
  dsaPrivate: dsa.privateKey.export({ format: "pem", type: "pkcs8" }),
  dsaPublic: dsa.publicKey.export({ format: "pem", type: "spki" }),
  signedByNode: crypto.privateEncrypt(rsa.privateKey, Buffer.from("from node")).toString("base64"),
};

const WORKER = `import c from "node:crypto";
import { Buffer as B } from "node:buffer";
export default { async fetch(request) {
  const input = await request.json();
  const error = (f) => { try { f(); return "no error"; } catch (e) { return e.name + ": " + e.message; } };
  const dh = c.getDiffieHellman("modp14");
  dh.generateKeys();
  const ecdh = c.createECDH("prime256v1");
  ecdh.generateKeys();
  const given = c.createDiffieHellman(c.getDiffieHellman("modp14").getPrime(), 5);
  const key = B.alloc(32, 7);
  const iv = B.alloc(16, 9);
  const text = "seventeen bytes!!" + "and then some more to cross blocks";
  const seal = (alg, ivBytes) => {
    const cipher = c.createCipheriv(alg, key.subarray(0, alg.includes("128") ? 16 : 32), ivBytes);
    if (alg === "chacha20-poly1305") cipher.setAAD(B.from("aad"));
    const out = B.concat([cipher.update(text.slice(0, 5), "utf8"), cipher.update(text.slice(5), "utf8"), cipher.final()]).toString("hex");
    return alg === "chacha20-poly1305" ? [out, cipher.getAuthTag().toString("hex")] : out;
  };
  const dsaKey = c.createPrivateKey(input.dsaPrivate);
  const exported = c.createPrivateKey(input.rsaPrivate).export({ format: "pem", type: "pkcs8", cipher: "aes-256-cbc", passphrase: "from worker" });
  return Response.json({
    modp14: dh.getPrime("hex"),
    generator: dh.getGenerator("hex"),
    dhPublic: dh.getPublicKey("hex"),
    dhPrivate: dh.getPrivateKey("hex"),
    dhSecretWithNode: dh.computeSecret(input.nodeDhPublic, "hex", "hex"),
    givenGenerator: given.getGenerator("hex"),
    groupHasNoSetters: typeof dh.setPrivateKey,
    unknownGroup: error(() => c.getDiffieHellman("modp1")),
    ecdhPublic: ecdh.getPublicKey("hex"),
    ecdhPrivate: ecdh.getPrivateKey("hex"),
    ecdhSecretWithNode: ecdh.computeSecret(input.nodeEcdhPublic, "hex", "hex"),
    ecdhCompressedSecret: ecdh.computeSecret(input.nodeEcdhCompressed, "hex", "hex"),
    converted: c.ECDH.convertKey(input.nodeEcdhCompressed, "prime256v1", "hex", "hex", "uncompressed"),
    badPoint: error(() => ecdh.computeSecret(B.from([4, 1, 2, 3]))),
    publicDecrypted: c.publicDecrypt(input.rsaPublic, B.from(input.signedByNode, "base64")).toString(),
    privateEncrypted: c.privateEncrypt(input.rsaPrivate, B.from("from the worker")).toString("base64"),
    legacy: c.createPrivateKey({ key: input.rsaLegacyEncrypted, passphrase: "legacy" }).export({ format: "pem", type: "pkcs8" }),
    legacyWrong: error(() => c.createPrivateKey({ key: input.rsaLegacyEncrypted, passphrase: "wrong" })),
    pkcs8: c.createPrivateKey({ key: input.rsaPkcs8Encrypted, passphrase: "modern" }).export({ format: "pem", type: "pkcs8" }),
    noPassphrase: error(() => c.createPrivateKey(input.rsaPkcs8Encrypted)),
    exported,
    dsa: [dsaKey.asymmetricKeyType, dsaKey.asymmetricKeyDetails, c.createPublicKey(dsaKey).export({ format: "pem", type: "spki" })],
    dsaJwk: error(() => dsaKey.export({ format: "jwk" })),
    dsaSign: error(() => c.sign("sha256", B.from("x"), dsaKey)),
    ciphers: ["aes-128-ecb", "aes-256-ecb", "aes-128-ofb", "aes-256-ofb"].map((alg) => seal(alg, alg.includes("ecb") ? null : iv)),
    chacha: seal("chacha20-poly1305", iv.subarray(0, 12)),
    cipherInfo: [c.getCipherInfo("aes-128-ofb"), c.getCipherInfo("aes-128-cbc", { keyLength: 15 }), c.getCipherInfo(1018)?.name],
    hkdf: B.from(c.hkdfSync("md5", "key", "salt", "info", 20)).toString("hex"),
    pbkdf2: c.pbkdf2Sync("pw", "salt", 3, 40, "sha224").toString("hex"),
  });
} }`;

test("node:crypto Diffie-Hellman, ECDH, raw RSA, encrypted and DSA keys, ECB/OFB/ChaCha20 agree with Node", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, { script: WORKER, compatibilityFlags: ["nodejs_compat"] });
  const response = await dispatch(worker, new Request("http://localhost/", { method: "POST", body: JSON.stringify(INPUT) }));
  const out = await response.json();
  assert.equal(out.error, undefined, out.error);

  // Finite-field DH: the RFC 3526 group, and secrets that match Node's on both sides.
  assert.equal(out.modp14, crypto.getDiffieHellman("modp14").getPrime("hex"));
  assert.equal(out.generator, "02");
  assert.equal(out.dhSecretWithNode, nodeDh.computeSecret(out.dhPublic, "hex", "hex"));
  const again = crypto.createDiffieHellman(Buffer.from(out.modp14, "hex"));
  again.setPrivateKey(out.dhPrivate, "hex");
  assert.equal(again.computeSecret(INPUT.nodeDhPublic, "hex", "hex"), out.dhSecretWithNode);
  assert.equal(out.givenGenerator, "05");
  assert.equal(out.groupHasNoSetters, "undefined");
  assert.match(out.unknownGroup, /^Error: Failed to init DiffieHellmanGroup: invalid group/);

  // ECDH: the worker's secret with Node's key is Node's secret with the worker's.
  assert.equal(out.ecdhSecretWithNode, nodeEcdh.computeSecret(out.ecdhPublic, "hex", "hex"));
  assert.equal(out.ecdhCompressedSecret, out.ecdhSecretWithNode);
  assert.equal(out.converted, INPUT.nodeEcdhPublic);
  const nodeSide = crypto.createECDH("prime256v1");
  nodeSide.setPrivateKey(out.ecdhPrivate, "hex");
  assert.equal(nodeSide.getPublicKey("hex"), out.ecdhPublic);
  assert.match(out.badPoint, /Public key is not valid for specified curve/);

  // Raw RSA with PKCS #1 v1.5 type-1 padding, both ways.
  assert.equal(out.publicDecrypted, "from node");
  assert.equal(crypto.publicDecrypt(rsa.publicKey, Buffer.from(out.privateEncrypted, "base64")).toString(), "from the worker");

  // Encrypted private keys: OpenSSL's legacy PEM and PKCS #8 in, PKCS #8 out (Node reads it).
  const plain = rsa.privateKey.export({ format: "pem", type: "pkcs8" });
  assert.equal(out.legacy, plain);
  assert.equal(out.legacyWrong, "Error: Failed to parse private key");
  assert.equal(out.pkcs8, plain);
  assert.equal(out.noPassphrase, "Error: Failed to parse private key");
  assert.match(out.exported, /^-----BEGIN ENCRYPTED PRIVATE KEY-----\n/);
  assert.equal(crypto.createPrivateKey({ key: out.exported, passphrase: "from worker" }).export({ format: "pem", type: "pkcs8" }), plain);

  // DSA keys read (details, public half), refused for JWK and signatures as in workerd.
  assert.deepEqual(out.dsa, ["dsa", { modulusLength: 2048, divisorLength: 256 }, INPUT.dsaPublic]);
  assert.equal(out.dsaJwk, "Error: Key type is invalid for JWK export");
  assert.equal(out.dsaSign, "Error: Signing with DSA keys is not currently supported");

  // The cipher modes against Node's OpenSSL.
  const key = Buffer.alloc(32, 7);
  const iv = Buffer.alloc(16, 9);
  const text = "seventeen bytes!!and then some more to cross blocks";
  const expected = ["aes-128-ecb", "aes-256-ecb", "aes-128-ofb", "aes-256-ofb"].map((alg) => {
    const cipher = crypto.createCipheriv(alg, key.subarray(0, alg.includes("128") ? 16 : 32), alg.includes("ecb") ? null : iv);
    return Buffer.concat([cipher.update(text, "utf8"), cipher.final()]).toString("hex");
  });
  assert.deepEqual(out.ciphers, expected);
  const chacha = crypto.createCipheriv("chacha20-poly1305", key, iv.subarray(0, 12), { authTagLength: 16 });
  chacha.setAAD(Buffer.from("aad"));
  assert.deepEqual(out.chacha, [Buffer.concat([chacha.update(text, "utf8"), chacha.final()]).toString("hex"), chacha.getAuthTag().toString("hex")]);
  assert.deepEqual(out.cipherInfo, [{ name: "aes-128-ofb", nid: 420, blockSize: 1, ivLength: 16, keyLength: 16, mode: "ofb" }, null, "chacha20-poly1305"]);

  // KDFs over digests crypto.subtle does not offer.
  assert.equal(out.hkdf, Buffer.from(crypto.hkdfSync("md5", "key", "salt", "info", 20)).toString("hex"));
  assert.equal(out.pbkdf2, crypto.pbkdf2Sync("pw", "salt", 3, 40, "sha224").toString("hex"));
});

test("node:crypto createDiffieHellman(bits) makes a safe prime that Node accepts", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import c from "node:crypto";
export default { fetch() {
  const started = Date.now();
  const dh = c.createDiffieHellman(512);
  return Response.json({ prime: dh.getPrime("hex"), verifyError: dh.verifyError, publicKey: dh.generateKeys("hex"), ms: Date.now() - started });
} }`,
  });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(out.prime.length, 128, "512 bits");
  assert.equal(out.verifyError, 0);
  const node = crypto.createDiffieHellman(out.prime, "hex", 2);
  assert.equal(node.verifyError, 0, "Node's DH_check finds it a safe prime suited to generator 2");
  node.generateKeys();
  assert.equal(node.computeSecret(out.publicKey, "hex").length, 64);
});

test("node:crypto X509Certificate reads a certificate as Node does; secp224r1 keys and ECDH", { timeout: scaled(60_000) }, async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import c from "node:crypto";
export default { async fetch(request) {
  const { certificate, nodeP224 } = await request.json();
  const x = new c.X509Certificate(certificate);
  const legacy = x.toLegacyObject();
  const p224 = c.generateKeyPairSync("ec", { namedCurve: "secp224r1" });
  const ecdh = c.createECDH("secp224r1");
  ecdh.generateKeys();
  const error = (f) => { try { f(); return "no error"; } catch (e) { return e.code + ": " + e.message; } };
  return Response.json({
    x509: [x.subject, x.issuer, x.validFrom, x.validTo, x.fingerprint, x.fingerprint256, x.fingerprint512, x.serialNumber, x.ca, x.subjectAltName ?? null, x.keyUsage ?? null,
      x.checkHost("workerbox test certificate") ?? null, x.checkHost("example.com") ?? null, x.checkIssued(x), x.verify(x.publicKey), x.toString(), x.raw.toString("base64"), x.publicKey.asymmetricKeyType],
    legacy: [legacy.subject, legacy.issuer, legacy.modulus, legacy.bits, legacy.exponent, legacy.valid_from, legacy.valid_to, legacy.serialNumber],
    invalid: error(() => new c.X509Certificate("not a certificate")),
    p224: [p224.privateKey.asymmetricKeyDetails.namedCurve, p224.publicKey.export({ format: "pem", type: "spki" })],
    p224Derive: error(() => c.diffieHellman({ privateKey: p224.privateKey, publicKey: p224.publicKey })),
    ecdh224: [ecdh.getPublicKey("hex"), ecdh.computeSecret(nodeP224, "hex", "hex")],
    curves: c.getCurves(),
  });
} }`,
  });
  const nodeEcdh = crypto.createECDH("secp224r1");
  nodeEcdh.generateKeys();
  const body = JSON.stringify({ certificate: CERTIFICATE, nodeP224: nodeEcdh.getPublicKey("hex") });
  const out = await (await dispatch(worker, new Request("http://localhost/", { method: "POST", body }))).json();
  const x = new crypto.X509Certificate(CERTIFICATE);
  assert.deepEqual(out.x509, [x.subject, x.issuer, x.validFrom, x.validTo, x.fingerprint, x.fingerprint256, x.fingerprint512, x.serialNumber, x.ca, x.subjectAltName ?? null, x.keyUsage ?? null,
    x.checkHost("workerbox test certificate") ?? null, x.checkHost("example.com") ?? null, x.checkIssued(x), x.verify(x.publicKey), x.toString(), x.raw.toString("base64"), "rsa"]);
  const legacy = x.toLegacyObject();
  assert.deepEqual(out.legacy, JSON.parse(JSON.stringify([legacy.subject, legacy.issuer, legacy.modulus, legacy.bits, legacy.exponent, legacy.valid_from, legacy.valid_to, legacy.serialNumber])));
  assert.match(out.invalid, /^ERR_INVALID_ARG_VALUE: /);
  assert.equal(out.p224[0], "secp224r1");
  assert.equal(crypto.createPublicKey(out.p224[1]).asymmetricKeyDetails.namedCurve, "secp224r1", "Node reads the generated key");
  assert.match(out.p224Derive, /Failed to derive/, "as in workerd");
  assert.equal(out.ecdh224[1], nodeEcdh.computeSecret(out.ecdh224[0], "hex", "hex"));
  assert.deepEqual(out.curves, ["secp224r1", "prime256v1", "secp384r1", "secp521r1"]);
});

test("node:crypto Sign and Verify used as streams finish without errors (no stream re-construction)", { timeout: scaled(30_000) }, async (t) => {
  const logged = [];
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    onLog: (level, message) => logged.push(`${level}: ${message}`),
    script: `import c from "node:crypto"; import { Buffer } from "node:buffer";
export default { async fetch() {
  const { privateKey, publicKey } = c.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  let finished = 0, verified = 0;
  const started = Date.now();
  for (let i = 0; i < 200; i++) {
    const sign = c.createSign("SHA256");
    sign.on("finish", () => finished++);
    sign.write(Buffer.from("message " + i));
    sign.end();
    const signature = sign.sign(privateKey);
    const verify = c.createVerify("SHA256");
    verify.on("finish", () => finished++);
    verify.write(Buffer.from("message " + i));
    verify.end();
    if (verify.verify(publicKey, signature)) verified++;
  }
  await new Promise((resolve) => setTimeout(resolve, 0));
  return Response.json({ finished, verified, ms: Date.now() - started });
} }`,
  });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.equal(out.verified, 200);
  assert.equal(out.finished, 400, "every stream emits finish");
  assert.deepEqual(logged.filter((line) => line.startsWith("error")), [], "nothing uncaught (was: a stack overflow per stream)");
});
