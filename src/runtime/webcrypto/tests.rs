//! Known-answer and round-trip checks for the pure crypto layer.

use super::*;

fn hex(bytes: &[u8]) -> String {
  bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn params(pairs: &[(&str, Value)]) -> Params {
  let mut p = Params::default();
  for (k, v) in pairs {
    p.set(k, v.clone());
  }
  p
}

fn s(v: &str) -> Value {
  Value::Str(v.into())
}

fn b(v: &[u8]) -> Value {
  Value::Bytes(v.to_vec())
}

fn bytes(out: Out) -> Vec<u8> {
  match out {
    Out::Bytes(b) => b,
    other => panic!("expected bytes, got {other:?}"),
  }
}

#[test]
fn digests_and_hmac_match_known_answers() {
  let sha = bytes(call("digest", &params(&[("hash", s("SHA-256")), ("data", b(b"abc"))])).unwrap());
  assert_eq!(hex(&sha), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  let md5 = bytes(call("digest", &params(&[("hash", s("MD5")), ("data", b(b"abc"))])).unwrap());
  assert_eq!(hex(&md5), "900150983cd24fb0d6963f7d28e17f72");
  // RFC 4231 test case 2.
  let mac = bytes(call("hmacSign", &params(&[("hash", s("SHA-256")), ("key", b(b"Jefe")), ("data", b(b"what do ya want for nothing?"))])).unwrap());
  assert_eq!(hex(&mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  let unknown = call("digest", &params(&[("hash", s("SHA-3")), ("data", b(b""))])).unwrap_err();
  assert_eq!(unknown.name(), "NotSupportedError");
}

#[test]
fn hkdf_matches_rfc5869_case1() {
  let ikm = [0x0bu8; 22];
  let salt: Vec<u8> = (0u8..=0x0c).collect();
  let info: Vec<u8> = (0xf0u8..=0xf9).collect();
  let okm = bytes(call("hkdf", &params(&[("hash", s("SHA-256")), ("key", b(&ikm)), ("salt", b(&salt)), ("info", b(&info)), ("length", Value::Num(336.0))])).unwrap());
  assert_eq!(hex(&okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
}

#[test]
fn aes_ctr_wraps_only_the_counter_bits() {
  let key = [7u8; 16];
  let data = vec![0u8; 64];
  let run = |counter: [u8; 16], length: f64, data: &[u8]| {
    bytes(call("encrypt", &params(&[("name", s("AES-CTR")), ("key", b(&key)), ("counter", b(&counter)), ("length", Value::Num(length)), ("data", b(data))])).unwrap())
  };
  // A 2-bit counter starting at 3 wraps to 0 after one block: blocks 2.. equal a fresh start at 0.
  let mut start = [0xaau8; 16];
  start[15] = 0xab; // low 2 bits = 3
  let wrapped = run(start, 2.0, &data);
  let mut zero = start;
  zero[15] = 0xa8;
  let fresh = run(zero, 2.0, &data[..48]);
  assert_eq!(&wrapped[16..], &fresh[..]);
  // Five blocks cannot fit in a 2-bit counter.
  let too_long = call("encrypt", &params(&[("name", s("AES-CTR")), ("key", b(&key)), ("counter", b(&start)), ("length", Value::Num(2.0)), ("data", b(&[0u8; 80]))]));
  assert_eq!(too_long.unwrap_err().name(), "OperationError");
  // Decryption is the same keystream.
  assert_eq!(run(start, 2.0, &wrapped), data);
}

#[test]
fn key_pairs_sign_verify_and_agree() {
  for (kind, curve, name) in [("EC", "P-256", "ECDSA"), ("EC", "P-384", "ECDSA"), ("Ed25519", "", "Ed25519")] {
    let Out::List(pair) = call("generateKeyPair", &params(&[("kind", s(kind)), ("namedCurve", s(curve))])).unwrap() else { panic!() };
    let (private, public) = (bytes(pair[0].clone()), bytes(pair[1].clone()));
    let sig = bytes(call("sign", &params(&[("name", s(name)), ("namedCurve", s(curve)), ("hash", s("SHA-256")), ("key", b(&private)), ("data", b(b"hello"))])).unwrap());
    let check = |data: &[u8]| call("verify", &params(&[("name", s(name)), ("namedCurve", s(curve)), ("hash", s("SHA-256")), ("key", b(&public)), ("data", b(data)), ("signature", b(&sig))])).unwrap();
    assert_eq!(check(b"hello"), Out::Bool(true), "{name} {curve}");
    assert_eq!(check(b"hellO"), Out::Bool(false), "{name} {curve}");
  }
  for (kind, curve) in [("EC", "P-256"), ("X25519", "")] {
    let pair = || match call("generateKeyPair", &params(&[("kind", s(kind)), ("namedCurve", s(curve))])).unwrap() {
      Out::List(l) => (bytes(l[0].clone()), bytes(l[1].clone())),
      _ => panic!(),
    };
    let (a, b_) = (pair(), pair());
    let derive = |private: &[u8], public: &[u8]| bytes(call("deriveBits", &params(&[("kind", s(kind)), ("namedCurve", s(curve)), ("key", b(private)), ("public", b(public))])).unwrap());
    assert_eq!(derive(&a.0, &b_.1), derive(&b_.0, &a.1));
  }
}
