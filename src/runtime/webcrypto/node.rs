//! The parts of `node:crypto` that `crypto.subtle`'s operations do not cover (see
//! `src/js/node/crypto.js`): recognising a key's type from its DER (PKCS #8, SPKI, PKCS #1,
//! SEC1), PKCS #1 / SEC1 export, a private key's public half, ECDSA signature encodings (DER
//! vs IEEE P1363), scrypt, and AES-CBC/CTR/GCM as Node's ciphers use them (CBC without
//! padding, CTR with the whole 128-bit block as counter, GCM with a detached tag), and the
//! public key of an X.509 certificate (`x509-cert`). All
//! primitives come from RustCrypto crates.

use super::asymmetric::{okp_oid, okp_private_from_pkcs8, okp_public_of, okp_spki, ED25519_OID, X25519_OID};
use super::{symmetric, Error, Out, Params, Result};
use pkcs8::der::Decode;
use pkcs8::spki::SubjectPublicKeyInfoRef;
use pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, ObjectIdentifier, PrivateKeyInfo};
use rsa::pkcs1::{DecodeRsaPrivateKey, DecodeRsaPublicKey, EncodeRsaPrivateKey, EncodeRsaPublicKey};
use rsa::traits::PublicKeyParts;
use rsa::{RsaPrivateKey, RsaPublicKey};

const RSA_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const EC_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const P256_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
const P521_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.35");
const P224_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.33");
const DSA_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10040.4.1");

fn invalid(what: &str, detail: impl std::fmt::Display) -> Error {
  Error::Data(format!("Invalid {what} key: {detail}"))
}

fn encode_error<E: std::fmt::Display>(e: E) -> Error {
  Error::Operation(format!("Key encoding failed: {e}"))
}

/// Runs `$body` with `$c` naming the crate of the NIST curve `$curve` (P-224, P-256, P-384, P-521;
/// node_dh.rs uses it too).
macro_rules! with_curve {
  ($curve:expr, $c:ident => $body:expr) => {
    match $curve {
      "P-224" => {
        use p224 as $c;
        $body
      }
      "P-256" => {
        use p256 as $c;
        $body
      }
      "P-384" => {
        use p384 as $c;
        $body
      }
      "P-521" => {
        use p521 as $c;
        $body
      }
      other => Err(Error::NotSupported(format!("Unsupported curve '{other}'"))),
    }
  };
}

/// Runs `$body` with `$D` the digest type of a (lower-case, canonical) Node digest name.
macro_rules! with_any_digest {
  ($name:expr, $D:ident => $body:expr) => {
    match $name {
      "md5" => {
        type $D = md5::Md5;
        $body
      }
      "sha1" => {
        type $D = sha1::Sha1;
        $body
      }
      "sha224" => {
        type $D = sha2::Sha224;
        $body
      }
      "sha256" => {
        type $D = sha2::Sha256;
        $body
      }
      "sha384" => {
        type $D = sha2::Sha384;
        $body
      }
      "sha512" => {
        type $D = sha2::Sha512;
        $body
      }
      "sha512-224" => {
        type $D = sha2::Sha512_224;
        $body
      }
      "sha512-256" => {
        type $D = sha2::Sha512_256;
        $body
      }
      other => Err(Error::NotSupported(format!("Unsupported digest '{other}'"))),
    }
  };
}

/// Runs operation `op` of node:crypto.
pub fn call(op: &str, p: &Params) -> Result<Out> {
  match op {
    // {format: pkcs8|spki|pkcs1-private|pkcs1-public|sec1|x509, data} -> [type, kind, der, curve, bits, exponent]
    "keyInfo" => key_info(p.str("format")?, p.bytes("data")?),
    // {kind, namedCurve?, key (pkcs8)} -> spki
    "publicOf" => public_of(p.str("kind")?, p.opt_str("namedCurve"), p.bytes("key")?).map(Out::Bytes),
    // {type, key (pkcs8 | spki)} -> PKCS #1 DER (RSA)
    "toPkcs1" => to_pkcs1(p.str("type")? == "private", p.bytes("key")?).map(Out::Bytes),
    // {namedCurve, key (pkcs8)} -> SEC1 DER (EC)
    "toSec1" => {
      let curve = p.str("namedCurve")?;
      let oid = match curve {
        "P-384" => P384_OID,
        "P-521" => P521_OID,
        "P-224" => P224_OID,
        _ => P256_OID,
      };
      with_curve!(curve, c => {
        use c::elliptic_curve::sec1::ToEncodedPoint;
        use pkcs8::der::Encode;
        let key = c::SecretKey::from_pkcs8_der(p.bytes("key")?).map_err(|e| invalid("EC", e))?;
        let secret = key.to_bytes();
        let public = key.public_key().to_encoded_point(false);
        // With the curve's OID and the public key, as OpenSSL writes it.
        let document = sec1::EcPrivateKey { private_key: &secret, parameters: Some(sec1::EcParameters::NamedCurve(oid)), public_key: Some(public.as_bytes()) };
        Ok(Out::Bytes(document.to_der().map_err(encode_error)?))
      })
    }
    // {namedCurve, signature} -> DER / IEEE P1363
    "sigToDer" => with_curve!(p.str("namedCurve")?, c => {
      let sig = c::ecdsa::Signature::from_slice(p.bytes("signature")?).map_err(|e| Error::Data(format!("Invalid signature: {e}")))?;
      Ok(Out::Bytes(sig.to_der().as_bytes().to_vec()))
    }),
    "sigFromDer" => with_curve!(p.str("namedCurve")?, c => {
      // A malformed DER signature is an invalid one (verification answers false), not an error.
      Ok(match c::ecdsa::Signature::from_der(p.bytes("signature")?) {
        Ok(sig) => Out::Bytes(sig.to_bytes().to_vec()),
        Err(_) => Out::Bool(false),
      })
    }),
    // {password, salt, N, r, p, length}
    "scrypt" => scrypt(p).map(Out::Bytes),
    // {hash (a Node digest name), key, salt, info, length (bytes)}: HKDF over any of Node's digests
    "hkdf" => {
      let mut out = vec![0u8; p.num("length")? as usize];
      let (key, salt, info) = (p.bytes("key")?, p.bytes("salt")?, p.bytes("info")?);
      with_any_digest!(p.str("hash")?, D => {
        hkdf::SimpleHkdf::<D>::new(Some(salt), key).expand(info, &mut out).map_err(|_| Error::Operation("Invalid key length".into()))
      })?;
      Ok(Out::Bytes(out))
    }
    // {hash, password, salt, iterations, length (bytes)}
    "pbkdf2" => {
      let mut out = vec![0u8; p.num("length")? as usize];
      let (password, salt, rounds) = (p.bytes("password")?, p.bytes("salt")?, p.num("iterations")? as u32);
      with_any_digest!(p.str("hash")?, D => {
        pbkdf2::pbkdf2_hmac::<D>(password, salt, rounds, &mut out);
        Ok::<(), Error>(())
      })?;
      Ok(Out::Bytes(out))
    }
    // {data (EncryptedPrivateKeyInfo DER), passphrase} -> PKCS #8 DER
    "pkcs8Decrypt" => {
      let info = pkcs8::EncryptedPrivateKeyInfo::from_der(p.bytes("data")?).map_err(|e| invalid("encrypted private", e))?;
      let document = info.decrypt(p.bytes("passphrase")?).map_err(|e| invalid("encrypted private", e))?;
      Ok(Out::Bytes(document.as_bytes().to_vec()))
    }
    // {key (PKCS #8 DER), passphrase, cipher: aes-128-cbc | aes-256-cbc} -> EncryptedPrivateKeyInfo DER
    // (PBES2 with PBKDF2-HMAC-SHA256, 2048 iterations, as OpenSSL writes it)
    "pkcs8Encrypt" => {
      let mut salt = [0u8; 16];
      let mut iv = [0u8; 16];
      rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut salt);
      rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut iv);
      let params = match p.str("cipher")? {
        "aes-128-cbc" => pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes128cbc(2048, &salt, &iv),
        "aes-256-cbc" => pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, &salt, &iv),
        other => return Err(Error::NotSupported(format!("Unsupported cipher '{other}' for private key encryption; aes-128-cbc and aes-256-cbc are supported"))),
      }
      .map_err(encode_error)?;
      let info = PrivateKeyInfo::from_der(p.bytes("key")?).map_err(|e| invalid("private", e))?;
      let document = info.encrypt_with_params(params, p.bytes("passphrase")?).map_err(encode_error)?;
      Ok(Out::Bytes(document.as_bytes().to_vec()))
    }
    // {key (PKCS #8 | SPKI DER), private, encrypt, padding (1 PKCS #1 v1.5 | 3 none), data}:
    // publicEncrypt / privateDecrypt / privateEncrypt / publicDecrypt without OAEP
    "rsaCipher" => rsa_cipher(p).map(Out::Bytes),

    // {mode: cbc|ctr|gcm, encrypt, key, iv, data, padding?, counterBits? (ctr), aad?, tag?, tagLength?}
    "cipher" => cipher(p).map(Out::Bytes),
    // {data (certificate DER)} -> its parts (node_x509.rs)
    "x509Parse" => super::node_x509::parse(p.bytes("data")?),
    "dhGeneratePrime" | "dhCheck" | "dhModPow" | "dhPrivate" | "ecdhKeys" | "ecdhCompute" | "ecPoint" | "ecGenerate" => super::node_dh::call(op, p),
    _ => Err(Error::NotSupported(format!("Unknown node:crypto operation '{op}'"))),
  }
}

fn curve_name(oid: ObjectIdentifier) -> Result<&'static str> {
  match oid {
    P256_OID => Ok("P-256"),
    P384_OID => Ok("P-384"),
    P521_OID => Ok("P-521"),
    P224_OID => Ok("P-224"),
    other => Err(Error::NotSupported(format!("Unsupported EC curve (OID {other}); P-224, P-256, P-384 and P-521 are supported"))),
  }
}

fn info(private: bool, kind: &str, der: Vec<u8>, curve: &str, rsa: Option<&RsaPublicKey>) -> Out {
  let (bits, exponent) = rsa.map(|k| (k.n().bits() as f64, k.e().to_bytes_be())).unwrap_or((0.0, Vec::new()));
  Out::List(vec![
    Out::Str(if private { "private" } else { "public" }.into()),
    Out::Str(kind.into()),
    Out::Bytes(der),
    Out::Str(curve.into()),
    Out::Num(bits),
    Out::Bytes(exponent),
  ])
}

fn key_info(format: &str, data: &[u8]) -> Result<Out> {
  match format {
    "pkcs8" => {
      let parsed = PrivateKeyInfo::from_der(data).map_err(|e| invalid("private", e))?;
      let oid = parsed.algorithm.oid;
      if oid == RSA_OID {
        let key = RsaPrivateKey::from_pkcs8_der(data).map_err(|e| invalid("RSA private", e))?;
        key.validate().map_err(|e| invalid("RSA private", e))?;
        let public = key.to_public_key();
        Ok(info(true, "rsa", data.to_vec(), "", Some(&public)))
      } else if oid == EC_OID {
        let curve_oid = parsed.algorithm.parameters_oid().map_err(|e| invalid("EC private", e))?;
        let curve = curve_name(curve_oid)?;
        with_curve!(curve, c => {
          let key = c::SecretKey::from_pkcs8_der(data).map_err(|e| invalid("EC private", e))?;
          Ok(info(true, "ec", key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec(), curve, None))
        })
      } else if oid == DSA_OID {
        let key = dsa::SigningKey::from_pkcs8_der(data).map_err(|e| invalid("DSA private", e))?;
        Ok(dsa_info(true, data.to_vec(), key.verifying_key()))
      } else if oid == ED25519_OID || oid == X25519_OID {
        okp_private_from_pkcs8(oid, data)?;
        Ok(info(true, if oid == ED25519_OID { "ed25519" } else { "x25519" }, data.to_vec(), "", None))
      } else {
        Err(Error::NotSupported(format!("Unsupported key type (OID {oid})")))
      }
    }
    "spki" => {
      let parsed = SubjectPublicKeyInfoRef::from_der(data).map_err(|e| invalid("public", e))?;
      let oid = parsed.algorithm.oid;
      if oid == RSA_OID {
        let key = RsaPublicKey::from_public_key_der(data).map_err(|e| invalid("RSA public", e))?;
        Ok(info(false, "rsa", data.to_vec(), "", Some(&key)))
      } else if oid == EC_OID {
        let curve_oid = parsed.algorithm.parameters_oid().map_err(|e| invalid("EC public", e))?;
        let curve = curve_name(curve_oid)?;
        with_curve!(curve, c => {
          c::PublicKey::from_public_key_der(data).map_err(|e| invalid("EC public", e))?;
          Ok(info(false, "ec", data.to_vec(), curve, None))
        })
      } else if oid == DSA_OID {
        let key = dsa::VerifyingKey::from_public_key_der(data).map_err(|e| invalid("DSA public", e))?;
        Ok(dsa_info(false, data.to_vec(), &key))
      } else if oid == ED25519_OID || oid == X25519_OID {
        let bytes = parsed.subject_public_key.as_bytes().filter(|b| b.len() == 32).ok_or_else(|| invalid("public", "the key must be 32 bytes"))?;
        if oid == ED25519_OID {
          let bytes: [u8; 32] = bytes.try_into().unwrap();
          ed25519_dalek::VerifyingKey::from_bytes(&bytes).map_err(|e| invalid("Ed25519 public", e))?;
        }
        Ok(info(false, if oid == ED25519_OID { "ed25519" } else { "x25519" }, data.to_vec(), "", None))
      } else {
        Err(Error::NotSupported(format!("Unsupported key type (OID {oid})")))
      }
    }
    "pkcs1-private" => {
      let key = RsaPrivateKey::from_pkcs1_der(data).map_err(|e| invalid("RSA private", e))?;
      key.validate().map_err(|e| invalid("RSA private", e))?;
      let der = key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec();
      Ok(info(true, "rsa", der, "", Some(&key.to_public_key())))
    }
    "pkcs1-public" => {
      let key = RsaPublicKey::from_pkcs1_der(data).map_err(|e| invalid("RSA public", e))?;
      let der = key.to_public_key_der().map_err(encode_error)?.into_vec();
      Ok(info(false, "rsa", der, "", Some(&key)))
    }
    // OpenSSL's own DSA form ("DSA PRIVATE KEY"): SEQUENCE { 0, p, q, g, y, x }
    "dsa-private" => {
      use pkcs8::der::asn1::UintRef;
      use pkcs8::der::Reader;
      let numbers = pkcs8::der::SliceReader::new(data)
        .and_then(|mut reader| {
          reader.sequence(|seq| {
            let mut values = Vec::new();
            for _ in 0..6 {
              values.push(dsa::BigUint::from_bytes_be(seq.decode::<UintRef>()?.as_bytes()));
            }
            Ok(values)
          })
        })
        .map_err(|e| invalid("DSA private", e))?;
      let components = dsa::Components::from_components(numbers[1].clone(), numbers[2].clone(), numbers[3].clone()).map_err(|e| invalid("DSA private", e))?;
      let public = dsa::VerifyingKey::from_components(components, numbers[4].clone()).map_err(|e| invalid("DSA private", e))?;
      let key = dsa::SigningKey::from_components(public, numbers[5].clone()).map_err(|e| invalid("DSA private", e))?;
      let der = key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec();
      Ok(dsa_info(true, der, key.verifying_key()))
    }
    "sec1" => {
      if let Ok(key) = p256::SecretKey::from_sec1_der(data) {
        return Ok(info(true, "ec", key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec(), "P-256", None));
      }
      if let Ok(key) = p224::SecretKey::from_sec1_der(data) {
        return Ok(info(true, "ec", key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec(), "P-224", None));
      }
      if let Ok(key) = p384::SecretKey::from_sec1_der(data) {
        return Ok(info(true, "ec", key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec(), "P-384", None));
      }
      match p521::SecretKey::from_sec1_der(data) {
        Ok(key) => Ok(info(true, "ec", key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec(), "P-521", None)),
        Err(e) => Err(invalid("EC private (SEC1; P-224, P-256, P-384 and P-521 are supported)", e)),
      }
    }
    "x509" => {
      use x509_cert::der::{Decode as _, Encode as _};
      let certificate = x509_cert::Certificate::from_der(data).map_err(|e| invalid("certificate's", e))?;
      let spki = certificate.tbs_certificate.subject_public_key_info.to_der().map_err(encode_error)?;
      key_info("spki", &spki)
    }
    other => Err(Error::NotSupported(format!("Unknown key format '{other}'"))),
  }
}

/// A DSA key's info: `bits` is the modulus length, the 7th member the divisor (q) length.
fn dsa_info(private: bool, der: Vec<u8>, key: &dsa::VerifyingKey) -> Out {
  let Out::List(mut members) = info(private, "dsa", der, "", None) else { unreachable!() };
  members[4] = Out::Num(key.components().p().bits() as f64);
  members.push(Out::Num(key.components().q().bits() as f64));
  Out::List(members)
}

fn public_of(kind: &str, curve: Option<&str>, key: &[u8]) -> Result<Vec<u8>> {
  match kind {
    "rsa" => {
      let key = RsaPrivateKey::from_pkcs8_der(key).map_err(|e| invalid("RSA private", e))?;
      Ok(key.to_public_key().to_public_key_der().map_err(encode_error)?.into_vec())
    }
    "ec" => with_curve!(curve.unwrap_or(""), c => {
      let key = c::SecretKey::from_pkcs8_der(key).map_err(|e| invalid("EC private", e))?;
      Ok(key.public_key().to_public_key_der().map_err(encode_error)?.into_vec())
    }),
    "dsa" => {
      let key = dsa::SigningKey::from_pkcs8_der(key).map_err(|e| invalid("DSA private", e))?;
      Ok(key.verifying_key().to_public_key_der().map_err(encode_error)?.into_vec())
    }
    "ed25519" | "x25519" => {
      let oid = okp_oid(if kind == "ed25519" { "Ed25519" } else { "X25519" })?;
      let secret = okp_private_from_pkcs8(oid, key)?;
      okp_spki(oid, &okp_public_of(oid, &secret))
    }
    other => Err(Error::NotSupported(format!("Unsupported key type '{other}'"))),
  }
}

fn to_pkcs1(private: bool, key: &[u8]) -> Result<Vec<u8>> {
  if private {
    let key = RsaPrivateKey::from_pkcs8_der(key).map_err(|e| invalid("RSA private", e))?;
    Ok(key.to_pkcs1_der().map_err(encode_error)?.as_bytes().to_vec())
  } else {
    let key = RsaPublicKey::from_public_key_der(key).map_err(|e| invalid("RSA public", e))?;
    Ok(key.to_pkcs1_der().map_err(encode_error)?.into_vec())
  }
}

fn scrypt(p: &Params) -> Result<Vec<u8>> {
  let n = p.num("N")?;
  let (r, par, length) = (p.num("r")?, p.num("p")?, p.num("length")?);
  if !(n >= 2.0) || n.fract() != 0.0 || (n as u64).count_ones() != 1 || n > 2f64.powi(40) {
    return Err(Error::Operation("Invalid scrypt param: N must be a power of 2 greater than 1".into()));
  }
  let fits = |v: f64| (1.0..=u32::MAX as f64).contains(&v) && v.fract() == 0.0;
  if !fits(r) || !fits(par) {
    return Err(Error::Operation("Invalid scrypt params: r and p must be integers of at least 1".into()));
  }
  let mut out = vec![0u8; length as usize];
  super::scrypt::derive(p.bytes("password")?, p.bytes("salt")?, n as u64, r as u32, par as u32, &mut out)?;
  Ok(out)
}

fn cipher(p: &Params) -> Result<Vec<u8>> {
  use cipher::block_padding::{NoPadding, Pkcs7};
  use cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
  let encrypt = p.num("encrypt")? != 0.0;
  let key = p.bytes("key")?;
  let iv = p.bytes("iv")?;
  let data = p.bytes("data")?;
  match p.str("mode")? {
    "gcm" => {
      let mut params = Params::default();
      params.set("name", super::Value::Str("AES-GCM".into()));
      params.set("key", super::Value::Bytes(key.to_vec()));
      params.set("iv", super::Value::Bytes(iv.to_vec()));
      params.set("additionalData", super::Value::Bytes(p.opt_bytes("aad").unwrap_or(&[]).to_vec()));
      params.set("tagLength", super::Value::Num(p.opt_num("tagLength").unwrap_or(128.0)));
      let mut input = data.to_vec();
      if !encrypt {
        input.extend_from_slice(p.bytes("tag")?);
      }
      params.set("data", super::Value::Bytes(input));
      symmetric::aes(&params, encrypt).map_err(|e| match e {
        Error::Operation(m) if m == "Decryption failed" => Error::Operation("Unsupported state or unable to authenticate data".into()),
        other => other,
      })
    }
    "ctr" => {
      use cipher::StreamCipher;
      let mut out = data.to_vec();
      macro_rules! run {
        ($A:ty) => {{
          // Node's CTR counts with the whole block; GCM's keystream (counterBits 32) with its
          // last 32 bits (inc32).
          if p.opt_num("counterBits") == Some(32.0) {
            let mut c = ctr::Ctr32BE::<$A>::new_from_slices(key, iv).map_err(|_| Error::Data("Invalid key or iv length".into()))?;
            c.apply_keystream(&mut out);
          } else {
            let mut c = ctr::Ctr128BE::<$A>::new_from_slices(key, iv).map_err(|_| Error::Data("Invalid key or iv length".into()))?;
            c.apply_keystream(&mut out);
          }
        }};
      }
      match key.len() {
        16 => run!(aes::Aes128),
        24 => run!(aes::Aes192),
        32 => run!(aes::Aes256),
        _ => return Err(Error::Data("Invalid key length".into())),
      }
      Ok(out)
    }
    "ofb" => {
      use cipher::StreamCipher;
      let mut out = data.to_vec();
      macro_rules! run {
        ($A:ty) => {{
          let mut c = ofb::Ofb::<$A>::new_from_slices(key, iv).map_err(|_| Error::Data("Invalid key or iv length".into()))?;
          c.apply_keystream(&mut out);
        }};
      }
      match key.len() {
        16 => run!(aes::Aes128),
        24 => run!(aes::Aes192),
        32 => run!(aes::Aes256),
        _ => return Err(Error::Data("Invalid key length".into())),
      }
      Ok(out)
    }
    "chacha20-poly1305" => {
      use chacha20poly1305::aead::{Aead, KeyInit, Payload};
      let c = chacha20poly1305::ChaCha20Poly1305::new_from_slice(key).map_err(|_| Error::Data("Invalid key length".into()))?;
      if iv.len() != 12 {
        return Err(Error::Data("Invalid initialization vector".into()));
      }
      let nonce = chacha20poly1305::Nonce::from_slice(iv);
      let aad = p.opt_bytes("aad").unwrap_or(&[]);
      if encrypt {
        c.encrypt(nonce, Payload { msg: data, aad }).map_err(|_| Error::Operation("Encryption failed".into()))
      } else {
        let mut input = data.to_vec();
        input.extend_from_slice(p.bytes("tag")?);
        c.decrypt(nonce, Payload { msg: &input, aad }).map_err(|_| Error::Operation("Unsupported state or unable to authenticate data".into()))
      }
    }
    "ecb" => {
      use cipher::KeyInit;
      let padding = p.opt_num("padding").unwrap_or(1.0) != 0.0;
      if !padding && data.len() % 16 != 0 {
        return Err(Error::Operation(if encrypt { "data not multiple of block length" } else { "wrong final block length" }.into()));
      }
      macro_rules! run {
        ($A:ty) => {{
          if encrypt {
            let c = ecb::Encryptor::<$A>::new_from_slice(key).map_err(|_| Error::Data("Invalid key length".into()))?;
            Ok(if padding { c.encrypt_padded_vec_mut::<Pkcs7>(data) } else { c.encrypt_padded_vec_mut::<NoPadding>(data) })
          } else {
            let c = ecb::Decryptor::<$A>::new_from_slice(key).map_err(|_| Error::Data("Invalid key length".into()))?;
            let result = if padding { c.decrypt_padded_vec_mut::<Pkcs7>(data) } else { c.decrypt_padded_vec_mut::<NoPadding>(data) };
            result.map_err(|_| Error::Operation(if data.len() % 16 != 0 { "wrong final block length" } else { "bad decrypt" }.into()))
          }
        }};
      }
      match key.len() {
        16 => run!(aes::Aes128),
        24 => run!(aes::Aes192),
        32 => run!(aes::Aes256),
        _ => Err(Error::Data("Invalid key length".into())),
      }
    }
    "cbc" => {
      let padding = p.opt_num("padding").unwrap_or(1.0) != 0.0;
      if !padding && data.len() % 16 != 0 {
        return Err(Error::Operation(if encrypt { "data not multiple of block length" } else { "wrong final block length" }.into()));
      }
      macro_rules! run {
        ($A:ty) => {{
          if encrypt {
            let c = cbc::Encryptor::<$A>::new_from_slices(key, iv).map_err(|_| Error::Data("Invalid key or iv length".into()))?;
            Ok(if padding { c.encrypt_padded_vec_mut::<Pkcs7>(data) } else { c.encrypt_padded_vec_mut::<NoPadding>(data) })
          } else {
            let c = cbc::Decryptor::<$A>::new_from_slices(key, iv).map_err(|_| Error::Data("Invalid key or iv length".into()))?;
            let result = if padding { c.decrypt_padded_vec_mut::<Pkcs7>(data) } else { c.decrypt_padded_vec_mut::<NoPadding>(data) };
            result.map_err(|_| Error::Operation(if data.len() % 16 != 0 { "wrong final block length" } else { "bad decrypt" }.into()))
          }
        }};
      }
      match key.len() {
        16 => run!(aes::Aes128),
        24 => run!(aes::Aes192),
        32 => run!(aes::Aes256),
        _ => Err(Error::Data("Invalid key length".into())),
      }
    }
    other => Err(Error::NotSupported(format!("Unsupported cipher mode '{other}'"))),
  }
}

fn rsa_cipher(p: &Params) -> Result<Vec<u8>> {
  use rsa::hazmat::{rsa_decrypt_and_check, rsa_encrypt};
  use rsa::{BigUint, Pkcs1v15Encrypt};
  let (private, encrypt) = (p.num("private")? != 0.0, p.num("encrypt")? != 0.0);
  let padding = p.num("padding")? as u32;
  let data = p.bytes("data")?;
  let failed = |what: &str| Error::Operation(what.to_string());
  let private_key = if private { Some(RsaPrivateKey::from_pkcs8_der(p.bytes("key")?).map_err(|e| invalid("RSA private", e))?) } else { None };
  let public_key = match &private_key {
    Some(key) => key.to_public_key(),
    None => RsaPublicKey::from_public_key_der(p.bytes("key")?).map_err(|e| invalid("RSA public", e))?,
  };
  let size = public_key.size();
  let left_pad = |n: BigUint| {
    let bytes = n.to_bytes_be();
    let mut out = vec![0u8; size.saturating_sub(bytes.len())];
    out.extend_from_slice(&bytes);
    out
  };
  let raw_public = |input: &[u8]| -> Result<Vec<u8>> {
    let m = BigUint::from_bytes_be(input);
    if input.len() != size || &m >= public_key.n() {
      return Err(failed(if input.len() != size { "data too large for modulus" } else { "data too large for modulus" }));
    }
    Ok(left_pad(rsa_encrypt(&public_key, &m).map_err(|e| failed(&e.to_string()))?))
  };
  let raw_private = |input: &[u8]| -> Result<Vec<u8>> {
    let key = private_key.as_ref().unwrap();
    let c = BigUint::from_bytes_be(input);
    if input.len() > size || &c >= public_key.n() {
      return Err(failed("data too large for modulus"));
    }
    let mut rng = rand_core::OsRng;
    Ok(left_pad(rsa_decrypt_and_check(key, Some(&mut rng), &c).map_err(|e| failed(&e.to_string()))?))
  };
  match (private, encrypt, padding) {
    (false, true, 1) => public_key.encrypt(&mut rand_core::OsRng, Pkcs1v15Encrypt, data).map_err(|e| failed(&e.to_string())),
    (true, false, 1) => private_key.as_ref().unwrap().decrypt(Pkcs1v15Encrypt, data).map_err(|_| failed("decryption failed")),
    (false, true, 3) | (false, false, 3) => raw_public(data),
    (true, _, 3) => raw_private(data),
    (true, true, 1) => {
      // EMSA-PKCS1-v1_5 block type 1: 00 01 FF… 00 data
      if data.len() + 11 > size {
        return Err(failed("data too large for key size"));
      }
      let mut block = vec![0x00, 0x01];
      block.resize(size - data.len() - 1, 0xff);
      block.push(0x00);
      block.extend_from_slice(data);
      raw_private(&block)
    }
    (false, false, 1) => {
      let block = raw_public(data)?;
      let rest = block.strip_prefix(&[0x00, 0x01][..]).ok_or_else(|| failed("invalid padding"))?;
      let fill = rest.iter().take_while(|b| **b == 0xff).count();
      if fill < 8 || rest.get(fill) != Some(&0x00) {
        return Err(failed("invalid padding"));
      }
      Ok(rest[fill + 1..].to_vec())
    }
    _ => Err(Error::NotSupported(format!("Unsupported RSA padding {padding}"))),
  }
}
