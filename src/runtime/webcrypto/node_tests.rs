//! Checks of node:crypto's native helpers (`node.rs`): scrypt's RFC 7914 vector, key
//! recognition and conversion round trips, ECDSA signature encodings and Node's cipher modes.

use super::*;

fn params(pairs: &[(&str, Value)]) -> Params {
  let mut p = Params::default();
  for (k, v) in pairs {
    p.set(k, v.clone());
  }
  p
}

fn bytes(out: Out) -> Vec<u8> {
  match out {
    Out::Bytes(b) => b,
    other => panic!("expected bytes, got {other:?}"),
  }
}

fn hex(bytes: &[u8]) -> String {
  bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn scrypt_matches_rfc_7914() {
  let p = params(&[("password", Value::Bytes(b"password".to_vec())), ("salt", Value::Bytes(b"NaCl".to_vec())), ("N", Value::Num(1024.0)), ("r", Value::Num(8.0)), ("p", Value::Num(16.0)), ("length", Value::Num(64.0))]);
  assert_eq!(
    hex(&bytes(node::call("scrypt", &p).unwrap())),
    "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
  );
  let bad = params(&[("password", Value::Bytes(vec![])), ("salt", Value::Bytes(vec![])), ("N", Value::Num(1000.0)), ("r", Value::Num(8.0)), ("p", Value::Num(1.0)), ("length", Value::Num(8.0))]);
  assert!(node::call("scrypt", &bad).is_err(), "N must be a power of two");
}

#[test]
fn keys_are_recognised_and_converted() {
  let generated = call("generateKeyPair", &params(&[("kind", Value::Str("EC".into())), ("namedCurve", Value::Str("P-384".into()))])).unwrap();
  let Out::List(pair) = generated else { panic!("expected a list") };
  let (pkcs8, spki) = (bytes(pair[0].clone()), bytes(pair[1].clone()));
  let Out::List(info) = node::call("keyInfo", &params(&[("format", Value::Str("pkcs8".into())), ("data", Value::Bytes(pkcs8.clone()))])).unwrap() else { panic!() };
  assert_eq!(info[0], Out::Str("private".into()));
  assert_eq!(info[1], Out::Str("ec".into()));
  assert_eq!(info[3], Out::Str("P-384".into()));
  let public = bytes(node::call("publicOf", &params(&[("kind", Value::Str("ec".into())), ("namedCurve", Value::Str("P-384".into())), ("key", Value::Bytes(pkcs8.clone()))])).unwrap());
  assert_eq!(public, spki);
  let sec1 = bytes(node::call("toSec1", &params(&[("namedCurve", Value::Str("P-384".into())), ("key", Value::Bytes(pkcs8.clone()))])).unwrap());
  let Out::List(back) = node::call("keyInfo", &params(&[("format", Value::Str("sec1".into())), ("data", Value::Bytes(sec1))])).unwrap() else { panic!() };
  assert_eq!(back[2], Out::Bytes(pkcs8));
  assert!(node::call("keyInfo", &params(&[("format", Value::Str("spki".into())), ("data", Value::Bytes(vec![0x30, 0x03, 0x02, 0x01, 0x00]))])).is_err());
}

#[test]
fn ecdsa_signatures_convert_between_der_and_p1363() {
  let raw = [7u8; 64];
  let der = bytes(node::call("sigToDer", &params(&[("namedCurve", Value::Str("P-256".into())), ("signature", Value::Bytes(raw.to_vec()))])).unwrap());
  assert_eq!(der[0], 0x30);
  let back = bytes(node::call("sigFromDer", &params(&[("namedCurve", Value::Str("P-256".into())), ("signature", Value::Bytes(der))])).unwrap());
  assert_eq!(back, raw);
  assert_eq!(node::call("sigFromDer", &params(&[("namedCurve", Value::Str("P-256".into())), ("signature", Value::Bytes(vec![1, 2, 3]))])).unwrap(), Out::Bool(false));
}

#[test]
fn cbc_without_padding_needs_whole_blocks() {
  let run = |data: Vec<u8>, padding: f64, encrypt: f64| {
    node::call("cipher", &params(&[("mode", Value::Str("cbc".into())), ("encrypt", Value::Num(encrypt)), ("key", Value::Bytes(vec![1; 16])), ("iv", Value::Bytes(vec![2; 16])), ("data", Value::Bytes(data)), ("padding", Value::Num(padding))]))
  };
  let sealed = bytes(run(vec![3; 32], 0.0, 1.0).unwrap());
  assert_eq!(sealed.len(), 32);
  assert_eq!(bytes(run(sealed, 0.0, 0.0).unwrap()), vec![3; 32]);
  assert!(run(vec![3; 20], 0.0, 1.0).is_err());
  assert_eq!(bytes(run(vec![3; 20], 1.0, 1.0).unwrap()).len(), 32);
}
