// node:crypto under nodejs_compat, checked against Node's own node:crypto: deterministic cases
// (hashes, HMACs, KDFs, ciphers with fixed keys, RSA PKCS #1 / Ed25519 signatures, key
// exports, errors) run in a worker and in this process and compared as JSON; randomised ones
// (ECDSA, PSS, GCM with fresh IVs, generated keys) cross between the two sides: what the worker
// makes, Node verifies or decrypts, and the other way round.
import { test } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import { dispatch } from "../index.js";
import { useWorker, collectKeyJobs } from "./helpers.mjs";
import { scaled } from "./child-node.mjs";

// A self-signed RSA certificate (made once with `openssl req -x509`; its private key was not kept).
const CERTIFICATE = fs.readFileSync(new URL("./fixtures/self-signed-cert.pem", import.meta.url), "utf8");

// Keys made by Node for this run, in the encodings real code loads them from.
const rsa = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const ec256 = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const ec384 = crypto.generateKeyPairSync("ec", { namedCurve: "secp384r1" });
const ed = crypto.generateKeyPairSync("ed25519");
collectKeyJobs();
const KEYS = {
  rsaPkcs8: rsa.privateKey.export({ format: "pem", type: "pkcs8" }),
  rsaPkcs1: rsa.privateKey.export({ format: "pem", type: "pkcs1" }),
  rsaSpki: rsa.publicKey.export({ format: "pem", type: "spki" }),
  rsaPublicPkcs1: rsa.publicKey.export({ format: "pem", type: "pkcs1" }),
  rsaJwk: rsa.privateKey.export({ format: "jwk" }),
  ec256Sec1: ec256.privateKey.export({ format: "pem", type: "sec1" }),
  ec256Pkcs8: ec256.privateKey.export({ format: "pem", type: "pkcs8" }),
  ec256Spki: ec256.publicKey.export({ format: "pem", type: "spki" }),
  ec384Pkcs8: ec384.privateKey.export({ format: "pem", type: "pkcs8" }),
  ec384Spki: ec384.publicKey.export({ format: "pem", type: "spki" }),
  edPkcs8: ed.privateKey.export({ format: "pem", type: "pkcs8" }),
  edSpki: ed.publicKey.export({ format: "pem", type: "spki" }),
  ec256DerB64: ec256.privateKey.export({ format: "der", type: "pkcs8" }).toString("base64"),
  certificate: CERTIFICATE,
};

// Each case: (crypto, Buffer, input) => JSON-able result; the same source runs on both sides.
const CASES = {
  hashes: `(c, B) => {
    const out = {};
    for (const alg of ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "SHA256", "RSA-SHA1", "sha512-256"]) {
      out[alg] = [c.createHash(alg).update("hello ").update(B.from("wörld")).digest("hex"), c.createHash(alg).update("").digest("base64")];
    }
    const h = c.createHash("sha256").update("abc");
    const copy = h.copy();
    out.copy = [h.digest("hex"), copy.update("def").digest("base64url"), c.createHash("sha256").update("abcdef").digest("base64url")];
    out.encodings = [c.createHash("sha1").update("6869", "hex").digest("latin1"), c.createHash("md5").update("aGk=", "base64").digest().length];
    out.typed = c.createHash("sha256").update(new Uint16Array([1, 2, 3])).update(new DataView(new ArrayBuffer(3))).digest("hex");
    out.oneShot = [c.hash("sha1", "abc"), c.hash("sha256", B.from("abc"), "base64"), c.hash("md5", "x", "buffer").length];
    out.big = c.createHash("sha512").update(B.alloc(3_000_000, 7)).digest("hex");
    return out;
  }`,
  hmacs: `(c, B) => {
    const out = {};
    for (const alg of ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"]) {
      out[alg] = [c.createHmac(alg, "key").update("data").digest("hex"), c.createHmac(alg, B.alloc(200, 1)).update("x").update("y").digest("base64")];
    }
    const h = c.createHmac("sha256", c.createSecretKey(B.from("secret")));
    out.keyObject = h.update("m").digest("base64url");
    out.twice = [h.digest("hex")];
    return out;
  }`,
  kdfs: `async (c, B) => {
    const cb = (f) => new Promise((resolve, reject) => f((e, v) => (e ? reject(e) : resolve(v))));
    return {
      pbkdf2: [c.pbkdf2Sync("pw", "salt", 1000, 32, "sha256").toString("hex"), c.pbkdf2Sync(B.from("pw"), B.from("s"), 1, 70, "sha512").toString("hex"), c.pbkdf2Sync("pw", "salt", 2, 20, "sha1").toString("hex")],
      pbkdf2Async: (await cb((done) => c.pbkdf2("pw", "salt", 10, 16, "sha384", done))).toString("hex"),
      scrypt: [c.scryptSync("pw", "salt", 32).toString("hex"), c.scryptSync("pw", "salt", 16, { N: 1024, r: 4, p: 2 }).toString("hex"), c.scryptSync("", "", 8, { cost: 16, blockSize: 1, parallelization: 1 }).toString("hex")],
      scryptAsync: (await cb((done) => c.scrypt("pw", "salt", 24, { N: 2048 }, done))).toString("base64"),
      hkdf: [B.from(c.hkdfSync("sha256", "key", "salt", "info", 42)).toString("hex"), B.from(c.hkdfSync("sha512", B.from("k"), B.alloc(0), "", 100)).toString("hex"), c.hkdfSync("sha1", "k", "s", "i", 10) instanceof ArrayBuffer],
      hkdfAsync: B.from(await cb((done) => c.hkdf("sha384", "k", "s", "i", 20, done))).toString("hex"),
    };
  }`,
  ciphers: `(c, B) => {
    const out = {};
    const text = "the quick brown fox jumps over the lazy dog, twice over: the quick brown fox";
    for (const bits of [128, 192, 256]) {
      const key = B.alloc(bits / 8, 0x42);
      const iv = B.alloc(16, 0x24);
      for (const mode of ["cbc", "ctr"]) {
        const alg = "aes-" + bits + "-" + mode;
        const cipher = c.createCipheriv(alg, key, iv);
        const enc = B.concat([cipher.update(text.slice(0, 7), "utf8"), cipher.update(text.slice(7, 40), "utf8"), cipher.update(B.from(text.slice(40))), cipher.final()]);
        const decipher = c.createDecipheriv(alg, key, iv);
        const dec = decipher.update(enc.subarray(0, 17), undefined, "utf8") + decipher.update(enc.subarray(17).toString("hex"), "hex", "utf8") + decipher.final("utf8");
        out[alg] = [enc.toString("hex"), dec];
      }
      const gcm = c.createCipheriv("aes-" + bits + "-gcm", key, B.alloc(12, 1));
      gcm.setAAD(B.from("header"));
      const sealed = B.concat([gcm.update(text, "utf8"), gcm.final()]).toString("base64");
      const tag = gcm.getAuthTag().toString("hex");
      const open = c.createDecipheriv("aes-" + bits + "-gcm", key, B.alloc(12, 1));
      open.setAAD(B.from("header"));
      open.setAuthTag(B.from(tag, "hex"));
      out["aes-" + bits + "-gcm"] = [sealed, tag, open.update(sealed, "base64", "utf8") + open.final("utf8")];
      // As Node does, update() returns the ciphertext at once and final() nothing more.
      const pieces = c.createCipheriv("aes-" + bits + "-gcm", key, B.alloc(12, 2));
      out["aes-" + bits + "-gcm-pieces"] = [pieces.update(text.slice(0, 5), "utf8").toString("hex"), pieces.update(text.slice(5, 37), "utf8").toString("hex"), pieces.update(text.slice(37), "utf8").toString("hex"), pieces.final().length, pieces.getAuthTag().toString("hex")];
      const wide = c.createCipheriv("aes-" + bits + "-gcm", key, B.alloc(16, 3));
      out["aes-" + bits + "-gcm-16"] = [B.concat([wide.update(text, "utf8"), wide.final()]).toString("hex"), wide.getAuthTag().toString("hex")];
    }
    const noPad = c.createCipheriv("aes-128-cbc", B.alloc(16, 1), B.alloc(16, 2)).setAutoPadding(false);
    out.noPadding = B.concat([noPad.update(B.alloc(32, 3)), noPad.final()]).toString("hex");
    const shortTag = c.createCipheriv("aes-256-gcm", B.alloc(32, 9), B.alloc(12, 8), { authTagLength: 12 });
    out.shortTag = [B.concat([shortTag.update("x", "utf8"), shortTag.final()]).toString("hex"), shortTag.getAuthTag().toString("hex")];
    return out;
  }`,
  cipherErrors: `(c, B) => {
    const code = (f) => { try { f(); return "no error"; } catch (e) { return [e.code, e.name]; } };
    const bad = c.createDecipheriv("aes-128-gcm", B.alloc(16), B.alloc(12));
    bad.setAuthTag(B.alloc(16));
    bad.update(B.from("abcd"));
    const badPad = c.createDecipheriv("aes-128-cbc", B.alloc(16), B.alloc(16));
    badPad.update(B.alloc(16, 5));
    return {
      unknown: code(() => c.createCipheriv("aes-128-foo", B.alloc(16), B.alloc(16))),
      keylen: code(() => c.createCipheriv("aes-256-cbc", B.alloc(16), B.alloc(16))),
      iv: code(() => c.createCipheriv("aes-128-cbc", B.alloc(16), B.alloc(8))),
      auth: (() => { try { bad.final(); return "no error"; } catch (e) { return e.message; } })(),
      badDecrypt: code(() => badPad.final()),
      pbkdf2Digest: code(() => c.pbkdf2Sync("p", "s", 1, 1, "nope")),
      // (timingSafeEqual with unequal lengths: workerd differs from Node there; node-vs-workerd.test.mjs)
      randomSize: code(() => c.randomBytes(-1)),
      finalized: code(() => { const h = c.createHash("md5"); h.digest(); h.update("x"); }),
    };
  }`,
  misc: `(c, B) => {
    const r = c.randomBytes(32);
    const filled = c.randomFillSync(B.alloc(10), 2, 5);
    const ints = Array.from({ length: 200 }, () => c.randomInt(3, 9));
    return {
      randomBytes: [B.isBuffer(r), r.length], filled: [filled.subarray(0, 2).toString("hex"), filled.subarray(7).toString("hex")],
      ints: [Math.min(...ints) >= 3, Math.max(...ints) <= 8, new Set(ints).size > 3],
      uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(c.randomUUID()),
      values: c.getRandomValues(new Uint32Array(4)).length,
      timing: [c.timingSafeEqual(B.from("abc"), B.from("abc")), c.timingSafeEqual(B.from("abc"), B.from("abd"))],
      lists: [c.getHashes().includes("sha256"), c.getCiphers().includes("aes-256-gcm"), c.getCurves().includes("prime256v1")],
      constants: [c.constants.RSA_PKCS1_PSS_PADDING, c.constants.RSA_PSS_SALTLEN_DIGEST],
      subtle: typeof c.subtle.digest, webcrypto: typeof c.webcrypto.getRandomValues,
    };
  }`,
  keys: `(c, B, k) => {
    const out = {};
    const rsaPriv = c.createPrivateKey(k.rsaPkcs1);
    out.rsa = [rsaPriv.type, rsaPriv.asymmetricKeyType, rsaPriv.asymmetricKeyDetails.modulusLength, String(rsaPriv.asymmetricKeyDetails.publicExponent)];
    out.rsaPkcs8 = rsaPriv.export({ format: "pem", type: "pkcs8" }) === k.rsaPkcs8;
    out.rsaPkcs1 = c.createPrivateKey(k.rsaPkcs8).export({ format: "pem", type: "pkcs1" }) === k.rsaPkcs1;
    out.rsaPub = [c.createPublicKey(k.rsaPkcs8).export({ format: "pem", type: "spki" }) === k.rsaSpki, c.createPublicKey(k.rsaPublicPkcs1).export({ type: "spki", format: "pem" }) === k.rsaSpki];
    out.rsaJwk = c.createPrivateKey({ key: k.rsaJwk, format: "jwk" }).export({ format: "pem", type: "pkcs8" }) === k.rsaPkcs8;
    out.rsaJwkOut = rsaPriv.export({ format: "jwk" });
    const ecPriv = c.createPrivateKey(k.ec256Sec1);
    out.ec = [ecPriv.asymmetricKeyType, ecPriv.asymmetricKeyDetails, ecPriv.export({ format: "pem", type: "pkcs8" }) === k.ec256Pkcs8, ecPriv.export({ format: "pem", type: "sec1" }) === k.ec256Sec1];
    out.ecDer = c.createPrivateKey({ key: B.from(k.ec256DerB64, "base64"), format: "der", type: "pkcs8" }).equals(ecPriv);
    out.ecPub = c.createPublicKey(ecPriv).export({ type: "spki", format: "der" }).toString("base64") === c.createPublicKey(k.ec256Spki).export({ type: "spki", format: "der" }).toString("base64");
    out.ecJwk = c.createPublicKey(k.ec384Spki).export({ format: "jwk" });
    out.ed = [c.createPrivateKey(k.edPkcs8).asymmetricKeyType, c.createPublicKey(k.edPkcs8).export({ format: "pem", type: "spki" }) === k.edSpki];
    const secret = c.createSecretKey("c2VjcmV0", "base64");
    // (workerd's JWK of a secret key also has ext: true, Node's not)
    out.secret = [secret.type, secret.symmetricKeySize, secret.export().toString(), (({ ext, ...jwk }) => jwk)(secret.export({ format: "jwk" }))];
    out.isKeyObject = rsaPriv instanceof c.KeyObject;
    const fromCertificate = c.createPublicKey(k.certificate);
    out.certificate = [fromCertificate.type, fromCertificate.asymmetricKeyType, fromCertificate.asymmetricKeyDetails.modulusLength, fromCertificate.export({ type: "spki", format: "pem" })];
    return out;
  }`,
  streams: `async (c, B, k) => {
    const drain = (s, encoding) => new Promise((resolve, reject) => {
      const chunks = [];
      s.on("data", (d) => chunks.push(d)).on("error", reject).on("end", () => resolve(encoding ? chunks.join("") : B.concat(chunks).toString("hex")));
    });
    const h = c.createHash("sha256").setEncoding("hex");
    const hashed = drain(h, true);
    h.write("ab");
    h.end(B.from("cd"));
    const m = c.createHmac("sha1", "k");
    const maced = drain(m);
    m.end("message");
    const key = B.alloc(16, 3);
    const iv = B.alloc(16, 4);
    const enc = c.createCipheriv("aes-128-cbc", key, iv);
    const encrypted = drain(enc);
    for (const piece of ["a streamed ", "plaintext of ", "more than one block"]) enc.write(piece);
    enc.end();
    const s = c.createSign("sha256");
    s.write("signed ");
    s.end("stream");
    return { hash: await hashed, hmac: await maced, cbc: await encrypted, signed: s.sign(k.rsaPkcs8, "base64"), transform: typeof h.pipe };
  }`,
  deterministicSignatures: `(c, B, k) => {
    const data = B.from("payload to sign");
    return {
      rs256: c.createSign("RSA-SHA256").update(data).sign(k.rsaPkcs8, "base64"),
      rs512: c.sign("sha512", data, c.createPrivateKey(k.rsaPkcs1)).toString("hex"),
      ed25519: c.sign(null, data, k.edPkcs8).toString("base64"),
      verify: [c.verify(null, data, k.edSpki, c.sign(null, data, k.edPkcs8)), c.createVerify("sha256").update(data).verify(k.rsaSpki, c.sign("sha256", data, k.rsaPkcs8))],
    };
  }`,
};

const CASE_NAMES = Object.keys(CASES);
// Every case is made async, so that a failure is a rejection on both sides.
const casesSource = `const CASES = { ${CASE_NAMES.map((name) => `${JSON.stringify(name)}: async (...args) => (${CASES[name]})(...args)`).join(",\n")} };`;

// Cross-checks: the worker signs, encrypts and generates; Node checks (and the other way).
const CROSS = `async (c, B, k, input) => {
  const data = B.from(input.message);
  const out = {};
  out.es256 = c.createSign("sha256").update(data).sign(k.ec256Pkcs8, "base64");
  out.es256p1363 = c.sign("sha256", data, { key: k.ec256Sec1, dsaEncoding: "ieee-p1363" }).toString("base64");
  out.es384 = c.sign("sha384", data, k.ec384Pkcs8).toString("base64");
  out.ps256 = c.sign("sha256", data, { key: k.rsaPkcs8, padding: c.constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }).toString("base64");
  out.psMax = c.sign("sha256", data, { key: k.rsaPkcs8, padding: c.constants.RSA_PKCS1_PSS_PADDING }).toString("base64");
  const iv = c.randomBytes(12);
  const gcm = c.createCipheriv("aes-256-gcm", B.from(input.key, "hex"), iv);
  out.gcm = [iv.toString("hex"), B.concat([gcm.update(data), gcm.final()]).toString("hex"), gcm.getAuthTag().toString("hex")];
  const cbcIv = c.randomBytes(16);
  const cbc = c.createCipheriv("aes-192-cbc", B.from(input.key, "hex").subarray(0, 24), cbcIv);
  out.cbc = [cbcIv.toString("hex"), cbc.update(data, undefined, "base64") + cbc.final("base64")];
  // What Node made: verify and decrypt.
  out.nodeVerified = {
    es256: c.verify("sha256", data, k.ec256Spki, B.from(input.nodeEs256, "base64")),
    es384: c.createVerify("SHA384").update(data).verify(c.createPublicKey(k.ec384Spki), input.nodeEs384, "base64"),
    ps256: c.verify("sha256", data, { key: k.rsaSpki, padding: 6, saltLength: 32 }, B.from(input.nodePs256, "base64")),
    psAuto: c.verify("sha256", data, { key: k.rsaSpki, padding: 6 }, B.from(input.nodePsMax, "base64")),
    tampered: c.verify("sha256", B.from("other"), k.ec256Spki, B.from(input.nodeEs256, "base64")),
  };
  const open = c.createDecipheriv("aes-256-gcm", B.from(input.key, "hex"), B.from(input.nodeGcm[0], "hex"));
  open.setAuthTag(B.from(input.nodeGcm[2], "hex"));
  out.nodeGcmPlain = open.update(input.nodeGcm[1], "hex", "utf8") + open.final("utf8");
  // workerd's defaults differ from Node's (PKCS #1 v1.5 padding; SHA-256 for OAEP): named here.
  out.oaep = c.publicEncrypt({ key: k.rsaSpki, padding: c.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1" }, data).toString("base64");
  out.oaep256 = c.publicEncrypt({ key: k.rsaPkcs8, padding: c.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha256" }, data).toString("base64");
  // (Node no longer decrypts PKCS #1 v1.5, CVE-2023-46809: the worker opens Node's and its own)
  out.pkcs1 = [c.privateDecrypt(k.rsaPkcs8, B.from(input.nodePkcs1, "base64")).toString(), c.privateDecrypt(k.rsaPkcs1, c.publicEncrypt(k.rsaSpki, data)).toString()];
  const x = c.generateKeyPairSync("x25519");
  out.x25519 = { publicKey: x.publicKey.export({ type: "spki", format: "pem" }), secret: c.diffieHellman({ privateKey: x.privateKey, publicKey: c.createPublicKey(input.nodeX25519) }).toString("hex") };
  out.ecdh = c.diffieHellman({ privateKey: c.createPrivateKey(k.ec256Pkcs8), publicKey: c.createPublicKey(input.nodeEcPublic) }).toString("hex");
  out.nodeOaepPlain = c.privateDecrypt({ key: k.rsaPkcs1, padding: c.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1" }, B.from(input.nodeOaep, "base64")).toString();
  const pair = c.generateKeyPairSync("ec", { namedCurve: "P-256", publicKeyEncoding: { type: "spki", format: "pem" }, privateKeyEncoding: { type: "pkcs8", format: "pem" } });
  out.generated = { publicKey: pair.publicKey, signature: c.sign("sha256", data, pair.privateKey).toString("base64") };
  const edPair = c.generateKeyPairSync("ed25519");
  out.generatedEd = { publicKey: edPair.publicKey.export({ type: "spki", format: "pem" }), signature: c.sign(null, data, edPair.privateKey).toString("base64") };
  const rsaPair = await new Promise((resolve, reject) => c.generateKeyPair("rsa", { modulusLength: 1024 }, (e, pub, priv) => (e ? reject(e) : resolve({ pub, priv }))));
  out.generatedRsa = { publicKey: rsaPair.pub.export({ type: "pkcs1", format: "pem" }), signature: c.sign("sha256", data, rsaPair.priv).toString("base64") };
  return out;
}`;

// The flows jsonwebtoken/jws use (modelled on jwa's code): HS256, RS256, ES256 with JOSE signatures.
const JWS = `(c, B, k, input) => {
  const b64u = (buf) => B.from(buf).toString("base64url");
  const header = (alg) => b64u(JSON.stringify({ alg, typ: "JWT" }));
  const payload = b64u(JSON.stringify({ sub: "42", iat: 1700000000 }));
  const derToJose = (der) => {
    // ecdsa-sig-formatter's job: SEQUENCE { INTEGER r, INTEGER s } to r || s, 32 bytes each.
    const sig = B.from(der, "base64");
    let at = sig[1] & 0x80 ? 3 : 2;
    const ints = [];
    for (let i = 0; i < 2; i++) {
      const length = sig[at + 1];
      let value = sig.subarray(at + 2, at + 2 + length);
      while (value.length > 32 && value[0] === 0) value = value.subarray(1);
      ints.push(B.concat([B.alloc(32 - value.length), value]));
      at += 2 + length;
    }
    return b64u(B.concat(ints));
  };
  const hs = header("HS256") + "." + payload;
  const hsKey = c.createSecretKey(B.from("shh"));
  const hs256 = hs + "." + c.createHmac("sha256", hsKey).update(hs).digest("base64url");
  const rs = header("RS256") + "." + payload;
  const rs256 = rs + "." + B.from(c.createSign("RSA-SHA256").update(rs).sign(k.rsaPkcs1, "base64"), "base64").toString("base64url");
  const es = header("ES256") + "." + payload;
  const es256 = es + "." + derToJose(c.createSign("RSA-SHA256").update(es).sign(k.ec256Pkcs8, "base64"));
  const publicKey = c.createPublicKey(k.rsaSpki);
  const verifyRs = (token) => {
    const [h, p, s] = token.split(".");
    return c.createVerify("RSA-SHA256").update(h + "." + p).verify(publicKey, B.from(s, "base64url"));
  };
  const verifyEs = (token) => {
    const [h, p, s] = token.split(".");
    return c.verify("sha256", B.from(h + "." + p), { key: c.createPublicKey(k.ec256Spki), dsaEncoding: "ieee-p1363" }, B.from(s, "base64url"));
  };
  const verifyHs = (token) => {
    const [h, p, s] = token.split(".");
    const expected = c.createHmac("sha256", hsKey).update(h + "." + p).digest();
    const signature = B.from(s, "base64url");
    return signature.length === expected.length && c.timingSafeEqual(expected, signature);
  };
  return {
    hs256, rs256, es256,
    checks: [publicKey.asymmetricKeyType, c.createPublicKey(k.ec256Spki).asymmetricKeyDetails.namedCurve],
    verified: input && [verifyHs(input.hs256), verifyRs(input.rs256), verifyEs(input.es256), verifyHs(hs256 + "x")],
  };
}`;

function workerScript() {
  return `import c from "node:crypto";
import { Buffer as B } from "node:buffer";
${casesSource}
const CROSS = ${CROSS};
const JWS = ${JWS};
export default { async fetch(request) {
  const { name, keys, input } = await request.json();
  const f = name === "cross" ? CROSS : name === "jws" ? JWS : CASES[name];
  try { return Response.json({ value: await f(c, B, keys, input) }); } catch (error) { return Response.json({ error: String(error.stack) }); }
} }`;
}

async function nodeFunctions() {
  const url = "data:text/javascript;base64," + Buffer.from(`${casesSource}\nexport { CASES };\nexport const CROSS = ${CROSS};\nexport const JWS = ${JWS};`).toString("base64");
  return import(url);
}

async function inWorker(worker, name, input) {
  const response = await dispatch(worker, new Request("http://localhost/", { method: "POST", body: JSON.stringify({ name, keys: KEYS, input }) }));
  return response.json();
}

async function cryptoWorker(t) {
  return useWorker(t, { script: workerScript(), compatibilityFlags: ["nodejs_compat"] });
}

test("node:crypto gives Node's results: hashes, HMACs, KDFs, ciphers, keys, signatures, errors", { timeout: scaled(60_000) }, async (t) => {
  const worker = await cryptoWorker(t);
  const { CASES: nodeCases } = await nodeFunctions();
  for (const name of CASE_NAMES) {
    const fromWorker = await inWorker(worker, name);
    const fromNode = JSON.parse(JSON.stringify(await nodeCases[name](crypto, Buffer, KEYS).then((value) => ({ value }), (error) => ({ error: error.message }))));
    assert.deepEqual(fromWorker, fromNode, name);
  }
});

test("node:crypto signatures and ciphertexts cross between the worker and Node", { timeout: scaled(60_000) }, async (t) => {
  const worker = await cryptoWorker(t);
  const message = "cross-checked message ✓";
  const data = Buffer.from(message);
  const key = crypto.randomBytes(32);
  const iv = crypto.randomBytes(12);
  const gcm = crypto.createCipheriv("aes-256-gcm", key, iv);
  const nodeX25519 = crypto.generateKeyPairSync("x25519");
  const nodeEc = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const input = {
    message,
    key: key.toString("hex"),
    nodeEs256: crypto.sign("sha256", data, KEYS.ec256Pkcs8).toString("base64"),
    nodeEs384: crypto.sign("sha384", data, KEYS.ec384Pkcs8).toString("base64"),
    nodePs256: crypto.sign("sha256", data, { key: KEYS.rsaPkcs8, padding: 6, saltLength: 32 }).toString("base64"),
    nodePsMax: crypto.sign("sha256", data, { key: KEYS.rsaPkcs8, padding: 6 }).toString("base64"),
    nodeGcm: [iv.toString("hex"), Buffer.concat([gcm.update(data), gcm.final()]).toString("hex"), gcm.getAuthTag().toString("hex")],
    nodeOaep: crypto.publicEncrypt(KEYS.rsaSpki, data).toString("base64"),
    nodePkcs1: crypto.publicEncrypt({ key: KEYS.rsaSpki, padding: crypto.constants.RSA_PKCS1_PADDING }, data).toString("base64"),
    nodeX25519: nodeX25519.publicKey.export({ type: "spki", format: "pem" }),
    nodeEcPublic: nodeEc.publicKey.export({ type: "spki", format: "pem" }),
  };
  const { value: out, error } = await inWorker(worker, "cross", input);
  assert.equal(error, undefined);
  assert.deepEqual(out.nodeVerified, { es256: true, es384: true, ps256: true, psAuto: true, tampered: false });
  assert.equal(out.nodeGcmPlain, message);
  assert.equal(out.nodeOaepPlain, message, "RSA-OAEP from Node");
  assert.equal(crypto.diffieHellman({ privateKey: nodeX25519.privateKey, publicKey: crypto.createPublicKey(out.x25519.publicKey) }).toString("hex"), out.x25519.secret, "X25519 agreement");
  assert.equal(crypto.diffieHellman({ privateKey: nodeEc.privateKey, publicKey: crypto.createPublicKey(KEYS.ec256Spki) }).toString("hex"), out.ecdh, "ECDH P-256 agreement");
  assert.equal(crypto.privateDecrypt(KEYS.rsaPkcs8, Buffer.from(out.oaep, "base64")).toString(), message, "RSA-OAEP (SHA-1) to Node");
  assert.equal(crypto.privateDecrypt({ key: KEYS.rsaPkcs8, oaepHash: "sha256" }, Buffer.from(out.oaep256, "base64")).toString(), message, "RSA-OAEP (SHA-256) to Node");
  assert.deepEqual(out.pkcs1, [message, message], "PKCS #1 v1.5 (workerd's default) from Node and round trip");
  assert.ok(crypto.verify("sha256", data, KEYS.ec256Spki, Buffer.from(out.es256, "base64")), "ES256 (DER)");
  assert.ok(crypto.verify("sha256", data, { key: KEYS.ec256Spki, dsaEncoding: "ieee-p1363" }, Buffer.from(out.es256p1363, "base64")), "ES256 (P1363)");
  assert.ok(crypto.verify("sha384", data, KEYS.ec384Spki, Buffer.from(out.es384, "base64")), "ES384");
  assert.ok(crypto.verify("sha256", data, { key: KEYS.rsaSpki, padding: 6, saltLength: 32 }, Buffer.from(out.ps256, "base64")), "PS256");
  assert.ok(crypto.verify("sha256", data, { key: KEYS.rsaSpki, padding: 6, saltLength: 222 }, Buffer.from(out.psMax, "base64")), "PSS, maximal salt");
  const [gcmIv, sealed, tag] = out.gcm;
  const open = crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(gcmIv, "hex"));
  open.setAuthTag(Buffer.from(tag, "hex"));
  assert.equal(open.update(sealed, "hex", "utf8") + open.final("utf8"), message);
  const cbc = crypto.createDecipheriv("aes-192-cbc", key.subarray(0, 24), Buffer.from(out.cbc[0], "hex"));
  assert.equal(cbc.update(out.cbc[1], "base64", "utf8") + cbc.final("utf8"), message);
  assert.ok(crypto.verify("sha256", data, out.generated.publicKey, Buffer.from(out.generated.signature, "base64")), "generated EC key");
  assert.ok(crypto.verify(null, data, out.generatedEd.publicKey, Buffer.from(out.generatedEd.signature, "base64")), "generated Ed25519 key");
  assert.ok(crypto.verify("sha256", data, out.generatedRsa.publicKey, Buffer.from(out.generatedRsa.signature, "base64")), "generated RSA key");
  assert.equal(crypto.createPublicKey(out.generatedRsa.publicKey).asymmetricKeyDetails.modulusLength, 1024);
});

test("node:crypto serves jsonwebtoken's flows (HS256, RS256, ES256) both ways", { timeout: scaled(30_000) }, async (t) => {
  const worker = await cryptoWorker(t);
  const { JWS: nodeJws } = await nodeFunctions();
  const fromNode = await nodeJws(crypto, Buffer, KEYS, null);
  const { value, error } = await inWorker(worker, "jws", { hs256: fromNode.hs256, rs256: fromNode.rs256, es256: fromNode.es256 });
  assert.equal(error, undefined);
  assert.deepEqual(value.verified, [true, true, true, false], "the worker verifies Node's tokens");
  assert.deepEqual(value.checks, ["rsa", "prime256v1"]);
  assert.equal(value.hs256, fromNode.hs256);
  assert.equal(value.rs256, fromNode.rs256, "RS256 is deterministic");
  const check = nodeJws(crypto, Buffer, KEYS, { hs256: value.hs256, rs256: value.rs256, es256: value.es256 });
  assert.deepEqual(check.verified, [true, true, true, false], "Node verifies the worker's tokens");
});

test("node:crypto refuses what it does not support with Node-style errors", { timeout: scaled(30_000) }, async (t) => {
  const worker = await useWorker(t, {
    compatibilityFlags: ["nodejs_compat"],
    script: `import c from "node:crypto";
export default { fetch() {
  const code = (f) => { try { f(); return "no error"; } catch (e) { return e.code + ": " + e.message; } };
  return Response.json({
    curve: code(() => c.generateKeyPairSync("ec", { namedCurve: "secp256k1" })),
    dh: code(() => c.createDiffieHellman(10001)),
    encrypted: code(() => c.createPrivateKey("-----BEGIN ENCRYPTED PRIVATE KEY-----\\nAAAA\\n-----END ENCRYPTED PRIVATE KEY-----")),
    notPem: code(() => c.createPublicKey("hello")),
    gcmIv: code(() => c.createCipheriv("aes-128-gcm", new Uint8Array(16), new Uint8Array(7))),
    scryptMem: code(() => c.scryptSync("p", "s", 16, { N: 2 ** 20, r: 8 })),
    hash: code(() => c.createHash("sha3-999")),
    hmac: code(() => c.createHmac("nope", "k")),
    jwk: JSON.stringify(c.createSecretKey("ab").export({ format: "jwk" })),
  });
} }`,
  });
  const out = await (await dispatch(worker, "http://localhost/")).json();
  assert.match(out.curve, /^ERR_CRYPTO_INVALID_CURVE: /);
  assert.match(out.dh, /: DiffieHellman init failed: requested prime size too large$/);
  assert.equal(out.encrypted, "undefined: Failed to parse private key", "workerd's message for an encrypted key without its passphrase");
  assert.equal(out.notPem, "undefined: Failed to parse public key", "workerd's message");
  assert.match(out.gcmIv, /^ERR_CRYPTO_INVALID_IV: .*12 or 16 bytes/);
  assert.match(out.scryptMem, /^ERR_CRYPTO_INVALID_SCRYPT_PARAMS: /);
  assert.equal(out.hash, "undefined: Digest method not supported", "workerd's message, without a code");
  assert.equal(out.hmac, "undefined: Digest method not supported");
  assert.equal(out.jwk, '{"kty":"oct","ext":true,"k":"YWI"}', "workerd adds ext: true");
});
