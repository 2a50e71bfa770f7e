//! node:crypto's key agreement objects (see `src/js/node/internal/crypto_dh.js`): the modular
//! arithmetic of finite-field Diffie-Hellman (`DiffieHellman`, `DiffieHellmanGroup`) on
//! num-bigint-dig, the bignum the `rsa` crate uses (safe-prime generation, the checks OpenSSL's
//! DH_check makes), and ECDH on the NIST curves (`createECDH`, `ECDH.convertKey`) on the
//! RustCrypto curve crates. Numbers cross as big-endian bytes.

use super::{Error, Out, Params, Result};
use num_bigint_dig::{BigUint, RandBigInt};

/// Largest prime accepted or generated (workerd refuses more than 10,000 bits as well).
const MAX_BITS: usize = 10_000;

/// OpenSSL's DH_check flags, as Node reports them in `verifyError`.
const DH_CHECK_P_NOT_PRIME: u32 = 0x01;
const DH_CHECK_P_NOT_SAFE_PRIME: u32 = 0x02;
const DH_NOT_SUITABLE_GENERATOR: u32 = 0x08;

/// Runs one of the DH/ECDH operations of node:crypto.
pub fn call(op: &str, p: &Params) -> Result<Out> {
  match op {
    // {bits, generator} -> a safe prime of `bits` bits suited to the generator (as OpenSSL's
    // DH_generate_parameters: p = 23 mod 24 for 2, p = 59 mod 60 for 5, else p = 11 mod 12)
    "dhGeneratePrime" => generate_prime(p.num("bits")? as usize, p.num("generator")? as u64).map(Out::Bytes),
    // {prime, generator} -> DH_check flags
    "dhCheck" => Ok(Out::Num(check(&uint(p.bytes("prime")?), &uint(p.bytes("generator")?)) as f64)),
    // {base, exponent, modulus} -> base^exponent mod modulus
    "dhModPow" => {
      let modulus = uint(p.bytes("modulus")?);
      if modulus == BigUint::from(0u32) {
        return Err(Error::Operation("The modulus is zero".into()));
      }
      Ok(Out::Bytes(uint(p.bytes("base")?).modpow(&uint(p.bytes("exponent")?), &modulus).to_bytes_be()))
    }
    // {prime} -> a private value in [2, prime - 2]
    "dhPrivate" => {
      let prime = uint(p.bytes("prime")?);
      let two = BigUint::from(2u32);
      if prime <= BigUint::from(4u32) {
        return Err(Error::Operation("The prime is too small".into()));
      }
      let mut rng = rand_core::OsRng;
      Ok(Out::Bytes(rng.gen_biguint_range(&two, &(&prime - 1u32)).to_bytes_be()))
    }
    // {namedCurve, private?} -> [private scalar, uncompressed public point]
    "ecdhKeys" => ecdh_keys(p.str("namedCurve")?, p.opt_bytes("private")),
    // {namedCurve, private, public} -> shared secret (x coordinate)
    "ecdhCompute" => ecdh_compute(p.str("namedCurve")?, p.bytes("private")?, p.bytes("public")?).map(Out::Bytes),
    // {namedCurve} -> [pkcs8, spki] of a new key pair
    "ecGenerate" => ec_generate(p.str("namedCurve")?),
    // {namedCurve, point, compressed} -> the point re-encoded
    "ecPoint" => ec_point(p.str("namedCurve")?, p.bytes("point")?, p.num("compressed")? != 0.0).map(Out::Bytes),
    other => Err(Error::NotSupported(format!("Unknown node:crypto operation '{other}'"))),
  }
}

fn uint(bytes: &[u8]) -> BigUint {
  BigUint::from_bytes_be(bytes)
}

fn generate_prime(bits: usize, generator: u64) -> Result<Vec<u8>> {
  use num_bigint_dig::prime::{probably_prime, probably_prime_miller_rabin};
  if !(2..=MAX_BITS).contains(&bits) {
    return Err(Error::Operation(format!("Invalid prime length {bits}")));
  }
  let (add, rem) = match generator {
    2 => (24u32, 23u32),
    5 => (60, 59),
    _ => (12, 11),
  };
  let mut rng = super::cancel::CancellableRng;
  let small: Vec<u32> = (3u32..4000).filter(|n| (2..*n).take_while(|d| d * d <= *n).all(|d| n % d != 0)).collect();
  loop {
    // A random candidate with its top bit set, moved to the residue class `rem` mod `add`.
    let mut p = rng.gen_biguint(bits);
    p |= BigUint::from(1u32) << (bits - 1);
    let r = &p % add;
    p = p - r + rem;
    if p.bits() != bits {
      continue;
    }
    // Walk the class (p += add): p mod s for each small prime s is kept as a u32 and stepped,
    // so trial division of p and q = (p - 1) / 2 costs no bignum work.
    let mut residues: Vec<u32> = small.iter().map(|s| (&p % *s).to_bytes_be().iter().fold(0u32, |a, b| a * 256 + *b as u32)).collect();
    let mut offset = BigUint::from(0u32);
    for _ in 0..200_000 {
      // p mod s != 0 and q mod s != 0, where 2q = p - 1, i.e. p mod s != 1 (small sizes skip the
      // sieve: their primes are among the sieving ones).
      let survives = bits <= 32 || residues.iter().all(|r| *r != 0 && *r != 1);
      if survives {
        super::cancel::check();
        let candidate = &p + &offset;
        let q: BigUint = &candidate >> 1usize;
        if probably_prime_miller_rabin(&q, 1, true) && probably_prime_miller_rabin(&candidate, 1, true) && probably_prime(&q, 20) && probably_prime(&candidate, 20) {
          if candidate.bits() != bits {
            break;
          }
          return Ok(candidate.to_bytes_be());
        }
      }
      offset += add;
      for (r, s) in residues.iter_mut().zip(&small) {
        *r = (*r + add) % s;
      }
    }
  }
}

fn check(prime: &BigUint, generator: &BigUint) -> u32 {
  let mut flags = 0;
  if generator <= &BigUint::from(1u32) || generator >= prime {
    flags |= DH_NOT_SUITABLE_GENERATOR;
  }
  if !num_bigint_dig::prime::probably_prime(prime, 20) {
    flags |= DH_CHECK_P_NOT_PRIME;
  } else {
    let q: BigUint = (prime - 1u32) >> 1usize;
    if !num_bigint_dig::prime::probably_prime(&q, 20) {
      flags |= DH_CHECK_P_NOT_SAFE_PRIME;
    }
  }
  flags
}

/// Runs `$body` with `$c` naming the crate of a NIST curve by its WebCrypto name.
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

fn ecdh_keys(curve: &str, private: Option<&[u8]>) -> Result<Out> {
  with_curve!(curve, c => {
    use c::elliptic_curve::sec1::ToEncodedPoint;
    let secret = match private {
      Some(bytes) => {
        // Shorter scalars are left-padded, as OpenSSL's BN_bin2bn reads them.
        let size = c::FieldBytes::default().len();
        if bytes.len() > size {
          return Err(Error::Data("Private key is not valid for specified curve.".into()));
        }
        let mut padded = vec![0u8; size - bytes.len()];
        padded.extend_from_slice(bytes);
        c::SecretKey::from_slice(&padded).map_err(|_| Error::Data("Private key is not valid for specified curve.".into()))?
      }
      None => c::SecretKey::random(&mut rand_core::OsRng),
    };
    let public = secret.public_key().to_encoded_point(false);
    Ok(Out::List(vec![Out::Bytes(secret.to_bytes().to_vec()), Out::Bytes(public.as_bytes().to_vec())]))
  })
}

fn ecdh_compute(curve: &str, private: &[u8], public: &[u8]) -> Result<Vec<u8>> {
  with_curve!(curve, c => {
    let secret = c::SecretKey::from_slice(private).map_err(|_| Error::Data("Private key is not valid for specified curve.".into()))?;
    let peer = c::PublicKey::from_sec1_bytes(public).map_err(|_| Error::Data("Public key is not valid for specified curve".into()))?;
    let shared = c::ecdh::diffie_hellman(secret.to_nonzero_scalar(), peer.as_affine());
    Ok(shared.raw_secret_bytes().to_vec())
  })
}

fn ec_point(curve: &str, point: &[u8], compressed: bool) -> Result<Vec<u8>> {
  with_curve!(curve, c => {
    use c::elliptic_curve::sec1::ToEncodedPoint;
    let key = c::PublicKey::from_sec1_bytes(point).map_err(|_| Error::Data("Failed to convert Buffer to EC_POINT".into()))?;
    Ok(key.to_encoded_point(compressed).as_bytes().to_vec())
  })
}

fn ec_generate(curve: &str) -> Result<Out> {
  use pkcs8::{EncodePrivateKey, EncodePublicKey};
  with_curve!(curve, c => {
    let secret = c::SecretKey::random(&mut rand_core::OsRng);
    let encode = |e: pkcs8::Error| Error::Operation(format!("Key encoding failed: {e}"));
    let private = secret.to_pkcs8_der().map_err(encode)?.as_bytes().to_vec();
    let public = secret.public_key().to_public_key_der().map_err(|e| Error::Operation(format!("Key encoding failed: {e}")))?.into_vec();
    Ok(Out::List(vec![Out::Bytes(private), Out::Bytes(public)]))
  })
}
