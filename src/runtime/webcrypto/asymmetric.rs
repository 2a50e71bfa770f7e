//! Key pairs: ECDSA and ECDH on P-256/P-384, RSASSA-PKCS1-v1_5, RSA-PSS, RSA-OAEP, Ed25519 and
//! X25519 — generation, import/export (raw, pkcs8, spki, jwk), signatures, encryption and key
//! agreement. Private keys travel as PKCS #8 DER, public keys as SubjectPublicKeyInfo DER.

use super::jwk::{self, b64, text, Jwk};
use super::symmetric::{digest, with_hash};
use super::{Error, Out, Params, Result};
use pkcs8::der::asn1::{BitStringRef, OctetStringRef};
use pkcs8::der::{Decode, Encode};
use pkcs8::spki::{AlgorithmIdentifierRef, SubjectPublicKeyInfoRef};
use pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, ObjectIdentifier, PrivateKeyInfo};
use rand_core::OsRng;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{BigUint, Oaep, Pkcs1v15Sign, Pss, RsaPrivateKey, RsaPublicKey};

/// An imported key in canonical form.
pub struct Imported {
  /// "private" or "public".
  pub kind: &'static str,
  /// PKCS #8 (private) or SPKI (public) DER.
  pub der: Vec<u8>,
  /// RSA only: modulus bits and public exponent bytes.
  pub modulus_length: usize,
  pub public_exponent: Vec<u8>,
}

impl Imported {
  fn private(der: Vec<u8>) -> Self {
    Imported { kind: "private", der, modulus_length: 0, public_exponent: Vec::new() }
  }
  fn public(der: Vec<u8>) -> Self {
    Imported { kind: "public", der, modulus_length: 0, public_exponent: Vec::new() }
  }
}

fn data_error(what: &str) -> impl Fn(String) -> Error + '_ {
  move |detail| Error::Data(format!("Invalid {what} key data: {detail}"))
}

fn encode_error<E: std::fmt::Display>(e: E) -> Error {
  Error::Operation(format!("Key encoding failed: {e}"))
}

/// Runs `$body` with `$c` naming the crate (p256, p384 or p521) of the NIST curve `$curve`.
macro_rules! with_curve {
  ($curve:expr, $c:ident => $body:expr) => {
    match $curve {
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
      other => Err(Error::NotSupported(format!("Unsupported named curve '{other}'"))),
    }
  };
}

pub(super) const ED25519_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");
pub(super) const X25519_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.110");

pub(super) fn okp_oid(kind: &str) -> Result<ObjectIdentifier> {
  match kind {
    "Ed25519" => Ok(ED25519_OID),
    "X25519" => Ok(X25519_OID),
    other => Err(Error::NotSupported(format!("Unsupported key kind '{other}'"))),
  }
}

/// PKCS #8 (v1, no public key) for an Ed25519/X25519 private key.
fn okp_pkcs8(oid: ObjectIdentifier, secret: &[u8; 32]) -> Result<Vec<u8>> {
  let inner = OctetStringRef::new(secret).and_then(|o| o.to_der()).map_err(encode_error)?;
  let info = PrivateKeyInfo { algorithm: AlgorithmIdentifierRef { oid, parameters: None }, private_key: &inner, public_key: None };
  info.to_der().map_err(encode_error)
}

pub(super) fn okp_spki(oid: ObjectIdentifier, public: &[u8; 32]) -> Result<Vec<u8>> {
  let key = BitStringRef::from_bytes(public).map_err(encode_error)?;
  SubjectPublicKeyInfoRef { algorithm: AlgorithmIdentifierRef { oid, parameters: None }, subject_public_key: key }.to_der().map_err(encode_error)
}

pub(super) fn okp_private_from_pkcs8(oid: ObjectIdentifier, der: &[u8]) -> Result<[u8; 32]> {
  let bad = data_error(if oid == ED25519_OID { "Ed25519" } else { "X25519" });
  let info = PrivateKeyInfo::try_from(der).map_err(|e| bad(e.to_string()))?;
  if info.algorithm.oid != oid {
    return Err(bad("the key is for a different algorithm".into()));
  }
  let inner = OctetStringRef::from_der(info.private_key).map_err(|e| bad(e.to_string()))?;
  inner.as_bytes().try_into().map_err(|_| bad("the private key must be 32 bytes".into()))
}

fn okp_public_from_spki(oid: ObjectIdentifier, der: &[u8]) -> Result<[u8; 32]> {
  let bad = data_error(if oid == ED25519_OID { "Ed25519" } else { "X25519" });
  let info = SubjectPublicKeyInfoRef::try_from(der).map_err(|e| bad(e.to_string()))?;
  if info.algorithm.oid != oid || info.algorithm.parameters.is_some() {
    return Err(bad("the key is for a different algorithm".into()));
  }
  info.subject_public_key.as_bytes().and_then(|b| b.try_into().ok()).ok_or_else(|| bad("the public key must be 32 bytes".into()))
}

/// The public key of an Ed25519/X25519 private key.
pub(super) fn okp_public_of(oid: ObjectIdentifier, secret: &[u8; 32]) -> [u8; 32] {
  if oid == ED25519_OID {
    ed25519_dalek::SigningKey::from_bytes(secret).verifying_key().to_bytes()
  } else {
    x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from(*secret)).to_bytes()
  }
}

fn okp_check_public(oid: ObjectIdentifier, public: &[u8; 32]) -> Result<()> {
  if oid == ED25519_OID {
    ed25519_dalek::VerifyingKey::from_bytes(public).map_err(|_| Error::Data("Invalid Ed25519 public key".into()))?;
  }
  Ok(())
}

fn as_32(bytes: &[u8], what: &str) -> Result<[u8; 32]> {
  bytes.try_into().map_err(|_| Error::Data(format!("Invalid {what} key data: must be 32 bytes")))
}

fn rsa_exponent(e: &[u8]) -> Result<BigUint> {
  let e = BigUint::from_bytes_be(e);
  if e < BigUint::from(3u32) {
    return Err(Error::Operation("Invalid RSA public exponent".into()));
  }
  Ok(e)
}

/// {kind, namedCurve?, modulusLength?, publicExponent?} -> (pkcs8, spki)
pub fn generate(p: &Params) -> Result<(Vec<u8>, Vec<u8>)> {
  match p.str("kind")? {
    "EC" => with_curve!(p.str("namedCurve")?, c => {
      let secret = c::SecretKey::random(&mut OsRng);
      let private = secret.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec();
      let public = secret.public_key().to_public_key_der().map_err(encode_error)?.into_vec();
      Ok((private, public))
    }),
    "RSA" => {
      let bits = p.num("modulusLength")?;
      if !(512.0..=16384.0).contains(&bits) || bits % 8.0 != 0.0 {
        return Err(Error::Operation("Unsupported RSA modulusLength".into()));
      }
      let e = rsa_exponent(p.bytes("publicExponent")?)?;
      let key = RsaPrivateKey::new_with_exp(&mut super::cancel::CancellableRng, bits as usize, &e).map_err(|e| Error::Operation(format!("RSA key generation failed: {e}")))?;
      let private = key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec();
      let public = key.to_public_key().to_public_key_der().map_err(encode_error)?.into_vec();
      Ok((private, public))
    }
    kind => {
      let oid = okp_oid(kind)?;
      let mut secret = [0u8; 32];
      getrandom::fill(&mut secret).map_err(|e| Error::Operation(format!("random source failed: {e}")))?;
      Ok((okp_pkcs8(oid, &secret)?, okp_spki(oid, &okp_public_of(oid, &secret))?))
    }
  }
}

/// {kind, namedCurve?, format, data} -> the key in canonical form.
pub fn import(p: &Params) -> Result<Imported> {
  let kind = p.str("kind")?;
  let format = p.str("format")?;
  if format == "jwk" {
    return import_jwk(kind, p.opt_str("namedCurve"), &Jwk::parse(p.str("data")?)?);
  }
  let data = p.bytes("data")?;
  match kind {
    "EC" => with_curve!(p.str("namedCurve")?, c => {
      let bad = data_error("EC");
      match format {
        "pkcs8" => {
          let key = c::SecretKey::from_pkcs8_der(data).map_err(|e| bad(e.to_string()))?;
          Ok(Imported::private(key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec()))
        }
        "spki" => {
          let key = c::PublicKey::from_public_key_der(data).map_err(|e| bad(e.to_string()))?;
          Ok(Imported::public(key.to_public_key_der().map_err(encode_error)?.into_vec()))
        }
        "raw" => {
          let key = c::PublicKey::from_sec1_bytes(data).map_err(|e| bad(e.to_string()))?;
          Ok(Imported::public(key.to_public_key_der().map_err(encode_error)?.into_vec()))
        }
        _ => Err(Error::NotSupported(format!("EC keys cannot be imported in '{format}' format"))),
      }
    }),
    "RSA" => {
      let bad = data_error("RSA");
      let (imported, public) = match format {
        "pkcs8" => {
          let key = RsaPrivateKey::from_pkcs8_der(data).map_err(|e| bad(e.to_string()))?;
          key.validate().map_err(|e| bad(e.to_string()))?;
          (Imported::private(key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec()), key.to_public_key())
        }
        "spki" => {
          let key = RsaPublicKey::from_public_key_der(data).map_err(|e| bad(e.to_string()))?;
          (Imported::public(key.to_public_key_der().map_err(encode_error)?.into_vec()), key)
        }
        _ => return Err(Error::NotSupported(format!("RSA keys cannot be imported in '{format}' format"))),
      };
      Ok(with_rsa_info(imported, &public))
    }
    kind => {
      let oid = okp_oid(kind)?;
      match format {
        "pkcs8" => Ok(Imported::private(okp_pkcs8(oid, &okp_private_from_pkcs8(oid, data)?)?)),
        "spki" => {
          let public = okp_public_from_spki(oid, data)?;
          okp_check_public(oid, &public)?;
          Ok(Imported::public(okp_spki(oid, &public)?))
        }
        "raw" => {
          let public = as_32(data, kind)?;
          okp_check_public(oid, &public)?;
          Ok(Imported::public(okp_spki(oid, &public)?))
        }
        _ => Err(Error::NotSupported(format!("{kind} keys cannot be imported in '{format}' format"))),
      }
    }
  }
}

fn with_rsa_info(mut imported: Imported, key: &RsaPublicKey) -> Imported {
  imported.modulus_length = key.n().bits();
  imported.public_exponent = key.e().to_bytes_be();
  imported
}

fn import_jwk(kind: &str, curve: Option<&str>, jwk: &Jwk) -> Result<Imported> {
  let private = jwk.has("d");
  match kind {
    "EC" => {
      let curve = curve.unwrap_or("");
      jwk.expect("EC", Some(curve))?;
      with_curve!(curve, c => {
        let bad = data_error("EC");
        let (x, y) = (jwk.bytes("x")?, jwk.bytes("y")?);
        let point = c::EncodedPoint::from_affine_coordinates(
          c::FieldBytes::from_exact_iter(x.iter().copied()).as_ref().ok_or_else(|| bad("bad x length".into()))?,
          c::FieldBytes::from_exact_iter(y.iter().copied()).as_ref().ok_or_else(|| bad("bad y length".into()))?,
          false,
        );
        let public = c::PublicKey::from_sec1_bytes(point.as_bytes()).map_err(|_| bad("the point is not on the curve".into()))?;
        if private {
          let secret = c::SecretKey::from_slice(&jwk.bytes("d")?).map_err(|_| bad("bad 'd'".into()))?;
          if secret.public_key() != public {
            return Err(bad("'d' does not match 'x' and 'y'".into()));
          }
          Ok(Imported::private(secret.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec()))
        } else {
          Ok(Imported::public(public.to_public_key_der().map_err(encode_error)?.into_vec()))
        }
      })
    }
    "RSA" => {
      jwk.expect("RSA", None)?;
      let bad = data_error("RSA");
      let big = |member: &str| jwk.bytes(member).map(|b| BigUint::from_bytes_be(&b));
      let (n, e) = (big("n")?, big("e")?);
      if private {
        let primes = if jwk.has("p") && jwk.has("q") { vec![big("p")?, big("q")?] } else { Vec::new() };
        let key = RsaPrivateKey::from_components(n, e, big("d")?, primes).map_err(|e| bad(e.to_string()))?;
        let public = key.to_public_key();
        Ok(with_rsa_info(Imported::private(key.to_pkcs8_der().map_err(encode_error)?.as_bytes().to_vec()), &public))
      } else {
        let key = RsaPublicKey::new(n, e).map_err(|e| bad(e.to_string()))?;
        Ok(with_rsa_info(Imported::public(key.to_public_key_der().map_err(encode_error)?.into_vec()), &key))
      }
    }
    kind => {
      let oid = okp_oid(kind)?;
      jwk.expect("OKP", Some(kind))?;
      let public = as_32(&jwk.bytes("x")?, kind)?;
      okp_check_public(oid, &public)?;
      if private {
        let secret = as_32(&jwk.bytes("d")?, kind)?;
        if okp_public_of(oid, &secret) != public {
          return Err(Error::Data(format!("Invalid {kind} key data: 'd' does not match 'x'")));
        }
        Ok(Imported::private(okp_pkcs8(oid, &secret)?))
      } else {
        Ok(Imported::public(okp_spki(oid, &public)?))
      }
    }
  }
}

/// {kind, namedCurve?, format, type, key} -> bytes, or JWK JSON text.
pub fn export(p: &Params) -> Result<Out> {
  let kind = p.str("kind")?;
  let format = p.str("format")?;
  let private = p.str("type")? == "private";
  let key = p.bytes("key")?;
  match (format, private) {
    ("pkcs8", true) | ("spki", false) => return Ok(Out::Bytes(key.to_vec())),
    ("jwk", _) => {}
    ("raw", false) if kind != "RSA" => {}
    _ => return Err(Error::InvalidAccess(format!("A {} {kind} key cannot be exported as '{format}'", p.str("type")?))),
  }
  match kind {
    "EC" => {
      let curve = p.str("namedCurve")?;
      with_curve!(curve, c => {
        let (public, secret) = if private {
          let secret = c::SecretKey::from_pkcs8_der(key).map_err(|e| data_error("EC")(e.to_string()))?;
          (secret.public_key(), Some(secret))
        } else {
          (c::PublicKey::from_public_key_der(key).map_err(|e| data_error("EC")(e.to_string()))?, None)
        };
        use c::elliptic_curve::sec1::ToEncodedPoint;
        let point = public.to_encoded_point(false);
        if format == "raw" {
          return Ok(Out::Bytes(point.as_bytes().to_vec()));
        }
        let mut members = vec![("kty", text("EC")), ("crv", text(curve)), ("x", b64(point.x().unwrap().to_vec())), ("y", b64(point.y().unwrap().to_vec()))];
        if let Some(secret) = secret {
          members.push(("d", b64(secret.to_bytes().to_vec())));
        }
        Ok(Out::Str(jwk::build(&members)))
      })
    }
    "RSA" => {
      let bad = data_error("RSA");
      let mut members;
      if private {
        let k = RsaPrivateKey::from_pkcs8_der(key).map_err(|e| bad(e.to_string()))?;
        let (Some(dp), Some(dq), Some(qi)) = (k.dp(), k.dq(), k.crt_coefficient()) else {
          return Err(Error::Operation("The RSA key has no CRT values".into()));
        };
        members = vec![("kty", text("RSA")), ("n", b64(k.n().to_bytes_be())), ("e", b64(k.e().to_bytes_be())), ("d", b64(k.d().to_bytes_be()))];
        members.push(("p", b64(k.primes()[0].to_bytes_be())));
        members.push(("q", b64(k.primes()[1].to_bytes_be())));
        members.push(("dp", b64(dp.to_bytes_be())));
        members.push(("dq", b64(dq.to_bytes_be())));
        members.push(("qi", b64(qi.to_bytes_be())));
      } else {
        let k = RsaPublicKey::from_public_key_der(key).map_err(|e| bad(e.to_string()))?;
        members = vec![("kty", text("RSA")), ("n", b64(k.n().to_bytes_be())), ("e", b64(k.e().to_bytes_be()))];
      }
      Ok(Out::Str(jwk::build(&members)))
    }
    kind => {
      let oid = okp_oid(kind)?;
      let (public, secret) = if private {
        let secret = okp_private_from_pkcs8(oid, key)?;
        (okp_public_of(oid, &secret), Some(secret))
      } else {
        (okp_public_from_spki(oid, key)?, None)
      };
      if format == "raw" {
        return Ok(Out::Bytes(public.to_vec()));
      }
      let mut members = vec![("kty", text("OKP")), ("crv", text(kind)), ("x", b64(public.to_vec()))];
      if let Some(secret) = secret {
        members.push(("d", b64(secret.to_vec())));
      }
      Ok(Out::Str(jwk::build(&members)))
    }
  }
}

/// The RSA signature scheme for `name` with hash `hash`.
fn rsa_scheme_sign(p: &Params) -> Result<RsaScheme> {
  let hash = p.str("hash")?;
  match p.str("name")? {
    "RSASSA-PKCS1-v1_5" => with_hash!(hash, H => Ok(RsaScheme::Pkcs1(Pkcs1v15Sign::new::<H>()))),
    "RSA-PSS" => {
      let salt = p.num("saltLength")?;
      if !(0.0..=65536.0).contains(&salt) || salt.fract() != 0.0 {
        return Err(Error::Operation("Invalid saltLength".into()));
      }
      with_hash!(hash, H => Ok(RsaScheme::Pss(Pss::new_with_salt::<H>(salt as usize))))
    }
    other => Err(Error::NotSupported(format!("Unsupported signature algorithm '{other}'"))),
  }
}

enum RsaScheme {
  Pkcs1(Pkcs1v15Sign),
  Pss(Pss),
}

/// The ECDSA message hash. A hash shorter than the curve order (SHA-1 on P-384, SHA-256 on
/// P-384) is left-padded with zeros: the same integer, which is what ECDSA signs, in the length
/// the crate's prehash API requires.
fn ecdsa_prehash(hash: &str, curve: &str, data: &[u8]) -> Result<Vec<u8>> {
  let hashed = digest(hash, data)?;
  let field = match curve {
    "P-521" => 66,
    "P-384" => 48,
    _ => 32,
  };
  if hashed.len() >= field {
    return Ok(hashed);
  }
  let mut padded = vec![0u8; field - hashed.len()];
  padded.extend_from_slice(&hashed);
  Ok(padded)
}

/// {name, hash?, saltLength?, namedCurve?, key (pkcs8), data} -> signature
pub fn sign(p: &Params) -> Result<Vec<u8>> {
  let key = p.bytes("key")?;
  let data = p.bytes("data")?;
  let op_error = |e: String| Error::Operation(format!("Signing failed: {e}"));
  match p.str("name")? {
    "ECDSA" => {
      let curve = p.str("namedCurve")?;
      let hashed = ecdsa_prehash(p.str("hash")?, curve, data)?;
      with_curve!(curve, c => {
        use c::ecdsa::signature::hazmat::PrehashSigner;
        let secret = c::SecretKey::from_pkcs8_der(key).map_err(|e| data_error("EC")(e.to_string()))?;
        let signature: c::ecdsa::Signature = c::ecdsa::SigningKey::from(ecdsa::SigningKey::from(&secret)).sign_prehash(&hashed).map_err(|e| op_error(e.to_string()))?;
        Ok(signature.to_bytes().to_vec())
      })
    }
    "RSASSA-PKCS1-v1_5" | "RSA-PSS" => {
      let hashed = digest(p.str("hash")?, data)?;
      let secret = RsaPrivateKey::from_pkcs8_der(key).map_err(|e| data_error("RSA")(e.to_string()))?;
      match rsa_scheme_sign(p)? {
        RsaScheme::Pkcs1(scheme) => secret.sign(scheme, &hashed),
        RsaScheme::Pss(scheme) => secret.sign_with_rng(&mut OsRng, scheme, &hashed),
      }
      .map_err(|e| op_error(e.to_string()))
    }
    "Ed25519" => {
      use ed25519_dalek::Signer;
      let secret = okp_private_from_pkcs8(ED25519_OID, key)?;
      Ok(ed25519_dalek::SigningKey::from_bytes(&secret).sign(data).to_bytes().to_vec())
    }
    other => Err(Error::NotSupported(format!("Unsupported signature algorithm '{other}'"))),
  }
}

/// {name, hash?, saltLength?, namedCurve?, key (spki), data, signature} -> valid?
pub fn verify(p: &Params) -> Result<bool> {
  let key = p.bytes("key")?;
  let data = p.bytes("data")?;
  let signature = p.bytes("signature")?;
  match p.str("name")? {
    "ECDSA" => {
      let curve = p.str("namedCurve")?;
      let hashed = ecdsa_prehash(p.str("hash")?, curve, data)?;
      with_curve!(curve, c => {
        use c::ecdsa::signature::hazmat::PrehashVerifier;
        let public = c::PublicKey::from_public_key_der(key).map_err(|e| data_error("EC")(e.to_string()))?;
        let Ok(signature) = c::ecdsa::Signature::from_slice(signature) else { return Ok(false) };
        // (Through the generic ecdsa types: p521 wraps them in types of its own.)
        Ok(c::ecdsa::VerifyingKey::from(ecdsa::VerifyingKey::from(&public)).verify_prehash(&hashed, &signature).is_ok())
      })
    }
    "RSASSA-PKCS1-v1_5" | "RSA-PSS" => {
      let hashed = digest(p.str("hash")?, data)?;
      let public = RsaPublicKey::from_public_key_der(key).map_err(|e| data_error("RSA")(e.to_string()))?;
      Ok(match rsa_scheme_sign(p)? {
        RsaScheme::Pkcs1(scheme) => public.verify(scheme, &hashed, signature),
        RsaScheme::Pss(scheme) => public.verify(scheme, &hashed, signature),
      }
      .is_ok())
    }
    "Ed25519" => {
      let public = okp_public_from_spki(ED25519_OID, key)?;
      let public = ed25519_dalek::VerifyingKey::from_bytes(&public).map_err(|_| Error::Data("Invalid Ed25519 public key".into()))?;
      let Ok(signature) = ed25519_dalek::Signature::from_slice(signature) else { return Ok(false) };
      Ok(public.verify_strict(data, &signature).is_ok())
    }
    other => Err(Error::NotSupported(format!("Unsupported signature algorithm '{other}'"))),
  }
}

/// RSA-OAEP: {hash, label?, key (spki to encrypt, pkcs8 to decrypt), data}
pub fn rsa_oaep(p: &Params, encrypt: bool) -> Result<Vec<u8>> {
  let key = p.bytes("key")?;
  let data = p.bytes("data")?;
  let label = p.opt_bytes("label").unwrap_or(&[]);
  let label = std::str::from_utf8(label).map_err(|_| Error::NotSupported("RSA-OAEP labels must be valid UTF-8 here".into()))?.to_owned();
  let scheme = with_hash!(p.str("hash")?, H => Ok(if label.is_empty() { Oaep::new::<H>() } else { Oaep::new_with_label::<H, _>(label) }))?;
  if encrypt {
    let public = RsaPublicKey::from_public_key_der(key).map_err(|e| data_error("RSA")(e.to_string()))?;
    public.encrypt(&mut OsRng, scheme, data).map_err(|e| Error::Operation(format!("Encryption failed: {e}")))
  } else {
    let secret = RsaPrivateKey::from_pkcs8_der(key).map_err(|e| data_error("RSA")(e.to_string()))?;
    secret.decrypt_blinded(&mut OsRng, scheme, data).map_err(|_| Error::Operation("Decryption failed".into()))
  }
}

/// ECDH or X25519: {kind, namedCurve?, key (pkcs8), public (spki)} -> shared secret
pub fn derive(p: &Params) -> Result<Vec<u8>> {
  let key = p.bytes("key")?;
  let public = p.bytes("public")?;
  match p.str("kind")? {
    "EC" => with_curve!(p.str("namedCurve")?, c => {
      let secret = c::SecretKey::from_pkcs8_der(key).map_err(|e| data_error("EC")(e.to_string()))?;
      let public = c::PublicKey::from_public_key_der(public).map_err(|e| data_error("EC")(e.to_string()))?;
      Ok(c::ecdh::diffie_hellman(secret.to_nonzero_scalar(), public.as_affine()).raw_secret_bytes().to_vec())
    }),
    "X25519" => {
      let secret = x25519_dalek::StaticSecret::from(okp_private_from_pkcs8(X25519_OID, key)?);
      let public = x25519_dalek::PublicKey::from(okp_public_from_spki(X25519_OID, public)?);
      let shared = secret.diffie_hellman(&public);
      if !shared.was_contributory() {
        return Err(Error::Operation("The X25519 shared secret is all zeros (small-order public key)".into()));
      }
      Ok(shared.as_bytes().to_vec())
    }
    other => Err(Error::NotSupported(format!("Unsupported key agreement '{other}'"))),
  }
}
