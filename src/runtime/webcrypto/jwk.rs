//! Reading and writing the key-material members of JSON Web Keys (RFC 7517/7518/8037).
//! The metadata members (`alg`, `use`, `key_ops`, `ext`) are checked and added in JS.

use super::{Error, Result};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};

/// A parsed JWK object.
pub struct Jwk(Map<String, Value>);

impl Jwk {
  pub fn parse(text: &str) -> Result<Jwk> {
    match serde_json::from_str(text) {
      Ok(Value::Object(map)) => Ok(Jwk(map)),
      _ => Err(Error::Data("The JWK is not a JSON object".into())),
    }
  }

  pub fn str(&self, member: &str) -> Result<&str> {
    self.0.get(member).and_then(Value::as_str).ok_or_else(|| Error::Data(format!("The JWK member '{member}' is missing or not a string")))
  }

  pub fn has(&self, member: &str) -> bool {
    self.0.contains_key(member)
  }

  /// A base64url member's bytes (padding tolerated).
  pub fn bytes(&self, member: &str) -> Result<Vec<u8>> {
    let text = self.str(member)?;
    URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).map_err(|_| Error::Data(format!("The JWK member '{member}' is not valid base64url")))
  }

  /// Checks `kty` (and `crv` when given).
  pub fn expect(&self, kty: &str, crv: Option<&str>) -> Result<()> {
    if self.str("kty")? != kty {
      return Err(Error::Data(format!("The JWK 'kty' member must be '{kty}'")));
    }
    if let Some(crv) = crv {
      if self.str("crv")? != crv {
        return Err(Error::Data(format!("The JWK 'crv' member must be '{crv}'")));
      }
    }
    Ok(())
  }
}

/// Builds JWK JSON text from (member, value) pairs; byte values are base64url encoded.
pub fn build(members: &[(&str, JwkValue)]) -> String {
  let mut map = Map::new();
  for (name, value) in members {
    let value = match value {
      JwkValue::Text(s) => Value::String(s.clone()),
      JwkValue::Bytes(b) => Value::String(URL_SAFE_NO_PAD.encode(b)),
    };
    map.insert((*name).to_owned(), value);
  }
  Value::Object(map).to_string()
}

pub enum JwkValue {
  Text(String),
  Bytes(Vec<u8>),
}

pub fn text(s: &str) -> JwkValue {
  JwkValue::Text(s.to_owned())
}

pub fn b64(b: impl Into<Vec<u8>>) -> JwkValue {
  JwkValue::Bytes(b.into())
}
