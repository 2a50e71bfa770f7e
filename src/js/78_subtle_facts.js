// Web Crypto's per-algorithm facts for crypto.subtle (79_subtle.js): which native key kind an
// asymmetric algorithm has, the usages each key type allows, hash block sizes and named curves,
// the JWK 'alg' of each algorithm and the JWK members every import checks, and JWK's base64url.
// What is wrong is a DOMException of the spec's name (DataError, NotSupportedError).

const fail = (name, message) => new internals.DOMException(message, name);

const RSA = ["RSASSA-PKCS1-v1_5", "RSA-PSS", "RSA-OAEP"];

/** The native key kind of an asymmetric algorithm, or undefined for secret-key algorithms. */
function asymmetricKind(name) {
  if (RSA.includes(name)) return "RSA";
  if (name === "ECDSA" || name === "ECDH") return "EC";
  if (name === "Ed25519" || name === "NODE-ED25519") return "Ed25519";
  if (name === "X25519") return "X25519";
  return undefined;
}

/**
 * [private key usages, public key usages] of an asymmetric algorithm. Before strict_crypto_checks
 * (2023-08-01) an imported ECDH public key could have the private key's usages.
 */
function pairUsages(name, importing = false) {
  if (name === "RSA-OAEP") return [["decrypt", "unwrapKey"], ["encrypt", "wrapKey"]];
  if (name === "ECDH" && importing && !internals.feature("strict_crypto_checks")) return [["deriveKey", "deriveBits"], ["deriveKey", "deriveBits"]];
  if (name === "ECDH" || name === "X25519") return [["deriveKey", "deriveBits"], []];
  return [["sign"], ["verify"]];
}

function secretUsages(name) {
  if (name === "HMAC") return ["sign", "verify"];
  if (name === "AES-KW") return ["wrapKey", "unwrapKey"];
  if (name === "PBKDF2" || name === "HKDF") return ["deriveKey", "deriveBits"];
  return ["encrypt", "decrypt", "wrapKey", "unwrapKey"];
}

const HASH_BLOCK_BITS = { "SHA-1": 512, "SHA-256": 512, "SHA-384": 1024, "SHA-512": 1024 };
const CURVES = ["P-256", "P-384", "P-521"];

function checkCurve(algorithm) {
  if (algorithm.name === "NODE-ED25519") {
    if (algorithm.namedCurve !== "NODE-ED25519") throw fail("NotSupportedError", "NODE-ED25519 keys need namedCurve 'NODE-ED25519'");
    return;
  }
  if (!CURVES.includes(algorithm.namedCurve)) {
    throw fail("NotSupportedError", `Unsupported namedCurve '${algorithm.namedCurve}' (supported: ${CURVES.join(", ")})`);
  }
}

function jwkAlg(algorithm, bits) {
  const hashBits = algorithm.hash ? algorithm.hash.name.slice(4) : "";
  switch (algorithm.name) {
    case "HMAC":
      return `HS${hashBits}`;
    case "AES-GCM": case "AES-CBC": case "AES-CTR": case "AES-KW":
      return `A${bits}${algorithm.name.slice(4)}`;
    case "RSASSA-PKCS1-v1_5":
      return `RS${hashBits}`;
    case "RSA-PSS":
      return `PS${hashBits}`;
    case "RSA-OAEP":
      return hashBits === "1" ? "RSA-OAEP" : `RSA-OAEP-${hashBits}`;
    case "ECDSA":
      return algorithm.namedCurve === "P-256" ? "ES256" : "ES384";
    case "Ed25519": case "NODE-ED25519":
      return "EdDSA";
    default:
      return undefined;
  }
}

/** The JWK checks shared by every key type (use, key_ops, ext, alg). */
function checkJwk(jwk, algorithm, usages, extractable, expectedAlg, use) {
  if (expectedAlg !== undefined && jwk.alg !== undefined) {
    const allowed = algorithm.name === "Ed25519" || algorithm.name === "NODE-ED25519" ? ["EdDSA", "Ed25519"] : [expectedAlg];
    if (!allowed.includes(jwk.alg)) throw fail("DataError", `The JWK 'alg' member must be '${expectedAlg}'`);
  }
  if (usages.length > 0 && jwk.use !== undefined && jwk.use !== use) throw fail("DataError", `The JWK 'use' member must be '${use}'`);
  if (jwk.key_ops !== undefined) {
    if (!Array.isArray(jwk.key_ops)) throw fail("DataError", "The JWK 'key_ops' member must be an array");
    const missing = usages.find((u) => !jwk.key_ops.includes(u));
    if (missing !== undefined) throw fail("DataError", `The JWK 'key_ops' member does not allow '${missing}'`);
  }
  if (jwk.ext === false && extractable) throw fail("DataError", "The JWK is not extractable ('ext' is false)");
}

const base64url = {
  encode(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  },
  decode(text, member) {
    if (typeof text !== "string" || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) throw fail("DataError", `The JWK member '${member}' is not valid base64url`);
    let b64 = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
    while (b64.length % 4) b64 += "=";
    let binary;
    try {
      binary = atob(b64);
    } catch {
      throw fail("DataError", `The JWK member '${member}' is not valid base64url`);
    }
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  },
};

internals.subtleFacts = { RSA, asymmetricKind, pairUsages, secretUsages, HASH_BLOCK_BITS, CURVES, checkCurve, jwkAlg, checkJwk, base64url };
