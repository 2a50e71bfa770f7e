//! The cryptography behind `crypto.subtle`: stateless functions from (algorithm parameters,
//! key bytes, data) to bytes, with no knowledge of V8 or napi. Every primitive comes from a
//! RustCrypto crate; this module only selects, encodes and checks.
//!
//! Keys cross this boundary in one canonical form: secret keys as their raw bytes, private keys
//! as PKCS #8 DER, public keys as SubjectPublicKeyInfo DER. The JS side (`src/js/79_subtle.js`)
//! keeps those bytes inside `CryptoKey` objects and does algorithm normalisation and usage checks.
//! Errors carry the WebCrypto DOMException name the JS side should reject with.

mod asymmetric;
mod cancel;
mod crc;
mod jwk;
#[macro_use]
pub mod node;
pub mod node_dh;
pub mod node_x509;
mod scrypt;
mod symmetric;

use std::collections::HashMap;

pub use cancel::with_cancel;
pub use symmetric::new_hasher;

/// A failed operation, by the DOMException name WebCrypto reports it with.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
  NotSupported(String),
  Data(String),
  Operation(String),
  InvalidAccess(String),
}

impl Error {
  pub fn name(&self) -> &'static str {
    match self {
      Error::NotSupported(_) => "NotSupportedError",
      Error::Data(_) => "DataError",
      Error::Operation(_) => "OperationError",
      Error::InvalidAccess(_) => "InvalidAccessError",
    }
  }
  pub fn message(&self) -> &str {
    match self {
      Error::NotSupported(m) | Error::Data(m) | Error::Operation(m) | Error::InvalidAccess(m) => m,
    }
  }
}

pub type Result<T> = std::result::Result<T, Error>;

/// One parameter value, as the op glue reads it from a plain JS object.
#[derive(Debug, Clone)]
pub enum Value {
  Null,
  Num(f64),
  Str(String),
  Bytes(Vec<u8>),
}

/// Named parameters of one call (missing and `null`/`undefined` are the same).
#[derive(Debug, Default, Clone)]
pub struct Params(pub HashMap<String, Value>);

impl Params {
  pub fn set(&mut self, key: &str, value: Value) -> &mut Self {
    self.0.insert(key.to_owned(), value);
    self
  }
  fn get(&self, key: &str) -> Option<&Value> {
    self.0.get(key).filter(|v| !matches!(v, Value::Null))
  }
  pub fn str(&self, key: &str) -> Result<&str> {
    self.opt_str(key).ok_or_else(|| Error::Operation(format!("missing parameter '{key}'")))
  }
  pub fn opt_str(&self, key: &str) -> Option<&str> {
    match self.get(key) {
      Some(Value::Str(s)) => Some(s),
      _ => None,
    }
  }
  pub fn bytes(&self, key: &str) -> Result<&[u8]> {
    self.opt_bytes(key).ok_or_else(|| Error::Operation(format!("missing parameter '{key}'")))
  }
  pub fn opt_bytes(&self, key: &str) -> Option<&[u8]> {
    match self.get(key) {
      Some(Value::Bytes(b)) => Some(b),
      _ => None,
    }
  }
  pub fn num(&self, key: &str) -> Result<f64> {
    self.opt_num(key).ok_or_else(|| Error::Operation(format!("missing parameter '{key}'")))
  }
  pub fn opt_num(&self, key: &str) -> Option<f64> {
    match self.get(key) {
      Some(Value::Num(n)) => Some(*n),
      _ => None,
    }
  }
}

/// A call's result, turned into the matching JS value by the op glue.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
  Bytes(Vec<u8>),
  Bool(bool),
  Num(f64),
  Str(String),
  List(Vec<Out>),
}

/// Runs operation `op` (see the match below for the parameters each takes).
pub fn call(op: &str, p: &Params) -> Result<Out> {
  match op {
    // {hash, data}
    "digest" => symmetric::digest(p.str("hash")?, p.bytes("data")?).map(Out::Bytes),
    // {hash, key, data} / + {signature}
    "hmacSign" => symmetric::hmac_sign(p.str("hash")?, p.bytes("key")?, p.bytes("data")?).map(Out::Bytes),
    "hmacVerify" => symmetric::hmac_verify(p.str("hash")?, p.bytes("key")?, p.bytes("data")?, p.bytes("signature")?).map(Out::Bool),
    // {name, key, data, …algorithm parameters}
    "encrypt" | "decrypt" => {
      let encrypt = op == "encrypt";
      match p.str("name")? {
        "RSA-OAEP" => asymmetric::rsa_oaep(p, encrypt),
        _ => symmetric::aes(p, encrypt),
      }
      .map(Out::Bytes)
    }
    // {hash, key, salt, iterations, length (bits)}
    "pbkdf2" => symmetric::pbkdf2(p.str("hash")?, p.bytes("key")?, p.bytes("salt")?, p.num("iterations")?, p.num("length")?).map(Out::Bytes),
    // {hash, key, salt, info, length (bits)}
    "hkdf" => symmetric::hkdf(p.str("hash")?, p.bytes("key")?, p.bytes("salt")?, p.bytes("info")?, p.num("length")?).map(Out::Bytes),
    // {kind, namedCurve?, modulusLength?, publicExponent?} -> [pkcs8, spki]
    "generateKeyPair" => asymmetric::generate(p).map(|(private, public)| Out::List(vec![Out::Bytes(private), Out::Bytes(public)])),
    // {kind, namedCurve?, format, data (bytes, or JWK JSON text)} -> [type, key, modulusLength, publicExponent]
    "importKey" => asymmetric::import(p).map(|k| {
      Out::List(vec![Out::Str(k.kind.into()), Out::Bytes(k.der), Out::Num(k.modulus_length as f64), Out::Bytes(k.public_exponent)])
    }),
    // {kind, namedCurve?, format, type, key} -> bytes (or JWK JSON text)
    "exportKey" => asymmetric::export(p),
    // {name, hash?, saltLength?, namedCurve?, key, data} / + {signature}
    "sign" => asymmetric::sign(p).map(Out::Bytes),
    "verify" => asymmetric::verify(p).map(Out::Bool),
    // {kind, namedCurve?, key (pkcs8), public (spki)} -> the whole shared secret
    "deriveBits" => asymmetric::derive(p).map(Out::Bytes),
    _ => Err(Error::NotSupported(format!("Unknown crypto operation '{op}'"))),
  }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod node_tests;
