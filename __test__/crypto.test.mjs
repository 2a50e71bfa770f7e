// crypto.subtle, CryptoKey and crypto.DigestStream inside the worker: known-answer vectors,
// round trips, interop with Node's own WebCrypto in the host, and the WebCrypto error types.
import test from "node:test";
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";
import { evalInWorker } from "./helpers.mjs";

const { subtle } = webcrypto;
const hex = (b) => Buffer.from(b).toString("hex");
const unhex = (s) => new Uint8Array(Buffer.from(s, "hex"));
const enc = (s) => new TextEncoder().encode(s);

// Helpers available to every worker body.
const PRELUDE = `
  const subtle = crypto.subtle;
  const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
  const unhex = (s) => new Uint8Array((s.match(/../g) || []).map((h) => parseInt(h, 16)));
  const enc = (s) => new TextEncoder().encode(s);
  const errorName = async (promise) => {
    try { await promise; return "resolved"; }
    catch (e) { return (e instanceof DOMException ? "DOMException:" : "") + e.name; }
  };
`;
const run = (t, body) => evalInWorker(t, PRELUDE + body);

test("digest: SHA-1/256/384/512 and MD5 known answers", async (t) => {
  const out = await run(t, `
    const r = {};
    for (const alg of ["SHA-1", "SHA-256", "SHA-384", "SHA-512", "MD5"]) r[alg] = hex(await subtle.digest(alg, enc("abc")));
    r.objectForm = hex(await subtle.digest({ name: "sha-256" }, enc("abc").buffer));
    r.empty = hex(await subtle.digest("SHA-256", new Uint8Array(0)));
    r.isArrayBuffer = (await subtle.digest("SHA-1", enc("x"))) instanceof ArrayBuffer;
    return r;
  `);
  assert.equal(out["SHA-1"], "a9993e364706816aba3e25717850c26c9cd0d89d");
  assert.equal(out["SHA-256"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(out["SHA-384"], "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7");
  assert.equal(out["SHA-512"], "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  assert.equal(out.MD5, "900150983cd24fb0d6963f7d28e17f72");
  assert.equal(out.objectForm, out["SHA-256"]);
  assert.equal(out.empty, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert.equal(out.isArrayBuffer, true);
});

test("DigestStream hashes what is written, incrementally", async (t) => {
  const out = await run(t, `
    const stream = new crypto.DigestStream("SHA-256");
    const writer = stream.getWriter();
    await writer.write(enc("a"));
    await writer.write(enc("b").buffer);
    await writer.write("c");
    await writer.close();
    const piped = new crypto.DigestStream({ name: "MD5" });
    await new ReadableStream({ start(c) { c.enqueue(enc("ab")); c.enqueue(enc("c")); c.close(); } }).pipeTo(piped);
    let unknown;
    try { new crypto.DigestStream("SHA-3"); } catch (e) { unknown = e.name; }
    const disposed = new crypto.DigestStream("SHA-256");
    disposed[Symbol.dispose]();
    disposed[Symbol.dispose]();
    const afterDispose = await disposed.getWriter().write(enc("x")).then(() => "written", (e) => e.message);
    return { sha: hex(await stream.digest), bytes: String(stream.bytesWritten), bytesType: typeof stream.bytesWritten, isWritable: stream instanceof WritableStream, md5: hex(await piped.digest), unknown, afterDispose };
  `);
  assert.equal(out.sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  assert.equal(out.bytes, "3");
  assert.equal(out.bytesType, "bigint", "a bigint, as in workerd");
  assert.equal(out.afterDispose, "The DigestStream was disposed.", "workerd's error for a write after [Symbol.dispose]()");
  assert.equal(out.isWritable, true);
  assert.equal(out.md5, "900150983cd24fb0d6963f7d28e17f72");
  assert.equal(out.unknown, "NotSupportedError");
});

test("DigestStream takes workerd's checksums: crc32, crc32c, crc64nvme (the catalogue's check values)", async (t) => {
  const out = await run(t, `
    const sums = {};
    for (const name of ["crc32", "CRC32C", "crc64nvme"]) {
      const stream = new crypto.DigestStream(name);
      const writer = stream.getWriter();
      await writer.write(enc("1234"));
      await writer.write(enc("56789"));
      await writer.close();
      sums[name] = hex(await stream.digest);
    }
    return sums;
  `);
  assert.deepEqual(out, { crc32: "cbf43926", CRC32C: "e3069283", crc64nvme: "ae8b14860a799888" });
});

test("HMAC: RFC 4231 vectors, verify, generateKey, JWK, and interop with Node", async (t) => {
  const out = await run(t, `
    const key256 = await subtle.importKey("raw", enc("Jefe"), { name: "HMAC", hash: "SHA-256" }, true, ["sign", "verify"]);
    const key512 = await subtle.importKey("raw", enc("Jefe"), { name: "HMAC", hash: { name: "SHA-512" } }, false, ["sign"]);
    const data = enc("what do ya want for nothing?");
    const mac256 = await subtle.sign("HMAC", key256, data);
    const generated = await subtle.generateKey({ name: "HMAC", hash: "SHA-384" }, true, ["sign", "verify"]);
    const jwk = await subtle.exportKey("jwk", key256);
    const reimported = await subtle.importKey("jwk", jwk, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    const genRaw = await subtle.exportKey("raw", generated);
    return {
      mac256: hex(mac256),
      mac512: hex(await subtle.sign({ name: "HMAC" }, key512, data)),
      ok: await subtle.verify("HMAC", key256, mac256, data),
      bad: await subtle.verify("HMAC", key256, mac256, enc("what do ya want for something?")),
      reimportedOk: await subtle.verify("HMAC", reimported, mac256, data),
      jwk,
      algorithm: key256.algorithm,
      generatedLength: generated.algorithm.length,
      genRaw: hex(genRaw),
      genMac: hex(await subtle.sign("HMAC", generated, enc("interop"))),
      type: key256.type, usages: key256.usages, tag: Object.prototype.toString.call(key256),
    };
  `);
  assert.equal(out.mac256, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  assert.equal(out.mac512, "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737");
  assert.equal(out.ok, true);
  assert.equal(out.bad, false);
  assert.equal(out.reimportedOk, true);
  assert.deepEqual(out.jwk, { kty: "oct", k: Buffer.from("Jefe").toString("base64url"), alg: "HS256", key_ops: ["sign", "verify"], ext: true });
  assert.deepEqual(out.algorithm, { name: "HMAC", hash: { name: "SHA-256" }, length: 32 });
  assert.equal(out.generatedLength, 1024);
  assert.equal(out.genRaw.length, 256);
  assert.deepEqual(out.usages, ["sign", "verify"]);
  assert.equal(out.type, "secret");
  assert.equal(out.tag, "[object CryptoKey]");
  // Node computes the same MAC with the generated key.
  const nodeKey = await subtle.importKey("raw", unhex(out.genRaw), { name: "HMAC", hash: "SHA-384" }, false, ["sign"]);
  assert.equal(hex(await subtle.sign("HMAC", nodeKey, enc("interop"))), out.genMac);
});

test("AES-GCM NIST vector, AES-CBC/CTR interop with Node, AES-KW RFC 3394 vector", async (t) => {
  const cbcKey = unhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  const iv = unhex("0f0e0d0c0b0a09080706050403020100");
  const nodeCbc = await subtle.importKey("raw", cbcKey, "AES-CBC", false, ["encrypt"]);
  const nodeCtr = await subtle.importKey("raw", cbcKey.slice(0, 24), "AES-CTR", false, ["encrypt"]);
  const plain = enc("The quick brown fox jumps over the lazy dog, twice over the lazy dog.");
  const cbcFromNode = hex(await subtle.encrypt({ name: "AES-CBC", iv }, nodeCbc, plain));
  const ctrFromNode = hex(await subtle.encrypt({ name: "AES-CTR", counter: iv, length: 64 }, nodeCtr, plain));
  const out = await run(t, `
    const key = await subtle.importKey("raw", unhex("feffe9928665731c6d6a8f9467308308"), "AES-GCM", true, ["encrypt", "decrypt"]);
    const iv = unhex("cafebabefacedbaddecaf888");
    const pt = unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255");
    const ct = await subtle.encrypt({ name: "AES-GCM", iv }, key, pt);
    const back = await subtle.decrypt({ name: "AES-GCM", iv }, key, ct);
    const aad = enc("header");
    const ct96 = await subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 96 }, key, pt);
    const back96 = await subtle.decrypt({ name: "AES-GCM", iv, additionalData: aad, tagLength: 96 }, key, ct96);
    const tampered = new Uint8Array(ct).slice(); tampered[3] ^= 1;
    const wrongAad = await errorName(subtle.decrypt({ name: "AES-GCM", iv, additionalData: enc("other"), tagLength: 96 }, key, ct96));

    const cbcKey = await subtle.importKey("raw", unhex(${JSON.stringify(hex(cbcKey))}), { name: "AES-CBC" }, false, ["decrypt", "encrypt"]);
    const cbcIv = unhex(${JSON.stringify(hex(iv))});
    const cbcPlain = new TextDecoder().decode(await subtle.decrypt({ name: "AES-CBC", iv: cbcIv }, cbcKey, unhex(${JSON.stringify(cbcFromNode)})));
    const cbcBadPad = await errorName(subtle.decrypt({ name: "AES-CBC", iv: cbcIv }, cbcKey, unhex(${JSON.stringify(cbcFromNode)}).slice(0, 32)));
    const ctrKey = await subtle.importKey("raw", unhex(${JSON.stringify(hex(cbcKey.slice(0, 24)))}), "AES-CTR", false, ["encrypt", "decrypt"]);
    const ctr = hex(await subtle.encrypt({ name: "AES-CTR", counter: cbcIv, length: 64 }, ctrKey, enc(${JSON.stringify(new TextDecoder().decode(plain))})));

    const kek = await subtle.importKey("raw", unhex("000102030405060708090a0b0c0d0e0f"), "AES-KW", false, ["wrapKey", "unwrapKey"]);
    const inner = await subtle.importKey("raw", unhex("00112233445566778899aabbccddeeff"), "AES-GCM", true, ["encrypt"]);
    const wrapped = await subtle.wrapKey("raw", inner, kek, "AES-KW");
    const unwrapped = await subtle.unwrapKey("raw", wrapped, kek, { name: "AES-KW" }, "AES-GCM", true, ["decrypt"]);
    const generated = await subtle.generateKey({ name: "AES-GCM", length: 192 }, false, ["encrypt", "decrypt"]);
    const roundTrip = new TextDecoder().decode(await subtle.decrypt({ name: "AES-GCM", iv }, generated, await subtle.encrypt({ name: "AES-GCM", iv }, generated, enc("hi"))));
    return {
      ct: hex(ct), back: hex(back), back96: hex(back96) === hex(pt), len96: ct96.byteLength - pt.length,
      tampered: await errorName(subtle.decrypt({ name: "AES-GCM", iv }, key, tampered)), wrongAad,
      cbcPlain, cbcBadPad, ctr,
      wrapped: hex(wrapped), unwrapped: hex(await subtle.exportKey("raw", unwrapped)), unwrappedUsages: unwrapped.usages,
      generated: generated.algorithm, roundTrip,
    };
  `);
  assert.equal(out.ct, "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985" + "4d5c2af327cd64a62cf35abd2ba6fab4");
  assert.equal(out.back, "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255");
  assert.equal(out.back96, true);
  assert.equal(out.len96, 12);
  assert.equal(out.tampered, "DOMException:OperationError");
  assert.equal(out.wrongAad, "DOMException:OperationError");
  assert.equal(out.cbcPlain, new TextDecoder().decode(plain));
  assert.equal(out.cbcBadPad, "DOMException:OperationError");
  assert.equal(out.ctr, ctrFromNode);
  assert.equal(out.wrapped, "1fa68b0a8112b447aef34bd8fb5a7b829d3e862371d2cfe5");
  assert.equal(out.unwrapped, "00112233445566778899aabbccddeeff");
  assert.deepEqual(out.unwrappedUsages, ["decrypt"]);
  assert.deepEqual(out.generated, { name: "AES-GCM", length: 192 });
  assert.equal(out.roundTrip, "hi");
});

test("PBKDF2 (RFC 6070) and HKDF (RFC 5869) deriveBits, deriveKey", async (t) => {
  const out = await run(t, `
    const password = await subtle.importKey("raw", enc("password"), "PBKDF2", false, ["deriveBits", "deriveKey"]);
    const pbkdf2 = (iterations) => subtle.deriveBits({ name: "PBKDF2", hash: "SHA-1", salt: enc("salt"), iterations }, password, 160);
    const ikm = await subtle.importKey("raw", new Uint8Array(22).fill(0x0b), { name: "HKDF" }, false, ["deriveBits", "deriveKey"]);
    const salt = Uint8Array.from({ length: 13 }, (_, i) => i);
    const info = Uint8Array.from({ length: 10 }, (_, i) => 0xf0 + i);
    const okm = await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, ikm, 336);
    const aes = await subtle.deriveKey({ name: "PBKDF2", hash: "SHA-256", salt: enc("salt"), iterations: 1000 }, password, { name: "AES-GCM", length: 256 }, true, ["encrypt"]);
    const hmac = await subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt, info }, ikm, { name: "HMAC", hash: "SHA-256" }, true, ["sign"]);
    return {
      one: hex(await pbkdf2(1)), many: hex(await pbkdf2(4096)), okm: hex(okm),
      aes: aes.algorithm, aesRaw: hex(await subtle.exportKey("raw", aes)), hmacLength: hmac.algorithm.length,
      noLength: await errorName(subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, ikm)),
      extractable: await errorName(subtle.importKey("raw", enc("pw"), "PBKDF2", true, ["deriveBits"])),
    };
  `);
  assert.equal(out.one, "0c60c80f961f0e71f3a9b524af6012062fe037a6");
  assert.equal(out.many, "4b007901b765489abead49d926f721d065a429c1");
  assert.equal(out.okm, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
  assert.deepEqual(out.aes, { name: "AES-GCM", length: 256 });
  const nodePassword = await subtle.importKey("raw", enc("password"), "PBKDF2", false, ["deriveBits"]);
  const expected = await subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt: enc("salt"), iterations: 1000 }, nodePassword, 256);
  assert.equal(out.aesRaw, hex(expected));
  assert.equal(out.hmacLength, 512);
  assert.equal(out.noLength, "DOMException:OperationError");
  assert.equal(out.extractable, "DOMException:SyntaxError");
});

test("ECDSA P-256/P-384: worker and Node verify each other's signatures (spki, raw, jwk, pkcs8)", async (t) => {
  const nodePair = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, true, ["sign", "verify"]);
  const nodeSig = await subtle.sign({ name: "ECDSA", hash: "SHA-384" }, nodePair.privateKey, enc("from node"));
  const nodeRaw = hex(await subtle.exportKey("raw", nodePair.publicKey));
  const nodePkcs8 = hex(await subtle.exportKey("pkcs8", nodePair.privateKey));
  const out = await run(t, `
    const pair = await subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
    const sig = await subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, enc("from worker"));
    const nodePublic = await subtle.importKey("raw", unhex(${JSON.stringify(nodeRaw)}), { name: "ECDSA", namedCurve: "P-384" }, true, ["verify"]);
    const nodePrivate = await subtle.importKey("pkcs8", unhex(${JSON.stringify(nodePkcs8)}), { name: "ECDSA", namedCurve: "P-384" }, true, ["sign"]);
    const sig384 = await subtle.sign({ name: "ECDSA", hash: "SHA-384" }, nodePrivate, enc("worker with node key"));
    const sig384sha1 = await subtle.sign({ name: "ECDSA", hash: "SHA-1" }, nodePrivate, enc("short hash"));
    const privateJwk = await subtle.exportKey("jwk", pair.privateKey);
    const fromJwk = await subtle.importKey("jwk", privateJwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    const sigJwk = await subtle.sign({ name: "ECDSA", hash: "SHA-256" }, fromJwk, enc("jwk"));
    return {
      sig: hex(sig), sigLength: sig.byteLength,
      spki: hex(await subtle.exportKey("spki", pair.publicKey)), jwk: await subtle.exportKey("jwk", pair.publicKey), privateJwk,
      pkcs8: hex(await subtle.exportKey("pkcs8", pair.privateKey)),
      nodeOk: await subtle.verify({ name: "ECDSA", hash: "SHA-384" }, nodePublic, unhex(${JSON.stringify(hex(nodeSig))}), enc("from node")),
      nodeBad: await subtle.verify({ name: "ECDSA", hash: "SHA-384" }, nodePublic, unhex(${JSON.stringify(hex(nodeSig))}), enc("from NODE")),
      sig384: hex(sig384), sig384sha1: hex(sig384sha1), sigJwk: hex(sigJwk), rawBack: hex(await subtle.exportKey("raw", nodePublic)),
      algorithm: pair.privateKey.algorithm, publicUsages: pair.publicKey.usages, privateUsages: pair.privateKey.usages,
      publicExtractable: pair.publicKey.extractable,
    };
  `);
  assert.equal(out.sigLength, 64);
  assert.equal(out.nodeOk, true);
  assert.equal(out.nodeBad, false);
  assert.equal(out.rawBack, nodeRaw);
  assert.deepEqual(out.algorithm, { name: "ECDSA", namedCurve: "P-256" });
  assert.deepEqual(out.publicUsages, ["verify"]);
  assert.deepEqual(out.privateUsages, ["sign"]);
  assert.equal(out.publicExtractable, true);
  assert.equal(out.jwk.kty, "EC");
  assert.equal(out.jwk.crv, "P-256");
  const viaSpki = await subtle.importKey("spki", unhex(out.spki), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const viaJwk = await subtle.importKey("jwk", out.jwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, viaSpki, unhex(out.sig), enc("from worker")), true);
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, viaJwk, unhex(out.sigJwk), enc("jwk")), true);
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-384" }, nodePair.publicKey, unhex(out.sig384), enc("worker with node key")), true);
  // A hash shorter than the curve (SHA-1 on P-384) is accepted and agrees with Node.
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-1" }, nodePair.publicKey, unhex(out.sig384sha1), enc("short hash")), true);
  // The worker's PKCS #8 and private JWK are usable by Node.
  const nodeFromPkcs8 = await subtle.importKey("pkcs8", unhex(out.pkcs8), { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const nodeFromJwk = await subtle.importKey("jwk", out.privateJwk, { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const s1 = await subtle.sign({ name: "ECDSA", hash: "SHA-256" }, nodeFromPkcs8, enc("x"));
  const s2 = await subtle.sign({ name: "ECDSA", hash: "SHA-256" }, nodeFromJwk, enc("x"));
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, viaSpki, s1, enc("x")), true);
  assert.equal(await subtle.verify({ name: "ECDSA", hash: "SHA-256" }, viaSpki, s2, enc("x")), true);
});

test("ECDH and X25519: shared secrets agree with Node's", async (t) => {
  const nodeEc = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
  const nodeX = await subtle.generateKey({ name: "X25519" }, true, ["deriveBits"]);
  const nodeEcSpki = hex(await subtle.exportKey("spki", nodeEc.publicKey));
  const nodeXRaw = hex(await subtle.exportKey("raw", nodeX.publicKey));
  const out = await run(t, `
    const ec = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits", "deriveKey"]);
    const x = await subtle.generateKey("X25519", true, ["deriveBits"]);
    const nodeEc = await subtle.importKey("spki", unhex(${JSON.stringify(nodeEcSpki)}), { name: "ECDH", namedCurve: "P-256" }, true, []);
    const nodeX = await subtle.importKey("raw", unhex(${JSON.stringify(nodeXRaw)}), { name: "X25519" }, true, []);
    const aes = await subtle.deriveKey({ name: "ECDH", public: nodeEc }, ec.privateKey, { name: "AES-GCM", length: 128 }, true, ["encrypt"]);
    const xJwk = await subtle.exportKey("jwk", x.privateKey);
    const x2 = await subtle.importKey("jwk", xJwk, "X25519", false, ["deriveBits"]);
    return {
      ecSecret: hex(await subtle.deriveBits({ name: "ECDH", public: nodeEc }, ec.privateKey, 256)),
      ecShort: hex(await subtle.deriveBits({ name: "ECDH", public: nodeEc }, ec.privateKey, 12)),
      ecFull: hex(await subtle.deriveBits({ name: "ECDH", public: nodeEc }, ec.privateKey, null)),
      tooLong: await errorName(subtle.deriveBits({ name: "ECDH", public: nodeEc }, ec.privateKey, 512)),
      aes: hex(await subtle.exportKey("raw", aes)),
      xSecret: hex(await subtle.deriveBits({ name: "X25519", public: nodeX }, x.privateKey, 256)),
      xSecret2: hex(await subtle.deriveBits({ name: "X25519", public: nodeX }, x2, 256)),
      ecPublic: hex(await subtle.exportKey("raw", ec.publicKey)),
      xPublic: hex(await subtle.exportKey("spki", x.publicKey)),
      xJwk, xAlgorithm: x.publicKey.algorithm,
    };
  `);
  const workerEc = await subtle.importKey("raw", unhex(out.ecPublic), { name: "ECDH", namedCurve: "P-256" }, false, []);
  const workerX = await subtle.importKey("spki", unhex(out.xPublic), { name: "X25519" }, false, []);
  const ecExpected = hex(await subtle.deriveBits({ name: "ECDH", public: workerEc }, nodeEc.privateKey, 256));
  assert.equal(out.ecSecret, ecExpected);
  assert.equal(out.ecFull, ecExpected);
  assert.equal(out.ecShort, (parseInt(ecExpected.slice(0, 4), 16) & 0xfff0).toString(16).padStart(4, "0"));
  assert.equal(out.tooLong, "DOMException:OperationError");
  assert.equal(out.aes, ecExpected.slice(0, 32));
  const xExpected = hex(await subtle.deriveBits({ name: "X25519", public: workerX }, nodeX.privateKey, 256));
  assert.equal(out.xSecret, xExpected);
  assert.equal(out.xSecret2, xExpected);
  assert.equal(out.xJwk.kty, "OKP");
  assert.equal(out.xJwk.crv, "X25519");
  assert.deepEqual(out.xAlgorithm, { name: "X25519" });
});

test("RSA: PKCS1-v1_5, PSS and OAEP interoperate with Node", async (t) => {
  const hashed = (name) => ({ name, modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" });
  const nodePss = await subtle.generateKey(hashed("RSA-PSS"), true, ["sign", "verify"]);
  const nodeOaep = await subtle.generateKey(hashed("RSA-OAEP"), true, ["encrypt", "decrypt"]);
  const pssPkcs8 = hex(await subtle.exportKey("pkcs8", nodePss.privateKey));
  const oaepJwk = await subtle.exportKey("jwk", nodeOaep.publicKey);
  const oaepPkcs8 = hex(await subtle.exportKey("pkcs8", nodeOaep.privateKey));
  const fromNode = hex(await subtle.encrypt({ name: "RSA-OAEP", label: enc("label") }, nodeOaep.publicKey, enc("secret from node")));
  const out = await run(t, `
    const pair = await subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]);
    const sig = await subtle.sign("RSASSA-PKCS1-v1_5", pair.privateKey, enc("pkcs1"));
    const pss = await subtle.importKey("pkcs8", unhex(${JSON.stringify(pssPkcs8)}), { name: "RSA-PSS", hash: "SHA-256" }, false, ["sign"]);
    const pssSig = await subtle.sign({ name: "RSA-PSS", saltLength: 32 }, pss, enc("pss"));
    const oaepPublic = await subtle.importKey("jwk", ${JSON.stringify(oaepJwk)}, { name: "RSA-OAEP", hash: "SHA-256" }, true, ["encrypt"]);
    const oaepPrivate = await subtle.importKey("pkcs8", unhex(${JSON.stringify(oaepPkcs8)}), { name: "RSA-OAEP", hash: "SHA-256" }, true, ["decrypt"]);
    const ct = await subtle.encrypt({ name: "RSA-OAEP" }, oaepPublic, enc("secret from worker"));
    const tampered = unhex(${JSON.stringify(fromNode)}); tampered[10] ^= 1;
    return {
      sig: hex(sig), spki: hex(await subtle.exportKey("spki", pair.publicKey)), privateJwk: await subtle.exportKey("jwk", pair.privateKey),
      selfOk: await subtle.verify("RSASSA-PKCS1-v1_5", pair.publicKey, sig, enc("pkcs1")),
      algorithm: { ...pair.publicKey.algorithm, publicExponent: [...pair.publicKey.algorithm.publicExponent] },
      pssSig: hex(pssSig), ct: hex(ct),
      decrypted: new TextDecoder().decode(await subtle.decrypt({ name: "RSA-OAEP", label: enc("label") }, oaepPrivate, unhex(${JSON.stringify(fromNode)}))),
      tampered: await errorName(subtle.decrypt({ name: "RSA-OAEP", label: enc("label") }, oaepPrivate, tampered)),
      oaepAlgorithm: oaepPrivate.algorithm.modulusLength,
    };
  `);
  assert.equal(out.selfOk, true);
  assert.deepEqual(out.algorithm, { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: [1, 0, 1], hash: { name: "SHA-256" } });
  const pkcs1Public = await subtle.importKey("spki", unhex(out.spki), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"]);
  assert.equal(await subtle.verify("RSASSA-PKCS1-v1_5", pkcs1Public, unhex(out.sig), enc("pkcs1")), true);
  // The worker's private JWK works in Node, and PKCS1-v1_5 signatures are deterministic.
  const pkcs1Private = await subtle.importKey("jwk", out.privateJwk, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["sign"]);
  assert.equal(hex(await subtle.sign("RSASSA-PKCS1-v1_5", pkcs1Private, enc("pkcs1"))), out.sig);
  assert.equal(out.privateJwk.alg, "RS256");
  assert.equal(await subtle.verify({ name: "RSA-PSS", saltLength: 32 }, nodePss.publicKey, unhex(out.pssSig), enc("pss")), true);
  assert.equal(new TextDecoder().decode(await subtle.decrypt({ name: "RSA-OAEP" }, nodeOaep.privateKey, unhex(out.ct))), "secret from worker");
  assert.equal(out.decrypted, "secret from node");
  assert.equal(out.tampered, "DOMException:OperationError");
  assert.equal(out.oaepAlgorithm, 2048);
});

test("Ed25519 (and the NODE-ED25519 alias): sign/verify with Node, raw/jwk/pkcs8/spki", async (t) => {
  const nodePair = await subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]);
  const nodeSig = hex(await subtle.sign("Ed25519", nodePair.privateKey, enc("node")));
  const nodeRaw = hex(await subtle.exportKey("raw", nodePair.publicKey));
  const nodePkcs8 = hex(await subtle.exportKey("pkcs8", nodePair.privateKey));
  const out = await run(t, `
    const pair = await subtle.generateKey("Ed25519", true, ["sign", "verify"]);
    const sig = await subtle.sign("Ed25519", pair.privateKey, enc("worker"));
    const nodePublic = await subtle.importKey("raw", unhex(${JSON.stringify(nodeRaw)}), "Ed25519", true, ["verify"]);
    const nodePrivate = await subtle.importKey("pkcs8", unhex(${JSON.stringify(nodePkcs8)}), { name: "Ed25519" }, true, ["sign"]);
    const alias = await subtle.importKey("raw", unhex(${JSON.stringify(nodeRaw)}), { name: "NODE-ED25519", namedCurve: "NODE-ED25519" }, false, ["verify"]);
    const aliasPair = await subtle.generateKey({ name: "NODE-ED25519", namedCurve: "NODE-ED25519" }, false, ["sign", "verify"]);
    const aliasSig = await subtle.sign("NODE-ED25519", aliasPair.privateKey, enc("alias"));
    const jwk = await subtle.exportKey("jwk", pair.privateKey);
    const fromJwk = await subtle.importKey("jwk", jwk, "Ed25519", false, ["sign"]);
    return {
      sig: hex(sig), raw: hex(await subtle.exportKey("raw", pair.publicKey)), spki: hex(await subtle.exportKey("spki", pair.publicKey)),
      pkcs8: hex(await subtle.exportKey("pkcs8", pair.privateKey)), jwk,
      nodeOk: await subtle.verify("Ed25519", nodePublic, unhex(${JSON.stringify(nodeSig)}), enc("node")),
      nodeBad: await subtle.verify("Ed25519", nodePublic, unhex(${JSON.stringify(nodeSig)}), enc("nope")),
      aliasOk: await subtle.verify({ name: "NODE-ED25519" }, alias, unhex(${JSON.stringify(nodeSig)}), enc("node")),
      aliasSelf: await subtle.verify("NODE-ED25519", aliasPair.publicKey, aliasSig, enc("alias")),
      aliasAlgorithm: alias.algorithm,
      sameSig: hex(await subtle.sign("Ed25519", nodePrivate, enc("node"))) === ${JSON.stringify(nodeSig)},
      jwkSig: hex(await subtle.sign("Ed25519", fromJwk, enc("worker"))) === hex(sig),
      pkcs8Back: hex(await subtle.exportKey("pkcs8", nodePrivate)),
    };
  `);
  assert.equal(out.nodeOk, true);
  assert.equal(out.nodeBad, false);
  assert.equal(out.aliasOk, true);
  assert.equal(out.aliasSelf, true);
  assert.deepEqual(out.aliasAlgorithm, { name: "NODE-ED25519", namedCurve: "NODE-ED25519" });
  assert.equal(out.sameSig, true); // Ed25519 is deterministic: same key, same message, same signature.
  assert.equal(out.jwkSig, true);
  assert.equal(out.pkcs8Back, nodePkcs8);
  const viaRaw = await subtle.importKey("raw", unhex(out.raw), "Ed25519", false, ["verify"]);
  const viaSpki = await subtle.importKey("spki", unhex(out.spki), "Ed25519", false, ["verify"]);
  assert.equal(await subtle.verify("Ed25519", viaRaw, unhex(out.sig), enc("worker")), true);
  assert.equal(await subtle.verify("Ed25519", viaSpki, unhex(out.sig), enc("worker")), true);
  const nodePrivate = await subtle.importKey("pkcs8", unhex(out.pkcs8), "Ed25519", false, ["sign"]);
  assert.equal(hex(await subtle.sign("Ed25519", nodePrivate, enc("worker"))), out.sig);
  const nodeJwk = await subtle.importKey("jwk", out.jwk, "Ed25519", false, ["sign"]);
  assert.equal(hex(await subtle.sign("Ed25519", nodeJwk, enc("worker"))), out.sig);
});

test("wrapKey/unwrapKey with AES-GCM, RSA-OAEP and AES-KW (jwk and raw)", async (t) => {
  const out = await run(t, `
    const hmac = await subtle.importKey("raw", enc("a secret hmac key"), { name: "HMAC", hash: "SHA-256" }, true, ["sign"]);
    const gcm = await subtle.generateKey({ name: "AES-GCM", length: 256 }, false, ["wrapKey", "unwrapKey"]);
    const iv = new Uint8Array(12);
    const wrapped = await subtle.wrapKey("jwk", hmac, gcm, { name: "AES-GCM", iv });
    const back = await subtle.unwrapKey("jwk", wrapped, gcm, { name: "AES-GCM", iv }, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const rsa = await subtle.generateKey({ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-1" }, false, ["wrapKey", "unwrapKey"]);
    const aes = await subtle.generateKey({ name: "AES-CBC", length: 128 }, true, ["encrypt"]);
    const rsaWrapped = await subtle.wrapKey("raw", aes, rsa.publicKey, "RSA-OAEP");
    const aesBack = await subtle.unwrapKey("raw", rsaWrapped, rsa.privateKey, "RSA-OAEP", "AES-CBC", true, ["encrypt"]);
    const kek = await subtle.generateKey({ name: "AES-KW", length: 192 }, false, ["wrapKey", "unwrapKey"]);
    const kwWrapped = await subtle.wrapKey("jwk", hmac, kek, "AES-KW");
    const kwBack = await subtle.unwrapKey("jwk", kwWrapped, kek, "AES-KW", { name: "HMAC", hash: "SHA-256" }, true, ["sign"]);
    const tampered = new Uint8Array(kwWrapped).slice(); tampered[0] ^= 1;
    const sign = async (k) => hex(await subtle.sign("HMAC", k, enc("data")));
    return {
      hmac: await sign(hmac), back: await sign(back), kwBack: await sign(kwBack), backExtractable: back.extractable,
      aes: hex(await subtle.exportKey("raw", aes)), aesBack: hex(await subtle.exportKey("raw", aesBack)),
      kwTampered: await errorName(subtle.unwrapKey("jwk", tampered, kek, "AES-KW", { name: "HMAC", hash: "SHA-256" }, true, ["sign"])),
      notExtractable: await errorName(subtle.wrapKey("raw", gcm, kek, "AES-KW")),
    };
  `);
  assert.equal(out.back, out.hmac);
  assert.equal(out.kwBack, out.hmac);
  assert.equal(out.backExtractable, false);
  assert.equal(out.aesBack, out.aes);
  assert.equal(out.aes.length, 32);
  assert.equal(out.kwTampered, "DOMException:OperationError");
  assert.equal(out.notExtractable, "DOMException:InvalidAccessError");
});

test("errors: WebCrypto DOMException names, TypeErrors, rejections rather than throws", async (t) => {
  const out = await run(t, `
    const hmac = await subtle.importKey("raw", enc("k"), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const aes = await subtle.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["encrypt"]);
    let syncThrow = false, promise;
    try { promise = subtle.digest("SHA-256", "not bytes"); } catch { syncThrow = true; }
    let constructed;
    try { new CryptoKey(); } catch (e) { constructed = e.name; }
    let subtleConstructed;
    try { new SubtleCrypto(); } catch (e) { subtleConstructed = e.name; }
    return {
      unknownDigest: await errorName(subtle.digest("SHA-3", enc("x"))),
      unknownGenerate: await errorName(subtle.generateKey({ name: "AES-XTS", length: 128 }, true, ["encrypt"])),
      unknownCurve: await errorName(subtle.generateKey({ name: "ECDSA", namedCurve: "P-192" }, true, ["sign"])),
      noName: await errorName(subtle.digest({}, enc("x"))),
      wrongUsage: await errorName(subtle.verify("HMAC", hmac, new Uint8Array(32), enc("x"))),
      wrongAlgorithm: await errorName(subtle.sign({ name: "ECDSA", hash: "SHA-256" }, hmac, enc("x"))),
      decryptWithEncryptOnly: await errorName(subtle.decrypt({ name: "AES-GCM", iv: new Uint8Array(12) }, aes, new Uint8Array(32))),
      corruptSpki: await errorName(subtle.importKey("spki", new Uint8Array([48, 3, 1, 2, 3]), { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])),
      corruptPkcs8: await errorName(subtle.importKey("pkcs8", new Uint8Array(40), { name: "RSA-PSS", hash: "SHA-256" }, true, ["sign"])),
      badAesLength: await errorName(subtle.importKey("raw", new Uint8Array(15), "AES-CBC", true, ["encrypt"])),
      badJwk: await errorName(subtle.importKey("jwk", { kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA" }, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"])),
      notExtractable: await errorName(subtle.exportKey("raw", hmac)),
      emptyUsages: await errorName(subtle.generateKey({ name: "AES-GCM", length: 128 }, true, [])),
      badUsage: await errorName(subtle.importKey("raw", new Uint8Array(16), "AES-GCM", true, ["sign"])),
      invalidUsageString: await errorName(subtle.importKey("raw", new Uint8Array(16), "AES-GCM", true, ["fly"])),
      badFormat: await errorName(subtle.importKey("pem", new Uint8Array(16), "AES-GCM", true, ["encrypt"])),
      notAKey: await errorName(subtle.sign("HMAC", {}, enc("x"))),
      missingArgs: await errorName(subtle.sign("HMAC")),
      digestTypeError: await errorName(promise), syncThrow, constructed, subtleConstructed,
      hasSubtle: crypto.subtle instanceof SubtleCrypto && crypto.subtle === crypto.subtle,
    };
  `);
  assert.deepEqual(out, {
    unknownDigest: "DOMException:NotSupportedError",
    unknownGenerate: "DOMException:NotSupportedError",
    unknownCurve: "DOMException:NotSupportedError",
    noName: "TypeError",
    wrongUsage: "DOMException:InvalidAccessError",
    wrongAlgorithm: "DOMException:InvalidAccessError",
    decryptWithEncryptOnly: "DOMException:InvalidAccessError",
    corruptSpki: "DOMException:DataError",
    corruptPkcs8: "DOMException:DataError",
    badAesLength: "DOMException:DataError",
    badJwk: "DOMException:DataError",
    notExtractable: "DOMException:InvalidAccessError",
    emptyUsages: "DOMException:SyntaxError",
    badUsage: "DOMException:SyntaxError",
    invalidUsageString: "TypeError",
    badFormat: "TypeError",
    notAKey: "TypeError",
    missingArgs: "TypeError",
    digestTypeError: "TypeError",
    syncThrow: false,
    constructed: "TypeError",
    subtleConstructed: "TypeError",
    hasSubtle: true,
  });
});
